/// What a run does with a file whose name says it is media but that FFmpeg cannot read, or that decodes short of
/// the duration its container declares (a copy cut off, a damaged disk): the workflow's `inputs.damaged`.
public enum DamagedInputPolicy: String, Sendable, Hashable, CaseIterable, Codable {
    /// The item fails with ``ErrorKind/damagedInput`` and the reason, before anything is published (the default).
    case fail
    /// A file FFmpeg cannot read is skipped with the reason, as a file that does not claim to be media is; one
    /// that reads but decodes short fails, since its stages have begun.
    case skip
    /// What decodes is exported with a warning; a file FFmpeg cannot read fails.
    case export

    /// The policy when a workflow names none.
    public static let `default` = DamagedInputPolicy.fail
}

/// The key of the run's ``DamagedInputPolicy`` in ``StageContext/services``; a stage that finds none applies
/// ``DamagedInputPolicy/default``.
public enum DamagedInputPolicyKey: ServiceKey {
    public typealias Value = DamagedInputPolicy
}

/// Whether a file claims to be media: its name ends in an extension media files have. A file that claims to be
/// media and is not readable is damaged; one that does not is only not media.
public enum MediaFileName {
    /// The extensions of video, audio and image-sequence containers FFmpeg reads, lower-case.
    public static let extensions: Set<String> = [
        "3g2", "3gp", "aac", "aif", "aiff", "asf", "avi", "dv", "f4v", "flac", "flv", "m2t", "m2ts", "m2v", "m4a",
        "m4v", "mj2", "mkv", "mov", "mp3", "mp4", "mpeg", "mpg", "mts", "mxf", "oga", "ogg", "ogv", "opus", "qt",
        "rm", "rmvb", "ts", "vob", "wav", "webm", "wma", "wmv", "y4m",
    ]

    /// Whether `path`'s extension is one of ``extensions`` (in any case).
    public static func claimsMedia(_ path: String) -> Bool {
        guard let dot = path.lastIndex(of: "."), !path[dot...].contains("/") else { return false }
        return extensions.contains(path[path.index(after: dot)...].lowercased())
    }
}

extension DamagedInputPolicy {
    /// The reason a decode that reached `decoded` of `declared` seconds falls short: nil unless it is short by more
    /// than a second or by more than 2 % of `declared`, whichever is less, and by more than half a second (a
    /// container's duration may run past its last frame by a frame or by the audio encoder's priming).
    public static func shortfall(decoded: Double, declared: Double) -> String? {
        let tolerance = max(0.5, min(1, declared * 0.02))
        guard declared > 0, declared - decoded > tolerance else { return nil }
        return "decoded \(formatted(decoded)) of the \(formatted(declared)) s its container declares"
    }

    private static func formatted(_ seconds: Double) -> String {
        let hundredths = Int((seconds * 100).rounded())
        let fraction = hundredths % 100
        return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }
}

extension StageFailure {
    /// The failure of an item whose input is damaged (``ErrorKind/damagedInput``): `reason` is FFmpeg's, or what a
    /// decode fell short by (``DamagedInputPolicy/shortfall(decoded:declared:)``). Fatal: the file stays damaged.
    public static func damagedInput(_ reason: String) -> StageFailure {
        StageFailure(
            "the input is damaged or truncated: \(reason) (inputs.damaged: \"export\" exports what decodes)",
            kind: .damagedInput)
    }
}
