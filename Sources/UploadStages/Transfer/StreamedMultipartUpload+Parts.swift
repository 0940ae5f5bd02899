import Crypto
import HTTPTransport
import Logging
import StageKit
import StageRuntime

extension StreamedMultipartUpload {
    /// What a part's task reports.
    fileprivate enum Event: Sendable {
        case snapshot(ExportStream.Snapshot)
        case sent(Part)
        case kept(Int)
        case failed(Int, any Error)
    }

    /// Sends the parts as the export's `attempt` makes them final, `concurrency` at a time, and completes the
    /// upload once the export finished and every part is there; nil when the upload is gone (a new one starts).
    /// Throws ``ExportStartedAgain`` once the parts in flight are done when another attempt began writing, or when
    /// the export finished a file it wrote again (a new file, which `source` does not read unless `readsFinished`).
    func sendParts(
        attempt: Int, readsFinished: Bool, source: UploadFile, storage: any MultipartBackend, state: StreamedParts
    ) async throws -> CompletedUpload? {
        guard let progress = await state.progress else { return nil }
        let limiter = context.services[BandwidthLimitKey.self]
        let (events, post) = AsyncStream<Event>.makeStream()
        return try await withThrowingTaskGroup(of: Void.self) { group in
            defer { group.cancelAll() }
            group.addTask {
                for await snapshot in stream.snapshots() { post.yield(.snapshot(snapshot)) }
            }
            var sending = PartSending(
                upload: self, progress: progress, source: source, storage: storage, state: state, limiter: limiter,
                post: post, snapshot: stream.current)
            for await event in events {
                try await sending.record(event)
                if let stop = sending.stop(attempt: attempt, readsFinished: readsFinished) {
                    guard sending.inFlight.isEmpty else { continue }
                    throw stop
                }
                if sending.snapshot.rewritten, !sending.sawRewrite {
                    // The export wrote its file again: every part is checked against the finished file.
                    sending.sawRewrite = true
                    context.logger.notice("the export wrote its file again: checking every part once it is finished")
                    await state.unsettleAll()
                }
                if let completed = try await sending.completeOrSend(in: &group) { return completed }
                context.reportProgress(
                    StageProgress(completed: await state.sentBytes, total: sending.snapshot.finishedSize, unit: .bytes))
            }
            throw CancellationError()
        }
    }

    /// Sends one part, unless the storage holds the same bytes already (a part recorded before a crash).
    fileprivate func send(
        _ number: Int, range: Range<Int64>, recorded: Part?, source: UploadFile, storage: any MultipartBackend,
        progress: Progress, meter: TransferMeter
    ) async throws -> Event {
        let digest = try await Self.sha256(source, range)
        if let recorded, recorded.sha256 == digest, recorded.size == Int64(range.count) {
            return .kept(number)
        }
        if recorded != nil {
            context.logger.notice("part \(number) differs from the bytes uploaded before: sending it again")
        }
        let sent = try await storage.sendPart(
            uploadId: progress.uploadId, key: progress.key, number: number, range: range, meter: meter)
        return .sent(
            Part(number: number, etag: sent.etag, checksum: sent.checksum, size: Int64(range.count), sha256: digest))
    }

    /// The SHA-256 of the bytes of `range` in `file`, in hexadecimal.
    static func sha256(_ file: UploadFile, _ range: Range<Int64>) async throws -> String {
        var hasher = SHA256()
        try await file.digest(range) { hasher.update(bufferPointer: $0) }
        return HexDigest.text(hasher.finalize())
    }
}

/// What one ``StreamedMultipartUpload/sendParts(attempt:readsFinished:source:storage:state:)`` has seen: the latest
/// snapshot of the export, the parts in flight, and the first failure of a part.
private struct PartSending {
    let upload: StreamedMultipartUpload
    let progress: StreamedMultipartUpload.Progress
    let source: UploadFile
    let storage: any MultipartBackend
    let state: StreamedParts
    let limiter: BandwidthLimiter?
    let post: AsyncStream<StreamedMultipartUpload.Event>.Continuation
    var snapshot: ExportStream.Snapshot
    var inFlight: Set<Int> = []
    var failure: (any Error)?
    /// The export was seen writing its file again.
    var sawRewrite = false

