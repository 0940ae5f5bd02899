import Foundation
import StageKit

/// `acme.checksum`: the SHA-256 of each part of a file, as S3's multipart checksums are made. It checkpoints every
/// part, so a run stopped half way goes on from the last part it hashed.
struct ChecksumStage: Stage {
    struct Options: StageOptions {
        @Option("The file to hash (default: the input file).") var file: String?
        @Option("Bytes per part, from 1MiB to 64MiB.", minimum: 1_048_576, maximum: 67_108_864)
        var partSize = ByteCount(8 << 20)
    }

    struct Outputs: StageOutputs {
        @Output("The SHA-256 of each part, in hex.") var parts: [String] = []
        @Output("Bytes per part.") var partSize: Int64 = 0
        @Output("Bytes hashed.") var size: Int64 = 0
    }

    static let stageType = "acme.checksum"
    static let summary = "SHA-256 of each part of a file, checkpointed per part."

    init() {}

    /// What identifies the file's content cheaply: a changed file starts the work over.
    struct FileFacts: Codable, Equatable, Sendable {
        var size: Int64
        var modified: Double
    }

    /// The resume data: the parts hashed so far, and the file they were hashed from.
    struct Saved: Codable {
        var file: FileFacts
        var parts: [String]
    }

    func run(_ options: Options, context: StageContext) async throws -> Outputs {
        let path = options.file ?? context.item.path
        let partSize = options.partSize.bytes
        let file = try await Self.facts(of: path)
        var saved = Saved(file: file, parts: [])
        let partCount = Int((file.size + partSize - 1) / partSize)
        while saved.parts.count < partCount {
            // At least once per second of work: a part takes well under a second (64 MiB at most).
            try Task.checkCancellation()
            let offset = Int64(saved.parts.count) * partSize
            let length = min(partSize, file.size - offset)
            // Reading blocks: BlockingWork.run keeps it off the threads every task shares.
            let digest = try await BlockingWork.run {
                try FileHashing.sha256(path: path, ranges: [(offset: offset, length: length)])
            }
            saved.parts.append(HexDigest.text(digest))
            context.reportProgress(StageProgress(completed: offset + length, total: file.size, unit: .bytes))
        }
        guard try await Self.facts(of: path) == file else {
            // Another attempt may find the file at rest: retryable, of a kind of this stage's own.
            throw StageFailure.retryable("\(path) changed while it was hashed", kind: ErrorKind("file-changed"))
        }
        return Outputs(parts: saved.parts, partSize: partSize, size: file.size)
    }

    /// The size and modification time of the file at `path`.
    static func facts(of path: String) async throws -> FileFacts {
        let facts = try await BlockingWork.run { () -> FileFacts? in
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
                let size = (attributes[.size] as? NSNumber)?.int64Value,
                let modified = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970
            else { return nil }
            return FileFacts(size: size, modified: modified)
        }
        guard let facts else {
            // Fatal, of kind invalid-input: trying again cannot help.
            throw StageFailure("cannot read \(path)", kind: .invalidInput)
        }
        return facts
    }
}
