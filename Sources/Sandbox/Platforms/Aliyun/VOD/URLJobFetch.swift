import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import StageKit

/// The fetch of an `UploadMediaByURL` job: the sandbox downloads the URL itself (from its own OSS, through a
/// presigned URL, or any http server) into an OSS object, then makes the video. An answer other than 2xx, or a
/// broken transfer, fails the job with `DOWNLOAD_FAIL` and VOD's one documented code, `URLInvalidError`
/// ("download video failed by the url"), which does not say what the source answered; a file larger than the
/// sandbox takes, with `DOWNLOAD_FAIL` too. Cancelled (the sandbox stops), it records nothing: the next start marks
/// the job failed.
struct URLJobFetch {
    let aliyun: AliyunState

    func run(_ job: VODURLJobRecord) async {
        let fileID = RandomID.hex(bytes: 16)
        let path = aliyun.core.folder.uploadPath(OSSFiles.object(fileID))
        do {
            await aliyun.updateURLJob(job.id) { $0.status = "DOWNLOADING" }
            let (size, md5) = try await fetch(job.uploadURL, to: path)
            try await aliyun.finishURLJob(job, fileID: fileID, size: size, md5: md5)
        } catch {
            aliyun.core.folder.removeUpload(OSSFiles.object(fileID))
            guard !Task.isCancelled else { return }
            aliyun.core.logger.info("URL upload job \(job.id): \(error)")
            let failure = error as? FetchFailure ?? .urlInvalid
            await aliyun.failURLJob(job.id, status: "DOWNLOAD_FAIL", code: failure.code, message: failure.message)
        }
    }

    /// Downloads `url` into `path`; returns its size and upper-case hex MD5.
    private func fetch(_ url: String, to path: String) async throws -> (Int64, String) {
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: url), timeout: .hours(1))
        guard (200..<300).contains(response.status.code) else {
            throw FetchFailure.urlInvalid
        }
        let limit = aliyun.core.configuration.maxUploadSize
        var digest = Insecure.MD5()
        var offset: Int64 = 0
        try await UploadFile.with(path: path, forWriting: true) { file in
            for try await buffer in response.body {
                try Task.checkCancellation()
                guard offset + Int64(buffer.readableBytes) <= limit else {
                    throw FetchFailure(
                        code: "", message: "the file is larger than the \(limit) bytes the sandbox takes")
                }
                buffer.withUnsafeReadableBytes { digest.update(bufferPointer: $0) }
                try await file.write(buffer, at: offset)
                offset += Int64(buffer.readableBytes)
            }
        }
        return (offset, HexDigest.text(Array(digest.finalize())).uppercased())
    }

    /// Why a fetch failed: the job's ErrorCode and ErrorMessage.
    struct FetchFailure: Error {
        var code: String
        var message: String

        /// VOD's documented failure of a source it could not download.
        static let urlInvalid = FetchFailure(code: "URLInvalidError", message: "download video failed by the url")
    }
}
