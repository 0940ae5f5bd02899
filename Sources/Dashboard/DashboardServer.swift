import Hummingbird
import Logging
import NIOCore

/// `pipeline serve`: the dashboard and its JSON API over a state folder or a shared batch, on one address.
///
/// It only reads the ledger (a run or a worker beside it is not slowed by more than its reads), except for the
/// actions a request with the token asks for. Started without a token, it never writes. It answers only to the host
/// names it serves, so a page of another site reads nothing, even through a name made to point at this machine.
public final class DashboardServer: Sendable {
    /// The port it listens on (the one the system chose when asked for port 0).
    public let port: Int
    private let serving: Task<Void, any Error>

    private init(port: Int, serving: Task<Void, any Error>) {
        self.port = port
        self.serving = serving
    }

    /// Starts serving `source` on `host`:`port`; returns once the port is bound. Who may read and act, and the host
    /// names served, come from `access`.
    public static func start(source: DashboardSource, host: String, port: Int, access: DashboardAccess)
        async throws -> DashboardServer
    {
        let router = Self.router(source: source, host: host, access: access)
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

    /// The dashboard's routes behind the check of the `Host` each request names.
    static func router(
        source: DashboardSource, host: String, access: DashboardAccess, throttle: LoginThrottle = LoginThrottle(),
        streamTiming: StatusStream.Timing = StatusStream.Timing()
    ) -> Router<DashboardContext> {
        let router = Router(context: DashboardContext.self)
        router.add(middleware: HostCheck(hosts: HostNames(listeningOn: host, extra: access.hostNames)))
        DashboardRoutes(
            source: source, access: AccessGuard(access: access, throttle: throttle), streamTiming: streamTiming
        ).register(on: router)
        return router
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
