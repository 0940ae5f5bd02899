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

/// OSS, path-style (`/BUCKET/KEY`, as the SDKs address an IP endpoint), for the configured bucket: the
/// multipart upload (initiate, upload part, list parts, complete, abort), simple `PUT`/`GET`/`HEAD`/`DELETE`
/// of objects and `GET /BUCKET?uploads`. Every request is signed with OSS's V1 header signature; a
/// temporary credential from `UploadAuth` must carry its `x-oss-security-token`, works only for its object
/// and stops working when it expires (`SecurityTokenExpired`).
///
/// A middleware rather than routes, so that the bucket's paths never compete with the other APIs' routes.
struct OSSMiddleware: RouterMiddleware {
    typealias Context = SandboxRequestContext

    let services: SandboxServices
    /// How far `Date` may be from the sandbox's clock.
    static let dateWindow: TimeInterval = 15 * 60
    /// The smallest part but the last, as OSS documents it.
    static let minimumPartSize: Int64 = 100 << 10

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let path = request.uri.path
        let components = path.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).dropFirst()
        guard let bucketPart = path.split(separator: "/", omittingEmptySubsequences: true).first,
            String(bucketPart) == self.services.configuration.ossBucket
        else {
            return try await next(request, context)
        }
        let bucket = String(bucketPart)
        let rawKey = components.first.map { $0.dropFirst(bucket.utf8.count + 1) } ?? ""
        let key = String(rawKey).removingPercentEncoding ?? String(rawKey)
        let query = AliyunSignature.decodeForm((request.uri.query ?? "")[...])

        let latency = self.services.faults.faults.latency
        if latency > 0 { try await Task.sleep(for: .milliseconds(Int64(latency * 1000))) }
        if let injected = self.services.faults.injectedError() {
            self.services.stats.countInjectedError()
            throw OSSError(
                status: injected.status,
                code: injected.status == .tooManyRequests ? "RequestTimeTooManyRequests" : "InternalError",
                message: "The sandbox injected this error (fault injection); retry the request.")
        }
        try await self.authenticate(request, bucket: bucket, key: key, query: query)
        let objects = OSSObjects(services: self.services, bucket: bucket, key: key, query: query)
        switch (request.method, key.isEmpty) {
        case (.get, true) where query["uploads"] != nil: return await objects.listMultipartUploads()
        case (.post, false) where query["uploads"] != nil: return await objects.initiate(request)
        case (.put, false) where query["uploadId"] != nil:
            return try await objects.uploadPart(request, context: context)
        case (.get, false) where query["uploadId"] != nil: return try await objects.listParts()
        case (.post, false) where query["uploadId"] != nil: return try await objects.complete(request)
        case (.delete, false) where query["uploadId"] != nil: return try await objects.abort()
        case (.put, false): return try await objects.put(request, context: context)
        case (.get, false), (.head, false): return try await objects.get(head: request.method == .head)
        case (.delete, false): return await objects.delete()
        default:
            throw OSSError(
                status: .notImplemented, code: "NotImplemented", message: "The sandbox does not implement this request."
            )
        }
    }

    /// Checks the V1 signature, the date, and a temporary credential's token, expiry and object.
    private func authenticate(_ request: Request, bucket: String, key: String, query: [String: String]) async throws {
        guard let authorization = request.headers[.authorization], authorization.hasPrefix("OSS "),
            let colon = authorization.lastIndex(of: ":")
        else {
            throw OSSError(
                status: .forbidden, code: "AccessDenied",
                message: "AccessDenied: sign the request (Authorization: OSS AccessKeyId:Signature).")
        }
        let accessKeyID = String(authorization[authorization.index(authorization.startIndex, offsetBy: 4)..<colon])
        let signature = String(authorization[authorization.index(after: colon)...])
        guard let known = await self.services.state.secret(ofAccessKey: accessKeyID) else {
            throw OSSError(
                status: .forbidden, code: "InvalidAccessKeyId",
                message: "The OSS Access Key Id you provided does not exist in our records.",
                extra: [("OSSAccessKeyId", accessKeyID)])
        }
        let (secret, temporary) = (known.secret, known.temporary)
        if let temporary {
            guard temporary.expiresAt > Date() else {
                throw OSSError(
                    status: .forbidden, code: "SecurityTokenExpired",
                    message: "The security token you provided has expired.")
            }
            guard request.headers[.ossSecurityToken] == temporary.securityToken else {
                throw OSSError(
                    status: .forbidden, code: "InvalidSecurityToken",
                    message: "The security token you provided is invalid.")
            }
        }
        let dateText = request.headers[.ossDate] ?? request.headers[.date] ?? ""
        guard let date = HTTPDate.parse(dateText) else {
            throw OSSError(
                status: .forbidden, code: "AccessDenied", message: "The request needs a valid Date header.")
        }
        guard abs(date.timeIntervalSinceNow) <= Self.dateWindow else {
            throw OSSError(
                status: .forbidden, code: "RequestTimeTooSkewed",
                message: "The difference between the request time and the current time is too large.")
        }
        let stringToSign = AliyunSignature.ossStringToSign(
            method: request.method.rawValue, headers: request.headers, bucket: bucket, key: key, query: query)
        guard AliyunSignature.hmacSHA1(stringToSign, key: secret) == signature else {
            throw OSSError(
                status: .forbidden, code: "SignatureDoesNotMatch",
                message: "The request signature we calculated does not match the signature you provided.",
                extra: [
                    ("StringToSign", stringToSign), ("SignatureProvided", signature), ("OSSAccessKeyId", accessKeyID),
                ])
        }
        if let temporary, temporary.bucket != bucket || temporary.object != key {
            throw OSSError.accessDenied
        }
    }
}

