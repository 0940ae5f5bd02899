import Crypto
import Foundation
import HTTPTransport
import Logging
import StageKit
import Synchronization

/// A part the storage has acknowledged.
struct UploadedPart: Codable, Sendable, Hashable {
    var number: Int
    var etag: String
    var checksum: String?
}

/// A part as the storage lists it.
struct ListedPart: Sendable, Hashable {
    var etag: String
    var size: Int64

    /// Adds the parts a page of ListParts lists (S3 and OSS answer alike) to `parts`; the marker of the next page,
    /// nil after the last.
    static func read(page xml: S3XML, into parts: inout [Int: ListedPart]) -> Int? {
        for record in xml.records("Part") {
            if let number = record["PartNumber"].flatMap(Int.init), let etag = record["ETag"] {
                parts[number] = ListedPart(etag: etag, size: record["Size"].flatMap(Int64.init) ?? -1)
            }
        }
        guard xml.first("IsTruncated") == "true" else { return nil }
        return xml.first("NextPartNumberMarker").flatMap(Int.init)
    }
}

/// What a finished multipart upload reports.
struct CompletedUpload: Sendable {
    var etag: String
    var location: String
}

/// The storage side of a multipart upload: S3 itself (SigV4), or a backend that signs part URLs.
protocol MultipartBackend: Sendable {
    /// Starts an upload; returns its id and the key the storage uses.
    func create() async throws -> (uploadId: String, key: String)
    /// The parts the storage holds; nil when the upload no longer exists.
    func listParts(uploadId: String, key: String) async throws -> [Int: ListedPart]?
    /// Sends one part (its bytes streamed from `range` of the file, counted by `meter`).
    func sendPart(uploadId: String, key: String, number: Int, range: Range<Int64>, meter: TransferMeter) async throws
        -> UploadedPart
    /// Completes the upload with every part.
    func complete(uploadId: String, key: String, parts: [UploadedPart]) async throws -> CompletedUpload
    /// Abandons the upload so the storage frees its parts; failures are only logged.
    func abort(uploadId: String, key: String) async
    /// The object, when an upload was completed but the answer never came back (a crash or a lost
    /// connection after CompleteMultipartUpload); nil when the storage cannot tell.
    func existingObject(key: String, size: Int64) async throws -> CompletedUpload?
    /// A part the storage lists but no checkpoint recorded (sent just before a crash), when the backend can
    /// tell it holds the file's bytes of `range`; nil to send it again.
    func adopt(number: Int, listed: ListedPart, range: Range<Int64>) async throws -> UploadedPart?
}

extension MultipartBackend {
    /// A storage whose ETags say nothing checkable about the bytes: unrecorded parts are sent again.
    func adopt(number: Int, listed: ListedPart, range: Range<Int64>) async throws -> UploadedPart? { nil }
}

/// The credential may not read the object (its HEAD answered 403): a credential scoped to writing, as ApsaraVideo
/// VOD's upload credentials may be. `location` is the object's URL.
struct UnreadableObject: Error {
    var location: String
}

extension MultipartBackend {
    /// The object an earlier run completed from `parts` when the answer never came back (a crash or a lost
    /// connection after CompleteMultipartUpload, after which the upload is gone): every part of the file is
    /// recorded, the object has the file's size, and its ETag is the one a completion of those parts gives.
    /// Nil when it is not that object: the file is uploaded anew.
    ///
    /// When the credential may not read the object (``UnreadableObject``), what it could do decides: the upload is
    /// gone (NoSuchUpload: "aborted or completed", in OSS's words) and `completionSent` (the completion was sent
    /// with every part, and OSS's reference says a CompleteMultipartUpload goes on when the client disconnects),
    /// so it was completed; its ETag is the one a completion of the recorded parts gives (``completionETag(of:)``),
    /// since nobody could read it. Without `completionSent`, nil.
    func completedObject(
        key: String, size: Int64, parts: [UploadedPart], partCount: Int, completionSent: Bool = false,
        logger: Logger? = nil
    ) async throws -> CompletedUpload? {
        guard parts.map(\.number).sorted() == Array(1...max(1, partCount)) else { return nil }
        let object: CompletedUpload?
        do {
            object = try await existingObject(key: key, size: size)
        } catch let unreadable as UnreadableObject {
            guard completionSent else { return nil }
            logger?.notice(
                "the credential may not read the object; its upload is gone after a completion was sent with every part: it was completed"
            )
            return CompletedUpload(etag: Self.completionETag(of: parts) ?? "", location: unreadable.location)
        }
        guard let object, Self.etag(object.etag, canComplete: parts) else { return nil }
        return object
    }

