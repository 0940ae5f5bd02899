/// Who may read a dashboard and act on it, and under which host names it answers.
public struct DashboardAccess: Sendable {
    /// The token that signs people in (the page's form) and scripts (`Authorization: Bearer`); nil: nobody signs
    /// in, the dashboard is read-only and its reads are public.
    public var token: String?
    /// With a token, whether the reads (the page's counts, the items, the status API) are open to requests
    /// without it; actions still need it.
    public var publicReads: Bool
    /// Host names the dashboard answers to besides `127.0.0.1`, `localhost`, `[::1]` and the address it listens
    /// on (a name a proxy or a DNS entry gives it). Any other `Host` is refused with 421, so a page whose name was
    /// made to point at this machine (DNS rebinding) reads nothing.
    public var hostNames: [String]

    /// The access of a dashboard; the defaults: read-only, public reads, local names only.
    public init(token: String? = nil, publicReads: Bool = false, hostNames: [String] = []) {
        self.token = token
        self.publicReads = publicReads
        self.hostNames = hostNames
    }

    /// Whether reads need a signed-in session or the bearer token.
    var readsNeedToken: Bool { token != nil && !publicReads }
}
