import Foundation
import Hummingbird
import StageKit

/// Client-credentials grant: `POST /oauth/token` (and Vimeo's own path
/// `POST /oauth/authorize/client`) with HTTP Basic auth `client_id:client_secret` and
/// `{"grant_type": "client_credentials"}` (JSON or form-encoded) returns a new access token.
///
/// This is how a client recovers from the `tokenLifetime` fault. Simplified: no scopes are
/// checked, and `expires_in` is the fault's lifetime (a year when none is set, since Vimeo tokens
/// do not expire).
enum OAuthRoutes {
    /// Registers both paths on `router`, outside bearer auth: a client comes here because its token stopped
    /// working.
    static func register(on router: Router<SandboxRequestContext>, core: SandboxCore) {
        for path in ["oauth/token", "oauth/authorize/client"] {
            router.post(RouterPath(path)) { request, _ in
                try await self.token(request, core: core)
            }
        }
    }

    private static func token(_ request: Request, core: SandboxCore) async throws -> Response {
        guard let credentials = request.headers[.authorization].flatMap(self.basicCredentials),
            credentials == core.configuration.client
        else {
            throw APIError(
                status: .unauthorized,
                code: 8001,
                message: "The client credentials are not valid.",
                developerMessage: "Send HTTP Basic auth with the sandbox's client_id and client_secret.",
                headers: [.wwwAuthenticate: "Basic realm=\"sandbox\""]
            )
        }
        var request = request
        let grantType = try await self.grantType(&request)
        guard grantType == "client_credentials" else {
            throw APIError.invalidParameter("grant_type", "`grant_type` must be `client_credentials`.")
        }
        let token = await core.tokens.issue()
        let lifetime = core.faults.faults.tokenLifetime.map { Int64($0.rounded(.up)) } ?? 31_536_000
        return JSONResponse.make(
            [
                "access_token": .string(token),
                "token_type": "bearer",
                "expires_in": .integer(lifetime),
                "scope": "public private create edit delete upload video_files",
                "app": ["name": "Sandbox", "uri": "/apps/1"],
            ],
            contentType: "application/vnd.vimeo.auth+json; charset=utf-8"
        )
    }

    private static func basicCredentials(_ header: String) -> SandboxClientCredentials? {
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "basic",
            let decoded = Data(base64Encoded: String(parts[1]).trimmingCharacters(in: .whitespaces)),
            let text = String(data: decoded, encoding: .utf8),
            let colon = text.firstIndex(of: ":")
        else { return nil }
        return SandboxClientCredentials(
            clientID: String(text[..<colon]),
            clientSecret: String(text[text.index(after: colon)...])
        )
    }

    /// `grant_type` from a JSON or form-encoded body.
    private static func grantType(_ request: inout Request) async throws -> String? {
        let body = try await request.collectBody(upTo: JSONResponse.maxRequestBody)
        let text = String(buffer: body)
        if let json = JSONValue.parse(Array(text.utf8)) {
            return json["grant_type"]?.stringValue
        }
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2, parts[0] == "grant_type" {
                return String(parts[1]).removingPercentEncoding
            }
        }
        return nil
    }
}
