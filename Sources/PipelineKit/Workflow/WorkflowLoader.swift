public import Foundation
import StageKit

/// Reads a workflow file and checks all of it before anything runs: structure, stage types, options,
/// and every `${...}` reference. It reports every problem at once.
public struct WorkflowLoader: Sendable {
    /// The stage types workflows may use.
    public var registry: StageRegistry

    /// Creates a loader for a registry.
    public init(registry: StageRegistry) {
        self.registry = registry
    }

    static let reservedRoots = ["input", "vars", "env", "previous"]

    /// Reads a workflow file.
    /// - Parameter varOverrides: `--var KEY=VALUE` values; each must name a declared var.
    public func load(contentsOf url: URL, varOverrides: [String: String] = [:]) throws(WorkflowError) -> Workflow {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw WorkflowError(diagnostics: [
                Diagnostic(
                    file: url.path, location: nil, path: .root,
                    message: "cannot read the workflow file: \(Self.unreadableReason(url, error))")
            ])
        }
        return try load(data: data, file: url.path, varOverrides: varOverrides)
    }

    /// Why the workflow file at `url` could not be read, in the words a user can act on: a workflow name
    /// given where its file belongs (`pipeline status archive`) reads as "no such file".
    private static func unreadableReason(_ url: URL, _ error: any Error) -> String {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) else {
            return "no such file (commands take the workflow's JSON file, e.g. Workflows/quickstart.json)"
        }
        if isFolder.boolValue { return "it is a folder, not a JSON file" }
        return (error as NSError).code == NSFileReadNoPermissionError ? "permission denied" : "it cannot be read"
    }

    /// The plugin paths a workflow names, read before its stages are checked (they may register stage types);
    /// a relative path is relative to the folder of `file`, the workflow file, wherever the command runs.
    public static func pluginPaths(in data: Data, file: URL) -> [String] {
        guard let (value, _) = try? JSONParser.parse(data), let plugins = value["plugins"]?.arrayValue else {
            return []
        }
        return plugins.compactMap(\.stringValue).map { plugin in
            plugin.hasPrefix("/")
                ? plugin : file.deletingLastPathComponent().appendingPathComponent(plugin).standardizedFileURL.path
        }
    }

    /// Reads a workflow from bytes.
    public func load(data: Data, file: String, varOverrides: [String: String] = [:]) throws(WorkflowError) -> Workflow {
        let parsed: (value: JSONValue, sourceMap: SourceMap)
        do {
            parsed = try JSONParser.parse(data)
        } catch {
            throw WorkflowError(diagnostics: [
                Diagnostic(
                    file: file, location: error.location, path: error.path, message: "invalid JSON: \(error.message)")
            ])
        }
        var reader = WorkflowReader(file: file, root: parsed.value, sourceMap: parsed.sourceMap, registry: registry)
        let workflow = reader.read(varOverrides: varOverrides)
        let diagnostics = reader.log.sorted
        guard diagnostics.isEmpty, let workflow else {
            throw WorkflowError(diagnostics: diagnostics)
        }
        return workflow
    }
}

/// One pass over a parsed workflow, collecting diagnostics as it goes.
struct WorkflowReader {
    let file: String
    let root: JSONValue
    let registry: StageRegistry
    var log: DiagnosticLog

    init(file: String, root: JSONValue, sourceMap: SourceMap, registry: StageRegistry) {
        self.file = file
        self.root = root
        self.registry = registry
        self.log = DiagnosticLog(file: file, sourceMap: sourceMap)
    }

