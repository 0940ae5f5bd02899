import Foundation
import StageKit

/// The assets of the generic "another platform" API, each with an upload of the core.
@SandboxActor
final class GenericAssetState: IndexSectionKeeper {
    nonisolated let core: SandboxCore
    private var section: GenericAssetSection

    var indexSection: any IndexSection { self.section }

    /// Reads the generic API's section of `document`.
    init(_ document: IndexDocument, core: SandboxCore) throws {
        self.section = try document.section(GenericAssetSection.self)
        self.core = core
    }

    /// How many assets there are, for `GET /sandbox/stats`.
    var count: Int {
        self.section.assets.count
    }

    /// All assets, newest first.
    func assets() -> [AssetRecord] {
        self.section.assets.values.sorted { ($0.createdAt, $0.id) > ($1.createdAt, $1.id) }
    }

    /// Creates an asset of the generic API with its upload, or returns the one an earlier request
    /// with the same `Idempotency-Key` created (second value `false`).
    func createAsset(name: String, size: Int64, idempotencyKey: String?) -> (asset: AssetRecord, created: Bool) {
        if let existingID = self.core.idempotencyKeys.created(by: idempotencyKey, in: .asset),
            let existing = self.section.assets[existingID]
        {
            return (existing, false)
        }
        let now = Date()
        let id = "ast_" + RandomID.hex(bytes: 8)
        _ = self.core.uploads.add(id: id, uploadProtocol: .streaming, assetID: id, length: size, token: nil)
        let asset = AssetRecord(
            id: id,
            name: name,
            size: size,
            title: nil,
            tags: [],
            status: "created",
            sha256: nil,
            uploadID: id,
            createdAt: now,
            modifiedAt: now
        )
        self.section.assets[id] = asset
        self.core.idempotencyKeys.remember(idempotencyKey, in: .asset, created: id)
        self.core.index.persist()
        return (asset, true)
    }

    /// The asset `id`, `nil` when there is none (the routes answer 404).
    func asset(_ id: String) -> AssetRecord? {
        self.section.assets[id]
    }

    /// `PATCH /generic/assets/ID`: sets the title (`.some(nil)` clears it) and the tags given, and writes the
    /// index.
    func updateAsset(_ id: String, title: String??, tags: [String]?) throws -> AssetRecord {
        guard var asset = self.section.assets[id] else { throw APIError.notFound("asset") }
        if let title { asset.title = title }
        if let tags { asset.tags = tags }
        asset.modifiedAt = Date()
        self.section.assets[id] = asset
        self.core.index.persist()
        return asset
    }

    /// Deletes an asset with its upload and forgets the idempotency key that created it, so a create retried
    /// with that key makes a new asset. `false` when there is no such asset.
    func deleteAsset(_ id: String) -> Bool {
        guard let asset = self.section.assets.removeValue(forKey: id) else { return false }
        self.core.uploads.remove(asset.uploadID)
        self.core.idempotencyKeys.forget([id])
        self.core.index.persist()
        return true
    }

    /// Marks an asset ready with the digest of its bytes (computed by the caller, off the actor).
    func markAssetReady(_ id: String, sha256: String) throws -> AssetRecord {
        guard var asset = self.section.assets[id] else { throw APIError.notFound("asset") }
        asset.status = "ready"
        asset.sha256 = sha256
        asset.modifiedAt = Date()
        self.section.assets[id] = asset
        self.core.index.persist()
        return asset
    }

    /// The API JSON of an asset.
    func render(_ asset: AssetRecord) -> JSONValue {
        AssetRepresentation.render(
            asset, upload: self.core.uploads.record(asset.uploadID), baseURL: self.core.address.baseURL)
    }
}
