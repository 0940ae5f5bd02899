import Foundation

/// One input file of a run: what `${input.*}` sees.
public struct InputItem: Sendable, Hashable, Codable {
    /// The absolute path.
    public var path: String
    /// The path relative to the input folder (the file name for a single file).
    public var relativePath: String
    /// The size in bytes when the run found it.
    public var size: Int64
    /// The modification time (seconds since 1970) when the run found it.
    public var modified: Double
    /// Fields from the file's sidecar JSON (`clip.mp4.json` or `clip.json`) and the workflow's manifest:
    /// `${input.meta.title}`.
    public var meta: [String: JSONValue]

    /// The names `${input.*}` accepts (the engine checks references with them).
    package static let factNames = ["path", "name", "stem", "ext", "relativePath", "dir", "size", "meta"]

    /// Creates an item.
    public init(
        path: String, relativePath: String, size: Int64, modified: Double, meta: [String: JSONValue] = [:]
    ) {
        self.path = path
        self.relativePath = relativePath
        self.size = size
        self.modified = modified
        self.meta = meta
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        path = try container.decode(String.self, forKey: .path)
        relativePath = try container.decode(String.self, forKey: .relativePath)
        size = try container.decode(Int64.self, forKey: .size)
        modified = try container.decode(Double.self, forKey: .modified)
        meta = try container.decodeIfPresent([String: JSONValue].self, forKey: .meta) ?? [:]
    }

    /// The file name with extension.
    public var name: String { (path as NSString).lastPathComponent }
    /// The file name without extension.
    public var stem: String { (name as NSString).deletingPathExtension }
    /// The extension without the dot, lower-cased.
    public var ext: String { (name as NSString).pathExtension.lowercased() }
    /// The folder that holds the file.
    public var dir: String { (path as NSString).deletingLastPathComponent }

    /// `input.*` as a JSON object, as the engine evaluates expressions.
    package var facts: JSONValue {
        .object([
            "path": .string(path), "name": .string(name), "stem": .string(stem), "ext": .string(ext),
            "relativePath": .string(relativePath), "dir": .string(dir), "size": .int(Int(size)),
            "meta": .object(meta),
        ])
    }
}
