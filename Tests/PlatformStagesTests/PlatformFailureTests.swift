import NIOCore
import NIOHTTP1
import StageKit
import Testing

@testable import HTTPTransport
@testable import PlatformStages

/// A platform's answer, refined by its own error format; and what a failed create tells a later attempt.
@Suite struct PlatformFailureTests {
    static func answer(_ status: Int, _ body: String = "", headers: [(String, String)] = []) -> HTTPAnswer {
        HTTPAnswer(
            status: HTTPResponseStatus(statusCode: status), headers: HTTPHeaders(headers),
            body: ByteBuffer(string: body))
    }

    @Test func thePlatformsOwnErrorTextIsTheDetail() {
        let body = #"{"error": "The video was not found.", "developer_message": "No video 42", "error_code": 5000}"#
        let failure = HTTPFailure.platform(Self.answer(404, body), doing: "checking /videos/42")
        #expect(failure.code == .notFound && failure.disposition == .fatal && failure.status == 404)
        #expect(failure.message == "checking /videos/42: the server answered 404 Not Found: The video was not found.")
    }

    @Test func vimeosQuotaCodeIsAFullAccountWhateverItsText() {
        let body = #"{"error": "You can't upload this.", "error_code": 4101}"#
        let failure = HTTPFailure.platform(Self.answer(403, body), doing: "creating the video")
        #expect(failure.code == .quotaExceeded && failure.kind == .quotaExceeded && failure.disposition == .fatal)
        let worded = HTTPFailure.platform(Self.answer(403, #"{"error": "Upload quota exceeded"}"#), doing: "x")
        #expect(worded.code == .quotaExceeded)
        let denied = HTTPFailure.platform(Self.answer(403, #"{"error": "Not your video"}"#), doing: "x")
        #expect(denied.code == .forbidden)
    }

    @Test func aPlatformAnswerThatIsNotJSONKeepsTheBodysStart() {
        let failure = HTTPFailure.platform(
            Self.answer(503, "<html>down</html>", headers: [("Retry-After", "4")]), doing: "listing")
        #expect(failure.message == "listing: the server answered 503 Service Unavailable: <html>down</html>")
        #expect(failure.disposition == .retryable(after: .seconds(4)))
    }

    @Test func aRefusedCreateMadeNothingAnyOtherAnswerMayHave() throws {
        let refused = try #require(
            CreateIntent(marker: "m", after: HTTPFailure.platform(Self.answer(422), doing: "creating")))
        #expect(refused.answer == .refused && refused.lookup(waiting: TimeSpan(seconds: 5)) == nil)
        let failed = try #require(
            CreateIntent(marker: "m", after: HTTPFailure.platform(Self.answer(500), doing: "creating")))
        #expect(failed.answer == .serverError)
        let unexpected = try #require(
            CreateIntent(marker: "m", after: HTTPFailure.platform(Self.answer(200), doing: "creating")))
        #expect(unexpected.answer == .serverError)
        let lost = HTTPFailure.classify(HTTPClientLostConnection(), doing: "creating")
        #expect(CreateIntent(marker: "m", after: lost) == nil)
    }
}

/// A connection lost below HTTP.
private struct HTTPClientLostConnection: Error {}
