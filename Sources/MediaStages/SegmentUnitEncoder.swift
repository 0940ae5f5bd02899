package import Foundation
package import Logging
import StageKit
package import StageRuntime

#if canImport(Glibc)
    import Glibc
#endif

/// Encodes one unit of a segmented encode that workers share (see ``SegmentFarm``) and puts it in the segment
/// store: a time range of the video, or the whole audio, with the plan's settings and thread count, so the bytes
/// are the same whichever worker encodes it.
package struct SegmentUnitEncoder: Sendable {
    /// Where encoded units go for the joining worker.
    package let store: any SegmentStore
    /// Where units are written before they go to the store.
    package let folder: URL
    let logger: Logger

    /// An encoder writing into `folder` and putting units in `store`.
    package init(store: any SegmentStore, folder: URL, logger: Logger) {
        self.store = store
        self.folder = folder
        self.logger = logger
    }

    /// The store's key of a unit.
    package static func key(of unit: SegmentUnit, in plan: String) throws -> SegmentKey {
        try SegmentKey(plan: plan, unit: name(of: unit))
    }

    /// The unit's name: `video-00007` or `audio`.
    static func name(of unit: SegmentUnit) -> String {
        unit.kind == .audio ? "audio" : String(format: "video-%05d", unit.index)
    }

    /// The local file of a unit of `plan`.
    package func file(of unit: SegmentUnit, in plan: String) -> URL {
        folder.appendingPathComponent(plan).appendingPathComponent("\(Self.name(of: unit)).mp4")
    }

    /// Encodes the claimed unit into its local file (written under a temporary name, synced, renamed) and puts it
    /// in the store; returns its size and SHA-256. `progress` gets the fraction of the unit encoded.
    package func encode(
        _ claim: SegmentUnitClaim, progress: @escaping @Sendable (Double) -> Void = { _ in }
    ) async throws -> EncodedUnit {
        let unit = claim.unit
        let settings = try Self.settings(for: unit, of: claim.plan)
        let file = file(of: unit, in: claim.plan.id)
        try FileManager.default.createDirectory(
            at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        let partial = MediaOutput(destination: file).partial
        logger.info(
            "encoding \(Self.name(of: unit)) of plan \(claim.plan.id) (\(String(format: "%.1f", unit.seconds)) s of \(claim.plan.input))"
        )
        do {
            _ = try await MediaToolkit.transcode(
                claim.plan.input, to: partial.path, settings: settings, logger: logger,
                progress: { done, total in if total > 0 { progress(min(done / total, 1)) } })
            try MediaOutput.sync(partial)
            guard rename(partial.path, file.path) == 0 else {
                throw MediaError(
                    code: .outputNotWritable,
                    message: "cannot move \(Self.name(of: unit)) into place: \(String(cString: strerror(errno)))")
            }
        } catch {
            unlink(partial.path)
            throw error
        }
        let encoded = EncodedUnit(
            file: file, size: MediaOutput.size(of: file) ?? 0, sha256: try SegmentedTranscode.sha256(of: file))
        try await store.put(file, as: try Self.key(of: unit, in: claim.plan.id), sha256: encoded.sha256)
        return encoded
    }

    /// The settings a unit is encoded with: the plan's, with its thread count, for its range or the audio alone.
    static func settings(for unit: SegmentUnit, of plan: SegmentPlan) throws -> TranscodeSettings {
        var settings: TranscodeSettings
        do {
            settings = try JSONDecoder().decode(TranscodeSettings.self, from: try JSONEncoder().encode(plan.settings))
        } catch {
            throw MediaError(
                code: .invalidArgument, message: "the segment plan \(plan.id) has settings this pipeline cannot read")
        }
        settings.mode = .transcode
        settings.threads = plan.threads
        settings.faststart = false
        switch unit.kind {
        case .video:
            settings.streams = .video
            settings.range = TranscodeSettings.TimeRange(start: unit.start, end: unit.end)
        case .audio:
            settings.streams = .audioAndText
            settings.range = nil
        }
        return settings
    }
}

/// A unit encoded into a local file and put in the segment store.
package struct EncodedUnit: Sendable, Hashable {
    /// The local file.
    package var file: URL
    /// Its size in bytes.
    package var size: Int64
    /// Its SHA-256 (lowercase hex).
    package var sha256: String
}
