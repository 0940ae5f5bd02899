import Foundation
import StageKit

/// An asset of the generic "another platform" API.
struct AssetRecord: Codable, Sendable {
    var id: String
    var name: String
    var size: Int64
    var title: String?
    var tags: [String]
    /// `created` until completed, then `ready`.
    var status: String
    var sha256: String?
    var uploadID: String
    var createdAt: Date
    var modifiedAt: Date
}

/// The generic API's part of `index.json`.
struct GenericAssetSection: IndexSection {
    var assets: [String: AssetRecord] = [:]
}
