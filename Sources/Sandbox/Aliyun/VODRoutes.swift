import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import StageKit

/// ApsaraVideo VOD's RPC-style API (version 2017-03-21) at the root path: `Action` and the common
/// parameters in the query or a form body, signed with the documented RPC signature (HMAC-SHA1 keyed with
/// `AccessKeySecret&`). Answers JSON: `CreateUploadVideo`, `RefreshUploadVideo`, `CreateUploadImage`,
/// `GetVideoInfo`, `UpdateVideoInfo`, `DeleteVideo`; errors with the documented codes.
enum VODRoutes {
    static let version = "2017-03-21"
    /// How far `Timestamp` may be from the sandbox's clock.
    static let timestampWindow: TimeInterval = 15 * 60

    static func register(on router: Router<SandboxRequestContext>, services: SandboxServices) {
        let rpc = router.group().add(middleware: FaultMiddleware(services: services))
        rpc.get("/") { request, _ in try await self.answer(request, services: services) }
        rpc.post("/") { request, _ in try await self.answer(request, services: services) }
        AliyunAdminRoutes.register(on: router, services: services)
    }

    /// Checks the common parameters and the signature, then runs the action.
    static func answer(_ request: Request, services: SandboxServices) async throws -> Response {
        var request = request
        var parameters = AliyunSignature.decodeForm((request.uri.query ?? "")[...])
        if request.headers[.contentType]?.lowercased().hasPrefix("application/x-www-form-urlencoded") ?? false {
            let body = try await request.collectBody(upTo: JSONResponse.maxRequestBody)
            let form = AliyunSignature.decodeForm(String(buffer: body)[...])
            parameters.merge(form) { query, _ in query }
        }
        let call = RPCCall(parameters: parameters)
        for name in [
            "Action", "Version", "AccessKeyId", "Signature", "SignatureMethod", "SignatureVersion", "SignatureNonce",
            "Timestamp",
        ] where parameters[name] == nil {
            throw VODError.missing(name)
        }
        guard parameters["Version"] == Self.version else {
            throw VODError.invalid("Version", "this API is version \(Self.version)")
        }
        guard parameters["SignatureMethod"] == "HMAC-SHA1", parameters["SignatureVersion"] == "1.0" else {
            throw VODError(
                status: .badRequest, code: "InvalidSignatureMethod",
                message: "Specified signature method is not supported: use HMAC-SHA1, version 1.0.")
        }
        let formatter = ISO8601DateFormatter()
        guard let timestamp = formatter.date(from: call["Timestamp"] ?? "") else {
            throw VODError(
                status: .badRequest, code: "InvalidTimeStamp.Format",
                message: "Specified time stamp or date value is not well formatted.")
        }
        guard abs(timestamp.timeIntervalSinceNow) <= Self.timestampWindow else {
            throw VODError(
                status: .badRequest, code: "InvalidTimeStamp.Expired",
                message: "Specified time stamp or date value is expired.")
        }
        let accessKeyID = call["AccessKeyId"] ?? ""
        guard let key = await services.state.secret(ofAccessKey: accessKeyID), key.temporary == nil else {
            throw VODError(
                status: .notFound, code: "InvalidAccessKeyId.NotFound", message: "Specified access key is not found.")
        }
        let expected = AliyunSignature.rpcSignature(
            method: request.method.rawValue, parameters: parameters, secret: key.secret)
        guard expected == call["Signature"] else {
            let stringToSign = AliyunSignature.rpcStringToSign(method: request.method.rawValue, parameters: parameters)
            throw VODError(
                status: .badRequest, code: "SignatureDoesNotMatch",
                message: "Specified signature is not matched with our calculation. server string to sign is:"
                    + stringToSign)
        }
        guard await services.state.useNonce(call["SignatureNonce"] ?? "") else {
            throw VODError(
                status: .badRequest, code: "SignatureNonceUsed", message: "Specified signature nonce was used already.")
        }
        let actions = VODActions(services: services, call: call)
        switch call["Action"] ?? "" {
        case "CreateUploadVideo": return try await actions.createUploadVideo()
        case "RefreshUploadVideo": return try await actions.refreshUploadVideo()
        case "CreateUploadImage": return try await actions.createUploadImage()
        case "GetVideoInfo": return try await actions.getVideoInfo()
        case "UpdateVideoInfo": return try await actions.updateVideoInfo()
        case "DeleteVideo": return try await actions.deleteVideo()
        case let action:
            throw VODError(
                status: .notFound, code: "InvalidAction.NotFound",
                message: "Specified api \(action) is not found, please check your url and method.")
        }
    }
}

/// The parameters of one RPC call.
struct RPCCall: Sendable {
    let parameters: [String: String]

    subscript(_ name: String) -> String? {
        parameters[name].flatMap { $0.isEmpty ? nil : $0 }
    }

