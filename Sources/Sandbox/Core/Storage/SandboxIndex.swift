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
        var version = 1
    }

    private let folder: DataFolder
    private let logger: Logger
    /// Held weakly: the keepers hold the index, and live as long as the sandbox.
    private var keepers: [WeakKeeper] = []

    /// Checks that `document` is an index (it has its header) and prepares to write it again.
    init(_ document: IndexDocument, folder: DataFolder, logger: Logger) throws {
        _ = try document.section(Header.self)
        self.folder = folder
        self.logger = logger
    }

    /// Adds `keeper`'s section to every document written from now on.
    func keep(_ keeper: some IndexSectionKeeper) {
        self.keepers.append(WeakKeeper(keeper: keeper))
    }

    /// Writes the index; a failure is logged, not answered, since the change already happened in memory and
    /// the next write will carry it.
    func persist() {
        let sections = self.keepers.compactMap { $0.keeper?.indexSection }
        // A keeper gone means the sandbox is being torn down: a document without its section must not
        // replace one with it.
        guard sections.count == self.keepers.count else { return }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        encoder.dateEncodingStrategy = .iso8601
        do {
            let data = try encoder.encode(Document(sections: [Header()] + sections))
            try AtomicFile.write(data, to: URL(fileURLWithPath: self.folder.indexPath))
        } catch {
            let failure = SandboxError(code: .index, message: "Cannot write \(self.folder.indexPath)", cause: error)
            self.logger.error("sandbox: \(failure)")
        }
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

    private struct WeakKeeper {
        weak var keeper: (any IndexSectionKeeper)?
    }
}
