import Foundation
import PipelineKit
import Crypto

/// `checksum.sha256`: the SHA-256 of a file, written next to it as `<file>.sha256` (atomically), with
/// progress. Reading resumes nothing: hashing is cheap to redo, and the sidecar is only renamed into place
/// when complete.
struct ChecksumStage: Stage {
    struct Options: Decodable, Sendable {
        var file: String?
        var sidecar: Bool?
    }

    struct Outputs: Encodable, Sendable {
        var sha256: String
        var size: Int64
        var sidecar: String?
    }

    static let type = "checksum.sha256"
    static let summary = "Computes a file's SHA-256 and writes it to <file>.sha256 (a compiled-in sample stage)."
    static let optionSchema = OptionSchema([
        OptionField("file", .string, "The file (default: the input file)."),
        OptionField("sidecar", .boolean, default: true, "Write <file>.sha256 next to it."),
    ])
    static let outputSchema = OutputSchema([
        OutputField("sha256", "Hex digest."),
        OutputField("size", "Bytes hashed."),
        OutputField("sidecar", "The .sha256 file, when written."),
    ])

    init() {}

    func run(_ options: Options, context: StageContext) async throws -> Outputs {
        let path = options.file ?? context.item.path
        guard let handle = FileHandle(forReadingAtPath: path) else { throw StageFailure("cannot read \(path)") }
        defer { try? handle.close() }
        var hasher = SHA256()
        var size: Int64 = 0
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            try Task.checkCancellation()
            hasher.update(data: chunk)
            size += Int64(chunk.count)
            context.reportProgress(StageProgress(completed: size, total: context.item.size, unit: .bytes))
        }
        let digest = hasher.finalize().map { String(format: "%02x", $0) }.joined()
        var sidecar: String?
        if options.sidecar ?? true {
            let url = URL(fileURLWithPath: path + ".sha256")
            try "\(digest)  \((path as NSString).lastPathComponent)\n".write(to: url, atomically: true, encoding: .utf8)
            sidecar = url.path
        }
        return Outputs(sha256: digest, size: size, sidecar: sidecar)
    }
}
