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
            let reason = (error as NSError).code == NSFileReadNoSuchFileError ? "no such file" : "cannot be read"
            throw WorkflowError(diagnostics: [
                Diagnostic(file: url.path, location: nil, path: .root, message: "the workflow file \(reason)")
            ])
        }
        return try load(data: data, file: url.path, varOverrides: varOverrides)
    }

    /// The plugin paths a workflow names, read before its stages are checked (they may register stage types).
    public static func pluginPaths(in data: Data) -> [String] {
        guard let (value, _) = try? JSONParser.parse(data), let plugins = value["plugins"]?.arrayValue else {
            return []
        }
        return plugins.compactMap(\.stringValue)
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
        var reader = Reader(file: file, root: parsed.value, sourceMap: parsed.sourceMap, registry: registry)
        let workflow = reader.read(varOverrides: varOverrides)
        let diagnostics = reader.log.sorted
        guard diagnostics.isEmpty, let workflow else {
            throw WorkflowError(diagnostics: diagnostics)
        }
        return workflow
    }
}

/// One pass over a parsed workflow, collecting diagnostics as it goes.
private struct Reader {
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
        var seen: [String: JSONPath] = [:]
        let stages = readStages(members["stages"], key: "stages", defaults: defaults, seen: &seen)
        let onCancel =
            members["onCancel"] == nil
            ? [] : readStages(members["onCancel"], key: "onCancel", defaults: defaults, seen: &seen)

        // onCancel stages come after every stage: they may use any stage's outputs.
        checkReferences(vars: vars, stages: stages + onCancel)

