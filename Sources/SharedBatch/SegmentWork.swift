package import StageRuntime

/// What a worker needs to take part in segmented encodes that workers share (`pipeline worker --segments`):
/// where units go, which encoder build it has, and how it encodes one.
package struct SegmentWork: Sendable {
    /// Where encoded units go for the joining worker.
    package var store: any SegmentStore
    /// This worker's encoder build: it claims only units planned with it.
    package var encoder: String
    /// Encodes a claimed unit and puts it in ``store``, reporting the fraction encoded to the function it is
    /// given; returns its size and SHA-256. Cancelled when the unit's lease is lost.
    package var encode: Encode

    /// How a unit is encoded: the claim and where its progress goes, to its size and SHA-256.
    package typealias Encode =
        @Sendable (SegmentUnitClaim, @escaping @Sendable (Double) -> Void) async throws -> (
            size: Int64, sha256: String
        )

    /// Segment work with `store`, `encoder` and `encode`.
    package init(
        store: any SegmentStore, encoder: String, encode: @escaping Encode
    ) {
        self.store = store
        self.encoder = encoder
        self.encode = encode
    }
}
