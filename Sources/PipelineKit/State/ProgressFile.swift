public import Foundation
import StageKit

#if canImport(Glibc)
    import Glibc
#endif

/// A state folder's `progress.json`: the stages its run has running now, with their progress, rate and ETA, which
/// `pipeline serve` reads. The run that holds the folder rewrites it whole (a new file renamed over the old, so a
/// reader never sees half of it) as its ``ProgressBoard`` publishes, and removes it when it ends. The file names the
/// process that wrote it, and a reader takes it only from the process that holds the folder now: one left behind by a
/// killed run is never read, whoever holds the folder later, and the next run removes it as soon as it holds the
/// folder.
public enum ProgressFile {
    /// The file's name in the state folder.
    public static let fileName = "progress.json"

    /// Writes `stages` as the running stages of the run of `workflow` holding `folder`, this process. A failure (a
    /// full disk) is left unsaid: the file only shows progress, and the run goes on without it.
    public static func write(_ stages: [RunningStage], workflow: String, in folder: URL) {
        let document: JSONValue = [
            "workflow": .string(workflow), "time": .string(Date().formatted(.iso8601)),
            "pid": .int(Int(getpid())), "stages": .array(stages.map(\.document)),
        ]
        try? document.serializedData().write(to: folder.appendingPathComponent(fileName), options: .atomic)
    }

    /// The running stages the file in `folder` holds, by workflow, when `holder` (the pid of the process holding the
    /// folder now, nil when none does) wrote it; none when there is no such file or it cannot be read.
    public static func read(in folder: URL, writtenBy holder: Int32?) -> [String: [RunningStage]] {
        guard let holder, let data = try? Data(contentsOf: folder.appendingPathComponent(fileName)),
            let document = try? JSONValue(parsing: data), document["pid"]?.intValue == Int(holder),
            let workflow = document["workflow"]?.stringValue
        else { return [:] }
        return [workflow: (document["stages"]?.arrayValue ?? []).compactMap(RunningStage.init(document:))]
    }

    /// Removes the file: when the run ends, and when a run takes the folder (one a killed run left).
    public static func remove(in folder: URL) {
        try? FileManager.default.removeItem(at: folder.appendingPathComponent(fileName))
    }
}
