import Foundation
import NIOConcurrencyHelpers
public import StageKit

/// Replaces secret values by an expression in everything that is stored or logged, and puts them back when
/// state is read: the environment variables a workflow reads (as `${env.NAME}`), and the outputs of stages
/// marked secret (as `${stage.output}`), added while the run goes on.
public final class SecretRedactor: Sendable {
    /// Values shorter than this are not treated as secrets: replacing every `1` or `yes` would garble
    /// logs while protecting nothing.
    public static let minimumLength = 4

    private let secrets: NIOLockedValueBox<[(marker: String, value: String)]>

    /// No secrets (yet).
    public static var none: SecretRedactor { SecretRedactor(names: [], environment: [:]) }

    /// Secrets are the values of `names` in `environment`.
    public init(names: some Sequence<String>, environment: [String: String]) {
        secrets = NIOLockedValueBox(
            names.compactMap { name in
                guard let value = environment[name], value.count >= SecretRedactor.minimumLength else { return nil }
                return ("${env.\(name)}", value)
            }.sorted { $0.value.count > $1.value.count })
    }

    /// Treats `value` as a secret from now on, shown as `marker`.
    public func add(_ value: String, as marker: String) {
        guard value.count >= SecretRedactor.minimumLength else { return }
        secrets.withLockedValue { secrets in
            guard !secrets.contains(where: { $0.value == value }) else { return }
            secrets.append((marker, value))
            secrets.sort { $0.value.count > $1.value.count }
        }
    }

    /// Treats every string in `value` as a secret, each shown as `prefix` plus its path (`${token.stdout.access_token}`).
    public func add(all value: JSONValue, as prefix: String) {
        switch value {
        case .string(let text): add(text, as: "${\(prefix)}")
        case .array(let elements):
            for (index, element) in elements.enumerated() { add(all: element, as: "\(prefix)[\(index)]") }
        case .object(let members): for (key, member) in members { add(all: member, as: "\(prefix).\(key)") }
        default: break
        }
    }

    /// The text with every secret replaced by its expression.
    public func redact(_ text: String) -> String {
        let secrets = self.secrets.withLockedValue { $0 }
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

    /// The text as it may be shown, or kept where no run reads it back (logs, failures, a stage's recorded
    /// options, reports): every secret replaced by its expression, and presigned URLs' signatures masked
    /// (``PresignedURLMask``). Outputs a later run reads are only ``redact(_:)-(String)``ed.
    public func shown(_ text: String) -> String {
        PresignedURLMask.masked(redact(text))
    }

    /// The value with every string ``shown(_:)-(String)``.
    public func shown(_ value: JSONValue) -> JSONValue {
        map(value, shown)
    }

    /// The value with every expression put back as the secret it stands for.
    public func reveal(_ value: JSONValue) -> JSONValue {
        let secrets = self.secrets.withLockedValue { $0 }
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
        switch value {
        case .string(let text): return .string(transform(text))
        case .array(let elements): return .array(elements.map { map($0, transform) })
        case .object(let members): return .object(members.mapValues { map($0, transform) })
        default: return value
        }
    }
}
