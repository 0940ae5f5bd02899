import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The encoder's PSNR of a segment's frames, kept beside its part file rather than in the checkpoint: 4 bytes a
/// frame (float32, little-endian, display order) in `part-NNNNN.psnr`, so that the checkpoint saved after every
/// segment stays small however long the source is, and a resumed encode still pools every frame exactly.
extension SegmentedTranscode {
    func scoresFile(_ index: Int) -> URL {
        folder.appendingPathComponent(String(format: "part-%05d.psnr", index))
    }

    /// Writes segment `index`'s scores under a temporary name, syncs them and moves them into place: done before
    /// the segment is checkpointed, so a checkpointed segment's scores are complete or absent, never torn.
    func writeScores(_ scores: [Double], of index: Int) throws {
        let file = scoresFile(index)
        let partial = MediaOutput(destination: file).partial
        var bytes = Data(capacity: scores.count * 4)
        for score in scores {
            withUnsafeBytes(of: Float(score).bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
        }
        do {
            try bytes.write(to: partial)
            try MediaOutput.sync(partial)
        } catch {
            unlink(partial.path)
            throw MediaError(code: .outputNotWritable, message: "cannot write \(file.path): \(error)")
        }
        guard rename(partial.path, file.path) == 0 else {
            unlink(partial.path)
            throw MediaError(
                code: .outputNotWritable,
                message: "cannot move \(file.path) into place: \(String(cString: strerror(errno)))")
        }
    }

    /// Every segment's scores, in segment order, or why the encode gets no report: a segment whose encode did not
    /// report every frame, or whose scores file is missing or not as long as its checkpoint says.
    func pooledScores(_ segments: [Segment]) -> Result<[[Double]], ScoresMissing> {
        var pooled: [[Double]] = []
        for segment in segments {
            guard let frames = segment.psnrFrames else {
                return .failure(
                    ScoresMissing(reason: "not reported by libx264 for every frame of segment \(segment.index + 1)"))
            }
            let file = scoresFile(segment.index)
            guard let bytes = try? Data(contentsOf: file), bytes.count == frames * 4 else {
                return .failure(
                    ScoresMissing(
                        reason:
                            "not reported: the encoder's PSNR of segment \(segment.index + 1) (\(file.lastPathComponent)) is missing or incomplete"
                    ))
            }
            pooled.append(
                stride(from: 0, to: bytes.count, by: 4).map { offset in
                    let bits = bytes[bytes.startIndex + offset..<bytes.startIndex + offset + 4].reduce(UInt32(0)) {
                        $0 >> 8 | UInt32($1) << 24
                    }
                    return Double(Float(bitPattern: bits))
                })
        }
        return .success(pooled)
    }

    /// Why a segmented encode that asked for the encoder's PSNR has no report of it.
    struct ScoresMissing: Error {
        let reason: String
    }
}
