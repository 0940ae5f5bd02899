import Foundation

/// Replaces secret values (the environment variables a workflow reads) by their `${env.NAME}` expression
/// in everything that is stored or logged, and puts them back when state is read.
public struct SecretRedactor: Sendable {
    /// Values shorter than this are not treated as secrets: replacing every `1` or `yes` would garble
    /// logs while protecting nothing.
    public static let minimumLength = 4

    private let secrets: [(marker: String, value: String)]

    /// No secrets.
    public static let none = SecretRedactor(names: [], environment: [:])

    /// Secrets are the values of `names` in `environment`.
    public init(names: some Sequence<String>, environment: [String: String]) {
        self.secrets = names.compactMap { name in
            guard let value = environment[name], value.count >= SecretRedactor.minimumLength else { return nil }
            return ("${env.\(name)}", value)
        }.sorted { $0.value.count > $1.value.count }
    }

    /// The text with every secret replaced by its expression.
    public func redact(_ text: String) -> String {
        guard !secrets.isEmpty else { return text }
        var result = text
        for secret in secrets where result.contains(secret.value) {
            result = result.replacingOccurrences(of: secret.value, with: secret.marker)
        }
        return result
    }

    /// The value with every secret in every string replaced by its expression.
    public func redact(_ value: JSONValue) -> JSONValue {
        map(value, redact)
    }

    /// The value with every expression put back as the secret it stands for.
    public func reveal(_ value: JSONValue) -> JSONValue {
        guard !secrets.isEmpty else { return value }
        return map(value) { text in
            var result = text
            for secret in secrets where result.contains(secret.marker) {
                result = result.replacingOccurrences(of: secret.marker, with: secret.value)
            }
            return result
        }
    }

    private func map(_ value: JSONValue, _ transform: (String) -> String) -> JSONValue {
        guard !secrets.isEmpty else { return value }
        switch value {
        case .string(let text): return .string(transform(text))
        case .array(let elements): return .array(elements.map { map($0, transform) })
        case .object(let members): return .object(members.mapValues { map($0, transform) })
        default: return value
        }
    }
}
