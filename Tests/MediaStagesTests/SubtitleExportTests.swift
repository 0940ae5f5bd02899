import Foundation
import StageKit
import TestSupport
import Testing

@testable import MediaStages

/// Text subtitles survive an export as mov_text tracks, cue for cue; bitmap ones are dropped with a note.
@Suite struct SubtitleExportTests {
    let folder = temporaryFolder()

    /// A cue: shown from `start` to `end` (milliseconds).
    struct Cue {
        var start: Int
        var end: Int
        var text: String
    }

    static let english = [
        Cue(start: 100, end: 900, text: "hello"), Cue(start: 1200, end: 1800, text: "second <i>line</i>"),
    ]
    static let german = [Cue(start: 300, end: 1000, text: "hallo")]

    /// The cues as SubRip, as ffmpeg's muxer writes them, `shift` milliseconds later.
    static func subRip(_ cues: [Cue], shift: Int = 0) -> String {
        func time(_ ms: Int) -> String {
            String(format: "%02d:%02d:%02d,%03d", ms / 3_600_000, ms / 60_000 % 60, ms / 1000 % 60, ms % 1000)
        }
        return cues.enumerated().map { index, cue in
            "\(index + 1)\n\(time(cue.start + shift)) --> \(time(cue.end + shift))\n\(cue.text)\n\n"
        }.joined()
    }

    /// A 2 s Matroska file whose timestamps start at `offset` s, with two SubRip tracks: English (default, titled)
    /// and German (forced).
    private func source(offset: Int) async throws -> URL {
        let english = folder.appendingPathComponent("en.srt")
        let german = folder.appendingPathComponent("de.srt")
        try Data(Self.subRip(Self.english).utf8).write(to: english)
        try Data(Self.subRip(Self.german).utf8).write(to: german)
        let file = folder.appendingPathComponent("two-languages.mkv")
        let made = await runTool(
            "/usr/bin/ffmpeg",
            [
                "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=160x96:rate=24:duration=2",
                "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=2", "-i", english.path, "-i",
                german.path, "-map", "0", "-map", "1", "-map", "2", "-map", "3", "-c:v", "libx264", "-preset",
                "ultrafast", "-c:a", "aac", "-c:s", "srt", "-metadata:s:s:0", "language=eng", "-metadata:s:s:0",
                "title=English", "-metadata:s:s:1", "language=ger", "-metadata:s:s:1", "title=Deutsch",
                "-disposition:s:0", "default", "-disposition:s:1", "forced", "-output_ts_offset", "\(offset)",
                file.path,
            ])
        try #require(made.status == 0, "\(made.stderr)")
        return file
    }

