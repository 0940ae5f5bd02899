import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Writing to the terminal or a pipe, one whole line at a time even from many tasks.
enum Output {
    private static let lock = NSLock()

    /// Writes text to standard output as it is.
    static func write(_ text: String) {
        lock.lock()
        defer { lock.unlock() }
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    /// Writes a line to standard output.
    static func line(_ text: String) {
        write(text + "\n")
    }

    /// Writes a line to standard error.
    static func error(_ text: String) {
        lock.lock()
        defer { lock.unlock() }
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// Whether standard output is a terminal (then progress is drawn live).
    static var isTerminal: Bool { isatty(STDOUT_FILENO) == 1 }
}
