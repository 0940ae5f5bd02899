import Foundation
import Hummingbird
import StageKit

/// `UploadMediaByURL` and `GetURLUploadInfos`, as VOD's API reference documents them: `UploadURLs` are
/// URL-encoded and comma-separated (at most 20), `UploadMetadatas` is a JSON array whose entries apply to the URL
/// their `SourceURL` names, a `SessionId` (at most 50 letters, digits, `-` and `_`) used again within 10 minutes is
/// refused, and every URL becomes a job (`UploadJobs[{JobId, SourceURL}]`) that the sandbox fetches in the
/// background (``URLJobFetch``). `GetURLUploadInfos` takes `JobIds` or `UploadURLs` (at most 10; `JobIds` wins) and
/// answers `URLUploadInfoList` and `NonExists`.
extension VODActions {
    func uploadMediaByURL() async throws -> Response {
        let urls = try Self.decodedURLs(try call.required("UploadURLs"), parameter: "UploadURLs", atMost: 20)
        let metadata = try Self.metadata(call["UploadMetadatas"])
        if let session = call["SessionId"] {
            let allowed = session.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            }
            guard allowed, session.utf8.count <= 50 else {
                throw VODError.invalid("SessionId", "at most 50 letters, digits, - and _")
            }
        }
        var jobs: [VODURLJobRecord] = []
        for url in urls {
            guard let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme?.lowercased() ?? "") else {
                throw VODError.invalid("UploadURLs", "\(url) is not an http or https URL")
            }
            let entry = metadata[url] ?? [:]
            try VODTextRules.check(texts: entry)
            try VODTextRules.checkExtension(of: "file." + (entry["FileExtension"] ?? parsed.pathExtension))
            jobs.append(
                VODURLJobRecord(
                    id: RandomID.hex(bytes: 16), uploadURL: url, sessionID: call["SessionId"],
                    userData: call["UserData"],
                    metadata: entry, templateGroupID: entry["TemplateGroupId"] ?? call["TemplateGroupId"],
                    status: "PENDING", createdAt: Date()))
        }
        try await aliyun.submitURLJobs(jobs, session: call["SessionId"])
        try await aliyun.core.faults.delayCreateAnswer()
        return JSONResponse.make([
            "RequestId": .string(RandomID.requestID()),
            "UploadJobs": .array(
                jobs.map {
                    ["JobId": .string($0.id), "SourceURL": .string(AliyunSignature.percentEncode($0.uploadURL))]
                }
            ),
        ])
    }

    func getURLUploadInfos() async throws -> Response {
        let found: [VODURLJobRecord]
        var missing: [String] = []
        if let ids = call["JobIds"] {
            let list = ids.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            guard list.count <= 10 else { throw VODError.invalid("JobIds", "at most 10 ids") }
            let jobs = await aliyun.urlJobs(ids: list)
            found = jobs
            missing = list.filter { id in !jobs.contains { $0.id == id } }
        } else if let encoded = call["UploadURLs"] {
            let urls = try Self.decodedURLs(encoded, parameter: "UploadURLs", atMost: 10)
            found = await aliyun.urlJobs(urls: urls)
            missing = urls.filter { url in !found.contains { $0.uploadURL == url } }.map(AliyunSignature.percentEncode)
        } else {
            throw VODError.missing("JobIds")
        }
        return JSONResponse.make([
            "RequestId": .string(RandomID.requestID()), "NonExists": .array(missing.map(JSONValue.string)),
            "URLUploadInfoList": .array(found.map(Self.info)),
        ])
    }

    /// A job as `URLUploadInfoList` shows it.
    private static func info(_ job: VODURLJobRecord) -> JSONValue {
        var info: [String: JSONValue] = [
            "JobId": .string(job.id), "UploadURL": .string(job.uploadURL), "Status": .string(job.status),
            "CreationTime": .string(utc(job.createdAt)), "MediaId": .string(job.mediaID ?? ""),
            "ErrorCode": .string(job.errorCode ?? ""), "ErrorMessage": .string(job.errorMessage ?? ""),
            "FileSize": .string(job.fileSize.map(String.init) ?? ""),
        ]
        if let completed = job.completedAt { info["CompleteTime"] = .string(utc(completed)) }
        if let userData = job.userData { info["UserData"] = .string(userData) }
        return .object(info)
    }

    /// The URLs of a comma-separated list of URL-encoded URLs, decoded.
    static func decodedURLs(_ list: String, parameter: String, atMost count: Int) throws -> [String] {
        let urls = list.split(separator: ",").map { String($0).removingPercentEncoding ?? String($0) }
        guard !urls.isEmpty, urls.count <= count else { throw VODError.invalid(parameter, "1 to \(count) URLs") }
        return urls
    }

    /// `UploadMetadatas` by their `SourceURL` (decoded), each field as a string.
    static func metadata(_ text: String?) throws -> [String: [String: String]] {
        guard let text, !text.isEmpty else { return [:] }
        guard let entries = (try? JSONValue(parsing: Data(text.utf8)))?.arrayValue else {
            throw VODError.invalid("UploadMetadatas", "a JSON array of objects")
        }
        var metadata: [String: [String: String]] = [:]
        for entry in entries {
            guard let fields = entry.objectValue, let source = fields["SourceURL"]?.stringValue else {
                throw VODError.invalid("UploadMetadatas", "every entry names its SourceURL")
            }
            metadata[source.removingPercentEncoding ?? source] = fields.compactMapValues { value in
                value.stringValue ?? value.intValue.map(String.init)
            }
        }
        return metadata
    }
}
