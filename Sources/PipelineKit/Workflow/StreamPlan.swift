import Foundation
import StageKit

/// Which stages upload an export while it is written (`"stream": true`), and the export each one follows: the
/// stage whose `${ID.path}` its `file` option is. The runner starts such a stage as soon as its export starts
/// (the rest of its waits being over); `validate` refuses a stream that cannot work (``WorkflowReader``).
public struct StreamPlan: Sendable, Hashable {
    /// The stage types that can take a file whose head comes last: S3 multipart puts part 1 last, tus concatenates
    /// partial uploads in any order they were sent.
    static let streamingUploads: Set<String> = ["s3.upload", "tus.upload"]
    /// The export stage types that write a file that grows behind its head: a segmented encode joins into it, a
    /// remux of an MP4 or MOV copies into it.
    static let streamingExports: Set<String> = ["ffmpeg.transcode", "ffmpeg.remux"]
    /// The extensions of the inputs a remux writes behind its head: FFmpeg's MP4 and MOV demuxer lists every sample
    /// when it opens the file, so the index's room is known before the copy starts.
    static let indexedExtensions: Set<String> = ["mp4", "m4v", "mov", "3gp", "3g2"]
    /// FFmpeg's names of that demuxer, as `inputs.limits.containers` gives them.
    static let indexedContainers: Set<String> = ["mov", "mp4", "m4a", "3gp", "3g2", "mj2"]

    /// For each streaming stage (by index), the index of the export it follows.
    public let follows: [Int: Int]

    /// The plan of `stages`; a streaming stage whose `file` names no stage is left out (`validate` says why).
    public init(_ stages: [StageSpec]) {
        var follows: [Int: Int] = [:]
        for (index, stage) in stages.enumerated() where stage.stream {
            if let export = Self.exportID(of: stage), let position = stages.firstIndex(where: { $0.id == export }) {
                follows[index] = position
            }
        }
        self.follows = follows
    }

    /// The streaming stages that follow `export`.
    public func followers(of export: Int) -> [Int] {
        follows.filter { $0.value == export }.map(\.key).sorted()
    }

    /// The stage id in a `file` option that is exactly `${ID.path}`; nil otherwise.
    static func exportID(of stage: StageSpec) -> String? {
        guard let file = stage.with["file"]?.stringValue, file.hasPrefix("${"), file.hasSuffix(".path}") else {
            return nil
        }
        let id = file.dropFirst(2).dropLast(".path}".count)
        return WorkflowNames.isIdentifier(String(id)) ? String(id) : nil
    }
}

/// `"stream": true`: checked once the references are, so that each refusal says why the stream cannot work.
extension WorkflowReader {
    mutating func checkStreams(_ stages: [StageSpec], onCancel: [StageSpec], inputs: InputSelection?) {
        for stage in onCancel where stage.stream {
            log.error(stage.path.appending("stream"), "onCancel stages run after every stage: they cannot stream")
        }
        let graph = StageGraph(stages)
        for (index, stage) in stages.enumerated() where stage.stream {
            let path = stage.path.appending("stream")
            if let reason = Self.streamRefusal(uses: stage.uses) {
                log.error(path, "\(stage.uses) cannot stream an export: \(reason)")
                continue
            }
            guard let exportID = StreamPlan.exportID(of: stage),
                let export = stages.firstIndex(where: { $0.id == exportID })
            else {
                log.error(
                    stage.path.appending("with").appending("file"),
                    "a streaming upload sends the file of the export it follows: set file to \"${EXPORT.path}\", the path output of an ffmpeg.transcode or ffmpeg.remux stage it waits for"
                )
                continue
            }
            let exportSpec = stages[export]
            guard graph.waitIDs(of: index).contains(exportID) else {
                log.error(
                    path,
                    "a streaming upload starts with the export it follows: make it wait for \"\(exportID)\" directly (\"after\": [\"\(exportID)\"])"
                )
                continue
            }
            if stage.uses == "tus.upload", stage.with["url"] != nil {
                log.error(
                    stage.path.appending("with").appending("url"),
                    "a streamed tus upload creates partial uploads and concatenates them: give endpoint, not url (an upload someone else created, such as Vimeo's, cannot take its head last)"
                )
            }
            if let reason = Self.exportRefusal(exportSpec, inputs: inputs) {
                log.error(path, "stage \"\(exportID)\" cannot be streamed: \(reason)")
            }
            var found = references(in: stage.with, at: stage.path.appending("with"))
            if let condition = stage.condition {
                found += references(in: .string(condition), at: stage.path.appending("if"))
            }
            if let refresher = stage.refreshWith, refresher == exportID {
                log.error(stage.path.appending("refreshWith"), "a streaming upload cannot renew with its export")
            }
            for (reference, referencePath) in found where reference.root == exportID && reference.member != "path" {
                log.error(
                    referencePath,
                    "${\(reference)}: a streaming upload starts before stage \"\(exportID)\" finishes, when only its path is known"
                )
            }
        }
    }

