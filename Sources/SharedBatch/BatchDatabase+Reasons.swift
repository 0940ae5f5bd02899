import NIOSSL
import PostgresNIO

/// Why an operation on the database failed and what to change, in words for people: PostgresNIO's own descriptions
/// of its errors are code names (`authMechanismRequiresPassword`) or say nothing, so that nothing can leak.
extension BatchDatabase {
    /// What went wrong: the server's message, the client's problem in words, or the network's error. One line.
    static func reason(of error: any Error) -> String {
        guard let error = error as? PSQLError else { return oneLine("\(error)") }
        switch error.code {
        case .sslUnsupported:
            return "the server does not offer TLS"
        case .authMechanismRequiresPassword:
            return "the server asks for a password and none was given"
        case .unsupportedAuthMechanism:
            return "the server asks for a way of signing in that this pipeline does not support"
        case .saslError:
            return "the password exchange with the server (SCRAM) failed"
        case .failedToAddSSLHandler, .receivedUnencryptedDataAfterSSLRequest:
            return "the TLS connection to the server could not be set up"
        default:
            break
        }
        if let message = error.serverInfo?[.message] { return oneLine(message) }
        if let underlying = error.underlying {
            return isRefusedHandshake(error)
                ? oneLine("the TLS handshake with the server failed (\(underlying))") : oneLine("\(underlying)")
        }
        return switch error.code {
        case .serverClosedConnection, .uncleanShutdown: "the server closed the connection"
        case .clientClosedConnection, .poolClosed: "the connection was closed"
        case .queryCancelled: "the statement was cancelled"
        default: "the PostgreSQL client failed (\(error.code))"
        }
    }

    /// What to change when a first connection failed, for the causes a user can fix: a password, a user or a
    /// database's name in the address, its `sslmode`, the server's rules; nil when the reason says it all.
    static func remedy(for error: any Error, address: DatabaseAddress) -> String? {
        if isRefusedHandshake(error) {
            let authorities =
                address.rootCertificates.map { "among those in \($0)" } ?? "among the system's trusted certificates"
            return
                "check that this machine trusts the server's TLS certificate (the authority that signed it \(authorities),"
                + " or named with ?sslrootcert=FILE; the server's name in it), or use ?sslmode=disable on a network you trust"
        }
        if (error as? PSQLError)?.serverInfo?[.sqlState] == "53300" {
            return "the server has no free connection: try again later, or raise its max_connections"
        }
        if isTransient(error) {
            return "check the host and port in the address, and that the server is running and takes connections"
        }
        guard let error = error as? PSQLError else { return nil }
        switch error.code {
        case .sslUnsupported:
            return "use ?sslmode=prefer or ?sslmode=disable in the address, or turn TLS on in the server"
        case .authMechanismRequiresPassword:
            return "give the password of user \(address.user) in the address"
                + " (postgres://\(address.user):PASSWORD@\(address.host):\(address.port)/\(address.database)) or in PGPASSWORD"
        case .unsupportedAuthMechanism:
            return "have the server ask user \(address.user) for a password (scram-sha-256 or md5 in its pg_hba.conf)"
        case .saslError:
            return "check the password of user \(address.user) (in the address or in PGPASSWORD)"
        case .server:
            break
        default:
            return nil
        }
        let message = error.serverInfo?[.message] ?? ""
        switch error.serverInfo?[.sqlState] ?? "" {
        case "28P01":
            return "check the password of user \(address.user) (in the address or in PGPASSWORD)"
        case "3D000":
            return "check the database's name in the address; pipeline creates a batch's tables, not the database"
                + " (createdb \(address.database) makes it)"
        case "28000" where message.contains("no encryption"):
            return address.tls == .disable
                ? "the server takes user \(address.user) only over TLS: remove ?sslmode=disable from the address"
                : "the server takes user \(address.user) only over TLS, which it does not offer: ask its administrator"
        case "28000" where message.contains("pg_hba.conf"):
            return "the server's pg_hba.conf does not let user \(address.user) reach database \(address.database)"
                + " from this machine: ask its administrator"
        case "28000":
            return "check the user's name in the address"
        case "42501":
            return "have user \(address.user) granted CONNECT on database \(address.database)"
        default:
            return nil
        }
    }

    /// Whether the TLS handshake failed (most often a certificate this machine does not trust): unlike a connection
    /// that broke, trying again does not help.
    static func isRefusedHandshake(_ error: any Error) -> Bool {
        guard let error = error as? PSQLError, case .handshakeFailed? = error.underlying as? NIOSSLError else {
            return false
        }
        return true
    }

    /// Whether a statement failed for a table that is not there (SQLSTATE 42P01): the schema was checked when the
    /// database was opened, so the batch's tables were dropped since.
    static func isMissingTable(_ error: any Error) -> Bool {
        (error as? PSQLError)?.serverInfo?[.sqlState] == "42P01"
    }

    /// `text` on one line, as every message of a command is.
    private static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).joined(separator: " ")
    }
}
