import StageKit

/// Which stages upload an export while it is written (`"stream": true`), and the export each one follows: the
/// stage whose `${ID.path}` its `file` option is. The runner starts such a stage as soon as its export starts
/// (the rest of its waits being over); `validate` refuses a stream that cannot work (``WorkflowReader``).
public struct StreamPlan: Sendable, Hashable {
    /// The stage types that can take a file whose head comes last: S3 multipart puts part 1 last, tus concatenates
    /// partial uploads in any order they were sent.
    static let streamingUploads: Set<String> = ["s3.upload", "tus.upload"]
    /// The export stage types whose segmented encode joins into a file that grows behind its head.
    static let streamingExports: Set<String> = ["ffmpeg.transcode"]

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
    mutating func checkStreams(_ stages: [StageSpec], onCancel: [StageSpec]) {
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
                    "a streaming upload sends the file of the export it follows: set file to \"${EXPORT.path}\", the path output of an ffmpeg.transcode stage it waits for"
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
            if let reason = Self.exportRefusal(exportSpec) {
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

    /// Why an export cannot write a file that grows behind its head; nil when it can.
    static func exportRefusal(_ export: StageSpec) -> String? {
        guard StreamPlan.streamingExports.contains(export.uses) else {
            return
                "it is \(export.uses); only ffmpeg.transcode joins its segments into a file that is final behind its head as it is written"
        }
        if export.with["faststart"] == .bool(false) {
            return
                "faststart is false: the streamed file is a faststart MP4 whose index is written last into room reserved at its head"
        }
        if let seconds = export.with["segmentSeconds"],
            [.int(0), .double(0), .string("0"), .string("0s")].contains(seconds)
        {
            return
                "segmentSeconds is 0: an unsegmented encode moves its index to the front in a second pass over the file; give it segments (e.g. \"segmentSeconds\": \"60s\")"
        }
        if export.with["mode"]?.stringValue == "remux" {
            return "mode remux copies in one pass without segments; only a segmented transcode is streamed"
        }
        return nil
    }
}
