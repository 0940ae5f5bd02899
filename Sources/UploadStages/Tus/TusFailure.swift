import HTTPTransport
import NIOHTTP1
import StageKit

extension HTTPFailure {
    /// The failure for a tus answer that is not the one asked for: the status table decides, then what tus
    /// 1.0 gives these statuses refines it. `size` is the file's, for a creation the server refuses as too
    /// large.
    static func tus(_ answer: HTTPAnswer, doing action: String, size: Int64? = nil) -> HTTPFailure {
        let failure = HTTPFailure.answer(answer, doing: action)
        switch answer.status.code {
        case 409:
            // The server's offset moved (a cut PATCH it still digests, as tuspyserver does for ~0.3 s): asking
            // for the offset again shortly resumes from the right place.
            return failure.refined(
                disposition: .retryable(after: .milliseconds(300)),
                message: "\(action): offset conflict (409); asking the server for its offset again")
        case 460:
            // The checksum extension's status for bytes that arrived damaged.
            return failure.refined(
                as: .checksumMismatch, message: "\(action): the server found a checksum mismatch (460)")
        case 412:
            let versions = answer.headers.first(name: "Tus-Version") ?? "no version it names"
            return failure.refined(
                message: "\(action): the server does not speak tus \(TusSession.version) (412; it supports \(versions))"
            )
        case 413:
            let what = size.map { "a file of \(ByteCount($0))" } ?? "this upload"
            return failure.refined(message: "\(action): the server refuses \(what) (413 too large)")
        default:
            return failure
        }
    }
}
