import StageKit

/// The vendor media types Vimeo 3.4 answers with (`+json`, so JSON clients accept them).
enum VimeoMediaType {
    static let video = "application/vnd.vimeo.video+json; charset=utf-8"
    static let user = "application/vnd.vimeo.user+json; charset=utf-8"
    static let ticket = "application/vnd.vimeo.uploadticket+json; charset=utf-8"
    static let version = "application/vnd.vimeo.video.version+json; charset=utf-8"
    static let picture = "application/vnd.vimeo.picture+json; charset=utf-8"
    static let tag = "application/vnd.vimeo.tag+json; charset=utf-8"
}
