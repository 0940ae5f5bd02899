import ServiceLifecycle
import StageKit

/// A sandbox that is listening: its address, and the means to stop it.
public final class RunningSandbox: Sendable {
    /// The bound TCP port (the real one when the configuration asked for port 0).
    public let port: Int
    /// `http://HOST:PORT` (or the configured public base URL): the API base for clients, as
    /// `https://api.vimeo.com` is for Vimeo.
    public let baseURL: String
    /// The folder holding the stored uploads and the index.
    public let dataFolderPath: String

    /// How long a graceful stop may wait for in-flight requests before they are cancelled.
    static let shutdownGrace: Duration = .seconds(3)

    private let dataFolder: DataFolder
    private let platforms: SandboxPlatforms
    private let group: ServiceGroup
    private let serving: Task<Void, any Error>

    init(
        port: Int, baseURL: String, dataFolder: DataFolder, platforms: SandboxPlatforms, group: ServiceGroup,
        serving: Task<Void, any Error>
    ) {
        self.port = port
        self.baseURL = baseURL
        self.dataFolder = dataFolder
        self.platforms = platforms
        self.dataFolderPath = dataFolder.path
        self.group = group
        self.serving = serving
    }

    /// Serves until the calling task is cancelled (or the server fails), then stops as ``stop()``
    /// does. For a command such as `pipeline sandbox` that runs until interrupted.
    public func run() async throws {
        let serving = self.serving
        do {
            try await withTaskCancellationHandler {
                try await serving.value
            } onCancel: {
                Task { await self.stop() }
            }
        } catch is CancellationError {
            // Stopped on request.
        }
        await self.stop()
    }

    /// Stops listening: open connections finish their current request (cancelled after a few
    /// seconds), idle ones close. In-flight uploads keep the bytes that reached the disk. A
    /// temporary data folder is removed. Pulls under way stop (and count as failed at the next start).
    /// Calling it again does nothing more.
    public func stop() async {
        await self.platforms.stopBackgroundWork()
        await self.group.triggerGracefulShutdown()
        let serving = self.serving
        await withTaskGroup(of: Void.self) { waiters in
            waiters.addTask { _ = try? await serving.value }
            waiters.addTask {
                // Cancelled when the server stopped in time; otherwise stop waiting for it.
                guard (try? await Task.sleep(for: Self.shutdownGrace)) != nil else { return }
                serving.cancel()
            }
            await waiters.next()
            waiters.cancelAll()
        }
        _ = try? await serving.value
        if self.dataFolder.isTemporary {
            self.dataFolder.removeAll()
        }
    }
}
