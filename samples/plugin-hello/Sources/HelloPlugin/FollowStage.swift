import Foundation
import StageKit

/// `hello.follow`: copies a file into a folder. With `"stream": true` it copies the export it follows while the
/// export writes it, the head last, as a streaming upload sends it: it declares the follower role and the option
/// that names the file it reads, and the engine hands it the export through ``FollowedExport``.
struct FollowStage: Stage {
    struct Options: StageOptions {
        /// The file to copy.
        @Option("The file to copy (default: the input file); to stream an export, its ${EXPORT.path}.")
        var file: String?
        /// Where the copy goes.
        @Option("The folder the copy goes to.") var to: String
    }

    struct Outputs: Encodable, Sendable {
        var path: String
        var size: Int64
        var copiedWhileWritten: Int64
    }

    static let stageType = "hello.follow"
    static let summary = "Copies a file into a folder, or an export while it is written (a sample plugin)."
    static let outputSchema = OutputSchema([
        OutputField("path", "The copy."),
        OutputField("size", "Its size in bytes."),
        OutputField("copiedWhileWritten", "Bytes copied before the export finished (0 when it did not stream)."),
    ])
    static let streamRole = StreamRole.follower
    static let inputFileOption: String? = "file"
    static let landingOutput: String? = "path"

    /// Bytes read and written at a time.
    private static let chunk = 1 << 20

    init() {}

    func run(_ options: Options, context: StageContext) async throws -> Outputs {
        let source = options.file ?? context.item.path
        let target = URL(fileURLWithPath: options.to).appendingPathComponent((source as NSString).lastPathComponent)
        try FileManager.default.createDirectory(
            at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
        guard let export = context.services[FollowedExportKey.self] else {
            let size = try await Self.copy(from: source, to: target, range: 0..<Int64.max, truncating: true)
            return Outputs(path: target.path, size: size, copiedWhileWritten: 0)
        }
        return try await follow(export, into: target)
    }

    /// Copies the export's final bytes as they come, then its head from the finished file. A new attempt of the
    /// export, or a file written again, is copied again from its head on.
    private func follow(_ export: any FollowedExport, into target: URL) async throws -> Outputs {
        var attempt = 0
        var copied: Int64 = 0
        var whileWritten: Int64 = 0
        var state = try await export.waitFor(bytes: 1, of: attempt)
        while true {
            if let failure = state.failure { throw StageFailure("the export it follows did not finish: \(failure)") }
            guard let source = state.file else { throw StageFailure("the export it follows wrote no file") }
            if state.attempt != attempt || state.rewritten {
                attempt = state.attempt
                copied = state.head
                whileWritten = 0
            }
            let end = state.finishedSize ?? state.final
            if end > copied {
                _ = try await Self.copy(from: source, to: target, range: copied..<end, truncating: false)
                if state.finishedSize == nil { whileWritten += end - copied }
                copied = end
            }
            if let size = state.finishedSize {
                _ = try await Self.copy(from: source, to: target, range: 0..<min(state.head, size), truncating: false)
                try await BlockingWork.run { try FileHandle(forWritingTo: target).truncate(atOffset: UInt64(size)) }
                return Outputs(path: target.path, size: size, copiedWhileWritten: whileWritten)
            }
            state = try await export.waitFor(bytes: copied + 1, of: attempt)
        }
    }

    /// Copies `range` of `source` (to its end at most) to the same offsets of `target`, which it creates, a chunk at
    /// a time; returns the bytes copied.
    private static func copy(
        from source: String, to target: URL, range: Range<Int64>, truncating: Bool
    ) async throws -> Int64 {
        if truncating || !FileManager.default.fileExists(atPath: target.path) {
            guard FileManager.default.createFile(atPath: target.path, contents: nil) else {
                throw StageFailure("cannot create \(target.path)")
            }
        }
        var offset = range.lowerBound
        while offset < range.upperBound {
            try Task.checkCancellation()
            let length = Int(min(Int64(chunk), range.upperBound - offset))
            let start = offset
            let read = try await BlockingWork.run { () -> Int in
                let input = try FileHandle(forReadingFrom: URL(fileURLWithPath: source))
                defer { try? input.close() }
                try input.seek(toOffset: UInt64(start))
                let bytes = try input.read(upToCount: length) ?? Data()
                let output = try FileHandle(forWritingTo: target)
                defer { try? output.close() }
                try output.seek(toOffset: UInt64(start))
                try output.write(contentsOf: bytes)
                return bytes.count
            }
            guard read > 0 else { break }
            offset += Int64(read)
        }
        return offset - range.lowerBound
    }
}
