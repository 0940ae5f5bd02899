import Foundation
import StageKit
import TestSupport
import Testing

@testable import MediaStages

/// `ffmpeg.package`: a ladder checked with ffprobe, the reference reader of HLS and DASH.
@Suite struct PackageStageTests {
    /// Three renditions of a 4 s clip in 1 s segments.
    private static let renditions: JSONValue = [
        ["height": 180, "bitrate": "300k"], ["height": 144, "bitrate": "200k"], ["height": 90, "bitrate": "100k"],
    ]

    private func package(_ clip: URL, into folder: URL, checkpoint: JSONValue? = nil) async -> StageHarness.Run {
        await StageHarness(stateFolder: folder.appendingPathComponent("state")).run(
            PackageStage.self,
            options: [
                "file": .string(clip.path), "output": .string(folder.appendingPathComponent("hls").path),
                "renditions": Self.renditions, "segmentSeconds": "1s", "preset": "veryfast", "threads": 2,
            ], checkpoint: checkpoint)
    }

    /// The attributes of each `#EXT-X-STREAM-INF` line, with the playlist on the line after it.
    private func variants(_ master: String) -> [(attributes: [String: String], playlist: String)] {
        let lines = master.split(separator: "\n").map(String.init)
        return lines.indices.compactMap { index in
            guard lines[index].hasPrefix("#EXT-X-STREAM-INF:"), index + 1 < lines.count else { return nil }
            return (attributes(lines[index]), lines[index + 1])
        }
    }

    /// `KEY=value,KEY="a,b"` after the tag's colon.
    private func attributes(_ line: String) -> [String: String] {
        var result: [String: String] = [:]
        var rest = Substring(line.drop { $0 != ":" }.dropFirst())
        while let equals = rest.firstIndex(of: "=") {
            let key = String(rest[..<equals])
            rest = rest[rest.index(after: equals)...]
            let value: Substring
            if rest.first == "\"" {
                let body = rest.dropFirst()
                let close = body.firstIndex(of: "\"") ?? body.endIndex
                value = body[..<close]
                rest = close < body.endIndex ? body[body.index(after: close)...] : ""
            } else {
                let comma = rest.firstIndex(of: ",") ?? rest.endIndex
                value = rest[..<comma]
                rest = rest[comma...]
            }
            result[key] = String(value)
            if rest.first == "," { rest = rest.dropFirst() }
        }
        return result
    }

    /// The presentation times of a rendition's keyframes, as ffprobe decodes its playlist.
    private func keyframes(_ playlist: URL) async -> [Double] {
        let output = await runTool(
            "/usr/bin/ffprobe",
            [
                "-v", "error", "-select_streams", "v", "-skip_frame", "nokey", "-show_entries", "frame=pts_time", "-of",
                "csv=p=0", playlist.path,
            ])
        return output.text.split(whereSeparator: \.isNewline).compactMap {
            Double($0.split(separator: ",").first.map(String.init) ?? "")
        }
    }

    /// The codecs string a stream as ffprobe describes it must have: `avc1.` + profile_idc + level (the constraint
    /// byte between them depends on the profile and is not checked), `mp4a.40.2` for AAC-LC.
    private func expectedCodecs(_ stream: JSONValue) -> (prefix: String, suffix: String)? {
        switch stream["codec_name"]?.stringValue {
        case "h264":
            let profiles = ["Constrained Baseline": 66, "Baseline": 66, "Main": 77, "High": 100]
            guard let profile = stream["profile"]?.stringValue.flatMap({ profiles[$0] }),
                let level = stream["level"]?.intValue
            else { return nil }
            return (String(format: "avc1.%02x", profile), String(format: "%02x", level))
        case "aac":
            return stream["profile"]?.stringValue == "LC" ? ("mp4a.40.2", "") : nil
        default:
            return nil
        }
    }

