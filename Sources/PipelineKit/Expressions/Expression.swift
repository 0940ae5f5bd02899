package import StageKit

/// A dotted reference inside `${...}`: `input.stem`, `vars.api`, `env.TOKEN`, `export.path`, `ticket`.
package struct Reference: Sendable, Hashable, CustomStringConvertible {
    /// The first name: `input`, `vars`, `env` or a stage id.
    package var root: String
    /// The steps after the root.
    package var components: [JSONPath.Component]

    /// Creates a reference.
    package init(root: String, components: [JSONPath.Component] = []) {
        self.root = root
        self.components = components
    }

    /// The first step after the root, when it is a name (`path` in `export.path`).
    package var member: String? {
        if case .key(let key) = components.first { return key }
        return nil
    }

    package var description: String {
        JSONPath(components: [.key(root)] + components).description
    }
}

/// The operators of the expression language, from lowest to highest precedence: `??`, `||`, `&&`,
/// comparisons.
package enum BinaryOperator: String, Sendable, Hashable {
    case coalesce = "??"
    case or = "||"
    case and = "&&"
    case equal = "=="
    case notEqual = "!="
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="
}

/// The expression inside `${...}`: references, literals, comparisons, `!`, `&&`, `||` and `??` (default
/// when the left side is missing or null).
package indirect enum Expression: Sendable, Hashable {
    case literal(JSONValue)
    case reference(Reference)
    case not(Expression)
    case binary(BinaryOperator, Expression, Expression)

    /// Every reference the expression reads, in order of appearance.
    package var references: [Reference] {
        switch self {
        case .literal: []
        case .reference(let reference): [reference]
        case .not(let operand): operand.references
        case .binary(_, let left, let right): left.references + right.references
        }
    }

    /// References that must exist: those not on the left of a `??`.
    package var requiredReferences: [Reference] {
        switch self {
        case .literal: []
        case .reference(let reference): [reference]
        case .not(let operand): operand.requiredReferences
        case .binary(.coalesce, _, let right): right.requiredReferences
        case .binary(_, let left, let right): left.requiredReferences + right.requiredReferences
        }
    }
}

/// An expression or template that is not well formed.
package struct ExpressionSyntaxError: Error, Sendable, CustomStringConvertible {
    /// What is wrong.
    package var message: String
    /// The character offset in the string where the problem is.
    package var offset: Int

    package var description: String { message }
}

/// Parses the text between `${` and `}`.
struct ExpressionParser {
    private let characters: [Character]
    private var position = 0
    private let baseOffset: Int

    static func parse(_ text: String, baseOffset: Int = 0) throws(ExpressionSyntaxError) -> Expression {
        var parser = ExpressionParser(characters: Array(text), baseOffset: baseOffset)
        parser.skipSpaces()
        guard !parser.atEnd else { throw parser.error("empty expression: write a reference such as ${input.stem}") }
        let expression = try parser.parseCoalesce()
        parser.skipSpaces()
        guard parser.atEnd else {
            throw parser.error("unexpected '\(parser.characters[parser.position])' in expression")
        }
        return expression
    }

    private init(characters: [Character], baseOffset: Int) {
        self.characters = characters
        self.baseOffset = baseOffset
    }

    private var atEnd: Bool { position >= characters.count }

    private func error(_ message: String) -> ExpressionSyntaxError {
        ExpressionSyntaxError(message: message, offset: baseOffset + position)
    }

    private mutating func skipSpaces() {
        while !atEnd, characters[position].isWhitespace { position += 1 }
    }

    private mutating func consume(_ token: String) -> Bool {
        skipSpaces()
        let tokenCharacters = Array(token)
        guard position + tokenCharacters.count <= characters.count,
            Array(characters[position..<(position + tokenCharacters.count)]) == tokenCharacters
        else { return false }
        // `<` must not swallow the first half of `<=`, nor `!` the first half of `!=`.
        if tokenCharacters.count == 1, position + 1 < characters.count, characters[position + 1] == "=",
            "<>!=".contains(tokenCharacters[0])
        {
            return false
        }
        position += tokenCharacters.count
        return true
    }

