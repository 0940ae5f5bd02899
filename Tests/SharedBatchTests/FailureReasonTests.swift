import Testing
import _ConnectionPoolModule

@testable import SharedBatch

/// Why an operation on the database failed, in words: what a dashboard or a worker shows when the server goes away,
/// never a type's name.
@Suite struct FailureReasonTests {
    @Test func thePoolsErrorsAreSaidInWords() {
        for error in [
            ConnectionPoolError.connectionCreationCircuitBreakerTripped, .requestCancelled, .poolShutdown,
        ] {
            let reason = BatchDatabase.reason(of: error)
            #expect(!reason.contains("ConnectionPoolError") && !reason.contains("base:"), "\(reason)")
        }
        let tripped = BatchDatabase.reason(of: ConnectionPoolError.connectionCreationCircuitBreakerTripped)
        #expect(tripped.contains("cannot be reached"), "\(tripped)")
    }
}