    mutating func read(varOverrides: [String: String]) -> Workflow? {
        guard case .object(let members) = root else {
            log.error(.root, "a workflow must be a JSON object, found \(root.kindName)")
            return nil
        }
        checkKeys(members, of: WorkflowGrammar.workflow, at: .root)

        switch members["version"] {
        case nil:
            log.error(.root, "missing \"version\": write \"version\": \(Workflow.formatVersion)")
        case .int(Workflow.formatVersion):
            break
        case .int(let other):
            log.error(
                JSONPath.root.appending("version"),
                "unsupported workflow version \(other); this pipeline reads version \(Workflow.formatVersion)")
        case let other?:
            log.error(
                JSONPath.root.appending("version"),
                "expected the integer \(Workflow.formatVersion), found \(other.kindName)")
        }

        let name = readName(members["name"])
        let description = string(members["description"], at: JSONPath.root.appending("description"))
        let inputs = readInputs(members["inputs"])
        let vars = readVars(members["vars"], overrides: varOverrides)
        let defaults = readDefaults(members["defaults"])
        let plugins = readPlugins(members["plugins"])
        let notify = readNotify(members["notify"])
        var seen: [String: JSONPath] = [:]
        let stages = readStages(members["stages"], key: "stages", defaults: defaults, seen: &seen)
        let onCancel =
            members["onCancel"] == nil
            ? [] : readStages(members["onCancel"], key: "onCancel", defaults: defaults, seen: &seen)

        // onCancel stages come after every stage: they may use any stage's outputs.
        checkReferences(vars: vars, stages: stages, onCancel: onCancel)
        let streaming = StreamPlan(stages, registry: registry)
        checkStreams(stages, onCancel: onCancel, inputs: inputs, plan: streaming)

        return Workflow(
            file: file, name: name, description: description, inputs: inputs, vars: vars, stages: stages,
            onCancel: onCancel, plugins: plugins, notify: notify, stageTypes: registry, sourceMap: log.sourceMap)
    }

    // MARK: Scalars

    mutating func checkKeys(
        _ members: [String: JSONValue], of section: WorkflowGrammar.Section, at path: JSONPath
    ) {
        let allowed = section.names
        for key in members.keys.sorted() where !allowed.contains(key) {
            log.keyError(
                path.appending(key),
                "unknown \(section.keyName) \"\(key)\"" + Suggestion.phrase(for: key, among: allowed))
        }
    }

    mutating func string(_ value: JSONValue?, at path: JSONPath, required: Bool = false) -> String? {
        switch value {
        case nil:
            if required {
                var parent = path
                let name = parent.components.popLast().map { if case .key(let key) = $0 { key } else { "" } } ?? ""
                log.error(parent, "missing required \"\(name)\"")
            }
            return nil
        case .string(let text): return text
        case let other?:
            log.error(path, "expected a string, found \(other.kindName)")
            return nil
        }
    }

    mutating func bool(_ value: JSONValue?, at path: JSONPath) -> Bool? {
        guard let value else { return nil }
        guard let flag = value.boolValue else {
            log.error(path, "expected true or false, found \(value.kindName)")
            return nil
        }
        return flag
    }

    mutating func duration(_ value: JSONValue?, at path: JSONPath) -> TimeSpan? {
        guard let value else { return nil }
        guard let span = TimeSpan(json: value), span.seconds > 0 else {
            log.error(
                path, "expected a positive duration (seconds, or a string such as \"30s\"), found \(value.serialized())"
            )
            return nil
        }
        return span
    }
}

/// Rules for the names a workflow gives: stage ids and var names, and the name of a workflow that gives none.
enum WorkflowNames {
    /// Whether `name` can be a stage id or var name: a letter or `_`, then letters, digits, `_`, `-`.
    static func isIdentifier(_ name: String) -> Bool {
        guard let first = name.first, first.isASCII, first.isLetter || first == "_", name.count <= 100 else {
            return false
        }
        return name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }
    }

    /// A name made of any text (a workflow file's name): letters, digits, `.`, `_` and `-` only.
    static func sanitize(_ text: String) -> String {
        let safe = String(text.map { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) ? $0 : "_" })
        let trimmed = safe.drop { $0 == "." }
        return trimmed.isEmpty ? "workflow" : String(trimmed.prefix(100))
    }
}
