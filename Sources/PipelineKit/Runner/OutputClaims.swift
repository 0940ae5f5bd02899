import Foundation
import NIOConcurrencyHelpers
import StageKit

/// The paths stages of a run write (their `output` option), each with the item that writes it, so that two
/// files of one batch never write the same output.
///
/// A folder of cameras' cards holds `100/clip0001.mp4` and `101/clip0001.mp4`; a workflow that names its
/// export `out/${input.stem}.mp4` would write both to one file, the second replacing the first, and report
/// both done. The second item fails instead, before its stage runs, naming the file and the item that has it.
/// Claims last as long as the runner: an item that ended keeps its outputs, and a later item of the run (or of
/// a later round of `pipeline watch`) may not overwrite them. A refusal is checkpointed with the item that
/// holds the file (``Holder/init(refusal:)``), so that the next run, where the holder is done and does not run,
/// refuses again while the file is there.
final class OutputClaims: Sendable {
    /// The item that claimed a path first.
    struct Holder: Sendable, Hashable {
        /// Its ledger id.
        var item: Int64
        /// Its path relative to its input folder, for messages.
        var label: String
        /// The path it writes.
        var path: String

        /// The holder a refused stage's checkpoint names; nil for any other checkpoint.
        init?(refusal record: StageRecord?) {
            guard let record, record.status == .failed, let held = record.resume?[Self.key],
                let item = held["item"]?.intValue, let label = held["label"]?.stringValue,
                let path = held["path"]?.stringValue
            else { return nil }
            self.init(item: Int64(item), label: label, path: path)
        }

        init(item: Int64, label: String, path: String) {
            self.item = item
            self.label = label
            self.path = path
        }

        /// The refused stage's resume data: the holder, for the next run.
        var refusal: JSONValue {
            .object([Self.key: .object(["item": .int(Int(item)), "label": .string(label), "path": .string(path)])])
        }

        private static let key = "outputHeldBy"
    }

    private let claims = NIOLockedValueBox([String: Holder]())

    init() {}

    /// The path a stage writes, from its resolved options: its `output` option, standardized as the stages
    /// open it (relative to the current folder); nil when it has none (it writes into its scratch folder).
    static func path(in options: JSONValue) -> String? {
        guard let output = options["output"]?.stringValue, !output.isEmpty else { return nil }
        return URL(fileURLWithPath: output).standardizedFileURL.path
    }

    /// Claims `path` for `item`; returns another item that claimed it first, or nil when the path is the item's
    /// (claimed now, or by it before).
    func claim(_ path: String, item: Int64, label: String) -> Holder? {
        claims.withLockedValue { claims in
            if let holder = claims[path], holder.item != item { return holder }
            claims[path] = Holder(item: item, label: label, path: path)
            return nil
        }
    }
}
