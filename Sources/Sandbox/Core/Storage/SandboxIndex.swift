import Foundation
import Logging
import StageKit

/// What keeps a section of the index: the index asks each keeper for its section when it writes.
@SandboxActor
protocol IndexSectionKeeper: AnyObject {
    /// The keeper's section as it is now.
    var indexSection: any IndexSection { get }
}

/// `index.json`, written after every change: one document holding every keeper's section.
///
/// The index is written atomically (temporary file, fsync, rename, fsync of the folder), so a crash leaves
/// either the old or the new index, never a torn one.
@SandboxActor
final class SandboxIndex {
    /// The first section of every document: the format's version.
    struct Header: IndexSection {
        /// The version this sandbox reads and writes.
        static let currentVersion = 1

        var version = Self.currentVersion
    }

    private let folder: DataFolder
    private let logger: Logger
    /// Held weakly: the keepers hold the index, and live as long as the sandbox.
    private var keepers: [WeakKeeper] = []

    /// Checks that `document` is an index of the version this sandbox writes, and prepares to write it again.
    ///
    /// - Throws: ``SandboxError`` for an index of another version: written by a newer pipeline, it may hold
    ///   records this sandbox would drop when it writes the index again.
    init(_ document: IndexDocument, folder: DataFolder, logger: Logger) throws {
        let version = try document.section(Header.self).version
        guard version == Header.currentVersion else {
            let writer = version > Header.currentVersion ? "a newer pipeline wrote it" : "no pipeline writes it"
            throw SandboxError(
                code: .index,
                message: "\(document.path) is index version \(version) (\(writer)); this sandbox reads version "
                    + "\(Header.currentVersion) only")
        }
        self.folder = folder
        self.logger = logger
    }

    /// Makes the sections of `keepers`, after the header, the document written from now on.
    ///
    /// ``SandboxPlatforms`` passes every keeper in one list, so that list shows everything `index.json` holds,
    /// and a state cannot be left out of the file by forgetting a line in its own initializer.
    ///
    /// - Throws: ``SandboxError`` when two sections write the same top-level key: the encoder would keep one
    ///   of the two silently, and the other's records would be lost at the next write.
    func keep(_ keepers: [any IndexSectionKeeper]) throws {
        var writers: [String: String] = [:]
        for section in [Header()] + keepers.map(\.indexSection) {
            let name = String(describing: type(of: section))
            for key in try self.topLevelKeys(of: section) {
                if let other = writers.updateValue(name, forKey: key) {
                    let message = "\(other) and \(name) both write the key \(key) of \(self.folder.indexPath)"
                    throw SandboxError(code: .index, message: message)
                }
            }
        }
        self.keepers = keepers.map { WeakKeeper(keeper: $0, name: String(describing: type(of: $0))) }
    }

    /// The sections the next write holds, the header first (only those whose keeper still exists).
    var sections: [any IndexSection] {
        [Header()] + self.keepers.compactMap { $0.keeper?.indexSection }
    }

    /// Writes the index; a failure is logged, not answered, since the change already happened in memory and
    /// the next write will carry it.
    func persist() {
        // A keeper gone means the sandbox is being torn down while something still changes: a document
        // without its section must not replace one with it.
        let gone = self.keepers.filter { $0.keeper == nil }.map(\.name)
        guard gone.isEmpty else {
            let states = gone.joined(separator: ", ")
            self.logger.error(
                "sandbox: not writing \(self.folder.indexPath): \(states) no longer exists, so it would lose records")
            return
        }
        do {
            let data = try Self.encoder.encode(Document(sections: self.sections))
            try AtomicFile.write(data, to: URL(fileURLWithPath: self.folder.indexPath))
        } catch {
            let failure = SandboxError(code: .index, message: "Cannot write \(self.folder.indexPath)", cause: error)
            self.logger.error("sandbox: \(failure)")
        }
    }

    /// The keys `section` writes at the top level of the document.
    private func topLevelKeys(of section: some IndexSection) throws -> [String] {
        do {
            let keys = JSONValue.parse(try Self.encoder.encode(section))?.objectValue?.keys
            return keys.map(Array.init) ?? []
        } catch {
            let failure = "Cannot encode \(type(of: section)) for \(self.folder.indexPath)"
            throw SandboxError(code: .index, message: failure, cause: error)
        }
    }

    /// The format of the file: sorted keys, so a document written again from the same records is the same bytes.
    private static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }

    /// Every section's keys in one JSON object.
    private struct Document: Encodable {
        let sections: [any IndexSection]

        func encode(to encoder: any Encoder) throws {
            // Each section asks the encoder for the top-level keyed container; JSONEncoder hands every one of
            // them the same object, so the keys land side by side.
            for section in self.sections {
                try section.encode(to: encoder)
            }
        }
    }

    /// A keeper, and its type's name for the log when it is gone.
    private struct WeakKeeper {
        weak var keeper: (any IndexSectionKeeper)?
        let name: String
    }
}
