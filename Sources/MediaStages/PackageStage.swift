import Foundation
import Logging
public import StageKit

#if canImport(Glibc)
    import Glibc
#endif

/// `ffmpeg.package`: an adaptive streaming package from one source: an HLS ladder of H.264 or HEVC renditions and one AAC
/// audio rendition in fragmented MP4 (CMAF) segments, with a master playlist and a DASH manifest over the same
/// segments.
///
/// The renditions are made in one pass over the source (one decode feeding every rendition's encoder, each on a
/// thread of its own), with a keyframe forced at every multiple of `segmentSeconds`, so the segments of all
/// renditions start at the same times and a player switches between them at any segment. Each rendition is then
/// packaged into a hidden folder, made durable, moved into place and checkpointed with the SHA-256 of every file;
/// after a crash the finished renditions are verified and kept, and the missing ones are made in a new pass. The
/// manifests are written last.
public struct PackageStage: Stage {
    /// The options of `ffmpeg.package`.
    public struct Options: StageOptions {
        /// One video rendition of an explicit list.
        public struct Rendition: NestedOptions {
            /// Lines of the rendition's picture.
            @Option(
                "Lines: the picture fits a 16:9 box this tall, keeping its aspect ratio.", minimum: 16, maximum: 4320)
            public var height: Int
            /// Average video bits per second.
            @Option("Average video bits per second.", minimum: 1000) public var bitrate: BitRate
            /// The rendition's name and folder (default: <height>p).
            @Option("The rendition's name and folder (default: <height>p).") public var name: String?
            /// The rendition's video codec instead of the package's.
            @Option("The rendition's video codec: h264, hevc or av1 (default: the package's codec).")
            public var codec: VideoCodec?

            public init() {}
        }

        /// The media file (default: the input file).
        @Option("The media file (default: the input file).") public var file: String?
        /// The package's folder (default: <stem>-hls in the stage's scratch folder).
        @Option("The package's folder (default: <stem>-hls in the stage's scratch folder).")
        public var output: String?
        /// A named ladder.
        @Option(
            "A named ladder: standard (1080p 5 Mb/s, 720p 2.8 Mb/s, 480p 1.4 Mb/s, 360p 800 kb/s) or compact (720p 2 Mb/s, 480p 1 Mb/s, 360p 600 kb/s, 240p 300 kb/s); rungs taller than the source are left out."
        )
        public var ladder = LadderName.standard
        /// Explicit video renditions instead of the named ladder.
        @Option(
            "Video renditions instead of the named ladder: [{height, bitrate, name, codec}], never taller than the source.",
            minimumCount: 1)
        public var renditions: [Rendition]?
        /// Seconds per segment; a keyframe is forced at every multiple in every rendition.
        @Option(
            "Seconds per segment: a keyframe is forced at every multiple, in every rendition.", minimum: 0.5,
            maximum: 60)
        public var segmentSeconds = TimeSpan(seconds: 6)
        /// The video renditions' codec.
        @Option(
            "Video codec of the renditions: h264 (libx264), hevc (libx265, tagged hvc1, forced keyframes are IDR frames) or av1 (SVT-AV1, a keyframe every segmentSeconds of frames)."
        )
        public var codec = VideoCodec.h264
        /// x264's speed preset.
        @Option("x264's speed preset (libx265 takes the same names).") public var preset = EncoderPreset.veryfast
        /// Bits per second of the audio rendition.
        @Option("Bits per second of the AAC audio rendition, stereo at most (default: 128k).", minimum: 1000)
        public var audioBitrate: BitRate?
        /// Also write a DASH manifest over the same segments.
        @Option("Also write a DASH manifest (manifest.mpd) over the same segments.") public var dash = true
        /// Decoder and encoder threads (0: every core).
        @Option("Decoder and encoder threads (0: every core).", minimum: 0) public var threads = 0
        /// Create the output folder if it is missing.
        @Option("Create the output folder if it is missing.") public var createFolder = true

        public init() {}
    }

    /// The named ladders (``StreamingLadder/all``).
    public enum LadderName: String, OptionChoice {
        /// 1080p, 720p, 480p, 360p.
        case standard
        /// 720p, 480p, 360p, 240p at lower bit rates.
        case compact
    }

