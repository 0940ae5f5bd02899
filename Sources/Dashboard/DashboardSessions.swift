import Crypto
import Foundation
import NIOConcurrencyHelpers

/// The signed-in browsers of one `pipeline serve`: each has a random session id (its cookie) and a CSRF token of
/// its own, which the page sends with every action. They live in memory only: nothing of them is written anywhere,
/// and a restart of the server signs everybody out.
final class DashboardSessions: Sendable {
    /// One signed-in browser.
    struct Session: Sendable {
        /// The token the page sends as `X-CSRF-Token` with an action: a page of another origin cannot read it.
        let csrf: String
        let signedInAt: ContinuousClock.Instant
    }

    /// How many sessions are kept at most; the oldest is signed out to make room.
    static let capacity = 256

    private let sessions = NIOLockedValueBox<[String: Session]>([:])

    /// Opens a session; returns its id (for the cookie) and the session.
    func open() -> (id: String, session: Session) {
        let id = Self.randomToken()
        let session = Session(csrf: Self.randomToken(), signedInAt: .now)
        sessions.withLockedValue { sessions in
            if sessions.count >= Self.capacity,
                let oldest = sessions.min(by: { $0.value.signedInAt < $1.value.signedInAt })
            {
                sessions[oldest.key] = nil
            }
            sessions[id] = session
        }
        return (id, session)
    }

    /// The session a cookie names, if it is open.
    func session(_ id: String) -> Session? {
        sessions.withLockedValue { $0[id] }
    }

    /// Signs a session out.
    func close(_ id: String) {
        _ = sessions.withLockedValue { $0.removeValue(forKey: id) }
    }

    /// 32 random bytes in hex.
    private static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: .min ... .max, using: &generator)) }
            .joined()
    }
}

/// Whether two secrets are equal, in a time that does not depend on where they differ.
func secretsMatch(_ given: String, _ expected: String) -> Bool {
    // Digests have one length whatever was given, so the comparison below runs over the same bytes every time.
    let left = Array(SHA256.hash(data: Data(given.utf8)))
    let right = Array(SHA256.hash(data: Data(expected.utf8)))
    return zip(left, right).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
}
