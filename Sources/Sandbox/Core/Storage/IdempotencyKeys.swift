import StageKit

/// `Idempotency-Key`s and what they created, for every platform whose creates honour one: a create repeated
/// with the same key answers what the first one made.
///
/// Keys are scoped by the kind of resource (`video:`, `asset:`, …), and to the account, not to a token:
/// every token of the sandbox belongs to its one user, so a client that refreshes its token between a lost
/// response and the retry still finds what it created.
@SandboxActor
final class IdempotencyKeys: IndexSectionKeeper {
    struct Section: IndexSection {
        /// `scope:key` → the id it created.
        var idempotencyKeys: [String: String] = [:]
    }

    private var section: Section

    var indexSection: any IndexSection { self.section }

    /// Reads the keys of `document`.
    init(_ document: IndexDocument) throws {
        self.section = try document.section(Section.self)
    }

    /// The id an earlier request with `key` created in `scope`; `nil` without a key or when none did.
    func created(by key: String?, in scope: String) -> String? {
        key.flatMap { self.section.idempotencyKeys[scope + ":" + $0] }
    }

    /// Remembers that the request with `key` created `id` in `scope` (nothing without a key).
    func remember(_ key: String?, in scope: String, created id: String) {
        guard let key else { return }
        self.section.idempotencyKeys[scope + ":" + key] = id
    }

    /// Forgets the keys that created any of `ids`, which no longer exist.
    func forget(_ ids: Set<String>) {
        self.section.idempotencyKeys = self.section.idempotencyKeys.filter { !ids.contains($0.value) }
    }
}
