import CMediaShim

/// What a join tells the export that runs it, on the joining thread: before each part (which it may wait
/// for), and whenever bytes become final. A streamed export hands parts over as they are encoded and
/// publishes what is final to the upload that reads the file.
public final class JoinGate: Sendable {
    /// What the join says, with the bytes of the head (rewritten at the end) and the bytes final so far.
    public enum Passage: Sendable, Equatable {
        /// Part `index` is about to be read: return once it exists.
        case beforePart(Int)
        /// Bytes became final (after the header, before each part, before the trailer).
        case progressed
        /// The index did not fit its room: the file is written again, and what was final is not.
        case rewritten
    }

    private let handler: @Sendable (Passage, _ head: Int64, _ final: Int64) -> Bool

    /// `handler` returns false to stop the join (cancelled).
    public init(_ handler: @escaping @Sendable (Passage, _ head: Int64, _ final: Int64) -> Bool) {
        self.handler = handler
    }

    /// Called by the shim.
    func pass(part: Int, head: Int64, final: Int64) -> Bool {
        let passage: Passage =
            part >= 0 ? .beforePart(part) : part == Int(MS_JOIN_REWRITTEN) ? .rewritten : .progressed
        return handler(passage, head, final)
    }
}
