import Foundation
import HTTPTypes
import StageKit

/// Every upload of the sandbox, whichever platform made it: its record, and its bytes in the file
/// `uploads/ID.bin`. Platforms create uploads and hand out links to them; the upload endpoints write the bytes.
///
/// Upload bytes never pass through the store: a route takes a write lease on an upload
/// (``beginWrite(_:token:expectedOffset:)``), streams the body to the upload's file itself, reports progress,
/// and ends the lease with the final offset.
@SandboxActor
final class UploadStore: IndexSectionKeeper {
    /// The store's part of `index.json`: every upload's record under `uploads`, by id.
    struct Section: IndexSection {
        var uploads: [String: UploadRecord] = [:]
    }

    private nonisolated let folder: DataFolder
    private let configuration: SandboxConfiguration
    private let index: SandboxIndex
    private var section: Section
    /// Uploads with a request writing to them right now.
    private var writers: Set<String> = []
    /// Held weakly: the observers hold the store.
    private var observers: [WeakObserver] = []

    var indexSection: any IndexSection { self.section }

    /// Reads the uploads of `document`. Upload bytes are written in place, so each upload's offset is
    /// reconciled with its file's length: bytes that reached the disk after the last index write still count.
    init(_ document: IndexDocument, folder: DataFolder, configuration: SandboxConfiguration, index: SandboxIndex) throws
    {
        var section = try document.section(Section.self)
        for (id, var upload) in section.uploads {
            upload.offset = min(upload.length, folder.storedLength(id) ?? 0)
            section.uploads[id] = upload
        }
        self.section = section
        self.folder = folder
        self.configuration = configuration
        self.index = index
    }

    /// Tells `observer` about every upload from now on.
    func register(_ observer: some UploadObserver) {
        self.observers.append(WeakObserver(observer: observer))
    }

    /// Stores a new, empty upload (record and file) that expires after the configured lifetime. A
    /// `length` of nil is learnt later (``declareLength(_:_:)``).
    func add(
        id: String, uploadProtocol: UploadProtocol, videoID: String? = nil, assetID: String? = nil, length: Int64?,
        token: String?, metadata: String? = nil, sourceLink: String? = nil
    ) -> UploadRecord {
        let now = Date()
        let upload = UploadRecord(
            id: id, uploadProtocol: uploadProtocol, videoID: videoID, assetID: assetID, length: length ?? 0,
            offset: 0, token: token, metadata: metadata, createdAt: now,
            expiresAt: now.addingTimeInterval(self.configuration.uploadLifetime.seconds), completedAt: nil,
            lengthDeferred: length == nil ? true : nil, sourceLink: sourceLink)
        self.folder.createUploadFile(id)
        self.section.uploads[id] = upload
        return upload
    }

    /// Creates a standalone tus upload (`POST /upload`), which belongs to no platform's record.
    func createStandalone(length: Int64, metadata: String?) -> UploadRecord {
        let upload = self.add(
            id: RandomID.hex(bytes: 16), uploadProtocol: .tus, length: length, token: nil, metadata: metadata)
        self.index.persist()
        return upload
    }

    /// The upload `id` if `token` opens it (uploads created without a token need none) and it has
    /// not expired. Expiry applies to incomplete uploads only.
    func upload(_ id: String, token: String?) throws -> UploadRecord {
        guard let upload = self.section.uploads[id] else {
            throw UploadFailure(.notFound, "No such upload.")
        }
        if let expected = upload.token, expected != token {
            throw UploadFailure(.forbidden, "The upload link's token is missing or wrong.")
        }
        if !upload.isComplete, upload.expiresAt < Date() {
            throw UploadFailure(.gone, "The upload expired.")
        }
        return upload
    }

    /// Any upload by id, whatever its token or expiry: for the platforms that own it and the sandbox's own
    /// inspection endpoints.
    func record(_ id: String) -> UploadRecord? {
        self.section.uploads[id]
    }

    /// Every upload.
    var records: [UploadRecord] {
        Array(self.section.uploads.values)
    }

    /// Gives upload `id` to the video `videoID` (a legacy ticket's bytes becoming a video).
    func assign(_ id: String, toVideo videoID: String) {
        self.section.uploads[id]?.videoID = videoID
    }

    /// Records why the bytes of upload `id` will not arrive; `false` when there is no such upload.
    func recordFailure(_ id: String, _ reason: String) -> Bool {
        guard self.section.uploads[id] != nil else { return false }
        self.section.uploads[id]?.failure = reason
        return true
    }

    /// Removes an upload's record and bytes.
    func remove(_ id: String) {
        self.section.uploads.removeValue(forKey: id)
        self.folder.removeUpload(id)
    }

