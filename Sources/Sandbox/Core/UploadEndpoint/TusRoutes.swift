import Foundation
import HTTPTypes
import Hummingbird
import StageKit

/// The upload endpoint `/upload/ID`, shared by every platform that hands out links to it: the tus 1.0.0
/// server (core protocol plus the creation, creation-with-upload, termination, checksum and expiration
/// extensions) and, on the same path, the resumable `PUT` of ``StreamingUpload``.
///
/// Vimeo's `upload_link` is `/upload/ID?token=…` (the token stands in for Vimeo's unguessable upload hosts
/// and paths). `POST /upload` creates standalone uploads for generic tus clients; their `Location` needs no
/// token, the random id being the capability. `Upload-Defer-Length` (creation-defer-length) and
/// concatenation are not offered.
enum TusRoutes {
    static let extensions = "creation,creation-with-upload,termination,checksum,expiration"
    static let offsetContentType = "application/offset+octet-stream"

    /// Where the bytes of upload `uploadID` go, with the `?token=` that opens it.
    static func link(baseURL: String, uploadID: String, token: String?) -> String {
        "\(baseURL)/upload/\(uploadID)" + (token.map { "?token=\($0)" } ?? "")
    }

    static func register(on uploads: RouterGroup<SandboxRequestContext>, core: SandboxCore) {
        let handlers = TusHandlers(core: core)
        uploads.on("upload", method: .options) { _, _ in handlers.options() }
        uploads.on("upload/:id", method: .options) { _, _ in handlers.options() }
        uploads.post("upload") { request, context in try await handlers.create(request, context: context) }
        uploads.head("upload/:id") { request, context in try await handlers.head(request, context: context) }
        uploads.patch("upload/:id") { request, context in try await handlers.patch(request, context: context) }
        uploads.delete("upload/:id") { request, context in try await handlers.terminate(request, context: context) }
        uploads.put("upload/:id") { request, context in
            try await StreamingUpload(core: core).put(
                request,
                context: context,
                uploadID: try context.parameters.require("id"),
                token: request.query("token")
            )
        }
        // tus: clients that cannot send PATCH or DELETE send POST with X-HTTP-Method-Override.
        uploads.post("upload/:id") { request, context in
            switch request.headers[.methodOverride]?.uppercased() {
            case "PATCH": return try await handlers.patch(request, context: context)
            case "DELETE": return try await handlers.terminate(request, context: context)
            case "HEAD": return try await handlers.head(request, context: context)
            default: throw UploadFailure(.methodNotAllowed, "POST needs X-HTTP-Method-Override: PATCH or DELETE.")
            }
        }
    }
}

/// The handlers behind ``TusRoutes``.
struct TusHandlers {
    let core: SandboxCore

    func options() -> Response {
        JSONResponse.empty(
            .noContent,
            headers: [
                .tusVersion: TusMiddleware.version,
                .tusExtension: TusRoutes.extensions,
                .tusChecksumAlgorithm: ChecksumDigest.algorithms,
                .tusMaxSize: String(self.core.configuration.maxUploadSize),
            ]
        )
    }

    /// `POST /upload`: creation, and creation-with-upload when the request carries a body.
    func create(_ request: Request, context: SandboxRequestContext) async throws -> Response {
        guard let lengthText = request.headers[.uploadLength] else {
            if request.headers[.uploadDeferLength] != nil {
                throw UploadFailure(.badRequest, "Upload-Defer-Length is not supported; send Upload-Length.")
            }
            throw UploadFailure(.badRequest, "Upload-Length is required.")
        }
        guard let length = Int64(lengthText), length >= 0 else {
            throw UploadFailure(.badRequest, "Upload-Length must be a non-negative integer.")
        }
        guard length <= self.core.configuration.maxUploadSize else {
            throw UploadFailure(.contentTooLarge, "Upload-Length exceeds Tus-Max-Size.")
        }
        let created = await self.core.uploads.createStandalone(
            length: length,
            metadata: request.headers[.uploadMetadata]
        )
        var upload = created
        let carriesBody = request.headers[.contentType]?.lowercased().hasPrefix(TusRoutes.offsetContentType) ?? false
        if carriesBody, (request.contentLength ?? 1) > 0 {
            let checksum = try request.headers[.uploadChecksum].map(ChecksumDigest.parse)
            let lease = try await self.core.uploads.beginWrite(created.id, token: nil, expectedOffset: 0)
            let result = try await self.writeChunk(request, context: context, lease: lease, checksum: checksum)
            if result.checksumMatched == false {
                throw UploadFailure(.init(code: 460, reasonPhrase: "Checksum Mismatch"), "Upload-Checksum mismatch.")
            }
            upload = result.upload
        }
        var headers: HTTPFields = [
            .location: TusRoutes.link(baseURL: self.core.address.baseURL, uploadID: upload.id, token: nil),
            .uploadOffset: String(upload.offset),
        ]
        self.addExpiry(upload, to: &headers)
        return JSONResponse.empty(.created, headers: headers)
    }

