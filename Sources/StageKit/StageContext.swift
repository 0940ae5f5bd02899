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
    /// The stage's retry policy (the workflow's `retry`): the engine follows it between attempts, and a stage
    /// that retries itself (``Stage/retriesItself``) follows it for its own requests.
    public let retryPolicy: RetryPolicy
    /// A logger whose lines reach the run's output (secrets redacted).
    public let logger: Logger
    /// A folder for the stage's temporary files, kept across attempts and resumes, inside the state folder;
    /// it does not exist until the stage creates it.
    public let scratchFolder: URL
    /// Shared resources.
    public let services: ServiceValues
    /// This stage's outputs from the item's latest earlier version (the same file before its content
    /// changed) that finished the stage; nil when none did (an item's first version). A stage that owns a
    /// remote object uses it to update that object instead of creating a second one.
    public let previousOutputs: JSONValue?
    /// The checkpoint saved by an earlier attempt or run with the same options, if any.
    package let savedCheckpoint: JSONValue?
    package let checkpointer: any StageCheckpointing
    let progressHandler: @Sendable (StageProgress) -> Void
    let retryHandler: @Sendable (StageRetry) -> Void

    /// Creates a context; the engine does this for every attempt. Hosts that run stages elsewhere (a
    /// plugin bridge, the harness) provide their own checkpointing and progress.
    package init(
        stageID: String, stageType: String, item: InputItem, attempt: Int, logger: Logger, scratchFolder: URL,
        services: ServiceValues, previousOutputs: JSONValue? = nil, savedCheckpoint: JSONValue?,
        checkpointer: any StageCheckpointing, progress: @escaping @Sendable (StageProgress) -> Void,
        retryPolicy: RetryPolicy = .standard, retrying: @escaping @Sendable (StageRetry) -> Void = { _ in }
    ) {
        self.stageID = stageID
        self.stageType = stageType
        self.item = item
        self.attempt = attempt
        self.logger = logger
        self.scratchFolder = scratchFolder
        self.services = services
        self.previousOutputs = previousOutputs
        self.savedCheckpoint = savedCheckpoint
        self.checkpointer = checkpointer
        self.progressHandler = progress
        self.retryPolicy = retryPolicy
        self.retryHandler = retrying
    }

    /// Tells the run that a stage that retries itself (``Stage/retriesItself``) failed and tries again after
    /// `delay`: the run shows it as attempt `attempt` of ``retryPolicy``'s attempts.
    public func retrying(attempt: Int, after delay: Duration, because error: any Error) {
        retryHandler(StageRetry(attempt: attempt, delay: delay, error: error))
    }

    /// The checkpoint an earlier attempt or run saved with ``checkpoint(_:)``, decoded as `type`; nil when
    /// there is none or it no longer decodes (then the stage starts over, which a stage must always be able
    /// to do).
    public func lastCheckpoint<T: Decodable>(as type: T.Type) -> T? {
        guard let savedCheckpoint else { return nil }
        do {
            return try savedCheckpoint.decode(as: T.self)
        } catch {
            logger.warning("ignoring a checkpoint that does not decode: \(error)")
            return nil
        }
    }

    /// Persists the stage's resume data now (durably, before returning). After a crash, the next run hands
    /// it back through ``lastCheckpoint(as:)``. Call it after each durable step: an upload URL created, a
    /// part acknowledged.
    public func checkpoint(_ value: some Encodable) async throws {
        try await checkpointer.saveCheckpoint(try JSONValue(encoding: value))
    }

    /// A key that stays the same for this stage and item across retries, crashes and reruns with the same
    /// options: send it as an `Idempotency-Key` so a request repeated after a crash does not act twice. It is
    /// persisted before it is returned, so record it before the request goes out.
    public func idempotencyKey(_ name: String) async throws -> String {
        try await checkpointer.idempotencyKey(name)
    }

    /// Reports progress (bytes sent, seconds encoded); cheap enough to call for every chunk.
    public func reportProgress(_ progress: StageProgress) {
        progressHandler(progress)
    }
}

/// Where a stage's checkpoints and idempotency keys go: the engine's journal, or a host's bridge.
package protocol StageCheckpointing: Sendable {
    /// Persists the stage's resume data durably before returning.
    func saveCheckpoint(_ value: JSONValue) async throws
    /// The key for `name`, created and persisted on first use.
    func idempotencyKey(_ name: String) async throws -> String
}

/// A retry a stage made by itself: the failed attempt (from 1), the wait before the next one, and why.
public struct StageRetry: Sendable {
    /// The attempt that failed, from 1.
    public var attempt: Int
    /// The wait before the next attempt.
    public var delay: Duration
    /// Why it failed.
    public var error: any Error
}
