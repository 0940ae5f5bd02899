import Foundation
import StageKit

/// What a list of items asks a ledger for: which items (by name, status, error kind, stage, worker, workflow), in
/// which order, and which page of them. Parsed once where a request enters (``init(parameters:)``) and passed as it
/// is to both ledgers (``LedgerBrowsing/items(matching:)``), so a dashboard over a state folder and one over a
/// shared batch filter by the same rules.
public struct ItemQuery: Sendable, Hashable {
    /// The order of a list.
    public enum Order: String, Sendable, CaseIterable {
        /// The most recently changed first (the larger number first among items changed at once).
        case updated
        /// By name (the path relative to the input folder), in the byte order of its UTF-8.
        case name
        /// The order workers take queued items in (the oldest queued first): the order of `status=queued`.
        case queue
    }

    /// A status a list can be filtered by, as the API names it.
    public enum Status: String, Sendable, CaseIterable {
        /// Waiting for a worker (a shared batch's queue; a state folder's unstarted files are not items yet).
        case queued
        /// Admitted and not finished; in a shared batch, held by a live lease.
        case running
        /// Finished successfully.
        case done
        /// Failed.
        case failed
        /// Cancelled.
        case cancelled
        /// Interrupted (the process stopped while it ran).
        case interrupted

        /// The status the ledger holds items of this status in (a queued item is held as pending too).
        public var held: ItemStatus {
            switch self {
            case .queued, .running: .pending
            case .done: .succeeded
            case .failed: .failed
            case .cancelled: .cancelled
            case .interrupted: .interrupted
            }
        }
    }

    /// Items of this workflow only; nil: of every workflow.
    public var workflow: String?
    /// Items whose name (relative path) contains this text, letters A–Z matched in either case; nil: any name.
    public var name: String?
    /// Items in this status; nil: any.
    public var status: Status?
    /// Failed items of this error kind (`damaged-input`, `http`, …); nil: any. Items that failed before kinds were
    /// recorded count as `failed`.
    public var errorKind: String?
    /// Items whose current version failed in this stage or runs it now; nil: any.
    public var stage: String?
    /// A shared batch's items this worker holds, or held when its lease ran out (a finished item records none).
    public var worker: String?
    /// The order.
    public var order: Order
    /// At most this many items.
    public var limit: Int
    /// After the first `offset` of the list.
    public var offset: Int

    /// The most items one page holds.
    public static let maxLimit = 500
    /// The items one page holds when the request does not say.
    public static let defaultLimit = 100

    /// A query; the order defaults to ``Order/queue`` for queued items and ``Order/updated`` for the others.
    public init(
        workflow: String? = nil, name: String? = nil, status: Status? = nil, errorKind: String? = nil,
        stage: String? = nil, worker: String? = nil, order: Order? = nil, limit: Int = defaultLimit, offset: Int = 0
    ) {
        self.workflow = workflow
        self.name = name
        self.status = status
        self.errorKind = errorKind
        self.stage = stage
        self.worker = worker
        self.order = order ?? (status == .queued ? .queue : .updated)
        self.limit = limit
        self.offset = offset
    }

    /// A query from a request's parameters (`q`, `status`, `error`, `stage`, `worker`, `workflow`, `sort`, `limit`,
    /// `offset`); empty values mean "any". Throws a message for people when one is not understood.
    public init(parameters: [String: String]) throws(ItemQueryError) {
        func given(_ key: String) -> String? {
            guard let value = parameters[key], !value.isEmpty else { return nil }
            return value
        }
        func count(_ key: String, default value: Int, upTo maximum: Int) throws(ItemQueryError) -> Int {
            guard let text = given(key) else { return value }
            guard let number = Int(text), number >= 0, number <= maximum else {
                throw ItemQueryError("\(key) must be a whole number from 0 to \(maximum), not \(text)")
            }
            return number
        }
        var status: Status?
        if let text = given("status") {
            if text == "skipped" {
                throw ItemQueryError("skipped files are counted, not listed: they are not items of the ledger")
            }
            guard let named = Status(rawValue: text) else {
                let names = Status.allCases.map(\.rawValue).joined(separator: ", ")
                throw ItemQueryError("status must be one of \(names), not \(text)")
            }
            status = named
        }
        var order: Order?
        if let text = given("sort") {
            guard let named = Order(rawValue: text) else {
                throw ItemQueryError("sort must be updated, name or queue, not \(text)")
            }
            order = named
        }
        for key in ["q", "error", "stage", "worker", "workflow"] {
            if let text = given(key), text.utf8.count > 1000 {
                throw ItemQueryError("\(key) is longer than 1000 bytes")
            }
        }
        self.init(
            workflow: given("workflow"), name: given("q"), status: status, errorKind: given("error"),
            stage: given("stage"), worker: given("worker"), order: order,
            limit: try count("limit", default: Self.defaultLimit, upTo: Self.maxLimit),
            offset: try count("offset", default: 0, upTo: Int(Int32.max)))
    }

    /// The `LIKE` pattern (escaped with `\`) that matches names containing ``name``: `%` and `_` in it are literal.
    public var namePattern: String? {
        name.map { text in
            "%"
                + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
                .replacingOccurrences(of: "_", with: "\\_") + "%"
        }
    }

    /// Whether failures recorded without a kind match the error kind asked for (they are shown as `failed`).
    public var errorKindIncludesUnkinded: Bool { errorKind == ErrorKind.failed.rawValue }

    /// The stage statuses ``stage`` matches: the stage an item failed in, or the one it runs.
    public static let stageStatuses = [StageRecord.Status.failed.rawValue, StageRecord.Status.running.rawValue]
}

/// A list's parameters that are not understood, with a message for people.
public struct ItemQueryError: Error, Sendable, Hashable {
    /// What is wrong.
    public var message: String

    /// An error.
    public init(_ message: String) { self.message = message }
}

/// A page of a list of items with their workflows, and how many items the whole list has.
public struct ItemList: Sendable {
    /// The page.
    public var items: [(workflow: String, item: LedgerItem)]
    /// How many items match the query, on every page.
    public var total: Int

    /// A page.
    public init(items: [(workflow: String, item: LedgerItem)], total: Int) {
        self.items = items
        self.total = total
    }
}
