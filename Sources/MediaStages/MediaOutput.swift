import Crypto
import Foundation
import Logging
import PipelineKit

#if canImport(Glibc)
import Glibc
#endif

/// An output file written under a temporary name next to its destination and renamed into place only
/// when complete, so a crash or a cancel never leaves a half file under the final name.
///
/// Before the rename the stage checkpoints the file's size and SHA-256 with its outputs; a rerun after
/// a crash between the rename and the stage's checkpoint finds the finished file, checks size and hash,
/// and reuses it instead of doing the work again.
struct MediaOutput {
    /// Where the finished file goes.
    let destination: URL
    /// Where it is written meanwhile (hidden, same folder, same extension for the muxer).
    let partial: URL

    /// What a stage checkpoints just before the rename.
    struct Commit<Outputs: Codable>: Codable {
        var destination: String
        var size: Int64
        var sha256: String
        var outputs: Outputs
    }

    init(destination: URL) {
        self.destination = destination
        let name = destination.lastPathComponent
        let ext = destination.pathExtension
        partial = destination.deletingLastPathComponent().appendingPathComponent(
            ".\(name).partial" + (ext.isEmpty ? "" : ".\(ext)"))
    }

    /// Creates the destination folder when asked, and checks that it is a writable folder.
    func prepareFolder(create: Bool) throws {
        let folder = destination.deletingLastPathComponent()
        var isDirectory: ObjCBool = false
        if !FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory) {
            guard create else {
                throw MediaError(code: .outputNotWritable, message: "output folder \(folder.path) does not exist")
            }
            do {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            } catch {
                throw MediaError(code: .outputNotWritable, message: "cannot create output folder \(folder.path): \(Self.reason(error))")
            }
        } else if !isDirectory.boolValue {
            throw MediaError(code: .outputNotWritable, message: "output folder \(folder.path) is a file")
        }
        guard access(folder.path, W_OK) == 0 else {
            throw MediaError(code: .outputNotWritable, message: "output folder \(folder.path) is not writable")
        }
    }

    /// The outputs of an earlier run whose finished file is still there, unchanged.
    func reusable<Outputs: Codable>(from context: StageContext, as type: Outputs.Type) -> Outputs? {
        guard let commit = context.resumeData(as: Commit<Outputs>.self), commit.destination == destination.path,
            let size = Self.size(of: destination), size == commit.size, (try? Self.sha256(of: destination)) == commit.sha256
        else { return nil }
        context.logger.info("reusing the finished output \(destination.path) (size and SHA-256 match the checkpoint)")
        return commit.outputs
    }

    /// Checkpoints the partial file's size and hash with the outputs, then renames it into place.
    func commit<Outputs: Codable & Sendable>(_ outputs: Outputs, context: StageContext) async throws -> (size: Int64, sha256: String) {
        guard let size = Self.size(of: partial) else {
            throw MediaError(code: .outputNotWritable, message: "the output \(partial.path) vanished before it was finished")
        }
        let digest = try Self.sha256(of: partial)
        try await context.checkpoint(Commit(destination: destination.path, size: size, sha256: digest, outputs: outputs))
        guard rename(partial.path, destination.path) == 0 else {
            let reason = String(cString: strerror(errno))
            discard()
            throw MediaError(code: .outputNotWritable, message: "cannot move the output into place at \(destination.path): \(reason)")
        }
        let folder = open(destination.deletingLastPathComponent().path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folder >= 0 {
            fsync(folder)
            close(folder)
        }
        return (size, digest)
    }

    /// Removes the partial file (after a failure or a cancel).
    func discard() {
        unlink(partial.path)
    }

    static func size(of url: URL) -> Int64? {
        var info = stat()
        guard stat(url.path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int64(info.st_size)
    }

    /// The file's SHA-256, read in 1 MiB chunks.
    static func sha256(of url: URL) throws -> String {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        var hasher = SHA256()
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            hasher.update(data: chunk)
        }
        return hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }

    private static func reason(_ error: any Error) -> String {
        (error as NSError).localizedFailureReason ?? error.localizedDescription
    }
}
