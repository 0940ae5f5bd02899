import Foundation

/// A quantity that workflows write as a number or a string with a unit (`"8MiB"`, `"30s"`, `"2500k"`): it
/// decodes from either and encodes as a plain number.
public protocol JSONQuantity: Sendable, Hashable, Codable {
    /// Reads the quantity; nil when `json` is not one.
    init?(json: JSONValue)
    /// What a workflow may write, for error messages.
    static var expected: String { get }
    /// The quantity as a JSON number.
    var scalar: JSONValue { get }
}

extension JSONQuantity {
    public init(from decoder: any Decoder) throws {
        guard let value = Self(json: try JSONValue(from: decoder)) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "expected \(Self.expected)"))
        }
        self = value
    }

    public func encode(to encoder: any Encoder) throws {
        try scalar.encode(to: encoder)
    }
}

/// A size in bytes, written in workflows as a number of bytes or a string such as `"8MiB"` or `"1.5 GB"`.
public struct ByteCount: JSONQuantity, Comparable, CustomStringConvertible {
    /// The number of bytes.
    public var bytes: Int64

    /// Creates a size from a number of bytes.
    public init(_ bytes: Int64) {
        self.bytes = bytes
    }

    private static let units: [(suffix: String, factor: Double)] = [
        ("kib", 1024), ("mib", 1024 * 1024), ("gib", 1024 * 1024 * 1024), ("tib", 1024 * 1024 * 1024 * 1024),
        ("kb", 1000), ("mb", 1_000_000), ("gb", 1_000_000_000), ("tb", 1_000_000_000_000),
        ("k", 1024), ("m", 1024 * 1024), ("g", 1024 * 1024 * 1024), ("b", 1),
    ]

    /// Parses `"8MiB"`, `"512 KB"`, `"1048576"`; returns nil for anything else.
    public init?(parsing text: String) {
        let lowered = text.trimmingCharacters(in: .whitespaces).lowercased()
        var number = lowered
        var factor = 1.0
        for unit in ByteCount.units where lowered.hasSuffix(unit.suffix) {
            number = String(lowered.dropLast(unit.suffix.count)).trimmingCharacters(in: .whitespaces)
            factor = unit.factor
            break
        }
        guard let value = Double(number), value >= 0, value.isFinite else { return nil }
        let bytes = (value * factor).rounded()
        guard bytes < 9.0e18 else { return nil }
        self.bytes = Int64(bytes)
    }

    /// Accepts a JSON number of bytes or a size string.
    public init?(json: JSONValue) {
        switch json {
        case .int(let value) where value >= 0: self.init(Int64(value))
        case .string(let text): self.init(parsing: text)
        default: return nil
        }
    }

    /// What a workflow may write, for error messages.
    public static let expected = "a size such as 1048576 or \"8MiB\""

    /// Encoded as a number of bytes.
    public var scalar: JSONValue { .int(Int(bytes)) }

    /// A short human form, e.g. `12.3 MiB`.
    public var description: String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes)
        var index = 0
        while value >= 1024 && index < units.count - 1 {
            value /= 1024
            index += 1
        }
        return index == 0 ? "\(bytes) B" : String(format: "%.1f %@", value, units[index])
    }

    public static func < (lhs: ByteCount, rhs: ByteCount) -> Bool { lhs.bytes < rhs.bytes }
}

/// A length of time, written in workflows as a number of seconds or a string such as `"30s"`, `"5m"`, `"1h30m"`, `"250ms"`.
public struct TimeSpan: JSONQuantity, Comparable, CustomStringConvertible {
    /// The length in seconds.
    public var seconds: Double

    /// Creates a span from seconds.
    public init(seconds: Double) {
        self.seconds = seconds
    }

    /// The span as a Swift `Duration`.
    public var duration: Duration { .milliseconds(Int64((seconds * 1000).rounded())) }

    /// Parses `"30s"`, `"1.5m"`, `"1h30m"`, `"250ms"`, `"12"`; returns nil for anything else.
    public init?(parsing text: String) {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        if let plain = Double(trimmed) {
            guard plain >= 0, plain.isFinite else { return nil }
            self.seconds = plain
            return
        }
        var total = 0.0
        var number = ""
        var unit = ""
        var sawAny = false
        func commit() -> Bool {
            guard let value = Double(number) else { return false }
            let factor: Double
            switch unit {
            case "ms": factor = 0.001
            case "s": factor = 1
            case "m": factor = 60
            case "h": factor = 3600
            case "d": factor = 86400
            default: return false
            }
            total += value * factor
            number = ""
            unit = ""
            sawAny = true
            return true
        }
        for character in trimmed {
            if character.isNumber || character == "." {
                if !unit.isEmpty {
                    guard commit() else { return nil }
                }
                number.append(character)
            } else if character.isLetter {
                unit.append(character)
            } else {
                return nil
            }
        }
        guard !number.isEmpty, commit(), sawAny, total.isFinite else { return nil }
        self.seconds = total
    }

    /// Accepts a JSON number of seconds or a duration string.
    public init?(json: JSONValue) {
        switch json {
        case .int(let value) where value >= 0: self.init(seconds: Double(value))
        case .double(let value) where value >= 0 && value.isFinite: self.init(seconds: value)
        case .string(let text): self.init(parsing: text)
        default: return nil
        }
    }

    /// What a workflow may write, for error messages.
    public static let expected = "a duration such as 30 or \"30s\""

    /// Encoded as a number of seconds.
    public var scalar: JSONValue { .double(seconds) }

    /// A short human form, e.g. `1m05s`.
    public var description: String {
        if seconds < 1 { return String(format: "%.0fms", seconds * 1000) }
        if seconds < 60 { return String(format: "%.1fs", seconds) }
        let whole = Int(seconds.rounded())
        if whole < 3600 { return String(format: "%dm%02ds", whole / 60, whole % 60) }
        return String(format: "%dh%02dm", whole / 3600, (whole % 3600) / 60)
    }

    public static func < (lhs: TimeSpan, rhs: TimeSpan) -> Bool { lhs.seconds < rhs.seconds }
}

/// Bits per second, written as a number or a string such as `"2500k"`, `"5M"`, `"128kbps"`.
public struct BitRate: JSONQuantity {
    /// Bits per second.
    public var bitsPerSecond: Int64

    /// Parses a bit rate; nil when it is not one.
    public init?(json: JSONValue) {
        switch json {
        case .int(let value) where value > 0:
            bitsPerSecond = Int64(value)
        case .string(let text):
            var lowered = text.trimmingCharacters(in: .whitespaces).lowercased()
            for suffix in ["bps", "b/s"] where lowered.hasSuffix(suffix) { lowered.removeLast(suffix.count) }
            var factor = 1.0
            if let last = lowered.last, let scale = ["k": 1e3, "m": 1e6, "g": 1e9][String(last)] {
                factor = scale
                lowered.removeLast()
            }
            guard let value = Double(lowered.trimmingCharacters(in: .whitespaces)), value > 0, value * factor < 1e12
            else {
                return nil
            }
            bitsPerSecond = Int64(value * factor)
        default:
            return nil
        }
    }

    /// What a workflow may write, for error messages.
    public static let expected = "a bit rate such as 2500000 or \"2500k\""

    /// Encoded as bits per second.
    public var scalar: JSONValue { .int(Int(bitsPerSecond)) }
}
