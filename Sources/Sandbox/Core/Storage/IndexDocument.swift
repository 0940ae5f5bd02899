import Foundation
import StageKit

/// A platform's part of `index.json`: its own top-level keys, beside the other platforms' keys in the one
/// document. Keeping every part at the top level keeps the file the sandbox has always written.
protocol IndexSection: Codable, Sendable {
    /// The section of a data folder that has no index yet.
    init()
}

/// `index.json` as the sandbox found it when it started: each platform reads its own section from it.
struct IndexDocument: Sendable {
    let path: String
    /// The file's bytes; `nil` when the folder has no index yet.
    let data: Data?

    /// Reads the index of `folder`.
    static func read(_ folder: DataFolder) throws -> IndexDocument {
        guard FileManager.default.fileExists(atPath: folder.indexPath) else {
            return IndexDocument(path: folder.indexPath, data: nil)
        }
        do {
            return IndexDocument(
                path: folder.indexPath, data: try Data(contentsOf: URL(fileURLWithPath: folder.indexPath)))
        } catch {
            throw SandboxError(code: .index, message: "Cannot read \(folder.indexPath)", cause: error)
        }
    }

    /// The section `Section` of the document; an empty one when there is no document yet.
    func section<Section: IndexSection>(_: Section.Type) throws -> Section {
        guard let data else { return Section() }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        do {
            return try decoder.decode(Section.self, from: data)
        } catch {
            throw SandboxError(code: .index, message: "Cannot read \(self.path)", cause: error)
        }
    }
}
