import StageKit

/// The names (under `uploads/`, without `.bin`) of Vimeo's own files in the data folder, prefixed
/// `picture-` so they never meet an upload's.
enum VimeoFiles {
    /// A picture's image.
    static func picture(_ pictureID: String) -> String {
        "picture-" + pictureID
    }
}
