import StageKit

/// The status read once a second for every open status stream together: however many pages follow it, the ledger
/// is read once a second while one of them is open, and not at all while none is. A feed takes a limited number of
/// streams; beyond them a page reads the status itself (see ``StatusStream``).
actor StatusFeed {
    /// What one read found: the status (the same for every caller), or why the ledger cannot be read.
    enum Reading: Sendable, Equatable {
        case status(JSONValue)
        case unreadable(String)
    }

    private let interval: Duration
    private let limit: Int
    private let read: @Sendable () async -> Reading
    private var streams: [Int: AsyncStream<Reading>.Continuation] = [:]
    private var nextID = 0
    private var latest: Reading?
    private var reading: Task<Void, Never>?

    /// A feed that reads with `read` every `interval` while a stream is open, for at most `limit` streams at a time.
    init(interval: Duration, limit: Int, read: @escaping @Sendable () async -> Reading) {
        self.interval = interval
        self.limit = limit
        self.read = read
    }

    /// How many streams follow the feed now.
    var followers: Int { streams.count }

    /// A new stream's readings, starting with the last one when there is one, and its id to ``leave(_:)`` with; nil
    /// when the feed already has all the streams it takes. The stream also leaves when its readings are dropped.
    func join() -> (id: Int, readings: AsyncStream<Reading>)? {
        guard streams.count < limit else { return nil }
        let (readings, continuation) = AsyncStream.makeStream(of: Reading.self, bufferingPolicy: .bufferingNewest(1))
        let id = nextID
        nextID += 1
        streams[id] = continuation
        continuation.onTermination = { _ in Task { await self.leave(id) } }
        if let latest { continuation.yield(latest) }
        if reading == nil { reading = Task { await self.readWhileFollowed() } }
        return (id, readings)
    }

    /// Ends stream `id`'s readings; nothing when it already left.
    func leave(_ id: Int) {
        streams.removeValue(forKey: id)?.finish()
    }

    private func readWhileFollowed() async {
        while !streams.isEmpty {
            let reading = await read()
            latest = reading
            for stream in streams.values { stream.yield(reading) }
            try? await Task.sleep(for: interval)
        }
        // No await since the check: a stream that joins now starts the next reader.
        (reading, latest) = (nil, nil)
    }
}