    /// What a rendition of the package is, as the outputs give it.
    public struct Rendition: Codable, Sendable, Hashable {
        /// Its name and folder.
        public var name: String
        /// `video` or `audio`.
        public var type: String
        /// Displayed width (0 for audio).
        public var width: Int
        /// Displayed height (0 for audio).
        public var height: Int
        /// Frames per second (0 for audio).
        public var frameRate: Double
        /// The RFC 6381 codecs string: `avc1.64001f`, `hvc1.1.6.L93.B0`, `mp4a.40.2`.
        public var codecs: String
        /// The highest bit rate of a segment (HLS BANDWIDTH), bits per second.
        public var bandwidth: Int64
        /// Bits per second over the whole rendition (HLS AVERAGE-BANDWIDTH).
        public var averageBandwidth: Int64
        /// The media playlist's path.
        public var playlist: String
        /// Segments.
        public var segments: Int
    }

    /// The outputs of `ffmpeg.package`.
    public struct Outputs: StageOutputs {
        /// The package's folder.
        @Output("The package's folder.") public var folder = ""
        /// The HLS master playlist's path.
        @Output("The HLS master playlist's path.") public var master = ""
        /// The DASH manifest's path; empty without `dash`.
        @Output("The DASH manifest's path; empty without dash.") public var dash = ""
        /// Seconds.
        @Output("Seconds.") public var duration = 0.0
        /// The video renditions, largest first, then the audio rendition.
        @Output(
            "Per rendition: name, type, width, height, frameRate, codecs, bandwidth, averageBandwidth, playlist, segments."
        )
        public var renditions: [Rendition] = []

        public init() {}
    }

    /// What a crash leaves to the next run: the renditions finished so far.
    struct Progress: Codable {
        var finished: [Finished]
    }

    /// A rendition in place: its facts and the digest of every file.
    struct Finished: Codable {
        /// What the rendition was made with; a rendition planned differently is made again.
        var plan: String
        var facts: RenditionFacts
        var files: [FileRecord]
    }

    /// One file of a finished rendition.
    struct FileRecord: Codable {
        var name: String
        var size: Int64
        var sha256: String
    }

    public static let stageType = "ffmpeg.package"

    /// The package's folder, when the workflow names one (the default is in the stage's scratch folder).
    public static func destinations(in options: Options) -> [String] { options.output.map { [$0] } ?? [] }
    public static let resource = StageResource.cpu
    public static let readsMediaInput = true
    public static let inputFileOption = "file"
    public static let summary =
        "Makes an adaptive streaming package: an HLS ladder of H.264 or HEVC renditions and an AAC audio rendition in CMAF segments with aligned keyframes, a master playlist and a DASH manifest; one decode feeds every rendition; resumes per rendition."

    /// The master playlist's name in the package's folder.
    public static let masterName = "master.m3u8"
    /// The DASH manifest's name in the package's folder.
    public static let dashName = "manifest.mpd"

    public init() {}

    public func run(_ options: Options, context: StageContext) async throws -> Outputs {
        let segmentSeconds = options.segmentSeconds.seconds
        let (rungs, codecs) = try Self.rungs(options)
        let input = options.file ?? context.item.path
        let folder =
            options.output.map { URL(fileURLWithPath: $0).standardizedFileURL }
            ?? context.scratchFolder.appendingPathComponent("\(context.item.stem)-hls")
        try prepare(folder, create: options.createFolder)
        let info = try await MediaToolkit.probe(input, logger: context.logger)
        guard let video = info.video, !info.isStillImage else {
            throw MediaError(code: .noVideo, message: "'\(input)' has no video to package")
        }
        let ladder = StreamingLadder(name: options.renditions == nil ? options.ladder.rawValue : "custom", rungs: rungs)
        let fitting = ladder.rungs(forSourceHeight: video.displayHeight)
        if fitting.count < rungs.count {
            context.logger.info(
                "leaving out \(rungs.count - fitting.count) rendition(s) taller than the source's \(video.displayHeight) lines"
            )
        }
        let packager = Packager(
            input: input, folder: folder, segmentSeconds: segmentSeconds, preset: options.preset,
            threads: options.threads, audioBitRate: options.audioBitrate?.bitsPerSecond ?? 128_000,
            duration: info.duration,
            frameRate: video.fps, context: context)
        var plans = fitting.map { Packager.Plan.video($0, codecs[$0.name] ?? options.codec) }
        try Self.checkAV1Alignment(plans, segmentSeconds: segmentSeconds, frameRate: video.fps)
        if info.audio != nil { plans.insert(.audio, at: 0) }  // cheap: done first
        let finished = try await packager.run(plans)
        let outputs = try Self.writeManifests(finished, folder: folder, dash: options.dash, duration: info.duration)
        packager.removeWork()
        return outputs
    }

