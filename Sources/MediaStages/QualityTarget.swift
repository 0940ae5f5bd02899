import Foundation
import StageKit

/// The quality an export asks for instead of a CRF (`quality.target`), its CRF bounds and its size budget, and the
/// rule that turns probes (``CRFSearch/Probe``) into a CRF.
struct QualityTarget: Sendable {
    /// The metric the target is in.
    var metric: QualityMetric
    /// The figure the target applies to.
    var pool: QualityPool
    /// The lowest pooled score the export should have.
    var score: Double
    /// The CRFs the search may choose.
    var bounds: ClosedRange<Int>
    /// Where the search starts.
    var start: Int
    /// The most bytes of video the export may have, and what set it ("maxSize 5.0 MB"); nil: no budget.
    var budget: (videoBytes: Int64, named: String)?

    /// The default bounds and the first probe of `codec`: the CRFs worth searching (below them the encode is nearly
    /// lossless, above them useless) and the encoder's usual default.
    static func defaults(for codec: VideoCodec) -> (bounds: ClosedRange<Int>, start: Int) {
        codec == .av1 ? (10...55, 35) : (10...40, 23)
    }

    /// The target of the options for an export of `duration` seconds with `codec`, whose audio and container take
    /// about `bytesBesideVideo` (``Export/bytesBesideVideo(_:settings:)``): nil when they set none.
    init?(_ options: TranscodeStage.Options.Quality?, codec: VideoCodec, duration: Double, bytesBesideVideo: Int64) {
        guard let options, let score = options.target else { return nil }
        metric = options.metric
        pool = options.pool
        self.score = score
        let (bounds, start) = Self.defaults(for: codec)
        let low = options.minCRF ?? min(bounds.lowerBound, options.maxCRF ?? bounds.lowerBound)
        let high = options.maxCRF ?? max(bounds.upperBound, low)
        self.bounds = low...max(low, high)
        self.start = min(max(start, self.bounds.lowerBound), self.bounds.upperBound)
        var budgets: [(Int64, String)] = []
        if let size = options.maxSize { budgets.append((size.bytes, "maxSize \(size)")) }
        if let rate = options.maxBitrate {
            budgets.append((Int64(Double(rate.bitsPerSecond) * duration / 8), "maxBitrate \(rate.bitsPerSecond) b/s"))
        }
        budget = budgets.min { $0.0 < $1.0 }.map { (max(0, $0.0 - bytesBesideVideo), $0.1) }
    }

    /// "VMAF 93.00 (mean)".
    var named: String { "\(metric.displayName) \(metric.figure(score)) (\(pool.displayName))" }

    /// Searches with `probe` (which encodes and scores the samples at a CRF, or returns a probe already made): the
    /// highest CRF within the bounds that meets the target, then, when its estimated size is over the budget, the
    /// lowest CRF within it. The budget wins, and the choice's note says so.
    func choose(probe: (Int) async throws -> CRFSearch.Probe) async throws -> CRFSearch.Choice {
        let meeting = try await Self.bracket(threshold: score, in: bounds, start: start) { try await probe($0).score }
        let chosen = meeting ?? bounds.lowerBound
        var note: String?
        if meeting == nil {
            let reached = try await probe(chosen).score
            note =
                "the target \(named) is not met within the bounds: CRF \(chosen) scores \(metric.figure(reached)) on the samples"
        }
        guard let budget, try await probe(chosen).size > budget.videoBytes else {
            return CRFSearch.Choice(crf: Double(chosen), note: note)
        }
        // Sizes fall about exponentially as the CRF rises: the search interpolates their logarithm. Reaching the
        // threshold is being over the budget; the answer is one above the highest CRF that is.
        let over = log(Double(budget.videoBytes) + 1)
        let highestOver =
            try await Self.bracket(threshold: over, in: chosen...bounds.upperBound, start: chosen) {
                log(Double(max(1, try await probe($0).size)))
            } ?? chosen
        let needed = ByteCount(try await probe(chosen).size)
        let prefix =
            "the budget wins over the target: \(named) needs CRF \(chosen) (about \(needed) of video), over \(budget.named)"
        guard highestOver < bounds.upperBound else {
            return CRFSearch.Choice(
                crf: Double(bounds.upperBound), note: "\(prefix), which even maxCRF \(bounds.upperBound) exceeds")
        }
        let fitting = try await probe(highestOver + 1)
        // After the probe limit the CRF above the highest one known to be over the budget may be over it too.
        let outcome =
            fitting.size <= budget.videoBytes
            ? "keeps within it"
            : "is as far as \(Self.probeLimit) probes got, about \(ByteCount(fitting.size)) of video"
        return CRFSearch.Choice(
            crf: fitting.crf,
            note:
                "\(prefix); CRF \(CRFSearch.named(fitting.crf)) \(outcome), scoring \(metric.figure(fitting.score)) on the samples"
        )
    }

    /// How finely a whole CRF is refined: x264 and x265 take any fractional CRF, and a sixteenth still moves the
    /// frames' quantizers on some content (a cellular automaton's VMAF falls 1.8 points between CRF 29.75 and 30).
    static let refinementStep = 1.0 / 16
    /// At most this many probes refine a whole CRF, besides the next whole one's.
    static let refinementProbes = 4

