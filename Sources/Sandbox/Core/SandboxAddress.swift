import NIOConcurrencyHelpers
import StageKit

/// `http://HOST:PORT` (or the configured public base URL), the base of every link the platforms answer.
///
/// The router is built before the server listens, and an ephemeral port is known only then, so the
/// address is set once the socket is bound and read by every request after.
final class SandboxAddress: Sendable {
    private let value = NIOLockedValueBox("")

    var baseURL: String {
        self.value.withLockedValue { $0 }
    }

    func set(_ baseURL: String) {
        self.value.withLockedValue { $0 = baseURL }
    }
}
