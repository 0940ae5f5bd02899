import Testing

@testable import SharedBatch

/// How a worker keeps its leases, item and unit leases alike.
@Suite struct WorkerSettingsTests {
    /// The heartbeat renews the leases three times per lease, and the work under them stops once they went
    /// unrenewed for all but the last third.
    @Test func theHeartbeatIsAThirdOfTheLease() {
        let settings = WorkerSettings(lease: .seconds(30))
        #expect(settings.heartbeat == .seconds(10) && settings.silenceLimit == .seconds(20))
        #expect(WorkerSettings().lease == WorkerSettings.defaultLease)
        #expect(WorkerSettings().poll == WorkerSettings.defaultPoll)
    }
}
