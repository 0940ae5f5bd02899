import PipelineKit

import struct StageKit.InputItem
import enum StageKit.Suggestion

/// Items of a workflow named on the command line, as `pipeline status` shows them: by item number, path,
/// relative path or file name.
enum ItemSelection {
    /// The items `names` select in `snapshot`; an unknown name ends the command with exit code 2.
    static func select(_ names: [String], in snapshot: LedgerSnapshot, workflow: String) throws -> [LedgerItem] {
        try names.map { name in
            let matches = snapshot.items.filter { item in
                "\(item.id)" == name || item.input.path == name || item.input.relativePath == name
                    || item.input.name == name
            }
            guard matches.count == 1, let item = matches.first else {
                if matches.isEmpty {
                    throw CommandFailure(
                        .invalid,
                        "pipeline: no item \(name) in the ledger of \(workflow)"
                            + Suggestion.phrase(for: name, among: snapshot.items.map(\.input.relativePath)))
                }
                throw CommandFailure(
                    .invalid,
                    "pipeline: \(name) names \(matches.count) items of \(workflow) (\(matches.map { "\($0.id): \($0.input.path)" }.joined(separator: ", "))); give the item number or the full path"
                )
            }
            return item
        }
    }
}
