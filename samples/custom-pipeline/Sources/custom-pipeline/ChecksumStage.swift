import Crypto
import Foundation
import StageKit

/// `checksum.blocks`: a content fingerprint of a file that survives a crash half way. The file is hashed
/// in 1 MiB blocks; the SHA-256 of every block is checkpointed as it goes, so a killed run continues
/// with the next block. The result is the SHA-256 of the block digests (a tree hash), written next to
/// the file as `<file>.treehash`.
struct ChecksumStage: Stage {
    struct Options: StageOptions {
        @Option("The file (default: the input file).") var file: String?
        @Option("Write <file>.treehash next to it.") var sidecar = true
    }

    struct Outputs: StageOutputs {
        @Output("SHA-256 of the blocks' SHA-256s, hex.") var treeHash = ""
        @Output("Number of 1 MiB blocks.") var blocks = 0
        @Output("Bytes hashed.") var size: Int64 = 0
        @Output("The .treehash file, when written.") var sidecar: String? = nil
    }

    /// The digests of the blocks hashed so far.
    struct Progress: Codable {
        var size: Int64
        var digests: [String]
    }

    static let stageType = "checksum.blocks"
    static let summary = "Tree hash of a file in 1 MiB blocks, checkpointed per block (a compiled-in sample stage)."

    static let blockSize = 1 << 20

    init() {}

    func run(_ options: Options, context: StageContext) async throws -> Outputs {
        let path = options.file ?? context.item.path
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw StageFailure("cannot read \(path)", kind: .invalidInput)
        }
        defer { try? handle.close() }
        let size = Int64(try handle.seekToEnd())
        var progress =
            context.lastCheckpoint(as: Progress.self).flatMap { $0.size == size ? $0 : nil }
            ?? Progress(size: size, digests: [])
        if !progress.digests.isEmpty { context.logger.info("resuming at block \(progress.digests.count + 1)") }
        try handle.seek(toOffset: UInt64(progress.digests.count * Self.blockSize))
        while let block = try handle.read(upToCount: Self.blockSize), !block.isEmpty {
            try Task.checkCancellation()
            progress.digests.append(HexDigest.text(SHA256.hash(data: block)))
            if progress.digests.count % 8 == 0 { try await context.checkpoint(progress) }
            context.reportProgress(
                StageProgress(completed: Int64(progress.digests.count * Self.blockSize), total: size, unit: .bytes))
        }
        let treeHash = HexDigest.text(SHA256.hash(data: Data(progress.digests.joined().utf8)))
        var sidecar: String?
        if options.sidecar {
            let url = URL(fileURLWithPath: path + ".treehash")
            try "\(treeHash)  \((path as NSString).lastPathComponent)\n".write(
                to: url, atomically: true, encoding: .utf8)
            sidecar = url.path
        }
        return Outputs(treeHash: treeHash, blocks: progress.digests.count, size: size, sidecar: sidecar)
    }
}
