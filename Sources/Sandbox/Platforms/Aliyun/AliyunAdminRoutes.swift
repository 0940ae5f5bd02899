import Hummingbird
import StageKit

/// `GET /sandbox/aliyun` (no auth, for tests and people): the VOD videos (with their status) and images,
/// the OSS objects (with their SHA-256), the multipart uploads still open, the parts stored so far and the URL
/// upload jobs; `POST /sandbox/aliyun/faults` drops CompleteMultipartUpload answers.
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
            let jobs = snapshot.urlJobs.values.sorted { $0.createdAt < $1.createdAt }.map { job -> JSONValue in
                [
                    "JobId": .string(job.id), "UploadURL": .string(job.uploadURL), "Status": .string(job.status),
                    "MediaId": .optional(job.mediaID), "ErrorCode": .optional(job.errorCode),
                ]
            }
            return JSONResponse.make([
                "videos": .array(videos), "images": .integer(Int64(snapshot.images.count)), "objects": .array(objects),
                "multipartUploads": .integer(Int64(snapshot.multipartUploads.count)),
                "partsStored": .integer(Int64(await aliyun.ossPartsStored)), "urlUploadJobs": .array(jobs),
            ])
        }
        registerFaults(on: router, aliyun: aliyun)
    }

    /// `POST /sandbox/aliyun/faults`.
    private static func registerFaults(on router: Router<SandboxRequestContext>, aliyun: AliyunState) {
        // `{"dropCompleteAnswers": N}`: the next N CompleteMultipartUploads complete, and their connection closes
        // before the answer (a lost answer, as after a network cut). `{"refuseCompletes": N}`: the next N are
        // answered 400 InvalidPart and complete nothing. `{"loseCompletes": N}`: the next N close the connection
        // before anything is completed. `{"failCompleteAnswers": N}`: the next N complete and answer 500
        // InternalError. `{"refuseListParts": N}`: the next N ListParts answer 400 InvalidArgument.
        // `{"urlListingLag": S}`: GetURLUploadInfos by URL lists a
        // job only once it is S seconds old. `{"sessionWindow": S}`: a SessionId is refused for S seconds instead of
        // 600. `{"transcodeFails": N}`: the next N URL upload jobs make a video whose transcode fails (the job ends
        // `TranscodeFail` with its MediaId). A key left out leaves its fault as it was.
        router.post("sandbox/aliyun/faults") { request, _ in
            var request = request
            let bytes = try await request.collectBody(upTo: JSONResponse.maxRequestBody)
            let body = JSONValue.parse(bytes.readableBytesView)
            var set: [String: JSONValue] = [:]
            if let count = body?["dropCompleteAnswers"]?.intValue {
                await aliyun.dropCompleteAnswers(count)
                set["dropCompleteAnswers"] = .int(count)
            }
            if let count = body?["refuseCompletes"]?.intValue {
                await aliyun.refuseCompletes(count)
                set["refuseCompletes"] = .int(count)
            }
            let lose = body?["loseCompletes"]?.intValue
            let refuseLists = body?["refuseListParts"]?.intValue
            let failAnswers = body?["failCompleteAnswers"]?.intValue
            await aliyun.setMultipartFaults(
                loseCompletes: lose, failCompleteAnswers: failAnswers, refuseListParts: refuseLists)
            set["loseCompletes"] = lose.map(JSONValue.int)
            set["failCompleteAnswers"] = failAnswers.map(JSONValue.int)
            set["refuseListParts"] = refuseLists.map(JSONValue.int)
            let lag = body?["urlListingLag"]?.doubleValue
            let window = body?["sessionWindow"]?.doubleValue
            let transcodes = body?["transcodeFails"]?.intValue
            await aliyun.setURLJobFaults(listingLag: lag, sessionWindow: window, transcodesToFail: transcodes)
            set["urlListingLag"] = lag.map(JSONValue.double)
            set["sessionWindow"] = window.map(JSONValue.double)
            set["transcodeFails"] = transcodes.map(JSONValue.int)
            return JSONResponse.make(.object(set))
        }
    }
}
