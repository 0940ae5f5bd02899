import Foundation
import Hummingbird
import StageKit

/// The actions of the VOD API, each answering the documented JSON.
struct VODActions: Sendable {
    let aliyun: AliyunState
    let call: RPCCall

    /// Runs the call's `Action`.
    func run() async throws -> Response {
        switch self.call["Action"] ?? "" {
        case "CreateUploadVideo": return try await self.createUploadVideo()
        case "RefreshUploadVideo": return try await self.refreshUploadVideo()
        case "CreateUploadImage": return try await self.createUploadImage()
        case "GetVideoInfo": return try await self.getVideoInfo()
        case "UpdateVideoInfo": return try await self.updateVideoInfo()
        case "DeleteVideo": return try await self.deleteVideo()
        case "UploadMediaByURL": return try await self.uploadMediaByURL()
        case "GetURLUploadInfos": return try await self.getURLUploadInfos()
        case let action:
            throw VODError(
                status: .notFound, code: "InvalidAction.NotFound",
                message: "Specified api \(action) is not found, please check your url and method.")
        }
    }

    func createUploadVideo() async throws -> Response {
        let title = try call.required("Title")
        let fileName = try call.required("FileName")
        let fileExtension = (fileName as NSString).pathExtension.lowercased()
        guard !fileExtension.isEmpty else {
            throw VODError.invalid("FileName", "the file name must have an extension, e.g. video.mp4")
        }
        try VODTextRules.checkExtension(of: fileName)
        try VODTextRules.check(call)
        if let reference = call["ReferenceId"] { try Self.checkReference(reference) }
        let id = RandomID.hex(bytes: 16)
        let now = Date()
        let video = try await aliyun.createVODVideo(
            VODVideoRecord(
                id: id, title: title, fileName: fileName, fileSize: try call.integer("FileSize"),
                description: call["Description"], coverURL: call["CoverURL"], cateID: try call.integer("CateId"),
                tags: call["Tags"], templateGroupID: call["TemplateGroupId"], userData: call["UserData"],
                referenceID: call["ReferenceId"], bucket: aliyun.core.configuration.ossBucket,
                object: "sv/\(id.prefix(8))-\(RandomID.hex(bytes: 5))/\(id).\(fileExtension)", uploadedAt: nil,
                size: nil, createdAt: now, modifiedAt: now))
        try await aliyun.core.faults.delayCreateAnswer()
        return await uploadAnswer(video.id, bucket: video.bucket, object: video.object)
    }

    func refreshUploadVideo() async throws -> Response {
        guard let video = await aliyun.vodVideo(id: call["VideoId"], referenceID: call["ReferenceId"]) else {
            if call["VideoId"] == nil, call["ReferenceId"] == nil { throw VODError.missing("VideoId") }
            throw VODError.videoNotFound
        }
        return await uploadAnswer(video.id, bucket: video.bucket, object: video.object)
    }

    func createUploadImage() async throws -> Response {
        // CreateUploadImage's reference: ImageType is required.
        let imageType = try call.required("ImageType")
        try VODTextRules.check(call)
        guard ["default", "cover"].contains(imageType) else {
            throw VODError.invalid("ImageType", "use default or cover")
        }
        let imageExtension = (call["ImageExt"] ?? "png").lowercased()
        guard ["png", "jpg", "jpeg", "gif"].contains(imageExtension) else {
            throw VODError.invalid("ImageExt", "use png, jpg, jpeg or gif")
        }
        let id = RandomID.hex(bytes: 16)
        let bucket = aliyun.core.configuration.ossBucket
        let object = "image/\(imageType)/\(id).\(imageExtension)"
        let url = "\(aliyun.baseURL)/\(bucket)/\(object)"
        let image = await aliyun.createVODImage(
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
        guard let video = await aliyun.vodVideo(id: call["VideoId"], referenceID: call["ReferenceId"]) else {
            if call["VideoId"] == nil, call["ReferenceId"] == nil { throw VODError.missing("VideoId") }
            throw VODError.videoNotFound
        }
        var info: [String: JSONValue] = [
            "VideoId": .string(video.id), "Title": .string(video.title),
            "Status": .string(await aliyun.vodStatus(video)),
            "Size": .integer(video.size ?? 0), "Duration": .double(0),
            "StorageLocation": .string("\(video.bucket).oss-cn-shanghai.aliyuncs.com"),
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
        try VODTextRules.check(call)
        if let title = call.parameters["Title"], title.isEmpty {
            throw VODError.invalid("Title", "a title cannot be empty")
        }
        _ = try await aliyun.updateVODVideo(id) { video in
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
        let missing = await aliyun.deleteVODVideos(ids)
        // DeleteVideo's reference: when none of the videos exists the answer is a 404; else the missing are named.
        guard missing.count < ids.count else { throw VODError.videoNotFound }
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
        let credential = await aliyun.issueCredential(bucket: bucket, object: object)
        let address: JSONValue = [
            "Endpoint": .string(aliyun.baseURL), "Bucket": .string(bucket), "FileName": .string(object),
        ]
        let ttl = Int(aliyun.core.configuration.stsTTL.seconds.rounded(.up))
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