    /// A whole CRF that meets the target, refined between it and the next whole CRF (which misses) while the passing
    /// CRF scores more than half a point over the target: first the CRF interpolated between the two scores, then
    /// the middle of what is left (a score that falls off a cliff is not linear), in sixteenths, at most
    /// ``refinementProbes`` probes. The highest CRF probed that meets the target wins, with a note when it is still
    /// more than a point over the target (a cliff). A choice with a note (a budget, or no CRF meets the target)
    /// stays.
    func refine(_ choice: CRFSearch.Choice, probe: (Double) async throws -> CRFSearch.Probe) async throws
        -> CRFSearch.Choice
    {
        guard choice.note == nil, choice.crf < Double(bounds.upperBound) else { return choice }
        var pass = (crf: choice.crf, score: try await probe(choice.crf).score)
        var fail = (crf: choice.crf + 1, score: try await probe(choice.crf + 1).score)
        let step = Self.refinementStep
        for attempt in 0..<Self.refinementProbes where pass.score - score > 0.5 && fail.crf - pass.crf > step {
            let within = pass.score > fail.score ? (pass.score - score) / (pass.score - fail.score) : 0.5
            let guess = attempt == 0 ? pass.crf + within * (fail.crf - pass.crf) : (pass.crf + fail.crf) / 2
            let crf = min(max((guess / step).rounded(.down) * step, pass.crf + step), fail.crf - step)
            let scored = try await probe(crf).score
            if scored >= score { pass = (crf, scored) } else { fail = (crf, scored) }
        }
        guard pass.score - score > 1 else { return CRFSearch.Choice(crf: pass.crf, note: nil) }
        // Met, but more than a point over: the score falls off a cliff that the probes could not narrow further.
        return CRFSearch.Choice(
            crf: pass.crf,
            note:
                "\(metric.displayName) falls from \(metric.figure(pass.score)) at CRF \(CRFSearch.named(pass.crf)) to \(metric.figure(fail.score)) at CRF \(CRFSearch.named(fail.crf)) on the samples: no CRF probed between them lands closer to \(named)"
        )
    }

    /// Steps (``step(known:threshold:in:start:)``) to the highest CRF in `range` whose `value` reaches `threshold`;
    /// nil when none does. After ``probeLimit`` probes without an answer, the highest CRF known to reach it.
    private static func bracket(
        threshold: Double, in range: ClosedRange<Int>, start: Int, value: (Int) async throws -> Double
    ) async throws -> Int? {
        var known: [Int: Double] = [:]
        for _ in 0..<probeLimit {
            switch step(known: known, threshold: threshold, in: range, start: start) {
            case .done(let crf): return crf
            case .probe(let crf): known[crf] = try await value(crf)
            }
        }
        return known.filter { $0.value >= threshold }.keys.max()
    }

    /// The most probes one search makes.
    static let probeLimit = 10

    /// What a search does next.
    enum Step: Equatable {
        /// Probe this CRF.
        case probe(Int)
        /// The highest CRF whose value reaches the threshold; nil when none in the bounds does.
        case done(Int?)
    }

    /// The next step of finding the highest CRF in `bounds` whose value reaches `threshold`, from the values `known`
    /// by CRF (values fall as the CRF rises): done when the CRFs on either side of the threshold are neighbours or a
    /// bound decides it; else the CRF interpolated between them (the middle, when the guess would creep from a side
    /// that has moved before), or a step beyond the one side known so far (extrapolated from two probes when there are
    /// two). A value that breaks the order is ignored.
    static func step(known: [Int: Double], threshold: Double, in bounds: ClosedRange<Int>, start: Int) -> Step {
        let inside = known.filter { bounds.contains($0.key) }
        let fail = inside.filter { $0.value < threshold }.keys.min()
        let pass = inside.filter { $0.value >= threshold && $0.key < (fail ?? .max) }.keys.max()
        if let pass, pass == bounds.upperBound { return .done(pass) }
        if let fail, fail == bounds.lowerBound { return .done(nil) }
        switch (pass, fail) {
        case (let pass?, let fail?):
            if fail - pass <= 1 { return .done(pass) }
            let (high, low) = (inside[pass] ?? threshold, inside[fail] ?? threshold)
            let guess = Double(pass) + (high - threshold) / max(high - low, 1e-9) * Double(fail - pass)
            let probe = min(max(Int(guess.rounded()), pass + 1), fail - 1)
            // Interpolation on a bending curve can creep a CRF at a time from one side: once that side has moved
            // (two probes on it), a guess next to it is replaced by the middle of the bracket.
            let passes = inside.filter { $0.value >= threshold }.count
            let fails = inside.count - passes
            let creeping = (probe == pass + 1 && passes >= 2) || (probe == fail - 1 && fails >= 2)
            return .probe(creeping && fail - pass > 2 ? (pass + fail) / 2 : probe)
        case (let pass?, nil):
            return .probe(min(bounds.upperBound, pass + reach(from: pass, known: inside, threshold: threshold)))
        case (nil, let fail?):
            return .probe(max(bounds.lowerBound, fail - reach(from: fail, known: inside, threshold: threshold)))
        case (nil, nil):
            return .probe(min(max(start, bounds.lowerBound), bounds.upperBound))
        }
    }

    /// How far beyond `crf` the threshold probably lies: from the slope of the two probes nearest it, a little past
    /// the crossing so that the next probe brackets it; 4 when one probe is all there is. From 1 to 12.
    private static func reach(from crf: Int, known: [Int: Double], threshold: Double) -> Int {
        let nearest = known.keys.sorted { abs($0 - crf) < abs($1 - crf) }
        guard nearest.count >= 2, let here = known[crf], let there = known[nearest[1]], here != there else {
            return 4
        }
        let slope = abs((here - there) / Double(crf - nearest[1]))
        return min(12, max(1, Int((abs(here - threshold) / slope).rounded(.up)) + 1))
    }
}
