public import Foundation
public import Logging
import Synchronization

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
    package let checkpointer: any StageCheckpointing
    let progressHandler: @Sendable (StageProgress) -> Void

    /// Creates a context; the engine does this for every attempt. Hosts that run stages elsewhere (a
    /// plugin bridge, a test harness) provide their own checkpointing and progress.
    public init(
        stageID: String, stageType: String, item: InputItem, attempt: Int, logger: Logger, scratchFolder: URL,
        services: ServiceValues, resumeData: JSONValue?, checkpointer: any StageCheckpointing,
        progress: @escaping @Sendable (StageProgress) -> Void
    ) {
        self.stageID = stageID
        self.stageType = stageType
        self.item = item
        self.attempt = attempt
        self.logger = logger
        self.scratchFolder = scratchFolder
        self.services = services
        self.resumeData = resumeData
        self.checkpointer = checkpointer
        self.progressHandler = progress
    }

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
        try checkpointer.saveResume(try JSONValue(encoding: value))
    }

    /// A key that stays the same for this stage and item across retries, crashes and reruns with the same
    /// options: send it as an `Idempotency-Key` so a request repeated after a crash does not act twice. It is
    /// persisted before it is returned, so record it before the request goes out.
    public func idempotencyKey(_ name: String) async throws -> String {
        try checkpointer.intent(name)
    }

    /// Reports progress (bytes sent, seconds encoded); cheap enough to call for every chunk.
    public func reportProgress(_ progress: StageProgress) {
        progressHandler(progress)
    }
}

/// Where a stage's resume data and idempotency keys go: the engine's journal, or a host's bridge.
public protocol StageCheckpointing: Sendable {
    /// Persists resume data durably before returning.
    func saveResume(_ value: JSONValue) throws
    /// The key for `name`, created and persisted on first use.
    func intent(_ name: String) throws -> String
}

/// Writes one stage's checkpoint as the stage works (each change atomically, before returning).
final class StageJournal: StageCheckpointing {
    private let record: Mutex<StageRecord>
    private let store: CheckpointStore
    private let run: String
    private let item: String

    init(record: StageRecord, store: CheckpointStore, run: String, item: String) {
        self.record = Mutex(record)
        self.store = store
        self.run = run
        self.item = item
    }

    /// The record as it is now.
    var current: StageRecord { record.withLock { $0 } }

    func update(_ change: (inout StageRecord) -> Void) throws {
        try record.withLock { record in
            change(&record)
            try store.save(record, run: run, item: item)
        }
    }

    func saveResume(_ value: JSONValue) throws {
        try update { $0.resume = value }
    }

    func intent(_ name: String) throws -> String {
        if let key = current.intents[name] { return key }
        let key = UUID().uuidString.lowercased()
        try update { $0.intents[name] = key }
        return current.intents[name] ?? key
    }
}
