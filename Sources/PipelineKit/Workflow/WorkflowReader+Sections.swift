import Foundation
import StageKit

/// The top-level sections of a workflow: its name, inputs, vars, defaults and plugins.
extension WorkflowReader {
    mutating func readName(_ value: JSONValue?) -> String {
        let path = JSONPath.root.appending("name")
        let fallback = URL(fileURLWithPath: file).deletingPathExtension().lastPathComponent
        guard let value else { return WorkflowNames.sanitize(fallback) }
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
                "a workflow name must be 1–100 characters of letters, digits, '.', '_' or '-' (the ledger keeps its items under it)"
            )
        }
        return name
    }

    mutating func readInputs(_ value: JSONValue?) -> InputSelection? {
        guard let value else { return nil }
        let path = JSONPath.root.appending("inputs")
        guard case .object(let members) = value else {
            log.error(path, "expected an object with \"path\", found \(value.kindName)")
            return nil
        }
        checkKeys(members, of: WorkflowGrammar.inputs, at: path)
        guard let inputPath = string(members["path"], at: path.appending("path"), required: true) else { return nil }
        if inputPath.isEmpty { log.error(path.appending("path"), "the input path is empty") }
        return InputSelection(
            path: inputPath,
            include: patterns(members["include"], at: path.appending("include")),
            exclude: patterns(members["exclude"], at: path.appending("exclude")),
            recursive: bool(members["recursive"], at: path.appending("recursive")) ?? false,
            fingerprint: choice(members["fingerprint"], at: path.appending("fingerprint")) ?? .sampled,
            limits: readLimits(members["limits"], at: path.appending("limits")),
            manifest: string(members["manifest"], at: path.appending("manifest"), required: false),
            damaged: choice(members["damaged"], at: path.appending("damaged")) ?? .default)
    }

    /// One of `Choice`'s values, named by its raw value; nil (said, unless absent) for anything else.
    private mutating func choice<Choice: RawRepresentable & CaseIterable>(
        _ value: JSONValue?, at path: JSONPath
    ) -> Choice? where Choice.RawValue == String {
        guard let value else { return nil }
        if let text = value.stringValue, let chosen = Choice(rawValue: text) { return chosen }
        let names = Choice.allCases.map { "\"\($0.rawValue)\"" }
        let listed =
            names.count > 1 ? names.dropLast().joined(separator: ", ") + " or " + (names.last ?? "") : names.joined()
        log.error(path, "expected \(listed), found \(value.serialized())")
        return nil
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

    mutating func readVars(_ value: JSONValue?, overrides: [String: String]) -> [String: JSONValue] {
        let path = JSONPath.root.appending("vars")
        var vars: [String: JSONValue] = [:]
        switch value {
        case nil: break
        case .object(let members):
            for (key, member) in members {
                if !WorkflowNames.isIdentifier(key) {
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

    mutating func readDefaults(_ value: JSONValue?) -> (retry: RetryPolicy, timeout: TimeSpan?) {
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

    mutating func readRetry(_ value: JSONValue?, at path: JSONPath, base: RetryPolicy) -> RetryPolicy {
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

    mutating func readPlugins(_ value: JSONValue?) -> [String] {
        let path = JSONPath.root.appending("plugins")
        guard let value else { return [] }
        guard case .array(let elements) = value else {
            log.error(path, "expected an array of plugin library paths, found \(value.kindName)")
            return []
        }
        return elements.enumerated().compactMap { index, element in string(element, at: path.appending(index: index)) }
    }
}
