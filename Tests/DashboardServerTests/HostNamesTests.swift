import Testing

@testable import Dashboard

/// The host names a dashboard answers to: its own, never one a page of another site made point at it.
@Suite struct HostNamesTests {
    @Test func localNamesAndTheListeningAddress() {
        let hosts = HostNames(listeningOn: "127.0.0.1", extra: [])
        for served in ["127.0.0.1:8090", "127.0.0.1", "localhost:8090", "LocalHost.:80", "[::1]:8090", "[::1]"] {
            #expect(hosts.serves(served), "\(served)")
        }
        for refused in ["evil.example", "evil.example:8090", "127.0.0.1.nip.io:8090", "10.0.0.5:8090", "", nil] {
            #expect(!hosts.serves(refused), "\(refused ?? "nil")")
        }
    }

    @Test func namesGivenWithTheFlag() {
        let hosts = HostNames(listeningOn: "media.internal", extra: ["Dash.Example.com"])
        #expect(hosts.serves("media.internal:8090"))
        #expect(hosts.serves("dash.example.com"))
        #expect(!hosts.serves("example.com"))
    }

    /// Listening on every address, the machine's addresses are what people type; a name still has to be given.
    @Test func everyAddressServesAddressesNotNames() {
        let hosts = HostNames(listeningOn: "0.0.0.0", extra: [])
        #expect(hosts.serves("192.168.1.20:8090"))
        #expect(hosts.serves("[fe80::1]:8090"))
        #expect(!hosts.serves("nas.local:8090"))
        #expect(!hosts.serves("999.1.1.1"))
    }
}
