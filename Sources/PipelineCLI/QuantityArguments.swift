public import ArgumentParser

public import struct StageKit.ByteCount
public import struct StageKit.TimeSpan

// Durations and sizes on the command line are read here, once, into the types the workflows use: a command's
// options hold a `TimeSpan` or a `ByteCount`, never the text. A value that is not one ends the command with exit
// code 2, the option and its help named.

extension TimeSpan: ExpressibleByArgument {
    /// Reads `30s`, `500ms`, `1h30m` or a number of seconds.
    public init?(argument: String) {
        self.init(parsing: argument)
    }

    /// As it would be written on the command line: `30s`, `500ms`.
    public var defaultValueDescription: String {
        let milliseconds = Int64((seconds * 1000).rounded())
        return milliseconds % 1000 == 0 ? "\(milliseconds / 1000)s" : "\(milliseconds)ms"
    }
}

extension TimeSpan {
    /// The span of `duration`: an option whose default a library declares as a `Duration` shows it as such.
    init(_ duration: Duration) {
        self.init(seconds: duration / .seconds(1))
    }
}

extension ByteCount: ExpressibleByArgument {
    /// Reads `20MiB`, `512KB` or a number of bytes.
    public init?(argument: String) {
        self.init(parsing: argument)
    }
}
