import Foundation
import Hummingbird
import StageKit

/// OSS, path-style (`/BUCKET/KEY`, as the SDKs address an IP endpoint), for the configured bucket: the
/// multipart upload (initiate, upload part, list parts, complete, abort), simple `PUT`/`GET`/`HEAD`/`DELETE`
/// of objects and `GET /BUCKET?uploads`. Every request is signed with OSS's V4 header signature (or V1, when the
/// sandbox takes it: ``OSSAuthentication``); a temporary credential from `UploadAuth` must carry its
/// `x-oss-security-token`, works only for its object and stops working when it expires (`SecurityTokenExpired`).
///
/// A middleware rather than routes, so that the bucket's paths never compete with the other APIs' routes.
struct OSSMiddleware: RouterMiddleware {
    typealias Context = SandboxRequestContext

    let aliyun: AliyunState

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let path = request.uri.path
        let components = path.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).dropFirst()
        guard let bucketPart = path.split(separator: "/", omittingEmptySubsequences: true).first,
            String(bucketPart) == self.aliyun.core.configuration.ossBucket
        else {
            return try await next(request, context)
        }
        let bucket = String(bucketPart)
        let rawKey = components.first.map { $0.dropFirst(bucket.utf8.count + 1) } ?? ""
        let key = String(rawKey).removingPercentEncoding ?? String(rawKey)
        let query = AliyunSignature.decodeForm((request.uri.query ?? "")[...])

        let core = self.aliyun.core
        try await core.faults.delayAnswer()
        if let injected = core.faults.injectedError() {
            core.stats.countInjectedError()
            throw OSSError(
                status: injected.status,
                code: injected.status == .tooManyRequests ? "RequestTimeTooManyRequests" : "InternalError",
                message: "The sandbox injected this error (fault injection); retry the request.")
        }
        try await OSSAuthentication.check(request, bucket: bucket, key: key, query: query, aliyun: self.aliyun)
        let objects = OSSObjects(aliyun: self.aliyun, bucket: bucket, key: key, query: query)
        switch (request.method, key.isEmpty) {
        case (.get, true) where query["uploads"] != nil: return await objects.listMultipartUploads()
        case (.post, false) where query["uploads"] != nil: return await objects.initiate(request)
        case (.put, false) where query["uploadId"] != nil:
            return try await objects.uploadPart(request, context: context)
        case (.get, false) where query["uploadId"] != nil: return try await objects.listParts()
        case (.post, false) where query["uploadId"] != nil: return try await objects.complete(request, context: context)
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
}
