import Foundation
import HTTPTypes
import Hummingbird

/// Who may read and who may act (retry, cancel).
///
/// Without a token nobody acts and everybody reads. With one, a request is signed in when it carries the token as a
/// bearer header (scripts) or the cookie of a session the sign-in form opened (browsers); reads need that too unless
/// the server was told reads are public. An action from a browser must also come from the dashboard's own origin
/// (`Origin`, `Sec-Fetch-Site`) and carry its session's CSRF token, so no page of another site or another port can
/// make a signed-in browser act.
struct AccessGuard: Sendable {
    let access: DashboardAccess
    let sessions = DashboardSessions()
    let throttle: LoginThrottle

    /// The cookie that names a signed-in browser's session.
    static let cookieName = "pipeline_session"

    init(access: DashboardAccess, throttle: LoginThrottle = LoginThrottle()) {
        self.access = access
        self.throttle = throttle
    }

    /// Whether the server allows actions at all.
    var allowsActions: Bool { access.token != nil }

    /// Who sent a request.
    enum Caller {
        /// A script with the right bearer token.
        case bearer
        /// A browser signed in with the form, by its session's id.
        case session(id: String, DashboardSessions.Session)
        /// Nobody signed in.
        case anonymous
    }

    /// Who sent `request`, or why it is refused: a wrong bearer token counts as a wrong sign-in.
    func caller(of request: Request, from client: String) -> Result<Caller, AccessRefusal> {
        guard let token = access.token else { return .success(.anonymous) }
        if let header = request.headers[.authorization], header.lowercased().hasPrefix("bearer ") {
            if let wait = throttle.wait(for: client) { return .failure(.throttled(wait)) }
            let given = String(header.dropFirst("bearer ".count)).trimmingCharacters(in: .whitespaces)
            guard secretsMatch(given, token) else {
                throttle.failed(client)
                return .failure(.wrongToken)
            }
            throttle.succeeded(client)
            return .success(.bearer)
        }
        if let id = request.cookies[Self.cookieName]?.value, let session = sessions.session(id) {
            return .success(.session(id: id, session))
        }
        return .success(.anonymous)
    }

    /// Why `request` may not read, or nil when it may.
    func readRefusal(of request: Request, from client: String) -> AccessRefusal? {
        switch caller(of: request, from: client) {
        case .failure(let refusal): return refusal
        case .success(.anonymous): return access.readsNeedToken ? .signInToRead : nil
        case .success: return nil
        }
    }

    /// Why `request` may not act, or nil when it may.
    func actionRefusal(of request: Request, from client: String) -> AccessRefusal? {
        guard allowsActions else { return .readOnly }
        if let foreign = Self.foreignOrigin(of: request) { return .crossSite(foreign) }
        switch caller(of: request, from: client) {
        case .failure(let refusal): return refusal
        case .success(.anonymous): return .signInToAct
        case .success(.bearer): return nil
        case .success(.session(_, let session)):
            guard let given = request.headers[.csrfToken], secretsMatch(given, session.csrf) else {
                return .csrf
            }
            return nil
        }
    }

    /// The origin a request says it comes from when that is not the dashboard's own, or nil when it is the
    /// dashboard's or says nothing (a script). `Sec-Fetch-Site` must be `same-origin` where a browser sends it;
    /// `Origin` must name the host and port the request was sent to.
    static func foreignOrigin(of request: Request) -> String? {
        if let site = request.headers[.secFetchSite], site.lowercased() != "same-origin" {
            return "Sec-Fetch-Site: \(site)"
        }
        guard let origin = request.headers[.origin] else { return nil }
        let authority = origin.lowercased().split(separator: "://", maxSplits: 1).dropFirst().first.map(String.init)
        guard let authority, authority == request.head.authority?.lowercased() else { return "Origin: \(origin)" }
        return nil
    }

    /// The `Set-Cookie` value that signs a browser in to session `id`: sent back to this host only, never
    /// readable by the page's script.
    static func cookie(for id: String) -> String {
        "\(cookieName)=\(id); Path=/; HttpOnly; SameSite=Strict"
    }

    /// The `Set-Cookie` value that signs a browser out.
    static let clearedCookie = "\(cookieName)=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"
}

/// Why a request was refused.
enum AccessRefusal: Error, Equatable {
    /// The server was started without a token: it never acts.
    case readOnly
    /// Reads need the token and the request has none.
    case signInToRead
    /// Actions need the token and the request has none.
    case signInToAct
    /// A wrong token.
    case wrongToken
    /// Too many wrong tokens: the wait before the next is looked at.
    case throttled(Duration)
    /// An action from a page of another origin.
    case crossSite(String)
    /// A signed-in browser's action without its session's CSRF token.
    case csrf

    var status: HTTPResponse.Status {
        switch self {
        case .readOnly, .crossSite, .csrf: .forbidden
        case .signInToRead, .signInToAct, .wrongToken: .unauthorized
        case .throttled: .tooManyRequests
        }
    }

    /// Whole seconds to wait, for `Retry-After`.
    var retryAfter: Int? {
        guard case .throttled(let wait) = self else { return nil }
        return max(1, Int(wait.components.seconds) + (wait.components.attoseconds > 0 ? 1 : 0))
    }

    var message: String {
        switch self {
        case .readOnly:
            "this dashboard is read-only: start pipeline serve with --token (or PIPELINE_SERVE_TOKEN) to allow actions"
        case .signInToRead: "sign in with the dashboard's token (or send it as a bearer token) to see this batch"
        case .signInToAct: "sign in with the dashboard's token (or send it as a bearer token) to retry or cancel items"
        case .wrongToken: "wrong token"
        case .throttled: "too many wrong tokens: try again in \(retryAfter ?? 1) s"
        case .crossSite(let origin):
            "refused: the request comes from another site (\(origin)); act from the dashboard's own page"
        case .csrf: "refused: the request lacks this session's CSRF token; reload the dashboard and try again"
        }
    }
}
