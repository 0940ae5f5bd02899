package import AsyncHTTPClient
import Crypto
package import Foundation
import HTTPTransport
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
package import StageKit
package import StageRuntime
import Synchronization

/// A segment store in an S3 bucket (or a compatible one: MinIO, moto), for workers that share no folder: the
/// segment `key` with `sha256` is the object `<prefix>/<plan>/<unit>.<sha256>`, with the hash also in
/// `x-amz-meta-sha256`.
///
/// A segment goes up in one PutObject whose `x-amz-content-sha256` is the file's real SHA-256, so S3 stores
/// no object from a body that was cut off or altered on the way, and a PUT is atomic: the key shows the old
/// object or the whole new one. Objects are at most ``largestSegment`` (S3's limit for one PUT; a segment of a
/// few minutes of video is far below it). A fetch streams the object to disk in 1 MiB steps (memory does not
/// grow with the segment), hashing it as it goes, and keeps it only when every byte arrived and matches.
/// Requests that send or receive nothing for the stall timeout are aborted. Failures are classified as the
/// `s3.upload` stage classifies them (by ``HTTPFailure``'s one table, refined by S3's error codes); the store
/// does not retry by itself.
package struct S3SegmentStore: SegmentStore {
    /// The bucket.
    package let bucket: String
    /// The folder of the segments in the bucket, without slashes at either end; empty for the bucket's root.
    package let prefix: String
    /// The largest segment a single PutObject takes: 5 GiB.
    package static let largestSegment: Int64 = 5 << 30

    private let signer: SigV4Signer
    private let client: HTTPClient
    private let exchange: HTTPExchange
    private let stallTimeout: TimeSpan
    /// The bucket's URL, ending where an object key starts after a `/` (`http://host/bucket` path-style,
    /// `https://bucket.host` virtual-host style).
    private let bucketURL: String
    /// The URL of the bucket's own requests (listing, DeleteObjects).
    private let bucketRequestURL: String

    /// A store in `bucket` under `prefix`.
    ///
    /// - Parameters:
    ///   - endpoint: the service's base URL (MinIO, moto); default `https://s3.<region>.amazonaws.com`.
    ///   - pathStyle: whether the bucket goes in the path; default: true with a custom endpoint.
    ///   - httpClient: the client to send requests with (``AsyncHTTPClient/HTTPClient/makeForStages()``); its
    ///     owner shuts it down.
    ///   - stallTimeout: a request that sends or receives no byte for this long is aborted (retryable).
    package init(
        bucket: String, prefix: String = "", endpoint: String? = nil, region: String, credentials: AWSCredentials,
        pathStyle: Bool? = nil, httpClient: HTTPClient, stallTimeout: TimeSpan = TimeSpan(seconds: 30)
    ) throws(SegmentStoreError) {
        let base = endpoint ?? "https://s3.\(region).amazonaws.com"
        guard !bucket.isEmpty, var components = URLComponents(string: base), let host = components.host,
            components.scheme != nil
        else {
            throw SegmentStoreError(code: .invalidAddress, message: "invalid S3 endpoint \(base) or bucket \(bucket)")
        }
        let path =
            components.percentEncodedPath.hasSuffix("/")
            ? String(components.percentEncodedPath.dropLast()) : components.percentEncodedPath
        let pathStyle = pathStyle ?? (endpoint != nil)
        if pathStyle {
            components.percentEncodedPath = path + "/" + S3Backend.encode(bucket)
        } else {
            components.host = "\(bucket).\(host)"
            components.percentEncodedPath = path
        }
        guard let url = components.string else {
            throw SegmentStoreError(code: .invalidAddress, message: "invalid S3 URL for bucket \(bucket) at \(base)")
        }
        self.bucket = bucket
        self.prefix = prefix.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        self.signer = SigV4Signer.s3(credentials: credentials, region: region)
        self.client = httpClient
        self.stallTimeout = stallTimeout
        self.exchange = HTTPExchange(
            client: httpClient, stallTimeout: stallTimeout,
            answerTimeout: TimeSpan(seconds: max(300, stallTimeout.seconds)))
        self.bucketURL = url
        self.bucketRequestURL = pathStyle ? url : url + "/"
    }

    /// The store at `address`, `s3://bucket/prefix`, configured as the AWS CLI is: the endpoint from
    /// `AWS_ENDPOINT_URL_S3`, else `AWS_ENDPOINT_URL`; the region from `AWS_REGION`, else
    /// `AWS_DEFAULT_REGION`, else `us-east-1`; the credentials as `s3.upload` finds them
    /// (`AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`/`AWS_SESSION_TOKEN`, else the `AWS_PROFILE` profile of
    /// `~/.aws/credentials`).
    package init(address: String, environment: [String: String], httpClient: HTTPClient) throws {
        guard let components = URLComponents(string: address), components.scheme?.lowercased() == "s3",
            let bucket = components.host, !bucket.isEmpty, components.query == nil, components.fragment == nil,
            components.user == nil, components.port == nil
        else {
            throw SegmentStoreError(
                code: .invalidAddress,
                message:
                    "invalid S3 segment store \(address): expected s3://bucket/prefix (set the endpoint with AWS_ENDPOINT_URL_S3)"
            )
        }
        func setting(_ names: String...) -> String? {
            names.lazy.compactMap { environment[$0] }.first { !$0.isEmpty }
        }
        let credentials: AWSCredentials
        do {
            credentials = try S3Connection().credentials(environment: environment)
        } catch {
            throw Self.storeError(error, doing: "opening the segment store \(address)")
        }
        try self.init(
            bucket: bucket, prefix: components.path, endpoint: setting("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"),
            region: setting("AWS_REGION", "AWS_DEFAULT_REGION") ?? "us-east-1", credentials: credentials,
            httpClient: httpClient)
    }

    package var address: String { prefix.isEmpty ? "s3://\(bucket)" : "s3://\(bucket)/\(prefix)" }

    package func put(_ file: URL, as key: SegmentKey, sha256: String) async throws {
        let sha256 = try SegmentKey.normalizedHash(sha256)
        let action = "storing segment \(key) in \(address)"
        let upload: UploadFile
        do {
            upload = try UploadFile(path: file.path)
        } catch {
            throw SegmentStoreError(code: .storage, message: "\(action): \(error)", cause: error)
        }
        guard upload.size <= Self.largestSegment else {
            throw SegmentStoreError(
                code: .tooLarge,
                message:
                    "\(action): \(ByteCount(upload.size)) is over S3's limit of 5 GiB for one PUT; use shorter segments"
            )
        }
        do {
            let urlText = objectURL(key, sha256: sha256)
            let headers = [("Content-Type", "application/octet-stream"), ("x-amz-meta-sha256", sha256)]
            let request = try signedRequest(
                "PUT", urlText, headers: headers, length: upload.size, payloadHash: sha256)
            let meter = TransferMeter(base: 0, total: upload.size, limiter: nil, report: { _ in })
            let answer = try await exchange.send(
                request, streaming: upload.body(0..<upload.size, for: request), length: upload.size, meter: meter,
                doing: action)
            guard answer.status == .ok else { throw Self.storeError(answer, doing: action) }
        } catch {
            throw Self.storeError(error, doing: action)
        }
    }

    package func fetch(_ key: SegmentKey, sha256: String, to destination: URL) async throws {
        let sha256 = try SegmentKey.normalizedHash(sha256)
        let action = "fetching segment \(key) from \(address)"
        do {
            let request = try signedRequest("GET", objectURL(key, sha256: sha256))
            let activity = TransferActivity()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    try await download(request, key: key, sha256: sha256, to: destination, activity: activity)
                }
                group.addTask { try await activity.watch(stallTimeout, doing: action) }
                defer { group.cancelAll() }
                try await group.next()
            }
        } catch {
            throw Self.storeError(error, doing: action)
        }
    }

    package func contains(_ key: SegmentKey, sha256: String) async throws -> Bool {
        let sha256 = try SegmentKey.normalizedHash(sha256)
        let action = "looking for segment \(key) in \(address)"
        do {
            let answer = try await exchange.send(
                try signedRequest("HEAD", objectURL(key, sha256: sha256)), doing: action)
            switch answer.status {
            case .ok: return answer.headers.first(name: "x-amz-meta-sha256")?.lowercased() == sha256
            case .notFound: return false
            default: throw Self.storeError(answer, doing: action)
            }
        } catch {
            throw Self.storeError(error, doing: action)
        }
    }

    package func remove(_ keys: [SegmentKey]) async throws {
        for (plan, keys) in Dictionary(grouping: keys, by: \.plan) {
            let action = "removing the segments of \(plan) from \(address)"
            do {
                let objects = try await objectKeys(under: objectKey(plan + "/"), doing: action).filter { object in
                    keys.contains { $0.names(String(object.split(separator: "/").last ?? "")) }
                }
                for start in stride(from: 0, to: objects.count, by: 1000) {
                    try await delete(Array(objects[start..<min(start + 1000, objects.count)]), doing: action)
                }
            } catch {
                throw Self.storeError(error, doing: action)
            }
        }
    }

    // MARK: Requests

    /// The object key of `path` (relative to the prefix).
    private func objectKey(_ path: String) -> String {
        prefix.isEmpty ? path : "\(prefix)/\(path)"
    }

    private func objectURL(_ key: SegmentKey, sha256: String) -> String {
        bucketURL + "/" + S3Backend.encode(objectKey(key.relativePath(sha256: sha256)), keepingSlashes: true)
    }

    /// A request signed for `body` (in memory) or for a body of `length` bytes whose SHA-256 is `payloadHash`.
    private func signedRequest(
        _ method: String, _ urlText: String, headers: [(String, String)] = [], body: Data = Data(),
        length: Int64? = nil, payloadHash: String? = nil
    ) throws -> HTTPClientRequest {
        guard let url = URL(string: urlText) else {
            throw SegmentStoreError(code: .invalidAddress, message: "invalid S3 URL \(urlText)")
        }
        let length = length ?? Int64(body.count)
        // A request without a body carries no Content-Length, so only one with a body signs it.
        let sent = length > 0 ? headers + [("Content-Length", String(length))] : headers
        let signed = signer.sign(
            method: method, url: url, headers: sent, payloadHash: payloadHash ?? SigV4Signer.payloadHash(of: body),
            date: Date())
        var request = HTTPClientRequest(url: urlText, method: HTTPMethod(rawValue: method), headers: headers + signed)
        if !body.isEmpty { request.body = .bytes(ByteBuffer(data: body)) }
        return request
    }

    /// GetObject into `destination` through ``StageRuntime/VerifiedFile``, 1 MiB at a time; the HTTP client reads
    /// from the socket only as fast as the file takes the bytes.
    private func download(
        _ request: HTTPClientRequest, key: SegmentKey, sha256: String, to destination: URL,
        activity: TransferActivity
    ) async throws {
        let action = "fetching segment \(key) from \(address)"
        let response = try await client.execute(request, timeout: .hours(24))
        activity.touch()
        guard response.status == .ok else {
            let answer = HTTPAnswer(
                status: response.status, headers: response.headers, body: try await response.body.collect(upTo: 1 << 20)
            )
            // A missing bucket is a configuration error, not a segment to encode again.
            if answer.status == .notFound,
                (S3XML(Data(buffer: answer.body))?.first("Code") ?? "NoSuchKey") == "NoSuchKey"
            {
                throw SegmentStoreError(
                    code: .notFound, message: "segment \(key) with SHA-256 \(sha256) is not in \(address)")
            }
            throw Self.storeError(answer, doing: action)
        }
        let source = "\(address)/\(key.relativePath(sha256: sha256))"
        if let recorded = response.headers.first(name: "x-amz-meta-sha256"), recorded.lowercased() != sha256 {
            throw SegmentStoreError(
                code: .hashMismatch, message: "\(source) is recorded with SHA-256 \(recorded), not \(sha256)")
        }
        let expected = response.headers.first(name: "Content-Length").flatMap { Int64($0) }
        try await VerifiedFile.write(to: destination, sha256: sha256, source: source) { write in
            var pending = ByteBuffer()
            var received: Int64 = 0
            for try await part in response.body {
                activity.touch()
                received += Int64(part.readableBytes)
                pending.writeImmutableBuffer(part)
                if pending.readableBytes >= 1 << 20 {
                    try await write(Data(buffer: pending))
                    pending.clear()
                }
            }
            if pending.readableBytes > 0 { try await write(Data(buffer: pending)) }
            if let expected, received != expected {
                throw SegmentStoreError(
                    code: .transfer, message: "\(action): the answer ended after \(received) of \(expected) bytes",
                    disposition: .retryable())
            }
        }
    }

    /// ListObjectsV2 of everything under `prefix`, page by page.
    private func objectKeys(under prefix: String, doing action: String) async throws -> [String] {
        var keys: [String] = []
        var token: String?
        repeat {
            var query = "list-type=2&prefix=\(S3Backend.encode(prefix))"
            if let token { query += "&continuation-token=\(S3Backend.encode(token))" }
            let answer = try await exchange.send(
                try signedRequest("GET", bucketRequestURL + "?" + query), doing: action)
            guard answer.status == .ok, let xml = S3XML(Data(buffer: answer.body)) else {
                throw Self.storeError(answer, doing: action)
            }
            keys += xml.records("Contents").compactMap { $0["Key"] }.filter { $0.hasPrefix(prefix) }
            token = xml.first("IsTruncated") == "true" ? xml.first("NextContinuationToken") : nil
        } while token != nil
        return keys
    }

    /// DeleteObjects of up to 1,000 keys; a key S3 could not delete is a failure.
    private func delete(_ keys: [String], doing action: String) async throws {
        var text = "<Delete xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Quiet>true</Quiet>"
        for key in keys { text += "<Object><Key>\(xmlEscaped(key))</Key></Object>" }
        text += "</Delete>"
        let body = Data(text.utf8)
        let headers = [
            ("Content-Type", "application/xml"),
            ("Content-MD5", Data(Insecure.MD5.hash(data: body)).base64EncodedString()),
        ]
        let answer = try await exchange.send(
            try signedRequest("POST", bucketRequestURL + "?delete", headers: headers, body: body), doing: action)
        guard answer.status == .ok, let xml = S3XML(Data(buffer: answer.body)), xml.root != "Error" else {
            throw Self.storeError(answer, doing: action)
        }
        if let failed = xml.records("Error").first {
            throw SegmentStoreError(
                code: .transfer,
                message:
                    "\(action): S3 kept \(failed["Key"] ?? "an object") (\(failed["Code"] ?? ""): \(failed["Message"] ?? ""))",
                disposition: .retryable())
        }
    }

    // MARK: Errors

    /// The store's error for a failure of the upload module's HTTP code (which classifies it as `s3.upload`'s
    /// requests are): its disposition and kind are kept, and the failure becomes its cause. The one place
    /// that reads those errors.
    static func storeError(_ error: any Error, doing action: String) -> any Error {
        if error is SegmentStoreError || error is CancellationError { return error }
        let classified = HTTPFailure.classify(error, doing: action)
        guard let known = classified as? any ClassifiedError else { return classified }
        return SegmentStoreError(
            code: .transfer, message: "\(classified)", disposition: known.disposition, cause: classified)
    }

    /// The store's error for an S3 answer that is not the one asked for.
    static func storeError(_ answer: HTTPAnswer, doing action: String) -> any Error {
        storeError(HTTPFailure.s3(answer, doing: action), doing: action)
    }
}

/// When a download last received something: its stall watchdog.
private final class TransferActivity: Sendable {
    private let last = Atomic<UInt64>(DispatchTime.now().uptimeNanoseconds)

    /// Records that bytes (or the answer's head) arrived.
    func touch() {
        last.store(DispatchTime.now().uptimeNanoseconds, ordering: .relaxed)
    }

    /// Throws once nothing arrived for `limit`; it sleeps until the moment that could happen.
    func watch(_ limit: TimeSpan, doing action: String) async throws {
        while true {
            let idle = Double(DispatchTime.now().uptimeNanoseconds &- last.load(ordering: .relaxed)) / 1e9
            guard idle <= limit.seconds else {
                throw SegmentStoreError(
                    code: .transfer, message: "\(action): stalled, no byte received for \(limit)",
                    disposition: .retryable())
            }
            try await Task.sleep(for: .seconds(limit.seconds - idle) + .milliseconds(1))
        }
    }
}
