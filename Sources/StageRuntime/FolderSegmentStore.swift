package import Foundation
import StageKit

#if canImport(Glibc)
    import Glibc
#endif

/// A segment store in a folder every worker sees, such as `--artifacts` on NFS: the segment `key` with
/// `sha256` is the file `root/<plan>/<unit>.<sha256>`.
///
/// The hash in the name makes a name's bytes fixed: two workers that store one segment at once write
/// temporary files of their own and rename them onto the same name, or onto two names when their encodes
/// differ, and a reader asks for the name it recorded. Files are copied in and out through `VerifiedFile`
/// (hashed while copied, synced, renamed), so a name never holds a partial file or bytes that do not match
/// it. The root must exist: a shared filesystem that is not mounted must not look like an empty store.
package struct FolderSegmentStore: SegmentStore {
    /// The shared folder.
    package let root: URL

    /// A store in `root`, which must exist when segments are stored or fetched.
    package init(root: URL) {
        self.root = root.standardizedFileURL
    }

    package var address: String { root.path }

    package func put(_ file: URL, as key: SegmentKey, sha256: String) async throws {
        let sha256 = try SegmentKey.normalizedHash(sha256)
        let folder = root.appendingPathComponent(key.plan)
        try await BlockingWork.run { [root] in
            try Self.checkRoot(root)
            guard mkdir(folder.path, 0o755) == 0 || errno == EEXIST else {
                throw VerifiedFile.failure("create", folder.path)
            }
        }
        try await VerifiedFile.copy(
            file.path, to: location(of: key, sha256: sha256), sha256: sha256,
            missing: SegmentStoreError(code: .storage, message: "cannot store \(key): \(file.path) does not exist"))
    }

    package func fetch(_ key: SegmentKey, sha256: String, to destination: URL) async throws {
        let sha256 = try SegmentKey.normalizedHash(sha256)
        do {
            try await VerifiedFile.copy(
                location(of: key, sha256: sha256).path, to: destination, sha256: sha256,
                missing: SegmentStoreError(
                    code: .notFound, message: "segment \(key) with SHA-256 \(sha256) is not in \(address)"))
        } catch let error as SegmentStoreError where error.code == .notFound {
            try await BlockingWork.run { [root] in try Self.checkRoot(root) }
            throw error
        }
    }

    package func contains(_ key: SegmentKey, sha256: String) async throws -> Bool {
        let path = location(of: key, sha256: try SegmentKey.normalizedHash(sha256)).path
        return try await BlockingWork.run { [root] in
            var info = stat()
            guard stat(path, &info) == 0 else {
                guard errno == ENOENT else { throw VerifiedFile.failure("read", path) }
                try Self.checkRoot(root)
                return false
            }
            return (info.st_mode & S_IFMT) == S_IFREG
        }
    }

    package func remove(_ keys: [SegmentKey]) async throws {
        let root = self.root
        for (plan, keys) in Dictionary(grouping: keys, by: \.plan) {
            let folder = root.appendingPathComponent(plan).path
            try await BlockingWork.run {
                guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else {
                    if access(folder, F_OK) != 0, errno == ENOENT { return }
                    throw VerifiedFile.failure("list", folder)
                }
                for name in names where keys.contains(where: { $0.names(name) }) {
                    guard unlink("\(folder)/\(name)") == 0 || errno == ENOENT else {
                        throw VerifiedFile.failure("remove", "\(folder)/\(name)")
                    }
                }
                // The plan's last segments are gone: its folder goes too, unless others are still in it.
                _ = rmdir(folder)
            }
        }
    }

    /// The file of the segment's version with `sha256`.
    private func location(of key: SegmentKey, sha256: String) -> URL {
        root.appendingPathComponent(key.relativePath(sha256: sha256))
    }

    /// Fails unless the root is a folder.
    private static func checkRoot(_ root: URL) throws {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: root.path, isDirectory: &isFolder), isFolder.boolValue else {
            throw SegmentStoreError(
                code: .storage,
                message:
                    "the segment store \(root.path) is not a folder: create it (on the filesystem the workers share)")
        }
    }
}
