import Foundation
import StageKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The on-disk layout: `index.json` and `uploads/NAME.bin` under one folder.
///
/// ``SandboxIndex`` writes the index. Every stored file, whichever platform's, is `uploads/NAME.bin`: an
/// upload's bytes are `uploads/ID.bin`, and a platform that keeps other files names them with a prefix of
/// its own (`picture-`, `oss-`).
struct DataFolder: Sendable {
    let path: String
    /// Whether the sandbox created the folder and should remove it when it stops.
    let isTemporary: Bool

    var indexPath: String { self.path + "/index.json" }
    var uploadsPath: String { self.path + "/uploads" }

    /// The file named `uploadID` (an upload's id, or a platform's prefixed name).
    func uploadPath(_ uploadID: String) -> String {
        self.uploadsPath + "/" + uploadID + ".bin"
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

    /// Removes the file named `uploadID`, if there is one.
    func removeUpload(_ uploadID: String) {
        unlink(self.uploadPath(uploadID))
    }

    /// Removes the whole folder (temporary folders only, when the sandbox stops).
    func removeAll() {
        try? FileManager.default.removeItem(atPath: self.path)
    }
}
