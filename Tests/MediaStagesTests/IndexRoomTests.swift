import Foundation
import StageKit
import TestSupport
import Testing

@testable import MediaStages

/// The room a segmented export reserves for its index: sized from the source's frame and sample rates, and
/// large enough that the join writes the index into it (a `free` box stays) instead of writing the file again.
@Suite struct IndexRoomTests {
    /// AAC frames of `seconds` at `rate`, with the bound's margin.
    static func audioFrames(_ seconds: Double, _ rate: Double) -> Int64 {
        Int64((seconds * rate / 1024 * 1.1).rounded(.up)) + 64
    }

    @Test func theRoomFollowsTheSourcesRates() async throws {
        let folder = temporaryFolder()
        let clip = folder.appendingPathComponent("fast.mp4")
        let made = Process()
        made.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        made.arguments = [
            "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=320x180:rate=50:duration=3", "-f", "lavfi",
            "-i", "sine=frequency=440:duration=3:sample_rate=96000", "-c:v", "libx264", "-preset", "veryfast",
            "-c:a", "aac", "-shortest", clip.path,
        ]
        try made.run()
        made.waitUntilExit()
        let info = try await MediaToolkit.probe(clip.path)
        #expect(info.video?.fps == 50 && info.audio?.sampleRate == 96_000)
        let settings = TranscodeSettings()
        let room = SegmentedTranscode.indexSpace(duration: 600, source: info, settings: settings)

        // A known frame rate (50 fps, bound at 60) needs less room than an unknown one (bound at 120).
        var unknown = info
        unknown.video?.fps = 0
        let unknownRoom = SegmentedTranscode.indexSpace(duration: 600, source: unknown, settings: settings)
        let unknownFrames = Int64((600 * 120 * 1.1).rounded(.up))
        let knownFrames = Int64((600 * 60 * 1.1).rounded(.up))
        #expect(unknownRoom - room == 25 * (unknownFrames - knownFrames))
        // Above 120 fps, the known rate still counts: no frame is dropped without maxFPS.
        var slowMotion = info
        slowMotion.video?.fps = 240
        let slowMotionFrames = Int64((600 * 240 * 1.2 * 1.1).rounded(.up))
        #expect(
            SegmentedTranscode.indexSpace(duration: 600, source: slowMotion, settings: settings) - room
                == 25 * (slowMotionFrames - knownFrames))
        var capped = settings
        capped.maxFPS = 30
        #expect(SegmentedTranscode.indexSpace(duration: 600, source: info, settings: capped) < room)

        // 96 kHz audio has twice the AAC frames of 48 kHz; a rate AAC lacks counts as the next one it has.
        var cd = info
        cd.audio?.sampleRate = 44_100
        let cdRoom = SegmentedTranscode.indexSpace(duration: 600, source: cd, settings: settings)
        #expect(room - cdRoom == 4 * (Self.audioFrames(600, 96_000) - Self.audioFrames(600, 44_100)))
        var odd = info
        odd.audio?.sampleRate = 50_000
        #expect(
            SegmentedTranscode.indexSpace(duration: 600, source: odd, settings: settings) - cdRoom
                == 4 * (Self.audioFrames(600, 64_000) - Self.audioFrames(600, 44_100)))

        // The export of that source fits its index into the room: moov, then what is left as a free box.
        let output = folder.appendingPathComponent("fast-out.mp4")
        let result = await StageHarness(stateFolder: folder.appendingPathComponent("state")).run(
            TranscodeStage.self,
            options: [
                "file": .string(clip.path), "output": .string(output.path), "segmentSeconds": 1,
                "video": ["preset": "veryfast"], "threads": 1,
            ])
        _ = try result.outputs.get()
        let boxes = try topLevelBoxes(output.path)
        #expect(boxes.prefix(3).map(\.type) == ["ftyp", "moov", "free"])
        // The index and what is left of its room take the room this source's rates give, not the fixed bound's.
        let reserved = boxes.dropFirst().prefix(2).reduce(0) { $0 + $1.size }
        // The default export resamples 96 kHz to 48 kHz: the room counts the rate it encodes.
        var exported = info
        exported.audio?.sampleRate = try #require(try await MediaToolkit.probe(output.path).audio?.sampleRate)
        let expected = SegmentedTranscode.indexSpace(duration: info.duration, source: exported, settings: settings)
        #expect(abs(Int64(reserved) - expected) <= 64, "moov and free take \(reserved) bytes, the room is \(expected)")

        // Each track is written in runs of half a second, one chunk each, not a chunk per sample.
        let chunks = try chunkCounts(output.path)
        #expect(chunks.count == 2)
        let most = Int((info.duration / MediaToolkit.joinChunkSeconds * 1.25).rounded(.up)) + 2
        for (samples, runs) in chunks {
            #expect(samples > 100 && runs <= most, "\(runs) chunks for \(samples) samples")
        }
    }

    /// An MP4's top-level boxes, in order.
    private func topLevelBoxes(_ path: String) throws -> [(type: String, size: Int)] {
        boxes(in: try Data(contentsOf: URL(fileURLWithPath: path))).map { ($0.type, $0.range.count) }
    }

    /// Per track of an MP4: its samples (`stsz`) and chunks (`stco` or `co64`).
    private func chunkCounts(_ path: String) throws -> [(samples: Int, chunks: Int)] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        func inside(_ box: (type: String, range: Range<Int>)) -> [(type: String, range: Range<Int>)] {
            boxes(in: data, within: box.range.lowerBound + 8..<box.range.upperBound)
        }
        /// The 32-bit field `offset` bytes into a box's payload.
        func field(_ box: (type: String, range: Range<Int>), _ offset: Int) -> Int {
            let start = box.range.lowerBound + 8 + offset
            return data[start..<start + 4].reduce(0) { $0 << 8 | Int($1) }
        }
        var tracks: [(samples: Int, chunks: Int)] = []
        for moov in boxes(in: data) where moov.type == "moov" {
            for trak in inside(moov) where trak.type == "trak" {
                let path = ["mdia", "minf", "stbl"]
                var level = [trak]
                for type in path { level = level.flatMap(inside).filter { $0.type == type } }
                let table = level.flatMap(inside)
                guard let stsz = table.first(where: { $0.type == "stsz" }),
                    let offsets = table.first(where: { $0.type == "stco" || $0.type == "co64" })
                else { continue }
                // stsz: version and flags, sample size, count; stco/co64: version and flags, count.
                tracks.append((field(stsz, 8), field(offsets, 4)))
            }
        }
        return tracks
    }

    /// The boxes laid end to end in `range` of `data` (all of it when nil).
    private func boxes(in data: Data, within range: Range<Int>? = nil) -> [(type: String, range: Range<Int>)] {
        let range = range ?? 0..<data.count
        var boxes: [(type: String, range: Range<Int>)] = []
        var offset = range.lowerBound
        while offset + 8 <= range.upperBound {
            var size = data[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            let type = String(decoding: data[offset + 4..<offset + 8], as: UTF8.self)
            if size == 1, offset + 16 <= range.upperBound {
                size = data[offset + 8..<offset + 16].reduce(0) { $0 << 8 | Int($1) }
            }
            guard size >= 8, offset + size <= range.upperBound else { break }
            boxes.append((type, offset..<offset + size))
            offset += size
        }
        return boxes
    }
}