        return Workflow(
            file: file, name: name, description: description, inputs: inputs, vars: vars, stages: stages,
            onCancel: onCancel, plugins: plugins, sourceMap: log.sourceMap)
    }

    // MARK: Sections

    private mutating func readName(_ value: JSONValue?) -> String {
        let path = JSONPath.root.appending("name")
        let fallback = URL(fileURLWithPath: file).deletingPathExtension().lastPathComponent
        guard let value else { return StateNames.sanitize(fallback) }
        guard let name = value.stringValue else {
            log.error(path, "expected a string, found \(value.kindName)")
            return fallback
        }
        if name.isEmpty || name.count > 100
            || !name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) })
            || name.hasPrefix(".")
        {
            log.error(
                path,
                "a workflow name must be 1–100 characters of letters, digits, '.', '_' or '-' (it names the state folder)"
            )
        }
        return name
    }

    private mutating func readInputs(_ value: JSONValue?) -> InputSelection? {
        guard let value else { return nil }
        let path = JSONPath.root.appending("inputs")
        guard case .object(let members) = value else {
            log.error(path, "expected an object with \"path\", found \(value.kindName)")
            return nil
        }
        checkKeys(members, of: WorkflowGrammar.inputs, at: path)
        guard let inputPath = string(members["path"], at: path.appending("path"), required: true) else { return nil }
        if inputPath.isEmpty { log.error(path.appending("path"), "the input path is empty") }
        var method = FingerprintMethod.sampled
        if let value = members["fingerprint"] {
            if let text = value.stringValue, let chosen = FingerprintMethod(rawValue: text) {
                method = chosen
            } else {
                log.error(
                    path.appending("fingerprint"), "expected \"sampled\" or \"full\", found \(value.serialized())")
            }
        }
        return InputSelection(
            path: inputPath,
            include: patterns(members["include"], at: path.appending("include")),
            exclude: patterns(members["exclude"], at: path.appending("exclude")),
            recursive: bool(members["recursive"], at: path.appending("recursive")) ?? false,
            fingerprint: method, limits: readLimits(members["limits"], at: path.appending("limits")),
            manifest: string(members["manifest"], at: path.appending("manifest"), required: false))
    }

    private mutating func readLimits(_ value: JSONValue?, at path: JSONPath) -> InputLimits {
        guard let value else { return InputLimits() }
        guard case .object(let members) = value else {
            log.error(path, "expected an object such as {\"maxSize\": \"2GiB\"}, found \(value.kindName)")
            return InputLimits()
        }
        checkKeys(members, of: WorkflowGrammar.limits, at: path)
        func size(_ name: String) -> Int64? {
            guard let member = members[name] else { return nil }
            guard let count = ByteCount(json: member) else {
                log.error(path.appending(name), "expected \(ByteCount.expected), found \(member.serialized())")
                return nil
            }
            return count.bytes
        }
        func seconds(_ name: String) -> Double? {
            duration(members[name], at: path.appending(name))?.seconds
        }
        let limits = InputLimits(
            minSize: size("minSize"), maxSize: size("maxSize"), minDuration: seconds("minDuration"),
            maxDuration: seconds("maxDuration"),
            containers: patterns(members["containers"], at: path.appending("containers")),
            videoCodecs: patterns(members["videoCodecs"], at: path.appending("videoCodecs")))
        if let low = limits.minSize, let high = limits.maxSize, low > high {
            log.error(path, "minSize (\(ByteCount(low))) is larger than maxSize (\(ByteCount(high)))")
        }
        if let low = limits.minDuration, let high = limits.maxDuration, low > high {
            log.error(
                path, "minDuration (\(TimeSpan(seconds: low))) is longer than maxDuration (\(TimeSpan(seconds: high)))")
        }
        return limits
    }

    private mutating func patterns(_ value: JSONValue?, at path: JSONPath) -> [String] {
        switch value {
        case nil: return []
        case .string(let pattern): return [pattern]
        case .array(let elements):
            return elements.enumerated().compactMap { index, element in
                string(element, at: path.appending(index: index))
            }
        case let other?:
            log.error(path, "expected a pattern or an array of patterns, found \(other.kindName)")
            return []
        }
    }

    private mutating func readVars(_ value: JSONValue?, overrides: [String: String]) -> [String: JSONValue] {
        let path = JSONPath.root.appending("vars")
        var vars: [String: JSONValue] = [:]
        switch value {
        case nil: break
        case .object(let members):
            for (key, member) in members {
                if !StateNames.isIdentifier(key) {
                    log.keyError(
                        path.appending(key),
                        "a var name must start with a letter or '_' and contain only letters, digits, '_' or '-'")
                }
                vars[key] = member
            }
        case let other?:
            log.error(path, "expected an object, found \(other.kindName)")
        }
        for (key, text) in overrides.sorted(by: { $0.key < $1.key }) {
            guard vars[key] != nil else {
                log.error(
                    path,
                    "--var \(key): the workflow declares no var \"\(key)\""
                        + Suggestion.phrase(for: key, among: vars.keys))
                continue
            }
            // A --var value keeps the type it reads as: numbers stay numbers.
            if let (parsed, _) = try? JSONParser.parse(text), !(parsed.objectValue != nil || parsed.arrayValue != nil) {
                vars[key] = parsed
            } else {
                vars[key] = .string(text.replacingDollarBraces())
            }
        }
        return vars
    }

    private mutating func readDefaults(_ value: JSONValue?) -> (retry: RetryPolicy, timeout: TimeSpan?) {
        let path = JSONPath.root.appending("defaults")
        guard let value else { return (.standard, nil) }
        guard case .object(let members) = value else {
            log.error(path, "expected an object, found \(value.kindName)")
            return (.standard, nil)
        }
        checkKeys(members, of: WorkflowGrammar.defaults, at: path)
        return (
            readRetry(members["retry"], at: path.appending("retry"), base: .standard),
            duration(members["timeout"], at: path.appending("timeout"))
        )
    }

    private mutating func readRetry(_ value: JSONValue?, at path: JSONPath, base: RetryPolicy) -> RetryPolicy {
        guard let value else { return base }
        guard case .object(let members) = value else {
            log.error(path, "expected an object, found \(value.kindName)")
            return base
        }
        checkKeys(members, of: WorkflowGrammar.retry, at: path)
        var policy = base
        if let attempts = members["attempts"] {
            if let count = attempts.intValue, (1...1000).contains(count) {
                policy.attempts = count
            } else {
                log.error(
                    path.appending("attempts"), "expected an integer from 1 to 1000, found \(attempts.serialized())")
            }
        }
        policy.initialDelay =
            duration(members["initialDelay"], at: path.appending("initialDelay")) ?? policy.initialDelay
        policy.maxDelay = duration(members["maxDelay"], at: path.appending("maxDelay")) ?? policy.maxDelay
        if let multiplier = members["multiplier"] {
            if let factor = multiplier.doubleValue, factor >= 1, factor <= 100 {
                policy.multiplier = factor
            } else {
                log.error(
                    path.appending("multiplier"), "expected a number from 1 to 100, found \(multiplier.serialized())")
            }
        }
        return policy
    }

    private mutating func readPlugins(_ value: JSONValue?) -> [String] {
        let path = JSONPath.root.appending("plugins")
        guard let value else { return [] }
        guard case .array(let elements) = value else {
            log.error(path, "expected an array of plugin library paths, found \(value.kindName)")
            return []
        }
        return elements.enumerated().compactMap { index, element in string(element, at: path.appending(index: index)) }
    }

    private mutating func readStages(
        _ value: JSONValue?, key: String, defaults: (retry: RetryPolicy, timeout: TimeSpan?),
        seen: inout [String: JSONPath]
    ) -> [StageSpec] {
        let path = JSONPath.root.appending(key)
        guard let value else {
            log.error(.root, "missing \"stages\": a workflow needs at least one stage")
            return []
        }
        guard case .array(let elements) = value else {
            log.error(path, "expected an array of stages, found \(value.kindName)")
            return []
        }
        if elements.isEmpty { log.error(path, "\(key) is empty: a workflow needs at least one stage") }
        var stages: [StageSpec] = []
        for (index, element) in elements.enumerated() {
            let stagePath = path.appending(index: index)
            guard case .object(let members) = element else {
                log.error(stagePath, "expected a stage object with \"id\" and \"uses\", found \(element.kindName)")
                continue
            }
            checkKeys(members, of: WorkflowGrammar.stage, at: stagePath)
            let id = string(members["id"], at: stagePath.appending("id"), required: true) ?? "#\(index)"
            if members["id"]?.stringValue != nil {
                if !StateNames.isIdentifier(id) {
                    log.error(
                        stagePath.appending("id"),
                        "a stage id must start with a letter or '_' and contain only letters, digits, '_' or '-'")
                } else if WorkflowLoader.reservedRoots.contains(id) {
                    log.error(
                        stagePath.appending("id"), "\"\(id)\" is reserved for ${\(id).…}; choose another stage id")
                } else if let first = seen[id] {
                    log.error(stagePath.appending("id"), "duplicate stage id \"\(id)\" (first used at \(first))")
                } else {
                    seen[id] = stagePath
                }
            }
            let uses = string(members["uses"], at: stagePath.appending("uses"), required: true) ?? ""
            let with = members["with"] ?? .object([:])
            if case .object = with {
            } else {
                log.error(stagePath.appending("with"), "expected an object of options, found \(with.kindName)")
            }
            if !uses.isEmpty {
                if let descriptor = registry.descriptor(for: uses) {
                    if case .object = with {
                        checkOption(with, type: .object(descriptor.optionSchema), at: stagePath.appending("with"))
                    }
                } else {
                    log.error(
                        stagePath.appending("uses"),
                        "unknown stage type \"\(uses)\""
                            + Suggestion.phrase(for: uses, among: registry.all.map(\.stageType))
                            + " (pipeline stages lists them)")
                }
            }
            let condition: String?
            switch members["if"] {
            case nil: condition = nil
            case .bool(let flag): condition = flag ? "${true}" : "${false}"
            case .string(let text):
                // `"if": "input.ext == 'mov'"` means the same as `"if": "${input.ext == 'mov'}"`.
                condition = text.contains("${") ? text : "${\(text)}"
            case let other?:
                log.error(
                    stagePath.appending("if"),
                    "expected a condition such as \"${input.ext == 'mov'}\", found \(other.kindName)")
                condition = nil
            }
            stages.append(
                StageSpec(
                    id: id, uses: uses, with: with,
                    retry: readRetry(members["retry"], at: stagePath.appending("retry"), base: defaults.retry),
                    timeout: duration(members["timeout"], at: stagePath.appending("timeout")) ?? defaults.timeout,
                    condition: condition, path: stagePath,
                    refreshWith: string(members["refreshWith"], at: stagePath.appending("refreshWith")),
                    isSecret: bool(members["secret"], at: stagePath.appending("secret")) ?? false))
        }
        return stages
    }

    // MARK: Options

    /// Checks a literal option value against its declared type; values with `${...}` are checked when
    /// they are resolved, since their type is known only then.
    private mutating func checkOption(_ value: JSONValue, type: OptionType, at path: JSONPath) {
        if case .string(let text) = value, text.contains("${"), let template = try? Template(parsing: text),
            !template.isLiteral
        {
            return
        }
        func mismatch(_ expected: String) {
            log.error(path, "expected \(expected), found \(value.kindName) \(value.serialized().prefix(40))")
        }
        switch type {
        case .any: return
        case .string: if value.stringValue == nil { mismatch("a string") }
        case .integer: if value.intValue == nil { mismatch("an integer") }
        case .number: if value.doubleValue == nil { mismatch("a number") }
        case .boolean: if value.boolValue == nil { mismatch("true or false") }
        case .size: if ByteCount(json: value) == nil { mismatch(ByteCount.expected) }
        case .duration: if TimeSpan(json: value) == nil { mismatch(TimeSpan.expected) }
        case .bitRate: if BitRate(json: value) == nil { mismatch(BitRate.expected) }
        case .oneOf(let choices):
            guard let text = value.stringValue else { return mismatch("one of \(type.displayName)") }
            if !choices.contains(text) {
                log.error(
                    path, "\"\(text)\" is not one of \(type.displayName)" + Suggestion.phrase(for: text, among: choices)
                )
            }
        case .array(let element):
            guard case .array(let elements) = value else { return mismatch("an array") }
            for (index, item) in elements.enumerated() {
                checkOption(item, type: element, at: path.appending(index: index))
            }
        case .dictionary(let valueType):
            guard case .object(let members) = value else { return mismatch("an object") }
            for (key, member) in members { checkOption(member, type: valueType, at: path.appending(key)) }
        case .object(let schema):
            guard case .object(let members) = value else { return mismatch("an object") }
            for field in schema.fields where field.isRequired && members[field.name] == nil {
                log.error(path, "missing required option \"\(field.name)\" (\(field.summary))")
            }
            for (key, member) in members {
                if let field = schema.field(named: key) {
                    checkOption(member, type: field.type, at: path.appending(key))
                } else if let additional = schema.additionalFields {
                    checkOption(member, type: additional, at: path.appending(key))
                } else {
                    log.keyError(
                        path.appending(key),
                        "unknown option \"\(key)\"" + Suggestion.phrase(for: key, among: schema.fields.map(\.name)))
                }
            }
        }
    }

    // MARK: References

    private mutating func checkReferences(vars: [String: JSONValue], stages: [StageSpec]) {
        let varsPath = JSONPath.root.appending("vars")
        var varDependencies: [String: [String]] = [:]
        for (name, value) in vars {
            for (reference, path) in references(in: value, at: varsPath.appending(name)) {
                switch reference.root {
                case "vars":
                    if let member = reference.member { varDependencies[name, default: []].append(member) }
                    checkReference(reference, at: path, stageIndex: nil, vars: vars, stages: stages)
                case "input", "env":
                    checkReference(reference, at: path, stageIndex: nil, vars: vars, stages: stages)
                default:
                    log.error(
                        path,
                        "vars can reference input, vars and env only, not \"\(reference.root)\" (vars are resolved before any stage runs)"
                    )
                }
            }
        }
        reportVarCycles(varDependencies, vars: vars)

        for (index, stage) in stages.enumerated() {
            if let refresher = stage.refreshWith, !stages.prefix(index).contains(where: { $0.id == refresher }) {
                log.error(
                    stage.path.appending("refreshWith"),
                    "refreshWith must name an earlier stage, not \"\(refresher)\""
                        + Suggestion.phrase(for: refresher, among: stages.prefix(index).map(\.id)))
            }
            var found = references(in: stage.with, at: stage.path.appending("with"))
            if let condition = stage.condition {
                found += references(in: .string(condition), at: stage.path.appending("if"))
            }
            for (reference, path) in found {
                checkReference(reference, at: path, stageIndex: index, vars: vars, stages: stages)
            }
        }
    }

    /// Every reference in the templates of a value, with the path of its string; malformed templates are reported.
    private mutating func references(in value: JSONValue, at path: JSONPath) -> [(Reference, JSONPath)] {
        switch value {
        case .string(let text):
            do {
                return try Template(parsing: text).expressions.flatMap(\.references).map { ($0, path) }
            } catch {
                log.error(path, "invalid expression in \(JSONValue.string(text).serialized()): \(error.message)")
                return []
            }
        case .array(let elements):
            return elements.enumerated().flatMap { index, element in
                references(in: element, at: path.appending(index: index))
            }
        case .object(let members):
            return members.sorted { $0.key < $1.key }.flatMap { key, member in
                references(in: member, at: path.appending(key))
            }
        default:
            return []
        }
    }

    private mutating func checkReference(
        _ reference: Reference, at path: JSONPath, stageIndex: Int?, vars: [String: JSONValue], stages: [StageSpec]
    ) {
        switch reference.root {
        case "input":
            guard let member = reference.member else { return }
            if !InputItem.factNames.contains(member) {
                log.error(
                    path,
                    "unknown input fact \"\(member)\" in ${\(reference)}; known: \(InputItem.factNames.joined(separator: ", "))"
                        + Suggestion.phrase(for: member, among: InputItem.factNames))
            } else if reference.components.count > 1, member != "meta" {
                log.error(path, "${\(reference)}: input.\(member) has no members")
            }
        case "vars":
            guard let member = reference.member else {
                return log.error(path, "${vars} needs a name, e.g. ${vars.api}")
            }
            if vars[member] == nil {
                log.error(
                    path,
                    "unknown var \"\(member)\" in ${\(reference)}" + Suggestion.phrase(for: member, among: vars.keys))
            }
        case "env":
            if reference.member == nil { log.error(path, "${env} needs a variable name, e.g. ${env.HOME}") }
        case "previous":
            guard let member = reference.member else {
                return log.error(path, "${previous} needs a stage id, e.g. ${previous.ticket.uri}")
            }
            if !stages.contains(where: { $0.id == member }) {
                log.error(
                    path,
                    "${\(reference)}: the workflow has no stage \"\(member)\""
                        + Suggestion.phrase(for: member, among: stages.map(\.id)))
            }
        default:
            let earlier = stageIndex.map { Array(stages.prefix($0)) } ?? []
            guard let target = stages.firstIndex(where: { $0.id == reference.root }) else {
                let candidates = WorkflowLoader.reservedRoots + earlier.map(\.id)
                log.error(
                    path,
                    "unknown reference \"\(reference.root)\" in ${\(reference)}: expected input, vars, env or the id of an earlier stage"
                        + Suggestion.phrase(for: reference.root, among: candidates))
                return
            }
            guard let stageIndex else { return }
            if target == stageIndex {
                log.error(
                    path,
                    "stage \"\(reference.root)\" refers to its own output in ${\(reference)}: a stage can use only earlier stages"
                )
                return
            }
            if target > stageIndex {
                log.error(
                    path,
                    "${\(reference)} refers to stage \"\(reference.root)\", which runs later; move it before this stage"
                )
                return
            }
            let targetStage = stages[target]
            guard let member = reference.member, let descriptor = registry.descriptor(for: targetStage.uses) else {
                return
            }
            let outputs = descriptor.outputs(for: targetStage.with)
            if !outputs.contains(member) {
                let known = outputs.fields.map(\.name)
                log.error(
                    path,
                    "stage \"\(targetStage.id)\" (\(targetStage.uses)) has no output \"\(member)\"; it has \(known.joined(separator: ", "))"
                        + Suggestion.phrase(for: member, among: known))
            }
        }
    }

    private mutating func reportVarCycles(_ dependencies: [String: [String]], vars: [String: JSONValue]) {
        var state: [String: Int] = [:]  // 1 visiting, 2 done
        var reported: Set<String> = []
        func visit(_ name: String, _ trail: [String], log: inout DiagnosticLog) {
            if state[name] == 2 { return }
            if state[name] == 1 {
                guard let start = trail.firstIndex(of: name) else { return }
                let cycle = Array(trail[start...]) + [name]
                let key = Set(cycle).sorted().joined(separator: ",")
                if reported.insert(key).inserted {
                    log.error(
                        JSONPath.root.appending("vars").appending(name),
                        "cycle through ${}: " + cycle.map { "vars.\($0)" }.joined(separator: " → "))
                }
                return
            }
            state[name] = 1
            for next in dependencies[name, default: []] where vars[next] != nil {
                visit(next, trail + [name], log: &log)
            }
            state[name] = 2
        }
        for name in dependencies.keys.sorted() { visit(name, [], log: &log) }
    }

    // MARK: Scalars

    private mutating func checkKeys(
        _ members: [String: JSONValue], of section: WorkflowGrammar.Section, at path: JSONPath
    ) {
        let allowed = section.names
        for key in members.keys.sorted() where !allowed.contains(key) {
            log.keyError(
                path.appending(key),
                "unknown \(section.keyName) \"\(key)\"" + Suggestion.phrase(for: key, among: allowed))
        }
    }

    private mutating func string(_ value: JSONValue?, at path: JSONPath, required: Bool = false) -> String? {
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

    private mutating func bool(_ value: JSONValue?, at path: JSONPath) -> Bool? {
        guard let value else { return nil }
        guard let flag = value.boolValue else {
            log.error(path, "expected true or false, found \(value.kindName)")
            return nil
        }
        return flag
    }

    private mutating func duration(_ value: JSONValue?, at path: JSONPath) -> TimeSpan? {
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

/// Rules for the names that become file and folder names in the state folder.
enum StateNames {
    /// Whether `name` can be a stage id or var name: a letter or `_`, then letters, digits, `_`, `-`.
    static func isIdentifier(_ name: String) -> Bool {
        guard let first = name.first, first.isASCII, first.isLetter || first == "_", name.count <= 100 else {
            return false
        }
        return name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }
    }

    /// A folder-safe form of any text.
    static func sanitize(_ text: String) -> String {
        let safe = String(text.map { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) ? $0 : "_" })
        let trimmed = safe.drop { $0 == "." }
        return trimmed.isEmpty ? "workflow" : String(trimmed.prefix(100))
    }
}