    /// Whether `etag`, an object's, can be the one S3 gives the completion of `parts`: the MD5 of the parts'
    /// MD5s, a dash and their count. An ETag of another form (another storage's, or parts' ETags that are not
    /// MD5s) tells nothing and passes.
    static func etag(_ etag: String, canComplete parts: [UploadedPart]) -> Bool {
        let object = etag.trimmingCharacters(in: CharacterSet(charactersIn: "\"")).lowercased().split(separator: "-")
        guard object.count == 2, object[0].count == 32, Int(object[1]) != nil,
            let expected = completionETag(of: parts)
        else { return true }
        return "\"\(object[0])-\(object[1])\"" == expected.lowercased()
    }

    /// The ETag S3 and OSS give the completion of `parts`: the MD5 of the parts' MD5s, a dash and their count, in
    /// quotes (OSS writes the hex in capitals, S3 in small letters; compare without case). Nil when a part's ETag
    /// is not an MD5.
    static func completionETag(of parts: [UploadedPart]) -> String? {
        let digests = parts.sorted { $0.number < $1.number }.map {
            $0.etag.trimmingCharacters(in: CharacterSet(charactersIn: "\"")).lowercased()
        }
        guard !digests.isEmpty, digests.allSatisfy({ $0.count == 32 && $0.allSatisfy(\.isHexDigit) }) else {
            return nil
        }
        var hasher = Insecure.MD5()
        for digest in digests {
            let bytes = stride(from: 0, to: 32, by: 2).compactMap { offset -> UInt8? in
                let start = digest.index(digest.startIndex, offsetBy: offset)
                return UInt8(digest[start..<digest.index(start, offsetBy: 2)], radix: 16)
            }
            hasher.update(data: bytes)
        }
        return "\"\(HexDigest.text(hasher.finalize()).uppercased())-\(parts.count)\""
    }
}

/// Drives a multipart upload of one file through a ``MultipartBackend``: parts in parallel, each finished
/// part checkpointed, reconciliation with the storage's part list on resume (only missing parts are sent
/// again), retries that start over when parts get through, and an abort when the upload fails for good
/// (a signal does not abort: the next run resumes).
struct MultipartUpload: Sendable {
    /// What the stage checkpoints.
    struct Progress: Codable, Sendable {
        var uploadId: String
        var key: String
        /// Identifies the destination and settings; a change starts a new upload.
        var target: String
        var partSize: Int64
        var fingerprint: UploadFile.Fingerprint
        var parts: [UploadedPart]
        /// When CompleteMultipartUpload was sent with every part and no answer came back: nil before it is sent,
        /// and again once it is refused (a 4xx answer) or the upload is abandoned.
        var completionSentAt: Date? = nil

        /// Whether a completion was sent and went unanswered recently enough that a gone upload means it was
        /// completed: a lifecycle rule that deletes unfinished uploads works in days, so after one day a gone
        /// upload may as well have been deleted.
        func completionUnanswered(now: Date = Date()) -> Bool {
            guard let completionSentAt else { return false }
            return now.timeIntervalSince(completionSentAt) < 24 * 3600
        }
    }

    let file: UploadFile
    let partSize: Int64
    let concurrency: Int
    /// Identifies the destination and settings, e.g. `s3://bucket/key`.
    let target: String
    let context: StageContext
    let backend: any MultipartBackend

    var partCount: Int { max(1, Int((file.size + partSize - 1) / partSize)) }

    func range(of number: Int) -> Range<Int64> {
        Int64(number - 1) * partSize..<min(file.size, Int64(number) * partSize)
    }