/// The object operations of one request to `bucket/key`.
struct OSSObjects: Sendable {
    let services: SandboxServices
    let bucket: String
    let key: String
    let query: [String: String]

    private var state: SandboxState { services.state }
    private var folder: DataFolder { services.state.folder }

    func initiate(_ request: Request) async -> Response {
        let upload = await state.initiateMultipart(
            bucket: bucket, key: key, contentType: request.headers[.contentType] ?? "application/octet-stream")
        return OSSXML.response(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<InitiateMultipartUploadResult>"
                + "<Bucket>\(OSSXML.escape(bucket))</Bucket><Key>\(OSSXML.escape(key))</Key>"
                + "<UploadId>\(upload.id)</UploadId></InitiateMultipartUploadResult>")
    }

    func uploadPart(_ request: Request, context: SandboxRequestContext) async throws -> Response {
        let uploadID = query["uploadId"] ?? ""
        guard let number = query["partNumber"].flatMap(Int.init), (1...10_000).contains(number) else {
            throw OSSError(
                status: .badRequest, code: "InvalidArgument",
                message: "Part number must be an integer between 1 and 10000.")
        }
        _ = try await state.multipart(uploadID, bucket: bucket, key: key)
        let (size, md5) = try await receive(
            request, context: context, into: SandboxState.partFile(uploadID: uploadID, number: number))
        let etag = "\"\(md5)\""
        try await state.recordPart(
            OSSPartRecord(number: number, etag: etag, size: size, modifiedAt: Date()), uploadID: uploadID)
        return OSSXML.response("", headers: [.eTag: etag])
    }

    func listParts() async throws -> Response {
        let upload = try await state.multipart(query["uploadId"] ?? "", bucket: bucket, key: key)
        let marker = query["part-number-marker"].flatMap(Int.init) ?? 0
        let maxParts = min(1000, max(1, query["max-parts"].flatMap(Int.init) ?? 1000))
        let after = upload.parts.filter { $0.number > marker }
        let page = after.prefix(maxParts)
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ListPartsResult>"
        xml +=
            "<Bucket>\(OSSXML.escape(bucket))</Bucket><Key>\(OSSXML.escape(key))</Key><UploadId>\(upload.id)</UploadId>"
        xml += "<PartNumberMarker>\(marker)</PartNumberMarker>"
        xml += "<NextPartNumberMarker>\(page.last?.number ?? marker)</NextPartNumberMarker>"
        xml += "<MaxParts>\(maxParts)</MaxParts><IsTruncated>\(after.count > page.count)</IsTruncated>"
        for part in page {
            xml +=
                "<Part><PartNumber>\(part.number)</PartNumber><LastModified>\(OSSXML.time(part.modifiedAt))</LastModified>"
            xml += "<ETag>\(OSSXML.escape(part.etag))</ETag><Size>\(part.size)</Size></Part>"
        }
        return OSSXML.response(xml + "</ListPartsResult>")
    }

