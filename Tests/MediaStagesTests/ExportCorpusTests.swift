import Foundation
import MediaStages
import StageKit
import TestSupport
import Testing

/// Every oddity of `scripts/make-corpus.sh` through `mode: auto` with every profile: the output is what the profile
/// promises, as ffprobe reads it, and decodes cleanly; what is not a video is a clear error.
@Suite struct ExportCorpusTests {
    /// The corpus, made once for the suite.
    static let corpus = Task { try await Corpus.make() }

    let folder = temporaryFolder()

    @Test(arguments: ExportProfile.all.map(\.name))
    func everyOddityExportsToWhatTheProfilePromises(profile name: String) async throws {
        let corpus = try await Self.corpus.value
        let profile = try #require(ExportProfile.named(name))
        let harness = StageHarness(stateFolder: folder.appendingPathComponent("state-\(name)"))
        // Two at a time, one thread each: the machine's two cores.
        try await withThrowingTaskGroup(of: Void.self) { group in
            var entries = corpus.entries.makeIterator()
            func next() {
                guard let entry = entries.next() else { return }
                group.addTask {
                    try await export(entry, in: corpus, profile: profile, harness: harness)
                }
            }
            next()
            next()
            while try await group.next() != nil { next() }
        }
    }

    /// The probe's duration is ffprobe's, but where a file that starts late states one that counts its start
    /// (FFmpeg's Matroska muxer): only there is the end read from the last packets, and found earlier.
    @Test func probedDurationsAreFFprobesButWhereTheyCountTheStart() async throws {
        let corpus = try await Self.corpus.value
        for entry in corpus.entries {
            guard let info = try? await MediaToolkit.probe(corpus.folder.appendingPathComponent(entry.file).path)
            else { continue }  // not media: the export test covers its error
            let stated = entry.source.duration
            let start = Double(entry.source.json["format"]?["start_time"]?.stringValue ?? "") ?? 0
            let matroska = entry.source.json["format"]?["format_name"]?.stringValue?.hasPrefix("matroska") == true
            #expect(
                abs(info.duration - stated) < 0.001 || (matroska && start > 0 && info.duration < stated),
                "\(entry.file): probed \(info.duration) s, ffprobe \(stated) s from \(start) s")
        }
    }

    /// The messages `mode: auto` gives, for the cases of the issue and a few more.
    @Test func autoModeNamesTheFirstPropertyThatDoesNotFit() async throws {
        let corpus = try await Self.corpus.value
        let web = try #require(ExportProfile.named("web-720p"))
        let expected: [(String, String?)] = [
            ("h264-444.mp4", "its video is 4:4:4, the profile needs 4:2:0"),
            ("h264-high10.mp4", "its video is 10-bit, the profile needs 8-bit"),
            ("h264-422.mkv", "its video is 4:2:2, the profile needs 4:2:0"),
            ("h264-full-range.mp4", "its video uses the full range, the profile needs the limited (tv) range"),
            ("h264-level-51.mp4", "its video's level is 5.1, the profile needs at most 3.2"),
            ("h264-interlaced.ts", "its video is interlaced, the profile needs progressive"),
            ("anamorphic.mkv", "its pixels are not square (16:11), the profile needs square pixels"),
            ("fps-120.mp4", "its frame rate is 120.00, the profile needs at most 60.0"),
            ("hevc.mp4", "its video is hevc, the profile needs h264"),
            ("mono-8k.mp4", "its audio is at 8000 Hz, the profile needs 44100 or 48000 Hz"),
            ("aac-main.mp4", "its audio is AAC Main, the profile needs AAC LC"),
            ("surround-71.mkv", "it has 8 audio channels, the profile needs at most 2"),
            ("two-audio.mp4", "it has 2 audio tracks, the profile keeps one"),
            ("audio-late.mkv", "its audio starts 0.28 s after its video, the profile needs both to start together"),
            ("fits-web.mp4", nil),
            ("subtitles.mp4", nil),
            ("subtitles-pgs.mkv", nil),
        ]
        for (file, message) in expected {
            let info = try await MediaToolkit.probe(corpus.folder.appendingPathComponent(file).path)
            #expect(web.rules.mismatch(info, settings: web.settings) == message, "\(file)")
        }
        let hevc = try await MediaToolkit.probe(corpus.folder.appendingPathComponent("hevc.mp4").path)
        let archive = try #require(ExportProfile.named("archive-hevc"))
        #expect(archive.rules.mismatch(hevc, settings: archive.settings) == nil)
        // HDR is named before the bit depth: remuxing it would give an HDR file where SDR is promised.
        for (file, transfer) in [("hevc-pq.mp4", "PQ"), ("hevc-hlg.mp4", "HLG")] {
            let info = try await MediaToolkit.probe(corpus.folder.appendingPathComponent(file).path)
            #expect(
                archive.rules.mismatch(info, settings: archive.settings)
                    == "its video is HDR (\(transfer)), the profile needs SDR", "\(file)")
        }
    }

    /// Exports one corpus file with `profile` (x264's fastest preset, or its match: presets change speed, not
    /// what a profile promises) and checks the result.
    private func export(
        _ entry: Corpus.Entry, in corpus: Corpus, profile: ExportProfile, harness: StageHarness
    ) async throws {
        let input = corpus.folder.appendingPathComponent(entry.file)
        let output = folder.appendingPathComponent("\(profile.name)/\(entry.name).mp4")
        let run = await harness.run(
            TranscodeStage.self,
            options: [
                "file": .string(input.path), "output": .string(output.path), "mode": "auto",
                "profile": .string(profile.name), "video": ["preset": "ultrafast"], "threads": 1,
            ])
        let source = entry.source
        guard source.isVideo else {
            guard case .failure(let error) = run.outputs else {
                Issue.record("\(entry.name) (\(entry.about)) is not a video, yet \(profile.name) exported it")
                return
            }
            let message = "\(error)"
            #expect(message.contains("no video") || message.contains("not a video"), "\(entry.name): \(message)")
            #expect(!FileManager.default.fileExists(atPath: output.path))
            return
        }
        let outputs: JSONValue
        do {
            outputs = try run.outputs.get()
        } catch {
            Issue.record("\(entry.name) (\(entry.about)) with \(profile.name): \(error)")
            return
        }
        let result = try await Probe.of(output.path)
        let what = "\(entry.name) (\(entry.about)) with \(profile.name), \(outputs["mode"]?.stringValue ?? "?")"
        let rules = profile.rules
        let settings = profile.settings

        let video = try #require(result.stream("video"), "\(what): no video")
        #expect(video["codec_name"]?.stringValue == rules.codec.rawValue, "\(what)")
        #expect(
            rules.profiles.contains(video["profile"]?.stringValue ?? ""),
            "\(what): \(String(describing: video["profile"]))")
        #expect(video["pix_fmt"] == "yuv420p", "\(what): \(String(describing: video["pix_fmt"]))")
        #expect(video["color_range"]?.stringValue != "pc", "\(what): full range")
        let sourceVideo = source.stream("video")
        if sourceVideo?["color_range"] == "pc" || sourceVideo?["pix_fmt"]?.stringValue?.hasPrefix("yuvj") == true {
            // Converted, not only tagged: the source's black (0) becomes 16. Left in full range, 2.6 % of the
            // picture lies below 10; converted, none does but an encoder's ringing at sharp edges (11 at worst).
            let frame = await runTool(
                "/usr/bin/ffmpeg",
                ["-nostdin", "-v", "error", "-i", output.path, "-frames:v", "1", "-f", "rawvideo", "-"])
            let luma = frame.stdout.prefix((video["width"]?.intValue ?? 0) * (video["height"]?.intValue ?? 0))
            let belowBlack = Double(luma.filter { $0 < 10 }.count) / Double(max(luma.count, 1))
            #expect(!luma.isEmpty && belowBlack < 0.005, "\(what): \(belowBlack * 100) % of the luma below 10")
        }
        #expect(["progressive", nil].contains(video["field_order"]?.stringValue), "\(what): interlaced")
        if ["smpte2084", "arib-std-b67"].contains(source.stream("video")?["color_transfer"]?.stringValue) {
            for tag in ["color_transfer", "color_primaries", "color_space"] {
                #expect(video[tag] == "bt709", "\(what): HDR tone-mapped, yet \(tag) \(String(describing: video[tag]))")
            }
        }
        if rules.codec == .hevc { #expect(video["codec_tag_string"] == "hvc1", "\(what)") }
        if let maxLevel = rules.maxLevel {
            #expect(
                (video["level"]?.intValue ?? 99) <= maxLevel, "\(what): level \(String(describing: video["level"]))")
        }
        let width = video["width"]?.intValue ?? 0
        let height = video["height"]?.intValue ?? 0
        #expect(width % 2 == 0 && height % 2 == 0 && width > 0 && height > 0, "\(what): \(width)×\(height)")
        let (shownWidth, shownHeight) = result.displaySize
        #expect(shownWidth <= settings.maxWidth ?? .max && shownHeight <= settings.maxHeight ?? .max, "\(what)")
        // The display aspect ratio is the source's, within the rounding to even sizes.
        let aspect = Double(shownWidth) / Double(max(shownHeight, 1))
        #expect(
            abs(aspect / source.displayAspect - 1) < 0.03, "\(what): aspect \(aspect), source \(source.displayAspect)")
        if let fps = settings.maxFPS {
            let frames = Double(video["nb_frames"]?.stringValue ?? "") ?? 0
            let seconds = Double(video["duration"]?.stringValue ?? "") ?? 0
            #expect(seconds <= 0.1 || frames / seconds <= fps + 1, "\(what): \(frames) frames in \(seconds) s")
        }
        #expect(abs(result.duration - source.duration) <= 0.15, "\(what): \(result.duration) s of \(source.duration)")

        let audio = result.stream("audio")
        #expect((audio != nil) == source.hasAudio, "\(what): audio \(audio != nil), source \(source.hasAudio)")
        if let audio {
            #expect(audio["codec_name"] == "aac" && audio["profile"] == "LC", "\(what)")
            #expect(rules.sampleRates.contains(Int(audio["sample_rate"]?.stringValue ?? "") ?? 0), "\(what)")
            #expect((audio["channels"]?.intValue ?? 9) <= rules.maxChannels, "\(what)")
        }
        // Besides them a timecode, which MP4 can hold, and every text subtitle as mov_text: bitmap subtitles, data,
        // cover pictures and more tracks go.
        let others = result.streams.filter { ![video, audio].contains($0) }
        let subtitles = others.filter { $0["codec_type"] == "subtitle" }
        #expect(subtitles.allSatisfy { $0["codec_name"] == "mov_text" }, "\(what): \(subtitles)")
        #expect(subtitles.count == source.textSubtitles, "\(what): \(subtitles.count) subtitle track(s) kept")
        #expect(
            others.allSatisfy { $0["codec_tag_string"] == "tmcd" || $0["codec_type"] == "subtitle" },
            "\(what): extra streams kept: \(others)")
        for stream in result.streams {
            let start = Double(stream["start_time"]?.stringValue ?? "") ?? 0
            #expect(
                abs(start) <= rules.startTolerance,
                "\(what): \(String(describing: stream["codec_type"])) starts at \(start)")
        }
        let decode = await runTool(
            "/usr/bin/ffmpeg",
            [
                "-nostdin", "-v", "error", "-i", output.path, "-map", "0:v", "-map", "0:a?", "-fps_mode", "passthrough",
                "-enc_time_base",
                "-1", "-f", "null", "-",
            ])
        #expect(decode.status == 0 && decode.stderr.isEmpty, "\(what): decoding says \(decode.stderr)")
    }
}

