import Crypto
import Foundation
import StageKit

extension Workflow {
    /// A hash of everything in the workflow that decides what its stages do: each stage's id, type,
    /// options as written, condition and secrecy, and the vars (after `--var`). An item that succeeded with
    /// the same digest is done without looking at its stages; after an edit, each stage is checked against
    /// its options hash and only those whose resolved options changed run again.
    public var digest: String {
        let stages: [JSONValue] = stages.map { stage in
            [
                "id": .string(stage.id), "uses": .string(stage.uses), "with": stage.with,
                "if": stage.condition.map(JSONValue.string) ?? .null, "secret": .bool(stage.isSecret),
            ]
        }
        let canonical = JSONValue.object(["stages": .array(stages), "vars": .object(vars)]).serialized()
        return HexDigest.text(SHA256.hash(data: Data(canonical.utf8)).prefix(16))
    }
}
