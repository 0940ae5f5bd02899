import Foundation
import Logging
import StageKit
import StageRuntime

/// What transcode and remux share: choosing the mode, the temporary output, progress, warnings.
enum Export {
    /// How an export of a source runs: with which settings, in segments of what length and how many at once
    /// (nil: in one piece), and for `mode: auto`, what decided it.
    struct Decision {
        var settings: TranscodeSettings
        var segments: (length: Double, jobs: Int, cuts: SegmentCuts)?
        var autoChoice: String?
    }

    /// How an export of the source that `info` describes runs, decided as ``run(file:output:mode:settings:rules:segmenting:quality:encoderReport:createFolder:target:context:)``
    /// decides it (and as `pipeline plan` says).
    static func decide(
        _ info: MediaInfo, mode: TranscodeStage.ExportMode, settings: TranscodeSettings, rules: PlaybackRules?,
        segmenting: (length: TimeSpan?, jobs: Int, cuts: SegmentCuts)?
    ) -> Decision {
        var decision = Decision(settings: settings)
        switch mode {
        case .remux: decision.settings.mode = .remux
        case .auto:
            let standard = rules ?? .standard(for: settings.codec)
            let reason = standard.mismatch(info, settings: settings)
            decision.settings.mode = reason == nil ? .remux : .transcode
            decision.autoChoice =
                reason.map { "transcoding because \($0)" } ?? "remuxing, the input already fits (\(standard.summary))"
        case .transcode: decision.settings.mode = .transcode
        }
        guard decision.settings.mode == .transcode else { return decision }
        if let rules { decision.settings = rules.promise(decision.settings, for: info) }
        if let segmenting, segmenting.length?.seconds != 0,
            let length = SegmentedTranscode.length(option: segmenting.length, duration: info.duration)
        {
            decision.segments = (length, segmenting.jobs, segmenting.cuts)
        }
        return decision
    }

    /// `rules`: what a transcode promises (nil: a plain remux). `segmenting`: the `segmentSeconds` option, the
    /// segments encoded at once and where they are cut (nil: never segmented). `quality`: the export's measurement
    /// against its source and gate, run on the finished file before it is renamed into place (a missed bound
    /// discards it). `encoderReport`: without `quality`, report the encoder's own PSNR of each frame instead.
    /// `target`: the `quality` option, whose `target` has the CRF searched first
    /// (``searchCRF(_:input:info:settings:context:)``); it comes with `quality`, so its export is measured, never
    /// reported by the encoder.
    static func run(
        file: String?, output path: String?, mode: TranscodeStage.ExportMode, settings: TranscodeSettings,
        rules: PlaybackRules?, segmenting: (length: TimeSpan?, jobs: Int, cuts: SegmentCuts)?, quality: QualityGate?,
        encoderReport: Bool, createFolder: Bool, target: TranscodeStage.Options.Quality? = nil, context: StageContext
    ) async throws -> TranscodeStage.Outputs {
        let input = file ?? context.item.path
        let output = MediaOutput(destination: MediaPaths.output(path, context: context, extension: "mp4"))
        if let outputs = output.reusable(from: context, as: TranscodeStage.Outputs.self) { return outputs }
        try output.prepareFolder(create: createFolder)

        let info = try await probeVideo(input, logger: context.logger)
        var decision = decide(info, mode: mode, settings: settings, rules: rules, segmenting: segmenting)
        if let dropped = droppedStreams(info, segmented: decision.segments != nil) {
            context.logger.notice(
                "dropping \(dropped): the MP4 keeps one video and one audio track, and text subtitles as mov_text")
        }
        if let choice = decision.autoChoice { context.logger.info("mode auto: \(choice)") }
        let (searched, search, searchKeeping) = try await searchCRF(
            target, input: input, info: info, settings: decision.settings, context: context)
        decision.settings = searched
        let encoderPSNR = quality == nil && encoderReport && searched.mode == .transcode
        return try await encode(
            input, info: info, decision: decision, to: output, quality: quality, encoderPSNR: encoderPSNR,
            search: search, context: searchKeeping)
    }

