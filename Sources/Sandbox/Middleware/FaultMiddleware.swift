import HTTPTypes
import Hummingbird
import StageKit

/// Injects the configured latency and errors before an API or upload request is processed, so a
/// failed request changed nothing and retrying it is always safe.
struct FaultMiddleware: RouterMiddleware {
    typealias Context = SandboxRequestContext

    let services: SandboxServices

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let latency = self.services.faults.faults.latency
        if latency > 0 {
            try await Task.sleep(for: .milliseconds(Int64(latency * 1000)))
        }
        if let injected = self.services.faults.injectedError() {
            self.services.stats.countInjectedError()
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
