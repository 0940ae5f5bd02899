import AsyncHTTPClient
import Crypto
import Foundation
import HTTPTransport
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import StageKit

extension TusSession {
    /// Sends a segment from the server's offset (HEAD) to its end, chunk by chunk. With checksums, the digest
    /// of the next chunk is computed while the current one is sent: digesting costs about as much as sending
    /// (SHA-256 runs at a few hundred MB/s), and the server checks its own digest before it answers.
    func send(
        _ segment: TusUploadStage.Segment, index: Int, chunkSize: Int64?, algorithm: String?,
        counter: PartsProgress? = nil
    ) async throws {
        var offset = try await offset(of: segment)
        acknowledged.withLockedValue { $0[index] = offset }
        var upcoming: (range: Range<Int64>, digest: Task<String, any Error>)?
        defer { upcoming?.digest.cancel() }
        /// The file's bytes of the PATCH that starts at `start` in the segment.
        func chunk(from start: Int64) -> Range<Int64> {
            let end = chunkSize.map { min(segment.length, start + $0) } ?? segment.length
            return (segment.start + start)..<(segment.start + end)
        }
        while offset < segment.length {
            let bytes = chunk(from: offset)
            var checksum: String?
            if let algorithm {
                let value: String
                if let upcoming, upcoming.range == bytes {
                    value = try await upcoming.digest.value
                } else {
                    upcoming?.digest.cancel()
                    value = try await digest(bytes, algorithm: algorithm)
                }
                checksum = "\(algorithm) \(value)"
                let next = chunk(from: bytes.upperBound - segment.start)
                upcoming = next.isEmpty ? nil : (next, Task { try await self.digest(next, algorithm: algorithm) })
            }
            offset = try await patch(segment, bytes: bytes, checksum: checksum, counter: counter.map { ($0, index) })
            acknowledged.withLockedValue { $0[index] = offset }
        }
    }

    /// The server's offset in a segment (HEAD). A lost upload we created is created anew; one we did not is an error.
    private func offset(of segment: TusUploadStage.Segment) async throws -> Int64 {
        let url = segment.url
        let action = "asking \(url) for its offset"
        let answer = try await exchange.send(
            HTTPClientRequest(url: url, method: .HEAD, headers: baseHeaders()), doing: action)
        switch answer.status.code {
        case 200, 204:
            guard let offset = answer.integer("Upload-Offset"), offset >= 0, offset <= segment.length else {
                throw HTTPFailure.invalidAnswer(answer, "HEAD \(url): the answer has no valid Upload-Offset header")
            }
            if let length = answer.integer("Upload-Length"), length != segment.length {
                throw HTTPFailure.invalidAnswer(
                    answer, "the upload at \(url) expects \(length) bytes but the file has \(segment.length)")
            }
            return offset
        case 403, 404, 410:
            guard progress?.created == true else {
                throw HTTPFailure.tus(answer, doing: action).refined(
                    message: "the upload \(url) no longer exists (\(answer.status.code)); ask for a new upload link")
            }
            context.logger.warning(
                "the server no longer has the upload \(url) (\(answer.status.code)); creating it anew")
            progress = nil
            throw HTTPFailure.tus(answer, doing: action).refined(
                disposition: .retryable(after: .zero), message: "the upload \(url) was lost (\(answer.status.code))")
        default:
            throw HTTPFailure.tus(answer, doing: action)
        }
    }

    /// Sends `bytes` of the file, a stretch of `segment`, with their `Upload-Checksum` value, if any; returns
    /// the new offset in the segment.
    private func patch(
        _ segment: TusUploadStage.Segment, bytes: Range<Int64>, checksum: String?, counter: (PartsProgress, Int)?
    ) async throws -> Int64 {
        let url = segment.url
        let (start, end) = (bytes.lowerBound - segment.start, bytes.upperBound - segment.start)
        var headers = baseHeaders()
        headers.append(("Upload-Offset", String(start)))
        headers.append(("Content-Type", "application/offset+octet-stream"))
        if let checksum { headers.append(("Upload-Checksum", checksum)) }
        let meter = TransferMeter(
            base: counter == nil ? segment.start + start : start, total: counter == nil ? file.size : segment.length,
            limiter: context.services[BandwidthLimitKey.self]
        ) { progress in
            if let (counter, index) = counter {
                counter.update(part: index, bytes: progress.completed)
            } else {
                self.context.reportProgress(progress)
            }
        }
        let request = HTTPClientRequest(url: url, method: .PATCH, headers: headers)
        let action = "sending bytes \(bytes.lowerBound)–\(bytes.upperBound) to \(url)"
        let answer = try await exchange.send(
            request, streaming: file.body(bytes, for: request), length: end - start, meter: meter, doing: action)
        switch answer.status.code {
        case 200, 204:
            guard let offset = answer.integer("Upload-Offset"), offset > start, offset <= segment.length else {
                throw HTTPFailure.invalidAnswer(answer, "PATCH \(url): the answer has no valid Upload-Offset header")
            }
            if var progress, progress.parts == nil {
                progress.offset = offset
                try await record(progress)
            }
            return offset
        case 404, 410:
            return try await offset(of: segment)
        default:
            throw HTTPFailure.tus(answer, doing: action)
        }
    }

    /// The base64 digest of a range, read from the file in chunks (never held whole).
    private func digest(_ range: Range<Int64>, algorithm: String) async throws -> String {
        var sha256 = SHA256()
        var sha1 = Insecure.SHA1()
        var md5 = Insecure.MD5()
        try await file.digest(range) { bytes in
            switch algorithm {
            case "sha256": sha256.update(bufferPointer: bytes)
            case "sha1": sha1.update(bufferPointer: bytes)
            default: md5.update(bufferPointer: bytes)
            }
        }
        let bytes: [UInt8]
        switch algorithm {
        case "sha256": bytes = Array(sha256.finalize())
        case "sha1": bytes = Array(sha1.finalize())
        default: bytes = Array(md5.finalize())
        }
        return Data(bytes).base64EncodedString()
    }
}
