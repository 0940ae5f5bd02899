import Foundation
import StageKit
import Synchronization
import Testing

@testable import MediaStages

/// A remux that a streaming upload follows (``MediaToolkit/remux(_:to:settings:gate:logger:progress:)``): it writes
/// the bytes a plain remux writes, and every byte it says is final (after the head, below the watermark) is the
/// finished file's byte. An input without room for the index never opens the stream.
@Suite struct StreamedRemuxTests {
    /// What the gate saw: the head, and each watermark with a copy of the bytes from the head to it then.
    struct Seen: Sendable {
        var head: Int64 = 0
        var finals: [(Int64, copy: String)] = []
        var rewritten = false
        var others = 0
    }

    /// A clip of noise (about 6 MB a second), so that the copy passes several of the remux's 4 MiB steps.
    static func noiseClip(_ seconds: Int, at url: URL, extraArguments: [String] = []) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        process.arguments =
            [
                "-v", "error", "-y", "-f", "lavfi", "-i",
                "nullsrc=size=480x270:rate=25:duration=\(seconds),geq=lum='random(1)*255':cb=128:cr=128", "-f",
                "lavfi", "-i", "sine=frequency=440:duration=\(seconds)", "-c:v", "libx264", "-preset", "ultrafast",
                "-qp", "0", "-c:a", "aac", "-shortest",
            ] + extraArguments + [url.path]
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
    }

    static func bytes(_ path: String, range: Range<Int64>) throws -> Data {
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(range.lowerBound))
        return try handle.read(upToCount: Int(range.count)) ?? Data()
    }

    /// Remuxes `input` through a gate that copies what it is told is final; returns what it saw.
    static func streamedRemux(_ input: String, to output: String) async throws -> Seen {
        let seen = Mutex(Seen())
        let gate = JoinGate { passage, head, final in
            switch passage {
            case .progressed:
                let copy = output + ".final-\(final)"
                try? bytes(output, range: head..<final).write(to: URL(fileURLWithPath: copy))
                seen.withLock {
                    $0.head = head
                    $0.finals.append((final, copy))
                }
            case .rewritten: seen.withLock { $0.rewritten = true }
            case .beforePart: seen.withLock { $0.others += 1 }
            }
            return true
        }
        _ = try await MediaToolkit.remux(input, to: output, settings: TranscodeSettings(), gate: gate)
        return seen.withLock { $0 }
    }

    @Test func aStreamedRemuxWritesThePlainRemuxAndOnlyFinalBytesBelowItsWatermark() async throws {
        let folder = temporaryFolder()
        let input = folder.appendingPathComponent("noise.mp4").path
        try Self.noiseClip(3, at: URL(fileURLWithPath: input))
        var plain = TranscodeSettings()
        plain.mode = .remux
        let plainOutput = folder.appendingPathComponent("plain.mp4").path
        _ = try await MediaToolkit.transcode(input, to: plainOutput, settings: plain)
        let streamed = folder.appendingPathComponent("streamed.mp4").path
        let seen = try await Self.streamedRemux(input, to: streamed)

        let size = try #require(try FileManager.default.attributesOfItem(atPath: streamed)[.size] as? Int64)
        #expect(
            try Data(contentsOf: URL(fileURLWithPath: streamed)) == Data(contentsOf: URL(fileURLWithPath: plainOutput)),
            "a streamed remux writes the plain remux's bytes")
        #expect(try moovBeforeMdat(streamed))
        #expect(!seen.rewritten && seen.others == 0)
        #expect(seen.head > 0 && seen.head < 1 << 20, "the head is the file type, the index room and the mdat header")
        // After the header, every 4 MiB, and before the trailer: the watermark rises to the end of the media data,
        // which is the end of the file (the index goes into the room at the head).
        let finals = seen.finals.map(\.0)
        #expect(size > 12 << 20 && finals.count >= 4, "\(finals) of \(size) bytes")
        #expect(finals.first == seen.head && finals.last == size, "\(finals) of \(size) bytes")
        #expect(zip(finals, finals.dropFirst()).allSatisfy { $0 <= $1 }, "\(finals)")
        for (final, copy) in seen.finals {
            #expect(
                try Self.bytes(streamed, range: seen.head..<final) == Data(contentsOf: URL(fileURLWithPath: copy)),
                "bytes below \(final) changed")
        }
    }

    @Test func aRemuxWithoutRoomForTheIndexOpensNoStream() async throws {
        let folder = temporaryFolder()
        let input = folder.appendingPathComponent("noise.mkv").path
        try Self.noiseClip(1, at: URL(fileURLWithPath: input))
        let output = folder.appendingPathComponent("out.mp4").path
        let seen = try await Self.streamedRemux(input, to: output)
        #expect(seen.finals.isEmpty && !seen.rewritten, "a Matroska input's index is known only at the end")
        #expect(try moovBeforeMdat(output))
    }
}
