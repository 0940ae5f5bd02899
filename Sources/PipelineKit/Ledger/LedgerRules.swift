package import Foundation
package import StageKit

// The rules both ledgers follow (``SQLiteLedger`` and the shared batch's PostgreSQL store), written once: each store
// reads the rows a rule needs, asks the rule, and executes its answer in its own SQL. A rule changed here changes
// both stores; the conformance suite (Tests/SharedBatchTests/StateStoreConformanceTests.swift) holds both to it.

/// A stage checkpoint as a ledger stores it: what the version compaction of an admission reads.
package struct StoredCheckpoint: Sendable, Hashable {
    /// The version of the item it belongs to.
    package var version: Int
    /// The stage id.
    package var stage: String
    /// The stage's status as stored (a ``StageRecord/Status`` raw value).
    package var status: String
    /// The record as stored (``StageRecord/encoded()``).
    package var record: String

    /// A stored checkpoint.
    package init(version: Int, stage: String, status: String, record: String) {
        self.version = version
        self.stage = stage
        self.status = status
        self.record = record
    }
}

/// What admitting a version of an item does to its checkpoints, decided from those of its current version and the
/// two before it.
///
/// Only the previous version's outputs stay reachable (`${previous.*}`); older checkpoints go. A stage the previous
/// version did not finish (or did not run) keeps the outputs of the version before, which did, so a remote object an
/// earlier version made is still found (and updated, not made again). A store executes it in the admission's
/// transaction: for each of ``carried``, the previous version's row is removed and the older one's moves to the
/// previous version; then every row of a version before ``previous`` is removed.
package struct CheckpointCompaction: Sendable {
    /// The oldest version whose rows a store reads for the compaction (the one before the previous).
    package let older: Int
    /// The previous version: the oldest that keeps checkpoints.
    package let previous: Int
    /// The stages whose succeeded checkpoint of ``older`` takes the place of the previous version's (missing or not
    /// succeeded), in order.
    package let carried: [String]
    /// The item as admitted: its current version's checkpoints, and the previous version's succeeded outputs once
    /// the compaction is done.
    package let admitted: AdmittedItem

    /// The compaction for admitting `ref`, from the item's stored checkpoints of versions ``older`` and later.
    /// Throws when a record does not decode.
    package init(admitting ref: ItemVersion, rows: [StoredCheckpoint]) throws {
        let (older, previous) = (ref.version - 2, ref.version - 1)
        let succeeded = StageRecord.Status.succeeded.rawValue
        var current: [String: StageRecord] = [:]
        var kept: [String: StoredCheckpoint] = [:]
        var olderDone: [String: StoredCheckpoint] = [:]
        for row in rows {
            switch row.version {
            case ref.version: current[row.stage] = try StageRecord(decoding: row.record)
            case previous: kept[row.stage] = row
            case older where row.status == succeeded: olderDone[row.stage] = row
            default: continue
            }
        }
        let carried = olderDone.keys.filter { kept[$0]?.status != succeeded }.sorted()
        for stage in carried { kept[stage] = olderDone[stage] }
        var outputs: [String: JSONValue] = [:]
        for (stage, row) in kept where row.status == succeeded {
            outputs[stage] = try StageRecord(decoding: row.record).outputs ?? .null
        }
        self.older = older
        self.previous = previous
        self.carried = carried
        self.admitted = AdmittedItem(ref: ref, stages: current, previousOutputs: outputs)
    }
}

extension CheckpointCompaction {
    /// Which stored checkpoints are an item's current ones, as a condition on the `stages` and `items` tables
    /// (both stores name their columns alike).
    package static let currentCheckpoints = "stages.version = items.version"
    /// Which stored checkpoints hold the outputs of an item's previous version (`${previous.*}`): those it
    /// succeeded in, compacted as an admission leaves them.
    package static let previousOutputs = "stages.version = items.version - 1 AND stages.status = 'succeeded'"
}

extension ItemAdmission {
    /// How much the item's version goes up: one for new content, none to resume.
    package var versionStep: Int { newVersion ? 1 : 0 }
}

/// What the ledger records when a run ends for an item: its status, and for a failure the error.
package struct ItemEnding: Sendable, Hashable {
    /// The item's status from now on.
    package var status: ItemStatus
    /// The failure's message, only for a failed item.
    package var error: String?
    /// The failure's kind as stored, only for a failed item.
    package var errorKind: String?

    /// The ending of `result`; nil for an outcome that leaves the item as it was (reused, skipped).
    package init?(_ result: ItemResult) {
        switch result.outcome {
        case .done: status = .succeeded
        case .failed: status = .failed
        case .interrupted: status = .interrupted
        case .reused, .skipped: return nil
        }
        error = status == .failed ? result.reason : nil
        errorKind = status == .failed ? result.errorKind?.description : nil
    }
}

extension ItemStatus {
    /// Whether setting this status answers the item's cancel request (a cancelled item's request is done).
    package var answersCancelRequest: Bool { self == .cancelled }
}

extension InputItem {
    /// The metadata as a ledger stores it: JSON, nil when there is none.
    package var storedMeta: String? {
        meta.isEmpty ? nil : JSONValue.object(meta).serialized()
    }

    /// Metadata as a ledger stored it (none for nil, or for text that is not a JSON object).
    package static func meta(stored: String?) -> [String: JSONValue] {
        stored.flatMap { try? JSONValue(parsing: $0).objectValue } ?? [:]
    }
}

extension LedgerItem {
    /// An item as a ledger stores it, column by column: a status this pipeline does not know reads as pending,
    /// an error without a kind as `failed`.
    package init(
        storedID id: Int64, version: Int, fingerprint: String, path: String, relativePath: String, size: Int64,
        modified: Double, meta: String?, status: String, digest: String?, error: String?, errorKind: String?,
        updatedAt: Date
    ) {
        self.init(
            id: id, version: version, fingerprint: fingerprint,
            input: InputItem(
                path: path, relativePath: relativePath, size: size, modified: modified,
                meta: InputItem.meta(stored: meta)),
            status: ItemStatus(rawValue: status) ?? .pending, digest: digest,
            error: error.map { FailureReport(message: $0, kind: errorKind.map { ErrorKind(rawValue: $0) } ?? .failed) },
            updatedAt: updatedAt)
    }
}

extension FingerprintCacheEntry {
    /// The media probe as a ledger stores it: JSON, nil when the file was not probed.
    package var storedMedia: String? {
        media.flatMap { try? JSONEncoder().encode($0) }.map { String(decoding: $0, as: UTF8.self) }
    }

    /// An entry as a ledger stores it, column by column; nil for a fingerprint method this pipeline does not know
    /// (the file is fingerprinted again). A media probe that does not decode is probed again.
    package init?(
        storedPath path: String, size: Int64, modifiedNanoseconds: Int64, inode: Int64, device: Int64,
        method: String, fingerprint: String, media: String?
    ) {
        guard let method = FingerprintMethod(rawValue: method) else { return nil }
        self.init(
            stamp: FileStamp(
                path: path, size: size, modifiedNanoseconds: modifiedNanoseconds, inode: inode, device: device),
            method: method, fingerprint: fingerprint,
            media: media.flatMap { try? JSONDecoder().decode(MediaProbeResult.self, from: Data($0.utf8)) })
    }
}
