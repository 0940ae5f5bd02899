import Foundation
import StageKit

/// Vimeo's `fields=` query parameter: a comma-separated list of field paths to keep in a response,
/// with dots selecting inside objects (`fields=uri,upload.status`).
///
/// Applied to an array, the selection applies to each element, as Vimeo does for the `data` of a
/// list response.
struct FieldSelection: Sendable, Equatable {
    /// Selected member names; a `nil` child keeps the whole member.
    private var members: [String: FieldSelection?]

    /// Parses the parameter; `nil` when it selects nothing (absent or empty), meaning "everything".
    init?(_ parameter: String?) {
        guard let parameter else { return nil }
        var root = FieldSelection(members: [:])
        for path in parameter.split(separator: ",") {
            let components = path.trimmingCharacters(in: .whitespaces).split(separator: ".").map(String.init)
            guard !components.isEmpty else { continue }
            root.insert(components[...])
        }
        guard !root.members.isEmpty else { return nil }
        self = root
    }

    private init(members: [String: FieldSelection?]) {
        self.members = members
    }

    private mutating func insert(_ components: ArraySlice<String>) {
        guard let first = components.first else { return }
        let rest = components.dropFirst()
        if rest.isEmpty {
            self.members[first] = .some(nil)
            return
        }
        switch self.members[first] {
        case .some(.none):
            return  // the whole member is already selected
        case .some(.some(var child)):
            child.insert(rest)
            self.members[first] = child
        case .none:
            var child = FieldSelection(members: [:])
            child.insert(rest)
            self.members[first] = child
        }
    }

    /// The parts of `value` this selection keeps.
    func apply(to value: JSONValue) -> JSONValue {
        switch value {
        case .object(let object):
            var kept: [String: JSONValue] = [:]
            for (name, child) in self.members {
                guard let member = object[name] else { continue }
                kept[name] = child.map { $0.apply(to: member) } ?? member
            }
            return .object(kept)
        case .array(let elements):
            return .array(elements.map { self.apply(to: $0) })
        default:
            return value
        }
    }
}
