import Foundation
import HTTPTransport
import Logging
import NIOConcurrencyHelpers
public import StageKit

/// `s3.uploadFolder`: uploads every file of a folder (an `ffmpeg.package` output, say) under a key prefix,
/// several files at once, with the content types players expect: a file no larger than a part in one PutObject,
/// a larger one through the resumable multipart upload of `s3.upload`. Playlists and manifests go after the files
/// they list, and the folder's top-level ones (the HLS master playlist, the DASH manifest) last of all, so a
/// player never finds a manifest whose segments are not there yet. A package holds thousands of files, so the
/// files done are checkpointed in batches; after a crash those marked done are not sent again, one not marked
/// is sent only when a HEAD does not show it there with its size and MD5, and a multipart file resumes from its
/// parts.
public struct S3FolderUploadStage: Stage {
    /// The largest file sent in one PUT, whatever `partSize`: a PUT cut off starts again from its first byte, a
    /// multipart upload from its last part.
    static let largestSinglePut: Int64 = 16 << 20

    /// The options of `s3.uploadFolder`.
    public struct Options: StageOptions {
        /// The folder.
        @Option("The folder; files and folders whose names start with '.' are left out.") public var folder: String
        /// Where the bucket is and how to send to it.
        @OptionGroup public var connection: S3Connection
        /// Prepended to each file's path in the folder to make its key.
        @Option("Prepended to each file's path in the folder to make its key, e.g. videos/clip/ (default: none).")
        public var prefix = ""
        /// Files in flight at once.
        @Option("Files in flight at once.", minimum: 1, maximum: 32) public var concurrency = 4
        /// Bytes per part of a file sent in parts; a file no larger (and at most 16 MiB) goes in one PUT.
        @Option(
            "Bytes per part of a file sent in parts (a smaller one is raised to 5 MiB; grown so there are at most 10,000 parts); a file no larger (and at most 16 MiB) goes in one PUT.",
            maximum: 5_368_709_120)
        public var partSize = ByteCount(8 << 20)

        public init() {}
    }

    /// The outputs of `s3.uploadFolder`.
    public struct Outputs: StageOutputs {
        /// The bucket.
        @Output("The bucket.") public var bucket = ""
        /// The key prefix.
        @Output("The key prefix.") public var prefix = ""
        /// Files uploaded (or found uploaded by an earlier run).
        @Output("Files uploaded.") public var files = 0
        /// Bytes of all files.
        @Output("Bytes of all files.") public var size: Int64 = 0
        /// The keys of the top-level playlists and manifests, uploaded last.
        @Output("The keys of the top-level playlists and manifests, uploaded last.") public var manifests: [String] = []
        /// The URL of the first of them (the HLS master playlist when there is one); empty when none.
        @Output("The URL of the HLS master playlist (else of the first manifest); empty when none.")
        public var location = ""

        public init() {}
    }

    /// What the stage checkpoints: the files done (recorded in batches: a file done but not yet recorded is
    /// found by a HEAD on resume), and the multipart upload of each large file in flight.
    struct Progress: Codable, Sendable {
        /// Identifies the destination; another one starts over.
        var target: String
        var done: [String: DoneFile]
        var uploading: [String: JSONValue]
    }

    /// A file the storage has.
    struct DoneFile: Codable, Sendable {
        var fingerprint: UploadFile.Fingerprint
        var etag: String
    }

    public static let stageType = "s3.uploadFolder"
    public static let landingOutput = "location"
    public static let resource = StageResource.network
    /// Its requests are retried by the stage itself (resuming from the server), under the stage's `retry`.
    public static let retriesItself = true
    public static let summary =
        "Uploads a folder (an HLS/DASH package) to S3: every file resumable, several at once, content types set, playlists and manifests last."

    public init() {}

