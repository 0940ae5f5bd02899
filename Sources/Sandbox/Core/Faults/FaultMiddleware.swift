import HTTPTypes
import Hummingbird
import StageKit

/// Injects the configured latency and errors before an API or upload request is processed, so a
/// failed request changed nothing and retrying it is always safe.
struct FaultMiddleware: RouterMiddleware {
    typealias Context = SandboxRequestContext

    let faults: FaultInjector
    let stats: SandboxStats

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        try await self.faults.delayAnswer()
        if let injected = self.faults.injectedError() {
            self.stats.countInjectedError()
            var headers: HTTPFields = [:]
            if injected.retryAfter {
                headers[.retryAfter] = "1"
            }
            // Vimeo answers 429 with error code 9000 and server errors with its generic body.
            let isRateLimit = injected.status == .tooManyRequests
            throw APIError(
                status: injected.status,
                code: isRateLimit ? 9000 : 2000,
                message: isRateLimit
                    ? "You have exceeded the API rate limit. Please wait and try again."
                    : "The sandbox injected a server error (fault injection).",
                developerMessage: "Injected by the sandbox's errorRate fault; retry the request.",
                headers: headers
            )
        }
        return try await next(request, context)
    }
}

extension FaultMiddleware {
    /// The middleware of `core`'s faults.
    init(_ core: SandboxCore) {
        self.init(faults: core.faults, stats: core.stats)
    }
}
