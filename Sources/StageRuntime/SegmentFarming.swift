package import Foundation
package import Logging
package import StageKit

/// A stage type whose work the workers of a shared batch split into the units of a ``SegmentFarm``
/// (`pipeline worker --segments`): its runs publish plans, and every worker encodes their units with the encoding
/// the type provides. A worker thus takes part through its stage registry, without knowing which stage type farms.
package protocol SegmentFarming: Stage {
    /// How this machine encodes a claimed unit: into `folder` (this worker's own), then into `store` for the
    /// worker that joins the units; `logger` gets a line per unit.
    static func segmentEncoding(store: any SegmentStore, folder: URL, logger: Logger) async -> SegmentEncoding
}

/// How a worker encodes the units of other workers' segment plans (``SegmentFarming``).
package struct SegmentEncoding: Sendable {
    /// The encoder build: a worker claims only units planned with its own (see ``SegmentFarm/encoder``).
    package var build: String
    /// Encodes a claimed unit and puts it in the segment store, reporting the fraction encoded to the function it
    /// is given; returns its size and SHA-256.
    package var encode: Encode

    /// How a unit is encoded: the claim and where its progress goes, to its size and SHA-256.
    package typealias Encode =
        @Sendable (SegmentUnitClaim, @escaping @Sendable (Double) -> Void) async throws -> (
            size: Int64, sha256: String
        )

    /// An encoding with `build` and `encode`.
    package init(build: String, encode: @escaping Encode) {
        self.build = build
        self.encode = encode
    }
}