    func required(_ name: String) throws -> String {
        guard let value = self[name] else { throw VODError.missing(name) }
        return value
    }

    func integer(_ name: String) throws -> Int64? {
        guard let text = self[name] else { return nil }
        guard let value = Int64(text) else { throw VODError.invalid(name, "\(text) is not an integer") }
        return value
    }
}

/// The actions of the VOD API, each answering the documented JSON.
struct VODActions: Sendable {
    let services: SandboxServices
    let call: RPCCall

    private var state: SandboxState { services.state }

    func createUploadVideo() async throws -> Response {
        let title = try call.required("Title")
        let fileName = try call.required("FileName")
        let fileExtension = (fileName as NSString).pathExtension.lowercased()
        guard !fileExtension.isEmpty else {
            throw VODError.invalid("FileName", "the file name must have an extension, e.g. video.mp4")
        }
        if let reference = call["ReferenceId"] { try Self.checkReference(reference) }
        let id = RandomID.hex(bytes: 16)
        let now = Date()
        let video = try await state.createVODVideo(
            VODVideoRecord(
                id: id, title: title, fileName: fileName, fileSize: try call.integer("FileSize"),
                description: call["Description"], coverURL: call["CoverURL"], cateID: try call.integer("CateId"),
                tags: call["Tags"], templateGroupID: call["TemplateGroupId"], userData: call["UserData"],
                referenceID: call["ReferenceId"], bucket: services.configuration.ossBucket,
                object: "sv/\(id.prefix(8))-\(RandomID.hex(bytes: 5))/\(id).\(fileExtension)", uploadedAt: nil,
                size: nil, createdAt: now, modifiedAt: now))
        let delay = services.faults.faults.createDelay
        if delay > 0 { try await Task.sleep(for: .milliseconds(Int64(delay * 1000))) }
        return await uploadAnswer(video.id, bucket: video.bucket, object: video.object)
    }

    func refreshUploadVideo() async throws -> Response {
        guard let video = await state.vodVideo(id: call["VideoId"], referenceID: call["ReferenceId"]) else {
            if call["VideoId"] == nil, call["ReferenceId"] == nil { throw VODError.missing("VideoId") }
            throw VODError.videoNotFound
        }
        return await uploadAnswer(video.id, bucket: video.bucket, object: video.object)
    }

    func createUploadImage() async throws -> Response {
        let imageType = call["ImageType"] ?? "default"
        guard ["default", "cover"].contains(imageType) else {
            throw VODError.invalid("ImageType", "use default or cover")
        }
        let imageExtension = (call["ImageExt"] ?? "png").lowercased()
        guard ["png", "jpg", "jpeg", "gif"].contains(imageExtension) else {
            throw VODError.invalid("ImageExt", "use png, jpg, jpeg or gif")
        }
        let id = RandomID.hex(bytes: 16)
        let bucket = services.configuration.ossBucket
        let object = "image/\(imageType)/\(id).\(imageExtension)"
        let url = "\(await state.baseURL)/\(bucket)/\(object)"
        let image = await state.createVODImage(
            VODImageRecord(
                id: id, imageType: imageType, bucket: bucket, object: object, url: url, uploadedAt: nil,
                createdAt: Date()))
        var answer = await uploadFields(bucket: image.bucket, object: image.object)
        answer["ImageId"] = .string(image.id)
        answer["ImageURL"] = .string(image.url)
        answer["FileURL"] = .string(image.url)
        return JSONResponse.make(.object(answer))
    }

    func getVideoInfo() async throws -> Response {
        guard let video = await state.vodVideo(id: call["VideoId"], referenceID: call["ReferenceId"]) else {
            if call["VideoId"] == nil, call["ReferenceId"] == nil { throw VODError.missing("VideoId") }
            throw VODError.videoNotFound
        }
        var info: [String: JSONValue] = [
            "VideoId": .string(video.id), "Title": .string(video.title),
            "Status": .string(await state.vodStatus(video)),
            "Size": .integer(video.size ?? 0), "Duration": .double(0), "StorageLocation": .string(video.bucket),
            "RegionId": "cn-shanghai", "CreationTime": .string(Self.utc(video.createdAt)),
            "ModificationTime": .string(Self.utc(video.modifiedAt)), "AppId": "app-1000000",
        ]
        if let description = video.description { info["Description"] = .string(description) }
        if let tags = video.tags { info["Tags"] = .string(tags) }
        if let cover = video.coverURL { info["CoverURL"] = .string(cover) }
        if let category = video.cateID { info["CateId"] = .integer(category) }
        if let group = video.templateGroupID { info["TemplateGroupId"] = .string(group) }
        return JSONResponse.make(["RequestId": .string(RandomID.requestID()), "Video": .object(info)])
    }

