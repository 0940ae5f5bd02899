import NIOConcurrencyHelpers
package import StageKit

/// The file an export is writing, as far as it is final: what a streaming upload (`"stream": true`) reads
/// while the encode goes on. The runner makes one per export that a streaming stage follows and hands it to
/// both stages (``ExportStreamKey``); the export says where it writes, which bytes are final and durable
/// (the watermark) and when it is done, and the upload waits for those moments.
///
/// The export writes an MP4 whose index goes into room reserved ahead of the media data: only the head (the
/// file type, that room and the mdat header) changes at the end, every byte after it is final once written.
package final class ExportStream: Sendable {
    /// What is known of the file at one moment.
    package struct Snapshot: Sendable, Equatable {
        /// Where the finished file goes: the export's `path` output.
        package var destination: String?
        /// The file being written (a hidden partial file next to the destination).
        package var writing: String?
        /// Bytes at the start that change when the export finishes.
        package var head: Int64 = 0
        /// Bytes written and synced: those after ``head`` are final.
        package var final: Int64 = 0
        /// The size of the finished file, at ``destination``; nil while it is written.
        package var finishedSize: Int64?
        /// Why the export ended without a file (it failed, or was skipped); nil otherwise.
        package var failure: String?
        /// The export wrote its file again after saying bytes were final: those bytes may differ.
        package var rewritten = false
        /// The export ended (finished, failed, or will not stream): no more snapshots come.
        package var ended = false
        /// How many attempts of the export began writing (its `retry`): a new attempt writes a new file,
        /// which a reader of an earlier attempt's file must open instead.
        package var attempt = 0

        /// Whether bytes are streamed: the export said where it writes them.
        package var isStreaming: Bool { writing != nil }
    }

    private struct State {
        var snapshot = Snapshot()
        var watchers: [Int: AsyncStream<Snapshot>.Continuation] = [:]
        var nextWatcher = 0
    }

    private let state = NIOLockedValueBox(State())

    /// A stream with nothing known yet.
    package init() {}

    /// What is known now.
    package var current: Snapshot { state.withLockedValue { $0.snapshot } }

    /// The snapshots from now on: the current one first, then each change (only the latest one waits when the
    /// reader is slower); the sequence ends once the export ended.
    package func snapshots() -> AsyncStream<Snapshot> {
        let (stream, continuation) = AsyncStream<Snapshot>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = state.withLockedValue { state -> Int? in
            continuation.yield(state.snapshot)
            if state.snapshot.ended {
                continuation.finish()
                return nil
            }
            let id = state.nextWatcher
            state.nextWatcher += 1
            state.watchers[id] = continuation
            return id
        }
        if let id {
            continuation.onTermination = { [weak self] _ in
                self?.state.withLockedValue { _ = $0.watchers.removeValue(forKey: id) }
            }
        }
        return stream
    }

    /// Waits for the export to begin writing or to end; returns the snapshot then.
    package func started() async -> Snapshot {
        for await snapshot in snapshots() where snapshot.isStreaming || snapshot.ended {
            return snapshot
        }
        return current
    }

    // MARK: The export's side

    /// An attempt of the export began writing `destination`'s bytes into `writing` (a file of its own, even at
    /// the same path as an earlier attempt's); the first `head` bytes change at the end.
    package func open(destination: String, writing: String, head: Int64) {
        update {
            $0.destination = destination
            $0.writing = writing
            $0.head = head
            $0.final = head
            $0.rewritten = false
            $0.attempt += 1
        }
    }

    /// The bytes up to `final` are written and synced.
    package func advance(to final: Int64) {
        update { $0.final = max($0.final, final) }
    }

    /// The export writes the file again: what was final may change.
    package func rewrite() {
        update { $0.rewritten = true }
    }

    /// The file is finished and renamed to `destination`, with `size` bytes.
    package func finish(destination: String, size: Int64) {
        update {
            $0.destination = destination
            $0.finishedSize = size
            $0.final = size
            $0.ended = true
        }
    }

    /// The export ended without a file: `reason` says why.
    package func abandon(_ reason: String) {
        update {
            guard $0.finishedSize == nil else { return }
            $0.failure = reason
            $0.ended = true
        }
    }

    private func update(_ change: (inout Snapshot) -> Void) {
        let (snapshot, watchers, ended) = state.withLockedValue { state in
            guard !state.snapshot.ended else { return (state.snapshot, [AsyncStream<Snapshot>.Continuation](), false) }
            change(&state.snapshot)
            let watchers = Array(state.watchers.values)
            if state.snapshot.ended { state.watchers = [:] }
            return (state.snapshot, watchers, state.snapshot.ended)
        }
        for watcher in watchers {
            watcher.yield(snapshot)
            if ended { watcher.finish() }
        }
    }
}

/// The stream of the export a streaming stage follows, and of the export itself (``ExportStream``).
package enum ExportStreamKey: ServiceKey {
    package typealias Value = ExportStream
}

/// A follower reads the export through the stage author's view of it.
extension ExportStream: FollowedExport {
    package func waitFor(bytes: Int64, of attempt: Int) async throws -> ExportState {
        for await snapshot in snapshots()
        where snapshot.attempt != attempt || snapshot.ended
            || (snapshot.isStreaming && !snapshot.rewritten && snapshot.final >= bytes)
        {
            return ExportState(snapshot)
        }
        try Task.checkCancellation()
        return ExportState(current)
    }
}

extension ExportState {
    /// What a follower is told of a snapshot: the file to read now, and nothing final after a rewrite until the
    /// export finishes.
    init(_ snapshot: ExportStream.Snapshot) {
        let finished = snapshot.finishedSize != nil
        self.init(
            file: snapshot.failure != nil ? nil : finished ? snapshot.destination : snapshot.writing,
            head: snapshot.head, final: snapshot.rewritten && !finished ? 0 : snapshot.final,
            finishedSize: snapshot.finishedSize, attempt: snapshot.attempt, rewritten: snapshot.rewritten,
            failure: snapshot.failure)
    }
}