    /// Takes in what the export or a part's task reported.
    mutating func record(_ event: StreamedMultipartUpload.Event) async throws {
        switch event {
        case .snapshot(let latest): snapshot = latest
        case .sent(let part):
            inFlight.remove(part.number)
            try await state.sent(part, context: upload.context)
        case .kept(let number):
            inFlight.remove(number)
            await state.settle(number)
        case .failed(let number, let error):
            inFlight.remove(number)
            failure = failure ?? error
        }
    }

    /// Why the parts stop being sent (thrown once those in flight are done), or nil: a part failed, the export
    /// failed, another attempt began writing, or the export finished a file it wrote again that `source` does not
    /// read unless `readsFinished`.
    func stop(attempt: Int, readsFinished: Bool) -> (any Error)? {
        if let failure { return failure }
        if let reason = snapshot.failure {
            return StageFailure("the export it streams did not finish: \(reason)", kind: .failed)
        }
        if snapshot.attempt != attempt { return ExportStartedAgain(snapshot: snapshot) }
        if snapshot.rewritten, snapshot.finishedSize != nil, !readsFinished {
            return ExportStartedAgain(snapshot: snapshot)
        }
        return nil
    }

    /// Completes the upload once the export is finished and every part is settled; until then, starts the parts
    /// that are due.
    mutating func completeOrSend(in group: inout ThrowingTaskGroup<Void, any Error>) async throws -> CompletedUpload? {
        let partSize = upload.partSize
        let size = snapshot.finishedSize
        let count = size.map {
            StreamedMultipartUpload.count(firstPart: progress.firstPart, partSize: partSize, size: $0)
        }
        if let count, count > 10_000 {
            throw StageFailure(
                "the export is \(ByteCount(size ?? 0)): more than 10,000 parts of \(ByteCount(partSize)); give partSize more",
                kind: .invalidInput)
        }
        let settled = await state.settled
        if let count, inFlight.isEmpty, settled.isSuperset(of: 1...count) {
            let parts = await state.parts(upTo: count)
            return try await storage.complete(
                uploadId: progress.uploadId, key: progress.key,
                parts: parts.map { UploadedPart(number: $0.number, etag: $0.etag, checksum: $0.checksum) })
        }
        await send(count: count, settled: settled, in: &group)
        return nil
    }

    /// Starts parts while fewer than `concurrency` are in flight: parts 2… as far as the watermark passed them,
    /// then, once the file is finished (`count` parts), the rest and part 1.
    private mutating func send(count: Int?, settled: Set<Int>, in group: inout ThrowingTaskGroup<Void, any Error>)
        async
    {
        let size = snapshot.finishedSize
        let final = snapshot.rewritten && size == nil ? 0 : snapshot.final
        var number = 2
        while inFlight.count < upload.concurrency {
            if let count, number > count { number = 1 }
            let range = StreamedMultipartUpload.range(
                of: number, firstPart: progress.firstPart, partSize: upload.partSize, size: size)
            if size == nil, number == 1 || range.upperBound > final { break }
            if !settled.contains(number), !inFlight.contains(number) {
                inFlight.insert(number)
                let recorded = await state.recorded(number)
                let meter = TransferMeter(base: 0, total: Int64(range.count), limiter: limiter) { _ in }
                let (partNumber, upload, source, storage, progress, post) = (
                    number, upload, source, storage, progress, post
                )
                group.addTask {
                    do {
                        post.yield(
                            try await upload.send(
                                partNumber, range: range, recorded: recorded, source: source, storage: storage,
                                progress: progress, meter: meter))
                    } catch {
                        post.yield(.failed(partNumber, error))
                    }
                }
            }
            if number == 1 { break }
            number += 1
        }
    }
}
