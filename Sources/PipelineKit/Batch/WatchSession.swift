import StageKit

/// What a watch of input folders remembers between scans, so that each file is taken once it has stopped growing
/// and once only: a file that failed is taken again only when it changes or its retry is asked for
/// (``retry(_:)``), and a file passed over or skipped is reported once. A scan's files go through
/// ``settled(_:)``, its plan through ``unseen(in:)``, and the run's outcome through ``record(_:)``; the ledger
/// carries what is done across sessions.
public struct WatchSession: Sendable {
    private var tracker: SettleTracker
    /// Paths already reported as passed over or skipped.
    private var reported: Set<String> = []
    /// Files that failed in this session, as they were when they failed.
    private var failed: [String: FileStamp] = [:]
    /// The files of the latest scan, as they are now.
    private var stamps: [String: FileStamp] = [:]

    /// A session that takes a file once its size and modification time stayed the same for `settle`.
    public init(settle: Duration) {
        tracker = SettleTracker(settle: settle)
    }

    /// How long a file must stay unchanged before it is taken.
    public var settle: Duration { tracker.settle }

    /// The part of a scan to plan now: the files that have settled, and what was passed over that was not
    /// reported yet. Also returns when the next file may settle (nil: none is waiting).
    public mutating func settled(_ scan: Discovery) -> (ready: Discovery, next: ContinuousClock.Instant?) {
        stamps = Dictionary(scan.files.map { ($0.input.path, $0.stamp) }, uniquingKeysWith: { $1 })
        let (files, next) = tracker.settled(scan.files)
        var ready = scan
        ready.files = files
        ready.passedOver = scan.passedOver.filter { reported.insert($0.path).inserted }
        return (ready, next)
    }

    /// The items of `plan` to run now: not those done already, a skipped one only the first time, and a file that
    /// failed in this session only once it has changed.
    public mutating func unseen(in plan: BatchPlan) -> BatchPlan {
        var news = plan
        news.items = plan.items.filter { planned in
            let path = planned.input.path
            switch planned.action {
            case .reuse: return false
            case .skip: return reported.insert(path).inserted
            case .run: return failed[path] == nil || failed[path] != stamps[path]
            }
        }
        return news
    }

    /// Forgets that the files at `paths` failed, so that the next plan takes them up again though they did not
    /// change: their retry was asked for (a dashboard's Retry).
    public mutating func retry(_ paths: some Sequence<String>) {
        for path in paths { failed[path] = nil }
    }

    /// Remembers the files that failed in `outcome`, as the latest scan saw them.
    public mutating func record(_ outcome: RunOutcome) {
        for result in outcome.results where result.outcome == .failed {
            failed[result.path] = stamps[result.path]
        }
    }
}
