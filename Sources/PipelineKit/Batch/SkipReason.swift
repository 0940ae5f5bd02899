import StageKit

/// Why a file, an item or a stage of an item is left alone. The engine keeps the reason typed; it becomes text
/// only where it is shown (events, `pipeline plan` and `status`), and a run's totals count skips by ``group``.
public enum SkipReason: Sendable, Hashable, CustomStringConvertible {
    /// A hidden file or folder (its name starts with a dot).
    case hidden
    /// A link whose target is gone.
    case brokenLink
    /// An entry that could not be stat'ed, with the error.
    case unreadable(String)
    /// A folder found while `inputs.recursive` is off.
    case folder
    /// A folder that could not be listed, with the error.
    case unlistable(String)
    /// A folder reached again (through a link): the first path it was scanned at.
    case sameFolder(as: String)
    /// Neither a regular file nor a folder (a FIFO, a device).
    case notRegularFile
    /// The metadata sidecar of another file.
    case sidecar(of: String)
    /// A file's metadata (its sidecar) could not be read, with the error.
    case unreadableMetadata(String)
    /// No `inputs.include` pattern matches.
    case notIncluded(by: [String])
    /// An `inputs.exclude` pattern matches.
    case excluded(by: String)
    /// The file's content could not be read to fingerprint it, with the error.
    case unreadableContent(String)
    /// Outside `inputs.limits`.
    case outsideLimits(LimitViolation)
    /// A stage reads the input as media and FFmpeg cannot read it, with FFmpeg's error.
    case notMedia(String)
    /// `inputs.limits` needs the file's media facts and FFmpeg cannot read them, with FFmpeg's error.
    case limitsUncheckable(String)
    /// The same content is at another path of the batch, which takes it up.
    case sameContent(as: String)
    /// `--failed`, and the item did not fail last time.
    case notFailed
    /// The item was cancelled; `donePath` is the path it is known by, when it is not this file's.
    case cancelled(donePath: String?)
    /// `pipeline cancel` stopped and undid it in this run.
    case cancelledByRequest
    /// A stage not run because a stage it waits for (directly or through others) failed in this run.
    case waitsFor(failed: String)

    public var description: String {
        switch self {
        case .hidden: "hidden"
        case .brokenLink: "a broken link"
        case .unreadable(let error): "cannot read it: \(error)"
        case .folder: "a folder (set inputs.recursive to go into folders)"
        case .unlistable(let error): "cannot list: \(error)"
        case .sameFolder(let first): "the same folder as \(first)"
        case .notRegularFile: "not a regular file"
        case .sidecar(let owner): "sidecar (the metadata of \(owner))"
        case .unreadableMetadata(let error): error
        case .notIncluded(let patterns): "not included by \(patterns.joined(separator: ", "))"
        case .excluded(let pattern): "excluded by \(pattern)"
        case .unreadableContent(let error): error
        case .outsideLimits(let violation): violation.description
        case .notMedia(let error): "not media FFmpeg can read: \(error)"
        case .limitsUncheckable(let error): "cannot check inputs.limits: \(error)"
        case .sameContent(let owner): "the same content as \(owner)"
        case .notFailed: "not failed last time (--failed)"
        case .cancelled(let donePath):
            "cancelled\(donePath.map { " (as \($0))" } ?? "") (run with --reprocess to take it up again)"
        case .cancelledByRequest: "cancelled by pipeline cancel"
        case .waitsFor(let stage): "waits for stage \(stage), which failed"
        }
    }

    /// How a run's totals count the skip: per kind, not per file ("excluded by *.tmp" is one group whatever the
    /// file, and so is "the same content as another file").
    public var group: String {
        switch self {
        case .hidden, .brokenLink, .notRegularFile, .sameFolder, .notIncluded, .excluded, .cancelledByRequest:
            description
        case .unreadable: "cannot read it"
        case .folder: "a folder"
        case .unlistable: "cannot list"
        case .sidecar: "sidecar"
        case .unreadableMetadata: "cannot read its metadata"
        case .unreadableContent: "cannot read its content"
        case .outsideLimits(let violation): violation.group
        case .notMedia: "not media FFmpeg can read"
        case .limitsUncheckable: "cannot check inputs.limits"
        case .sameContent: "the same content as another file"
        case .notFailed: "not failed last time"
        case .cancelled: "cancelled"
        case .waitsFor: "waits for a stage that failed"
        }
    }
}

/// Why an item is reused: it is done, perhaps at another path than this file's.
public struct ReuseReason: Sendable, Hashable, CustomStringConvertible {
    /// The path the item is known by, when it is not this file's (renamed or moved).
    public var donePath: String?

    /// The reason for an item done at `donePath` (nil: at this file's path).
    public init(donePath: String? = nil) {
        self.donePath = donePath
    }

    public var description: String { "done" + (donePath.map { " (as \($0))" } ?? "") }
}

/// How a file falls outside `inputs.limits`.
public enum LimitViolation: Sendable, Hashable, CustomStringConvertible {
    /// Smaller than `minSize`: the size and the limit, in bytes.
    case smaller(Int64, than: Int64)
    /// Larger than `maxSize`: the size and the limit, in bytes.
    case larger(Int64, than: Int64)
    /// Shorter than `minDuration`: the duration and the limit, in seconds.
    case shorter(Double, than: Double)
    /// Longer than `maxDuration`: the duration and the limit, in seconds.
    case longer(Double, than: Double)
    /// A container (FFmpeg's names) not among `containers`.
    case container(String, allowed: [String])
    /// A video codec (nil: no video) not among `videoCodecs`.
    case videoCodec(String?, allowed: [String])

    /// The limit broken, the same for every file that breaks it.
    public var group: String {
        switch self {
        case .smaller: "smaller than inputs.limits.minSize"
        case .larger: "larger than inputs.limits.maxSize"
        case .shorter: "shorter than inputs.limits.minDuration"
        case .longer: "longer than inputs.limits.maxDuration"
        case .container(let container, _): "container \(container) is not one of inputs.limits.containers"
        case .videoCodec(let codec, _): "video codec \(codec ?? "none") is not one of inputs.limits.videoCodecs"
        }
    }

    public var description: String {
        switch self {
        case .smaller(let size, let limit): "\(group) (\(ByteCount(size)) < \(ByteCount(limit)))"
        case .larger(let size, let limit): "\(group) (\(ByteCount(size)) > \(ByteCount(limit)))"
        case .shorter(let duration, let limit):
            "\(group) (\(TimeSpan(seconds: duration)) < \(TimeSpan(seconds: limit)))"
        case .longer(let duration, let limit):
            "\(group) (\(TimeSpan(seconds: duration)) > \(TimeSpan(seconds: limit)))"
        case .container(_, let allowed), .videoCodec(_, let allowed):
            "\(group) (\(allowed.joined(separator: ", ")))"
        }
    }
}