    /// Why a stage type cannot stream; nil when it can.
    static func streamRefusal(uses: String) -> String? {
        if StreamPlan.streamingUploads.contains(uses) { return nil }
        switch uses {
        case "http.upload":
            return
                "a Content-Range PUT sends the file from its first byte on, and the export rewrites its head when it finishes; upload it after the export (leave out stream)"
        case "presigned.upload", "oss.upload":
            return "only s3.upload and tus.upload stream for now (the head goes last); upload it after the export"
        case let vimeo where vimeo.hasPrefix("vimeo."):
            return
                "Vimeo needs the file's size when the upload is created and cannot concatenate parts; stream to S3 (s3.upload with shareFor) and let vimeo.ticket with approach pull fetch the shared URL"
        default:
            return "only an upload (s3.upload, tus.upload) streams the export it follows"
        }
    }

    /// Why an export cannot write a file that grows behind its head; nil when it can. `inputs`: the workflow's, which
    /// a remux of the item's file reads.
    static func exportRefusal(_ export: StageSpec, inputs: InputSelection?) -> String? {
        guard StreamPlan.streamingExports.contains(export.uses) else {
            return
                "it is \(export.uses); only ffmpeg.transcode (joining its segments) and ffmpeg.remux (of an MP4 or MOV) write a file that is final behind its head as it is written"
        }
        if export.with["faststart"] == .bool(false) {
            return
                "faststart is false: the streamed file is a faststart MP4 whose index is written last into room reserved at its head"
        }
        if export.uses == "ffmpeg.remux" || export.with["mode"]?.stringValue == "remux" {
            return remuxRefusal(file: export.with["file"]?.stringValue, inputs: inputs)
        }
        if let seconds = export.with["segmentSeconds"],
            [.int(0), .double(0), .string("0"), .string("0s")].contains(seconds)
        {
            return
                "segmentSeconds is 0: an unsegmented encode moves its index to the front in a second pass over the file; give it segments (e.g. \"segmentSeconds\": \"60s\")"
        }
        return nil
    }

    /// Why a remux of `file` (nil: the item's file, one of `inputs`) cannot stream, when that is known before the
    /// run: only an MP4 or MOV input gets room for the index ahead of the media data. (Any other input found at run
    /// time is uploaded once the remux finished.)
    static func remuxRefusal(file: String?, inputs: InputSelection?) -> String? {
        let reason =
            "a remux writes the index ahead of the media data only from an MP4 or MOV input (others are rewritten with +faststart at the end); upload it after the export"
        if let file, !file.contains("${") {
            let name = (file as NSString).lastPathComponent
            return StreamPlan.indexedExtensions.contains((name as NSString).pathExtension.lowercased())
                ? nil : "its file \(name) is not an MP4 or MOV: \(reason)"
        }
        guard file == nil || file == "${input.path}", let inputs else { return nil }
        let containers = inputs.limits.containers.map { $0.lowercased() }
        if !containers.isEmpty, !containers.contains(where: StreamPlan.indexedContainers.contains) {
            return "inputs.limits.containers admits no MP4 or MOV: \(reason)"
        }
        if !inputs.include.isEmpty, !inputs.include.contains(where: Self.mayNameIndexedFile) {
            return "inputs.include matches no MP4 or MOV name: \(reason)"
        }
        return nil
    }

    /// Whether an `include` pattern may match the name of an MP4 or MOV file.
    private static func mayNameIndexedFile(_ pattern: String) -> Bool {
        let name = pattern.split(separator: "/").last.map(String.init) ?? pattern
        guard let dot = name.lastIndex(of: ".") else { return name.contains("*") }
        let suffix = name[name.index(after: dot)...].lowercased()
        return suffix.contains(where: { "*?[".contains($0) }) || StreamPlan.indexedExtensions.contains(suffix)
    }
}
