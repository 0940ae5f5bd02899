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

    struct Outputs: StageOutputs {
        @Output("The copy.") var path = ""
        @Output("Its size in bytes.") var size: Int64 = 0
        @Output(
            "Bytes copied before the export finished, over every attempt and rewrite (0 when it did not stream).")
        var copiedWhileWritten: Int64 = 0
    }

    static let stageType = "hello.follow"
    static let summary = "Copies a file into a folder, or an export while it is written (a sample plugin)."
    static let streamRole = StreamRole.follower
    static let inputFileOption = "file"
    static let landingOutput = "path"

    /// Bytes read and written at a time.
    private static let chunk = 1 << 20

    init() {}

    func run(_ options: Options, context: StageContext) async throws -> Outputs {
        let source = options.file ?? context.item.path
        let target = URL(fileURLWithPath: options.to).appendingPathComponent((source as NSString).lastPathComponent)
        try FileManager.default.createDirectory(
            at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
        guard FileManager.default.createFile(atPath: target.path, contents: nil),
            let output = FileHandle(forWritingAtPath: target.path)
        else { throw StageFailure("cannot write \(target.path)") }
        defer { try? output.close() }
        guard let export = context.services[FollowedExportKey.self] else {
            guard let input = FileHandle(forReadingAtPath: source) else { throw StageFailure("cannot read \(source)") }
            defer { try? input.close() }
            let size = try await Self.copy(from: input, to: output, range: 0..<Int64.max)
            return Outputs(path: target.path, size: size, copiedWhileWritten: 0)
        }
        let (size, whileWritten) = try await follow(export, into: output)
        return Outputs(path: target.path, size: size, copiedWhileWritten: whileWritten)
    }

    /// Copies the export's final bytes as they come, then its head from the finished file; returns the file's size
    /// and the bytes copied before it was finished (over every attempt and rewrite: the work streaming did). The file
    /// is opened once per attempt and kept open: the export renames it into place when it finishes. A new attempt
    /// of the export is a new file, copied from its head on; a file written again is copied from its head on once it
    /// is finished, from the finished file.
    private func follow(_ export: any FollowedExport, into output: FileHandle) async throws -> (Int64, Int64) {
        var (attempt, rewritten) = (0, false)
        var input: FileHandle?
        defer { try? input?.close() }
        var (copied, whileWritten): (Int64, Int64) = (0, 0)
        var state = try await export.waitFor(bytes: 1, of: attempt)
        while true {
            if let failure = state.failure { throw StageFailure("the export it follows did not finish: \(failure)") }
            // Once per attempt, and once when a rewrite is first seen (the state says so until the export ends).
            if state.attempt != attempt || (state.rewritten && !rewritten) {
                try? input?.close()
                (attempt, rewritten, input, copied) = (state.attempt, state.rewritten, nil, state.head)
            }
            if rewritten, state.finishedSize == nil {
                // Nothing is final until the export finishes; the file to copy then is the finished one.
                state = try await export.waitFor(bytes: .max, of: attempt)
                continue
            }
            guard let file = state.file else { throw StageFailure("the export it follows wrote no file") }
            if input == nil {
                input = FileHandle(forReadingAtPath: file)
                if input == nil, state.finishedSize == nil {
                    // Renamed into place meanwhile: the export finished, or began again.
                    state = try await export.waitFor(bytes: .max, of: attempt)
                    continue
                }
            }
            guard let input else { throw StageFailure("cannot read \(file)") }
            let end = state.finishedSize ?? state.final
            if end > copied {
                let count = try await Self.copy(from: input, to: output, range: copied..<end)
                copied += count
                if state.finishedSize == nil { whileWritten += count }
            }
            if let size = state.finishedSize {
                _ = try await Self.copy(from: input, to: output, range: 0..<min(state.head, size))
                try await BlockingWork.run { try output.truncate(atOffset: UInt64(size)) }
                return (size, whileWritten)
            }
            state = try await export.waitFor(bytes: copied + 1, of: attempt)
        }
    }

    /// Copies `range` of `input` (to its end at most) to the same offsets of `output`, a chunk at a time; returns the
    /// bytes copied.
    private static func copy(from input: FileHandle, to output: FileHandle, range: Range<Int64>) async throws -> Int64 {
        var offset = range.lowerBound
        while offset < range.upperBound {
            try Task.checkCancellation()
            let (start, length) = (offset, Int(min(Int64(chunk), range.upperBound - offset)))
            let read = try await BlockingWork.run { () -> Int in
                try input.seek(toOffset: UInt64(start))
                let bytes = try input.read(upToCount: length) ?? Data()
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