    func complete(_ request: Request) async throws -> Response {
        var request = request
        let upload = try await state.multipart(query["uploadId"] ?? "", bucket: bucket, key: key)
        let body = String(buffer: try await request.collectBody(upTo: JSONResponse.maxRequestBody))
        let numbers = OSSXML.elements("PartNumber", in: body).compactMap {
            Int($0.trimmingCharacters(in: .whitespaces))
        }
        let etags = OSSXML.elements("ETag", in: body).map { $0.trimmingCharacters(in: .whitespaces) }
        guard !numbers.isEmpty, numbers.count == etags.count else {
            throw OSSError(
                status: .badRequest, code: "MalformedXML", message: "The XML you provided was not well-formed.")
        }
        guard zip(numbers, numbers.dropFirst()).allSatisfy({ $0 < $1 }) else {
            throw OSSError(
                status: .badRequest, code: "InvalidPartOrder", message: "The list of parts was not in ascending order.")
        }
        var chosen: [OSSPartRecord] = []
        for (number, etag) in zip(numbers, etags) {
            guard let part = upload.parts.first(where: { $0.number == number }),
                part.etag.trimmingCharacters(in: CharacterSet(charactersIn: "\"")).uppercased()
                    == etag.trimmingCharacters(in: CharacterSet(charactersIn: "\"")).uppercased()
            else {
                throw OSSError(
                    status: .badRequest, code: "InvalidPart",
                    message:
                        "One or more of the specified parts could not be found or the specified entity tag might not have matched the part's entity tag."
                )
            }
            chosen.append(part)
        }
        if chosen.dropLast().contains(where: { $0.size < OSSMiddleware.minimumPartSize }) {
            throw OSSError(
                status: .badRequest, code: "EntityTooSmall",
                message:
                    "Your proposed upload is smaller than the minimum allowed size (100 KB for every part but the last)."
            )
        }
        let fileID = RandomID.hex(bytes: 16)
        try await concatenate(
            chosen.map { folder.uploadPath(SandboxState.partFile(uploadID: upload.id, number: $0.number)) },
            into: folder.uploadPath("oss-" + fileID))
        var digest = Insecure.MD5()
        for part in chosen {
            let hex = part.etag.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            digest.update(data: Data(HexBytes.parse(hex)))
        }
        let etag = "\"\(HexDigest.text(Array(digest.finalize())).uppercased())-\(chosen.count)\""
        let size = chosen.reduce(0) { $0 + $1.size }
        await state.putObject(
            OSSObjectRecord(
                bucket: bucket, key: key, fileID: fileID, size: size, etag: etag, contentType: upload.contentType,
                modifiedAt: Date()))
        await state.endMultipart(upload.id)
        let location = "\(await state.baseURL)/\(bucket)/\(key)"
        return OSSXML.response(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<CompleteMultipartUploadResult><Location>\(OSSXML.escape(location))</Location>"
                + "<Bucket>\(OSSXML.escape(bucket))</Bucket><Key>\(OSSXML.escape(key))</Key><ETag>\(OSSXML.escape(etag))</ETag>"
                + "</CompleteMultipartUploadResult>", headers: [.eTag: etag])
    }

    func abort() async throws -> Response {
        let upload = try await state.multipart(query["uploadId"] ?? "", bucket: bucket, key: key)
        await state.endMultipart(upload.id)
        return OSSXML.response("", status: .noContent)
    }

