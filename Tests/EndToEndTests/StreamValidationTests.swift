import Foundation
import PluginHost
import StageKit
import Testing

@testable import PipelineCLI
@testable import PipelineKit

/// `validate` refuses a `"stream": true` that cannot work, saying why: with the built-in stage types, whose
/// declarations (stream role, input file, landing output, refusals) decide it.
@Suite struct StreamValidationTests {
    private let registry: StageRegistry

    init() throws {
        registry = try StageCatalog.shipped.registry()
    }

    /// The problems about streaming in a workflow of an export and one more stage (the options the test leaves out
    /// are another matter: only the messages about streaming are kept).
    private func streamProblems(
        export: String = #"{"segmentSeconds": 60}"#, exportUses: String = "ffmpeg.transcode",
        inputs: String = #"{"path": "in"}"#, _ stage: String
    ) -> [String] {
        let json = """
            {"version": 1, "name": "x", "inputs": \(inputs), "stages": [
              {"id": "export", "uses": "\(exportUses)", "with": \(export)},
              \(stage)
            ]}
            """
        do {
            _ = try WorkflowLoader(registry: registry).load(data: Data(json.utf8), file: "wf.json")
            return []
        } catch {
            return error.diagnostics.map(\.description).filter { $0.contains("stream") }
        }
    }

    private let s3 = #""bucket": "b", "key": "k""#

