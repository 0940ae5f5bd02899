import Foundation
import HTTPTransport
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import StageKit

extension HTTPFailure {
    /// The failure for an S3 answer that is not the one asked for: the status table decides, then S3's XML
    /// error code refines it, since S3 answers several transient conditions with a 400 or 403 and may answer
    /// CompleteMultipartUpload with a 200 whose body is an error.
    static func s3(_ answer: HTTPAnswer, doing action: String) -> HTTPFailure {
        let xml = S3XML(Data(buffer: answer.body))
        let code = xml?.first("Code") ?? ""
        let said = [xml?.first("Code"), xml?.first("Message")].compactMap { $0 }.joined(separator: ": ")
        let status = answer.status.code
        let failure = HTTPFailure.answer(answer, doing: action, detail: said.isEmpty ? nil : said)
        let saidOrBody = said.isEmpty ? answer.bodyExcerpt : said
        switch code {
        case "ExpiredToken", "TokenRefreshRequired":
            return failure.refined(
                as: .notAuthenticated, message: "\(action): the credentials expired (\(said))")
        case "SlowDown":
            return failure.refined(as: .rateLimited, message: "\(action): S3 answered \(status) with an error: \(said)")
        case "InternalError", "ServiceUnavailable":
            return failure.refined(
                as: .serverFailure, message: "\(action): S3 answered \(status) with an error: \(said)")
        case "RequestTimeout":
            // S3's 400 for a body that came too slowly: the request itself was fine.
            return failure.refined(
                as: .requestTimeout, message: "\(action): S3 answered \(status) with an error: \(said)")
        case "RequestTimeTooSkewed":
            // A 403 for a signature dated too far from S3's clock; a retry signs with a fresh date.
            return failure.refined(
                disposition: .retryable(after: failure.retryAfter),
                message: "\(action): S3 answered \(status) with an error: \(said)")
        case "EntityTooLarge":
            return failure.refined(as: .payloadTooLarge, message: "\(action): S3 answered \(status): \(said)")
        default:
            break
        }
        if answer.status == .ok {
            // An error inside a 200 (CompleteMultipartUpload): AWS asks clients to retry it.
            return failure.refined(
                as: .serverFailure, message: "\(action): S3 answered \(status) with an error: \(saidOrBody)")
        }
        return said.isEmpty ? failure : failure.refined(message: "\(action): S3 answered \(status): \(said)")
    }
}
