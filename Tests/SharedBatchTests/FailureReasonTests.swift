import Testing

@testable import SharedBatch

/// Why an operation on the database failed, in words: what a dashboard or a worker shows when the server goes away,
/// never a type's name.
@Suite struct FailureReasonTests {
    @Test func closedConnectionsAreSaidInWords() {
        let reason = BatchDatabase.reason(of: ServerConnections.Closed())
        #expect(reason == "the connections to the server were closed", "\(reason)")
        #expect(!BatchDatabase.isTransient(ServerConnections.Closed()))
    }
}
