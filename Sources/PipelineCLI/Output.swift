import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Writing to the terminal or a pipe, one whole line at a time even from many tasks.
enum Output {
    private static let lock = NSLock()

    /// A file's name (or a message or path that may quote one) as one line shows it: control characters (a
    /// newline, a terminal escape) would split a line in two or drive the terminal, so they are written as escapes
    /// (`new\nline.mp4`, `\u{1B}`).
    static func shown(_ item: String) -> String {
        // Printable ASCII has no control character: most names are shown without looking up a Unicode property
        // per character (a plan of a million files prints a million names).
        if item.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return item }
        guard item.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else { return item }
        var text = ""
        for scalar in item.unicodeScalars {
            switch scalar {
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case _ where scalar.properties.generalCategory == .control:
                text += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            default: text.unicodeScalars.append(scalar)
            }
        }
        return text
    }

    /// Writes text to standard output as it is.
    static func write(_ text: String) {
        lock.lock()
        defer { lock.unlock() }
        write(text, to: STDOUT_FILENO)
    }

    /// Writes a line to standard output.
    static func line(_ text: String) {
        write(text + "\n")
    }

    /// Writes a line to standard error.
    static func error(_ text: String) {
        lock.lock()
        defer { lock.unlock() }
        write(text + "\n", to: STDERR_FILENO)
    }

    /// Writes all of `text`, waiting when a non-blocking descriptor (inherited from the parent) is full. A reader
    /// that went away (`pipeline status | head`: EPIPE) wants no more of it, and the text is dropped, where
    /// Foundation's `write(_:)` would crash the process; so is text that cannot be written at all.
    private static func write(_ text: String, to descriptor: Int32) {
        var text = text
        text.withUTF8 { bytes in
            guard let base = bytes.baseAddress else { return }
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(descriptor, base + offset, bytes.count - offset)
                if written >= 0 {
                    offset += written
                } else if errno == EAGAIN {
                    var ready = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&ready, 1, -1)
                } else if errno != EINTR {
                    return
                }
            }
        }
    }

    /// Whether standard output is a terminal (then progress is drawn live).
    static var isTerminal: Bool { isatty(STDOUT_FILENO) == 1 }
}

/// Lines collected and written to standard output in blocks of 64 KiB, for commands that print a line per
/// file of a large batch.
struct BufferedLines {
    private var text = ""

    /// Adds a line; writes the block when it is full.
    mutating func line(_ line: String) {
        text += line
        text += "\n"
        if text.utf8.count >= 1 << 16 { flush() }
    }

    /// Writes what has been collected.
    mutating func flush() {
        guard !text.isEmpty else { return }
        Output.write(text)
        text = ""
    }
}

extension String {
    /// The string followed by spaces up to `width` characters (unchanged when it is as long already).
    func padded(to width: Int) -> String {
        let count = self.count
        return count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
