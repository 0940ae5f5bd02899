public import StageKit

/// An item's claim on a file (or folder) it writes at a path the workflow chose (``StageKit/Stage/destinations(in:)``):
/// while it holds it, no other item of the state folder or shared batch, of any workflow, may write there. An item
/// claims its files when a run admits it or a submission queues it, and when a stage that writes one starts; a new
/// version of the item keeps its claims, and forgetting the item releases them.
public struct OutputClaim: Sendable, Hashable {
    /// The file, in normal form (``OutputPath``).
    public var path: String
    /// The claiming item's workflow.
    public var workflow: String
    /// The claiming item.
    public var item: Int64
    /// The version of the item that claimed it last.
    public var version: Int
    /// The claiming item's input file, as the ledger last saw it.
    public var input: String

    /// Creates a claim.
    public init(path: String, workflow: String, item: Int64, version: Int, input: String) {
        self.path = path
        self.workflow = workflow
        self.item = item
        self.version = version
        self.input = input
    }
}

/// Why an item is refused: a file it would write is another item's (``ErrorKind/outputCollision``).
public struct OutputCollision: Sendable, Hashable {
    /// The file, in normal form.
    public var path: String
    /// The other item, for people: its input file, with its number and workflow when the ledger has it.
    public var other: String

    /// A collision with an item that claims `path` in the ledger.
    public init(_ claim: OutputClaim) {
        self.path = claim.path
        self.other = "item \(claim.item) (\(claim.input), workflow \(claim.workflow))"
    }

    /// A collision with another file of the same batch that would write `path`.
    public init(path: String, sameBatchAs input: String) {
        self.path = path
        self.other = "\(input) of this batch"
    }

    /// The item's failure: fatal, since running it again writes the same file.
    public var failure: StageFailure {
        StageFailure(
            "\(path) is also written by \(other); two items cannot write one file: give each its own "
                + "output path, or forget the other item (pipeline forget), then run the failed items again",
            kind: .outputCollision)
    }
}
