import Testing

@testable import PipelineKit

/// Presigned URLs are shown with their signature, credential and token masked, their date and expiry readable.
@Suite struct PresignedURLMaskTests {
    @Test func anOSSV4URLKeepsItsDateAndExpiry() {
        let url =
            "http://127.0.0.1:80/vod-sandbox/a.mp4?x-oss-credential=AK%2F20261129%2Fcn-shanghai%2Foss%2Faliyun_v4_request&x-oss-date=20261129T100000Z&x-oss-expires=3600&x-oss-security-token=tok&x-oss-signature=abc123&x-oss-signature-version=OSS4-HMAC-SHA256"
        #expect(
            PresignedURLMask.masked("pulling \(url), then")
                == "pulling http://127.0.0.1:80/vod-sandbox/a.mp4?x-oss-credential=redacted&x-oss-date=20261129T100000Z&x-oss-expires=3600&x-oss-security-token=redacted&x-oss-signature=redacted&x-oss-signature-version=OSS4-HMAC-SHA256, then"
        )
    }

    @Test func s3AndV1URLsAreMaskedToo() {
        #expect(
            PresignedURLMask.masked("\"https://s3/b/k?X-Amz-Credential=a&X-Amz-Signature=b&X-Amz-Expires=9\"")
                == "\"https://s3/b/k?X-Amz-Credential=redacted&X-Amz-Signature=redacted&X-Amz-Expires=9\"")
        #expect(
            PresignedURLMask.masked("(https://b.oss/k?OSSAccessKeyId=a&Expires=1&Signature=c)")
                == "(https://b.oss/k?OSSAccessKeyId=redacted&Expires=1&Signature=redacted)")
    }

    @Test func otherTextStaysAsItIs() {
        for text in ["no url here", "https://example.com/a?page=2", "a?signature=x without a scheme"] {
            #expect(PresignedURLMask.masked(text) == text)
        }
    }

    @Test func aRedactorShowsSecretsAsExpressionsAndMasksSignatures() {
        let redactor = SecretRedactor(names: ["KEY"], environment: ["KEY": "s3cr3t-value"])
        #expect(
            redactor.shown("s3cr3t-value https://h/k?x-oss-signature=zz")
                == "${env.KEY} https://h/k?x-oss-signature=redacted")
        #expect(redactor.redact("https://h/k?x-oss-signature=zz") == "https://h/k?x-oss-signature=zz")
    }
}
