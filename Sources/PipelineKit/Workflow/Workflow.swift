import Foundation
public import StageKit

/// A checked workflow (format version 1): which files to take and which stages to run on each.
public struct Workflow: Sendable {
    /// The only format version this engine reads.
    public static let formatVersion = 1

    /// The file it was read from, for messages.
    public var file: String
    /// Its name: the ledger keeps the workflow's items under it, so a rerun finds their checkpoints.
    public var name: String
    /// One line for people.
    public var description: String?
    /// Where the input files are.
    public var inputs: InputSelection?
    /// `vars.*`: values and templates, resolved per item.
    public var vars: [String: JSONValue]
    /// The stages, in the order they are written; each waits for the stages its `after` names, or for the one
    /// before it (``graph``).
    public var stages: [StageSpec]
    /// Stages `pipeline cancel` runs for an item to undo its remote side effects (delete the video,
    /// terminate the upload); they may use the outputs of any stage that finished.
    public var onCancel: [StageSpec]
    /// Plugin libraries to load before the stages are checked.
    public var plugins: [String]
    /// Where `pipeline run` announces the batch's events.
    public var notify: [NotifySpec]
    /// The stage types the workflow was checked against, whose declarations ``streaming`` reads.
    let stageTypes: StageRegistry
    /// Where each value of the file is, for messages.
    package var sourceMap: SourceMap

    /// Which stages stream which export (`"stream": true`), as the stage types the workflow was checked against
    /// declare it: derived from ``stages`` whenever it is read, so that the two cannot go out of step.
    public var streaming: StreamPlan { StreamPlan(stages, registry: stageTypes) }

    /// Which stages each stage waits for.
    public var graph: StageGraph { StageGraph(stages) }

    /// Every `env.*` variable the workflow reads; their values are secrets.
    public var environmentNames: Set<String> {
        environmentReferences(\.references)
    }

    /// The `env.*` variables the workflow needs (read without a `??` default) that `environment` lacks.
    public func missingEnvironment(in environment: [String: String]) -> [String] {
        environmentReferences(\.requiredReferences).filter { environment[$0] == nil }.sorted()
    }

    private func environmentReferences(_ references: (Expression) -> [Reference]) -> Set<String> {
        var names: Set<String> = []
        var templates: [JSONValue] = Array(vars.values)
        templates += notify.map { .string($0.url) }
        for stage in stages + onCancel {
            templates.append(stage.with)
            if let condition = stage.condition { templates.append(.string(condition)) }
        }
        for value in templates {
            value.forEachString { string in
                guard let template = try? Template(parsing: string) else { return }
                for expression in template.expressions {
                    for reference in references(expression) where reference.root == "env" {
                        if let name = reference.member { names.insert(name) }
                    }
                }
            }
        }
        return names
    }
}

/// The files a workflow runs on.
public struct InputSelection: Sendable, Hashable {
    /// A file or a folder.
    public var path: String
    /// Shell patterns for file names (e.g. `*.mp4`); empty means every file.
    public var include: [String]
    /// Shell patterns for file names to leave out.
    public var exclude: [String]
    /// Whether to descend into subfolders.
    public var recursive: Bool
    /// How a file's content is identified.
    public var fingerprint: FingerprintMethod
    /// Files outside these limits are skipped before any stage runs.
    public var limits: InputLimits
    /// A CSV or JSON file of per-file metadata (`${input.meta.*}`), relative to the workflow file.
    public var manifest: String?
    /// What happens to a file named as media that FFmpeg cannot read or that decodes short.
    public var damaged: DamagedInputPolicy

    /// Creates a selection.
    public init(
        path: String, include: [String] = [], exclude: [String] = [], recursive: Bool = false,
        fingerprint: FingerprintMethod = .sampled, limits: InputLimits = InputLimits(), manifest: String? = nil,
        damaged: DamagedInputPolicy = .default
    ) {
        self.path = path
        self.include = include
        self.exclude = exclude
        self.recursive = recursive
        self.fingerprint = fingerprint
        self.limits = limits
        self.manifest = manifest
        self.damaged = damaged
    }
}

/// One stage of a workflow as written.
public struct StageSpec: Sendable {
    /// Its id, unique in the workflow; outputs are `${id.name}`.
    public var id: String
    /// The stage type.
    public var uses: String
    /// The options, still with their `${...}` templates.
    public var with: JSONValue
    /// How often and how patiently to retry.
    public var retry: RetryPolicy
    /// The longest one attempt may take.
    public var timeout: TimeSpan?
    /// The `if` condition as written (a template); the stage is skipped when it is false.
    public var condition: String?
    /// Where it is in the file (`stages[3]`).
    public var path: JSONPath
    /// An earlier stage that renews credentials: run again when this stage's credentials expire (401).
    public var refreshWith: String?
    /// Whether the stage's outputs are secrets (a token from a command): never stored, never logged,
    /// and the stage runs again whenever a run needs them.
    public var isSecret: Bool
    /// The stages it waits for, as `after` names them; nil when it waits for the stage before it.
    public var after: [String]?
    /// Whether it follows the export it waits for while the export writes it (`"stream": true`): it starts when
    /// the export starts (``StreamPlan``).
    public var stream = false
}

extension JSONValue {
    /// Calls `body` for every string in the tree.
    func forEachString(_ body: (String) -> Void) {
        switch self {
        case .string(let string): body(string)
        case .array(let elements): elements.forEach { $0.forEachString(body) }
        case .object(let members): members.values.forEach { $0.forEachString(body) }
        default: break
        }
    }
}
