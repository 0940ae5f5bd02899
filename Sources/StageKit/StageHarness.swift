public import Foundation
import Logging
import NIOConcurrencyHelpers

/// Runs one stage outside a workflow, as a test or a stage author's check does: options in, outputs and
/// the last checkpoint out, with a checkpoint handed in as a crashed run would have left it. Options get
/// their declared defaults filled in, exactly as in a workflow.
public struct StageHarness: Sendable {
    /// The folder that holds the stage's scratch folder.
    public let stateFolder: URL

    /// Creates a harness that keeps the stage's scratch files in `stateFolder`.
    public init(stateFolder: URL) {
        self.stateFolder = stateFolder
    }

    /// What a stage run left.
    public struct Run: Sendable {
        /// The outputs, or the error the stage threw.
        public var outputs: Swift.Result<JSONValue, any Error>
        /// The last checkpoint the stage saved (or the one handed in, if it saved none).
        public var checkpoint: JSONValue?
        /// The idempotency keys the stage asked for, by name.
        public var idempotencyKeys: [String: String]
        /// Progress reports, in order.
        public var progress: [StageProgress]
        /// The retries a stage that retries itself made, in order.
        public var retries: [StageRetry]
    }

    /// Runs `stage` with resolved `options` for `item` (default: a placeholder item), starting from
    /// `checkpoint` as if an earlier run had saved it, and with `previousOutputs` as the stage's outputs for
    /// the item's previous version; a stage that retries itself follows `retry`.
    public func run<S: Stage>(
        _ stage: S.Type, options: JSONValue, item: InputItem? = nil, checkpoint: JSONValue? = nil,
        previousOutputs: JSONValue? = nil, services: ServiceValues = ServiceValues(), retry: RetryPolicy = .standard
    ) async -> Run {
        let item = item ?? InputItem(path: "/dev/null", relativePath: "item", size: 0, modified: 0)
        let journal = MemoryJournal(checkpoint: checkpoint)
        let context = StageContext(
            stageID: "stage", stageType: S.stageType, item: item, attempt: 1,
            logger: Logger(label: "harness.\(S.stageType)"),
            scratchFolder: stateFolder.appendingPathComponent("scratch").appendingPathComponent(S.stageType),
            services: services, previousOutputs: previousOutputs, savedCheckpoint: checkpoint, checkpointer: journal,
            progress: { journal.append($0) }, retryPolicy: retry, retrying: { journal.append($0) })
        let outputs: Swift.Result<JSONValue, any Error>
        do {
            outputs = .success(try await S.run(json: options, context: context))
        } catch {
            outputs = .failure(error)
        }
        let state = journal.state
        return Run(
            outputs: outputs, checkpoint: state.checkpoint, idempotencyKeys: state.keys, progress: state.progress,
            retries: state.retries)
    }
}

/// The harness's checkpoints, kept in memory.
private final class MemoryJournal: StageCheckpointing {
    struct State {
        var checkpoint: JSONValue?
        var keys: [String: String] = [:]
        var progress: [StageProgress] = []
        var retries: [StageRetry] = []
    }

    private let storage: NIOLockedValueBox<State>

    init(checkpoint: JSONValue?) {
        storage = NIOLockedValueBox(State(checkpoint: checkpoint))
    }

    var state: State { storage.withLockedValue { $0 } }

    func append(_ progress: StageProgress) {
        storage.withLockedValue { $0.progress.append(progress) }
    }

    func append(_ retry: StageRetry) {
        storage.withLockedValue { $0.retries.append(retry) }
    }

    func saveCheckpoint(_ value: JSONValue) async throws {
        storage.withLockedValue { $0.checkpoint = value }
    }

    func idempotencyKey(_ name: String) async throws -> String {
        storage.withLockedValue { state in
            if let key = state.keys[name] { return key }
            let key = UUID().uuidString.lowercased()
            state.keys[name] = key
            return key
        }
    }
}