    func head(_ request: Request, context: SandboxRequestContext) async throws -> Response {
        let upload = try await self.core.uploads.upload(
            try context.parameters.require("id"),
            token: request.query("token")
        )
        var headers: HTTPFields = [
            .uploadOffset: String(upload.offset),
            .uploadLength: String(upload.length),
            .cacheControl: "no-store",
        ]
        if let metadata = upload.metadata {
            headers[.uploadMetadata] = metadata
        }
        self.addExpiry(upload, to: &headers)
        return JSONResponse.empty(.ok, headers: headers)
    }

    func patch(_ request: Request, context: SandboxRequestContext) async throws -> Response {
        let id = try context.parameters.require("id")
        guard request.headers[.contentType]?.lowercased().hasPrefix(TusRoutes.offsetContentType) ?? false else {
            throw UploadFailure(.unsupportedMediaType, "PATCH needs Content-Type: \(TusRoutes.offsetContentType).")
        }
        guard let offsetText = request.headers[.uploadOffset], let offset = Int64(offsetText), offset >= 0 else {
            throw UploadFailure(.badRequest, "Upload-Offset must be a non-negative integer.")
        }
        let current = try await self.core.uploads.upload(id, token: request.query("token"))
        guard current.uploadProtocol == .tus else {
            throw UploadFailure(
                .methodNotAllowed, "This is a streaming upload: send PUT with Content-Range.", headers: [.allow: "PUT"])
        }
        if let contentLength = request.contentLength, offset + contentLength > current.length {
            throw UploadFailure(.contentTooLarge, "The chunk would go past Upload-Length \(current.length).")
        }
        let checksum = try request.headers[.uploadChecksum].map(ChecksumDigest.parse)
        let lease = try await self.core.uploads.beginWrite(id, token: request.query("token"), expectedOffset: offset)
        let result = try await self.writeChunk(request, context: context, lease: lease, checksum: checksum)
        if result.checksumMatched == false {
            throw UploadFailure(
                .init(code: 460, reasonPhrase: "Checksum Mismatch"),
                "Upload-Checksum does not match the chunk; the chunk was discarded.",
                headers: [.uploadOffset: String(result.upload.offset)]
            )
        }
        var headers: HTTPFields = [.uploadOffset: String(result.upload.offset)]
        self.addExpiry(result.upload, to: &headers)
        if result.ending == .overflow {
            throw UploadFailure(
                .contentTooLarge, "The chunk went past Upload-Length; the excess was not stored.", headers: headers)
        }
        return JSONResponse.empty(.noContent, headers: headers)
    }

    func terminate(_ request: Request, context: SandboxRequestContext) async throws -> Response {
        try await self.core.uploads.terminate(try context.parameters.require("id"), token: request.query("token"))
        return JSONResponse.empty(.noContent)
    }

    private func writeChunk(
        _ request: Request,
        context: SandboxRequestContext,
        lease: UploadRecord,
        checksum: (digest: ChecksumDigest, expected: [UInt8])?
    ) async throws -> UploadWriteSession.Result {
        try await UploadWriteSession(core: self.core).write(
            request,
            context: context,
            lease: lease,
            start: lease.offset,
            limit: lease.length - lease.offset,
            checksum: checksum
        )
    }

    private func addExpiry(_ upload: UploadRecord, to headers: inout HTTPFields) {
        if !upload.isComplete {
            headers[.uploadExpires] = HTTPDate.format(upload.expiresAt)
        }
    }
}
