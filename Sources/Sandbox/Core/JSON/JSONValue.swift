import Foundation
import StageKit

/// The sandbox reads and writes JSON as StageKit's `JSONValue` values rather than fixed `Codable` types,
/// so it can name the exact field that is wrong or unknown (as Vimeo's `invalid_parameters` does) and
/// apply `fields=` filtering. These are the few helpers the API code adds.
extension JSONValue {
    /// A 64-bit whole number.
    static func integer(_ value: Int64) -> JSONValue {
        .int(Int(value))
    }

    /// A string, or JSON `null` for `nil`.
    static func optional(_ string: String?) -> JSONValue {
        string.map { .string($0) } ?? .null
    }

    /// The value at a dotted path such as `upload.size`.
    func value(at path: String) -> JSONValue? {
        var current: JSONValue? = self
        for component in path.split(separator: ".") {
            current = current?[String(component)]
        }
        return current
    }

    /// A whole number, also from an integral double or a string of digits: clients templating
    /// sizes into JSON often send `"12345"`, which Vimeo accepts too.
    var integerValue: Int64? {
        if case .string(let text) = self { return Int64(text.trimmingCharacters(in: .whitespaces)) }
        return intValue.map(Int64.init)
    }

    /// Parses JSON bytes; `nil` when they are not JSON.
    static func parse(_ bytes: some Collection<UInt8>) -> JSONValue? {
        try? JSONValue(parsing: Data(bytes))
    }

    /// The value as compact JSON with sorted keys (slashes unescaped, so URLs stay readable).
    func encoded() -> [UInt8] {
        Array(serialized().utf8)
    }
}
