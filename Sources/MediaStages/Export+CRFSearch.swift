import Foundation
import Logging
import StageKit

extension Export {
    /// The checkpoint's member that keeps the CRF search.
    static let searchKey = "crfSearch"

    /// What the checkpoint keeps of the search: the probes so far, and the choice once made.
    struct SearchState: Codable {
        var probes: [CRFSearch.Probe]
        var choice: CRFSearch.Choice?
    }

    /// A checkpoint of the search alone, before the export checkpoints anything else.
    private struct SearchCheckpoint: Codable {
        var crfSearch: SearchState
    }

    /// With `quality.target`, for a transcode: the settings with the CRF the search chose (or an earlier run chose:
    /// it is kept in the checkpoint, and so is every probe), the search's report, and the context whose checkpoints
    /// keep the search from then on. Otherwise what it was given. A source whose export cannot be measured fails the
    /// stage before any encoding.
    static func searchCRF(
        _ options: TranscodeStage.Options.Quality?, input: String, info: MediaInfo, settings: TranscodeSettings,
        context: StageContext
    ) async throws -> (TranscodeSettings, CRFSearchReport?, StageContext) {
        guard settings.mode == .transcode,
            let target = QualityTarget(
                options, codec: settings.codec, duration: info.duration,
                bytesBesideVideo: bytesBesideVideo(info, settings: settings))
        else { return (settings, nil, context) }
        if let reason = QualityGate.unmeasurable(info, settings: settings) {
            throw StageFailure(
                "quality target: the export cannot be measured, so no CRF can be searched: \(reason)",
                kind: .qualityNotMeasurable, disposition: .fatal)
        }
        var state = SearchState(probes: [], choice: nil)
        if let saved = context.savedCheckpoint?[searchKey] {
            do {
                state = try saved.decode(as: SearchState.self)
            } catch {
                context.logger.warning("crf search: the checkpoint's search cannot be read, searching again: \(error)")
            }
        }
        let choice: CRFSearch.Choice
        if let earlier = state.choice {
            choice = earlier
            context.logger.info("crf search: CRF \(CRFSearch.named(choice.crf)), chosen by an earlier run")
        } else {
            let search = CRFSearch(
                input: input, settings: settings, range: TranscodeSettings.TimeRange(start: 0, end: nil),
                duration: info.duration, target: target,
                folder: context.scratchFolder.appendingPathComponent("crf-search"), logger: context.logger)
            let (chosen, probes) = try await search.run(known: state.probes) { probes in
                try await context.checkpoint(SearchCheckpoint(crfSearch: SearchState(probes: probes, choice: nil)))
            }
            choice = chosen
            state = SearchState(probes: probes, choice: chosen)
            try await context.checkpoint(SearchCheckpoint(crfSearch: state))
        }
        context.logger.info(
            "crf search: encoding at CRF \(CRFSearch.named(choice.crf))\(choice.note.map { ": \($0)" } ?? "")")
        var chosen = settings
        chosen.crf = choice.crf
        let report = CRFSearchReport(
            crf: choice.crf, target: target.score, metric: target.metric.rawValue, pool: target.pool.rawValue,
            probes: state.probes, note: choice.note)
        return (chosen, report, context.keepingInCheckpoints(searchKey, try JSONValue(encoding: state)))
    }

    /// What an export of the source `info` describes takes besides its video packets, for a size budget: the audio at
    /// its bit rate, or at the AAC encoder's default for its channels (about 69 kb/s for one, 128 kb/s for a pair),
    /// and the MP4's index (about 12 bytes a packet, video and audio, and 2 KB of headers).
    static func bytesBesideVideo(_ info: MediaInfo, settings: TranscodeSettings) -> Int64 {
        let duration = info.duration
        let fps = min(info.video?.fps ?? 30, settings.maxFPS ?? .infinity)
        var audioBytes = 0.0
        var audioPackets = 0.0
        if let audio = info.audio {
            let channels = settings.audioChannels ?? min(audio.channels, 2)
            let defaultRate = Double(channels / 2) * 128_000 + Double(channels % 2) * 69_000
            audioBytes = (settings.audioBitRate.map { Double($0) } ?? defaultRate) * duration / 8
            audioPackets = duration * Double(settings.audioSampleRate ?? audio.sampleRate) / 1024
        }
        let index = 2048 + 12 * (duration * fps + audioPackets)
        return Int64((audioBytes + index).rounded())
    }
}
