import Foundation
import HTTPTransport
import StageKit
import Testing

@testable import UploadStages

/// OSS's signatures against those Alibaba's own SDKs compute for the same requests: V1 as oss2's ProviderAuth,
/// V4 as the published vectors of Alibaba's OSS SDK (alibabacloud-oss-python-sdk-v2's signer tests), which oss2's
/// ProviderAuthV4 reproduces.
@Suite struct OSSSignerTests {
    @Test func theV1SignatureIsTheOneOss2Computes() {
        // oss2 2.19: ProviderAuth._ProviderAuth__make_signature for PUT /bucket/dir/key name.mp4
        // ?partNumber=1&uploadId=U1&max-parts=5 with Content-Type text/plain, x-oss-meta-a: b and the token.
        let signer = OSSSigner(
            credentials: AlibabaAccessKey(id: "ak", secret: "sk", securityToken: "tok"), version: .v1)
        let added = signer.sign(
            method: "PUT", bucket: "bucket", key: "dir/key name.mp4",
            query: [("partNumber", "1"), ("uploadId", "U1"), ("max-parts", "5")],
            headers: [("Content-Type", "text/plain"), ("x-oss-meta-a", "b")],
            date: Date(timeIntervalSince1970: 1_672_223_261))
        #expect(added.first { $0.0 == "Date" }?.1 == "Wed, 28 Dec 2022 10:27:41 GMT")
        #expect(added.first { $0.0 == "x-oss-security-token" }?.1 == "tok")
        #expect(added.first { $0.0 == "Authorization" }?.1 == "OSS ak:Gy3NkI932q/2J1b8Vk0rxXx+doY=")
    }

    /// The V4 vectors' request: PUT of `1234+-/123/1.txt` in `bucket`, with unsigned headers among the signed ones
    /// and query names that need encoding (`+`, `|`), some without a value.
    static func v4Signature(token: String?, at seconds: TimeInterval) -> [(String, String)] {
        let signer = OSSSigner(
            credentials: AlibabaAccessKey(id: "ak", secret: "sk", securityToken: token),
            version: .v4(region: "cn-hangzhou"))
        return signer.sign(
            method: "PUT", bucket: "bucket", key: "1234+-/123/1.txt",
            query: [
                ("param1", "value1"), ("+param1", "value3"), ("|param1", "value4"), ("+param2", ""), ("|param2", nil),
                ("param2", ""),
            ],
            headers: [
                ("x-oss-head1", "value"), ("abc", "value"), ("ZAbc", "value"), ("XYZ", "value"),
                ("content-type", "text/plain"),
            ],
            date: Date(timeIntervalSince1970: seconds))
    }

    @Test func theV4SignatureIsTheOneAlibabasSDKsCompute() {
        let added = Self.v4Signature(token: nil, at: 1_702_743_657)
        #expect(added.first { $0.0 == "x-oss-date" }?.1 == "20231216T162057Z")
        #expect(added.first { $0.0 == "x-oss-content-sha256" }?.1 == "UNSIGNED-PAYLOAD")
        #expect(
            added.first { $0.0 == "Authorization" }?.1
                == "OSS4-HMAC-SHA256 Credential=ak/20231216/cn-hangzhou/oss/aliyun_v4_request, Signature=e21d18daa82167720f9b1047ae7e7f1ce7cb77a31e8203a7d5f4624fa0284afe"
        )
        #expect(!added.contains { $0.0 == "Date" })
    }

    /// A temporary credential's token is sent in `x-oss-security-token` and signed with the other `x-oss-*`
    /// headers.
    @Test func theV4SignatureCoversTheSecurityToken() {
        let added = Self.v4Signature(token: "token", at: 1_702_784_856)
        #expect(added.first { $0.0 == "x-oss-security-token" }?.1 == "token")
        #expect(
            added.first { $0.0 == "Authorization" }?.1.hasSuffix(
                "Signature=b94a3f999cf85bcdc00d332fbd3734ba03e48382c36fa4d5af5df817395bd9ea") == true)
    }

    /// A presigned URL's query is the one oss2's `Bucket.sign_url` makes (2.19.1, its clock set to the same time).
    @Test func thePresignedURLIsTheOneOss2Signs() {
        let signer = OSSSigner(
            credentials: AlibabaAccessKey(id: "ak", secret: "sk", securityToken: "token"),
            version: .v4(region: "cn-hangzhou"))
        let query = signer.presignV4(
            method: "GET", bucket: "bucket", key: "dir/a b.mp4", expires: 3600,
            date: Date(timeIntervalSince1970: 1_702_743_657), region: "cn-hangzhou")
        let fields = Dictionary(query, uniquingKeysWith: { first, _ in first })
        #expect(fields["x-oss-credential"] == "ak/20231216/cn-hangzhou/oss/aliyun_v4_request")
        #expect(fields["x-oss-date"] == "20231216T162057Z" && fields["x-oss-expires"] == "3600")
        #expect(fields["x-oss-security-token"] == "token")
        #expect(fields["x-oss-signature"] == "ab8d913b7279c13c8ad3be1fc6a9c47ab4e3bb07381852ae4e324e6646a15921")
    }

    @Test func theV4CanonicalRequestSpellsEveryPart() {
        let canonical = OSSSigner.canonicalRequestV4(
            method: "POST", bucket: "bkt", key: "sv/a b.mp4", query: [("uploads", nil)],
            headers: [
                ("Content-Type", "video/mp4"), ("x-oss-date", "20261129T050639Z"),
                ("x-oss-content-sha256", "UNSIGNED-PAYLOAD"), ("x-oss-security-token", "tok"),
                ("User-Agent", "media-pipeline"),
            ])
        // As oss2 2.19.1 logs it for the same InitiateMultipartUpload.
        #expect(
            canonical
                == "POST\n/bkt/sv/a%20b.mp4\nuploads\ncontent-type:video/mp4\nx-oss-content-sha256:UNSIGNED-PAYLOAD\nx-oss-date:20261129T050639Z\nx-oss-security-token:tok\n\n\nUNSIGNED-PAYLOAD"
        )
    }

    @Test func theRegionComesFromTheEndpoint() {
        for (endpoint, region) in [
            ("oss-cn-shanghai.aliyuncs.com", "cn-shanghai"),
            ("https://oss-cn-shanghai-internal.aliyuncs.com", "cn-shanghai"),
            ("https://outin-123.oss-cn-beijing.aliyuncs.com", "cn-beijing"),
            ("cn-hangzhou.oss.aliyuncs.com", "cn-hangzhou"),
            ("https://oss-media.oss-ap-southeast-1.aliyuncs.com", "ap-southeast-1"),
        ] {
            #expect(OSSSigner.region(ofEndpoint: endpoint) == region, "\(endpoint)")
        }
        for endpoint in ["http://127.0.0.1:9000", "oss-accelerate.aliyuncs.com", "media.example.com"] {
            #expect(OSSSigner.region(ofEndpoint: endpoint) == nil, "\(endpoint)")
        }
    }
}
