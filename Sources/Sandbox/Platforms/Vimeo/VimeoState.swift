import Foundation
import StageKit

/// Vimeo's account as the sandbox plays it: videos and their uploads, legacy streaming tickets, versions,
/// pictures and pulls, and the upload quota the videos take.
///
/// The uploads themselves are the core's; the state follows them as an ``UploadObserver`` (a video's size
/// and `upload.status` come from its upload).
@SandboxActor
final class VimeoState: IndexSectionKeeper, UploadObserver {
    nonisolated let core: SandboxCore
    var section: VimeoSection
    /// The fetches of pull uploads under way, by upload id.
    var pulls: [String: Task<Void, Never>] = [:]

    var indexSection: any IndexSection { self.section }

    /// Reads Vimeo's section of `document` and follows the core's uploads from now on.
    init(_ document: IndexDocument, core: SandboxCore) throws {
        self.section = try document.section(VimeoSection.self)
        self.core = core
        // A pull under way when the sandbox stopped is not resumed: it failed.
        for upload in core.uploads.records
        where upload.uploadProtocol == .pull && !upload.isComplete && upload.failure == nil {
            _ = core.uploads.recordFailure(upload.id, "the sandbox stopped while fetching the file")
        }
        core.uploads.register(self)
    }

    /// The core's uploads, which hold the bytes of every video, ticket and version.
    nonisolated var uploads: UploadStore { self.core.uploads }

    /// Where the sandbox listens, for the links in the JSON it answers.
    nonisolated var baseURL: String { self.core.address.baseURL }

    // MARK: Quota

    /// Bytes reserved by existing videos.
    var quotaUsed: Int64 {
        self.section.videos.values.reduce(0) { $0 + $1.size }
    }

    /// Bytes a new video (or a new file of a video) may still take: creates and declared sizes beyond it are
    /// refused, as Vimeo refuses an upload beyond the account's quota.
    var quotaFree: Int64 {
        max(0, self.core.configuration.quotaBytes - self.quotaUsed)
    }

    /// How many videos there are, for `GET /sandbox/stats`.
    var videoCount: Int {
        self.section.videos.count
    }

    // MARK: UploadObserver

    /// A video's (or a ticket's) file must fit in the free quota when its size becomes known.
    func room(forDeclaring upload: UploadRecord) -> Int64? {
        upload.videoID != nil || self.section.tickets[upload.id] != nil ? self.quotaFree : nil
    }

    /// A video's size is its current upload's.
    func uploadDeclaredLength(_ upload: UploadRecord) {
        guard let videoID = upload.videoID, self.section.videos[videoID]?.uploadID == upload.id else { return }
        self.section.videos[videoID]?.size = upload.length
    }

    /// A video's `upload.status` turns `complete` when the last byte of its current upload is in (tus or
    /// pull; a streaming video waits for `complete_uri`).
    func uploadCompleted(_ upload: UploadRecord) {
        guard upload.uploadProtocol != .streaming, let videoID = upload.videoID,
            var video = self.section.videos[videoID], video.uploadID == upload.id
        else { return }
        video.uploadComplete = true
        video.uploadCompletedAt = upload.completedAt
        self.section.videos[videoID] = video
    }
}
