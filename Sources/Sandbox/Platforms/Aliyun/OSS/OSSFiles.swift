import StageKit

/// The names (under `uploads/`, without `.bin`) of OSS's files in the data folder, prefixed `oss-` so they
/// never meet an upload's.
enum OSSFiles {
    /// An object's bytes.
    static func object(_ fileID: String) -> String {
        "oss-" + fileID
    }

    /// A part of a multipart upload.
    static func part(uploadID: String, number: Int) -> String {
        "oss-part-\(uploadID)-\(number)"
    }

    /// A body still arriving, renamed once every byte is in.
    static func receiving() -> String {
        "oss-receiving-" + RandomID.hex(bytes: 8)
    }
}
