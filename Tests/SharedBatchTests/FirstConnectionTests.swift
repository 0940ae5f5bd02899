import Foundation
import PipelineKit
import TestSupport
import Testing

@testable import SharedBatch

/// Opening a shared batch's database with a mistake in its address: one clear error, at once when the server
/// refuses, and after the start's patience (not the operations' two minutes) when nothing answers.
@Suite struct FirstConnectionTests {
    /// How long opening the database may take when the server refuses: far less than any retrying.
    static let prompt = Duration.seconds(3)

    @Test func aDatabaseOrUserThatDoesNotExistFailsAtOnceWithTheServersReason() async throws {
        let server = try await PostgresServer.start()
        for (url, reason) in [
            (
                "postgres://pipeline@127.0.0.1:\(server.port)/no_such_database",
                "database \"no_such_database\" does not exist"
            ),
            ("postgres://nobody@127.0.0.1:\(server.port)/pipeline", "role \"nobody\" does not exist"),
        ] {
            let clock = ContinuousClock()
            let started = clock.now
            let error = await #expect(throws: StateError.self) {
                _ = try await BatchDatabase(url: url, patience: .seconds(5))
            }
            #expect(clock.now - started < Self.prompt, "\(url) took \(clock.now - started)")
            #expect(error?.message.contains(reason) == true, "\(String(describing: error?.message))")
            #expect(error?.message.contains("cannot connect to the database") == true)
        }
    }

    /// A user the server asks for a password (scram-sha-256), given a wrong one, none, or the right one for a
    /// database that does not exist, and a URL that requires TLS of a server without it: each fails at once with one
    /// line that names the address (never the password), the cause in words and what to change.
    @Test func refusalsNameTheCauseAndWhatToChangeWithoutThePassword() async throws {
        let server = try await PostgresServer.start()
        let password = "s3cret-\(UInt32.random(in: 0...UInt32.max))"
        let plain = try await server.createPasswordUser(password: password)
        let user = PostgresServer.passwordUser
        let address = "postgres://\(user)@127.0.0.1:\(server.port)"
        func url(password: String?, database: String = "pipeline", query: String = "") -> String {
            "postgres://\(user)\(password.map { ":\($0)" } ?? "")@127.0.0.1:\(server.port)/\(database)\(query)"
        }
        for (url, expected) in [
            (
                url(password: password + "x"),
                "cannot connect to the database \(address)/pipeline: password authentication failed for user \"\(user)\": check the password of user \(user) (in the address or in PGPASSWORD)"
            ),
            (
                url(password: nil),
                "cannot connect to the database \(address)/pipeline: the server asks for a password and none was given: give the password of user \(user) in the address (postgres://\(user):PASSWORD@127.0.0.1:\(server.port)/pipeline) or in PGPASSWORD"
            ),
            (
                url(password: password, database: "no_such_database"),
                "cannot connect to the database \(address)/no_such_database: database \"no_such_database\" does not exist: check the database's name in the address; pipeline creates a batch's tables, not the database (createdb no_such_database makes it)"
            ),
            (
                url(password: password, query: "?sslmode=require"),
                "cannot connect to the database \(address)/pipeline: the server does not offer TLS: use ?sslmode=prefer or ?sslmode=disable in the address, or turn TLS on in the server"
            ),
        ] {
            let clock = ContinuousClock()
            let started = clock.now
            let error = await #expect(throws: StateError.self) {
                _ = try await BatchDatabase(url: url, patience: .seconds(5))
            }
            #expect(clock.now - started < Self.prompt, "\(url) took \(clock.now - started)")
            #expect(error?.message == expected)
            #expect(error?.message.contains(password) == false && error?.path.contains(password) == false)
        }
        // The same user with its password gets in; one from PGPASSWORD is used and not shown either.
        let database = try await BatchDatabase(url: url(password: password))
        await database.close()
        let fromEnvironment = try DatabaseAddress(plain, environment: ["PGPASSWORD": password])
        #expect(fromEnvironment.password == password && !fromEnvironment.description.contains(password))
    }

    /// An address that does not parse is shown without its password, also when `URLComponents` cannot read it (a
    /// `#`, `/` or `?` in the password that is not percent-encoded).
    @Test func anAddressThatDoesNotParseIsShownWithoutItsPassword() {
        let unreadable = "a #, / or ? in the password must be written %23, %2F or %3F"
        for (url, reason) in [
            ("postgres://u:p#qq7@host/db", unreadable), ("postgres://u:p/qq7@host/db", unreadable),
            ("postgres://u:p?qq7@host/db", unreadable), ("postgres://u:qq7@/db", "no host"),
        ] {
            let error = #expect(throws: StateError.self) { _ = try DatabaseAddress(url, environment: [:]) }
            let (message, path) = (error?.message ?? "", error?.path ?? "")
            #expect(!message.contains("qq7") && !path.contains("qq7"), "\(message)")
            #expect(message.contains("postgres://u:***@") && message.contains(reason), "\(message)")
        }
        // Not a postgres:// address at all (libpq's keywords, a scheme without slashes, no scheme): not shown.
        for url in ["host=localhost user=u password=qq7 dbname=d", "postgres:/u:qq7@h/db", "u:qq7@localhost/db"] {
            let error = #expect(throws: StateError.self) { _ = try DatabaseAddress(url, environment: [:]) }
            let (message, path) = (error?.message ?? "", error?.path ?? "")
            #expect(!message.contains("qq7") && !path.contains("qq7"), "\(message) \(path)")
        }
    }

    @Test func aPortNobodyListensOnFailsAfterTheStartsPatienceWithTheNetworksReason() async throws {
        let port = try freeLoopbackPort()
        let clock = ContinuousClock()
        let started = clock.now
        let error = await #expect(throws: StateError.self) {
            _ = try await BatchDatabase(
                url: "postgres://pipeline@127.0.0.1:\(port)/pipeline", patience: .seconds(30),
                startPatience: .seconds(1))
        }
        #expect(clock.now - started < .seconds(10), "took \(clock.now - started)")
        let message = error?.message ?? ""
        #expect(message.contains("Connection refused") && message.contains("gave up after 1 s"), "\(message)")
    }
}
