import StageKit

extension QualityTarget {
    /// The options that only the target uses, which mean nothing without it.
    private static let targetOnly = ["minCRF", "maxCRF", "maxSize", "maxBitrate"]

    /// What `quality.target` refuses: an explicit `video.crf` beside it (the search chooses the CRF), a target outside
    /// the metric's range, bounds outside the codec's CRFs or the wrong way round, and bounds or a budget without a
    /// target.
    static func problems(in with: JSONValue) -> [OptionProblem] {
        guard let quality = with["quality"] else { return [] }
        let path = JSONPath.root.appending("quality")
        guard let target = quality["target"], target != .null else {
            return targetOnly.filter { quality[$0] != nil && quality[$0] != .null }.map {
                OptionProblem(
                    at: path.appending($0),
                    "\($0) bounds the CRF search of quality.target: give a target, or leave it out")
            }
        }
        var problems: [OptionProblem] = []
        if let crf = with["video"]?["crf"], crf != .null {
            problems.append(
                OptionProblem(
                    at: JSONPath.root.appending("video").appending("crf"),
                    "quality.target searches the CRF, so video.crf cannot be given too: leave out one of them"
                ))
        }
        let metric = QualityMetric(rawValue: quality["metric"]?.stringValue ?? QualityMetric.vmaf.rawValue) ?? .vmaf
        if let score = target.doubleValue, score > metric.highest || (!metric.takesZero && score <= 0) {
            problems.append(
                OptionProblem(
                    at: path.appending("target"),
                    "expected a score of at most \(metric.figure(metric.highest)) for \(metric.rawValue), found \(score)"
                ))
        }
        return problems + boundProblems(quality, codec: TranscodeStage.codec(in: with), at: path)
    }

    /// minCRF and maxCRF outside the codec's CRFs, or minCRF above maxCRF.
    private static func boundProblems(_ quality: JSONValue, codec: VideoCodec?, at path: JSONPath) -> [OptionProblem] {
        var problems: [OptionProblem] = []
        let low = quality["minCRF"]?.intValue
        let high = quality["maxCRF"]?.intValue
        if let codec {
            let range = codec.crfRange
            for (name, value) in [("minCRF", low), ("maxCRF", high)] {
                guard let value, !range.contains(value) else { continue }
                problems.append(
                    OptionProblem(
                        at: path.appending(name),
                        "expected a CRF from \(range.lowerBound) to \(range.upperBound) for \(codec.rawValue), found \(value)"
                    ))
            }
        }
        if let low, let high, low > high {
            problems.append(
                OptionProblem(
                    at: path.appending("minCRF"), "minCRF \(low) is above maxCRF \(high): no CRF is left to search"))
        }
        return problems
    }
}