    public func run(_ options: Options, context: StageContext) async throws -> Outputs {
        let root = URL(fileURLWithPath: options.folder).standardizedFileURL
        let files = try FolderFiles.list(root)
        guard !files.isEmpty else {
            throw StageFailure("\(root.path) holds no file to upload", kind: .invalidInput)
        }
        let waves = FolderFiles.waves(files)
        let connection = options.connection
        let region = connection.signingRegion(environment: ProcessInfo.processInfo.environment)
        let target = try "s3:" + connection.objectURL(key: options.prefix, region: region)
        let saved = context.lastCheckpoint(as: Progress.self)
        var progress = saved ?? Progress(target: target, done: [:], uploading: [:])
        if progress.target != target {
            context.logger.info("the destination changed; uploading every file again")
            progress = Progress(target: target, done: [:], uploading: [:])
        }
        // Files an earlier run may have sent without recording them are looked for on the server first. A first
        // run saves its checkpoint before sending anything, so that a run killed before its first batch of
        // done-marks is known as one to resume.
        let resuming = saved?.target == target
        if !resuming { try await context.checkpoint(progress) }
        let journal = FolderJournal(progress, context: context)
        let sizes = try files.map { try UploadFile(path: root.appendingPathComponent($0).path) }
        let total = sizes.reduce(0) { $0 + $1.size }
        let meter = FolderMeter(total: total, report: context.reportProgress)
        let known = Dictionary(uniqueKeysWithValues: zip(files, sizes))
        let alreadyDone = files.filter { name in
            guard let done = progress.done[name], let file = known[name] else { return false }
            return !file.changed(since: done.fingerprint)
        }
        for name in alreadyDone { meter.update(name, bytes: known[name]?.size ?? 0) }
        context.logger.info(
            "folder upload: \(files.count) files, \(alreadyDone.count) already uploaded, playlists and manifests last")
        let skip = Set(alreadyDone)
        for wave in waves {
            do {
                try await upload(
                    wave.filter { !skip.contains($0) }, options: options, root: root, known: known, journal: journal,
                    meter: meter, resuming: resuming, context: context)
            } catch {
                try? await journal.flush()
                throw error
            }
            try await journal.flush()
        }
        let found = await journal.foundUploaded
        if found > 0 { context.logger.info("folder upload: \(found) files were already on the server") }
        let manifests = waves.last.map { wave in wave.filter { !$0.contains("/") } } ?? []
        let keys = manifests.map { options.prefix + $0 }
        let master = keys.first { $0.hasSuffix(".m3u8") } ?? keys.first
        let location = try master.map { try connection.objectURL(key: $0, region: region) } ?? ""
        return Outputs.with {
            $0.bucket = connection.bucket
            $0.prefix = options.prefix
            $0.files = files.count
            $0.size = total
            $0.manifests = keys
            $0.location = location
        }
    }

    /// Uploads `names` at most `concurrency` at a time. Each file catches its own failure: the first one stops
    /// new files from starting, the files in flight finish and are checkpointed, then it is thrown.
    private func upload(
        _ names: [String], options: Options, root: URL, known: [String: UploadFile], journal: FolderJournal,
        meter: FolderMeter, resuming: Bool, context: StageContext
    ) async throws {
        let concurrency = options.concurrency
        try await withThrowingTaskGroup(of: (any Error)?.self) { group in
            var queue = names.makeIterator()
            var failure: (any Error)?
            func enqueue() {
                guard failure == nil, let name = queue.next(), let file = known[name] else { return }
                group.addTask {
                    do {
                        try await uploadFile(
                            name, file: file, options: options, journal: journal, meter: meter, resuming: resuming,
                            context: context)
                        return nil
                    } catch {
                        return error
                    }
                }
            }
            for _ in 0..<concurrency { enqueue() }
            while let result = try await group.next() {
                if let error = result {
                    if error is CancellationError { throw error }
                    failure = failure ?? error
                } else {
                    enqueue()
                }
            }
            if let failure { throw failure }
        }
    }

