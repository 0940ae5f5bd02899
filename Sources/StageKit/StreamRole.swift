/// How a stage takes part in streaming an export while it is written (`"stream": true`), as its type declares
/// it (``Stage/streamRole``): the engine starts a follower as soon as the producer it follows starts, and hands
/// both the same file as far as it is final, so the engine needs no list of which stage types stream.
public enum StreamRole: String, Sendable, Hashable, Codable, CaseIterable {
    /// The stage neither writes nor reads a file as it is written.
    case none
    /// The stage writes a file whose bytes behind its head are final as soon as they are written (an MP4 whose
    /// index goes last into room reserved at its head), and says how far they are; its ``Stage/landingOutput``
    /// is that file. Only the engine's own exports can: a producer publishes to a channel stage authors do not
    /// get.
    case producer
    /// The stage reads the file its ``Stage/inputFileOption`` names, the file of a producer it waits for, while
    /// the producer writes it, through ``FollowedExport``: it must send or copy the head last, since the
    /// producer rewrites it when it finishes.
    case follower
}
