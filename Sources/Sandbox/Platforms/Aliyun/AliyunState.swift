import Foundation
import StageKit

/// Alibaba Cloud as the sandbox plays it: ApsaraVideo VOD's videos and images, OSS's objects and multipart
/// uploads, and the Security Token Service's temporary credentials that tie them together (a VOD upload
/// address comes with a credential that opens one OSS object).
///
/// Its files are its own (`uploads/oss-…`), not uploads of the core.
@SandboxActor
final class AliyunState: IndexSectionKeeper {
    nonisolated let core: SandboxCore
    var records: AliyunRecords
    /// Temporary credentials issued with upload addresses, by access key id (kept in memory: after a
    /// restart they are unknown, and a client asks for new ones as it would after they expired).
    var stsCredentials: [String: STSCredential] = [:]
    /// OSS parts stored since the sandbox started (a part sent again counts again), for tests.
    var ossPartsStored = 0
    /// `SignatureNonce`s of the RPC API seen recently: a nonce is accepted once.
    var rpcNonces: [String: Date] = [:]
    /// The fetches of `UploadMediaByURL` jobs under way, by JobId.
    var urlFetches: [String: Task<Void, Never>] = [:]
    /// How many CompleteMultipartUpload answers to drop (the upload completes, the connection closes before the
    /// answer), set by `POST /sandbox/aliyun/faults`.
    var completeAnswersToDrop = 0
    /// How many CompleteMultipartUploads to refuse with `InvalidPart` (nothing is completed), set by
    /// `POST /sandbox/aliyun/faults`.
    var completesToRefuse = 0
    /// How many CompleteMultipartUploads to lose before OSS acts on them (the connection closes, nothing is
    /// completed), set by `POST /sandbox/aliyun/faults`.
    var completesToLose = 0
    /// How many CompleteMultipartUploads to complete and then answer 500 `InternalError`, set by
    /// `POST /sandbox/aliyun/faults`.
    var completesToFailAnswering = 0
    /// How many ListParts to refuse with 400 `InvalidArgument`, set by `POST /sandbox/aliyun/faults`.
    var listPartsToRefuse = 0
    /// How old a URL upload job must be before `GetURLUploadInfos` by `UploadURLs` lists it (a listing that lags
    /// behind creation), set by `POST /sandbox/aliyun/faults`; by `JobIds` it is found at once.
    var urlListingLag: TimeInterval = 0
    /// How long `UploadMediaByURL` refuses a `SessionId` used before: 10 minutes, as VOD documents, unless
    /// `POST /sandbox/aliyun/faults` shortens it.
    var sessionWindow: TimeInterval = 600
    /// How many of the next URL upload jobs make a video whose transcode fails: the job ends `TranscodeFail` with
    /// its MediaId (VOD's job statuses are its video statuses), set by `POST /sandbox/aliyun/faults`.
    var urlTranscodesToFail = 0

    var indexSection: any IndexSection { AliyunSection(aliyun: self.records) }

    /// Reads Alibaba Cloud's section of `document`.
    init(_ document: IndexDocument, core: SandboxCore) throws {
        self.records = try document.section(AliyunSection.self).aliyun
        self.core = core
        // A fetch under way when the sandbox stopped is not resumed: its job failed.
        for (id, job) in self.records.urlJobs where job.completedAt == nil {
            self.records.urlJobs[id]?.status = "UPLOAD_FAIL"
            self.records.urlJobs[id]?.errorMessage = "the sandbox stopped during the fetch"
            self.records.urlJobs[id]?.completedAt = Date()
        }
    }

    /// Where the sandbox listens, for the upload addresses VOD answers.
    nonisolated var baseURL: String { self.core.address.baseURL }
}
