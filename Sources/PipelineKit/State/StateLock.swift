package import Foundation

#if canImport(Glibc)
    import Glibc
    import StageKit
#endif

/// The advisory lock that lets one process at a time use a state folder. The kernel releases it when
/// the process ends, however it ends.
package final class StateLock: Sendable {
    private let descriptor: Int32

    /// Takes the lock of `folder`, creating the folder if needed; throws ``StateError/Code-swift.struct/busy``
    /// when another process holds it. The lock file names the holder: its pid, and on a line of its own the
    /// `command` it runs when given (``holding(_:)``).
    package init(folder: URL, command: String? = nil) throws(StateError) {
        try StateFiles.createFolder(folder)
        let url = folder.appendingPathComponent("lock")
        let descriptor = open(url.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw StateFiles.failure("cannot open", url) }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let busy = errno == EWOULDBLOCK
            let holder = Self.holder(of: folder)
            close(descriptor)
            if busy {
                throw StateError(
                    code: .busy,
                    message: "the state folder \(folder.path) is in use by another pipeline process"
                        + (holder.map { " (pid \($0))" } ?? "")
                        + "; wait for it to finish, or give this run its own folder with --state DIR",
                    path: folder.path)
            }
            throw StateFiles.failure("cannot lock", url)
        }
        let pid = Array(("\(getpid())\n" + (command.map { "\($0)\n" } ?? "")).utf8)
        _ = ftruncate(descriptor, 0)
        _ = pwrite(descriptor, pid, pid.count, 0)
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)
    }

    /// Whether a process holds the lock of `folder` now: a shared lock cannot be taken beside it. Takes nothing.
    package static func isHeld(_ folder: URL) -> Bool {
        let descriptor = open(folder.appendingPathComponent("lock").path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return flock(descriptor, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK
    }

    /// Since when a process holds the lock of `folder` (it writes its pid into the lock file once it has it), or nil
    /// when none holds it.
    package static func heldSince(_ folder: URL) -> Date? {
        guard isHeld(folder) else { return nil }
        let attributes = try? FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent("lock").path)
        return attributes?[.modificationDate] as? Date
    }

    /// How much earlier than the clock a file's modification time may read (the kernel stamps files with a clock
    /// read at its ticks).
    package static let stampSlack: TimeInterval = 1

    /// The pid of the process that holds (or last held) the lock of `folder`, as it wrote it.
    package static func holder(of folder: URL) -> Int32? {
        lines(of: folder).first.flatMap { Int32($0) }
    }

    /// The process that holds the lock of `folder` now, with the command it named when it took it (if any), read
    /// together from one read of the lock file; nil when none holds it.
    package static func holding(_ folder: URL) -> (pid: Int32, command: String?)? {
        guard isHeld(folder) else { return nil }
        let lines = lines(of: folder)
        guard let pid = lines.first.flatMap({ Int32($0) }) else { return nil }
        return (pid, lines.dropFirst().first)
    }

    /// The lock file's lines, trimmed: the pid, then the command when one was named.
    private static func lines(of folder: URL) -> [String] {
        let text = (try? String(contentsOf: folder.appendingPathComponent("lock"), encoding: .utf8)) ?? ""
        return text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
    }
}
