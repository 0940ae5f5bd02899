import Foundation
import StageKit

extension SandboxState {
    /// All assets, newest first.
    func assets() -> [AssetRecord] {
        self.index.assets.values.sorted { ($0.createdAt, $0.id) > ($1.createdAt, $1.id) }
    }

    /// Creates an asset of the generic API with its upload, or returns the one an earlier request
    /// with the same `Idempotency-Key` created (second value `false`).
    func createAsset(name: String, size: Int64, idempotencyKey: String?) -> (asset: AssetRecord, created: Bool) {
        let scopedKey = idempotencyKey.map { "asset:" + $0 }
        if let scopedKey, let existingID = self.index.idempotencyKeys[scopedKey],
            let existing = self.index.assets[existingID]
        {
            return (existing, false)
        }
        let now = Date()
        let id = "ast_" + RandomID.hex(bytes: 8)
        _ = self.addUpload(id: id, uploadProtocol: .streaming, assetID: id, length: size, token: nil)
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
        self.index.assets[id] = asset
        if let scopedKey {
            self.index.idempotencyKeys[scopedKey] = id
        }
        self.persist()
        return (asset, true)
    }

    func asset(_ id: String) -> AssetRecord? {
        self.index.assets[id]
    }

    func updateAsset(_ id: String, title: String??, tags: [String]?) throws -> AssetRecord {
        guard var asset = self.index.assets[id] else { throw APIError.notFound("asset") }
        if let title { asset.title = title }
        if let tags { asset.tags = tags }
        asset.modifiedAt = Date()
        self.index.assets[id] = asset
        self.persist()
        return asset
    }

    func deleteAsset(_ id: String) -> Bool {
        guard let asset = self.index.assets.removeValue(forKey: id) else { return false }
        self.index.uploads.removeValue(forKey: asset.uploadID)
        self.folder.removeUpload(asset.uploadID)
        self.index.idempotencyKeys = self.index.idempotencyKeys.filter { $0.value != id }
        self.persist()
        return true
    }

    /// Marks an asset ready with the digest of its bytes (computed by the caller, off the actor).
    func markAssetReady(_ id: String, sha256: String) throws -> AssetRecord {
        guard var asset = self.index.assets[id] else { throw APIError.notFound("asset") }
        asset.status = "ready"
        asset.sha256 = sha256
        asset.modifiedAt = Date()
        self.index.assets[id] = asset
        self.persist()
        return asset
    }
}