    /// Where upload `id`'s bytes are.
    nonisolated func path(of id: String) -> String {
        self.folder.uploadPath(id)
    }

    /// The SHA-256 of upload `id`'s stored bytes, for the sandbox's inspection endpoints; read off the actor,
    /// so a large file does not hold up every other request.
    nonisolated func storedSHA256(_ id: String) async throws -> String {
        guard let upload = await self.record(id) else { throw APIError.notFound("upload") }
        return try await FileDigest.sha256Hex(path: self.path(of: id), length: upload.offset)
    }

    /// How many uploads there are and how many bytes they hold, for `GET /sandbox/stats`.
    var counts: (uploads: Int, storedBytes: Int64) {
        (self.section.uploads.count, self.section.uploads.values.reduce(0) { $0 + $1.offset })
    }

    // MARK: Writing

    /// Sets the size of an upload whose size was not known (``UploadRecord/lengthDeferred``), within the
    /// largest upload and the room its observers leave.
    func declareLength(_ id: String, _ length: Int64) throws -> UploadRecord {
        guard var upload = self.section.uploads[id] else { throw UploadFailure(.notFound, "No such upload.") }
        guard upload.lengthDeferred == true else { return upload }
        guard length > 0 else { throw UploadFailure(.badRequest, "The file is empty.") }
        guard length <= self.configuration.maxUploadSize else {
            throw UploadFailure(
                .contentTooLarge, "The file exceeds the largest upload, \(self.configuration.maxUploadSize) bytes.")
        }
        if let room = self.observers.compactMap({ $0.observer?.room(forDeclaring: upload) }).min(), length > room {
            throw UploadFailure(.contentTooLarge, "The file needs \(length) bytes but the account has \(room) free.")
        }
        upload.length = length
        upload.lengthDeferred = nil
        self.section.uploads[id] = upload
        for observer in self.observers { observer.observer?.uploadDeclaredLength(upload) }
        self.index.persist()
        return upload
    }

    /// Takes the write lease on an upload. At most one request writes to an upload at a time;
    /// another gets 423 Locked. With `expectedOffset` (tus) a mismatch is 409 Conflict.
    func beginWrite(_ id: String, token: String?, expectedOffset: Int64?) throws -> UploadRecord {
        let upload = try self.upload(id, token: token)
        guard !self.writers.contains(id) else { throw Self.locked }
        if let expectedOffset, expectedOffset != upload.offset {
            throw UploadFailure(
                .conflict,
                "Upload-Offset \(expectedOffset) does not match the stored offset \(upload.offset).",
                headers: [.uploadOffset: String(upload.offset)]
            )
        }
        self.writers.insert(id)
        return upload
    }

    /// Records bytes that reached the file while a request is still writing, so `HEAD` sees them.
    func progress(_ id: String, offset: Int64) {
        guard var upload = self.section.uploads[id] else { return }
        upload.offset = max(upload.offset, min(offset, upload.length))
        self.section.uploads[id] = upload
        self.markCompleteIfDone(id)
    }

    /// Ends the write lease with the final contiguous offset and saves the index. `resetTo`
    /// discards bytes (a checksum mismatch): the offset goes back to that value.
    @discardableResult
    func endWrite(_ id: String, offset: Int64, resetTo: Int64? = nil) -> UploadRecord? {
        self.writers.remove(id)
        guard var upload = self.section.uploads[id] else { return nil }
        if let resetTo {
            upload.offset = resetTo
        } else {
            upload.offset = max(upload.offset, min(offset, upload.length))
        }
        self.section.uploads[id] = upload
        self.markCompleteIfDone(id)
        self.index.persist()
        return self.section.uploads[id]
    }

    /// tus termination: removes the upload and its bytes. What it belonged to keeps existing, without bytes.
    func terminate(_ id: String, token: String?) throws {
        _ = try self.upload(id, token: token)
        guard !self.writers.contains(id) else { throw Self.locked }
        self.remove(id)
        self.index.persist()
    }

    /// When the last byte is in: stamps the upload and tells the observers.
    private func markCompleteIfDone(_ id: String) {
        guard var upload = self.section.uploads[id], upload.isComplete, upload.completedAt == nil else { return }
        upload.completedAt = Date()
        self.section.uploads[id] = upload
        for observer in self.observers { observer.observer?.uploadCompleted(upload) }
    }

    private static let locked = UploadFailure(
        .init(code: 423, reasonPhrase: "Locked"), "Another request is writing to this upload.")

    private struct WeakObserver {
        weak var observer: (any UploadObserver)?
    }
}
