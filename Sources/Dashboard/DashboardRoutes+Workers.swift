import Foundation
import Hummingbird
import SharedBatch
import StageKit

/// Asking a shared batch's workers to drain or stop (``SharedBatch/WorkerRequest``), guarded as every action is.
extension DashboardRoutes {
    /// `POST /api/workers/:id/drain` and `/stop`.
    func registerWorkerRequests(on router: Router<DashboardContext>) {
        for request in WorkerRequest.allCases {
            router.post("api/workers/:worker_id/\(request.rawValue)") { http, context in
                let id = try context.parameters.require("worker_id")
                return try await acting(http, context) {
                    try await ask(id.removingPercentEncoding ?? id, to: request)
                }
            }
        }
    }

    /// Leaves `request` on the worker's row: it sees it within a few seconds. 404 for a worker the batch does not
    /// list, 409 for one that is not live (stopped, or its lease ran out: nothing would see the request) or whose
    /// pipeline takes no requests (an older one, which would never act on it).
    private func ask(_ worker: String, to request: WorkerRequest) async throws -> Response {
        guard case .sharedBatch(let database) = source else {
            return Self.error(.conflict, "a state folder has no workers: stop its run with SIGTERM or Ctrl-C")
        }
        switch try await BatchQueue(database: database).ask(worker, to: request) {
        case nil:
            return Self.json(["worker": .string(worker), "action": .string(request.rawValue), "accepted": true])
        case .unknown:
            return Self.error(.notFound, "no worker \(worker) in \(source.location)")
        case .notLive:
            return Self.error(
                .conflict,
                "worker \(worker) is not live (it stopped, or its lease ran out): nothing would see the request")
        case .takesNoRequests:
            return Self.error(
                .conflict, "worker \(worker) runs a pipeline that takes no requests: stop it with SIGTERM")
        }
    }
}