    /// Uploads the file; returns the completed upload and its final progress.
    func run() async throws -> (CompletedUpload, Progress) {
        var progress = context.lastCheckpoint(as: Progress.self)
        if let recorded = progress {
            if recorded.target != target || recorded.partSize != partSize {
                context.logger.info("the destination or part size changed; starting a new multipart upload")
                progress = nil
            } else if file.changed(since: recorded.fingerprint) {
                await abandon(recorded)
                try file.check(against: recorded.fingerprint)
            }
        }
        let journal = PartJournal(context: context)
        var completed: CompletedUpload?
        do {
            try await TransferRetry(context: context).run(progress: { Int64(await journal.count) }) {
                let current: Progress
                if let known = progress {
                    let latest = await journal.progress ?? known
                    guard let reconciled = try await reconcile(latest) else {
                        if let object = try await backend.completedObject(
                            key: latest.key, size: file.size, parts: latest.parts, partCount: partCount,
                            completionSent: latest.completionUnanswered(), logger: context.logger)
                        {
                            context.logger.info("the upload was completed before the last run stopped")
                            await journal.start(with: latest)
                            completed = object
                            return true
                        }
                        progress = nil
                        return false
                    }
                    current = reconciled
                } else {
                    current = try await start()
                }
                progress = current
                await journal.start(with: current)
                try await sendMissingParts(journal)
                guard let finished = await journal.progress else { return false }
                let parts = finished.parts.sorted { $0.number < $1.number }
                guard parts.map(\.number) == Array(1...partCount) else {
                    throw StageFailure.retryable("parts are missing before completion")
                }
                completed = try await complete(finished, parts: parts, journal: journal)
                return true
            }
        } catch let error as any ClassifiedError where error.disposition == .fatal {
            // An upload whose completion was sent and not refused may be complete (a success whose answer could
            // not be read): it is left, with the record, for the next run to find done or to finish.
            if let progress, case let newest = await journal.progress ?? progress, newest.completionSentAt == nil {
                await abandon(newest)
            }
            throw error
        }
        guard let completed, let final = await journal.progress else {
            throw StageFailure("the upload did not complete")
        }
        return (completed, final)
    }

    /// Gives up the upload of `recorded` (the newest progress known) for good. The checkpoint is first written
    /// without a record of a sent completion (the journal's may lag behind the checkpoint: its write can fail, or
    /// on a rerun's first pass it holds nothing yet), and the upload is aborted only if that write succeeded: an
    /// upload left open does no harm (the bucket's lifecycle rule frees it), while a record that outlives its abort
    /// would have a later run count the gone upload done with no object.
    private func abandon(_ recorded: Progress) async {
        var cleared = recorded
        cleared.completionSentAt = nil
        do {
            try await context.checkpoint(cleared)
        } catch {
            context.logger.warning(
                "multipart upload \(recorded.uploadId) is left for the bucket's lifecycle rule, not aborted: its checkpoint could not be written (\(error))"
            )
            return
        }
        await backend.abort(uploadId: recorded.uploadId, key: recorded.key)
    }

    /// CompleteMultipartUpload, recorded as sent before it goes; a refusal (a 4xx answer: nothing was completed)
    /// clears the record, while no answer, a server error or a success whose body cannot be read (OSS may have
    /// completed in each) keeps it for the next run.
    private func complete(_ finished: Progress, parts: [UploadedPart], journal: PartJournal) async throws
        -> CompletedUpload
    {
        try await journal.completing()
        do {
            return try await backend.complete(uploadId: finished.uploadId, key: finished.key, parts: parts)
        } catch let refused as HTTPFailure where refused.refusedRequest {
            try await journal.completionAnswered()
            throw refused
        }
    }

    /// Creates the upload; its id is checkpointed before any part is sent.
    private func start() async throws -> Progress {
        let (uploadId, key) = try await backend.create()
        let progress = Progress(
            uploadId: uploadId, key: key, target: target, partSize: partSize, fingerprint: file.fingerprint, parts: [])
        try await context.checkpoint(progress)
        context.logger.info("started multipart upload \(uploadId) (\(partCount) parts of \(ByteCount(partSize)))")
        return progress
    }