    private mutating func parseCoalesce() throws(ExpressionSyntaxError) -> Expression {
        var left = try parseOr()
        while consume("??") { left = .binary(.coalesce, left, try parseOr()) }
        return left
    }

    private mutating func parseOr() throws(ExpressionSyntaxError) -> Expression {
        var left = try parseAnd()
        while consume("||") { left = .binary(.or, left, try parseAnd()) }
        return left
    }

    private mutating func parseAnd() throws(ExpressionSyntaxError) -> Expression {
        var left = try parseComparison()
        while consume("&&") { left = .binary(.and, left, try parseComparison()) }
        return left
    }

    private mutating func parseComparison() throws(ExpressionSyntaxError) -> Expression {
        let left = try parseUnary()
        for op in [BinaryOperator.equal, .notEqual, .lessOrEqual, .greaterOrEqual, .less, .greater]
        where consume(op.rawValue) {
            return .binary(op, left, try parseUnary())
        }
        return left
    }

    private mutating func parseUnary() throws(ExpressionSyntaxError) -> Expression {
        if consume("!") { return .not(try parseUnary()) }
        return try parsePrimary()
    }

    private mutating func parsePrimary() throws(ExpressionSyntaxError) -> Expression {
        skipSpaces()
        guard !atEnd else { throw error("unexpected end of expression: a value is missing") }
        let character = characters[position]
        if character == "(" {
            position += 1
            let inner = try parseCoalesce()
            guard consume(")") else { throw error("missing ')'") }
            return inner
        }
        if character == "'" || character == "\"" {
            return .literal(.string(try parseQuoted()))
        }
        if character.isNumber || character == "-" {
            return .literal(try parseNumber())
        }
        if character.isLetter || character == "_" {
            let name = parseIdentifier()
            switch name {
            case "true": return .literal(.bool(true))
            case "false": return .literal(.bool(false))
            case "null": return .literal(.null)
            default: return .reference(try parseReferenceTail(root: name))
            }
        }
        throw error("unexpected '\(character)' in expression")
    }

    private mutating func parseIdentifier() -> String {
        let start = position
        while !atEnd,
            characters[position].isLetter || characters[position].isNumber || characters[position] == "_"
                || characters[position] == "-"
        {
            position += 1
        }
        return String(characters[start..<position])
    }

    private mutating func parseReferenceTail(root: String) throws(ExpressionSyntaxError) -> Reference {
        var components: [JSONPath.Component] = []
        while !atEnd {
            if characters[position] == "." {
                position += 1
                let name = parseIdentifier()
                guard !name.isEmpty else { throw error("a name must follow '.' in \(root)") }
                components.append(.key(name))
            } else if characters[position] == "[" {
                position += 1
                skipSpaces()
                if !atEnd, characters[position] == "'" || characters[position] == "\"" {
                    components.append(.key(try parseQuoted()))
                } else {
                    guard case .int(let index) = try parseNumber(), index >= 0 else {
                        throw error("an index in [...] must be a non-negative integer or a quoted name")
                    }
                    components.append(.index(index))
                }
                guard consume("]") else { throw error("missing ']'") }
            } else {
                break
            }
        }
        return Reference(root: root, components: components)
    }

    private mutating func parseQuoted() throws(ExpressionSyntaxError) -> String {
        let quote = characters[position]
        position += 1
        var text = ""
        while !atEnd {
            let character = characters[position]
            position += 1
            if character == quote { return text }
            if character == "\\", !atEnd {
                text.append(characters[position])
                position += 1
            } else {
                text.append(character)
            }
        }
        throw error("unterminated string literal")
    }

    private mutating func parseNumber() throws(ExpressionSyntaxError) -> JSONValue {
        let start = position
        if !atEnd, characters[position] == "-" { position += 1 }
        while !atEnd,
            characters[position].isNumber || characters[position] == "." || characters[position] == "e"
                || characters[position] == "E"
        {
            position += 1
        }
        let text = String(characters[start..<position])
        if let value = Int(text) { return .int(value) }
        if let value = Double(text), value.isFinite { return .double(value) }
        throw ExpressionSyntaxError(message: "invalid number '\(text)'", offset: baseOffset + start)
    }
}
