import Foundation
import StageKit

/// Why a token was refused.
enum TokenRejection: Sendable {
    case unknown
    case expired
}

extension SandboxState {
    /// Checks a bearer token: configured or issued, and (with a `tokenLifetime` fault) younger than
    /// the lifetime, counted from its first use or issue. Returns `nil` when it is accepted.
    ///
    /// Token state is kept in memory: after a restart, issued tokens are unknown again and the
    /// client refreshes, as it would after any 401.
    func check(token: String, lifetime: Double?) -> TokenRejection? {
        guard self.configuration.tokens.contains(token) || self.issuedTokens.contains(token) else {
            return .unknown
        }
        let now = Date()
        let start = self.tokenClock[token] ?? now
        self.tokenClock[token] = start
        if let lifetime, now.timeIntervalSince(start) >= lifetime {
            return .expired
        }
        return nil
    }

    /// Issues a new access token (`POST /oauth/token`); its lifetime starts now.
    func issueToken() -> String {
        let token = RandomID.hex(bytes: 20)
        self.issuedTokens.insert(token)
        self.tokenClock[token] = Date()
        return token
    }

    /// Restarts every token's lifetime, when the faults change.
    func resetTokenClocks() {
        self.tokenClock.removeAll()
    }
}
