import Foundation
import StageKit
import Synchronization
import Testing

@testable import MediaStages

/// The one-pass ladder (`MediaToolkit.transcodeLadder`): one decode feeding every rendition's encoder.
@Suite struct LadderTranscodeTests {
    /// A video rendition as the package stage makes it: fits `height` lines, pinned threads, forced keyframes. One
    /// thread, for outputs compared byte for byte: this libx264 (0.164) with frame threads does not repeat itself
    /// (`ffmpeg -threads 2 -i clip.mp4 -c:v libx264 -threads 2 -f md5 -` six times gave two digests).
    private func rendition(height: Int, bitRate: Int64) -> TranscodeSettings {
        var settings = TranscodeSettings()
        settings.streams = .video
        settings.maxWidth = height * 16 / 9
        settings.maxHeight = height
        settings.videoBitRate = bitRate
        settings.preset = .veryfast
        settings.threads = 1
        settings.keyframeInterval = 1
        settings.faststart = false
        return settings
    }

    private var audio: TranscodeSettings {
        var settings = TranscodeSettings()
        settings.streams = .audio
        settings.audioBitRate = 96_000
        settings.threads = 2
        settings.faststart = false
        return settings
    }

    private func files(in folder: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
    }

    /// Decoding once changes nothing in what is encoded: every rendition of the one pass (each encoded on a thread
    /// of its own) is byte for byte the MP4 a transcode of that rendition alone writes, the audio too.
    @Test func everyRenditionOfTheOnePassIsTheTranscodeOfItsOwn() async throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let clip = folder.appendingPathComponent("clip.mp4")
        try await makeClip(seconds: 2, size: "320x180", at: clip)
        // No rendition under 256 pixels wide: there libx264 (0.164) reads 12 bytes past a buffer of its own
        // (valgrind: "Invalid read of size 16" in x264_encoder_encode at 160x90 and 160x96, none at 256x144), so
        // its output depends on what lies there and two encodes of one picture in one process can differ.
        let outputs = [
            (path: folder.appendingPathComponent("180p.mp4").path, settings: rendition(height: 180, bitRate: 300_000)),
            (path: folder.appendingPathComponent("audio.mp4").path, settings: audio),
            (path: folder.appendingPathComponent("144p.mp4").path, settings: rendition(height: 144, bitRate: 150_000)),
        ]
        let seen = Mutex<[Double]>([])
        let reports = try await MediaToolkit.transcodeLadder(
            clip.path, outputs: outputs, progress: { done, _ in seen.withLock { $0.append(done) } })
        #expect(reports.map(\.height) == [180, 0, 144])
        #expect(reports.map(\.hasAudio) == [false, true, false])
        #expect(reports[0].videoFrames == 60 && reports[2].videoFrames == 60)
        #expect(seen.withLock { $0.last ?? 0 } > 1.5, "progress stopped at \(seen.withLock { $0 })")
        for (output, report) in zip(outputs, reports) {
            let alone = folder.appendingPathComponent("alone-\(URL(fileURLWithPath: output.path).lastPathComponent)")
            let reference = try await MediaToolkit.transcode(clip.path, to: alone.path, settings: output.settings)
            #expect(report.size == reference.size, "\(output.path)")
            #expect(
                try SegmentedTranscode.sha256(of: URL(fileURLWithPath: output.path))
                    == SegmentedTranscode.sha256(of: alone), "\(output.path) differs from its transcode alone")
        }
    }

    /// A rendition that cannot be made fails the pass with its own name in the message, and no output is left
    /// behind; neither is one when the caller cancels.
    @Test func aFailedOrCancelledPassLeavesNoOutput() async throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let clip = folder.appendingPathComponent("clip.mp4")
        try await makeClip(seconds: 2, size: "320x180", at: clip)
        let out = folder.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        // A rendition that fails once the one before it has started its file: its encoder refuses to open (SVT-AV1
        // 1.4, this FFmpeg's, takes no picture under 64 lines), or its folder is missing.
        var tooSmall = rendition(height: 48, bitRate: 100_000)
        tooSmall.codec = .av1
        let broken: [(path: String, settings: TranscodeSettings, code: MediaError.Code, cause: String)] = [
            (out.appendingPathComponent("broken.mp4").path, tooSmall, .invalidArgument, "libsvtav1"),
            (
                out.appendingPathComponent("missing/broken.mp4").path, rendition(height: 90, bitRate: 100_000),
                .outputNotWritable, "No such file or directory"
            ),
        ]
        for rung in broken {
            let failing = [
                (path: out.appendingPathComponent("180p.mp4").path, settings: rendition(height: 180, bitRate: 300_000)),
                (path: out.appendingPathComponent("audio.mp4").path, settings: audio),
                (path: rung.path, settings: rung.settings),
            ]
            let error = await #expect(throws: MediaError.self) {
                try await MediaToolkit.transcodeLadder(clip.path, outputs: failing)
            }
            #expect(error?.code == rung.code, "\(String(describing: error))")
            #expect(error?.message.contains("broken.mp4") == true, "\(String(describing: error))")
            #expect(error?.message.contains(rung.cause) == true, "\(String(describing: error))")
            #expect(files(in: out) == [])
        }

        let noAudio = [
            (path: out.appendingPathComponent("180p.mp4").path, settings: rendition(height: 180, bitRate: 300_000)),
            (path: out.appendingPathComponent("audio.mp4").path, settings: audio),
        ]
        let silent = Sample.all.first { $0.audioCodec == nil }?.path ?? ""
        let missing = await #expect(throws: MediaError.self) {
            try await MediaToolkit.transcodeLadder(silent, outputs: noAudio)
        }
        #expect(missing?.code == .noAudio)
        #expect(files(in: out) == [])

        let pass = Mutex<Task<[TranscodeReport], any Error>?>(nil)
        let task = Task {
            try await MediaToolkit.transcodeLadder(
                clip.path, outputs: noAudio,
                progress: { done, _ in
                    if done >= 0.5 { pass.withLock { $0?.cancel() } }
                })
        }
        pass.withLock { $0 = task }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(files(in: out) == [])
    }
}