/// The files `scripts/make-corpus.sh` makes, with what each is.
struct Corpus: Sendable {
    struct Entry: Sendable {
        var name: String
        var file: String
        var about: String
        /// ffprobe's view of the file.
        var source: Probe
    }

    var folder: URL
    var entries: [Entry]

    static func make() async throws -> Corpus {
        let folder = temporaryFolder().appendingPathComponent("corpus")
        let script = samples.deletingLastPathComponent().appendingPathComponent("scripts/make-corpus.sh")
        let made = await runTool("/bin/bash", [script.path, folder.path])
        guard made.status == 0 else { throw CorpusFailure(message: "make-corpus.sh: \(made.stderr)") }
        let table = try String(contentsOf: folder.appendingPathComponent("corpus.tsv"), encoding: .utf8)
        var entries: [Entry] = []
        for line in table.split(separator: "\n") {
            let fields = line.split(separator: "\t").map(String.init)
            guard fields.count == 3 else { continue }
            let source = try await Probe.of(folder.appendingPathComponent(fields[1]).path)
            entries.append(Entry(name: fields[0], file: fields[1], about: fields[2], source: source))
        }
        #expect(entries.count >= 25, "the corpus has \(entries.count) files")
        return Corpus(folder: folder, entries: entries)
    }
}

