import Hummingbird
import Logging
import NIOCore

/// `pipeline serve`: the dashboard and its JSON API over a state folder or a shared batch, on one address.
///
/// It only reads the ledger (a run or a worker beside it is not slowed by more than its reads), except for the
/// actions a request with the token asks for. Started without a token, it never writes.
public final class DashboardServer: Sendable {
    /// The port it listens on (the one the system chose when asked for port 0).
    public let port: Int
    private let serving: Task<Void, any Error>

    private init(port: Int, serving: Task<Void, any Error>) {
        self.port = port
        self.serving = serving
    }

    /// Starts serving `source` on `host`:`port`; returns once the port is bound. Actions (retry, cancel) need
    /// `token`; without one the dashboard is read-only.
    public static func start(source: DashboardSource, host: String, port: Int, token: String?) async throws
        -> DashboardServer
    {
        let router = Router()
        DashboardRoutes(source: source, actions: ActionGuard(token: token)).register(on: router)
        var logger = Logger(label: "pipeline.serve")
        logger.logLevel = .warning
        let (bound, onBound) = AsyncStream.makeStream(of: Result<Int, any Error>.self)
        let application = Application(
            router: router, configuration: ApplicationConfiguration(address: .hostname(host, port: port)),
            onServerRunning: { channel in onBound.yield(.success(channel.localAddress?.port ?? port)) },
            logger: logger)
        let serving = Task {
            do {
                try await application.run()
            } catch {
                onBound.yield(.failure(error))
                throw error
            }
        }
        for await result in bound {
            return DashboardServer(port: try result.get(), serving: serving)
        }
        throw CancellationError()
    }

    /// Serves until the calling task is cancelled (SIGINT, SIGTERM), then stops.
    public func run() async throws {
        try await withTaskCancellationHandler {
            try await serving.value
        } onCancel: {
            serving.cancel()
        }
    }
}
