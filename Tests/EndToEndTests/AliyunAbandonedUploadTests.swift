import Foundation
import Sandbox
import StageKit
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// An `oss.upload` with a credential that may not read its object (VOD's write-only upload credentials) that fails
/// after it sent its completion: the upload is not aborted (it may be complete), and no later run takes a gone
/// upload for a completed one and reports done with no object. And a video whose source never arrives.
@Suite struct AliyunAbandonedUploadTests {
    private func aliyun(_ sandbox: RunningSandbox) async throws -> JSONValue {
        try JSONValue(parsing: await httpGet("\(sandbox.baseURL)/sandbox/aliyun"))
    }

    /// A video whose source never arrives (no upload stage) stays Uploading: the wait fails after
    /// `uploadingTimeout`, retryably (the engine tries again, waiting for the same video), naming the video and a
    /// remedy that leaves no second video; a rerun waits for that video again and makes none.
    @Test func aVideoStillUploadingFailsRetryablyAndKeepsItsVideo() async throws {
        let scratch = try Scratch()
        try FileManager.default.createDirectory(at: scratch.path("in"), withIntermediateDirectories: true)
        try scratch.write("in/clip.mp4", "not a video, never uploaded")
        let sandbox = try await SandboxServer.start(SandboxConfiguration(dataFolder: scratch.path("sandbox").path))
        try scratch.write(
            "wf.json",
            """
            {"version": 1, "name": "unsent", "inputs": {"path": "in"},
             "defaults": {"retry": {"attempts": 2, "initialDelay": "100ms", "maxDelay": "100ms"}},
             "stages": [
              {"id": "ticket", "uses": "aliyun.vod.ticket",
               "with": {"api": "\(sandbox.baseURL)", "file": "${input.path}", "title": "clip"}},
              {"id": "wait", "uses": "aliyun.vod.wait",
               "with": {"api": "\(sandbox.baseURL)", "videoId": "${ticket.videoId}", "interval": "100ms",
                        "uploadingTimeout": "1s"}}
             ]}
            """)
        for round in 1...2 {
            let result = try await Binary.run(
                ["run", "wf.json", "--json"], in: scratch.root, environment: AliyunChainTests.environment)
            #expect(result.status == 1, "round \(round): \(result.stdout)\(result.stderr)")
            let events = result.stdout.split(separator: "\n").compactMap { try? JSONValue(parsing: String($0)) }
            #expect(events.contains { $0["event"] == "stageRetrying" }, "round \(round): \(result.stdout)")
            let finished = events.first { $0["event"] == "itemFinished" }
            #expect(finished?["errorKind"] == "not-found", "round \(round): \(result.stdout)")
            let videos = try await aliyun(sandbox)["videos"]?.arrayValue ?? []
            #expect(videos.count == 1 && videos.first?["Status"] == "Uploading", "round \(round): \(videos)")
            let id = videos.first?["VideoId"]?.stringValue ?? "?"
            #expect(
                result.stdout.contains("video \(id) is still Uploading") && result.stdout.contains("`pipeline cancel`"),
                "round \(round): \(result.stdout)")
        }
        await sandbox.stop()
    }

    /// Run 1 sends CompleteMultipartUpload, which is lost before OSS acts on it, and is killed: its checkpoint
    /// records the completion as sent, the upload still open. Run 2's first ListParts is refused (400): the item
    /// fails, and the upload is not aborted, since a completion sent and not refused may have completed it. Run 3
    /// (ListParts works) finds the upload open and finishes it: one object, the export, never counted done without.
    @Test func anUploadWhoseCompletionWasSentIsNotAbortedNorCountedDone() async throws {
        let scratch = try Scratch()
        try FileManager.default.createDirectory(at: scratch.path("in"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: repositoryRoot.appendingPathComponent("samples/clip-h264-aac.mp4"),
            to: scratch.path("in/clip-h264-aac.mp4"))
        let sandbox = try await SandboxServer.start(
            SandboxConfiguration(
                dataFolder: scratch.path("sandbox").path, transcodeDelay: .milliseconds(200), ossSTSWriteOnly: true))
        try scratch.write(
            "wf.json", try AliyunChainTests.workflow(api: sandbox.baseURL, partSize: "100KiB", renewBefore: "60s"))
        let faults = "\(sandbox.baseURL)/sandbox/aliyun/faults"
        _ = await httpPost(faults, json: #"{"loseCompletes": 1000}"#)
        let process = try Binary.start(
            ["run", "wf.json"], in: scratch.root, environment: AliyunChainTests.environment)
        try await waitUntil("a lost completion, or the end of the run") {
            guard process.isRunning else { return true }
            let stats = try? JSONValue(parsing: await httpGet("\(sandbox.baseURL)/sandbox/stats"))
            return (stats?["droppedConnections"]?.intValue ?? 0) > 0
        }
        #expect(process.isRunning, "the run ended before its completion was sent")
        process.signal(SIGKILL)
        _ = await process.exit()
        #expect(try await aliyun(sandbox)["multipartUploads"] == 1, "the lost completion completed nothing")
        _ = await httpPost(faults, json: #"{"loseCompletes": 0, "refuseListParts": 1}"#)
        let refused = try await Binary.run(
            ["run", "wf.json"], in: scratch.root, environment: AliyunChainTests.environment)
        #expect(refused.status != 0, "a refused ListParts fails the upload: \(refused.stdout)\(refused.stderr)")
        #expect(try await aliyun(sandbox)["multipartUploads"] == 1, "the upload was aborted")
        let rerun = try await Binary.run(
            ["run", "wf.json"], in: scratch.root, environment: AliyunChainTests.environment)
        #expect(rerun.status == 0, "\(rerun.stdout)\(rerun.stderr)")
        let state = try await aliyun(sandbox)
        let videos = state["videos"]?.arrayValue ?? []
        #expect(videos.count == 1 && videos.first?["Status"] == "Normal", "videos: \(videos)")
        let object = state["objects"]?.arrayValue?.first { $0["Key"] == videos.first?["Object"] }
        let exported = await sha256sum(scratch.path("out/aliyun-vod/clip-h264-aac.mp4").path)
        #expect(object?["SHA256"]?.stringValue == exported, "the video's source is the export")
        await sandbox.stop()
    }
}