    /// Keeps the checkpointed parts the storage still has with the same ETag and size, and the listed parts
    /// the backend can tell hold the file's bytes (sent before a crash, never checkpointed); nil when the
    /// upload is gone (then a new one starts).
    private func reconcile(_ progress: Progress) async throws -> Progress? {
        guard let listed = try await backend.listParts(uploadId: progress.uploadId, key: progress.key) else {
            context.logger.warning("the multipart upload \(progress.uploadId) is gone; starting a new one")
            return nil
        }
        var reconciled = progress
        reconciled.parts = progress.parts.filter { part in
            guard let remote = listed[part.number] else { return false }
            return remote.etag == part.etag && remote.size == Int64(range(of: part.number).count)
        }
        let kept = Set(reconciled.parts.map(\.number))
        for (number, remote) in listed.sorted(by: { $0.key < $1.key })
        where number <= partCount && !kept.contains(number) && remote.size == Int64(range(of: number).count) {
            if let part = try await backend.adopt(number: number, listed: remote, range: range(of: number)) {
                reconciled.parts.append(part)
            }
        }
        if reconciled.parts.count > kept.count {
            try await context.checkpoint(reconciled)
        }
        context.logger.info(
            "resuming multipart upload \(progress.uploadId): \(reconciled.parts.count) of \(partCount) parts already uploaded"
        )
        return reconciled
    }

    /// Sends the parts not yet finished, `concurrency` at a time; each finished part is checkpointed.
    private func sendMissingParts(_ journal: PartJournal) async throws {
        guard let progress = await journal.progress else { return }
        let done = Set(progress.parts.map(\.number))
        let missing = (1...partCount).filter { !done.contains($0) }
        let counter = PartsProgress(
            base: done.reduce(0) { $0 + Int64(range(of: $1).count) }, total: file.size, report: context.reportProgress)
        let limiter = context.services[BandwidthLimitKey.self]
        // Each part catches its own failure: the first one stops new parts from starting, the parts in flight
        // finish and are checkpointed (so a retry or a renewed credential does not send them again), then it
        // is thrown.
        try await withThrowingTaskGroup(of: Result<UploadedPart, any Error>.self) { group in
            var queue = missing.makeIterator()
            var failure: (any Error)?
            func enqueue() {
                guard failure == nil, let number = queue.next() else { return }
                let meter = TransferMeter(base: 0, total: file.size, limiter: limiter) {
                    counter.update(part: number, bytes: $0.completed)
                }
                group.addTask {
                    do {
                        return .success(
                            try await backend.sendPart(
                                uploadId: progress.uploadId, key: progress.key, number: number,
                                range: range(of: number), meter: meter))
                    } catch {
                        return .failure(error)
                    }
                }
            }
            for _ in 0..<concurrency { enqueue() }
            while let result = try await group.next() {
                switch result {
                case .success(let part):
                    enqueue()  // the next part starts while this one is checkpointed (a crash then re-sends it)
                    try await journal.finished(part)
                case .failure(let error):
                    if error is CancellationError { throw error }
                    failure = failure ?? error
                }
            }
            if let failure { throw failure }
        }
    }
}

/// Finished parts, checkpointed one at a time as parallel sends finish.
private actor PartJournal {
    private let context: StageContext
    private(set) var progress: MultipartUpload.Progress?

    init(context: StageContext) {
        self.context = context
    }

    var count: Int { progress?.parts.count ?? 0 }

    func start(with progress: MultipartUpload.Progress) {
        self.progress = progress
    }

    /// CompleteMultipartUpload is about to be sent with every part: recorded, so that a run that never hears the
    /// answer knows it went.
    func completing() async throws {
        progress?.completionSentAt = Date()
        if let progress { try await context.checkpoint(progress) }
    }

    /// CompleteMultipartUpload was refused: the record of a sent completion is cleared, so that a later run does
    /// not take the gone upload for a completed one.
    func completionAnswered() async throws {
        guard progress?.completionSentAt != nil else { return }
        progress?.completionSentAt = nil
        if let progress { try await context.checkpoint(progress) }
    }

    func finished(_ part: UploadedPart) async throws {
        progress?.parts.append(part)
        if let progress { try await context.checkpoint(progress) }
    }
}