    @Test func ladderOfThreeRenditionsReadsBackAlignedWithMatchingCodecs() async throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let clip = folder.appendingPathComponent("clip.mp4")
        try await makeClip(seconds: 4, size: "320x180", at: clip)
        let run = await package(clip, into: folder)
        let outputs = try run.outputs.get()
        let hls = folder.appendingPathComponent("hls")
        #expect(outputs["master"]?.stringValue == hls.appendingPathComponent("master.m3u8").path)
        #expect(outputs["renditions"]?.arrayValue?.count == 4)

        let master = try String(contentsOf: hls.appendingPathComponent("master.m3u8"), encoding: .utf8)
        let media = master.split(separator: "\n").first { $0.hasPrefix("#EXT-X-MEDIA:") }.map(String.init)
        let audio = try #require(media.map(attributes))
        #expect(audio["TYPE"] == "AUDIO" && audio["URI"] == "audio/index.m3u8")
        let found = variants(master)
        #expect(found.map(\.playlist) == ["180p/index.m3u8", "144p/index.m3u8", "90p/index.m3u8"])

        let audioStream = try #require(
            try await FFprobe.of(hls.appendingPathComponent("audio/index.m3u8").path).stream("audio"))
        var starts: [[Double]] = []
        for variant in found {
            let playlist = hls.appendingPathComponent(variant.playlist)
            let probe = try await FFprobe.of(playlist.path)
            let video = try #require(probe.stream("video"))
            #expect(abs(probe.duration - 4) < 0.1, "\(variant.playlist): \(probe.duration) s")
            // x264's B-frames do not delay the picture against the audio.
            #expect(video["start_time"]?.stringValue == "0.000000", "\(variant.playlist) starts late")
            #expect(
                variant.attributes["RESOLUTION"] == "\(video["width"]?.intValue ?? 0)x\(video["height"]?.intValue ?? 0)"
            )
            #expect(variant.attributes["FRAME-RATE"] == "30.000")
            let bandwidth = Int(variant.attributes["BANDWIDTH"] ?? "") ?? 0
            let average = Int(variant.attributes["AVERAGE-BANDWIDTH"] ?? "") ?? 0
            #expect(average > 0 && bandwidth >= average)
            let codecs = (variant.attributes["CODECS"] ?? "").split(separator: ",").map(String.init)
            #expect(codecs.count == 2)
            let videoCodecs = try #require(expectedCodecs(video))
            #expect(codecs.first?.hasPrefix(videoCodecs.prefix) == true, "\(codecs) for \(video)")
            #expect(codecs.first?.hasSuffix(videoCodecs.suffix) == true, "\(codecs) for \(video)")
            #expect(codecs.last == expectedCodecs(audioStream)?.prefix)
            // Segments start where the keyframes are.
            let text = try String(contentsOf: playlist, encoding: .utf8)
            let durations = MediaPlaylist(text).segments.map(\.duration)
            let segmentStarts = durations.indices.map { durations[..<$0].reduce(0, +) }
            let keys = await keyframes(playlist)
            #expect(segmentStarts.allSatisfy { start in keys.contains { abs($0 - start) < 0.001 } })
            starts.append(keys)
        }
        #expect(starts.first?.count == 4)
        #expect(starts.allSatisfy { $0 == starts.first }, "keyframes differ between renditions: \(starts)")

        // The master playlist as a player reads it: three programs, each a video rendition with the audio.
        let whole = try await FFprobe.of(hls.appendingPathComponent("master.m3u8").path)
        #expect(whole.streams.filter { $0["codec_type"] == "video" }.count == 3)
        #expect(whole.streams.contains { $0["codec_type"] == "audio" })
        // The DASH manifest over the same segments.
        let dash = try await FFprobe.of(hls.appendingPathComponent("manifest.mpd").path)
        #expect(abs(dash.duration - 4) < 0.1)
        #expect(dash.streams.filter { $0["codec_type"] == "video" }.count == 3)
    }

    /// A rendition whose file changed is made again; the others are verified and kept as they are.
    @Test func resumeMakesAgainOnlyTheRenditionWhoseFilesChanged() async throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let clip = folder.appendingPathComponent("clip.mp4")
        try await makeClip(seconds: 2, size: "320x180", at: clip)
        let first = await package(clip, into: folder)
        _ = try first.outputs.get()
        let hls = folder.appendingPathComponent("hls")
        func modified(_ path: String) throws -> Date? {
            try FileManager.default.attributesOfItem(atPath: hls.appendingPathComponent(path).path)[.modificationDate]
                as? Date
        }
        let kept = try modified("180p/seg_00000.m4s")
        let damaged = hls.appendingPathComponent("144p/seg_00001.m4s")
        try Data("damaged".utf8).write(to: damaged)

        let second = await package(clip, into: folder, checkpoint: first.checkpoint)
        _ = try second.outputs.get()
        #expect(try modified("180p/seg_00000.m4s") == kept)
        #expect((MediaOutput.size(of: damaged) ?? 0) > 100)
        let keys = await keyframes(hls.appendingPathComponent("144p/index.m3u8"))
        #expect(keys.count == 2)
    }

    /// An AV1 rendition (SVT-AV1) beside an H.264 one: its CODECS are read from its stream's `av1C`, and every
    /// segment starts with a keyframe, at the same times as the H.264 rendition's.
    @Test func av1RenditionsCarryCodecsOfTheirStreams() async throws {
        try await packageBesideH264("av1") { _, rendition, video, codecs in
            guard rendition == "180p" else { return }
            #expect(video["codec_name"]?.stringValue == "av1")
            #expect(video["profile"]?.stringValue == "Main")
            // ffprobe gives AV1's seq_level_idx as the level.
            let level = try #require(video["level"]?.intValue)
            #expect(codecs.first == String(format: "av01.0.%02dM.08", level), "\(codecs) for level \(level)")
        }
    }

    /// Beside another codec, AV1 renditions (a keyframe every segment's worth of frames, rounded) are refused when a
    /// segment is not a whole number of frames: their segments would drift from the others'. AV1 alone is fine.
    @Test func av1BesideAnotherCodecNeedsAWholeNumberOfFramesPerSegment() async throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let clip = folder.appendingPathComponent("clip.mp4")
        try await makeClip(seconds: 1, size: "160x90", rate: "30000/1001", at: clip)
        let run = await StageHarness(stateFolder: folder.appendingPathComponent("state")).run(
            PackageStage.self,
            options: [
                "file": .string(clip.path), "output": .string(folder.appendingPathComponent("hls").path),
                "renditions": [["height": 90, "bitrate": "100k"], ["height": 72, "bitrate": "80k", "codec": "h264"]],
                "codec": "av1", "segmentSeconds": "2s",
            ])
        guard case .failure(let error) = run.outputs else {
            Issue.record("a mixed AV1 ladder at 29.97 fps was not refused")
            return
        }
        #expect("\(error)".contains("at 29.970 fps a 2.0 s segment is 59.940 frames"), "\(error)")
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("hls/master.m3u8").path))

        let rung = StreamingLadder.Rung(height: 90, bitRate: 100_000)
        #expect(throws: Never.self) {
            try PackageStage.checkAV1Alignment(
                [.video(rung, .av1), .video(rung, .av1)], segmentSeconds: 2, frameRate: 30000 / 1001)
            try PackageStage.checkAV1Alignment(
                [.video(rung, .av1), .video(rung, .h264)], segmentSeconds: 2, frameRate: 30)
        }
    }

    /// `codec: hevc`: libx265 renditions tagged hvc1, their CODECS read from the stream, keyframes still aligned
    /// at the segments' starts; a rendition may keep H.264.
    @Test func hevcRenditionsCarryCodecsOfTheirStreams() async throws {
        try await packageBesideH264("hevc") { hls, rendition, video, codecs in
            guard rendition == "180p" else { return }
            #expect(video["codec_name"]?.stringValue == "hevc")
            #expect(video["codec_tag_string"]?.stringValue == "hvc1")
            // Main is profile 1; ffprobe gives the level as stored (30 × the level).
            #expect(video["profile"]?.stringValue == "Main")
            let level = try #require(video["level"]?.intValue)
            #expect(codecs.first?.hasPrefix("hvc1.1.6.L\(level).") == true, "\(codecs) for level \(level)")
            // Every segment starts with an IDR picture (NAL type 19 or 20), not an open-GOP CRA (21) whose
            // leading pictures would refer to the segment before.
            for segment in ["seg_00000.m4s", "seg_00001.m4s"] {
                let bytes = [UInt8](try Data(contentsOf: hls.appendingPathComponent("180p/\(segment)")))
                #expect([19, 20].contains(firstPictureNALType(bytes) ?? -1), "\(segment)")
            }
        }
    }

    /// Packages a 2 s clip into a 180p rendition of `codec` and a 90p H.264 one, in 1 s segments; checks that the
    /// master playlist lists both, that the H.264 one is H.264, and that every segment of both starts with a
    /// keyframe, at the same times in both; `check` sees each rendition's video stream and CODECS.
    private func packageBesideH264(
        _ codec: String,
        check: (_ hls: URL, _ rendition: String, _ video: JSONValue, _ codecs: [String]) async throws -> Void
    ) async throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let clip = folder.appendingPathComponent("clip.mp4")
        try await makeClip(seconds: 2, size: "320x180", at: clip)
        let run = await StageHarness(stateFolder: folder.appendingPathComponent("state")).run(
            PackageStage.self,
            options: [
                "file": .string(clip.path), "output": .string(folder.appendingPathComponent("hls").path),
                "renditions": [
                    ["height": 180, "bitrate": "200k"], ["height": 90, "bitrate": "100k", "codec": "h264"],
                ],
                "codec": .string(codec), "segmentSeconds": "1s", "preset": "ultrafast", "threads": 2,
            ])
        _ = try run.outputs.get()
        let hls = folder.appendingPathComponent("hls")
        let master = try String(contentsOf: hls.appendingPathComponent("master.m3u8"), encoding: .utf8)
        let found = variants(master)
        #expect(found.map(\.playlist) == ["180p/index.m3u8", "90p/index.m3u8"])
        var starts: [[Double]] = []
        for variant in found {
            let playlist = hls.appendingPathComponent(variant.playlist)
            let video = try #require(try await FFprobe.of(playlist.path).stream("video"))
            let codecs = (variant.attributes["CODECS"] ?? "").split(separator: ",").map(String.init)
            let rendition = String(variant.playlist.prefix { $0 != "/" })
            if rendition == "90p" {
                #expect(video["codec_name"]?.stringValue == "h264")
                #expect(codecs.first?.hasPrefix("avc1.") == true, "\(codecs)")
            }
            try await check(hls, rendition, video, codecs)
            let text = try String(contentsOf: playlist, encoding: .utf8)
            let durations = MediaPlaylist(text).segments.map(\.duration)
            let segmentStarts = durations.indices.map { durations[..<$0].reduce(0, +) }
            let keys = await keyframes(playlist)
            #expect(segmentStarts.allSatisfy { start in keys.contains { abs($0 - start) < 0.001 } }, "\(keys)")
            starts.append(segmentStarts)
        }
        #expect(starts.first?.count == 2)
        #expect(starts.allSatisfy { $0 == starts.first }, "segments differ between renditions: \(starts)")
    }

    /// The NAL unit type of the first picture (a type below 32: not a parameter set or SEI) of the first sample in a
    /// segment's `mdat`, whose NAL units have 4-byte length prefixes.
    private func firstPictureNALType(_ bytes: [UInt8]) -> Int? {
        let tag = Array("mdat".utf8)
        guard let at = (0..<max(bytes.count - 3, 0)).first(where: { bytes[$0..<$0 + 4].elementsEqual(tag) })
        else { return nil }
        var offset = at + 4
        while offset + 5 <= bytes.count {
            let length = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            let type = Int(bytes[offset + 4] >> 1) & 0x3F
            if type < 32 { return type }
            offset += 4 + length
        }
        return nil
    }

    @Test func aLadderNeverUpscales() throws {
        let standard = try #require(StreamingLadder.named("standard"))
        #expect(standard.rungs(forSourceHeight: 720).map(\.name) == ["720p", "480p", "360p"])
        #expect(standard.rungs(forSourceHeight: 1080).map(\.name) == ["1080p", "720p", "480p", "360p"])
        // Every rung taller than the source: the smallest alone (the encoder keeps the source's size).
        #expect(standard.rungs(forSourceHeight: 240).map(\.name) == ["360p"])
        #expect(standard.rungs.first.map { ($0.width, $0.height) } ?? (0, 0) == (1920, 1080))
    }

    @Test func codecsStringsComeFromTheSampleEntries() {
        // avcC: version 1, profile 100 (High), compatibility 0, level 31.
        let avc = Data([0, 0, 0, 16] + Array("avcC".utf8) + [1, 0x64, 0x00, 0x1F, 0xFF, 0xE1])
        #expect(CodecString.of(initSegment: avc) == "avc1.64001f")
        // esds: ES_Descriptor(3) → DecoderConfigDescriptor(4, object type 0x40) → DecoderSpecificInfo(5): AAC-LC
        // (object type 2) and, in a second file, HE-AAC (5).
        for (config, type) in [([UInt8]([0x12, 0x10]), 2), ([0x2B, 0x92], 5)] {
            let specific: [UInt8] = [0x05, 0x02] + config
            let decoder: [UInt8] = [0x04, UInt8(13 + specific.count), 0x40, 0x15] + [UInt8](repeating: 0, count: 11)
            let es: [UInt8] = [0x03, UInt8(3 + decoder.count + specific.count), 0, 1, 0]
            let esds = Data([0, 0, 0, 0] + Array("esds".utf8) + [0, 0, 0, 0] + es + decoder + specific)
            #expect(CodecString.of(initSegment: esds) == "mp4a.40.\(type)")
        }
        // hvcC: version 1, Main (space 0, tier Main, profile 1), compatibility flags 1 and 2, constraint byte 0xB0
        // (progressive, frame-only, ...), level 93 (3.1): Apple's example.
        let hvcC: [UInt8] = [1, 0x01, 0x60, 0, 0, 0, 0xB0, 0, 0, 0, 0, 0, 93]
        #expect(CodecString.of(initSegment: Data([0, 0, 0, 0] + Array("hvcC".utf8) + hvcC)) == "hvc1.1.6.L93.B0")
        // av1C: marker and version 0x81; profile 0 (Main), level 8 (4.0); then the tier and bit depth flags: main
        // tier, 8 bits; and in a second file high tier, 10 bits (the spec's example av01.0.08H.10 … less the rest).
        for (flags, codecs) in [(UInt8(0x0C), "av01.0.08M.08"), (0xCC, "av01.0.08H.10")] {
            let av1C: [UInt8] = [0x81, 0x08, flags, 0]
            #expect(CodecString.of(initSegment: Data([0, 0, 0, 0] + Array("av1C".utf8) + av1C)) == codecs)
        }
        #expect(CodecString.of(initSegment: Data("nothing here".utf8)) == nil)
    }

    @Test func dashFrameRatesAreIntegersOrFractions() {
        #expect(PackageManifests.dashFrameRate(25) == "25")
        #expect(PackageManifests.dashFrameRate(30000.0 / 1001) == "30000/1001")
        #expect(PackageManifests.dashFrameRate(12.5) == "12500/1000")
    }
}
