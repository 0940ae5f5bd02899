import Hummingbird
import StageKit

/// `GET /sandbox/aliyun` (no auth, for tests and people): the VOD videos (with their status) and images,
/// the OSS objects (with their SHA-256), the multipart uploads still open and the parts stored so far.
enum AliyunAdminRoutes {
    static func register(on router: Router<SandboxRequestContext>, aliyun: AliyunState) {
        router.get("sandbox/aliyun") { _, _ in
            let snapshot = await aliyun.snapshot()
            var videos: [JSONValue] = []
            for video in snapshot.videos.values.sorted(by: { $0.createdAt < $1.createdAt }) {
                videos.append([
                    "VideoId": .string(video.id), "Title": .string(video.title),
                    "Status": .string(await aliyun.vodStatus(video)),
                    "Description": .optional(video.description), "Tags": .optional(video.tags),
                    "CoverURL": .optional(video.coverURL), "ReferenceId": .optional(video.referenceID),
                    "Bucket": .string(video.bucket), "Object": .string(video.object),
                ])
            }
            var objects: [JSONValue] = []
            for object in snapshot.objects.values.sorted(by: { $0.key < $1.key }) {
                let digest = try await FileDigest.sha256Hex(
                    path: aliyun.core.folder.uploadPath(OSSFiles.object(object.fileID)), length: object.size)
                objects.append([
                    "Bucket": .string(object.bucket), "Key": .string(object.key), "Size": .integer(object.size),
                    "ETag": .string(object.etag), "SHA256": .string(digest),
                ])
            }
            return JSONResponse.make([
                "videos": .array(videos), "images": .integer(Int64(snapshot.images.count)), "objects": .array(objects),
                "multipartUploads": .integer(Int64(snapshot.multipartUploads.count)),
                "partsStored": .integer(Int64(await aliyun.ossPartsStored)),
            ])
        }
    }
}
