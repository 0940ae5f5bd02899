import Foundation

/// A JSON document as a value: what the API reads from request bodies and writes to responses.
///
/// Working on values rather than fixed `Codable` types lets the sandbox name the exact field that
/// is wrong or unknown (as Vimeo's `invalid_parameters` does) and apply `fields=` filtering.
enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// The member `key` of an object, `nil` for anything else.
    subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members[key]
    }

    /// The value at a dotted path such as `upload.size`.
    func value(at path: String) -> JSONValue? {
        var current: JSONValue? = self
        for component in path.split(separator: ".") {
            current = current?[String(component)]
        }
        return current
    }

    var stringValue: String? {
        if case .string(let string) = self { return string }
        return nil
    }

    var objectValue: [String: JSONValue]? {
        if case .object(let members) = self { return members }
        return nil
    }

    var arrayValue: [JSONValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    /// A whole number, also from an integral double or a string of digits: clients templating
    /// sizes into JSON often send `"12345"`, which Vimeo accepts too.
    var integerValue: Int64? {
        switch self {
        case .integer(let value):
            return value
        case .double(let value):
            guard value.rounded() == value, let exact = Int64(exactly: value) else { return nil }
            return exact
        case .string(let text):
            return Int64(text.trimmingCharacters(in: .whitespaces))
        default:
            return nil
        }
    }

    /// Parses JSON bytes; `nil` when they are not JSON.
    static func parse(_ bytes: some Collection<UInt8>) -> JSONValue? {
        try? JSONDecoder().decode(JSONValue.self, from: Data(bytes))
    }

    /// Serialises the value with sorted keys and unescaped slashes (URLs stay readable).
    func encoded() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(self) else { return Array("null".utf8) }
        return Array(data)
    }
}

extension JSONValue: Codable {
    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByDictionaryLiteral, ExpressibleByArrayLiteral, ExpressibleByNilLiteral
{
    init(stringLiteral value: String) { self = .string(value) }
    init(integerLiteral value: Int64) { self = .integer(value) }
    init(booleanLiteral value: Bool) { self = .bool(value) }
    init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
    init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    init(nilLiteral: ()) { self = .null }

    /// A string, or JSON `null` for `nil`.
    static func optional(_ string: String?) -> JSONValue {
        string.map { .string($0) } ?? .null
    }
}