    /// One file: in one PutObject when it fits in a part, else through `s3.upload`'s multipart upload with its
    /// checkpoints kept in the folder's under its name (also a small file whose multipart upload an earlier
    /// version of the stage began, so that it is completed rather than left behind).
    private func uploadFile(
        _ name: String, file: UploadFile, options: Options, journal: FolderJournal, meter: FolderMeter,
        resuming: Bool, context: StageContext
    ) async throws {
        // A package holds hundreds of files: each one's start and resume are told only at debug level.
        var logger = context.logger
        if logger.logLevel > .debug { logger.logLevel = max(logger.logLevel, .notice) }
        let saved = await journal.uploading(name)
        let fileContext = StageContext(
            stageID: context.stageID, stageType: context.stageType, item: context.item, attempt: context.attempt,
            logger: logger, scratchFolder: context.scratchFolder, services: context.services,
            savedCheckpoint: saved,
            checkpointer: FileCheckpointer(name: name, journal: journal, context: context),
            progress: { meter.update(name, bytes: $0.completed) }, retryPolicy: context.retryPolicy,
            retrying: { context.retrying(attempt: $0.attempt, after: $0.delay, because: $0.error) })
        let backend = try S3Backend(
            options.connection, key: options.prefix + name, contentType: nil, file: file,
            context: fileContext)
        let partSize = max(5 << 20, options.partSize.bytes, (file.size + 9_999) / 10_000)
        guard partSize <= 5 << 30 else {
            throw StageFailure(
                "\(name): \(ByteCount(file.size)) needs parts over 5 GiB; S3 objects are at most 5 TiB",
                kind: .invalidInput)
        }
        if saved == nil && file.size <= min(partSize, Self.largestSinglePut) {
            let etag = try await putWhole(
                name, file: file, backend: backend, checkFirst: resuming, journal: journal, meter: meter,
                context: fileContext)
            meter.update(name, bytes: file.size)
            try await journal.finished(name, DoneFile(fingerprint: file.fingerprint, etag: etag))
            return
        }
        let upload = MultipartUpload(
            file: file, partSize: partSize, concurrency: 1,
            target: "s3:\(backend.objectURL) checksum=\(backend.checksum)", context: fileContext, backend: backend)
        let (completed, _) = try await upload.run()
        meter.update(name, bytes: file.size)
        try await journal.finished(name, DoneFile(fingerprint: file.fingerprint, etag: completed.etag))
        context.logger.debug("uploaded \(name) as \(backend.key)")
    }

    /// Sends a file in one PutObject, retried under the stage's policy; returns the object's ETag. With
    /// `checkFirst` (a resume) a HEAD comes first: an object of the file's size whose ETag is the file's MD5
    /// is the file, sent by an earlier run that stopped before recording it, and is not sent again.
    private func putWhole(
        _ name: String, file: UploadFile, backend: S3Backend, checkFirst: Bool, journal: FolderJournal,
        meter: FolderMeter, context: StageContext
    ) async throws -> String {
        let digests = try await ObjectDigests(of: file, checksum: backend.checksum)
        var etag = ""
        var checking = checkFirst
        try await TransferRetry(context: context).run(progress: { 0 }) {
            if checking, let object = try await backend.headObject(), object.size == file.size,
                ObjectDigests.md5(ofETag: object.etag) == digests.md5
            {
                context.logger.debug("\(name) is already on the server")
                await journal.foundOnServer()
                etag = object.etag
                return true
            }
            checking = false
            let transfer = TransferMeter(
                base: 0, total: file.size, limiter: context.services[BandwidthLimitKey.self],
                report: { meter.update(name, bytes: $0.completed) })
            etag = try await backend.putObject(digests, meter: transfer).etag
            return true
        }
        return etag
    }
}

