import AsyncHTTPClient
import Crypto
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
public import PipelineKit
import StageKit

/// Sends a batch's notifications to its targets, beside the batch and never in its way.
///
/// Every announcement is sent by a task of its own, so a receiver that hangs or fails holds up no item and fails
/// nothing: its problems are reported as warnings. Each message is first recorded under its key in the ledger
/// (``NotificationLog``), and only the process that records it sends it: an event is announced at most once,
/// whether a run repeats it, a rerun after a `kill -9` finishes it, or several workers see a queue drain.
/// Failed deliveries are retried with a growing delay (network errors, 429 and 5xx answers).
public final class Notifier: Sendable {
    private let targets: [NotificationTarget]
    private let log: any NotificationLog
    private let client: HTTPClient
    private let warn: @Sendable (String) -> Void
    private let deliveries = NIOLockedValueBox<[Task<Void, Never>]>([])

    /// Attempts per message, the first included.
    static let attempts = 4
    /// The wait before the second attempt; each later one waits twice as long.
    static let firstDelay: Duration = .milliseconds(500)
    /// How long one attempt may take.
    static let requestTimeout: TimeAmount = .seconds(10)

    /// A notifier for `targets` that records what it sends in `log` and reports problems through `warn`.
    public init(targets: [NotificationTarget], log: any NotificationLog, warn: @escaping @Sendable (String) -> Void) {
        self.targets = targets
        self.log = log
        self.warn = warn
        client = HTTPClient(eventLoopGroupProvider: .singleton)
    }

    /// Whether any target wants `event`.
    public func wants(_ event: NotificationEvent) -> Bool {
        targets.contains { $0.events.contains(event) }
    }

    /// Announces `notice` to the targets that want its event, once per `key`; returns at once.
    public func announce(_ notice: Notice, key: String) {
        let wanting = targets.filter { $0.events.contains(notice.event) }
        guard !wanting.isEmpty else { return }
        let task = Task { [self] in
            await withTaskGroup(of: Void.self) { group in
                for target in wanting {
                    group.addTask { await self.deliver(notice, key: key, to: target) }
                }
            }
        }
        deliveries.withLockedValue { $0.append(task) }
    }

    /// Waits for the deliveries under way, at most `grace`; those still under way then are given up (and
    /// reported). Call it once, when the batch is over.
    public func finish(within grace: Duration) async {
        let pending = deliveries.withLockedValue { $0 }
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for task in pending { await task.value }
                return true
            }
            group.addTask {
                try? await Task.sleep(for: grace)
                return false
            }
            if await group.next() == false {
                warn("notifications: gave up on deliveries still under way after \(grace.components.seconds) s")
            }
            // Before the group ends: it waits for its child, which waits for these.
            for task in pending { task.cancel() }
            group.cancelAll()
        }
        try? await client.shutdown()
    }

    private func deliver(_ notice: Notice, key: String, to target: NotificationTarget) async {
        let endpoint = target.url.absoluteString
        do {
            guard try await log.claimNotification("\(key) \(WebhookName.of(endpoint))") else { return }
        } catch {
            warn("notifications: cannot record \(notice.event.rawValue) for \(Self.shown(target)), not sent: \(error)")
            return
        }
        var request = HTTPClientRequest(url: endpoint)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "User-Agent", value: "media-pipeline")
        let body = notice.body(for: target.format).serialized()
        var delay = Self.firstDelay
        for attempt in 1...Self.attempts {
            request.body = .bytes(ByteBuffer(string: body))
            let problem: String
            do {
                let response = try await client.execute(request, timeout: Self.requestTimeout)
                _ = try? await response.body.collect(upTo: 1 << 16)
                let status = response.status.code
                if (200..<300).contains(status) { return }
                problem = "answered \(status)"
                guard status == 429 || status >= 500 else { break }
            } catch {
                if Task.isCancelled { return }
                problem = "\(error)"
            }
            guard attempt < Self.attempts else {
                warn(
                    "notifications: \(notice.event.rawValue) to \(Self.shown(target)) failed after \(attempt) attempts: \(problem)"
                )
                return
            }
            try? await Task.sleep(for: delay)
            if Task.isCancelled { return }
            delay *= 2
        }
        warn("notifications: \(Self.shown(target)) refused \(notice.event.rawValue)")
    }

    /// A target's address for messages: scheme and host only, since webhook paths carry their secret.
    static func shown(_ target: NotificationTarget) -> String {
        "\(target.url.scheme ?? "https")://\(target.url.host ?? "?")"
    }
}

extension Notifier {
    /// The summary of a workflow's batch as the ledger holds it now, with the key that names this outcome: the
    /// items, their versions and statuses. A rerun that changes nothing finds the same key, so it announces
    /// nothing again; a rerun that finishes what a killed run left, or runs new files, announces its outcome.
    public static func batchFinished(workflow: String, store: any StateStore, skipped: Int = 0)
        async throws(StateError) -> (notice: Notice, key: String)
    {
        let items = try await store.snapshot(workflow: workflow).items
        var counts: [String: Int] = [:]
        var digest = SHA256()
        digest.update(data: Data(workflow.utf8))
        for item in items.sorted(by: { $0.id < $1.id }) {
            counts[item.status.reportedName, default: 0] += 1
            digest.update(data: Data("\n\(item.id):\(item.version):\(item.status.rawValue)".utf8))
        }
        if skipped > 0 { counts["skipped"] = skipped }
        let failures = items.filter { $0.status == .failed }.sorted { $0.id < $1.id }.prefix(Notice.summaryFailures)
            .map { item in
                Notice.FailedItem(
                    path: item.input.relativePath, error: item.error?.message ?? "failed",
                    errorKind: item.error?.kind.rawValue ?? "failed")
            }
        let key = "batchFinished " + digest.finalize().map { String(format: "%02x", $0) }.joined()
        return (.batchFinished(workflow: workflow, counts: counts, failures: Array(failures)), key)
    }
}