    /// A transcode, a remux, and a segmented transcode (its audio pass carries the subtitles into the join).
    @Test(arguments: ["transcode", "remux", "segmented"])
    func textSubtitlesBecomeMovTextTracksWithTheirCues(mode: String) async throws {
        let input = try await source(offset: 5)
        // ffmpeg's Matroska muxer writes a duration that counts the offset (7 s for 2 s from 5 s); the probe reads
        // the real one from the last packets, or the segmented export would plan segments past the end.
        let duration = try await MediaToolkit.probe(input.path).duration
        #expect(abs(duration - 2) < 0.1, "probed \(duration) s")
        let output = folder.appendingPathComponent("\(mode).mp4")
        let run = await StageHarness(stateFolder: folder.appendingPathComponent("state")).run(
            TranscodeStage.self,
            options: [
                "file": .string(input.path), "output": .string(output.path),
                "mode": .string(mode == "remux" ? "remux" : "transcode"), "video": ["preset": "ultrafast"],
                "threads": 1, "segmentSeconds": mode == "segmented" ? 1 : 0,
            ])
        _ = try run.outputs.get()
        let result = try await Probe.of(output.path)
        let subtitles = result.streams.filter { $0["codec_type"] == "subtitle" }
        try #require(subtitles.count == 2, "\(result.streams)")
        for (stream, (language, title, isDefault, forced)) in zip(
            subtitles, [("eng", "English", 1, 0), ("ger", "Deutsch", 0, 1)])
        {
            #expect(stream["codec_name"] == "mov_text")
            #expect(stream["tags"]?["language"]?.stringValue == language)
            #expect(stream["tags"]?["handler_name"]?.stringValue == title)
            #expect(stream["disposition"]?["default"]?.intValue == isDefault, "\(language)")
            #expect(stream["disposition"]?["forced"]?.intValue == forced, "\(language)")
        }
        // The output's zero is the source's earliest timestamp: its audio's (with the AAC encoder's priming, a little
        // before its picture). The cues move with the picture.
        let probed = try await Probe.of(input.path)
        let earliest = try #require(Double(probed.json["format"]?["start_time"]?.stringValue ?? ""))
        let picture = try #require(
            Double(probed.streams.first { $0["codec_type"] == "video" }?["start_time"]?.stringValue ?? ""))
        let shift = Int(((picture - earliest) * 1000).rounded())
        #expect((0..<50).contains(shift), "the picture starts \(picture - earliest) s after the audio")
        for (index, cues) in [Self.english, Self.german].enumerated() {
            let read = await runTool(
                "/usr/bin/ffmpeg",
                ["-nostdin", "-v", "error", "-i", output.path, "-map", "0:s:\(index)", "-f", "srt", "-"])
            #expect(read.status == 0, "\(read.stderr)")
            #expect(read.text == Self.subRip(cues, shift: shift), "track \(index)")
        }
    }

    /// A Matroska clip of `seconds` (160x96, 24 fps; with a tone when `audio`) carrying the subtitle file `cues`
    /// in `codec` (srt or ass).
    private func clip(_ name: String, seconds: Int, cues: URL, codec: String, audio: Bool = false) async throws -> URL {
        let file = folder.appendingPathComponent("\(name).mkv")
        let tone = audio ? ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=\(seconds)"] : []
        let made = await runTool(
            "/usr/bin/ffmpeg",
            ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=160x96:rate=24:duration=\(seconds)"]
                + tone + ["-i", cues.path, "-map", "0", "-map", "1"] + (audio ? ["-map", "2", "-c:a", "aac"] : [])
                + ["-c:v", "libx264", "-preset", "ultrafast", "-c:s", codec, file.path])
        try #require(made.status == 0, "\(made.stderr)")
        return file
    }

    /// `input` exported to MP4 (`mode`: transcode or remux).
    private func export(_ input: URL, mode: String = "transcode") async throws -> URL {
        let output = folder.appendingPathComponent("\(input.deletingPathExtension().lastPathComponent)-\(mode).mp4")
        let run = await StageHarness(stateFolder: folder.appendingPathComponent("state-\(mode)")).run(
            TranscodeStage.self,
            options: [
                "file": .string(input.path), "output": .string(output.path), "mode": .string(mode),
                "video": ["preset": "ultrafast"], "threads": 1,
            ])
        _ = try run.outputs.get()
        return output
    }

    /// The first subtitle track of `file` as ffmpeg's SubRip writer writes it (a line within a cue ends with CR LF).
    private func subRip(of file: URL) async throws -> String {
        let read = await runTool(
            "/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-i", file.path, "-map", "0:s:0", "-f", "srt", "-"])
        try #require(read.status == 0, "\(read.stderr)")
        return read.text
    }

    /// Cues that overlap (a sign shown while dialogue comes and goes) are shown together, each on its own line, for
    /// as long as each lasts: MP4 text samples cannot overlap, so each stretch with the same cues is one sample.
    @Test(arguments: ["transcode", "remux"])
    func overlappingCuesAreShownTogether(mode: String) async throws {
        let cues = [
            Cue(start: 200, end: 1600, text: "sign"), Cue(start: 600, end: 1000, text: "dialogue"),
            Cue(start: 1200, end: 1800, text: "next"),
        ]
        let srt = folder.appendingPathComponent("overlapping.srt")
        try Data(Self.subRip(cues).utf8).write(to: srt)
        let input = try await clip("overlapping", seconds: 2, cues: srt, codec: "srt", audio: true)
        let read = try await subRip(of: try await export(input, mode: mode))
        let shown = [
            Cue(start: 200, end: 600, text: "sign"), Cue(start: 600, end: 1000, text: "sign\r\ndialogue"),
            Cue(start: 1000, end: 1200, text: "sign"), Cue(start: 1200, end: 1600, text: "sign\r\nnext"),
            Cue(start: 1600, end: 1800, text: "next"),
        ]
        // The output's zero is the audio's start, which the AAC encoder's priming puts before the picture's.
        let probed = try await Probe.of(input.path)
        let earliest = try #require(Double(probed.json["format"]?["start_time"]?.stringValue ?? ""))
        let picture = try #require(
            Double(probed.streams.first { $0["codec_type"] == "video" }?["start_time"]?.stringValue ?? ""))
        #expect(read == Self.subRip(shown, shift: Int(((picture - earliest) * 1000).rounded())), "\(read)")
    }

    /// A typeset ASS sign (the same text on two layers, one lasting longer, and a drawing) beside dialogue: the
    /// sign shows once, for as long as a layer lasts, the drawing's commands not at all.
    @Test func aLayeredSignShowsOnceBesideDialogue() async throws {
        let script = """
            [Script Info]
            ScriptType: v4.00+
            PlayResX: 160
            PlayResY: 96

            [V4+ Styles]
            Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, Bold, Italic, \
            Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, MarginL, \
            MarginR, MarginV, Encoding
            Style: Default,Arial,20,&H00FFFFFF,&H000000FF,&H00000000,&H00000000,0,0,0,0,100,100,0,0,1,1,0,2,10,10,10,1
            Style: Sign,Arial,16,&H00FFFFFF,&H000000FF,&H00000000,&H00000000,1,0,0,0,100,100,0,0,1,2,0,8,10,10,10,1

            [Events]
            Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text
            Dialogue: 0,0:00:00.20,0:00:01.60,Sign,,0,0,0,,{\\an8\\bord4}EXIT
            Dialogue: 1,0:00:00.20,0:00:01.80,Sign,,0,0,0,,{\\an8\\bord0}EXIT
            Dialogue: 2,0:00:00.20,0:00:01.60,Sign,,0,0,0,,{\\p1}m 0 0 l 100 0 100 20 0 20{\\p0}
            Dialogue: 0,0:00:00.60,0:00:01.00,Default,,0,0,0,,Which way out?

            """
        let ass = folder.appendingPathComponent("sign.ass")
        try Data(script.utf8).write(to: ass)
        let read = try await subRip(of: try await export(try await clip("sign", seconds: 2, cues: ass, codec: "ass")))
        let shown = [
            Cue(start: 200, end: 600, text: "EXIT"), Cue(start: 600, end: 1000, text: "EXIT\r\nWhich way out?"),
            Cue(start: 1000, end: 1800, text: "EXIT"),
        ]
        // (The SubRip writer shows the styles mov_text keeps, the sign's bold and both font sizes, as tags.)
        let text = read.replacingOccurrences(of: "<[^>]*>", with: "", options: .regularExpression)
        #expect(text == Self.subRip(shown), "\(read)")
    }

    /// A cue longer than mov_text holds (64 KiB of text) is left out with a warning; the export and the cue shown
    /// beside it go on.
    @Test func aCueMovTextCannotHoldIsLeftOut() async throws {
        let cues = [
            Cue(start: 200, end: 1600, text: "short"),
            Cue(start: 600, end: 1000, text: String(repeating: "long ", count: 14_000)),
        ]
        let srt = folder.appendingPathComponent("long.srt")
        try Data(Self.subRip(cues).utf8).write(to: srt)
        let read = try await subRip(of: try await export(try await clip("long", seconds: 2, cues: srt, codec: "srt")))
        #expect(
            read == Self.subRip([Cue(start: 200, end: 600, text: "short"), Cue(start: 600, end: 1600, text: "short")]))
    }

    /// A cue is written near its time in the file, not held until the next cue: here, with no cue after it, before
    /// the pictures of 2 s on (once the other streams are 2 s past its end it joins the muxer's queue, which holds
    /// up to 10 s of pictures for a track that has nothing; held to the end, it would come after 6 s of them).
    @Test func aCueIsWrittenNearItsTimeInTheFile() async throws {
        let srt = folder.appendingPathComponent("early.srt")
        try Data(Self.subRip([Cue(start: 200, end: 800, text: "early")]).utf8).write(to: srt)
        let output = try await export(try await clip("early", seconds: 16, cues: srt, codec: "srt"))
        let packets = await runTool(
            "/usr/bin/ffprobe",
            ["-v", "error", "-show_entries", "packet=codec_type,pts_time,pos", "-of", "csv=p=0", output.path])
        let rows = packets.text.split(separator: "\n").map { $0.split(separator: ",").map(String.init) }
        // (The muxer's first subtitle sample is the empty one before the cue, at 0.)
        let cue = try #require(
            rows.first { $0.first == "subtitle" && $0.count == 3 && abs((Double($0[1]) ?? 0) - 0.2) < 0.01 })
        let late = try #require(rows.first { $0.first == "video" && $0.count == 3 && (Double($0[1]) ?? 0) >= 2 })
        #expect((Int(cue[2]) ?? .max) < (Int(late[2]) ?? 0), "the cue at byte \(cue[2]), 2 s of video at \(late[2])")
    }

    /// The note names what an export leaves out: bitmap subtitles, and in a segmented export of a source without
    /// audio every subtitle.
    @Test func theNoteNamesTheSubtitlesLeftOut() async throws {
        let corpus = try await ExportCorpusTests.corpus.value
        let pgs = try await MediaToolkit.probe(corpus.folder.appendingPathComponent("subtitles-pgs.mkv").path)
        #expect(pgs.subtitleStreams == 1 && pgs.textSubtitleStreams == 0)
        #expect(
            Export.droppedStreams(pgs, segmented: false)
                == "1 bitmap subtitle track(s) (DVD, Blu-ray or DVB pictures, not text)")
        let srt = try await MediaToolkit.probe(corpus.folder.appendingPathComponent("subtitles.mkv").path)
        #expect(srt.textSubtitleStreams == 1)
        #expect(Export.droppedStreams(srt, segmented: false) == nil)
        #expect(srt.audio != nil && Export.droppedStreams(srt, segmented: true) == nil)
        var silent = srt
        silent.audio = nil
        #expect(
            Export.droppedStreams(silent, segmented: true)
                == "1 subtitle track(s) (a segmented export of a source without audio keeps none)")
    }
}
