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
