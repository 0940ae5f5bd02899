import Foundation
import NIOSSL
import PipelineKit
import PostgresNIO

/// A PostgreSQL address as users write it:
/// `postgres://user[:password]@host[:port]/database[?sslmode=…&sslrootcert=…]`.
///
/// `sslmode` is `prefer` (the default: TLS when the server offers it), `require` (also written `verify-full`, as
/// libpq calls it) or `disable`; TLS always verifies the server's certificate and name, against the system's trusted
/// authorities, or against those of the PEM file `sslrootcert` names. Messages show the address without its
/// password.
struct DatabaseAddress: CustomStringConvertible {
    /// How TLS is used.
    enum TLSMode: String {
        case disable, prefer, require
    }

    var host: String
    var port: Int
    var user: String
    var password: String?
    var database: String
    var tls: TLSMode
    /// The PEM file of the authorities that TLS trusts instead of the system's, when the address names one.
    var rootCertificates: String?

    /// Parses `url`; the password comes from the URL or else from `PGPASSWORD`.
    init(_ url: String, environment: [String: String]) throws(StateError) {
        func invalid(_ why: String) -> StateError {
            StateError(
                code: .io,
                message:
                    "--db \(Self.redacting(url)): \(why); expected postgres://user[:password]@host[:port]/database",
                path: Self.redacting(url))
        }
        guard let components = URLComponents(string: url) else {
            throw invalid(
                "not an address that can be read (a #, / or ? in the password must be written %23, %2F or %3F)")
        }
        guard let scheme = components.scheme, ["postgres", "postgresql"].contains(scheme) else {
            throw invalid("not a postgres:// address")
        }
        guard let host = components.host, !host.isEmpty else { throw invalid("no host") }
        guard let user = components.user, !user.isEmpty else { throw invalid("no user") }
        let database = String(components.path.drop { $0 == "/" })
        guard !database.isEmpty else { throw invalid("no database") }
        let query = components.queryItems ?? []
        let mode = query.first { $0.name == "sslmode" }?.value ?? TLSMode.prefer.rawValue
        guard let tls = TLSMode(rawValue: mode == "verify-full" ? TLSMode.require.rawValue : mode) else {
            throw invalid("sslmode \(mode) is not disable, prefer, require or verify-full")
        }
        let rootCertificates = query.first { $0.name == "sslrootcert" }?.value
        if let rootCertificates, rootCertificates.isEmpty { throw invalid("sslrootcert names no file") }
        self.host = host
        self.port = components.port ?? 5432
        self.user = user.removingPercentEncoding ?? user
        self.password = components.password.map { $0.removingPercentEncoding ?? $0 } ?? environment["PGPASSWORD"]
        self.database = database
        self.tls = tls
        self.rootCertificates = rootCertificates
    }

    var description: String { "postgres://\(user)@\(host):\(port)/\(database)" }

    /// The TLS settings of every connection: the server's certificate and name verified, against `sslrootcert`'s
    /// authorities when the address names a file.
    private var tlsConfiguration: TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        if let rootCertificates { configuration.trustRoots = .file(rootCertificates) }
        return configuration
    }

    /// The configuration of each connection.
    func connectionConfiguration(connectTimeout: TimeAmount) throws(StateError) -> PostgresConnection.Configuration {
        let tls: PostgresConnection.Configuration.TLS
        do {
            switch self.tls {
            case .disable: tls = .disable
            case .prefer: tls = .prefer(try NIOSSLContext(configuration: tlsConfiguration))
            case .require: tls = .require(try NIOSSLContext(configuration: tlsConfiguration))
            }
        } catch {
            throw StateError(
                code: .io, message: "cannot set up TLS for the database \(self): \(error)", path: description)
        }
        var configuration = PostgresConnection.Configuration(
            host: host, port: port, username: user, password: password, database: database, tls: tls)
        configuration.options.connectTimeout = connectTimeout
        return configuration
    }

    /// `url` with its password replaced, for messages. Read by hand rather than by `URLComponents`, which refuses
    /// an address with a character it does not take (a space in a password): such an address must not be shown
    /// whole either. The user information ends at the last `@` (a password may hold one). Text that is not a
    /// `scheme://` address is not shown at all.
    static func redacting(_ url: String) -> String {
        // Not an address of ours (libpq's "host=… password=…", a scheme without slashes): never shown.
        guard let schemeEnd = url.range(of: "://") else { return "(the address given)" }
        let rest = url[schemeEnd.upperBound...]
        guard let at = rest.lastIndex(of: "@"), let colon = rest[..<at].firstIndex(of: ":") else { return url }
        return String(url[..<colon]) + ":***" + String(rest[at...])
    }
}
