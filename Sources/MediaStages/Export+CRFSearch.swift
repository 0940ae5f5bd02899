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
        let audioBytes = info.audio == nil ? 0 : Int64(Double(settings.audioBitRate ?? 128_000) * info.duration / 8)
        guard settings.mode == .transcode,
            let target = QualityTarget(options, codec: settings.codec, duration: info.duration, audioBytes: audioBytes)
        else { return (settings, nil, context) }
        if let reason = QualityGate.unmeasurable(info, settings: settings) {
            throw StageFailure(
                "quality target: the export cannot be measured, so no CRF can be searched: \(reason)",
                kind: .qualityNotMeasurable, disposition: .fatal)
        }
        var state =
            (try? context.savedCheckpoint?[searchKey]?.decode(as: SearchState.self))
            ?? SearchState(probes: [], choice: nil)
        if let choice = state.choice {
            context.logger.info("crf search: CRF \(CRFSearch.named(choice.crf)), chosen by an earlier run")
        } else {
            let search = CRFSearch(
                input: input, settings: settings, range: TranscodeSettings.TimeRange(start: 0, end: nil),
                duration: info.duration, target: target,
                folder: context.scratchFolder.appendingPathComponent("crf-search"), logger: context.logger)
            let (choice, probes) = try await search.run(known: state.probes) { probes in
                try await context.checkpoint(SearchCheckpoint(crfSearch: SearchState(probes: probes, choice: nil)))
            }
            state = SearchState(probes: probes, choice: choice)
            try await context.checkpoint(SearchCheckpoint(crfSearch: state))
        }
        let choice = state.choice ?? CRFSearch.Choice(crf: Double(target.start), note: nil)
        context.logger.info(
            "crf search: encoding at CRF \(CRFSearch.named(choice.crf))\(choice.note.map { ": \($0)" } ?? "")")
        var chosen = settings
        chosen.crf = choice.crf
        let report = CRFSearchReport(
            crf: choice.crf, target: target.score, metric: target.metric.rawValue, pool: target.pool.rawValue,
            probes: state.probes, note: choice.note)
        return (chosen, report, context.keepingInCheckpoints(searchKey, try JSONValue(encoding: state)))
    }
}
