import Foundation
import NIOConcurrencyHelpers
import StageKit

#if canImport(Glibc)
    import Glibc
#endif

/// Tells when something changes under input folders: inotify on Linux, or a rescan every `pollInterval` where
/// inotify is not available (or not wanted). Waiting happens on a thread of its own, never on the
/// cooperative pool.
public final class FolderWatcher: Sendable {
    private let descriptor: Int32?
    private let pollInterval: Duration
    private let watched = NIOLockedValueBox<Set<String>>([])
    /// Set by ``wake()`` until a wait returns for it.
    private let woken = NIOLockedValueBox(false)

    /// Watches `folders` (and, as ``watch(_:)`` adds them, their subfolders); with `polling`, or when inotify
    /// cannot start, it only wakes up every `pollInterval`.
    public init(folders: [String], polling: Bool, pollInterval: Duration = .seconds(1)) {
        self.pollInterval = pollInterval
        let descriptor = polling ? -1 : inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        self.descriptor = descriptor >= 0 ? descriptor : nil
        watch(folders)
    }

    deinit {
        if let descriptor { close(descriptor) }
    }

    /// Whether changes are noticed as they happen (inotify) rather than by polling.
    public var isNotified: Bool { descriptor != nil }

    /// Watches more folders (new subfolders found by a scan); folders already watched are left alone.
    public func watch(_ folders: [String]) {
        guard let descriptor else { return }
        let mask = UInt32(IN_CREATE | IN_CLOSE_WRITE | IN_MODIFY | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_ATTRIB)
        watched.withLockedValue { watched in
            for folder in folders where !watched.contains(folder) {
                if inotify_add_watch(descriptor, folder, mask) >= 0 { watched.insert(folder) }
            }
        }
    }

    /// Ends the current wait, or the next one at once, as a change would (within a quarter of a second): something
    /// other than the folders asks the watch to look again (a retry requested from another process).
    public func wake() {
        woken.withLockedValue { $0 = true }
    }

    /// Waits until something changes, ``wake()`` is called, or `timeout` passes (nil: no timeout); returns whether
    /// something changed or woke it. Returns at once, with false, when the task is cancelled.
    public func wait(timeout: Duration?) async -> Bool {
        let cancelled = NIOLockedValueBox(false)
        let limit = descriptor == nil ? min(timeout ?? pollInterval, pollInterval) : timeout
        return await withTaskCancellationHandler {
            await BlockingWork.runLong { [descriptor, woken] in
                let deadline = limit.map { ContinuousClock.now + $0 }
                while !cancelled.withLockedValue({ $0 }) {
                    let woke = woken.withLockedValue { woke in
                        defer { woke = false }
                        return woke
                    }
                    if woke { return true }
                    let remaining = deadline.map { $0 - ContinuousClock.now }
                    if let remaining, remaining <= .zero { return descriptor == nil }
                    let slice = min(remaining ?? .milliseconds(250), .milliseconds(250))
                    guard let descriptor else {
                        usleep(UInt32(slice.seconds * 1_000_000))
                        continue
                    }
                    var request = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                    if poll(&request, 1, Int32(slice.seconds * 1000)) > 0 {
                        var buffer = [UInt8](repeating: 0, count: 64 << 10)
                        while read(descriptor, &buffer, buffer.count) > 0 {}
                        return true
                    }
                }
                return false
            }
        } onCancel: {
            cancelled.withLockedValue { $0 = true }
        }
    }
}

/// Decides when a file has stopped growing: its size and modification time unchanged for `settle`.
public struct SettleTracker: Sendable {
    private struct Observation {
        var size: Int64
        var modified: Int64
        var since: ContinuousClock.Instant
    }

    /// How long a file must stay unchanged.
    public let settle: Duration
    private var observations: [String: Observation] = [:]

    /// A tracker with this settle time.
    public init(settle: Duration) {
        self.settle = settle
    }

    /// Splits files into those settled now and the rest; also returns when the next one may settle.
    public mutating func settled(_ files: [DiscoveredFile], now: ContinuousClock.Instant = .now) -> (
        ready: [DiscoveredFile], next: ContinuousClock.Instant?
    ) {
        var ready: [DiscoveredFile] = []
        var next: ContinuousClock.Instant?
        var seen: [String: Observation] = [:]
        for file in files {
            let stamp = file.stamp
            // A file seen for the first time has been unchanged since its modification time.
            let age = Date().timeIntervalSince1970 - Double(stamp.modifiedNanoseconds) / 1e9
            var observation =
                observations[stamp.path]
                ?? Observation(
                    size: stamp.size, modified: stamp.modifiedNanoseconds,
                    since: now - .seconds(max(0, min(age, settle.seconds))))
            if observation.size != stamp.size || observation.modified != stamp.modifiedNanoseconds {
                observation = Observation(size: stamp.size, modified: stamp.modifiedNanoseconds, since: now)
            }
            seen[stamp.path] = observation
            let due = observation.since + settle
            if due <= now {
                ready.append(file)
            } else {
                next = min(next ?? due, due)
            }
        }
        observations = seen
        return (ready, next)
    }
}
