import Foundation
import Logging
import StageKit

#if canImport(Glibc)
    import Glibc
#endif

/// Makes the missing renditions of a package in one pass over the source (one decode feeding every encoder), then
/// packages them one at a time, each checkpointed once it is in place; keeps the ones an earlier run finished when
/// their files are unchanged.
struct Packager {
    /// A rendition to make.
    enum Plan {
        case video(StreamingLadder.Rung, VideoCodec)
        case audio

        var name: String {
            switch self {
            case .video(let rung, _): rung.name
            case .audio: "audio"
            }
        }

        var isVideo: Bool {
            if case .video = self { true } else { false }
        }
    }

    let input: String
    let folder: URL
    let segmentSeconds: Double
    let preset: EncoderPreset
    let threads: Int
    let audioBitRate: Int64
    /// The source's duration in seconds.
    let duration: Double
    /// The source's frame rate (the renditions keep it).
    let frameRate: Double
    let context: StageContext

    /// Where a rendition's MP4 waits to be packaged: hidden in the package's folder, removed at the end.
    var work: URL { folder.appendingPathComponent(".work") }

    /// What a rendition is made with: a finished rendition with another plan is made again.
    func plan(_ plan: Plan) -> String {
        switch plan {
        case .video(let rung, let codec):
            "video \(rung.name) \(rung.width)x\(rung.height) \(rung.bitRate) b/s, \(segmentSeconds) s segments, \(codec.library.lowercased()) \(preset.rawValue)"
        case .audio:
            "audio aac \(audioBitRate) b/s, \(segmentSeconds) s segments"
        }
    }

    /// Makes what is missing, in order; returns every rendition.
    func run(_ plans: [Plan]) async throws -> [PackageStage.Finished] {
        let saved = context.lastCheckpoint(as: PackageStage.Progress.self)?.finished ?? []
        var progress = PackageStage.Progress(finished: [])
        var missing: [Plan] = []
        for plan in plans {
            if let done = saved.first(where: { $0.facts.name == plan.name && $0.plan == self.plan(plan) }),
                verified(done)
            {
                progress.finished.append(done)
            } else {
                missing.append(plan)
            }
        }
        context.logger.info(
            "package: \(plans.count) renditions, \(progress.finished.count) reused (\(progress.finished.map(\.facts.name).joined(separator: ", "))), \(missing.count) to make"
        )
        if progress.finished.count != saved.count { try await context.checkpoint(progress) }
        guard !missing.isEmpty else {
            return plans.compactMap { plan in progress.finished.first { $0.facts.name == plan.name } }
        }
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        context.logger.info("making renditions \(missing.map(\.name).joined(separator: ", ")) in one pass")
        let total = Int64(duration.rounded(.up))
        let reports = try await transcode(missing) { done in
            context.reportProgress(StageProgress(completed: Int64(done), total: total, unit: .seconds))
        }
        for (plan, report) in zip(missing, reports) {
            context.logger.info("packaging rendition \(plan.name)")
            progress.finished.append(try await package(plan, report: report))
            try await context.checkpoint(progress)
            context.logger.info("rendition \(plan.name) in place")
        }
        return plans.compactMap { plan in progress.finished.first { $0.facts.name == plan.name } }
    }

    /// The MP4 a rendition is transcoded into before it is packaged.
    private func mp4(of plan: Plan) -> URL {
        work.appendingPathComponent("\(plan.name).mp4")
    }

    /// Transcodes the renditions into MP4s in one pass over the source (one decode for all of them); the audio
    /// alone, when every video rendition is already in place. Returns the reports in the order of `plans`.
    private func transcode(_ plans: [Plan], progress: @escaping @Sendable (Double) -> Void) async throws
        -> [TranscodeReport]
    {
        let outputs = plans.map { (path: mp4(of: $0).path, settings: settings(for: $0)) }
        guard plans.contains(where: \.isVideo) else {
            var reports: [TranscodeReport] = []
            for output in outputs {
                reports.append(
                    try await MediaToolkit.transcode(
                        input, to: output.path, settings: output.settings, logger: context.logger,
                        progress: { done, _ in progress(done) }))
            }
            return reports
        }
        return try await MediaToolkit.transcodeLadder(
            input, outputs: outputs, logger: context.logger, progress: { done, _ in progress(done) })
    }

    /// How a rendition is transcoded: video with its keyframes forced at every segment's start.
    private func settings(for plan: Plan) -> TranscodeSettings {
        var settings = TranscodeSettings()
        settings.threads = threads
        settings.faststart = false
        switch plan {
        case .video(let rung, let codec):
            settings.streams = .video
            settings.codec = codec
            settings.maxWidth = rung.width
            settings.maxHeight = rung.height
            settings.videoBitRate = rung.bitRate
            settings.preset = preset
            settings.keyframeInterval = segmentSeconds
        case .audio:
            settings.streams = .audio
            settings.audioBitRate = audioBitRate
        }
        return settings
    }