    /// The renditions `options` asks for: the named ladder's rungs, or the listed renditions with the codecs of
    /// those whose codec is not the package's. Throws when the names would clash with one another, with the audio
    /// rendition's, or leave the package's folder.
    private static func rungs(_ options: Options) throws -> ([StreamingLadder.Rung], codecs: [String: VideoCodec]) {
        var rungs = StreamingLadder.named(options.ladder.rawValue)?.rungs ?? []
        var codecs: [String: VideoCodec] = [:]  // renditions whose codec is not the package's
        if let renditions = options.renditions {
            rungs = renditions.map { rendition in
                let rung = StreamingLadder.Rung(
                    name: rendition.name, height: rendition.height, bitRate: rendition.bitrate.bitsPerSecond)
                codecs[rung.name] = rendition.codec
                return rung
            }
        }
        let names = rungs.map(\.name) + ["audio"]
        guard Set(names).count == names.count,
            names.allSatisfy({ !$0.isEmpty && !$0.hasPrefix(".") && !$0.contains("/") })
        else {
            throw StageFailure(
                "rendition names must be distinct, not 'audio', not start with '.', and hold no '/'",
                kind: .invalidOptions)
        }
        return (rungs, codecs)
    }

    /// Writes the master playlist (and the DASH manifest, or removes a stale one) over the `finished` renditions,
    /// and describes the package.
    private static func writeManifests(
        _ finished: [Finished], folder: URL, dash writesDash: Bool, duration: Double
    ) throws -> Outputs {
        let facts: [RenditionFacts] = finished.map { $0.facts }
        let videoFacts = facts.filter { $0.type == "video" }.sorted { $0.peakBitRate > $1.peakBitRate }
        let audioFacts = facts.first { $0.type == "audio" }
        let master = folder.appendingPathComponent(masterName)
        let dash = folder.appendingPathComponent(dashName)
        if writesDash {
            try Packager.writeAtomically(
                PackageManifests.dashManifest(video: videoFacts, audio: audioFacts, duration: duration), to: dash)
        } else {
            unlink(dash.path)
        }
        try Packager.writeAtomically(PackageManifests.masterPlaylist(video: videoFacts, audio: audioFacts), to: master)
        let listed = videoFacts + (audioFacts.map { [$0] } ?? [])
        let renditions = listed.map { facts in
            Rendition(
                name: facts.name, type: facts.type, width: facts.width, height: facts.height,
                frameRate: (facts.frameRate * 1000).rounded() / 1000, codecs: facts.codecs,
                bandwidth: facts.peakBitRate, averageBandwidth: facts.averageBitRate,
                playlist: folder.appendingPathComponent(facts.playlist).path, segments: facts.segmentDurations.count)
        }
        return Outputs.with {
            $0.folder = folder.path
            $0.master = master.path
            $0.dash = writesDash ? dash.path : ""
            $0.duration = (duration * 1000).rounded() / 1000
            $0.renditions = renditions
        }
    }

    private func prepare(_ folder: URL, create: Bool) throws {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw MediaError(code: .outputNotWritable, message: "the package folder \(folder.path) is a file")
            }
            return
        }
        guard create else {
            throw MediaError(code: .outputNotWritable, message: "the package folder \(folder.path) does not exist")
        }
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw MediaError(
                code: .outputNotWritable, message: "cannot create the package folder \(folder.path): \(error)")
        }
    }
}

extension PackageStage {
    /// SVT-AV1 (in FFmpeg 5.1) takes no forced keyframe: an AV1 rendition gets one every `segmentSeconds` of frames,
    /// rounded, while the other codecs get one on the first frame at or after every multiple of `segmentSeconds`.
    /// Beside other codecs, the two agree only when a segment is a whole number of frames; otherwise the segments
    /// drift apart (by a frame after about 34 s at 29.97 fps) and switching between renditions would glitch.
    static func checkAV1Alignment(
        _ plans: [Packager.Plan], segmentSeconds: Double, frameRate: Double
    ) throws(StageFailure) {
        let codecs = Set(
            plans.compactMap { plan -> VideoCodec? in
                if case .video(_, let codec) = plan { return codec } else { return nil }
            })
        guard codecs.contains(.av1), codecs.count > 1 else { return }
        let frames = segmentSeconds * frameRate
        guard frameRate > 0, abs(frames - frames.rounded()) > 1e-6 else { return }
        throw StageFailure(
            "AV1 renditions get a keyframe every \(Int(frames.rounded())) frames, and at \(String(format: "%.3f", frameRate)) fps "
                + "a \(segmentSeconds) s segment is \(String(format: "%.3f", frames)) frames: their segments would drift from the other "
                + "codecs' renditions. Make every rendition AV1, or none",
            kind: .invalidOptions)
    }
}
