import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import StageKit
import Testing

@testable import HTTPTransport
@testable import UploadStages

/// An answer with the given status, body and headers, as ``HTTPExchange`` hands it over.
func answer(_ status: Int, _ body: String = "", headers: [(String, String)] = []) -> HTTPAnswer {
    HTTPAnswer(
        status: HTTPResponseStatus(statusCode: status), headers: HTTPHeaders(headers), body: ByteBuffer(string: body))
}

/// What a row of the status table promises: the code, the kind the engine reports, and whether to retry.
struct StatusRow: Sendable, CustomTestStringConvertible {
    var status: Int
    var body = ""
    var code: HTTPFailure.Code
    var kind: ErrorKind
    var disposition: FailureDisposition

    var testDescription: String { "\(status)\(body.isEmpty ? "" : " \"\(body)\"") → \(code)" }
}

/// The one table from an HTTP status to a failure, and how protocols refine it.
@Suite struct HTTPFailureTests {
    static let rows: [StatusRow] = [
        StatusRow(status: 401, code: .notAuthenticated, kind: .notAuthenticated, disposition: .credentialsExpired),
        StatusRow(status: 403, body: "not yours", code: .forbidden, kind: .forbidden, disposition: .fatal),
        StatusRow(
            status: 403, body: "{\"error\": \"Upload Quota exceeded\"}", code: .quotaExceeded, kind: .quotaExceeded,
            disposition: .fatal),
        StatusRow(status: 404, code: .notFound, kind: .notFound, disposition: .fatal),
        StatusRow(status: 410, code: .notFound, kind: .notFound, disposition: .fatal),
        StatusRow(status: 408, code: .requestTimeout, kind: .network, disposition: .retryable()),
        StatusRow(status: 413, code: .payloadTooLarge, kind: .quotaExceeded, disposition: .fatal),
        StatusRow(status: 425, code: .tooEarly, kind: .network, disposition: .retryable()),
        StatusRow(status: 429, code: .rateLimited, kind: .rateLimited, disposition: .retryable()),
        StatusRow(status: 500, code: .serverFailure, kind: .serverFailure, disposition: .retryable()),
        StatusRow(status: 502, code: .serverFailure, kind: .serverFailure, disposition: .retryable()),
        StatusRow(status: 503, code: .serverFailure, kind: .serverFailure, disposition: .retryable()),
        StatusRow(status: 507, code: .insufficientStorage, kind: .quotaExceeded, disposition: .fatal),
        StatusRow(status: 400, code: .rejected, kind: .invalidRequest, disposition: .fatal),
        StatusRow(status: 409, code: .rejected, kind: .invalidRequest, disposition: .fatal),
        StatusRow(status: 412, code: .rejected, kind: .invalidRequest, disposition: .fatal),
        StatusRow(status: 422, code: .rejected, kind: .invalidRequest, disposition: .fatal),
        StatusRow(status: 200, code: .unexpectedAnswer, kind: .invalidResponse, disposition: .fatal),
        StatusRow(status: 302, code: .unexpectedAnswer, kind: .invalidResponse, disposition: .fatal),
    ]

    @Test(arguments: rows) func eachStatusHasOneClassification(_ row: StatusRow) {
        let failure = HTTPFailure.answer(answer(row.status, row.body), doing: "sending")
        #expect(failure.code == row.code)
        #expect(failure.kind == row.kind)
        #expect(failure.disposition == row.disposition)
        #expect(failure.status == row.status)
        #expect(failure.refusedRequest == (400..<500).contains(row.status))
    }

