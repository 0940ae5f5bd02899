import Crypto
import Foundation
import Logging
import StageKit

#if canImport(Glibc)
    import Glibc
#endif

/// An output file written under a temporary name next to its destination and renamed into place only
/// when complete, so a crash or a cancel never leaves a half file under the final name.
///
/// Before the rename the stage checkpoints the file's size and a content fingerprint with its outputs; a
/// rerun after a crash between the rename and the stage's checkpoint finds the finished file, checks
/// size and fingerprint, and reuses it instead of doing the work again.
struct MediaOutput {
    /// Where the finished file goes.
    let destination: URL
    /// Where it is written meanwhile (hidden, same folder, same extension for the muxer).
    let partial: URL

    /// What a stage checkpoints just before the rename.
    struct Commit<Outputs: Codable>: Codable {
        var destination: String
        var size: Int64
        var fingerprint: String
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
                throw MediaError(
                    code: .outputNotWritable,
                    message: "cannot create output folder \(folder.path): \(Self.reason(error))")
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
        guard context.savedCheckpoint?["destination"] != nil,  // not the checkpoint of a transcode under way
            let commit = context.lastCheckpoint(as: Commit<Outputs>.self), commit.destination == destination.path,
            let size = Self.size(of: destination), size == commit.size,
            (try? Self.fingerprint(of: destination)) == commit.fingerprint
        else { return nil }
        context.logger.info(
            "reusing the finished output \(destination.path) (size and fingerprint match the checkpoint)")
        return commit.outputs
    }

    /// Makes the partial file durable, checkpoints its size and fingerprint with the outputs, then renames
    /// it into place; returns its size.
    func commit<Outputs: Codable & Sendable>(_ outputs: Outputs, context: StageContext) async throws -> Int64 {
        guard let size = Self.size(of: partial) else {
            throw MediaError(
                code: .outputNotWritable, message: "the output \(partial.path) vanished before it was finished")
        }
        try Self.sync(partial)
        let fingerprint = try Self.fingerprint(of: partial)
        try await context.checkpoint(
            Commit(destination: destination.path, size: size, fingerprint: fingerprint, outputs: outputs))
        guard rename(partial.path, destination.path) == 0 else {
            let reason = String(cString: strerror(errno))
            discard()
            throw MediaError(
                code: .outputNotWritable, message: "cannot move the output into place at \(destination.path): \(reason)"
            )
        }
        let folder = open(destination.deletingLastPathComponent().path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folder >= 0 {
            fsync(folder)
            close(folder)
        }
        return size
    }

    /// Makes a written file durable (fsync).
    static func sync(_ url: URL) throws {
        let descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0, fsync(descriptor) == 0 else {
            let failure = errno
            if descriptor >= 0 { close(descriptor) }
            // Some file systems (NFS, XFS) report a full disk only when the written pages are flushed.
            throw MediaError(
                code: failure == ENOSPC || failure == EDQUOT ? .diskFull : .outputNotWritable,
                message: "cannot sync \(url.path): \(String(cString: strerror(failure)))")
        }
        close(descriptor)
    }

    /// A full disk, with the folder whose disk it is: the shim only knows that a write failed, and the outputs and
    /// a segmented encode's scratch folder (in the state folder) may be on different disks. Called before
    /// ``discard()``, while the partial file still holds the space it took; other errors pass through.
    func locating(_ error: any Error, scratch: URL, isNearlyFull: (URL) -> Bool = Self.isNearlyFull) -> any Error {
        guard let media = error as? MediaError, media.code == .diskFull else { return error }
        let folder = destination.deletingLastPathComponent()
        // No disk nearly full: a quota, or space freed since (by another item's failure, say).
        let room =
            [folder, scratch].first(where: isNearlyFull).map { "the disk of \($0.path) is full" }
            ?? "no room was left in \(folder.path) (its disk or a quota)"
        return MediaError(
            code: .diskFull,
            message: "\(media.message) (writing \(destination.path)): \(room); free space there and run again")
    }

    /// Whether the file system holding `folder` (or its nearest existing parent) has less than 1 MiB left.
    static func isNearlyFull(_ folder: URL) -> Bool {
        var url = folder
        var info = statvfs()
        while statvfs(url.path, &info) != 0 {
            guard url.path != "/" else { return false }
            url = url.deletingLastPathComponent()
        }
        return UInt64(info.f_bavail) * UInt64(info.f_frsize) < 1 << 20
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

    /// SHA-256 of the size, the first MiB and the last MiB: enough to recognise our own finished file
    /// after a crash, without reading a large output again (a full hash doubled the time of a remux).
    static func fingerprint(of url: URL) throws -> String {
        guard let size = size(of: url) else {
            throw MediaError(code: .outputNotWritable, message: "cannot read \(url.path): it is not there")
        }
        var hasher = SHA256()
        hasher.update(data: Data(String(size).utf8))
        let mebibyte: Int64 = 1 << 20
        var ranges: [FileHashing.Range] = [(0, min(size, mebibyte))]
        if size > 2 * mebibyte { ranges.append((size - mebibyte, mebibyte)) }
        try FileHashing.update(&hasher, path: url.path, ranges: ranges) {
            MediaError(code: .outputNotWritable, message: "cannot read \(url.path): \($0)")
        }
        return HexDigest.text(hasher.finalize())
    }

    private static func reason(_ error: any Error) -> String {
        (error as NSError).localizedFailureReason ?? error.localizedDescription
    }
}
