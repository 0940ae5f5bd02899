import NIOHTTP1
import StageKit

extension HTTPFailure {
    /// The failure for an answer of Alibaba Cloud (the VOD API's JSON error or OSS's XML one), once the
    /// status table classified it: the documented error `code` refines it. The one table from Alibaba
    /// Cloud's error codes to this project's kinds, for every stage that talks to it.
    ///
    /// - Parameters:
    ///   - code: the answer's `Code` (`SecurityTokenExpired`, `Throttling.User`, …), empty when it has none.
    ///   - said: `Code: Message`, for the message.
    package static func aliyun(_ answer: HTTPAnswer, code: String, said: String, doing action: String) -> HTTPFailure {
        let status = Int(answer.status.code)
        let failure = HTTPFailure.answer(answer, doing: action, detail: said.isEmpty ? nil : said)
        let message = "\(action): Alibaba Cloud answered \(status): \(said.isEmpty ? answer.bodyExcerpt : said)"
        switch code {
        // A temporary credential that ran out (or that a restarted service no longer knows): new ones from
        // RefreshUploadVideo (the stage's refreshWith) and the upload goes on.
        case "SecurityTokenExpired", "InvalidSecurityToken.Expired", "InvalidAccessKeyId", "InvalidSecurityToken":
            return failure.refined(
                as: .notAuthenticated, message: "\(action): the temporary credential expired (\(said))")
        // An AccessKey pair that is wrong: no refresh can help.
        case "InvalidAccessKeyId.NotFound", "InvalidAccessKeyId.Inactive", "SignatureDoesNotMatch",
            "IncompleteSignature":
            return failure.refined(as: .notAuthenticated, disposition: .fatal, message: message)
        case "Forbidden", "Forbidden.RAM", "Forbidden.SubUser", "AccessDenied", "Forbidden.AliyunVoDServiceNotActive":
            return failure.refined(as: .forbidden, message: message)
        case "Throttling", "Throttling.User", "Throttling.Api", "ServiceUnavailable.Throttling":
            return failure.refined(as: .rateLimited, message: message)
        // VOD's common error table spells it ServiceUnAvailable (503); other products ServiceUnavailable.
        case "InternalError", "ServiceUnAvailable", "ServiceUnavailable", "UnknownError":
            return failure.refined(as: .serverFailure, message: message)
        case "InvalidVideo.NotFound", "InvalidImage.NotFound", "NoSuchUpload", "NoSuchKey", "NoSuchBucket":
            return failure.refined(as: .notFound, message: message)
        // A date or nonce the service no longer takes: the retry signs with fresh ones.
        case "RequestTimeTooSkewed", "InvalidTimeStamp.Expired", "SignatureNonceUsed":
            return failure.refined(disposition: .retryable(after: failure.retryAfter), message: message)
        case "RequestTimeout": return failure.refined(as: .requestTimeout, message: message)
        case "EntityTooLarge": return failure.refined(as: .payloadTooLarge, message: message)
        case "InvalidDigest": return failure.refined(as: .checksumMismatch, message: message)
        case let other where other.lowercased().contains("quota"):
            return failure.refined(as: .quotaExceeded, message: message)
        default:
            return failure.refined(message: message)
        }
    }
}
