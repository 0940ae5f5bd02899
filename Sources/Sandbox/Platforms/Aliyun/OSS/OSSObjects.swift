import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import StageKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The object operations of one request to `bucket/key`.
struct OSSObjects: Sendable {
    /// The smallest part but the last, as OSS documents it.
    static let minimumPartSize: Int64 = 100 << 10

    let aliyun: AliyunState
    let bucket: String
    let key: String
    let query: [String: String]

    var folder: DataFolder { self.aliyun.core.folder }

    func put(_ request: Request, context: SandboxRequestContext) async throws -> Response {
        let fileID = RandomID.hex(bytes: 16)
        let (size, md5) = try await receive(request, context: context, into: OSSFiles.object(fileID))
        let etag = "\"\(md5)\""
        await aliyun.putObject(
            OSSObjectRecord(
                bucket: bucket, key: key, fileID: fileID, size: size, etag: etag,
                contentType: request.headers[.contentType] ?? "application/octet-stream", modifiedAt: Date()))
        return OSSXML.response("", headers: [.eTag: etag])
    }

    func get(head: Bool) async throws -> Response {
        guard let object = await aliyun.ossObject(bucket: bucket, key: key) else { throw OSSError.noSuchKey }
        let headers: HTTPFields = [
            .contentType: object.contentType, .eTag: object.etag, .contentLength: String(object.size),
            .lastModified: HTTPDate.format(object.modifiedAt),
        ]
        if head { return Response(status: .ok, headers: headers, body: ResponseBody()) }
        let path = folder.uploadPath(OSSFiles.object(object.fileID))
        let size = object.size
        return Response(
            status: .ok, headers: headers,
            body: ResponseBody(contentLength: Int(size)) { writer in
                try await UploadFile.with(path: path, forWriting: false) { file in
                    var offset: Int64 = 0
                    while offset < size {
                        let chunk = try await file.read(count: Int(min(1 << 20, size - offset)), at: offset)
                        guard chunk.readableBytes > 0 else { break }
                        try await writer.write(chunk)
                        offset += Int64(chunk.readableBytes)
                    }
                }
                try await writer.finish(nil)
            })
    }

    func delete() async -> Response {
        await aliyun.removeObject(bucket: bucket, key: key)
        return OSSXML.response("", status: .noContent)
    }

    /// Streams the body to a temporary file and renames it to `name` once every byte arrived (a body cut
    /// off leaves nothing, as OSS keeps no partial part); returns its size and upper-case hex MD5.
    func receive(_ request: Request, context: SandboxRequestContext, into name: String) async throws -> (
        Int64, String
    ) {
        let temporary = OSSFiles.receiving()
        let path = folder.uploadPath(temporary)
        let outcome: UploadBodyWriter.Outcome
        do {
            let core = aliyun.core
            outcome = try await UploadBodyWriter(stats: core.stats).write(
                request.body, to: path, from: 0, limit: core.configuration.maxUploadSize,
                dropAfter: core.faults.dropLimit(), digest: .md5(Insecure.MD5()), progress: { _ in })
        } catch {
            folder.removeUpload(temporary)
            throw OSSError(
                status: .internalServerError, code: "InternalError", message: "Cannot store the body: \(error)")
        }
        if outcome.ending == .dropped {
            aliyun.core.stats.countDroppedConnection()
            context.channel.close(promise: nil)
        }
        let expected = request.contentLength
        guard outcome.ending == .finished, expected.map({ $0 == outcome.written }) ?? true, let digest = outcome.digest
        else {
            folder.removeUpload(temporary)
            throw OSSError(
                status: .badRequest, code: "IncompleteBody",
                message: "The body ended before Content-Length bytes arrived.")
        }
        let md5 = HexDigest.text(digest.finalize()).uppercased()
        if let sent = request.headers[.contentMD5], Data(base64Encoded: sent).map(Array.init) != digest.finalize() {
            folder.removeUpload(temporary)
            throw OSSError(
                status: .badRequest, code: "InvalidDigest", message: "The Content-MD5 you specified is not valid.")
        }
        guard rename(path, folder.uploadPath(name)) == 0 else {
            folder.removeUpload(temporary)
            throw OSSError(status: .internalServerError, code: "InternalError", message: "Cannot store the body.")
        }
        return (outcome.written, md5)
    }

}
