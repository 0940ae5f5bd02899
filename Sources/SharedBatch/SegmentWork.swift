package import StageRuntime

/// What a worker needs to take part in segmented encodes that workers share (`pipeline worker --segments`):
/// where units go, and how it encodes one (its encoder build and the encode), as the stage type that farms segments
/// provides it.
package struct SegmentWork: Sendable {
    /// Where encoded units go for the joining worker.
    package var store: any SegmentStore
    /// This worker's encoder build, with which it claims only units planned with it, and how it encodes a claimed
    /// unit into ``store``. The encode is cancelled when the unit's lease is lost.
    package var encoding: SegmentEncoding

    /// Segment work with `store` and `encoding`.
    package init(store: any SegmentStore, encoding: SegmentEncoding) {
        self.store = store
        self.encoding = encoding
    }
}
