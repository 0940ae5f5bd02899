import Foundation
import StageKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The on-disk layout: `index.json` and `uploads/ID.bin` under one folder.
///
/// The index is written atomically (temporary file, fsync, rename, fsync of the folder), so a
/// crash leaves either the old or the new index, never a torn one. Upload bytes are written in
/// place; on load each upload's offset is reconciled with its file's length, so bytes that reached
/// the disk after the last index write still count.
struct DataFolder: Sendable {
    let path: String
    /// Whether the sandbox created the folder and should remove it when it stops.
    let isTemporary: Bool

    var indexPath: String { self.path + "/index.json" }
    var uploadsPath: String { self.path + "/uploads" }

    func uploadPath(_ uploadID: String) -> String {
        self.uploadsPath + "/" + uploadID + ".bin"
    }

    /// Where a picture's image is kept.
    func picturePath(_ pictureID: String) -> String {
        self.uploadPath("picture-" + pictureID)
    }

    /// Uses `path`, or a new temporary folder when it is `nil`, creating it as needed.
    static func prepare(_ path: String?) throws -> DataFolder {
        let folder: DataFolder
        if let path {
            folder = DataFolder(path: path, isTemporary: false)
        } else {
            let name = "pipeline-sandbox-" + RandomID.hex(bytes: 8)
            folder = DataFolder(
                path: FileManager.default.temporaryDirectory.appendingPathComponent(name).path, isTemporary: true)
        }
        do {
            try FileManager.default.createDirectory(atPath: folder.uploadsPath, withIntermediateDirectories: true)
        } catch {
            throw SandboxError(code: .dataFolder, message: "Cannot create the data folder \(folder.path)", cause: error)
        }
        return folder
    }

    /// Reads the index, or an empty one when there is none yet.
    func loadIndex() throws -> SandboxIndex {
        guard FileManager.default.fileExists(atPath: self.indexPath) else { return SandboxIndex() }
        do {
            let data = try Data(contentsOf: URL(fileURLWithPath: self.indexPath))
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            var index = try decoder.decode(SandboxIndex.self, from: data)
            for (id, var upload) in index.uploads {
                upload.offset = min(upload.length, self.storedLength(id) ?? 0)
                index.uploads[id] = upload
            }
            return index
        } catch {
            throw SandboxError(code: .index, message: "Cannot read \(self.indexPath)", cause: error)
        }
    }

    /// Replaces the index atomically.
    func saveIndex(_ index: SandboxIndex) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        encoder.dateEncodingStrategy = .iso8601
        do {
            try AtomicFile.write(try encoder.encode(index), to: URL(fileURLWithPath: self.indexPath))
        } catch {
            throw SandboxError(code: .index, message: "Cannot write \(self.indexPath)", cause: error)
        }
    }

    /// The length of an upload's file, `nil` when it does not exist.
    func storedLength(_ uploadID: String) -> Int64? {
        let descriptor = open(self.uploadPath(uploadID), O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        let end = lseek(descriptor, 0, SEEK_END)
        return end >= 0 ? Int64(end) : nil
    }

    /// Creates an upload's (empty) file if it does not exist yet.
    func createUploadFile(_ uploadID: String) {
        let descriptor = open(self.uploadPath(uploadID), O_WRONLY | O_CREAT, 0o644)
        if descriptor >= 0 {
            close(descriptor)
        }
    }

    func removeUpload(_ uploadID: String) {
        unlink(self.uploadPath(uploadID))
    }

    /// Removes the whole folder (temporary folders only, when the sandbox stops).
    func removeAll() {
        try? FileManager.default.removeItem(atPath: self.path)
    }
}
