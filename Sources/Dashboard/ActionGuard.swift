import Crypto
import Foundation
import HTTPTypes
import Hummingbird

/// Who may act (retry, cancel): nobody without a token (the dashboard is read-only), else a request that carries
/// the token as a bearer header or in the cookie the login form sets.
struct ActionGuard: Sendable {
    /// The token the server was started with.
    let token: String?

    /// The cookie that carries the token after the login form.
    static let cookieName = "pipeline_token"

    /// Whether the server allows actions at all.
    var allowsActions: Bool { token != nil }

    /// Why a request may not act, or nil when it may.
    func refusal(of request: Request) -> ActionRefusal? {
        guard let token else { return .readOnly }
        if let header = request.headers[.authorization], header.lowercased().hasPrefix("bearer ") {
            let given = String(header.dropFirst("bearer ".count)).trimmingCharacters(in: .whitespaces)
            return Self.session(given) == Self.session(token) ? nil : .unauthorized
        }
        guard let cookie = request.cookies[Self.cookieName]?.value, cookie == Self.session(token) else {
            return .unauthorized
        }
        return nil
    }

    /// Whether `given` (from the login form) is the token.
    func accepts(_ given: String) -> Bool {
        token.map { Self.session(given) == Self.session($0) } ?? false
    }

    /// What the cookie holds for a token: a digest, so the token itself is never stored by the browser, and
    /// comparing two digests takes the same time whatever the token.
    static func session(_ token: String) -> String {
        SHA256.hash(data: Data("pipeline-dashboard:\(token)".utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// The `Set-Cookie` value of a successful login: the browser sends it back to this site only.
    var cookie: String? {
        token.map { "\(Self.cookieName)=\(Self.session($0)); Path=/; HttpOnly; SameSite=Strict" }
    }
}

/// Why an action was refused.
enum ActionRefusal: Sendable {
    /// The server was started without a token: it never acts.
    case readOnly
    /// No token, or a wrong one.
    case unauthorized

    var status: HTTPResponse.Status {
        switch self {
        case .readOnly: .forbidden
        case .unauthorized: .unauthorized
        }
    }

    var message: String {
        switch self {
        case .readOnly:
            "this dashboard is read-only: start pipeline serve with --token (or PIPELINE_SERVE_TOKEN) to allow actions"
        case .unauthorized: "sign in with the dashboard's token (or send it as a bearer token) to retry or cancel items"
        }
    }
}
