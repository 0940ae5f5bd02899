public import StageKit

/// One problem found in a workflow, printed as `file:line:column: json.path: message`.
public struct Diagnostic: Sendable, Hashable, CustomStringConvertible {
    /// The workflow file.
    public var file: String
    /// Where the problem is, when the file has a location for it.
    public var location: SourceLocation?
    /// The value the problem is about.
    public var path: JSONPath
    /// What is wrong and, where possible, what was meant.
    public var message: String

    public var description: String {
        let position = location.map { "\(file):\($0.line):\($0.column)" } ?? file
        return "\(position): \(path): \(message)"
    }
}

/// A workflow that cannot run, with every problem found in it.
public struct WorkflowError: Error, Sendable, CustomStringConvertible {
    /// The problems, in file order.
    public var diagnostics: [Diagnostic]

    public var description: String {
        diagnostics.map(\.description).joined(separator: "\n")
    }
}

/// Collects diagnostics while a workflow is read, placing each at its source location.
struct DiagnosticLog {
    let file: String
    let sourceMap: SourceMap
    private(set) var diagnostics: [Diagnostic] = []

    init(file: String, sourceMap: SourceMap) {
        self.file = file
        self.sourceMap = sourceMap
    }

    /// A problem with the value at `path`.
    mutating func error(_ path: JSONPath, _ message: String) {
        append(Diagnostic(file: file, location: sourceMap.location(of: path), path: path, message: message))
    }

    /// A problem with the member name at `path` (an unknown key).
    mutating func keyError(_ path: JSONPath, _ message: String) {
        append(Diagnostic(file: file, location: sourceMap.keyLocation(of: path), path: path, message: message))
    }

    private mutating func append(_ diagnostic: Diagnostic) {
        if !diagnostics.contains(diagnostic) { diagnostics.append(diagnostic) }
    }

    var sorted: [Diagnostic] {
        diagnostics.enumerated().sorted { lhs, rhs in
            let left = lhs.element.location ?? SourceLocation(line: Int.max, column: 0)
            let right = rhs.element.location ?? SourceLocation(line: Int.max, column: 0)
            return left == right ? lhs.offset < rhs.offset : left < right
        }.map(\.element)
    }
}
