/// What the CRF search of `quality.target` chose, and the probes it chose from: the output `crfSearch`.
public struct CRFSearchReport: Codable, Sendable, Equatable {
    /// One encode of the samples at a CRF.
    public struct Probe: Codable, Sendable, Equatable {
        /// The CRF: whole, or (x264, x265) in sixteenths between two whole ones.
        public var crf: Double
        /// The samples' score, pooled as the target asks.
        public var score: Double
        /// The video's estimated size in bytes, for the whole source: the samples' bytes scaled to its duration.
        public var size: Int64
    }

    /// The CRF the export is encoded with: x264 and x265 in sixteenths, SVT-AV1 whole.
    public var crf: Double
    /// The pooled score asked for.
    public var target: Double
    /// The metric: vmaf, ssim or psnr.
    public var metric: String
    /// The figure the target applies to: mean or low1.
    public var pool: String
    /// Every probe, by CRF; empty when the source has nothing to search (the export is remuxed).
    public var probes: [Probe]
    /// Why the CRF is not the one that meets the target: a size budget won, or the target is out of the bounds' reach.
    public var note: String?
}