    @Test func theMessageNamesTheActionTheStatusAndWhatTheServerSaid() {
        let failure = HTTPFailure.answer(answer(403, "<html>\n<b>denied</b>\n</html>"), doing: "creating the upload")
        #expect(
            failure.message == "creating the upload: the server answered 403 Forbidden: <html> <b>denied</b> </html>")
        #expect(failure.detail == "<html> <b>denied</b> </html>")
        #expect("\(failure)" == failure.message)
        let empty = HTTPFailure.answer(answer(502), doing: "creating the upload")
        #expect(empty.message == "creating the upload: the server answered 502 Bad Gateway")
    }

    @Test func retryAfterInSecondsIsTheMinimumWait() {
        let limited = HTTPFailure.answer(answer(429, headers: [("Retry-After", "7")]), doing: "sending")
        #expect(limited.disposition == .retryable(after: .seconds(7)))
        let busy = HTTPFailure.answer(answer(503, headers: [("Retry-After", "0.5")]), doing: "sending")
        #expect(busy.disposition == .retryable(after: .milliseconds(500)))
        let fatal = HTTPFailure.answer(answer(400, headers: [("Retry-After", "7")]), doing: "sending")
        #expect(fatal.disposition == .fatal && fatal.retryAfter == .seconds(7))
    }

    @Test func retryAfterAsADateWaitsUntilThen() throws {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let later = formatter.string(from: Date().addingTimeInterval(120))
        let failure = HTTPFailure.answer(answer(503, headers: [("Retry-After", later)]), doing: "sending")
        guard case .retryable(let wait?) = failure.disposition else {
            Issue.record("no wait in \(failure.disposition)")
            return
        }
        #expect(wait > .seconds(100) && wait <= .seconds(120))
        let past = answer(503, headers: [("Retry-After", "Sun, 06 Nov 1994 08:49:37 GMT")])
        #expect(past.retryAfter == .zero)
        #expect(answer(503, headers: [("Retry-After", "soon")]).retryAfter == nil)
    }

    @Test func aRefinementKeepsStatusDetailWaitAndCause() {
        let failure = HTTPFailure.answer(answer(400, "slow", headers: [("Retry-After", "3")]), doing: "sending")
        let refined = failure.refined(as: .requestTimeout, message: "sending: too slow")
        #expect(refined.code == .requestTimeout && refined.kind == .network)
        #expect(refined.disposition == .retryable(after: .seconds(3)))
        #expect(refined.status == 400 && refined.detail == "slow" && refined.message == "sending: too slow")
        let kept = failure.refined(disposition: .retryable(after: .zero))
        #expect(
            kept.code == .rejected && kept.disposition == .retryable(after: .zero) && kept.message == failure.message)
    }

    @Test func trafficBelowHTTPIsRetryableAndKeepsItsCause() throws {
        let refused = HTTPFailure.classify(ChannelError.connectTimeout(.seconds(1)), doing: "sending")
        let failure = try #require(refused as? HTTPFailure)
        #expect(failure.code == .transport && failure.kind == .network && failure.disposition == .retryable())
        #expect(failure.status == nil && !failure.refusedRequest)
        #expect(failure.message.hasPrefix("sending: connection error"))
        #expect((failure.cause as? ChannelError) == .connectTimeout(.seconds(1)))

        let closed = try #require(
            HTTPFailure.classify(HTTPClientError.remoteConnectionClosed, doing: "sending") as? HTTPFailure)
        #expect(closed.message == "sending: the connection was closed by the server")
        #expect((closed.cause as? HTTPClientError) == .remoteConnectionClosed)

        let slow = try #require(HTTPFailure.classify(HTTPClientError.readTimeout, doing: "sending") as? HTTPFailure)
        #expect(slow.code == .timedOut && slow.kind == .network && slow.disposition.isRetryable)
    }

    @Test func cancellationAndClassifiedErrorsPassThrough() {
        #expect(HTTPFailure.classify(HTTPClientError.cancelled, doing: "sending") is CancellationError)
        let shrank = HTTPFailure.classify(UploadFile.shrank("/tmp/clip.mp4"), doing: "sending")
        #expect((shrank as? StageFailure)?.kind == .invalidInput)
        #expect((shrank as? StageFailure)?.disposition == .fatal)
    }

    // MARK: S3

    static func s3Error(_ code: String, _ message: String = "it failed") -> String {
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>\(code)</Code><Message>\(message)</Message></Error>"
    }

    @Test func s3ErrorCodesRefineTheStatus() {
        let expired = HTTPFailure.s3(answer(400, Self.s3Error("ExpiredToken")), doing: "uploading part 1")
        #expect(expired.disposition == .credentialsExpired && expired.kind == .notAuthenticated)
        #expect(expired.message == "uploading part 1: the credentials expired (ExpiredToken: it failed)")

        let slow = HTTPFailure.s3(
            answer(503, Self.s3Error("SlowDown"), headers: [("Retry-After", "2")]), doing: "uploading part 1")
        #expect(slow.code == .rateLimited && slow.disposition == .retryable(after: .seconds(2)))

        let timeout = HTTPFailure.s3(answer(400, Self.s3Error("RequestTimeout")), doing: "uploading part 1")
        #expect(timeout.code == .requestTimeout && timeout.disposition.isRetryable && timeout.status == 400)
        #expect(timeout.message == "uploading part 1: S3 answered 400 with an error: RequestTimeout: it failed")

        let skewed = HTTPFailure.s3(answer(403, Self.s3Error("RequestTimeTooSkewed")), doing: "uploading part 1")
        #expect(skewed.code == .forbidden && skewed.disposition.isRetryable)

        let internalError = HTTPFailure.s3(answer(500, Self.s3Error("InternalError")), doing: "completing")
        #expect(internalError.code == .serverFailure && internalError.disposition.isRetryable)

        let tooLarge = HTTPFailure.s3(answer(400, Self.s3Error("EntityTooLarge")), doing: "uploading part 1")
        #expect(tooLarge.code == .payloadTooLarge && tooLarge.disposition == .fatal)
    }

    @Test func anS3ErrorInsideA200IsRetried() {
        let failure = HTTPFailure.s3(answer(200, Self.s3Error("SomethingNew")), doing: "completing the upload")
        #expect(failure.code == .serverFailure && failure.disposition.isRetryable && failure.status == 200)
        #expect(failure.message.contains("S3 answered 200 with an error: SomethingNew"))
    }

    @Test func otherS3ErrorsKeepTheTablesClassificationAndNameTheCode() {
        let failure = HTTPFailure.s3(answer(404, Self.s3Error("NoSuchBucket", "no bucket")), doing: "starting")
        #expect(failure.code == .notFound && failure.disposition == .fatal)
        #expect(failure.message == "starting: S3 answered 404: NoSuchBucket: no bucket")
        let denied = HTTPFailure.s3(answer(403, Self.s3Error("AccessDenied")), doing: "starting")
        #expect(denied.code == .forbidden && denied.disposition == .fatal)
        let plain = HTTPFailure.s3(answer(502, "<html>bad gateway</html>"), doing: "starting")
        #expect(plain.code == .serverFailure && plain.message.hasSuffix("502 Bad Gateway: <html>bad gateway</html>"))
    }

    // MARK: tus

    @Test func tusStatusesRefineTheTable() {
        let conflict = HTTPFailure.tus(answer(409), doing: "sending bytes 0–10")
        #expect(conflict.disposition == .retryable(after: .milliseconds(300)) && conflict.status == 409)
        #expect(conflict.message.contains("offset conflict (409)"))

        let damaged = HTTPFailure.tus(answer(460), doing: "sending bytes 0–10")
        #expect(damaged.code == .checksumMismatch && damaged.kind == .network && damaged.disposition.isRetryable)

        let version = HTTPFailure.tus(answer(412, headers: [("Tus-Version", "0.2.2")]), doing: "creating")
        #expect(version.disposition == .fatal && version.message.contains("does not speak tus 1.0.0"))
        #expect(version.message.contains("it supports 0.2.2"))

        let tooLarge = HTTPFailure.tus(answer(413), doing: "creating", size: 3 << 20)
        #expect(tooLarge.code == .payloadTooLarge && tooLarge.kind == .quotaExceeded && tooLarge.disposition == .fatal)
        #expect(tooLarge.message.contains("refuses a file of \(ByteCount(3 << 20)) (413 too large)"))

        let busy = HTTPFailure.tus(answer(503), doing: "creating")
        #expect(busy.code == .serverFailure && busy.disposition.isRetryable)
    }
}
