import Foundation
import Sandbox
import StageKit
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The ApsaraVideo VOD chain (export → ticket → OSS upload → wait → cover → metadata) with the built binary
/// against the Sandbox's VOD and OSS: credentials that expire during the upload, and kill -9 at seeded moments.
@Suite struct AliyunChainTests {
    static let environment = [
        "ALIBABA_CLOUD_ACCESS_KEY_ID": "sandbox-access-key-id",
        "ALIBABA_CLOUD_ACCESS_KEY_SECRET": "sandbox-access-key-secret",
    ]

    /// `Workflows/aliyun-vod.json` with the Sandbox's API, small parts and a short renewal margin.
    static func workflow(api: String, partSize: String, renewBefore: String) throws -> String {
        let shipped = try String(
            contentsOf: repositoryRoot.appendingPathComponent("Workflows/aliyun-vod.json"), encoding: .utf8)
        return
            shipped
            .replacingOccurrences(of: "https://vod.cn-shanghai.aliyuncs.com", with: api)
            .replacingOccurrences(of: #""samples""#, with: #""in""#)
            .replacingOccurrences(
                of: #""expiration": "${ticket.expiration}" }"#,
                with:
                    #""expiration": "${ticket.expiration}", "partSize": "\#(partSize)", "concurrency": 1, "renewBefore": "\#(renewBefore)", "stallTimeout": "5s" }"#
            )
            // A source that never arrives ends the wait in 20 s with a clear failure, not after 30 minutes.
            .replacingOccurrences(of: #""interval": "1s""#, with: #""interval": "100ms", "uploadingTimeout": "20s""#)
    }

    private func input(_ scratch: borrowing Scratch) throws {
        try FileManager.default.createDirectory(at: scratch.path("in"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: repositoryRoot.appendingPathComponent("samples/clip-h264-aac.mp4"),
            to: scratch.path("in/clip-h264-aac.mp4"))
    }

    /// The sandbox's VOD and OSS, from `GET /sandbox/aliyun`.
    private func aliyun(_ sandbox: RunningSandbox) async throws -> JSONValue {
        try JSONValue(parsing: await httpGet("\(sandbox.baseURL)/sandbox/aliyun"))
    }

    /// One video, Normal, with the metadata and a cover; its source object is the export, byte for byte; no
    /// multipart upload is left open.
    private func expectOnePublishedVideo(_ sandbox: RunningSandbox, _ scratch: borrowing Scratch) async throws {
        let state = try await aliyun(sandbox)
        let videos = state["videos"]?.arrayValue ?? []
        #expect(videos.count == 1, "videos: \(videos)")
        let video = try #require(videos.first)
        #expect(video["Title"] == "clip-h264-aac")
        #expect(video["Tags"] == "pipeline,mp4")
        #expect(video["Status"] == "Normal")
        #expect(video["CoverURL"]?.stringValue?.contains("/image/cover/") == true)
        let object = state["objects"]?.arrayValue?.first { $0["Key"] == video["Object"] }
        let exported = await sha256sum(scratch.path("out/aliyun-vod/clip-h264-aac.mp4").path)
        #expect(object?["SHA256"]?.stringValue == exported)
        #expect(state["multipartUploads"] == 0)
    }

    @Test func theShippedWorkflowPublishesAndCancelDeletes() async throws {
        let scratch = try Scratch()
        try input(scratch)
        let sandbox = try await SandboxServer.start(
            SandboxConfiguration(dataFolder: scratch.path("sandbox").path, transcodeDelay: .milliseconds(400)))
        try scratch.write("wf.json", try Self.workflow(api: sandbox.baseURL, partSize: "100KiB", renewBefore: "60s"))
        let result = try await Binary.run(["run", "wf.json"], in: scratch.root, environment: Self.environment)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        try await expectOnePublishedVideo(sandbox, scratch)
        let again = try await Binary.run(["run", "wf.json", "--json"], in: scratch.root, environment: Self.environment)
        #expect(runFinished(again.stdout)?["stagesRun"] == 0)
        let cancel = try await Binary.run(
            ["cancel", "wf.json", "clip-h264-aac.mp4"], in: scratch.root, environment: Self.environment)
        #expect(cancel.status == 0, "\(cancel.stdout)\(cancel.stderr)")
        #expect(try await aliyun(sandbox)["videos"]?.arrayValue?.isEmpty == true)
        await sandbox.stop()
    }

    /// `"stream": true`: oss.upload sends a segmented export's parts while it is written, the head last, as
    /// s3.upload does; some bytes reach OSS before the export is finished, and after a kill -9 then and a rerun
    /// the object is the export byte for byte, its index first.
    @Test func aStreamedOSSUploadIsTheExportWithItsIndexFirst() async throws {
        let scratch = try Scratch()
        try await StreamedUploadTests.makeClip(in: scratch, seconds: 4)
        let sandbox = try await SandboxServer.start(SandboxConfiguration(dataFolder: scratch.path("sandbox").path))
        try scratch.write(
            "wf.json",
            """
            {"version": 1, "name": "oss-streamed", "inputs": {"path": "in"},
             "stages": [
              \(StreamedUploadTests.export()),
              {"id": "archive", "uses": "oss.upload", "after": ["export"], "stream": true, "with": {
               "endpoint": "\(sandbox.baseURL)", "region": "cn-shanghai", "bucket": "vod-sandbox",
               "key": "videos/${input.name}", "file": "${export.path}", "partSize": "1MiB", "concurrency": 2}}
             ]}
            """)
        let exported = scratch.path("out/clip.mp4").path
        let process = try Binary.start(["run", "wf.json", "--json"], in: scratch.root, environment: Self.environment)
        try await waitUntil("parts at OSS, or the end of the run") {
            guard process.isRunning else { return true }
            return ((try? await aliyun(sandbox))?["partsStored"]?.intValue ?? 0) > 0
        }
        let sentEarly = !FileManager.default.fileExists(atPath: exported)
        // Killed while parts are in flight (or at once, if the run ended already), then run again.
        process.signal(SIGKILL)
        _ = await process.exit()
        #expect(sentEarly, "no part reached OSS before the export was finished")
        let rerun = try await Binary.run(["run", "wf.json"], in: scratch.root, environment: Self.environment)
        #expect(rerun.status == 0, "\(rerun.stdout)\(rerun.stderr)")
        let objects = try await aliyun(sandbox)["objects"]?.arrayValue ?? []
        let object = objects.first { $0["Key"] == "videos/clip.mp4" }
        let exportedDigest = await sha256sum(exported)
        #expect(object?["SHA256"]?.stringValue == exportedDigest, "\(objects)")
        let boxes = try StreamedUploadTests.boxes(exported)
        #expect((boxes.firstIndex(of: "moov") ?? .max) < (boxes.firstIndex(of: "mdat") ?? -1), "\(boxes)")
        await sandbox.stop()
    }

    /// A cover's credential that expired before its upload started (the run stopped after `cover`, and the rerun
    /// comes later than the credential lives) is renewed by asking for another image (`refreshWith: "cover"` in
    /// the shipped workflow) instead of failing every rerun.
    @Test func aCoverCredentialThatExpiredBeforeItsUploadIsRenewed() async throws {
        let scratch = try Scratch()
        try input(scratch)
        let sandbox = try await SandboxServer.start(
            SandboxConfiguration(
                dataFolder: scratch.path("sandbox").path, transcodeDelay: .milliseconds(200), stsTTL: .seconds(3)))
        let full = try Self.workflow(api: sandbox.baseURL, partSize: "100KiB", renewBefore: "0s")
        guard case .object(var members) = try JSONValue(parsing: Data(full.utf8)),
            case .array(let stages)? = members["stages"]
        else { throw StageFailure("the shipped workflow has no stages") }
        members["stages"] = .array(stages.filter { !["cover-upload", "metadata"].contains($0["id"]?.stringValue) })
        try scratch.write("wf.json", JSONValue.object(members).serialized())
        let first = try await Binary.run(["run", "wf.json"], in: scratch.root, environment: Self.environment)
        #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
        let covered = Date()
        try await waitUntil("the cover's credential expired", limit: .seconds(30)) {
            Date().timeIntervalSince(covered) > 3.5
        }
        try scratch.write("wf.json", full)
        let rerun = try await Binary.run(
            ["run", "wf.json", "--json"], in: scratch.root, environment: Self.environment)
        #expect(rerun.status == 0, "\(rerun.stdout)\(rerun.stderr)")
        let outcomes = rerun.stdout.split(separator: "\n").compactMap { try? JSONValue(parsing: String($0)) }
            .filter { $0["event"] == "stageFinished" }.map {
                ($0["stage"]?.stringValue ?? "", $0["outcome"]?.stringValue ?? "")
            }
        #expect(outcomes.contains { $0 == ("cover", "succeeded") }, "the cover was asked for again: \(outcomes)")
        #expect(outcomes.contains { $0 == ("cover-upload", "succeeded") }, "\(outcomes)")
        let video = try await aliyun(sandbox)["videos"]?.arrayValue?.first
        #expect(video?["CoverURL"]?.stringValue?.contains("/image/cover/") == true)
        await sandbox.stop()
    }

    /// With audit before publish on, a transcoded video is `Checking` until someone approves it: the wait ends
    /// there with a warning instead of waiting out its timeout, and the rest of the workflow runs.
    @Test func aVideoInReviewEndsTheWaitWithAWarning() async throws {
        let scratch = try Scratch()
        try input(scratch)
        let sandbox = try await SandboxServer.start(
            SandboxConfiguration(
                dataFolder: scratch.path("sandbox").path, transcodeDelay: .milliseconds(200), vodReview: true))
        try scratch.write("wf.json", try Self.workflow(api: sandbox.baseURL, partSize: "100KiB", renewBefore: "60s"))
        let result = try await Binary.run(
            ["run", "wf.json", "--report", "report.json"], in: scratch.root, environment: Self.environment)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("is in review (Checking"), "\(result.stdout)")
        let report = try JSONValue(parsing: Data(contentsOf: scratch.path("report.json")))
        let stages = report["items"]?.arrayValue?.first?["stages"]?.arrayValue ?? []
        #expect(stages.first { $0["stage"] == "wait" }?["outputs"]?["status"] == "Checking", "\(stages)")
        #expect(stages.first { $0["stage"] == "metadata" }?["status"] == "succeeded", "\(stages)")
        await sandbox.stop()
    }

    /// A title VOD would refuse (200 characters with emoji) is refused by `validate`, naming the limit, before
    /// anything runs; with `fitTitle` the video is made with the title cut to fit.
    @Test func aTitleBeyondVODsLimitIsRefusedByValidateAndFitsWhenAsked() async throws {
        let scratch = try Scratch()
        try input(scratch)
        let sandbox = try await SandboxServer.start(SandboxConfiguration(dataFolder: scratch.path("sandbox").path))
        let title = String(repeating: "Clip \u{1F3AC} ", count: 29)
        func workflow(fit: Bool) -> String {
            """
            {"version": 1, "name": "titled", "inputs": {"path": "in"},
             "stages": [{"id": "ticket", "uses": "aliyun.vod.ticket", "with": {"api": "\(sandbox.baseURL)", "title": "\(title)"\(
                fit ? #", "fitTitle": true"# : "")}}]}
            """
        }
        try scratch.write("wf.json", workflow(fit: false))
        let refused = try await Binary.run(["validate", "wf.json"], in: scratch.root, environment: Self.environment)
        #expect(refused.status == 2, "\(refused.stdout)\(refused.stderr)")
        #expect(
            refused.stderr.contains("stages[0].with.title:")
                && refused.stderr.contains("ApsaraVideo VOD takes a Title of at most 128 characters; this one has 203"),
            "\(refused.stderr)")
        try scratch.write("wf.json", workflow(fit: true))
        let result = try await Binary.run(["run", "wf.json"], in: scratch.root, environment: Self.environment)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let made = try await aliyun(sandbox)["videos"]?.arrayValue?.first?["Title"]?.stringValue ?? ""
        #expect(
            made.unicodeScalars.count <= 128 && made.hasPrefix("Clip  Clip") && !made.contains("\u{1F3AC}"), "\(made)")
        await sandbox.stop()
    }

