import Foundation
import Logging
public import StageKit

#if canImport(Glibc)
    import Glibc
#endif

/// `file.copy`: copies a file into a folder. The bytes go to a hidden partial file that is fsynced and
/// renamed into place only when complete; after a crash the copy continues from its last checkpoint.
public struct FileCopyStage: Stage {
    /// The options of `file.copy`.
    public struct Options: StageOptions {
        /// The file to copy.
        @Option("The file to copy.") public var from: String
        /// The destination folder.
        @Option("The destination folder.") public var to: String
        /// The destination file name (default: the source's).
        @Option("The destination file name (default: the source's name).") public var name: String?
        /// Whether to create the destination folder.
        @Option("Create the destination folder if it is missing.") public var createFolder = true

        public init() {}
    }

    /// The outputs of `file.copy`.
    public struct Outputs: StageOutputs {
        /// The copy's path.
        @Output("The copy's path.") public var path = ""
        /// Its size in bytes.
        @Output("Its size in bytes.") public var size: Int64 = 0

        public init() {}
    }

    /// What a copy in progress checkpoints.
    struct Progress: Codable {
        var source: String
        var sourceSize: Int64
        var sourceModified: Double
        var destination: String
        /// Bytes known to be durable in the partial file.
        var copied: Int64
        /// Set just before the rename: after a crash, a destination of the right size is the finished copy.
        var renaming: Bool
    }

    public static let stageType = "file.copy"

    /// The copy: `name` (else the source's name) in the folder `to`, relative as `to` is.
    public static func destinations(in options: Options) -> [String] {
        let name = options.name ?? URL(fileURLWithPath: options.from).lastPathComponent
        return [options.to.hasSuffix("/") ? options.to + name : options.to + "/" + name]
    }
    public static let landingOutput = "path"
    public static let summary = "Copies a file into a folder atomically; resumes a partial copy after a crash."

    /// Bytes between checkpoints.
    static let checkpointInterval: Int64 = 64 * 1024 * 1024
    static let chunkSize = 1024 * 1024

    public init() {}

    public func run(_ options: Options, context: StageContext) async throws -> Outputs {
        let source = URL(fileURLWithPath: options.from)
        let folder = URL(fileURLWithPath: options.to)
        let name = options.name ?? source.lastPathComponent
        guard !name.isEmpty, !name.contains("/"), name != ".", name != ".." else {
            throw StageFailure("name \"\(name)\" is not a file name")
        }
        let destination = folder.appendingPathComponent(name)
        let partial = folder.appendingPathComponent(".\(name).partial")
        var info = stat()
        guard stat(source.path, &info) == 0 else {
            throw StageFailure("cannot read \(source.path): \(String(cString: strerror(errno)))", kind: .invalidInput)
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw StageFailure("\(source.path) is not a regular file", kind: .invalidInput)
        }
        let size = Int64(info.st_size)
        let modified = Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
        if options.createFolder {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }

        var progress = Progress(
            source: source.path, sourceSize: size, sourceModified: modified, destination: destination.path, copied: 0,
            renaming: false)
        if let previous = context.lastCheckpoint(as: Progress.self), previous.source == progress.source,
            previous.sourceSize == size, previous.sourceModified == modified, previous.destination == destination.path
        {
            if previous.renaming, Self.size(of: destination) == size {
                context.logger.info("the copy was already complete")
                return Outputs.with {
                    $0.path = destination.path
                    $0.size = size
                }
            }
            progress.copied = min(previous.copied, Self.size(of: partial) ?? 0)
            if progress.copied > 0 { context.logger.info("resuming the copy at byte \(progress.copied) of \(size)") }
        }

        try await copy(from: source, to: partial, progress: &progress, context: context)
        progress.renaming = true
        try await context.checkpoint(progress)
        try await BlockingWork.run {
            guard rename(partial.path, destination.path) == 0 else {
                throw StageFailure(
                    "cannot rename \(partial.path) to \(destination.path): \(String(cString: strerror(errno)))")
            }
            let folderDescriptor = open(folder.path, O_RDONLY | O_DIRECTORY)
            if folderDescriptor >= 0 {
                fsync(folderDescriptor)
                close(folderDescriptor)
            }
        }
        return Outputs.with {
            $0.path = destination.path
            $0.size = size
        }
    }

    private func copy(from source: URL, to partial: URL, progress: inout Progress, context: StageContext) async throws {
        let input = open(source.path, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw StageFailure("cannot open \(source.path): \(String(cString: strerror(errno)))") }
        defer { close(input) }
        let output = open(partial.path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        guard output >= 0 else { throw Self.ioFailure("cannot create", partial) }
        defer { close(output) }
        guard ftruncate(output, off_t(progress.copied)) == 0 else { throw Self.ioFailure("cannot truncate", partial) }

        var sinceCheckpoint: Int64 = 0
        let (sourcePath, partialURL) = (source.path, partial)
        while progress.copied < progress.sourceSize {
            try Task.checkCancellation()
            let wanted = Int(min(Int64(Self.chunkSize), progress.sourceSize - progress.copied))
            let offset = progress.copied
            // Reads and writes block: they run on BlockingWork, one chunk at a time.
            let count = try await BlockingWork.run {
                try Self.copyChunk(
                    from: input, to: output, at: offset, count: wanted, source: sourcePath, partial: partialURL)
            }
            progress.copied += Int64(count)
            sinceCheckpoint += Int64(count)
            context.reportProgress(StageProgress(completed: progress.copied, total: progress.sourceSize, unit: .bytes))
            if sinceCheckpoint >= Self.checkpointInterval && progress.copied < progress.sourceSize {
                try await BlockingWork.run { try Self.sync(output, partialURL) }
                try await context.checkpoint(progress)
                sinceCheckpoint = 0
            }
        }
        try await BlockingWork.run { try Self.sync(output, partialURL) }
    }

    /// Copies up to `count` bytes at `offset`; returns how many.
    private static func copyChunk(
        from input: Int32, to output: Int32, at offset: Int64, count wanted: Int, source: String, partial: URL
    ) throws -> Int {
        var buffer = [UInt8](repeating: 0, count: wanted)
        let count = buffer.withUnsafeMutableBytes { pread(input, $0.baseAddress, wanted, off_t(offset)) }
        guard count > 0 else {
            throw StageFailure("\(source) changed while it was copied (it became shorter)", kind: .invalidInput)
        }
        var written = 0
        while written < count {
            let result = buffer.withUnsafeBytes {
                pwrite(output, $0.baseAddress.map { $0 + written }, count - written, off_t(offset) + off_t(written))
            }
            guard result > 0 else { throw ioFailure("cannot write", partial) }
            written += result
        }
        return count
    }

    private static func sync(_ descriptor: Int32, _ url: URL) throws {
        guard fsync(descriptor) == 0 else { throw ioFailure("cannot sync", url) }
    }

    private static func size(of url: URL) -> Int64? {
        var info = stat()
        return stat(url.path, &info) == 0 ? Int64(info.st_size) : nil
    }

    private static func ioFailure(_ action: String, _ url: URL) -> StageFailure {
        let reason = errno == ENOSPC ? "the disk is full" : String(cString: strerror(errno))
        return StageFailure("\(action) \(url.path): \(reason)")
    }
}
