import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import StageKit

/// The multipart upload: initiate, upload part, list parts, complete, abort, and `GET /BUCKET?uploads`.
extension OSSObjects {
    func initiate(_ request: Request) async -> Response {
        let upload = await aliyun.initiateMultipart(
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
        _ = try await aliyun.multipart(uploadID, bucket: bucket, key: key)
        let (size, md5) = try await receive(
            request, context: context, into: OSSFiles.part(uploadID: uploadID, number: number))
        let etag = "\"\(md5)\""
        try await aliyun.recordPart(
            OSSPartRecord(number: number, etag: etag, size: size, modifiedAt: Date()), uploadID: uploadID)
        return OSSXML.response("", headers: [.eTag: etag])
    }

    /// Lists the parts; with the `refuseListParts` fault, a 400 `InvalidArgument` instead.
    func listParts() async throws -> Response {
        let upload = try await aliyun.multipart(query["uploadId"] ?? "", bucket: bucket, key: key)
        if await aliyun.takeListPartsRefusal() {
            throw OSSError(status: .badRequest, code: "InvalidArgument", message: "The request could not be listed.")
        }
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

    /// Completes the upload. With the `dropCompleteAnswers` fault the object is made and the connection closed
    /// before the answer: OSS's reference says a CompleteMultipartUpload goes on when the client disconnects. With
    /// the `loseCompletes` fault the connection closes before anything is completed (a request lost on its way);
    /// with `failCompleteAnswers` the upload completes and the answer is a 500 `InternalError`.
    func complete(_ request: Request, context: SandboxRequestContext) async throws -> Response {
        var request = request
        let upload = try await aliyun.multipart(query["uploadId"] ?? "", bucket: bucket, key: key)
        let body = String(buffer: try await request.collectBody(upTo: JSONResponse.maxRequestBody))
        if await aliyun.takeCompleteLoss() {
            aliyun.core.stats.countDroppedConnection()
            context.channel.close(promise: nil)
            return OSSXML.response("")
        }
        let chosen = try Self.chosenParts(body, of: upload)
        if await aliyun.takeCompleteRefusal() { throw Self.invalidPart }
        let fileID = RandomID.hex(bytes: 16)
        try await concatenate(
            chosen.map { folder.uploadPath(OSSFiles.part(uploadID: upload.id, number: $0.number)) },
            into: folder.uploadPath(OSSFiles.object(fileID)))
        var digest = Insecure.MD5()
        for part in chosen {
            let hex = part.etag.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            digest.update(data: Data(HexBytes.parse(hex)))
        }
        let etag = "\"\(HexDigest.text(Array(digest.finalize())).uppercased())-\(chosen.count)\""
        let size = chosen.reduce(0) { $0 + $1.size }
        await aliyun.putObject(
            OSSObjectRecord(
                bucket: bucket, key: key, fileID: fileID, size: size, etag: etag, contentType: upload.contentType,
                modifiedAt: Date()))
        await aliyun.endMultipart(upload.id)
        if await aliyun.takeCompleteAnswerFailure() {
            throw OSSError(
                status: .internalServerError, code: "InternalError",
                message: "We encountered an internal error. Please try again.")
        }
        if await aliyun.takeCompleteAnswerDrop() {
            aliyun.core.stats.countDroppedConnection()
            context.channel.close(promise: nil)
        }
        let location = "\(aliyun.baseURL)/\(bucket)/\(key)"
        return OSSXML.response(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<CompleteMultipartUploadResult><Location>\(OSSXML.escape(location))</Location>"
                + "<Bucket>\(OSSXML.escape(bucket))</Bucket><Key>\(OSSXML.escape(key))</Key><ETag>\(OSSXML.escape(etag))</ETag>"
                + "</CompleteMultipartUploadResult>", headers: [.eTag: etag])
    }

    /// OSS's answer to a completion naming a part it does not have (or, with the `refuseCompletes` fault, any).
    private static let invalidPart = OSSError(
        status: .badRequest, code: "InvalidPart",
        message:
            "One or more of the specified parts could not be found or the specified entity tag might not have matched the part's entity tag."
    )

    /// The parts a complete request lists (`body`), checked against those uploaded: a list in ascending
    /// order, each part there with its ETag, every part but the last at least ``minimumPartSize``.
    private static func chosenParts(_ body: String, of upload: OSSMultipartRecord) throws -> [OSSPartRecord] {
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
                throw Self.invalidPart
            }
            chosen.append(part)
        }
        if chosen.dropLast().contains(where: { $0.size < self.minimumPartSize }) {
            throw OSSError(
                status: .badRequest, code: "EntityTooSmall",
                message:
                    "Your proposed upload is smaller than the minimum allowed size (100 KB for every part but the last)."
            )
        }
        return chosen
    }

    func abort() async throws -> Response {
        let upload = try await aliyun.multipart(query["uploadId"] ?? "", bucket: bucket, key: key)
        await aliyun.endMultipart(upload.id)
        return OSSXML.response("", status: .noContent)
    }

    func listMultipartUploads() async -> Response {
        var xml =
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ListMultipartUploadsResult><Bucket>\(OSSXML.escape(bucket))</Bucket>"
        xml += "<KeyMarker></KeyMarker><UploadIdMarker></UploadIdMarker><NextKeyMarker></NextKeyMarker>"
        xml += "<NextUploadIdMarker></NextUploadIdMarker><Delimiter></Delimiter><Prefix></Prefix>"
        xml += "<MaxUploads>1000</MaxUploads><IsTruncated>false</IsTruncated>"
        for upload in await aliyun.multipartUploads(bucket: bucket) {
            xml += "<Upload><Key>\(OSSXML.escape(upload.key))</Key><UploadId>\(upload.id)</UploadId>"
            xml += "<Initiated>\(OSSXML.time(upload.createdAt))</Initiated></Upload>"
        }
        return OSSXML.response(xml + "</ListMultipartUploadsResult>")
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
