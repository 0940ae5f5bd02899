import Foundation
import Hummingbird
import PipelineKit
import SharedBatch
import StageKit

/// The status: as one answer (`/api/status`, the page's first drawing) and as a stream (`/api/events`).
extension DashboardRoutes {
    /// `GET /api/status`.
    func status(_ request: Request, _ context: DashboardContext) async throws -> Response {
        Self.json(try await statusDocument(caller: try? access.caller(of: request, from: context.client).get()))
    }

    /// The status as `caller` is given it.
    func statusDocument(caller: AccessGuard.Caller?) async throws -> JSONValue {
        Self.given(try await Self.sharedStatus(source: source, access: access), signedIn: Self.isSignedIn(caller))
    }

    private static func isSignedIn(_ caller: AccessGuard.Caller?) -> Bool {
        if case .anonymous = caller ?? .anonymous { false } else { true }
    }

    /// The status as a caller is given it: whether it is signed in.
    private static func given(_ status: JSONValue, signedIn: Bool) -> JSONValue {
        guard case .object(var fields) = status else { return status }
        fields["signedIn"] = .bool(signedIn)
        return .object(fields)
    }

    /// The status as every caller is given it.
    private static func sharedStatus(source: DashboardSource, access: AccessGuard) async throws -> JSONValue {
        let document = try await source.reading { ledger, queue in
            try await StatusDocument.read(
                ledger: ledger, queue: queue, source: source.location, readOnly: !access.allowsActions)
        }
        guard case .object(var fields) = document else { return document }
        fields["readsNeedToken"] = .bool(access.access.readsNeedToken)
        // A shared batch's workers publish theirs in the database (the document has them); a state folder's run
        // in its progress file.
        fields["progress"] = .array(
            (fields["progress"]?.arrayValue ?? [])
                + source.runningStages().sorted { $0.key < $1.key }.flatMap { workflow, stages in
                    stages.map { stage in
                        guard case .object(var document) = stage.document else { return stage.document }
                        document["workflow"] = .string(workflow)
                        return .object(document)
                    }
                })
        return .object(fields)
    }

    /// The status pushed as it changes, for as long as the caller may read it. The caller was let in when the stream
    /// opened (a bearer token is checked then, once); after that only a signed-in browser's session can end, and
    /// the stream ends with it.
    func events(_ request: Request, _ context: DashboardContext) async -> Response {
        let caller = try? access.caller(of: request, from: context.client).get()
        let session: String? = if case .session(let id, _) = caller { id } else { nil }
        let (sessions, signedIn) = (access.sessions, Self.isSignedIn(caller))
        return await StatusStream(
            timing: streamTiming, feed: feed,
            mayRead: { session.map { sessions.session($0) != nil } ?? true },
            adapt: { Self.given($0, signedIn: signedIn) }
        ).response()
    }

    /// What the streams' feed reads each time: the status every caller is given, or why it cannot be read.
    static func feedReading(source: DashboardSource, access: AccessGuard) async -> StatusFeed.Reading {
        do {
            return .status(try await sharedStatus(source: source, access: access))
        } catch let error as StateError {
            return .unreadable(readFailure(error).message)
        } catch {
            // What a read of /api/status answers then: an internal error, with nothing of the server's inside.
            return .unreadable("internal error")
        }
    }
}
