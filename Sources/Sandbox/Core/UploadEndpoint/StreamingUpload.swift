import HTTPTypes
import Hummingbird
import StageKit

/// The resumable `PUT` protocol of Vimeo's legacy streaming approach (also used by the generic
/// assets' `upload_url`):
///
/// - `PUT` with `Content-Range: bytes START-END/SIZE` stores a piece; without `Content-Range` the
///   body is the whole file from byte 0. A piece may overlap what is stored but not leave a gap
///   (416 with the current `Range`).
/// - `PUT` with `Content-Range: bytes */SIZE` (or `bytes */*`) and an empty body asks what is
///   stored: `308 Resume Incomplete` with `Range: bytes=0-LAST` (no `Range` when nothing is).
/// - A `PUT` that leaves the upload incomplete is answered `308` with `Range`; once every byte is
///   stored the answer is `200`.
///
/// A legacy ticket (`type: streaming`) has no size: the first `PUT` declares it, through the `SIZE` of its
/// `Content-Range` or, without one, its `Content-Length`.
///
/// Vimeo documents `308` for the verify step even when every byte is there; the sandbox answers
/// `200` (with the same `Range`) then, so clients of the common Google-style protocol stop
/// probing, while a client that reads `Range` sees the same value either way.
struct StreamingUpload {
    static let resumeIncomplete = HTTPResponse.Status(code: 308, reasonPhrase: "Resume Incomplete")

    let core: SandboxCore

    func put(_ request: Request, context: SandboxRequestContext, uploadID: String, token: String?) async throws
        -> Response
    {
        var current = try await self.core.uploads.upload(uploadID, token: token)
        guard current.uploadProtocol == .streaming else {
            throw UploadFailure(
                .methodNotAllowed, "This is a tus upload: use PATCH with Upload-Offset.",
                headers: [.allow: "PATCH, HEAD, DELETE, OPTIONS"])
        }
        let range = try Self.contentRange(of: request)
        if current.lengthDeferred == true {
            guard let declared = try await self.declareLength(of: current, range: range, request: request) else {
                return self.progressResponse(current)
            }
            current = declared
        }
        guard let piece = try self.piece(range, of: current, request: request) else {
            return self.progressResponse(current)
        }
        let lease = try await self.core.uploads.beginWrite(uploadID, token: token, expectedOffset: nil)
        guard piece.start <= lease.offset else {
            await self.core.uploads.endWrite(uploadID, offset: lease.offset)
            var headers: HTTPFields = [:]
            headers[.range] = ContentRange.rangeHeader(stored: lease.offset)
            throw UploadFailure(
                .rangeNotSatisfiable,
                "The piece starts at \(piece.start) but only \(lease.offset) bytes are stored; resume from there.",
                headers: headers
            )
        }
        let result = try await UploadWriteSession(core: self.core).write(
            request,
            context: context,
            lease: lease,
            start: piece.start,
            limit: piece.end - piece.start + 1,
            checksum: nil
        )
        return self.progressResponse(result.upload)
    }

    /// The request's `Content-Range`, `nil` without one.
    private static func contentRange(of request: Request) throws -> ContentRange? {
        guard let header = request.headers[.contentRange] else { return nil }
        guard let range = ContentRange(header) else {
            throw UploadFailure(.badRequest, "Content-Range must be `bytes START-END/SIZE` or `bytes */SIZE`.")
        }
        return range
    }

    /// A legacy ticket has no size: the first `PUT` declares it. `nil` for a probe that declares none, which
    /// is answered with what is stored (nothing).
    private func declareLength(of upload: UploadRecord, range: ContentRange?, request: Request) async throws
        -> UploadRecord?
    {
        let declared: Int64?
        switch range {
        case .probe(let size): declared = size
        case .bytes(_, _, let size): declared = size
        case nil: declared = request.contentLength
        }
        if let declared {
            return try await self.core.uploads.declareLength(upload.id, declared)
        }
        if case .probe = range {
            return nil
        }
        throw UploadFailure(
            .lengthRequired,
            "The first PUT of a ticket declares the file's size: `Content-Range: bytes 0-LAST/SIZE` or Content-Length."
        )
    }

    /// The first and last byte (inclusive) the request carries; `nil` for a probe, which carries none.
    private func piece(_ range: ContentRange?, of upload: UploadRecord, request: Request) throws -> (
        start: Int64, end: Int64
    )? {
        let piece: (start: Int64, end: Int64)
        switch range {
        case .probe(let size):
            try self.check(size: size, of: upload)
            return nil
        case .bytes(let first, let last, let size):
            try self.check(size: size, of: upload)
            if let contentLength = request.contentLength, contentLength != last - first + 1 {
                throw UploadFailure(
                    .badRequest, "Content-Length \(contentLength) does not match Content-Range \(first)-\(last).")
            }
            piece = (first, last)
        case nil:
            piece = (0, upload.length - 1)
        }
        guard piece.end < upload.length else {
            throw UploadFailure(.rangeNotSatisfiable, "The range goes past the upload's size \(upload.length).")
        }
        return piece
    }

    /// `200` when every byte is stored, otherwise `308` with the `Range` stored so far.
    func progressResponse(_ upload: UploadRecord) -> Response {
        var headers: HTTPFields = [:]
        headers[.range] = ContentRange.rangeHeader(stored: upload.offset)
        return JSONResponse.empty(upload.isComplete ? .ok : Self.resumeIncomplete, headers: headers)
    }

    private func check(size: Int64?, of upload: UploadRecord) throws {
        if let size, size != upload.length {
            throw UploadFailure(
                .badRequest, "Content-Range declares \(size) bytes but the upload's size is \(upload.length).")
        }
    }
}