    @Test func acceptsAnS3UploadOfASegmentedTranscode() {
        #expect(
            streamProblems(
                #"{"id": "up", "uses": "s3.upload", "after": ["export"], "stream": true, "with": {\#(s3), "file": "${export.path}"}}"#
            ).isEmpty)
        let plan = StreamPlan(
            [
                StageSpec(
                    id: "export", uses: "ffmpeg.transcode", with: .object([:]), retry: .standard, path: .root,
                    isSecret: false),
                StageSpec(
                    id: "up", uses: "s3.upload", with: .object(["file": "${export.path}"]), retry: .standard,
                    path: .root,
                    isSecret: false, after: ["export"], stream: true),
            ], registry: registry)
        #expect(plan.follows == [1: 0])
        #expect(plan.followers(of: 0) == [1])
    }

    @Test func refusesDestinationsThatCannotPutTheHeadLast() {
        let put = streamProblems(
            #"{"id": "up", "uses": "http.upload", "after": ["export"], "stream": true, "with": {"url": "http://x/", "file": "${export.path}"}}"#
        )
        #expect(
            put.count == 1
                && put[0].contains("stages[1].stream: http.upload cannot stream an export: a Content-Range PUT"),
            "\(put)")
        let vimeo = streamProblems(
            #"{"id": "up", "uses": "vimeo.ticket", "after": ["export"], "stream": true, "with": {"file": "${export.path}"}}"#
        )
        #expect(
            vimeo.count == 1 && vimeo[0].contains("stream to S3 (s3.upload with shareFor)")
                && vimeo[0].contains("vimeo.ticket with approach pull"), "\(vimeo)")
        let presigned = streamProblems(
            #"{"id": "up", "uses": "presigned.upload", "after": ["export"], "stream": true, "with": {"signer": "http://x/", "file": "${export.path}"}}"#
        )
        #expect(
            presigned.count == 1
                && presigned[0].hasSuffix(
                    "stages[1].stream: presigned.upload cannot stream an export: it does not follow an export yet, though its parts could go head last: upload it after the export (leave out stream)"
                ), "\(presigned)")
        // OSS takes parts in any order: oss.upload follows an export as s3.upload does.
        #expect(
            streamProblems(
                #"{"id": "up", "uses": "oss.upload", "after": ["export"], "stream": true, "with": {"endpoint": "https://oss-cn-shanghai.aliyuncs.com", "bucket": "b", "key": "k", "file": "${export.path}"}}"#
            ).isEmpty)
        let exec = streamProblems(#"{"id": "up", "uses": "exec", "stream": true, "with": {"command": ["true"]}}"#)
        let followers = "only a stage that follows an export (oss.upload, s3.upload, tus.upload) streams"
        #expect(exec.count == 1 && exec[0].contains(followers), "\(exec)")
    }

    @Test func aFollowerRefusesAConfigurationItCannotStream() {
        let tus = streamProblems(
            #"{"id": "up", "uses": "tus.upload", "after": ["export"], "stream": true, "with": {"url": "http://x/u/1", "file": "${export.path}"}}"#
        )
        #expect(
            tus.count == 1
                && tus[0].contains(
                    "stages[1].stream: tus.upload cannot stream an export: a streamed tus upload creates partial uploads"
                )
                && tus[0].contains("give endpoint, not url"), "\(tus)")
        #expect(
            streamProblems(
                #"{"id": "up", "uses": "tus.upload", "after": ["export"], "stream": true, "with": {"endpoint": "http://x/", "file": "${export.path}"}}"#
            ).isEmpty)
    }

    @Test func refusesExportsThatCannotWriteAGrowingFile() {
        let upload =
            #"{"id": "up", "uses": "s3.upload", "after": ["export"], "stream": true, "with": {\#(s3), "file": "${export.path}"}}"#
        let slow = streamProblems(export: #"{"faststart": false, "segmentSeconds": 60}"#, upload)
        #expect(
            slow.count == 1 && slow[0].contains(#"stage "export" cannot be streamed: faststart is false"#), "\(slow)")
        let whole = streamProblems(export: #"{"segmentSeconds": 0}"#, upload)
        #expect(whole.count == 1 && whole[0].contains("segmentSeconds is 0"), "\(whole)")
        let probe = streamProblems(export: "{}", exportUses: "ffmpeg.probe", upload)
        #expect(probe.count == 1 && probe[0].contains("it is ffmpeg.probe"), "\(probe)")
    }

    @Test func acceptsARemuxOfMP4OrMOVInputsAndSaysWhyNotOtherwise() {
        let upload =
            #"{"id": "up", "uses": "s3.upload", "after": ["export"], "stream": true, "with": {\#(s3), "file": "${export.path}"}}"#
        #expect(streamProblems(export: "{}", exportUses: "ffmpeg.remux", upload).isEmpty)
        #expect(streamProblems(export: #"{"mode": "remux"}"#, upload).isEmpty)
        #expect(
            streamProblems(
                export: "{}", exportUses: "ffmpeg.remux", inputs: #"{"path": "in", "include": ["*.MOV", "*.mkv"]}"#,
                upload
            ).isEmpty)
        #expect(streamProblems(export: #"{"file": "clips/a.mp4"}"#, exportUses: "ffmpeg.remux", upload).isEmpty)

        let slow = streamProblems(export: #"{"faststart": false}"#, exportUses: "ffmpeg.remux", upload)
        #expect(slow.count == 1 && slow[0].contains("faststart is false"), "\(slow)")
        let matroska = streamProblems(
            export: "{}", exportUses: "ffmpeg.remux", inputs: #"{"path": "in", "include": ["*.mkv", "*.ts"]}"#, upload)
        #expect(
            matroska.count == 1 && matroska[0].contains("inputs.include matches no MP4 or MOV name")
                && matroska[0].contains("only from an MP4 or MOV input"), "\(matroska)")
        let containers = streamProblems(
            export: #"{"mode": "remux"}"#, inputs: #"{"path": "in", "limits": {"containers": ["matroska"]}}"#, upload)
        #expect(
            containers.count == 1 && containers[0].contains("inputs.limits.containers admits no MP4 or MOV"),
            "\(containers)")
        let file = streamProblems(export: #"{"file": "tape.avi"}"#, exportUses: "ffmpeg.remux", upload)
        #expect(file.count == 1 && file[0].contains("its file tape.avi is not an MP4 or MOV"), "\(file)")
    }

    @Test func refusesReferencesToAnythingButTheExportsFile() {
        let other = streamProblems(
            #"{"id": "up", "uses": "s3.upload", "after": ["export"], "stream": true, "with": {\#(s3), "file": "${input.path}"}}"#
        )
        #expect(
            other.count == 1
                && other[0].contains(#"stages[1].with.file: a streaming stage reads the file of the export it follows"#),
            "\(other)")
        let size = streamProblems(
            #"{"id": "up", "uses": "s3.upload", "after": ["export"], "stream": true, "with": {\#(s3), "file": "${export.path}", "contentType": "video/mp4; size=${export.size}"}}"#
        )
        #expect(
            size.count == 1
                && size[0].contains("${export.size}: a streaming stage starts before stage \"export\" finishes"),
            "\(size)")
        let notWaiting = streamProblems(
            #"{"id": "up", "uses": "s3.upload", "after": [], "stream": true, "with": {\#(s3), "file": "${export.path}"}}"#
        ).filter { $0.contains("stream") }
        #expect(notWaiting.contains { $0.contains(#"make it wait for "export" directly"#) }, "\(notWaiting)")
    }
}
