package import Foundation

/// A JSON document that could not be read, with where and why.
public struct JSONSyntaxError: Error, Sendable, CustomStringConvertible {
    /// What is wrong, for people.
    public var message: String
    /// Where the parser stopped.
    package var location: SourceLocation
    /// The byte offset where the parser stopped.
    package var offset: Int
    /// The path of the value being read when the error was found.
    package var path: JSONPath

    public var description: String { "\(location): \(path): \(message)" }
}

/// A strict JSON parser (RFC 8259) that records where every value starts.
///
/// It rejects what a workflow or state file must never contain: invalid UTF-8, duplicate keys,
/// numbers that do not fit a 64-bit integer or a double, nesting deeper than ``maximumDepth``,
/// and trailing content.
package struct JSONParser {
    /// Nesting deeper than this is refused rather than risking the stack.
    package static let maximumDepth = 200

    /// Parses a document and returns its value and source map.
    package static func parse(_ data: Data) throws(JSONSyntaxError) -> (value: JSONValue, sourceMap: SourceMap) {
        var parser = JSONParser(bytes: [UInt8](data))
        return try parser.parseDocument()
    }

    /// Parses a document given as text.
    package static func parse(_ text: String) throws(JSONSyntaxError) -> (value: JSONValue, sourceMap: SourceMap) {
        try parse(Data(text.utf8))
    }

    private let bytes: [UInt8]
    private var offset = 0
    private var line = 1
    private var column = 1
    private var sourceMap = SourceMap()
    private var path = JSONPath.root

    private init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    private var location: SourceLocation { SourceLocation(line: line, column: column) }

    private func error(_ message: String) -> JSONSyntaxError {
        JSONSyntaxError(message: message, location: location, offset: offset, path: path)
    }

    private mutating func parseDocument() throws(JSONSyntaxError) -> (value: JSONValue, sourceMap: SourceMap) {
        try validateUTF8()
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { offset = 3 }
        skipWhitespace()
        guard offset < bytes.count else { throw error("the document is empty") }
        let value = try parseValue(depth: 0)
        skipWhitespace()
        guard offset == bytes.count else {
            path = .root
            throw error("unexpected \(describeCurrent()) after the end of the document")
        }
        return (value, sourceMap)
    }

    /// Finds the first byte that is not valid UTF-8 and reports its line and column.
    private mutating func validateUTF8() throws(JSONSyntaxError) {
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            let length: Int
            switch byte {
            case 0x00...0x7F: length = 1
            case 0xC2...0xDF: length = 2
            case 0xE0...0xEF: length = 3
            case 0xF0...0xF4: length = 4
            default: length = 0
            }
            var valid = length > 0 && index + length <= bytes.count
            if valid && length > 1 {
                for continuation in bytes[(index + 1)..<(index + length)] where continuation & 0xC0 != 0x80 {
                    valid = false
                }
                if valid && length == 3 {
                    let second = bytes[index + 1]
                    if (byte == 0xE0 && second < 0xA0) || (byte == 0xED && second > 0x9F) { valid = false }
                }
                if valid && length == 4 {
                    let second = bytes[index + 1]
                    if (byte == 0xF0 && second < 0x90) || (byte == 0xF4 && second > 0x8F) { valid = false }
                }
            }
            if !valid {
                advance(to: index)
                throw error(
                    String(format: "invalid UTF-8 (byte 0x%02X at offset %d): the file must be UTF-8 text", byte, index)
                )
            }
            index += length
        }
    }

    /// Moves the line/column counters forward to `target` (used only to place an error).
    private mutating func advance(to target: Int) {
        while offset < target {
            if bytes[offset] == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if bytes[offset] & 0xC0 != 0x80 {
                column += 1
            }
            offset += 1
        }
    }

    private var current: UInt8? { offset < bytes.count ? bytes[offset] : nil }

    private mutating func bump() {
        guard offset < bytes.count else { return }
        if bytes[offset] == UInt8(ascii: "\n") {
            line += 1
            column = 1
        } else if bytes[offset] & 0xC0 != 0x80 {
            column += 1
        }
        offset += 1
    }

    private mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 {
            bump()
        }
    }

    private func describeCurrent() -> String {
        guard let byte = current else { return "end of file" }
        if byte >= 0x21 && byte < 0x7F { return "character '\(Character(UnicodeScalar(byte)))'" }
        return String(format: "byte 0x%02X", byte)
    }

    private mutating func parseValue(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        guard depth <= JSONParser.maximumDepth else {
            throw error("nesting is deeper than \(JSONParser.maximumDepth) levels")
        }
        sourceMap.values[path] = location
        guard let byte = current else { throw error("unexpected end of file: a value is missing") }
        switch byte {
        case UInt8(ascii: "{"): return try parseObject(depth: depth)
        case UInt8(ascii: "["): return try parseArray(depth: depth)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): return try parseLiteral("true", .bool(true))
        case UInt8(ascii: "f"): return try parseLiteral("false", .bool(false))
        case UInt8(ascii: "n"): return try parseLiteral("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        case UInt8(ascii: "'"): throw error("strings must use double quotes, not single quotes")
        case UInt8(ascii: "}"), UInt8(ascii: "]"):
            throw error("unexpected \(describeCurrent()): a value is missing (trailing comma?)")
        default: throw error("unexpected \(describeCurrent()): expected a JSON value")
        }
    }

    private mutating func parseLiteral(_ word: String, _ value: JSONValue) throws(JSONSyntaxError) -> JSONValue {
        let wordBytes = Array(word.utf8)
        guard offset + wordBytes.count <= bytes.count, Array(bytes[offset..<(offset + wordBytes.count)]) == wordBytes
        else {
            throw error("unexpected \(describeCurrent()): expected a JSON value (unquoted text?)")
        }
        for _ in wordBytes { bump() }
        return value
    }

    private mutating func parseObject(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        bump()
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            bump()
            return .object(members)
        }
        let objectPath = path
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else {
                if current == UInt8(ascii: "}") { throw error("trailing comma before '}'") }
                throw error("unexpected \(describeCurrent()): expected a member name in double quotes")
            }
            let keyLocation = location
            let key = try parseString()
            let memberPath = objectPath.appending(key)
            if members[key] != nil {
                path = memberPath
                throw JSONSyntaxError(
                    message: "duplicate key \(JSONValue.string(key).serialized())", location: keyLocation,
                    offset: offset, path: memberPath)
            }
            sourceMap.keys[memberPath] = keyLocation
            skipWhitespace()
            guard current == UInt8(ascii: ":") else {
                throw error("unexpected \(describeCurrent()): expected ':' after the member name")
            }
            bump()
            skipWhitespace()
            path = memberPath
            members[key] = try parseValue(depth: depth + 1)
            path = objectPath
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","):
                bump()
            case UInt8(ascii: "}"):
                bump()
                return .object(members)
            default:
                throw error("unexpected \(describeCurrent()): expected ',' or '}' in an object")
            }
        }
    }

    private mutating func parseArray(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        bump()
        var elements: [JSONValue] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            bump()
            return .array(elements)
        }
        let arrayPath = path
        while true {
            skipWhitespace()
            path = arrayPath.appending(index: elements.count)
            elements.append(try parseValue(depth: depth + 1))
            path = arrayPath
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","):
                bump()
            case UInt8(ascii: "]"):
                bump()
                return .array(elements)
            default:
                throw error("unexpected \(describeCurrent()): expected ',' or ']' in an array")
            }
        }
    }

    private mutating func parseString() throws(JSONSyntaxError) -> String {
        bump()
        var scalars = String.UnicodeScalarView()
        var pendingHighSurrogate: UInt32?
        var run: [UInt8] = []
        func flush(_ run: inout [UInt8], into scalars: inout String.UnicodeScalarView) {
            if !run.isEmpty {
                scalars.append(contentsOf: String(decoding: run, as: UTF8.self).unicodeScalars)
                run.removeAll(keepingCapacity: true)
            }
        }
        while true {
            guard let byte = current else { throw error("unterminated string") }
            switch byte {
            case UInt8(ascii: "\""):
                bump()
                flush(&run, into: &scalars)
                if pendingHighSurrogate != nil { throw error("unpaired surrogate in a \\u escape") }
                return String(scalars)
            case UInt8(ascii: "\\"):
                flush(&run, into: &scalars)
                bump()
                try parseEscape(into: &scalars, pendingHighSurrogate: &pendingHighSurrogate)
            case 0x00..<0x20:
                throw error("control character \(String(format: "0x%02X", byte)) in a string (escape it, e.g. \\n)")
            default:
                if pendingHighSurrogate != nil { throw error("unpaired surrogate in a \\u escape") }
                run.append(byte)
                bump()
            }
        }
    }

    /// Reads the escape after a backslash (`current` is its character) into `scalars`. A high surrogate (`\uD83D`)
    /// waits in `pendingHighSurrogate` for the low one that must follow it.
    private mutating func parseEscape(
        into scalars: inout String.UnicodeScalarView, pendingHighSurrogate: inout UInt32?
    ) throws(JSONSyntaxError) {
        guard let escape = current else { throw error("unterminated string") }
        if escape != UInt8(ascii: "u"), pendingHighSurrogate != nil {
            throw error("unpaired surrogate in a \\u escape")
        }
        switch escape {
        case UInt8(ascii: "\""): scalars.append("\"")
        case UInt8(ascii: "\\"): scalars.append("\\")
        case UInt8(ascii: "/"): scalars.append("/")
        case UInt8(ascii: "b"): scalars.append("\u{08}")
        case UInt8(ascii: "f"): scalars.append("\u{0C}")
        case UInt8(ascii: "n"): scalars.append("\n")
        case UInt8(ascii: "r"): scalars.append("\r")
        case UInt8(ascii: "t"): scalars.append("\t")
        case UInt8(ascii: "u"):
            bump()
            let code = try parseHex4()
            if let high = pendingHighSurrogate {
                guard (0xDC00...0xDFFF).contains(code) else {
                    throw error("unpaired surrogate in a \\u escape")
                }
                let combined = 0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00)
                if let scalar = Unicode.Scalar(combined) { scalars.append(scalar) }
                pendingHighSurrogate = nil
            } else if (0xD800...0xDBFF).contains(code) {
                pendingHighSurrogate = code
            } else if let scalar = Unicode.Scalar(code) {
                scalars.append(scalar)
            } else {
                throw error("unpaired surrogate in a \\u escape")
            }
            return
        default:
            throw error("invalid escape '\\\(describeCurrent())' in a string")
        }
        bump()
    }

    private mutating func parseHex4() throws(JSONSyntaxError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = current else { throw error("unterminated \\u escape") }
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw error("invalid \\u escape: expected 4 hexadecimal digits")
            }
            value = value * 16 + digit
            bump()
        }
        return value
    }

    private mutating func parseNumber() throws(JSONSyntaxError) -> JSONValue {
        let start = offset
        let startLocation = location
        var isInteger = true
        if current == UInt8(ascii: "-") { bump() }
        guard let first = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else {
            throw error("invalid number: a digit must follow '-'")
        }
        if first == UInt8(ascii: "0") {
            bump()
            if let next = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(next) {
                throw error("invalid number: leading zeros are not allowed")
            }
        } else {
            skipDigits()
        }
        if current == UInt8(ascii: ".") {
            isInteger = false
            bump()
            guard let next = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(next) else {
                throw error("invalid number: a digit must follow '.'")
            }
            skipDigits()
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            isInteger = false
            bump()
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { bump() }
            guard let next = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(next) else {
                throw error("invalid number: a digit must follow the exponent")
            }
            skipDigits()
        }
        let text = String(decoding: bytes[start..<offset], as: UTF8.self)
        if isInteger {
            if let value = Int(text) { return .int(value) }
            throw JSONSyntaxError(
                message: "number \(text) is out of range (integers must fit in 64 bits)", location: startLocation,
                offset: start, path: path)
        }
        guard let value = Double(text), value.isFinite else {
            throw JSONSyntaxError(
                message: "number \(text) is out of range", location: startLocation, offset: start, path: path)
        }
        return .double(value)
    }

    private mutating func skipDigits() {
        while let byte = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { bump() }
    }
}
