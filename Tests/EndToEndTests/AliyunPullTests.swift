import Foundation
import Sandbox
import StageKit
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `aliyun.vod.pull` with the built binary against the Sandbox: an export uploaded to the Sandbox's OSS with a
/// presigned URL (`oss.upload` with `shareFor`) that VOD fetches itself (UploadMediaByURL, GetURLUploadInfos), a
/// kill -9 while the submission is unanswered, a video whose transcode fails, and a URL VOD cannot fetch.
@Suite struct AliyunPullTests {
    /// An export to OSS, shared for an hour, pulled by VOD, waited for and described; cancel deletes the video.
    static func workflow(api: String, reconcileWait: String = "10s") -> String {
        """
        {"version": 1, "name": "pulled", "inputs": {"path": "in"},
         "vars": {"api": "\(api)"},
         "stages": [
          {"id": "export", "uses": "ffmpeg.transcode",
           "with": {"mode": "auto", "profile": "web-720p", "output": "out/${input.stem}.mp4"}},
          {"id": "store", "uses": "oss.upload",
           "with": {"endpoint": "${vars.api}", "region": "cn-shanghai", "bucket": "vod-sandbox",
                    "key": "exports/${input.stem}.mp4", "file": "${export.path}", "shareFor": "1h"}},
          {"id": "pull", "uses": "aliyun.vod.pull",
           "with": {"api": "${vars.api}", "link": "${store.sharedURL}", "title": "${input.stem}", "tags": "pipeline",
                    "interval": "100ms", "reconcileWait": "\(reconcileWait)"}},
          {"id": "wait", "uses": "aliyun.vod.wait",
           "with": {"api": "${vars.api}", "videoId": "${pull.videoId}", "interval": "100ms"}}
         ],
         "onCancel": [
          {"id": "delete", "uses": "aliyun.vod.delete", "if": "${pull.created ?? false}",
           "with": {"api": "${vars.api}", "videoId": "${pull.videoId}"}}
         ]}
        """
    }