    func listMultipartUploads() async -> Response {
        var xml =
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ListMultipartUploadsResult><Bucket>\(OSSXML.escape(bucket))</Bucket>"
        xml += "<KeyMarker></KeyMarker><UploadIdMarker></UploadIdMarker><NextKeyMarker></NextKeyMarker>"
        xml += "<NextUploadIdMarker></NextUploadIdMarker><Delimiter></Delimiter><Prefix></Prefix>"
        xml += "<MaxUploads>1000</MaxUploads><IsTruncated>false</IsTruncated>"
        for upload in await state.multipartUploads(bucket: bucket) {
            xml += "<Upload><Key>\(OSSXML.escape(upload.key))</Key><UploadId>\(upload.id)</UploadId>"
            xml += "<Initiated>\(OSSXML.time(upload.createdAt))</Initiated></Upload>"
        }
        return OSSXML.response(xml + "</ListMultipartUploadsResult>")
    }

    func put(_ request: Request, context: SandboxRequestContext) async throws -> Response {
        let fileID = RandomID.hex(bytes: 16)
        let (size, md5) = try await receive(request, context: context, into: "oss-" + fileID)
        let etag = "\"\(md5)\""
        await state.putObject(
            OSSObjectRecord(
                bucket: bucket, key: key, fileID: fileID, size: size, etag: etag,
                contentType: request.headers[.contentType] ?? "application/octet-stream", modifiedAt: Date()))
        return OSSXML.response("", headers: [.eTag: etag])
    }

    func get(head: Bool) async throws -> Response {
        guard let object = await state.ossObject(bucket: bucket, key: key) else { throw OSSError.noSuchKey }
        let headers: HTTPFields = [
            .contentType: object.contentType, .eTag: object.etag, .contentLength: String(object.size),
            .lastModified: HTTPDate.format(object.modifiedAt),
        ]
        if head { return Response(status: .ok, headers: headers, body: ResponseBody()) }
        let path = folder.uploadPath("oss-" + object.fileID)
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
        await state.removeObject(bucket: bucket, key: key)
        return OSSXML.response("", status: .noContent)
    }

    /// Streams the body to a temporary file and renames it to `name` once every byte arrived (a body cut
    /// off leaves nothing, as OSS keeps no partial part); returns its size and upper-case hex MD5.
    private func receive(_ request: Request, context: SandboxRequestContext, into name: String) async throws -> (
        Int64, String
    ) {
        let temporary = "oss-receiving-" + RandomID.hex(bytes: 8)
        let path = folder.uploadPath(temporary)
        let outcome: UploadBodyWriter.Outcome
        do {
            outcome = try await UploadBodyWriter(stats: services.stats).write(
                request.body, to: path, from: 0, limit: services.configuration.maxUploadSize,
                dropAfter: services.faults.dropLimit(), digest: .md5(Insecure.MD5()), progress: { _ in })
        } catch {
            folder.removeUpload(temporary)
            throw OSSError(
                status: .internalServerError, code: "InternalError", message: "Cannot store the body: \(error)")
        }
        if outcome.ending == .dropped {
            services.stats.countDroppedConnection()
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

    /// Joins the part files into the object's file, 1 MiB at a time.
    private func concatenate(_ parts: [String], into path: String) async throws {
        try await UploadFile.with(path: path, forWriting: true) { output in
            var written: Int64 = 0
            for part in parts {
                try await UploadFile.with(path: part, forWriting: false) { input in
                    var offset: Int64 = 0
                    while true {
                        let chunk = try await input.read(count: 1 << 20, at: offset)
                        guard chunk.readableBytes > 0 else { break }
                        try await output.write(chunk, at: written)
                        offset += Int64(chunk.readableBytes)
                        written += Int64(chunk.readableBytes)
                    }
                }
            }
        }
    }
}

/// Bytes from hexadecimal text (an ETag's MD5).
enum HexBytes {
    static func parse(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex, let next = text.index(index, offsetBy: 2, limitedBy: text.endIndex) {
            guard let byte = UInt8(text[index..<next], radix: 16) else { return [] }
            bytes.append(byte)
            index = next
        }
        return bytes
    }
}
