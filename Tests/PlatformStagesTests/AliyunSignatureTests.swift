import Foundation
import NIOCore
import NIOHTTP1
import StageKit
import Testing

@testable import HTTPTransport
@testable import PlatformStages

/// The RPC signature against Alibaba Cloud's documented example, and its error codes read through the one table.
@Suite struct AliyunSignatureTests {
    @Test func theRPCSignatureMatchesTheDocumentedExample() {
        // Alibaba Cloud's signature example (DescribeRegions, AccessKey testid / testsecret), which
        // aliyun-python-sdk-core's composer reproduces.
        let parameters = [
            "AccessKeyId": "testid", "Action": "DescribeRegions", "Format": "XML", "SignatureMethod": "HMAC-SHA1",
            "SignatureNonce": "3ee8c1b8-83d3-44af-a94f-4e0ad82fd6cf", "SignatureVersion": "1.0",
            "Timestamp": "2016-02-23T12:46:24Z", "Version": "2014-05-26",
        ]
        #expect(
            AliyunVODAPI.signature(method: "GET", parameters: parameters, secret: "testsecret")
                == "OLeaidS1JvxuMvnyHOwuJ+uX5qY=")
        #expect(AliyunVODAPI.percentEncode("a b*c~d/é") == "a%20b%2Ac~d%2F%C3%A9")
    }

    static func answer(_ status: Int, _ code: String) -> HTTPAnswer {
        HTTPAnswer(
            status: HTTPResponseStatus(statusCode: status), headers: HTTPHeaders(),
            body: ByteBuffer(string: #"{"Code": "\#(code)", "Message": "m"}"#))
    }

    @Test(arguments: [
        (403, "SecurityTokenExpired", "not-authenticated", FailureDisposition.credentialsExpired),
        (404, "InvalidAccessKeyId.NotFound", "not-authenticated", .fatal),
        (400, "SignatureDoesNotMatch", "not-authenticated", .fatal),
        (403, "Forbidden.RAM", "forbidden", .fatal),
        (400, "Throttling.User", "rate-limited", .retryable()),
        (503, "ServiceUnavailable", "server-failure", .retryable()),
        (404, "InvalidVideo.NotFound", "not-found", .fatal),
        (400, "SignatureNonceUsed", "invalid-request", .retryable()),
        (403, "StorageQuotaExceeded", "quota-exceeded", .fatal),
    ])
    func errorCodesMapOntoKinds(status: Int, code: String, kind: String, disposition: FailureDisposition) {
        let failure = HTTPFailure.aliyun(Self.answer(status, code), code: code, said: "\(code): m", doing: "calling")
        #expect(failure.kind.rawValue == kind, "\(code)")
        #expect(failure.disposition == disposition, "\(code)")
    }
}