    /// Encodes the export as `decision` says, measures it when asked and commits it; `context` keeps the CRF search
    /// (if any) in every checkpoint.
    private static func encode(
        _ input: String, info: MediaInfo, decision: Decision, to output: MediaOutput, quality: QualityGate?,
        encoderPSNR: Bool, search: CRFSearchReport?, context: StageContext
    ) async throws -> TranscodeStage.Outputs {
        let settings = decision.settings
        let (quality, unmeasurable) = try qualityPlan(quality, info: info, settings: settings, context: context)
        let encoding = Encoding(decision, input: input, info: info, encoderPSNR: encoderPSNR, context: context)

        do {
            let (report, farmedPlan) = try await encoding.run(
                input, to: output, settings: settings, context: context)
            try checkDecoded(report, context: context)
            var measured = try await quality?.measure(
                source: input, export: output.partial.path, threads: settings.threads, context: context)
            if encoderPSNR {
                let unreported = report.encoderQualityNotReported ?? encoding.unreported(settings)
                measured = (report.encoderQuality, report.encoderQuality == nil ? unreported : nil)
                if let reported = report.encoderQuality { context.logger.info("quality: \(reported)") }
            }
            var outputs = TranscodeStage.Outputs.with {
                $0.path = output.destination.path
                $0.size = report.size
                $0.duration = (report.duration * 1000).rounded() / 1000
                $0.width = report.width
                $0.height = report.height
                $0.mode = settings.mode.rawValue
                $0.frames = report.videoFrames
                $0.hasAudio = report.hasAudio
                $0.quality = measured?.report
                $0.qualityNotMeasured = unmeasurable ?? measured?.notMeasured
                $0.crfSearch = search
            }
            outputs.size = try await output.commit(outputs, context: context)
            context.services[ExportStreamKey.self]?.finish(destination: output.destination.path, size: outputs.size)
            await encoding.cleanUp(farmedPlan: farmedPlan)
            return outputs
        } catch {
            let located = output.locating(error, scratch: context.scratchFolder)
            output.discard()
            throw located
        }
    }

    /// The measurement an export gets, decided before encoding from what the probe and the settings tell: a gate
    /// that cannot measure fails the stage now (not after hours of encoding); a report that cannot is left out, with
    /// the reason for the outputs.
    private static func qualityPlan(
        _ quality: QualityGate?, info: MediaInfo, settings: TranscodeSettings, context: StageContext
    ) throws -> (QualityGate?, String?) {
        guard let quality, let reason = QualityGate.unmeasurable(info, settings: settings) else {
            return (quality, nil)
        }
        if quality.minimum != nil {
            throw StageFailure(
                "quality gate: the export cannot be measured, so it is not made: \(reason)",
                kind: .qualityNotMeasurable, disposition: .fatal)
        }
        context.logger.warning("the export lands without a quality report: \(reason)")
        return (nil, reason)
    }

    /// Probes the source of an export; throws when it is a still picture, which has nothing to export.
    private static func probeVideo(_ input: String, logger: Logger) async throws -> MediaInfo {
        let info = try await MediaToolkit.probe(input, logger: logger)
        if info.isStillImage {
            throw MediaError(
                code: .noVideo,
                message: "'\(input)' is a still picture (\(info.format)), not a video: nothing to export")
        }
        return info
    }

    /// Applies the damaged-input policy to what the export decoded (throws unless it is `export` and the source fell
    /// short), and warns when packets were unreadable or the decoded duration falls short of the declared one.
    private static func checkDecoded(_ report: TranscodeReport, context: StageContext) throws {
        let policy = context.services[DamagedInputPolicyKey.self] ?? .default
        if policy != .export,
            let short = DamagedInputPolicy.shortfall(decoded: report.decodedSeconds, declared: report.inputDuration)
        {
            throw StageFailure.damagedInput(short)
        }
        if report.decodeErrors > 0
            || (report.inputDuration > 0 && report.decodedSeconds < report.inputDuration - 0.5)
        {
            context.logger.warning(
                "the input is damaged or truncated: decoded \(String(format: "%.2f", report.decodedSeconds)) of \(String(format: "%.2f", report.inputDuration)) s, \(report.decodeErrors) unreadable packet(s) skipped"
            )
        }
    }

    /// The streams an export leaves out, for a note; nil when none. A segmented export carries its subtitles in its
    /// audio pass: one of a source without audio keeps none.
    static func droppedStreams(_ info: MediaInfo, segmented: Bool) -> String? {
        var dropped: [String] = []
        if info.videoStreams > 1 { dropped.append("\(info.videoStreams - 1) more video track(s)") }
        if info.audioStreams > 1 { dropped.append("\(info.audioStreams - 1) more audio track(s)") }
        let pictures = info.subtitleStreams - info.textSubtitleStreams
        if segmented, info.audio == nil, info.subtitleStreams > 0 {
            // A segmented export carries its subtitles in the audio pass, which a source without audio has not.
            dropped.append(
                "\(info.subtitleStreams) subtitle track(s) (a segmented export of a source without audio keeps none)")
        } else if pictures > 0 {
            dropped.append("\(pictures) bitmap subtitle track(s) (DVD, Blu-ray or DVB pictures, not text)")
        }
        if info.dataStreams > 0 {
            dropped.append("\(info.dataStreams) data track(s) (a timecode stays, as the MP4's timecode track)")
        }
        if info.attachedPictures > 0 { dropped.append("\(info.attachedPictures) cover picture(s)") }
        return dropped.isEmpty ? nil : dropped.joined(separator: ", ")
    }
}
