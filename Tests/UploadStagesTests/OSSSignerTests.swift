import Foundation
import HTTPTransport
import StageKit
import Testing

@testable import UploadStages

/// OSS's V1 signature against one computed by oss2's own ProviderAuth for the same request.
@Suite struct OSSSignerTests {
    @Test func theV1SignatureIsTheOneOss2Computes() {
        // oss2 2.19: ProviderAuth._ProviderAuth__make_signature for PUT /bucket/dir/key name.mp4
        // ?partNumber=1&uploadId=U1&max-parts=5 with Content-Type text/plain, x-oss-meta-a: b and the token.
        let signer = OSSSigner(
            credentials: AlibabaAccessKey(id: "ak", secret: "sk", securityToken: "tok"))
        let added = signer.sign(
            method: "PUT", bucket: "bucket", key: "dir/key name.mp4",
            query: [("partNumber", "1"), ("uploadId", "U1"), ("max-parts", "5")],
            headers: [("Content-Type", "text/plain"), ("x-oss-meta-a", "b")],
            date: Date(timeIntervalSince1970: 1_672_223_261))
        #expect(added.first { $0.0 == "Date" }?.1 == "Wed, 28 Dec 2022 10:27:41 GMT")
        #expect(added.first { $0.0 == "x-oss-security-token" }?.1 == "tok")
        #expect(added.first { $0.0 == "Authorization" }?.1 == "OSS ak:Gy3NkI932q/2J1b8Vk0rxXx+doY=")
    }
}
