import Foundation
import NIOConcurrencyHelpers
import Sandbox
import StageKit
import TestSupport

/// What a run sent the sandbox, from `GET /sandbox/stats`: requests, upload body bytes (cut bodies included)
/// and the videos and assets it holds. The sandbox counts every request, its stats requests too: this reader leaves out
/// its own, so the difference of two reads is the run's, as long as the test asks the sandbox nothing else
/// between.
final class SandboxTraffic: Sendable {
    /// The counters of one read.
    struct Counts: Sendable {
        var requests: Int
        var bytes: Int
        var videos: Int
        var assets: Int
    }

    private let url: String
    private let reads = NIOLockedValueBox(0)

    init(_ sandbox: RunningSandbox) {
        url = "\(sandbox.baseURL)/sandbox/stats"
    }

    /// The counters now, or nil when the sandbox did not answer.
    func read() async -> Counts? {
        let own = reads.withLockedValue { count in
            count += 1
            return count
        }
        guard let stats = try? JSONValue(parsing: await httpGet(url)), let requests = stats["requests"]?.intValue,
            let bytes = stats["bytesReceived"]?.intValue, let videos = stats["videos"]?.intValue,
            let assets = stats["assets"]?.intValue
        else { return nil }
        return Counts(requests: requests - own, bytes: bytes, videos: videos, assets: assets)
    }
}
