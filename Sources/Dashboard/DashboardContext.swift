import Hummingbird
import NIOCore

/// A dashboard request's context: Hummingbird's, and the address of the client that sent it (the key of its
/// wrong sign-ins in ``LoginThrottle``).
struct DashboardContext: RequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    let remoteAddress: SocketAddress?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }

    /// The client's address without its port: every connection of one client counts as that client.
    var client: String { remoteAddress?.ipAddress ?? "unknown" }
}
