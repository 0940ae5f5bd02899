import Foundation

/// One side effect a stage logged: `start|end WORKER ITEM STAGE`, or `KILL WORKER` written by the test.
struct Effect: Sendable, CustomStringConvertible {
    var kind: String
    var worker: Int32
    var item: String
    var stage: String

    var description: String { "\(kind) \(worker) \(item) \(stage)" }
}

/// The file a batch's stages append their side effects to, one whole line each, and the test its own notes.
struct EffectLog: Sendable {
    /// The log file.
    let file: URL

    /// Appends a line of the test's own to the log, after the stages' lines so far.
    func note(_ line: String) {
        let descriptor = open(file.path, O_WRONLY | O_APPEND | O_CREAT, 0o644)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        _ = (line + "\n").withCString { write(descriptor, $0, strlen($0)) }
    }

    /// The log so far, in the order it was written.
    func effects() -> [Effect] {
        let text = (try? String(contentsOf: file, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ").map(String.init)
            guard fields.count >= 2, let worker = Int32(fields[1]) else { return nil }
            return Effect(
                kind: fields[0], worker: worker, item: fields.count > 2 ? fields[2] : "",
                stage: fields.count > 3 ? fields[3] : "")
        }
    }
}
