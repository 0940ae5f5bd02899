public import Foundation
import Logging
import Synchronization

/// Runs one stage outside a workflow, as a test or a plugin author's check does: options in, outputs and
/// the last checkpoint out, with resume data handed in as a crashed run would have left it.
public struct StageHarness: Sendable {
    /// Where the harness keeps the stage's checkpoint and scratch folder.
    public let stateFolder: URL

    /// Creates a harness that keeps its state in `stateFolder`.
    public init(stateFolder: URL) {
        self.stateFolder = stateFolder
    }

    /// What a stage run left.
    public struct Run: Sendable {
        /// The outputs, or the error the stage threw.
        public var outputs: Swift.Result<JSONValue, any Error>
        /// The last resume data the stage checkpointed.
        public var checkpoint: JSONValue?
        /// Progress reports, in order.
        public var progress: [StageProgress]
    }

    /// Runs `stage` with resolved `options` for `item` (default: a placeholder item).
    public func run<S: Stage>(
        _ stage: S.Type, options: JSONValue, item: InputItem? = nil, resume: JSONValue? = nil,
        services: ServiceValues = ServiceValues()
    ) async -> Run {
        let item = item ?? InputItem(path: "/dev/null", relativePath: "item", size: 0, modified: 0)
        let store = CheckpointStore(folder: stateFolder)
        var record = StageRecord(stage: "stage", uses: S.type, status: .running, optionsHash: "")
        record.resume = resume
        let journal = StageJournal(record: record, store: store, run: "harness", item: item.stateKey)
        let reports = ProgressLog()
        let context = StageContext(
            stageID: "stage", stageType: S.type, item: item, attempt: 1, logger: Logger(label: "harness.\(S.type)"),
            scratchFolder: store.scratchFolder(run: "harness", item: item.stateKey, stage: "stage"),
            services: services, resumeData: resume, checkpointer: journal,
            progress: { reports.append($0) })
        let outputs: Swift.Result<JSONValue, any Error>
        do {
            outputs = .success(try await StageDescriptor(stage, source: .compiledIn).run(options: options, context: context))
        } catch {
            outputs = .failure(error)
        }
        return Run(outputs: outputs, checkpoint: journal.current.resume, progress: reports.all)
    }
}

private final class ProgressLog: Sendable {
    private let reports = Mutex<[StageProgress]>([])
    func append(_ progress: StageProgress) { reports.withLock { $0.append(progress) } }
    var all: [StageProgress] { reports.withLock { $0 } }
}
