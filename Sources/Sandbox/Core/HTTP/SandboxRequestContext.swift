import Hummingbird
import NIOCore
import StageKit

/// The per-request context: Hummingbird's core storage plus the connection's channel, which the
/// upload routes close to simulate a network cut (`dropAfterBytes`).
struct SandboxRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.channel = source.channel
    }
}
