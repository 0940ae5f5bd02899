import Foundation
import NIOConcurrencyHelpers
import NIOCore
import Testing

@testable import UploadStages

/// The request body's read-ahead bound: memory for an upload must not depend on how slowly the server reads.
@Suite struct FileChunksTests {
    /// Holds chunks the way the HTTP client does until it has written them (the only references).
    final class Client: Sendable {
        private let held = NIOLockedValueBox([ByteBuffer(repeating: 1, count: 64), ByteBuffer(repeating: 2, count: 64)])
        func handedOver(to window: inout FileChunks.WriteWindow) {
            held.withLockedValue { for chunk in $0 { window.track(chunk) } }
        }
        func write() { held.withLockedValue { $0.removeAll() } }
    }

    @Test func aThirdChunkWaitsUntilTheClientHasWrittenOne() async throws {
        var window = FileChunks.WriteWindow()
        let client = Client()
        client.handedOver(to: &window)
        let clock = ContinuousClock()
        let started = clock.now
        Task {
            try await Task.sleep(for: .milliseconds(300))
            client.write()
        }
        try await window.waitForRoom()
        #expect(clock.now - started >= .milliseconds(250))
    }

    @Test func writtenChunksLeaveRoomAtOnce() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("chunks-\(UUID().uuidString)").path
        try Data(repeating: 7, count: 5 * UploadFile.chunkSize + 3).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let file = try UploadFile(path: path)
        var total = 0
        // Each chunk is dropped at once.
        for try await chunk in file.chunks(0..<file.size) { total += chunk.readableBytes }
        #expect(total == 5 * UploadFile.chunkSize + 3)
    }
}
