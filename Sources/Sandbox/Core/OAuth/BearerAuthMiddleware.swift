import Foundation
import HTTPTypes
import Hummingbird
import StageKit

/// Vimeo's authentication: `Authorization: bearer TOKEN` (the scheme in any case). A missing,
/// unknown or expired token is answered 401 with error code 8003.
struct BearerAuthMiddleware: RouterMiddleware {
    typealias Context = SandboxRequestContext

    let tokens: AccessTokens
    let faults: FaultInjector

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard let header = request.headers[.authorization] else {
            throw APIError.unauthorized("No Authorization header was sent; send `Authorization: bearer TOKEN`.")
        }
        guard let token = Self.bearerToken(header) else {
            throw APIError.unauthorized("The Authorization header must use the bearer scheme.")
        }
        switch await self.tokens.check(token: token, lifetime: self.faults.faults.tokenLifetime) {
        case .unknown:
            throw APIError.unauthorized("The access token is not valid.")
        case .expired:
            throw APIError.unauthorized("The access token has expired; obtain a new one from POST /oauth/token.")
        case nil:
            return try await next(request, context)
        }
    }

    /// The token of a `bearer` credential, `nil` for any other scheme.
    static func bearerToken(_ header: String) -> String? {
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = parts[1].trimmingCharacters(in: .whitespaces)
        return token.isEmpty ? nil : token
    }
}
