import Foundation
import StageKit

/// A workflow string with `${...}` expressions in it. `$${` writes a literal `${`.
///
/// A string that is exactly one expression keeps the expression's type (`"${export.size}"` is a
/// number); a string that mixes text and expressions is a string.
package struct Template: Sendable, Hashable {
    /// A piece of a template.
    package enum Segment: Sendable, Hashable {
        case text(String)
        case expression(Expression, source: String)
    }

    /// The pieces in order.
    package var segments: [Segment]

    /// Parses a string; a string without `${` is a single text segment.
    package init(parsing string: String) throws(ExpressionSyntaxError) {
        var segments: [Segment] = []
        var text = ""
        let characters = Array(string)
        var index = 0
        while index < characters.count {
            let character = characters[index]
            if character == "$", index + 2 < characters.count, characters[index + 1] == "$",
                characters[index + 2] == "{"
            {
                text += "${"
                index += 3
                continue
            }
            if character == "$", index + 1 < characters.count, characters[index + 1] == "{" {
                let start = index + 2
                guard let end = Template.closingBrace(in: characters, from: start) else {
                    throw ExpressionSyntaxError(message: "'${' is not closed by '}'", offset: index)
                }
                let source = String(characters[start..<end])
                let expression = try ExpressionParser.parse(source, baseOffset: start)
                if !text.isEmpty {
                    segments.append(.text(text))
                    text = ""
                }
                segments.append(.expression(expression, source: source.trimmingWhitespace()))
                index = end + 1
                continue
            }
            text.append(character)
            index += 1
        }
        if !text.isEmpty || segments.isEmpty { segments.append(.text(text)) }
        self.segments = segments
    }

    /// The closing `}` of an expression, skipping quoted literals.
    private static func closingBrace(in characters: [Character], from start: Int) -> Int? {
        var quote: Character?
        var index = start
        while index < characters.count {
            let character = characters[index]
            if let open = quote {
                if character == "\\" {
                    index += 1
                } else if character == open {
                    quote = nil
                }
            } else if character == "'" || character == "\"" {
                quote = character
            } else if character == "}" {
                return index
            }
            index += 1
        }
        return nil
    }

    /// Whether the string contains no expression at all.
    package var isLiteral: Bool {
        segments.allSatisfy { if case .text = $0 { true } else { false } }
    }

    /// The expression, when the whole string is exactly one `${...}`.
    package var singleExpression: Expression? {
        if segments.count == 1, case .expression(let expression, _) = segments[0] { return expression }
        return nil
    }

    /// Every expression in the template.
    package var expressions: [Expression] {
        segments.compactMap { if case .expression(let expression, _) = $0 { expression } else { nil } }
    }
}

extension String {
    func trimmingWhitespace() -> String {
        var scalars = Substring(self)
        while let first = scalars.first, first.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }
}