/// The files of a folder to upload, and the order they go in.
enum FolderFiles {
    /// Every regular file under `root`, as paths relative to it, sorted; names starting with '.' (a package's work
    /// files, a partial rendition) are left out with everything under them.
    static func list(_ root: URL) throws -> [String] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: root.path, isDirectory: &isDirectory), isDirectory.boolValue
        else {
            throw StageFailure("\(root.path) is not a folder", kind: .invalidInput)
        }
        var files: [String] = []
        func walk(_ folder: URL, _ prefix: String) throws {
            let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            for name in names where !name.hasPrefix(".") {
                let url = folder.appendingPathComponent(name)
                var isFolder: ObjCBool = false
                guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) else { continue }
                if isFolder.boolValue {
                    try walk(url, prefix + name + "/")
                } else {
                    files.append(prefix + name)
                }
            }
        }
        try walk(root, "")
        return files.sorted()
    }

    /// Whether a file is a playlist or a manifest: it lists other files.
    static func isManifest(_ name: String) -> Bool {
        name.hasSuffix(".m3u8") || name.hasSuffix(".mpd")
    }

    /// The files in the order they are uploaded: the media (segments, initialisation segments, anything else),
    /// then the playlists in subfolders (the renditions'), then the top-level playlists and manifests. A wave
    /// starts once the one before is complete; empty waves are left out.
    static func waves(_ files: [String]) -> [[String]] {
        let media = files.filter { !isManifest($0) }
        let nested = files.filter { isManifest($0) && $0.contains("/") }
        let top = files.filter { isManifest($0) && !$0.contains("/") }
        return [media, nested, top].filter { !$0.isEmpty }
    }
}

/// The folder's checkpoint: every large file's multipart progress and the files done, saved as one. A
/// multipart step is saved at once; files done are saved in batches, at most once a second unless
/// ``batchSize`` of them wait, so that a package of thousands of small files costs a bounded number of writes
/// (each one the whole checkpoint) instead of one per file.
private actor FolderJournal {
    /// Files done that make a write due before the second is up.
    static let batchSize = 256
    /// The shortest time between two writes made for files done alone.
    static let interval = Duration.seconds(1)

    private var progress: S3FolderUploadStage.Progress
    private let context: StageContext
    private var unsaved = 0
    private var lastSave = ContinuousClock.now
    /// Files not recorded as done that a HEAD found on the server with their bytes.
    private(set) var foundUploaded = 0

    init(_ progress: S3FolderUploadStage.Progress, context: StageContext) {
        self.progress = progress
        self.context = context
    }

    func foundOnServer() {
        foundUploaded += 1
    }

    func uploading(_ name: String) -> JSONValue? {
        progress.uploading[name]
    }

    func save(_ name: String, _ value: JSONValue) async throws {
        progress.uploading[name] = value
        try await write()
    }

    func finished(_ name: String, _ done: S3FolderUploadStage.DoneFile) async throws {
        progress.uploading[name] = nil
        progress.done[name] = done
        unsaved += 1
        if unsaved >= Self.batchSize || ContinuousClock.now - lastSave >= Self.interval {
            try await write()
        }
    }

    /// Saves the files done not saved yet: at the end of a wave, and when the stage stops on a failure.
    func flush() async throws {
        if unsaved > 0 { try await write() }
    }

    private func write() async throws {
        let pending = unsaved
        unsaved = 0
        lastSave = ContinuousClock.now
        do {
            try await context.checkpoint(progress)
        } catch {
            // Still unsaved: the next write (or the flush when the stage stops) records them.
            unsaved += pending
            throw error
        }
    }
}

/// Where the multipart upload of one file saves its checkpoints: into the folder's, under the file's name.
private struct FileCheckpointer: StageCheckpointing {
    let name: String
    let journal: FolderJournal
    let context: StageContext

    func saveCheckpoint(_ value: JSONValue) async throws {
        try await journal.save(name, value)
    }

    func idempotencyKey(_ key: String) async throws -> String {
        try await context.idempotencyKey("\(name) \(key)")
    }
}

/// Bytes sent over all files, for the stage's progress.
private final class FolderMeter: Sendable {
    private let total: Int64
    private let report: @Sendable (StageProgress) -> Void
    private let sent = NIOLockedValueBox<[String: Int64]>([:])

    init(total: Int64, report: @escaping @Sendable (StageProgress) -> Void) {
        self.total = total
        self.report = report
    }

    func update(_ name: String, bytes: Int64) {
        let now = sent.withLockedValue { files -> Int64 in
            files[name] = bytes
            return files.values.reduce(0, +)
        }
        report(StageProgress(completed: min(total, now), total: total, unit: .bytes))
    }
}
