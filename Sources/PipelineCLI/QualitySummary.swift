import Foundation
import MediaStages

import enum StageKit.JSONValue

/// A stage's `quality` output (an export's quality report) as one line for people, as `pipeline status` prints it
/// under its table: the report's own ``QualityReport/description``, so status and the stage's log say the same.
enum QualitySummary {
    /// The report in `outputs`, described; nil when `outputs` has none (or one this build cannot read).
    static func line(_ outputs: JSONValue?) -> String? {
        guard let quality = outputs?["quality"],
            let report = try? JSONDecoder().decode(QualityReport.self, from: quality.serializedData())
        else { return nil }
        return report.description
    }
}