struct CorpusFailure: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

/// ffprobe's streams and format of a file, without decoding it.
struct Probe: Sendable {
    let json: JSONValue

    static func of(_ path: String) async throws -> Probe {
        let result = await runTool(
            "/usr/bin/ffprobe", ["-v", "error", "-print_format", "json", "-show_format", "-show_streams", path])
        return Probe(json: (try? JSONValue(parsing: result.stdout)) ?? [:])
    }

    var streams: [JSONValue] { json["streams"]?.arrayValue ?? [] }

    func stream(_ type: String) -> JSONValue? {
        streams.first { $0["codec_type"] == .string(type) && $0["disposition"]?["attached_pic"]?.intValue != 1 }
    }

    var duration: Double { Double(json["format"]?["duration"]?.stringValue ?? "") ?? 0 }

    /// Whether it is a video: a video stream that is not a cover picture, in a container that is not an image's.
    var isVideo: Bool {
        let format = json["format"]?["format_name"]?.stringValue ?? ""
        return stream("video") != nil && format != "image2" && !format.hasSuffix("_pipe")
    }

    var hasAudio: Bool { stream("audio") != nil }

    /// Subtitle tracks with text, the ones an export keeps.
    var textSubtitles: Int {
        let text: Set<String> = ["subrip", "ass", "ssa", "webvtt", "mov_text", "text"]
        return streams.filter { $0["codec_type"] == "subtitle" && text.contains($0["codec_name"]?.stringValue ?? "") }
            .count
    }

    /// Degrees the display matrix turns the picture.
    var rotation: Int {
        stream("video")?["side_data_list"]?.arrayValue?.compactMap { $0["rotation"]?.intValue }.first ?? 0
    }

    /// Displayed size: the stored size turned by the display matrix's rotation.
    var displaySize: (Int, Int) {
        guard let video = stream("video"), let width = video["width"]?.intValue, let height = video["height"]?.intValue
        else { return (0, 0) }
        return abs(rotation) % 180 == 90 ? (height, width) : (width, height)
    }

    /// Displayed width over height, with the pixels' aspect ratio.
    var displayAspect: Double {
        guard let video = stream("video"), let width = video["width"]?.intValue, let height = video["height"]?.intValue,
            height > 0
        else { return 0 }
        let parts = (video["sample_aspect_ratio"]?.stringValue ?? "1:1").split(separator: ":").compactMap { Double($0) }
        let pixel = parts.count == 2 && parts[0] > 0 && parts[1] > 0 ? parts[0] / parts[1] : 1
        let stored = Double(width) * pixel / Double(height)
        return abs(rotation) % 180 == 90 ? 1 / stored : stored
    }
}
