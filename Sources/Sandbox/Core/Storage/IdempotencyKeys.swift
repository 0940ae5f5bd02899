import StageKit

/// The kinds of resource whose creates honour an `Idempotency-Key`.
///
/// A scope's raw value prefixes its keys in `index.json` (`video:KEY`), so the raw values are part of the
/// format. Listing them in one place writes each once and keeps two platforms from sharing a prefix.
enum IdempotencyScope: String, Sendable {
    /// Vimeo's videos (`POST /me/videos`).
    case video
    /// Vimeo's legacy streaming tickets (`POST /me/videos` with `type: streaming`).
    case ticket
    /// Vimeo's new versions of a video's file (`POST /videos/ID/versions`).
    case version
    /// The generic API's assets (`POST /generic/assets`).
    case asset
}

/// `Idempotency-Key`s and what they created, for every platform whose creates honour one: a create repeated
/// with the same key answers what the first one made.
///
/// Keys are scoped by the kind of resource (``IdempotencyScope``), and to the account, not to a token:
/// every token of the sandbox belongs to its one user, so a client that refreshes its token between a lost
/// response and the retry still finds what it created.
@SandboxActor
final class IdempotencyKeys: IndexSectionKeeper {
    /// The keys' part of `index.json`, so that a create retried after a restart still finds what it made.
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
    func created(by key: String?, in scope: IdempotencyScope) -> String? {
        key.flatMap { self.section.idempotencyKeys[Self.entry(key: $0, in: scope)] }
    }

    /// Remembers that the request with `key` created `id` in `scope` (nothing without a key).
    func remember(_ key: String?, in scope: IdempotencyScope, created id: String) {
        guard let key else { return }
        self.section.idempotencyKeys[Self.entry(key: key, in: scope)] = id
    }

    /// Forgets the keys that created any of `ids`, which no longer exist.
    func forget(_ ids: Set<String>) {
        self.section.idempotencyKeys = self.section.idempotencyKeys.filter { !ids.contains($0.value) }
    }

    /// The name of `key` in `scope` in the index: `scope:key`.
    private static func entry(key: String, in scope: IdempotencyScope) -> String {
        scope.rawValue + ":" + key
    }
}
