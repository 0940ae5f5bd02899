import Foundation
import Hummingbird
import PipelineKit
import StageKit

/// An item's history (`GET /api/items/:id/history`): its versions, each stage's attempts with their times, errors
/// and log lines, and its links (``HistoryDocument``).
extension DashboardRoutes {
    func registerHistory(on router: Router<DashboardContext>) {
        router.get("api/items/:id/history") { request, context in
            let id = try context.parameters.require("id", as: Int64.self)
            return try await reading(request, context) { try await history(of: id) }
        }
    }

    private func history(of id: Int64) async throws -> Response {
        let document = try await source.reading { ledger, _ -> JSONValue? in
            // Both ledgers keep histories; an item forgotten between the reads has none.
            guard let ledger, let (workflow, item) = try await ledger.item(id),
                let history = try await (ledger as? any AttemptHistory)?.history(of: id)
            else { return nil }
            let order = try await ledger.workflows().first { $0.workflow == workflow }?.stages ?? []
            return HistoryDocument.document(history, item: item, workflow: workflow, order: order)
        }
        guard let document else { return Self.error(.notFound, "no item \(id) in \(source.location)") }
        return Self.json(document)
    }
}