    /// DeleteVideo answers 404 when none of the videos it names exists: the video is gone, which is what a
    /// delete wants.
    @Test func deletingAVideoThatIsGoneSucceeds() async throws {
        let scratch = try Scratch()
        let sandbox = try await SandboxServer.start(SandboxConfiguration(dataFolder: scratch.path("sandbox").path))
        try scratch.write("in/a.txt", "a")
        try scratch.write(
            "wf.json",
            """
            {"version": 1, "name": "gone", "inputs": {"path": "in"},
             "stages": [{"id": "delete", "uses": "aliyun.vod.delete", "with": {"api": "\(sandbox.baseURL)", "videoId": "no-such-video"}}]}
            """)
        let result = try await Binary.run(
            ["run", "wf.json", "--report", "report.json"], in: scratch.root, environment: Self.environment)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let report = try JSONValue(parsing: Data(contentsOf: scratch.path("report.json")))
        let outputs = report["items"]?.arrayValue?.first?["stages"]?.arrayValue?.first?["outputs"]
        #expect(
            outputs?["deleted"] == false && outputs?["videoId"] == "no-such-video", "\(String(describing: outputs))")
        await sandbox.stop()
    }

    @Test func anUploadOutlivesThreeExpiredCredentials() async throws {
        let scratch = try Scratch()
        try FileManager.default.createDirectory(at: scratch.path("in"), withIntermediateDirectories: true)
        let source = try randomFile(bytes: 420 << 10, seed: 32)
        try FileManager.default.copyItem(at: source, to: scratch.path("in/clip.mp4"))
        let sandbox = try await SandboxServer.start(
            SandboxConfiguration(
                dataFolder: scratch.path("sandbox").path, transcodeDelay: .milliseconds(200), stsTTL: .seconds(2)))
        let api = sandbox.baseURL
        try scratch.write(
            "wf.json",
            """
            {"version": 1, "name": "expiring", "inputs": {"path": "in"},
             "stages": [
              {"id": "ticket", "uses": "aliyun.vod.ticket", "with": {"api": "\(api)"}},
              {"id": "upload", "uses": "oss.upload", "refreshWith": "ticket", "with": {"endpoint": "${ticket.endpoint}", "region": "${ticket.region}",
                "bucket": "${ticket.bucket}", "key": "${ticket.object}", "accessKeyId": "${ticket.accessKeyId}",
                "accessKeySecret": "${ticket.accessKeySecret}", "securityToken": "${ticket.securityToken}",
                "expiration": "${ticket.expiration}", "renewBefore": "0.2s", "partSize": "100KiB", "concurrency": 1}},
              {"id": "wait", "uses": "aliyun.vod.wait", "with": {"api": "\(api)", "videoId": "${ticket.videoId}", "interval": "100ms"}}
             ]}
            """)
        // Each 100 KiB part takes 2.5 s at 40 KiB/s, each credential works for 2 s: every part after the
        // first starts with an expired one, and renews it first.
        let result = try await Binary.run(
            ["run", "wf.json", "--bwlimit", "40KiB"], in: scratch.root, environment: Self.environment)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let renewals =
            result.stdout.components(separatedBy: "credentials expired; renewing them with stage ticket").count - 1
        #expect(renewals >= 3, "\(renewals) renewals: \(result.stdout)")
        let state = try await aliyun(sandbox)
        #expect(state["videos"]?.arrayValue?.count == 1)
        #expect(state["videos"]?.arrayValue?.first?["Status"] == "Normal")
        #expect(state["objects"]?.arrayValue?.first?["SHA256"]?.stringValue == (await sha256sum(source.path)))
        #expect(state["partsStored"] == 5, "every part stored once")
        #expect(state["multipartUploads"] == 0)
        await sandbox.stop()
    }

    /// A CompleteMultipartUpload whose answer is lost, or is a 500 (OSS may have completed), with a credential that
    /// may not read the object (its HEAD answers 403): the upload is gone (NoSuchUpload) after a completion sent
    /// with every part, so it is done, and nothing is sent again.
    @Test(arguments: ["dropCompleteAnswers", "failCompleteAnswers"])
    func aLostCompletionWithAWriteOnlyCredentialIsNotUploadedAgain(fault: String) async throws {
        let scratch = try Scratch()
        try input(scratch)
        let sandbox = try await SandboxServer.start(
            SandboxConfiguration(
                dataFolder: scratch.path("sandbox").path, transcodeDelay: .milliseconds(200), ossSTSWriteOnly: true))
        try scratch.write("wf.json", try Self.workflow(api: sandbox.baseURL, partSize: "100KiB", renewBefore: "60s"))
        _ = await httpPost("\(sandbox.baseURL)/sandbox/aliyun/faults", json: "{\"\(fault)\": 1}")
        let result = try await Binary.run(
            ["run", "wf.json", "--report", "report.json"], in: scratch.root, environment: Self.environment)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let stats = try JSONValue(parsing: await httpGet("\(sandbox.baseURL)/sandbox/stats"))
        #expect(stats["droppedConnections"] == (fault == "dropCompleteAnswers" ? 1 : 0), "\(stats)")
        try await expectOnePublishedVideo(sandbox, scratch)
        let state = try await aliyun(sandbox)
        let size = state["videos"]?.arrayValue?.first.flatMap { video in
            state["objects"]?.arrayValue?.first { $0["Key"] == video["Object"] }?["Size"]?.intValue
        }
        let videoParts = ((size ?? 0) + (100 << 10) - 1) / (100 << 10)
        #expect(state["partsStored"]?.intValue == videoParts + 1, "every part stored once (the video's, the cover)")
        let report = try JSONValue(parsing: Data(contentsOf: scratch.path("report.json")))
        let upload = report["items"]?.arrayValue?.first?["stages"]?.arrayValue?.first { $0["stage"] == "upload" }
        let object = state["objects"]?.arrayValue?.first { $0["Key"] == upload?["outputs"]?["key"] }
        #expect(object != nil && upload?["outputs"]?["etag"] == object?["ETag"], "the etag a completion gives")
        await sandbox.stop()
    }

    /// A completion OSS answers with an error completed nothing: the failing run aborts the upload, and the rerun
    /// (a write-only credential: HEAD refused, the upload gone) uploads the file again instead of reporting done.
    @Test func aRefusedCompletionWithAWriteOnlyCredentialIsUploadedAgain() async throws {
        let scratch = try Scratch()
        try input(scratch)
        let sandbox = try await SandboxServer.start(
            SandboxConfiguration(
                dataFolder: scratch.path("sandbox").path, transcodeDelay: .milliseconds(200), ossSTSWriteOnly: true))
        try scratch.write("wf.json", try Self.workflow(api: sandbox.baseURL, partSize: "100KiB", renewBefore: "60s"))
        _ = await httpPost("\(sandbox.baseURL)/sandbox/aliyun/faults", json: #"{"refuseCompletes": 1}"#)
        let refused = try await Binary.run(["run", "wf.json"], in: scratch.root, environment: Self.environment)
        #expect(refused.status != 0, "InvalidPart fails the upload: \(refused.stdout)\(refused.stderr)")
        let rerun = try await Binary.run(["run", "wf.json"], in: scratch.root, environment: Self.environment)
        #expect(rerun.status == 0, "\(rerun.stdout)\(rerun.stderr)")
        try await expectOnePublishedVideo(sandbox, scratch)
        await sandbox.stop()
    }

    @Test func killNineDuringTheCreateAndTheUploadLeavesOneVideo() async throws {
        let scratch = try Scratch()
        try input(scratch)
        let sandbox = try await SandboxServer.start(
            SandboxConfiguration(dataFolder: scratch.path("sandbox").path, transcodeDelay: .milliseconds(200)))
        try scratch.write("wf.json", try Self.workflow(api: sandbox.baseURL, partSize: "100KiB", renewBefore: "60s"))
        let random = SeededRandom("killNineDuringTheCreateAndTheUploadLeavesOneVideo")
        var kills = 0
        for round in 0..<6 {
            // Even rounds: the create is answered 1.5 s late, and the kill lands while it waits (a video made, its
            // answer never heard). Odd rounds: a seeded number of part bytes reach OSS first.
            let delay = round % 2 == 0 ? 1.5 : 0
            _ = await httpPost("\(sandbox.baseURL)/sandbox/faults", json: #"{"createDelay": \#(delay)}"#)
            let before = try await aliyun(sandbox)
            let bytes = random.int(in: 20...200) << 10
            let process = try Binary.start(
                ["run", "wf.json", "--bwlimit", "128KiB"], in: scratch.root, environment: Self.environment)
            try await waitUntil("round \(round): the create or \(bytes) bytes") {
                guard process.isRunning else { return true }
                guard let now = try? await aliyun(sandbox) else { return false }
                if delay > 0 { return (now["videos"]?.arrayValue?.count ?? 0) > 0 }
                let stored = (now["partsStored"]?.intValue ?? 0) - (before["partsStored"]?.intValue ?? 0)
                return stored * (100 << 10) >= bytes
            }
            if process.isRunning {
                process.signal(SIGKILL)
                kills += 1
            }
            _ = await process.exit()
        }
        #expect(kills >= 2, "only \(kills) kills landed")
        _ = await httpPost("\(sandbox.baseURL)/sandbox/faults", json: #"{"createDelay": 0}"#)
        let finish = try await Binary.run(["run", "wf.json"], in: scratch.root, environment: Self.environment)
        #expect(finish.status == 0, "\(finish.stdout)\(finish.stderr)")
        try await expectOnePublishedVideo(sandbox, scratch)
        await sandbox.stop()
    }

    /// Each request is the one Alibaba's SDKs sign, with OSS's V4 signature by default and V1 when asked.
    @Test(arguments: [nil, "v1"] as [String?])
    func ourRequestsAreSignedAsTheSDKsSignThem(signatureVersion: String?) async throws {
        let scratch = try Scratch()
        try input(scratch)
        let verifier = try await PeerServer(
            script: "aliyun_verifier.py", arguments: ["sandbox-access-key-id", "sandbox-access-key-secret"])
        let api = "http://127.0.0.1:\(verifier.port)"
        try scratch.write(
            "wf.json",
            """
            {"version": 1, "name": "verified", "inputs": {"path": "in"},
             "stages": [
              {"id": "ticket", "uses": "aliyun.vod.ticket", "with": {"api": "\(api)", "title": "a title with spaces & *"}},
              {"id": "upload", "uses": "oss.upload", "with": {"endpoint": "${ticket.endpoint}", "region": "${ticket.region}", "bucket": "${ticket.bucket}",
                "key": "${ticket.object}", "accessKeyId": "${ticket.accessKeyId}", "accessKeySecret": "${ticket.accessKeySecret}",
                "securityToken": "${ticket.securityToken}", "expiration": "${ticket.expiration}", "partSize": "100KiB"\(
                signatureVersion.map { #", "signatureVersion": "\#($0)""# } ?? "")}}
             ]}
            """)
        let result = try await Binary.run(["run", "wf.json"], in: scratch.root, environment: Self.environment)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let log =
            (try? String(contentsOf: verifier.folder.appendingPathComponent("requests.jsonl"), encoding: .utf8)) ?? ""
        let requests = log.split(separator: "\n").compactMap { try? JSONValue(parsing: String($0)) }
        #expect(!requests.isEmpty && requests.allSatisfy { $0["verified"] == true }, "\(log)")
        let signatures = Set(requests.filter { $0["kind"] == "oss" }.compactMap { $0["signature"]?.stringValue })
        #expect(signatures == [signatureVersion ?? "v4"], "\(log)")
        let actions = Set(requests.compactMap { $0["action"]?.stringValue })
        #expect(
            actions.isSuperset(of: ["CreateUploadVideo", "POST uploads", "PUT partNumber&uploadId", "POST uploadId"]))
        let uploaded = await sha256sum(verifier.folder.appendingPathComponent("object.bin").path)
        #expect(uploaded == (await sha256sum(scratch.path("in/clip-h264-aac.mp4").path)))
    }
}
