import Foundation
import StageKit
import Testing

@testable import Sandbox

/// Alibaba Cloud's official Python SDKs (aliyun-python-sdk-vod and oss2) as clients of the sandbox's VOD
/// and OSS: every request is signed by Alibaba's own code, so the sandbox's checks must agree with it.
@Suite("Alibaba Cloud SDK clients")
struct AliyunSDKClientTests {
    /// `python3` with `oss2` and `aliyunsdkvod` (scripts/install-deps.sh installs them).
    static let python: String? = {
        for folder in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":") {
            let candidate = "\(folder)/python3"
            guard FileManager.default.isExecutableFile(atPath: candidate) else { continue }
            let probe = try? ChildRun.runBlocking(candidate, ["-c", "import oss2, aliyunsdkvod"])
            return probe?.status == 0 ? candidate : nil
        }
        return nil
    }()

    static var script: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("aliyun_sdk_client.py").path
    }

    @Test(
        "the SDKs create a video, upload it to OSS across an expired credential, and see its status move on",
        .enabled(if: Self.python != nil, "needs python3 with oss2 and aliyun-python-sdk-vod")
    )
    func sdkClients() async throws {
        let python = try #require(Self.python)
        let configuration = SandboxConfiguration(transcodeDelay: .seconds(3), stsTTL: .seconds(1))
        try await withSandbox(configuration) { sandbox, _ in
            let result = try await ChildRun.run(
                python, [Self.script, String(sandbox.port), "sandbox-access-key-id", "sandbox-access-key-secret", "1"])
            #expect(result.status == 0, "the SDK client failed: \(result.error)")
            let report = try #require(JSONValue.parse(Array(result.output.utf8)), "it printed: \(result.output)")
            #expect(report["addressKeys"] == ["Bucket", "Endpoint", "FileName"])
            #expect(
                report["authKeys"]
                    == ["AccessKeyId", "AccessKeySecret", "Expiration", "ExpireUTCTime", "Region", "SecurityToken"])
            #expect(report["listedAfterFirstPart"] == [1])
            #expect(report["expiredCode"] == "SecurityTokenExpired")
            #expect(report["refreshSameObject"] == true)
            #expect(report["otherObjectCode"] == "AccessDenied")
            #expect(report["objectIdentical"] == true)
            #expect(report["wrongSecretCode"] == "SignatureDoesNotMatch")
            // As for a new account: V4 scoped to the bucket's region, V1 refused with Alibaba's error code.
            #expect(report["wrongRegion"] == [400, "InvalidArgument", "0002-00000226"])
            #expect(report["v1Answer"] == [403, "AccessDenied", "0002-00000080"])
            // oss2's presigned V4 URL reads the object (a changed parameter breaks the signature), and VOD pulls it.
            #expect(report["presignedIdentical"] == true)
            #expect(report["forgedStatus"] == 403)
            #expect(report["pullStatus"] == "SUCCESS")
            #expect(report["pulledTitle"] == "Pulled")
            // VOD documents that a repeated SessionId is refused, not with which code: any error code will do.
            #expect(report["repeatedSessionCode"]?.stringValue?.isEmpty == false, "\(report)")
            #expect(report["jobsByURL"] == [true])
            #expect(report["statuses"]?.arrayValue?.last == "Normal")
            #expect(report["statuses"]?.arrayValue?.contains("UploadSucc") == true)
            #expect(report["titleAfterUpdate"] == "Renamed")
            #expect(report["tagsAfterUpdate"] == "a,b")
            #expect(report["imageStored"] == true)
            #expect(report["openUploadsBeforeAbort"] == 1)
            #expect(report["openUploadsAfterAbort"] == 0)
            #expect(report["duplicateReferenceCode"] == "InvalidParameter.ReferenceId")
            // The documented limits, with the codes VOD answers them with; 128 characters are accepted.
            #expect(
                report["limitCodes"] == [
                    "LengthExceededMax", "IllegalCharacters", "InvalidFileName.Extension", "TagsExceededMax",
                    "LengthExceededMax", .null,
                ])
            #expect(report["imageWithoutTypeCode"] == "MissingParameter")
            // The SDK says InvalidAccessKeySecret only when the server's string to sign (in its
            // SignatureDoesNotMatch message) is the one it signed: the sandbox canonicalised as the SDK does.
            #expect(report["wrongVODSecretCode"] == "InvalidAccessKeySecret")
            #expect(report["afterDeleteCode"] == "InvalidVideo.NotFound")
        }
    }

    @Test(
        "a sandbox told to take V1 signatures, as an account made before March 2025, takes oss2's V1 requests",
        .enabled(if: Self.python != nil, "needs python3 with oss2 and aliyun-python-sdk-vod")
    )
    func v1WhenAccepted() async throws {
        let python = try #require(Self.python)
        let script = """
            import sys, oss2
            bucket = oss2.Bucket(oss2.Auth("sandbox-access-key-id", "sandbox-access-key-secret"),
                                 "http://127.0.0.1:" + sys.argv[1], "vod-sandbox")
            bucket.put_object("v1/object.bin", b"signed with V1")
            print(bucket.get_object("v1/object.bin").read().decode())
            """
        try await withSandbox(SandboxConfiguration(acceptsOSSV1: true)) { sandbox, _ in
            let result = try await ChildRun.run(python, ["-c", script, String(sandbox.port)])
            #expect(result.status == 0, "\(result.error)")
            #expect(result.output == "signed with V1\n")
        }
    }
}