    /// Packages a rendition's MP4 into a hidden folder, makes every file durable and moves the folder into place.
    private func package(_ plan: Plan, report: TranscodeReport) async throws -> PackageStage.Finished {
        let name = plan.name
        let mp4 = mp4(of: plan)
        let staging = folder.appendingPathComponent(".\(name).partial")
        let destination = folder.appendingPathComponent(name)
        try? FileManager.default.removeItem(at: staging)
        try? FileManager.default.removeItem(at: destination)
        let audio = try await MediaToolkit.probe(mp4.path, logger: context.logger).audio
        try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: true)
        let playlist = staging.appendingPathComponent("index.m3u8")
        try await MediaToolkit.packageHLS(
            mp4.path, playlist: playlist.path, segmentSeconds: segmentSeconds, logger: context.logger)
        let files = try FileManager.default.contentsOfDirectory(atPath: staging.path).sorted()
        var records: [PackageStage.FileRecord] = []
        for file in files {
            let url = staging.appendingPathComponent(file)
            try MediaOutput.sync(url)
            records.append(
                PackageStage.FileRecord(
                    name: file, size: MediaOutput.size(of: url) ?? 0, sha256: try SegmentedTranscode.sha256(of: url)))
        }
        Self.syncFolder(staging)
        guard rename(staging.path, destination.path) == 0 else {
            throw MediaError(
                code: .outputNotWritable,
                message: "cannot move rendition \(name) into place: \(String(cString: strerror(errno)))")
        }
        Self.syncFolder(folder)
        unlink(mp4.path)
        let facts = try facts(of: plan, in: destination, report: report, audio: audio)
        return PackageStage.Finished(plan: self.plan(plan), facts: facts, files: records)
    }

    /// The rendition's facts, from its media playlist, its segments' sizes and its initialisation segment.
    private func facts(of plan: Plan, in destination: URL, report: TranscodeReport, audio: MediaInfo.Audio?) throws
        -> RenditionFacts
    {
        let name = plan.name
        let text = try String(contentsOf: destination.appendingPathComponent("index.m3u8"), encoding: .utf8)
        let segments = MediaPlaylist(text).segments
        guard !segments.isEmpty else {
            throw MediaError(code: .noFrames, message: "rendition \(name) has no segments")
        }
        let sizes = segments.map { MediaOutput.size(of: destination.appendingPathComponent($0.file)) ?? 0 }
        let seconds = segments.reduce(0) { $0 + $1.duration }
        // The last segment is left out of the peak when it is a short remainder: its keyframe alone would make
        // it look like a burst no player meets.
        let counted = segments.indices.filter {
            segments.count == 1 || $0 < segments.count - 1 || segments[$0].duration >= segmentSeconds / 2
        }
        let peak = counted.map { Double(sizes[$0]) * 8 / max(segments[$0].duration, 0.001) }.max() ?? 0
        let initSegment = try Data(contentsOf: destination.appendingPathComponent("init.mp4"))
        guard let codecs = CodecString.of(initSegment: initSegment) else {
            throw MediaError(code: .unsupportedCodec, message: "rendition \(name): no codecs string in init.mp4")
        }
        let isVideo = plan.isVideo
        return RenditionFacts(
            name: name, type: isVideo ? "video" : "audio", width: isVideo ? report.width : 0,
            height: isVideo ? report.height : 0, frameRate: isVideo ? frameRate : 0, codecs: codecs,
            peakBitRate: Int64(peak.rounded(.up)),
            averageBitRate: Int64((Double(sizes.reduce(0, +)) * 8 / max(seconds, 0.001)).rounded(.up)),
            playlist: "\(name)/index.m3u8", segmentDurations: segments.map(\.duration),
            channels: isVideo ? 0 : audio?.channels ?? 0, sampleRate: isVideo ? 0 : audio?.sampleRate ?? 0)
    }

    /// Whether every file of a finished rendition is there with the size and SHA-256 it was checkpointed with.
    private func verified(_ finished: PackageStage.Finished) -> Bool {
        let destination = folder.appendingPathComponent(finished.facts.name)
        for file in finished.files {
            let url = destination.appendingPathComponent(file.name)
            guard MediaOutput.size(of: url) == file.size, (try? SegmentedTranscode.sha256(of: url)) == file.sha256
            else {
                context.logger.notice(
                    "rendition \(finished.facts.name): \(file.name) is missing or changed: making it again")
                return false
            }
        }
        return true
    }

    /// Removes the transcodes' folder once every rendition is in place.
    func removeWork() {
        try? FileManager.default.removeItem(at: work)
    }

    /// Writes `text` under a temporary name, makes it durable and renames it into place.
    static func writeAtomically(_ text: String, to url: URL) throws {
        let partial = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).partial")
        do {
            try Data(text.utf8).write(to: partial)
            try MediaOutput.sync(partial)
        } catch {
            throw MediaError(code: .outputNotWritable, message: "cannot write \(url.path): \(error)")
        }
        guard rename(partial.path, url.path) == 0 else {
            throw MediaError(
                code: .outputNotWritable, message: "cannot write \(url.path): \(String(cString: strerror(errno)))")
        }
    }

    private static func syncFolder(_ url: URL) {
        let descriptor = open(url.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if descriptor >= 0 {
            fsync(descriptor)
            close(descriptor)
        }
    }
}
