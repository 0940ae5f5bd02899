import AsyncHTTPClient
import Foundation
import HTTPTransport
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import StageKit

/// One tus upload of one file, as the stage runs it; in parallel mode its part tasks share it, so what
/// changes while it runs is behind a lock.
final class TusSession: Sendable {
    let options: TusUploadStage.Options
    let file: UploadFile
    let context: StageContext
    let exchange: HTTPExchange
    private let state: NIOLockedValueBox<State>
    let acknowledged = NIOLockedValueBox<[Int: Int64]>([:])

    /// What changes while the upload runs.
    private struct State {
        var progress: TusUploadStage.Progress?
        var capabilities = Capabilities()
    }

    /// The last checkpointed progress.
    var progress: TusUploadStage.Progress? {
        get { state.withLockedValue { $0.progress } }
        set { state.withLockedValue { $0.progress = newValue } }
    }

    /// What the server offers.
    var capabilities: Capabilities {
        get { state.withLockedValue { $0.capabilities } }
        set { state.withLockedValue { $0.capabilities = newValue } }
    }

    /// What the server said in its OPTIONS answer.
    struct Capabilities {
        var extensions: Set<String> = []
        var checksumAlgorithms: [String] = []
    }

    static let version = "1.0.0"

    /// `resuming`: take up the stage's checkpoint (a streamed upload keeps its own).
    init(options: TusUploadStage.Options, file: UploadFile, context: StageContext, resuming: Bool = true) {
        self.options = options
        self.file = file
        self.context = context
        let stall = options.stallTimeout
        self.exchange = HTTPExchange(
            client: context.httpClient, stallTimeout: stall, answerTimeout: TimeSpan(seconds: max(120, stall.seconds)))
        self.state = NIOLockedValueBox(
            State(progress: resuming ? context.lastCheckpoint(as: TusUploadStage.Progress.self) : nil))
    }

    func upload() async throws -> TusUploadStage.Outputs {
        if let recorded = progress?.fingerprint, file.changed(since: recorded) {
            if let progress, progress.created { await terminate(progress.uploadURL) }
            try file.check(against: recorded)
        }
        capabilities = await discover(options.url ?? options.endpoint ?? "")
        let algorithm = try checksumAlgorithm()
        let chunkSize = options.chunkSize?.bytes ?? (algorithm == nil ? nil : 16 << 20)
        let parallel = options.parallel
        if parallel > 1, options.endpoint == nil || !capabilities.extensions.contains("concatenation") {
            context.logger.warning(
                "parallel needs an endpoint whose server offers the concatenation extension; uploading in one stream")
        }
        let concatenate = parallel > 1 && options.endpoint != nil && capabilities.extensions.contains("concatenation")
        do {
            try await TransferRetry(context: context).run(
                progress: { [self] in acknowledged.withLockedValue { $0.values.reduce(0, +) } }
            ) {
                if concatenate {
                    try await uploadInParts(parallel, chunkSize: chunkSize, algorithm: algorithm)
                } else {
                    let url = try await uploadURL()
                    try await send(
                        TusUploadStage.Segment(url: url, start: 0, end: file.size), index: 0, chunkSize: chunkSize,
                        algorithm: algorithm)
                }
                return true
            }
        } catch let error as any ClassifiedError where error.disposition == .fatal {
            if let progress, progress.created, capabilities.extensions.contains("termination") {
                await terminate(progress.uploadURL)
            }
            throw error
        }
        guard let url = progress?.uploadURL else { throw StageFailure("the upload has no URL") }
        return TusUploadStage.Outputs.with {
            $0.url = url
            $0.size = file.size
        }
    }

    // MARK: Steps

    /// The upload's URL: the given one, the checkpointed one, or a new one created (and checkpointed
    /// before any byte is sent).
    private func uploadURL() async throws -> String {
        if let progress { return progress.uploadURL }
        if let url = options.url {
            try await record(
                TusUploadStage.Progress(uploadURL: url, created: false, fingerprint: file.fingerprint, offset: 0))
            return url
        }
        let resolved = try await create([("Upload-Length", String(file.size))])
        try await record(
            TusUploadStage.Progress(uploadURL: resolved, created: true, fingerprint: file.fingerprint, offset: 0))
        context.logger.info("created upload \(resolved)")
        return resolved
    }

    /// POSTs to the endpoint (creation) with `headers` and the metadata; returns the new upload's URL.
    func create(_ headers: [(String, String)]) async throws -> String {
        guard let endpoint = options.endpoint else { throw StageFailure("no endpoint", kind: .invalidOptions) }
        let request = HTTPClientRequest(
            url: endpoint, method: .POST, headers: baseHeaders() + headers + [("Upload-Metadata", metadataHeader())])
        let action = "creating the upload at \(endpoint)"
        let answer = try await exchange.send(request, doing: action)
        guard answer.status == .created else { throw HTTPFailure.tus(answer, doing: action, size: file.size) }
        guard let location = answer.headers.first(name: "Location"),
            let resolved = URL(string: location, relativeTo: URL(string: endpoint))?.absoluteString
        else {
            throw HTTPFailure.invalidAnswer(
                answer, "creating the upload: the server's 201 answer has no usable Location header")
        }
        return resolved
    }

    /// A parallel upload: `count` partial uploads sent at the same time, then concatenated into the final
    /// upload (the concatenation extension). The parts are checkpointed before any byte is sent; after a
    /// crash each part continues from its own offset.
    private func uploadInParts(_ count: Int, chunkSize: Int64?, algorithm: String?) async throws {
        if let progress, !progress.uploadURL.isEmpty { return }
        let parts: [TusUploadStage.Segment]
        if let known = progress?.parts {
            parts = known
        } else {
            let size = max(1, (file.size + Int64(count) - 1) / Int64(count))
            var created: [TusUploadStage.Segment] = []
            for start in stride(from: Int64(0), to: max(file.size, 1), by: Int(size)) {
                let end = min(file.size, start + size)
                let url = try await create([("Upload-Concat", "partial"), ("Upload-Length", String(end - start))])
                created.append(TusUploadStage.Segment(url: url, start: start, end: end))
            }
            parts = created
            try await record(
                TusUploadStage.Progress(
                    uploadURL: "", created: true, fingerprint: file.fingerprint, offset: 0, parts: parts))
            context.logger.info("created \(parts.count) partial uploads")
        }
        let counter = PartsProgress(base: 0, total: file.size, report: context.reportProgress)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, part) in parts.enumerated() {
                group.addTask {
                    try await self.send(
                        part, index: index, chunkSize: chunkSize, algorithm: algorithm, counter: counter)
                }
            }
            try await group.waitForAll()
        }
        let final = try await create([("Upload-Concat", "final;" + parts.map(\.url).joined(separator: " "))])
        try await record(
            TusUploadStage.Progress(
                uploadURL: final, created: true, fingerprint: file.fingerprint, offset: file.size, parts: parts))
        context.logger.info("concatenated \(parts.count) parts into \(final)")
    }
}
