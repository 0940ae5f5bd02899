import Foundation

/// The cluster every ``PostgresServer`` of a test process starts from: made once (`initdb`, the password rule of
/// ``PostgresServer/passwordUser``, the database `pipeline`), stopped cleanly, and copied for each server. Each
/// server still has a fresh cluster of its own, at the cost of a copy rather than of `initdb` and `createdb`.
/// Its folder is removed when the test process ends, however it ends (a watchdog, as for a server).
struct ClusterTemplate: Sendable {
    /// The stopped cluster's data folder.
    let data: URL

    /// The template of this process, made by the first server that needs it.
    static let shared = Task<ClusterTemplate, any Error> { try await make() }

    private static func make() async throws -> ClusterTemplate {
        let tools = try await PostgresTools.find()
        let folder = URL(fileURLWithPath: "/tmp").appendingPathComponent("pipeline-pg-template-\(UUID().uuidString)")
        try PostgresServer.makeFolders(folder, owner: tools.account)
        let data = folder.appendingPathComponent("data")
        // Never closed: the pipe ends with the process, and the watchdog then stops a server left running by a
        // failed step (none otherwise) and removes the folder.
        _ = try PostgresServer.startWatchdog(
            folder: folder, stop: tools.serverCommand("pg_ctl", ["-D", data.path, "-m", "immediate", "-w", "stop"]))
        try await PostgresServer.makeCluster(in: folder, tools: tools)
        return ClusterTemplate(data: data)
    }
}
