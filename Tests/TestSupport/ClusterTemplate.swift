import Foundation
import Synchronization

/// The cluster every ``PostgresServer`` of a test process starts from: made once (`initdb`, the password rule of
/// ``PostgresServer/passwordUser``, the database `pipeline`), stopped cleanly, and copied for each server. Each
/// server still has a fresh cluster of its own, at the cost of a copy rather than of `initdb` and `createdb`.
/// Its folder is removed when the test process ends, however it ends (a watchdog, as for a server).
struct ClusterTemplate: Sendable {
    /// The stopped cluster's data folder.
    let data: URL

    /// The making of this process's template: none before the first server needs it, and none again once an
    /// attempt failed, so that one bad moment (a slow start, ports taken) costs one server rather than every later one.
    private static let making = Mutex<Task<ClusterTemplate, any Error>?>(nil)

    /// The template of this process, made by the first server that needs it (and by the next one if that failed).
    static func shared() async throws -> ClusterTemplate {
        let task = making.withLock { making in
            if let task = making { return task }
            let task = Task { try await make() }
            making = task
            return task
        }
        do {
            return try await task.value
        } catch {
            making.withLock { making in
                if making == task { making = nil }
            }
            throw error
        }
    }

    /// Makes a template in a folder of its own. A failed attempt closes its watchdog, which stops the server that
    /// attempt may have left running and removes the folder.
    private static func make() async throws -> ClusterTemplate {
        let tools = try await PostgresTools.find()
        let folder = URL(fileURLWithPath: "/tmp").appendingPathComponent("pipeline-pg-template-\(UUID().uuidString)")
        try PostgresServer.makeFolders(folder, owner: tools.account)
        let data = folder.appendingPathComponent("data")
        let watchdog: Int32
        do {
            watchdog = try PostgresServer.startWatchdog(
                folder: folder, stop: tools.serverCommand("pg_ctl", ["-D", data.path, "-m", "immediate", "-w", "stop"]))
        } catch {
            try? FileManager.default.removeItem(at: folder)
            throw error
        }
        do {
            try await PostgresServer.makeCluster(in: folder, tools: tools)
        } catch {
            close(watchdog)
            throw error
        }
        // Kept open on success: the pipe ends with the process, and the watchdog then removes the folder.
        return ClusterTemplate(data: data)
    }
}
