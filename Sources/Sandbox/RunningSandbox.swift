/// A sandbox that is listening: its address, and the means to stop it.
public final class RunningSandbox: Sendable {
    /// The bound TCP port (the real one when the configuration asked for port 0).
    public let port: Int
    /// `http://HOST:PORT` (or the configured public base URL): the API base for clients, as
    /// `https://api.vimeo.com` is for Vimeo.
    public let baseURL: String
    /// The folder holding the stored uploads and the index.
    public let dataFolderPath: String

    private let dataFolder: DataFolder
    private let serving: Task<Void, any Error>

    init(port: Int, baseURL: String, dataFolder: DataFolder, serving: Task<Void, any Error>) {
        self.port = port
        self.baseURL = baseURL
        self.dataFolder = dataFolder
        self.dataFolderPath = dataFolder.path
        self.serving = serving
    }

    /// Serves until the calling task is cancelled (or the server fails), then stops as ``stop()``
    /// does. For a command such as `pipeline sandbox` that runs until interrupted.
    public func run() async throws {
        try await withTaskCancellationHandler {
            defer { self.cleanUp() }
            do {
                try await self.serving.value
            } catch is CancellationError {
                return
            }
        } onCancel: {
            self.serving.cancel()
        }
    }

    /// Stops listening, closes open connections and, for a temporary data folder, removes it.
    /// In-flight uploads keep the bytes that reached the disk. Calling it again does nothing.
    public func stop() async {
        self.serving.cancel()
        _ = try? await self.serving.value
        self.cleanUp()
    }

    private func cleanUp() {
        if self.dataFolder.isTemporary {
            self.dataFolder.removeAll()
        }
    }
}
