import Foundation
import HTTPTransport
import Logging
import StageKit

/// What a stage that creates a remote object records, durably, before the create request: the marker the
/// object will carry. A later attempt that finds it (the create was never answered: a crash, a lost
/// connection) looks for the object first instead of making a second one.
struct CreateIntent: Codable, Sendable {
    /// What became of the create, as far as the client knows.
    enum Answer: String, Codable, Sendable {
        /// No answer arrived (a crash, a lost connection, an answer that cannot be read): an object may exist
        /// that the listing does not show yet.
        case none
        /// The platform answered with a server error: it may have acted, and had time to list it.
        case serverError
        /// The platform refused it (a 4xx answer): nothing was made, nothing to look for.
        case refused
    }

    /// The marker, unique to the item and the stage's options (its idempotency key).
    var marker: String
    /// What became of it.
    var answer = Answer.none
    /// When the first request with this marker was sent (nil in records written before it was kept): a platform
    /// that refuses a repeated request id for a while (VOD's `SessionId`) protects a resubmission only that long.
    var sentAt: Date?

    /// Whether a request with this marker may have made the object: it went unanswered or met a server error.
    var mayHaveActed: Bool { answer != .refused }

    /// The intent after `error` ended the create, or nil when the error says nothing of its fate (no answer
    /// came). Any answer but a refusal (a server error, a success status the workflow did not expect) may
    /// mean the platform acted.
    init?(marker: String, after error: any Error) {
        guard let failure = error as? HTTPFailure, failure.status != nil else { return nil }
        self.init(marker: marker, answer: failure.refusedRequest ? .refused : .serverError)
    }

    init(marker: String, answer: Answer = .none, sentAt: Date? = nil) {
        self.marker = marker
        self.answer = answer
        self.sentAt = sentAt
    }

    /// How long to look for the object before creating again: `wait` without an answer, one look after a
    /// server error, nil (do not look) after a refusal.
    func lookup(waiting wait: TimeSpan) -> TimeSpan? {
        switch answer {
        case .none: wait
        case .serverError: TimeSpan(seconds: 0)
        case .refused: nil
        }
    }
}

/// Asks `find` until it finds something or `wait` has passed, a second apart: listings lag behind creation.
func lookUp(
    waiting wait: TimeSpan, for what: String, logger: Logger, _ find: () async throws -> [JSONValue]
) async throws -> [JSONValue] {
    let deadline = ContinuousClock.now + wait.duration
    var found = try await find()
    while found.isEmpty, ContinuousClock.now < deadline {
        logger.notice("no \(what) yet; listings can lag behind creation: looking again until \(wait) have passed")
        try await Task.sleep(for: .seconds(1))
        found = try await find()
    }
    return found
}
