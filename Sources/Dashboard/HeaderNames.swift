import HTTPTypes

/// Header names the dashboard reads or sends that `HTTPField.Name` does not name.
extension HTTPField.Name {
    /// The header a page sends its session's CSRF token in.
    static let csrfToken = named("X-CSRF-Token")
    /// Where a browser says a request comes from: `same-origin`, `same-site`, `cross-site` or `none`.
    static let secFetchSite = named("Sec-Fetch-Site")
    /// Whether a page may be shown in a frame.
    static let xFrameOptions = named("X-Frame-Options")
    /// What a browser tells the sites a page links to.
    static let referrerPolicy = named("Referrer-Policy")

    /// A name from a literal token; `HTTPField.Name.init?` fails only on strings that are not tokens, which these
    /// literals are.
    private static func named(_ token: String) -> HTTPField.Name {
        HTTPField.Name(token) ?? .via
    }
}
