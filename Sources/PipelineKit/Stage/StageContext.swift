public import Foundation
public import Logging

/// A key for a shared resource that stages find in ``StageContext/services`` (an HTTP client, a token source).
public protocol ServiceKey {
    /// The resource's type.
    associatedtype Value: Sendable
}

/// Shared resources handed to every stage, looked up by key.
public struct ServiceValues: Sendable {
    private var storage: [ObjectIdentifier: any Sendable] = [:]

    /// No resources.
    public init() {}

    /// The resource for a key, if one was provided.
    public subscript<Key: ServiceKey>(_ key: Key.Type) -> Key.Value? {
        get { storage[ObjectIdentifier(key)] as? Key.Value }
        set { storage[ObjectIdentifier(key)] = newValue }
    }
}

/// Everything a stage's `run` gets besides its options.
public struct StageContext: Sendable {
    /// The stage id in the workflow.
    public let stageID: String
    /// The stage type.
    public let stageType: String
    /// The input file this run of the stage is for.
    public let item: InputItem
    /// The attempt within this run, from 1.
    public let attempt: Int
    /// A logger whose lines reach the run's output (secrets redacted).
    public let logger: Logger
    /// A folder for the stage's temporary files, kept across attempts and resumes, inside the state folder;
    /// it does not exist until the stage creates it.
    public let scratchFolder: URL
    /// Shared resources.
    public let services: ServiceValues
    /// The resume data checkpointed by an earlier attempt or run with the same options, if any.
    public let resumeData: JSONValue?
    let journal: StageJournal
    let progressHandler: @Sendable (StageProgress) -> Void

    /// The resume data decoded as `type`; nil when there is none or it no longer decodes (then the stage
    /// starts over, which a stage must always be able to do).
    public func resumeData<T: Decodable>(as type: T.Type) -> T? {
        guard let resumeData else { return nil }
        do {
            return try resumeData.decode(as: T.self)
        } catch {
            logger.warning("ignoring resume data that does not decode: \(error)")
            return nil
        }
    }

    /// Persists the stage's resume data now (atomically, fsynced). After a crash, the next run hands it back
    /// in ``resumeData``. Call it after each durable step: an upload URL created, a part acknowledged.
    public func checkpoint(_ value: some Encodable) async throws {
        try await journal.saveResume(try JSONValue(encoding: value))
    }

    /// A key that stays the same for this stage and item across retries, crashes and reruns with the same
    /// options: send it as an `Idempotency-Key` so a request repeated after a crash does not act twice. It is
    /// persisted before it is returned, so record it before the request goes out.
    public func idempotencyKey(_ name: String) async throws -> String {
        try await journal.intent(name)
    }

    /// Reports progress (bytes sent, seconds encoded); cheap enough to call for every chunk.
    public func reportProgress(_ progress: StageProgress) {
        progressHandler(progress)
    }
}

/// Writes one stage's checkpoint as the stage works.
actor StageJournal {
    private var record: StageRecord
    private let store: CheckpointStore
    private let run: String
    private let item: String

    init(record: StageRecord, store: CheckpointStore, run: String, item: String) {
        self.record = record
        self.store = store
        self.run = run
        self.item = item
    }

    /// The record as it is now.
    var current: StageRecord { record }

    func update(_ change: (inout StageRecord) -> Void) throws {
        change(&record)
        try store.save(record, run: run, item: item)
    }

    func saveResume(_ value: JSONValue) throws {
        try update { $0.resume = value }
    }

    func intent(_ name: String) throws -> String {
        if let key = record.intents[name] { return key }
        let key = UUID().uuidString.lowercased()
        try update { $0.intents[name] = key }
        return key
    }
}
