/// The location of a value inside a JSON document, written as `stages[2].with.url`.
public struct JSONPath: Sendable, Hashable, CustomStringConvertible, Comparable {
    /// One step into an object member or an array element.
    public enum Component: Sendable, Hashable {
        case key(String)
        case index(Int)
    }

    /// The steps from the document root.
    public var components: [Component]

    /// The document root.
    public static let root = JSONPath(components: [])

    /// Creates a path from its steps.
    public init(components: [Component]) {
        self.components = components
    }

    /// The path one member deeper.
    public func appending(_ key: String) -> JSONPath {
        JSONPath(components: components + [.key(key)])
    }

    /// The path one element deeper.
    public func appending(index: Int) -> JSONPath {
        JSONPath(components: components + [.index(index)])
    }

    public var description: String {
        guard !components.isEmpty else { return "(root)" }
        var text = ""
        for component in components {
            switch component {
            case .key(let key):
                let plain =
                    !key.isEmpty && key.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" || $0 == "$" }
                if plain {
                    text += text.isEmpty ? key : ".\(key)"
                } else {
                    text += "[\(JSONValue.string(key).serialized())]"
                }
            case .index(let index):
                text += "[\(index)]"
            }
        }
        return text
    }

    public static func < (lhs: JSONPath, rhs: JSONPath) -> Bool {
        lhs.description < rhs.description
    }
}

/// A line and column in a source file, both counted from 1; columns count Unicode scalars.
public struct SourceLocation: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The line, from 1.
    public var line: Int
    /// The column, from 1.
    public var column: Int

    /// Creates a location.
    public init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    public var description: String { "\(line):\(column)" }

    public static func < (lhs: SourceLocation, rhs: SourceLocation) -> Bool {
        (lhs.line, lhs.column) < (rhs.line, rhs.column)
    }
}

/// Where each value and each object key of a parsed document starts.
package struct SourceMap: Sendable {
    var values: [JSONPath: SourceLocation] = [:]
    var keys: [JSONPath: SourceLocation] = [:]

    /// Creates an empty map (for documents built in code).
    package init() {}

    /// Where the value at `path` starts, or the nearest enclosing value that has a location.
    package func location(of path: JSONPath) -> SourceLocation? {
        var current = path
        while true {
            if let location = values[current] { return location }
            guard !current.components.isEmpty else { return nil }
            current.components.removeLast()
        }
    }

    /// Where the key of the member at `path` starts (falls back to the value's location).
    package func keyLocation(of path: JSONPath) -> SourceLocation? {
        keys[path] ?? location(of: path)
    }
}
