import Hummingbird
import StageKit

/// Counts every request for `GET /sandbox/stats`.
struct RequestCountingMiddleware: RouterMiddleware {
    typealias Context = SandboxRequestContext

    let stats: SandboxStats

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        self.stats.countRequest()
        return try await next(request, context)
    }
}
