import Hummingbird
import Metrics
import Prometheus

/// Serves the process's metrics for Prometheus at `/metrics`, through swift-prometheus's registry, which it
/// installs as the process's metrics system.
final class MetricsEndpoint: Sendable {
    private let serving: Task<Void, any Error>

    private init(serving: Task<Void, any Error>) {
        self.serving = serving
    }

    /// Installs the registry and starts serving; returns once the port is bound.
    static func start(host: String, port: Int) async throws -> MetricsEndpoint {
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        let router = Router()
        router.get("metrics") { _, _ in registry.emitToString() }
        let (bound, onBound) = AsyncStream.makeStream(of: Result<Void, any Error>.self)
        let application = Application(
            router: router, configuration: ApplicationConfiguration(address: .hostname(host, port: port)),
            onServerRunning: { _ in onBound.yield(.success(())) })
        let serving = Task {
            do {
                try await application.run()
            } catch {
                onBound.yield(.failure(error))
                throw error
            }
        }
        for await result in bound {
            try result.get()
            break
        }
        return MetricsEndpoint(serving: serving)
    }

    /// Stops serving.
    func stop() async {
        serving.cancel()
        _ = try? await serving.value
    }
}
