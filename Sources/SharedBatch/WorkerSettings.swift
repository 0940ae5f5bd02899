/// How a worker claims and holds items.
public struct WorkerSettings: Sendable {
    /// Items worked on at once.
    public var jobs: Int
    /// How long a claim holds an item without a heartbeat: a worker that dies is taken over after this long.
    public var lease: Duration
    /// How often an idle worker looks for work.
    public var poll: Duration
    /// Takeovers without progress after which an item (or a segment unit) is failed as abandoned
    /// (``TakeoverLimit``).
    public var abandonAfter: Int

    /// The lease when none is given (`pipeline worker --lease`).
    public static let defaultLease: Duration = .seconds(30)
    /// How often an idle worker looks for work when not told (`pipeline worker --poll`).
    public static let defaultPoll: Duration = .milliseconds(500)

    /// Settings; the heartbeat renews the leases three times per lease. `abandonAfter` is held to
    /// ``TakeoverLimit/bounds``.
    public init(
        jobs: Int = 1, lease: Duration = defaultLease, poll: Duration = defaultPoll,
        abandonAfter: Int = TakeoverLimit.defaultLimit
    ) {
        self.jobs = max(1, jobs)
        self.lease = lease
        self.poll = poll
        self.abandonAfter = min(max(abandonAfter, TakeoverLimit.bounds.lowerBound), TakeoverLimit.bounds.upperBound)
    }

    /// How often the leases are renewed: three times per lease, so that one late or failed renewal loses nothing.
    public var heartbeat: Duration { lease / 3 }

    /// How long the leases may go unrenewed before the work under them stops: they are about to run out, other
    /// workers may take the work over, and this one could not record it anyway.
    public var silenceLimit: Duration { lease - heartbeat }
}
