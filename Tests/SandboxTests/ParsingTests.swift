import Foundation
import HTTPTypes
import StageKit
import Testing

@testable import Sandbox

@Suite("parsing")
struct ParsingTests {
    @Test("fields= keeps top-level and dotted paths, and applies to each element of an array")
    func fieldSelection() throws {
        let value: JSONValue = ["uri": "/videos/1", "name": "a", "upload": ["status": "complete", "size": 3]]
        let selection = try #require(FieldSelection("uri, upload.status"))
        #expect(selection.apply(to: value) == ["uri": "/videos/1", "upload": ["status": "complete"]])
        #expect(
            selection.apply(to: [value, value]) == [
                ["uri": "/videos/1", "upload": ["status": "complete"]],
                ["uri": "/videos/1", "upload": ["status": "complete"]],
            ])
        #expect(
            FieldSelection("upload,upload.status")?.apply(to: value) == ["upload": ["status": "complete", "size": 3]])
        #expect(FieldSelection("") == nil)
        #expect(FieldSelection(nil) == nil)
    }

    @Test("Content-Range pieces and probes")
    func contentRange() {
        #expect(ContentRange("bytes 0-99/200") == .bytes(start: 0, end: 99, size: 200))
        #expect(ContentRange("bytes 100-199/*") == .bytes(start: 100, end: 199, size: nil))
        #expect(ContentRange("bytes */200") == .probe(size: 200))
        #expect(ContentRange("bytes */*") == .probe(size: nil))
        #expect(ContentRange("bytes 5-4/200") == nil)
        #expect(ContentRange("bytes 0-200/200") == nil)
        #expect(ContentRange("items 0-1/2") == nil)
        #expect(ContentRange.rangeHeader(stored: 0) == nil)
        #expect(ContentRange.rangeHeader(stored: 10) == "bytes=0-9")
    }

    @Test("Upload-Expires uses the RFC 7231 date format")
    func httpDate() {
        #expect(HTTPDate.format(Date(timeIntervalSince1970: 784_111_777)) == "Sun, 06 Nov 1994 08:49:37 GMT")
    }

    @Test("every custom header name is the literal it was built from")
    func headerNames() {
        let names: [(HTTPField.Name, String)] = [
            (.tusResumable, "Tus-Resumable"), (.tusVersion, "Tus-Version"), (.tusExtension, "Tus-Extension"),
            (.tusMaxSize, "Tus-Max-Size"), (.tusChecksumAlgorithm, "Tus-Checksum-Algorithm"),
            (.uploadOffset, "Upload-Offset"), (.uploadLength, "Upload-Length"),
            (.uploadDeferLength, "Upload-Defer-Length"), (.uploadMetadata, "Upload-Metadata"),
            (.uploadExpires, "Upload-Expires"), (.uploadChecksum, "Upload-Checksum"),
            (.idempotencyKey, "Idempotency-Key"), (.methodOverride, "X-HTTP-Method-Override"),
        ]
        for (name, literal) in names {
            #expect(name.rawName == literal)
        }
    }

    @Test("the seeded generator is reproducible")
    func seededFaults() {
        let first = FaultInjector(SandboxFaults(errorRate: 0.5, seed: 3))
        let second = FaultInjector(SandboxFaults(errorRate: 0.5, seed: 3))
        let a = (0..<50).map { _ in first.injectedError()?.status.code }
        let b = (0..<50).map { _ in second.injectedError()?.status.code }
        #expect(a == b)
        #expect(a.contains { $0 != nil } && a.contains { $0 == nil })
    }
}