    private func input(_ scratch: borrowing Scratch) throws {
        try FileManager.default.createDirectory(at: scratch.path("in"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: repositoryRoot.appendingPathComponent("samples/clip-h264-aac.mp4"),
            to: scratch.path("in/clip-h264-aac.mp4"))
    }

    /// `shown` names a presigned URL, and only with its signature masked.
    static func expectMaskedSignatures(_ shown: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) {
        let signatures = shown.components(separatedBy: "x-oss-signature=").dropFirst()
        #expect(!signatures.isEmpty, "no presigned URL shown: \(shown)", sourceLocation: sourceLocation)
        #expect(signatures.allSatisfy { $0.hasPrefix("redacted") }, "\(shown)", sourceLocation: sourceLocation)
    }

    private func aliyun(_ sandbox: RunningSandbox) async throws -> JSONValue {
        try JSONValue(parsing: await httpGet("\(sandbox.baseURL)/sandbox/aliyun"))
    }

    /// One pull job, succeeded; one video, Normal, titled and tagged, whose source object is the export byte for
    /// byte.
    private func expectOnePulledVideo(_ sandbox: RunningSandbox, _ scratch: borrowing Scratch) async throws {
        let state = try await aliyun(sandbox)
        let jobs = state["urlUploadJobs"]?.arrayValue ?? []
        #expect(jobs.count == 1 && jobs.first?["Status"] == "SUCCESS", "jobs: \(jobs)")
        let videos = state["videos"]?.arrayValue ?? []
        #expect(videos.count == 1, "videos: \(videos)")
        let video = try #require(videos.first)
        #expect(video["VideoId"] == jobs.first?["MediaId"])
        #expect(video["Title"] == "clip-h264-aac" && video["Tags"] == "pipeline" && video["Status"] == "Normal")
        let object = state["objects"]?.arrayValue?.first { $0["Key"] == video["Object"] }
        let exported = await sha256sum(scratch.path("out/clip-h264-aac.mp4").path)
        #expect(object?["SHA256"]?.stringValue == exported, "\(String(describing: object))")
    }

    /// The sample in `scratch`, a Sandbox whose transcodes take `transcodeDelay`, and the workflow against it.
    private func started(
        _ scratch: borrowing Scratch, transcodeDelay: Duration = .milliseconds(200), reconcileWait: String = "10s"
    ) async throws -> RunningSandbox {
        try input(scratch)
        let sandbox = try await SandboxServer.start(
            SandboxConfiguration(dataFolder: scratch.path("sandbox").path, transcodeDelay: transcodeDelay))
        try scratch.write("wf.json", Self.workflow(api: sandbox.baseURL, reconcileWait: reconcileWait))
        return sandbox
    }

    /// Runs the workflow with UploadMediaByURL's answer held back, and kills the run once the job exists: the
    /// job is made, its answer never heard. The Sandbox answers at once again afterwards.
    private func killWhileThePullIsUnanswered(_ sandbox: RunningSandbox, _ scratch: borrowing Scratch) async throws {
        _ = await httpPost("\(sandbox.baseURL)/sandbox/faults", json: #"{"createDelay": 3}"#)
        let process = try Binary.start(["run", "wf.json"], in: scratch.root, environment: AliyunChainTests.environment)
        try await waitUntil("the pull job, or the end of the run") {
            guard process.isRunning else { return true }
            return ((try? await aliyun(sandbox))?["urlUploadJobs"]?.arrayValue?.count ?? 0) > 0
        }
        #expect(process.isRunning, "the run ended before the pull was submitted")
        process.signal(SIGKILL)
        _ = await process.exit()
        _ = await httpPost("\(sandbox.baseURL)/sandbox/faults", json: #"{"createDelay": 0}"#)
    }

    @Test func anExportSharedFromOSSIsPulledIntoAVideo() async throws {
        let scratch = try Scratch()
        let sandbox = try await started(scratch, transcodeDelay: .milliseconds(400))
        let validate = try await Binary.run(["validate", "wf.json"], in: scratch.root)
        #expect(validate.status == 0, "\(validate.stdout)\(validate.stderr)")
        let result = try await Binary.run(
            ["run", "wf.json", "--report", "report.json"], in: scratch.root, environment: AliyunChainTests.environment)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        try await expectOnePulledVideo(sandbox, scratch)
        let again = try await Binary.run(
            ["run", "wf.json", "--json"], in: scratch.root, environment: AliyunChainTests.environment)
        #expect(runFinished(again.stdout)?["stagesRun"] == 0)
        // The shared URL reads the object: the report shows it with its signature masked.
        let report = try String(contentsOf: scratch.path("report.json"), encoding: .utf8)
        Self.expectMaskedSignatures(report)
        let cancel = try await Binary.run(
            ["cancel", "wf.json", "clip-h264-aac.mp4"], in: scratch.root, environment: AliyunChainTests.environment)
        #expect(cancel.status == 0, "\(cancel.stdout)\(cancel.stderr)")
        #expect(try await aliyun(sandbox)["videos"]?.arrayValue?.isEmpty == true)
        await sandbox.stop()
    }

    /// Killed while UploadMediaByURL waits to answer (the job exists, its answer never heard), the rerun finds the
    /// job by its URL and the marker in its UserData, and follows it: one job, one video.
    @Test func aKillWhileThePullIsUnansweredMakesNoSecondJob() async throws {
        let scratch = try Scratch()
        let sandbox = try await started(scratch)
        try await killWhileThePullIsUnanswered(sandbox, scratch)
        let rerun = try await Binary.run(
            ["run", "wf.json"], in: scratch.root, environment: AliyunChainTests.environment)
        #expect(rerun.status == 0, "\(rerun.stdout)\(rerun.stderr)")
        #expect(rerun.stdout.contains("adopted pull job") || rerun.stderr.contains("adopted pull job"))
        try await expectOnePulledVideo(sandbox, scratch)
        await sandbox.stop()
    }

    /// Killed while the submission is unanswered, then rerun while VOD's listing by URL lags: the repeated
    /// submission is refused (VOD's SessionId rule), and that refusal must not turn the record into "nothing was
    /// made". Once VOD would take the SessionId again (as after 10 minutes), the next run still looks for the job,
    /// finds it and follows it: one job, one video.
    @Test func aRefusedResubmissionStillLooksForTheFirstJob() async throws {
        let scratch = try Scratch()
        let sandbox = try await started(scratch, reconcileWait: "1s")
        _ = await httpPost("\(sandbox.baseURL)/sandbox/aliyun/faults", json: #"{"urlListingLag": 3600}"#)
        try await killWhileThePullIsUnanswered(sandbox, scratch)
        let lagging = try await Binary.run(
            ["run", "wf.json"], in: scratch.root, environment: AliyunChainTests.environment)
        #expect(lagging.status == 1, "\(lagging.stdout)\(lagging.stderr)")
        #expect(lagging.stdout.contains("refused the pull") || lagging.stderr.contains("refused the pull"))
        #expect(try await aliyun(sandbox)["urlUploadJobs"]?.arrayValue?.count == 1)
        // The plan of the pull shows its link, the shared URL, with the signature masked.
        let plan = try await Binary.run(
            ["plan", "wf.json", "--json"], in: scratch.root, environment: AliyunChainTests.environment)
        Self.expectMaskedSignatures(plan.stdout)
        _ = await httpPost(
            "\(sandbox.baseURL)/sandbox/aliyun/faults", json: #"{"urlListingLag": 0, "sessionWindow": 0}"#)
        let rerun = try await Binary.run(
            ["run", "wf.json"], in: scratch.root, environment: AliyunChainTests.environment)
        #expect(rerun.status == 0, "\(rerun.stdout)\(rerun.stderr)")
        #expect(rerun.stdout.contains("adopted pull job") || rerun.stderr.contains("adopted pull job"))
        try await expectOnePulledVideo(sandbox, scratch)
        await sandbox.stop()
    }

    /// A job that ends `TranscodeFail` with a MediaId (VOD's job statuses are its video's) has pulled its file: the
    /// pull outputs the video and the wait fails on its status; a rerun waits for the same video again rather than
    /// pulling a second one. One job, one video.
    @Test func aPulledVideoWhoseTranscodeFailsIsNotPulledAgain() async throws {
        let scratch = try Scratch()
        let sandbox = try await started(scratch)
        _ = await httpPost("\(sandbox.baseURL)/sandbox/aliyun/faults", json: #"{"transcodeFails": 1}"#)
        for round in 1...2 {
            let result = try await Binary.run(
                ["run", "wf.json"], in: scratch.root, environment: AliyunChainTests.environment)
            #expect(result.status == 1, "round \(round): \(result.stdout)\(result.stderr)")
            #expect(
                (result.stdout + result.stderr).contains("its status is TranscodeFail"),
                "round \(round): \(result.stdout)\(result.stderr)")
        }
        let state = try await aliyun(sandbox)
        let jobs = state["urlUploadJobs"]?.arrayValue ?? []
        #expect(jobs.count == 1 && jobs.first?["Status"] == "TranscodeFail", "jobs: \(jobs)")
        let videos = state["videos"]?.arrayValue ?? []
        #expect(videos.count == 1 && videos.first?["VideoId"] == jobs.first?["MediaId"], "videos: \(videos)")
        #expect(videos.first?["Status"] == "TranscodeFail", "videos: \(videos)")
        await sandbox.stop()
    }

    /// A URL that answers 404 fails the job (DOWNLOAD_FAIL), and the item with kind not-found; `validate` refuses a
    /// link that is not an http URL, naming the option.
    @Test func aPullOfAMissingFileFailsWithItsKind() async throws {
        let scratch = try Scratch()
        try input(scratch)
        let sandbox = try await SandboxServer.start(SandboxConfiguration(dataFolder: scratch.path("sandbox").path))
        func workflow(link: String) -> String {
            """
            {"version": 1, "name": "missing", "inputs": {"path": "in"},
             "stages": [{"id": "pull", "uses": "aliyun.vod.pull",
                         "with": {"api": "\(sandbox.baseURL)", "link": "\(link)", "interval": "100ms"}}]}
            """
        }
        try scratch.write("wf.json", workflow(link: "ftp://example.com/clip.mp4"))
        let refused = try await Binary.run(["validate", "wf.json"], in: scratch.root)
        #expect(refused.status == 2, "\(refused.stdout)\(refused.stderr)")
        #expect(refused.stderr.contains("stages[0].with.link:") && refused.stderr.contains("not an http or https URL"))
        try scratch.write("wf.json", workflow(link: "\(sandbox.baseURL)/no-such-place/clip.mp4"))
        let result = try await Binary.run(
            ["run", "wf.json", "--json"], in: scratch.root, environment: AliyunChainTests.environment)
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        let finished = result.stdout.split(separator: "\n").compactMap { try? JSONValue(parsing: String($0)) }
            .first { $0["event"] == "itemFinished" }
        #expect(finished?["outcome"] == "failed" && finished?["errorKind"] == "invalid-input", "\(result.stdout)")
        #expect(
            result.stdout.contains("DOWNLOAD_FAIL") && result.stdout.contains("URLInvalidError")
                && result.stdout.contains("could not download the URL"), "\(result.stdout)")
        let jobs = try await aliyun(sandbox)["urlUploadJobs"]?.arrayValue ?? []
        #expect(jobs.count == 1 && jobs.first?["Status"] == "DOWNLOAD_FAIL", "\(jobs)")
        #expect(jobs.first?["ErrorCode"] == "URLInvalidError", "VOD's documented code, not the source's status")
        #expect(try await aliyun(sandbox)["videos"]?.arrayValue?.isEmpty == true)
        await sandbox.stop()
    }
}
