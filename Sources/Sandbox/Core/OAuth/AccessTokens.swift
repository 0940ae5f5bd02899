import Foundation
import StageKit

/// Why a token was refused.
enum TokenRejection: Sendable {
    case unknown
    case expired
}

/// The bearer tokens of the REST APIs (Vimeo's and the generic one): the configured tokens and those
/// `POST /oauth/token` issued, each with the start of its lifetime.
///
/// Token state is kept in memory: after a restart, issued tokens are unknown again and the client refreshes,
/// as it would after any 401.
@SandboxActor
final class AccessTokens {
    private let configured: Set<String>
    /// Tokens issued by `POST /oauth/token`.
    private var issued: Set<String> = []
    /// When each token was first seen (issued or used): the start of its lifetime.
    private var clock: [String: Date] = [:]

    init(configured: [String]) {
        self.configured = Set(configured)
    }

    /// Checks a bearer token: configured or issued, and (with a `tokenLifetime` fault) younger than
    /// the lifetime, counted from its first use or issue. Returns `nil` when it is accepted.
    func check(token: String, lifetime: Double?) -> TokenRejection? {
        guard self.configured.contains(token) || self.issued.contains(token) else {
            return .unknown
        }
        let now = Date()
        let start = self.clock[token] ?? now
        self.clock[token] = start
        if let lifetime, now.timeIntervalSince(start) >= lifetime {
            return .expired
        }
        return nil
    }

    /// Issues a new access token (`POST /oauth/token`); its lifetime starts now.
    func issue() -> String {
        let token = RandomID.hex(bytes: 20)
        self.issued.insert(token)
        self.clock[token] = Date()
        return token
    }

    /// Restarts every token's lifetime, when the faults change.
    func resetClocks() {
        self.clock.removeAll()
    }
}
