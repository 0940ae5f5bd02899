import Foundation
public import StageKit

extension TranscodeStage: PlanDescribing {
    /// Whether the export transcodes or remuxes (`mode: auto`), and into how many segments it splits the source,
    /// with those an earlier run already encoded.
    public static func planNote(_ options: Options, input: String, checkpoint: JSONValue?) async -> String? {
        let file = options.file ?? input
        guard let (settings, rules) = try? settings(from: options), let info = try? await MediaToolkit.probe(file),
            !info.isStillImage
        else { return nil }
        let decision = Export.decide(
            info, mode: options.mode, settings: settings, rules: rules,
            segmenting: (options.segmentSeconds, options.segmentJobs, options.segmentCuts))
        var notes = decision.autoChoice.map { ["mode auto: \($0)"] } ?? []
        if let (length, jobs, cuts) = decision.segments {
            // As the run decides, without the pass over the source that finding its scene changes takes: a plan cut at
            // scene changes is counted from the checkpoint, or else by its keyframes, about as many.
            let saved = try? checkpoint?.decode(as: SegmentedTranscode.Progress.self)
            if var plan = try? await SegmentedTranscode.plan(
                file, duration: info.duration, segmentSeconds: length, cuts: .keyframes, jobs: jobs,
                settings: decision.settings, logger: nil)
            {
                if let saved, cuts.takesStarts(cutBy: saved.cuts, for: saved.length, length: length) {
                    (plan.starts, plan.cuts) = (saved.starts, .scenes)
                }
                notes.append(Self.segmentsNote(plan, cuts: cuts, length: length, saved: saved))
            }
        }
        return notes.isEmpty ? nil : notes.joined(separator: "; ")
    }

    /// How many segments `plan` has ("about", and that a pass over the source finds them first, when they are to
    /// be cut at scene changes not found yet), of which `saved` holds how many encoded: only segments saved with
    /// the rule asked for count (the run finds the scene changes again otherwise, and its starts may move); their
    /// files are checked then.
    static func segmentsNote(
        _ plan: SegmentedTranscode.Progress, cuts: SegmentCuts, length: Double, saved: SegmentedTranscode.Progress?
    ) -> String {
        let unfound = cuts == .scenes && plan.cuts != .scenes
        let count = plan.starts.count == 1 ? "one segment" : "\(plan.starts.count) segments"
        var split = "in \(unfound ? "about " : "")\(count) of \(TimeSpan(seconds: length))"
        if unfound {
            split += " cut at scene changes, found by a pass over the source first"
        } else if let saved, (saved.cuts ?? .keyframes) == cuts, saved.matches(plan), !saved.segments.isEmpty {
            split += ", \(saved.segments.count) already encoded"
        }
        return split
    }
}