    func updateVideoInfo() async throws -> Response {
        let id = try call.required("VideoId")
        let category = try call.integer("CateId")
        if let title = call.parameters["Title"], title.isEmpty {
            throw VODError.invalid("Title", "a title cannot be empty")
        }
        _ = try await state.updateVODVideo(id) { video in
            if let title = call["Title"] { video.title = title }
            if let description = call.parameters["Description"] { video.description = description }
            if let tags = call.parameters["Tags"] { video.tags = tags }
            if let cover = call.parameters["CoverURL"] { video.coverURL = cover }
            if let category { video.cateID = category }
            if let userData = call.parameters["UserData"] { video.userData = userData }
        }
        return JSONResponse.make(["RequestId": .string(RandomID.requestID())])
    }

    func deleteVideo() async throws -> Response {
        let ids = try call.required("VideoIds").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        guard ids.count <= 20 else { throw VODError.invalid("VideoIds", "at most 20 ids") }
        let missing = await state.deleteVODVideos(ids)
        return JSONResponse.make([
            "RequestId": .string(RandomID.requestID()), "NonExistVideoIds": .array(missing.map(JSONValue.string)),
            "ForbiddenVideoIds": [],
        ])
    }

    /// `VideoId`, `UploadAddress` and `UploadAuth` with a fresh temporary credential for the object.
    private func uploadAnswer(_ videoID: String, bucket: String, object: String) async -> Response {
        var answer = await uploadFields(bucket: bucket, object: object)
        answer["VideoId"] = .string(videoID)
        return JSONResponse.make(.object(answer))
    }

    private func uploadFields(bucket: String, object: String) async -> [String: JSONValue] {
        let credential = await state.issueCredential(bucket: bucket, object: object)
        let address: JSONValue = [
            "Endpoint": .string(await state.baseURL), "Bucket": .string(bucket), "FileName": .string(object),
        ]
        let ttl = Int(SandboxState.seconds(services.configuration.stsTTL).rounded(.up))
        let auth: JSONValue = [
            "AccessKeyId": .string(credential.accessKeyID), "AccessKeySecret": .string(credential.accessKeySecret),
            "SecurityToken": .string(credential.securityToken), "Expiration": .string(String(ttl)),
            "ExpireUTCTime": .string(Self.utc(credential.expiresAt)), "Region": "cn-shanghai",
        ]
        return [
            "RequestId": .string(RandomID.requestID()),
            "UploadAddress": .string(Data(address.encoded()).base64EncodedString()),
            "UploadAuth": .string(Data(auth.encoded()).base64EncodedString()),
        ]
    }

    /// `ReferenceId`: 6 to 64 letters, digits, `-` and `_`.
    static func checkReference(_ reference: String) throws {
        let allowed = reference.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
        }
        guard allowed, (6...64).contains(reference.utf8.count) else {
            throw VODError.invalid("ReferenceId", "6 to 64 letters, digits, - and _")
        }
    }

    /// `yyyy-MM-ddTHH:mm:ssZ`, as the API writes times.
    static func utc(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }
}

/// `GET /sandbox/aliyun` (no auth, for tests and people): the VOD videos (with their status) and images,
/// the OSS objects (with their SHA-256), the multipart uploads still open and the parts stored so far.
enum AliyunAdminRoutes {
    static func register(on router: Router<SandboxRequestContext>, services: SandboxServices) {
        router.get("sandbox/aliyun") { _, _ in
            let state = services.state
            let snapshot = await state.aliyunSnapshot()
            var videos: [JSONValue] = []
            for video in snapshot.videos.values.sorted(by: { $0.createdAt < $1.createdAt }) {
                videos.append([
                    "VideoId": .string(video.id), "Title": .string(video.title),
                    "Status": .string(await state.vodStatus(video)),
                    "Description": .optional(video.description), "Tags": .optional(video.tags),
                    "CoverURL": .optional(video.coverURL), "ReferenceId": .optional(video.referenceID),
                    "Bucket": .string(video.bucket), "Object": .string(video.object),
                ])
            }
            var objects: [JSONValue] = []
            for object in snapshot.objects.values.sorted(by: { $0.key < $1.key }) {
                let digest = try await FileDigest.sha256Hex(
                    path: state.folder.uploadPath("oss-" + object.fileID), length: object.size)
                objects.append([
                    "Bucket": .string(object.bucket), "Key": .string(object.key), "Size": .integer(object.size),
                    "ETag": .string(object.etag), "SHA256": .string(digest),
                ])
            }
            return JSONResponse.make([
                "videos": .array(videos), "images": .integer(Int64(snapshot.images.count)), "objects": .array(objects),
                "multipartUploads": .integer(Int64(snapshot.multipartUploads.count)),
                "partsStored": .integer(Int64(await state.ossPartsStored)),
            ])
        }
    }
}
