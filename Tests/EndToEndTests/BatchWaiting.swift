import SharedBatch
import Synchronization
import TestSupport

/// Waits until `count` items of `workflow` succeeded in the batch in `database`. If they do not within `limit`, the
/// error tells what the batch last read and how the `workers`' output ends, with `context()` (say, the effects
/// logged so far) after what was read.
func waitUntilSucceeded(
    _ count: Int, of workflow: String, in database: BatchDatabase, limit: Duration,
    workers: @Sendable () -> [RunningBinary], context: @Sendable () -> String = { "" }
) async throws {
    let lastRead = Mutex("nothing read yet")
    do {
        try await waitUntil("\(count) items of \(workflow) succeeded", limit: limit) {
            do {
                let counts = try await BatchQueue(database: database).status().workflows[workflow]
                lastRead.withLock { $0 = "last status: \(String(describing: counts))" }
                return counts?.byStatus["succeeded"] == count
            } catch {
                lastRead.withLock { $0 = "last status read failed: \(error)" }
                return false
            }
        }
    } catch let timedOut as WaitTimedOut {
        func tail(_ text: String) -> String { text.split(separator: "\n").suffix(8).joined(separator: "\n") }
        let outputs = workers().map { worker in
            "worker \(worker.pid) (\(worker.isRunning ? "running" : "ended")), stderr ends:\n"
                + tail(worker.stderr.soFar) + "\nstdout ends:\n" + tail(worker.stdout.soFar)
        }
        throw WaitTimedOut(
            what: "\(timedOut.what) (\(lastRead.withLock { $0 })\(context()))\n\(outputs.joined(separator: "\n"))",
            limit: timedOut.limit)
    }
}
