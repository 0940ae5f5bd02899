import HTTPTypes
import Hummingbird

/// The host names a dashboard answers to. A browser sends the name it connected by in `Host`; a page on another
/// site whose name was made to resolve to this machine (DNS rebinding) sends that site's name, and is refused
/// with 421 before any route reads the ledger.
struct HostNames: Sendable {
    private let names: Set<String>
    /// Whether any address literal is served: the server listens on every address (`0.0.0.0`, `::`), where a
    /// machine's own addresses are the names people use. An address is never a rebinding: no DNS answer moves it.
    private let anyAddress: Bool

    init(listeningOn host: String, extra: [String]) {
        let listening = Self.normal(host)
        anyAddress = listening == "0.0.0.0" || listening == "::" || listening.isEmpty
        names = Set(["127.0.0.1", "localhost", "::1", listening] + extra.map(Self.normal))
    }

    /// Whether a request's `Host` (a name or address, with or without a port) is one served.
    func serves(_ hostHeader: String?) -> Bool {
        guard let hostHeader, !hostHeader.isEmpty else { return false }
        let name = Self.normal(Self.hostPart(of: hostHeader))
        return names.contains(name) || (anyAddress && Self.isAddressLiteral(name))
    }

    /// A `Host` value without its port: `[::1]:8090` → `::1`, `example.com:8090` → `example.com`.
    static func hostPart(of value: String) -> Substring {
        if value.hasPrefix("["), let end = value.firstIndex(of: "]") {
            return value[value.index(after: value.startIndex)..<end]
        }
        let colons = value.count { $0 == ":" }
        guard colons == 1, let colon = value.firstIndex(of: ":") else { return value[...] }
        return value[..<colon]
    }

    /// Names compare without case and without a final dot (`LocalHost.` is `localhost`); brackets are dropped.
    private static func normal<S: StringProtocol>(_ name: S) -> String {
        var text = name.lowercased()
        if text.hasPrefix("["), text.hasSuffix("]") { text = String(text.dropFirst().dropLast()) }
        while text.hasSuffix(".") { text.removeLast() }
        return text
    }

    private static func isAddressLiteral(_ name: String) -> Bool {
        if name.contains(":") { return name.allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." } }
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { part in UInt8(part) != nil }
    }
}

/// Refuses, with 421 Misdirected Request, every request whose `Host` the dashboard does not serve.
struct HostCheck<Context: RequestContext>: RouterMiddleware {
    let hosts: HostNames

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        let host = request.head.authority
        guard hosts.serves(host) else {
            return DashboardRoutes.error(
                .misdirectedRequest,
                "this dashboard does not answer to the host name \(host.map { "'\($0)'" } ?? "(none)"): open it by 127.0.0.1 or localhost, or start pipeline serve with --allow-host NAME"
            )
        }
        return try await next(request, context)
    }
}
