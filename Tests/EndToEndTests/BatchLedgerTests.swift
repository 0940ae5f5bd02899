import Foundation
import Sandbox
import StageKit
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The batch ledger as a user meets it: content identity, versions, plan, report, kill -9 over a folder of
/// 200 files, and files that cannot be processed mixed in.
@Suite struct BatchLedgerTests {
    /// Two exec stages; each appends the item's name to its own log as its side effect. The second reports
    /// what the previous version's first stage printed.
    static let workflow = """
        {"version": 1, "name": "batch", "inputs": {"path": "in", "recursive": true},
         "stages": [
          {"id": "first", "uses": "exec", "with": {"command": ["sh", "-c", "echo \\"$0\\" >> first.log; echo \\"$0\\"", "${input.name}"]}},
          {"id": "second", "uses": "exec", "with": {"command": ["sh", "-c", "echo \\"$0 $1\\" >> second.log", "${input.name}", "${previous.first.stdout ?? 'none'}"]}}
        ]}
        """

    private func lines(_ scratch: borrowing Scratch, _ log: String) -> [String] {
        scratch.read(log).split(separator: "\n").map(String.init)
    }

    @Test func theSameContentRunsNothingHoweverItIsNamedAndChangedContentIsAVersion() async throws {
        let scratch = try Scratch()
        try scratch.write("wf.json", Self.workflow)
        for name in ["a", "b", "c", "d"] { try scratch.write("in/\(name).txt", "content of \(name)\n") }
        #expect(try await Binary.run(["run", "wf.json"], in: scratch.root).status == 0)
        #expect(lines(scratch, "first.log").count == 4)

        let manager = FileManager.default
        try manager.moveItem(at: scratch.path("in/a.txt"), to: scratch.path("in/renamed.txt"))
        try manager.createDirectory(at: scratch.path("in/sub"), withIntermediateDirectories: true)
        try manager.moveItem(at: scratch.path("in/b.txt"), to: scratch.path("in/sub/b.txt"))
        try manager.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: 120)], ofItemAtPath: scratch.path("in/c.txt").path)
        // A copy that does not keep the modification time (a new inode), in place of the original.
        try manager.copyItem(at: scratch.path("in/d.txt"), to: scratch.path("d-copy.txt"))
        try manager.removeItem(at: scratch.path("in/d.txt"))
        try manager.moveItem(at: scratch.path("d-copy.txt"), to: scratch.path("in/d.txt"))
        let again = try await Binary.run(["run", "wf.json", "--json"], in: scratch.root)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(runFinished(again.stdout)?["reused"] == 4, "\(again.stdout)")
        // The same file given directly, by another spelling of its path.
        let direct = try await Binary.run(
            ["run", "wf.json", "--input", "in/sub/../sub/b.txt", "--json"], in: scratch.root)
        #expect(runFinished(direct.stdout)?["reused"] == 1, "\(direct.stdout)")
        #expect(lines(scratch, "first.log").count == 4 && lines(scratch, "second.log").count == 4)

        // One byte changed: version 2, which sees version 1's outputs.
        try scratch.write("in/renamed.txt", "content of A\n")
        let changed = try await Binary.run(["run", "wf.json", "--json"], in: scratch.root)
        #expect(runFinished(changed.stdout)?["succeeded"] == 1 && runFinished(changed.stdout)?["reused"] == 3)
        #expect(lines(scratch, "second.log").last == "renamed.txt a.txt", "\(lines(scratch, "second.log"))")
        let item = try #require(
            await ledgerEntries(under: scratch.path(".pipeline"), workflow: "batch").first {
                $0.relativePath == "renamed.txt"
            })
        #expect(item.version == 2)
        // A copy beside the original is the same content: skipped with the reason, not run twice.
        try manager.copyItem(at: scratch.path("in/c.txt"), to: scratch.path("in/c-copy.txt"))
        let duplicate = try await Binary.run(["run", "wf.json"], in: scratch.root)
        #expect(duplicate.stdout.contains("c-copy.txt: skipped: the same content as"), "\(duplicate.stdout)")
        #expect(lines(scratch, "first.log").count == 5)
    }

    @Test func planWritesNothingAndSaysWhatTheNextRunDoes() async throws {
        let scratch = try Scratch()
        try scratch.write("wf.json", Self.workflow)
        for name in ["a", "b", "c"] { try scratch.write("in/\(name).txt", "content of \(name)\n") }
        try scratch.write("in/.hidden", "hidden")
        #expect(try await Binary.run(["run", "wf.json"], in: scratch.root).status == 0)
        // Something of every kind: changed, renamed, new, done, and an edit that reruns one stage.
        try scratch.write("in/a.txt", "content of A\n")
        try FileManager.default.moveItem(at: scratch.path("in/b.txt"), to: scratch.path("in/b2.txt"))
        try scratch.write("in/new.txt", "new\n")
        let before = scratch.allFiles(under: ".pipeline").sorted { $0.0 < $1.0 }
        let plan = try await Binary.run(["plan", "wf.json", "--json"], in: scratch.root)
        #expect(plan.status == 0, "\(plan.stderr)")
        let after = scratch.allFiles(under: ".pipeline").sorted { $0.0 < $1.0 }
        #expect(before.map(\.0) == after.map(\.0) && before.map(\.1) == after.map(\.1), "plan changed the state folder")

        let planned = try #require(try JSONValue(parsing: plan.stdout)["items"]?.arrayValue)
        var expected: [String: String] = [:]
        for entry in planned {
            let name = URL(fileURLWithPath: entry["path"]?.stringValue ?? "").lastPathComponent
            expected[name] = entry["plan"]?.stringValue
        }
        #expect(
            expected == ["a.txt": "changed", "b2.txt": "renamed", "c.txt": "done", "new.txt": "new", ".hidden": "skip"])

        let run = try await Binary.run(["run", "wf.json", "--json"], in: scratch.root)
        #expect(run.status == 0)
        let events = run.stdout.split(separator: "\n").compactMap { try? JSONValue(parsing: String($0)) }
        var outcomes: [String: String] = [:]
        var stages: [String: String] = [:]
        for event in events {
            let item = event["item"]?.stringValue ?? ""
            if event["event"] == "itemFinished" { outcomes[item] = event["outcome"]?.stringValue }
            if event["event"] == "stageFinished" {
                stages["\(item)/\(event["stage"]?.stringValue ?? "")"] = event["outcome"]?.stringValue
            }
        }
        let word = ["changed": "done", "new": "done", "run": "done", "renamed": "reused", "done": "reused"]
        for (name, plan) in expected where plan != "skip" {
            #expect(outcomes[name] == word[plan], "\(name): planned \(plan), ran \(outcomes[name] ?? "nothing")")
        }
        for entry in planned {
            let name = URL(fileURLWithPath: entry["path"]?.stringValue ?? "").lastPathComponent
            for stage in entry["stages"]?.arrayValue ?? [] {
                let id = stage["stage"]?.stringValue ?? ""
                let action = ["run": "succeeded", "reuse": "reused", "skip": "skipped"][
                    stage["action"]?.stringValue ?? ""]
                #expect(stages["\(name)/\(id)"] == action, "\(name)/\(id)")
            }
        }
    }

    @Test func twoHundredFilesSurviveKillNineAtRandomMomentsAndEachIsDoneOnce() async throws {
        let scratch = try Scratch()
        let count = 200
        let jobs = 4
        try scratch.write(
            "wf.json",
            """
            {"version": 1, "name": "many", "inputs": {"path": "in"},
             "stages": [
              {"id": "work", "uses": "exec", "with": {"command": ["sh", "-c", "echo \\"$0\\" >> work.log; sleep 0.01; mkdir -p out; echo \\"$0\\" > out/$0.tmp && mv out/$0.tmp out/$0", "${input.name}"]}},
              {"id": "done", "uses": "exec", "with": {"command": ["sh", "-c", "echo \\"$0\\" >> done.log", "${input.name}"]}}
            ]}
            """)
        for index in 0..<count { try scratch.write("in/f\(String(format: "%03d", index)).txt", "file \(index)\n") }
        let random = SeededRandom("twoHundredFilesSurviveKillNineAtRandomMomentsAndEachIsDoneOnce")
        let state = scratch.path(".pipeline")
        var kills = 0
        while kills < 5 {
            let done = await ledgerItemCounts(under: state, workflow: "many")["succeeded", default: 0]
            let target = done + random.int(in: 5...30)
            let process = try Binary.start(["run", "wf.json", "--jobs", "\(jobs)"], in: scratch.root)
            try await waitUntil("\(target) items done") {
                guard process.isRunning else { return true }
                return await ledgerItemCounts(under: state, workflow: "many")["succeeded", default: 0] >= target
            }
            guard process.isRunning else { break }
            process.signal(SIGKILL)
            _ = await process.exit()
            kills += 1
        }
        #expect(kills == 5, "the batch finished before five kills")
        let final = try await Binary.run(
            ["run", "wf.json", "--jobs", "\(jobs)", "--report", "report.json", "--json"], in: scratch.root)
        #expect(final.status == 0, "\(final.stderr)")

        let entries = await ledgerEntries(under: state, workflow: "many")
        #expect(entries.count == count)
        #expect(Set(entries.map(\.path)).count == count)
        #expect(entries.allSatisfy { $0.status == "succeeded" && $0.stages.count == 2 && $0.version == 1 })
        for index in 0..<count {
            let name = "f\(String(format: "%03d", index)).txt"
            #expect(scratch.read("out/\(name)") == "\(name)\n", "\(name)")
        }
        // A kill cuts at most one stage per running item after its side effect.
        let work = lines(scratch, "work.log")
        #expect(Set(work).count == count && work.count - count <= kills * jobs, "\(work.count - count) repeats")
        let report = try JSONValue(parsing: Data(contentsOf: scratch.path("report.json")))
        let records = try #require(report["items"]?.arrayValue)
        #expect(records.count == count)
        #expect(records.allSatisfy { ["done", "reused"].contains($0["outcome"]?.stringValue ?? "") })
        #expect(records.allSatisfy { $0["stages"]?.arrayValue?.count == 2 })
    }

    /// Files named as media that FFmpeg cannot read (text, an MP4 cut before its index, an empty file) fail their
    /// items as damaged by default, with FFmpeg's reason, exit 1 and a row in `status --failed`; with
    /// `inputs.damaged: "skip"` they are skipped as files that do not claim to be media always are. Either way the
    /// others finish, and a file that cannot be read at all (no permission) is skipped.
    @Test(arguments: [nil, "skip"] as [String?])
    func damagedMediaFailsUnlessSkippedAndTheOtherFilesFinish(damaged: String?) async throws {
        let scratch = try Scratch()
        let samples = repositoryRoot.appendingPathComponent("samples")
        try FileManager.default.createDirectory(at: scratch.path("in"), withIntermediateDirectories: true)
        for name in ["clip-h264-aac.mp4", "clip-no-audio.mp4", "not-media.mp4"] {
            try FileManager.default.copyItem(at: samples.appendingPathComponent(name), to: scratch.path("in/\(name)"))
        }
        var truncated = try Data(contentsOf: samples.appendingPathComponent("clip-h264-aac.mp4"))
        truncated.removeLast(truncated.count / 2)
        try truncated.write(to: scratch.path("in/corrupt.mp4"))
        try scratch.write("in/empty.mp4", "")
        try scratch.write("in/notes.txt", "not a video\n")
        try scratch.write("in/locked.mp4", "locked")
        chmod(scratch.path("in/locked.mp4").path, 0)
        let policy = damaged.map { #", "damaged": "\#($0)""# } ?? ""
        try scratch.write(
            "wf.json",
            """
            {"version": 1, "name": "media", "inputs": {"path": "in"\(policy)},
             "stages": [{"id": "probe", "uses": "ffmpeg.probe"}]}
            """)
        // As root every file is readable: run as nobody, so the locked file really is unreadable.
        let asNobody = getuid() == 0
        if asNobody {
            chmod(scratch.root.path, 0o777)
            chmod(scratch.path("in").path, 0o777)
        }
        func pipeline(_ command: [String]) async throws -> Binary.Output {
            guard asNobody else { return try await Binary.run(command, in: scratch.root) }
            return try await Binary.run(
                ["--reuid=65534", "--regid=65534", "--clear-groups", Binary.url.path] + command, in: scratch.root,
                executable: URL(fileURLWithPath: "/usr/bin/setpriv"))
        }
        let result = try await pipeline(["run", "wf.json", "--report", "report.json"])
        let report = try JSONValue(parsing: Data(contentsOf: scratch.path("report.json")))
        var outcomes: [String: (outcome: String, reason: String, kind: String?)] = [:]
        for record in report["items"]?.arrayValue ?? [] {
            let name = URL(fileURLWithPath: record["path"]?.stringValue ?? "").lastPathComponent
            outcomes[name] = (
                record["outcome"]?.stringValue ?? "", record["reason"]?.stringValue ?? "",
                record["errorKind"]?.stringValue
            )
        }
        #expect(outcomes["clip-h264-aac.mp4"]?.outcome == "done")
        #expect(outcomes["clip-no-audio.mp4"]?.outcome == "done")
        let claimingMedia = ["not-media.mp4", "corrupt.mp4", "empty.mp4"]
        for name in claimingMedia {
            let seen = String(describing: outcomes[name])
            if damaged == "skip" {
                #expect(outcomes[name]?.outcome == "skipped", "\(name): \(seen)")
                #expect(outcomes[name]?.reason.hasPrefix("not media FFmpeg can read") == true, "\(name): \(seen)")
            } else {
                #expect(outcomes[name]?.outcome == "failed" && outcomes[name]?.kind == "damaged-input", "\(seen)")
                #expect(outcomes[name]?.reason.hasPrefix("the input is damaged or truncated: ") == true, "\(seen)")
            }
        }
        #expect(outcomes["corrupt.mp4"]?.reason.contains("moov atom not found") == true)
        // A file whose name does not say media is only not media.
        #expect(outcomes["notes.txt"]?.outcome == "skipped")
        #expect(outcomes["notes.txt"]?.reason.hasPrefix("not media FFmpeg can read") == true)
        #expect(outcomes["locked.mp4"]?.outcome == "skipped")
        #expect(
            outcomes["locked.mp4"]?.reason.contains("Permission denied") == true,
            "\(String(describing: outcomes["locked.mp4"]))")
        let failed = try await pipeline(["status", "--failed"])
        if damaged == "skip" {
            #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
            #expect(report["summary"]?["skipped"] == 5 && report["summary"]?["succeeded"] == 2)
            #expect(!failed.stdout.contains(".mp4"), "\(failed.stdout)")
        } else {
            #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
            #expect(report["summary"]?["failed"] == 3 && report["summary"]?["skipped"] == 2)
            for name in claimingMedia {
                #expect(failed.stdout.contains(name), "\(failed.stdout)")
            }
            #expect(failed.stdout.contains("damaged-input"), "\(failed.stdout)")
        }
    }

    @Test(arguments: [false, true])
    func watchTakesFilesOnceTheyStopGrowingAndARestartDoesNotTakeThemAgain(polling: Bool) async throws {
        let scratch = try Scratch()
        try scratch.write(
            "wf.json",
            """
            {"version": 1, "name": "watch", "inputs": {"path": "in"},
             "stages": [{"id": "take", "uses": "exec", "with": {"command": ["sh", "-c", "echo \\"$0 $1\\" >> taken.log", "${input.name}", "${input.size}"]}}]}
            """)
        try scratch.write("in/first.txt", "first\n")
        let state = scratch.path(".pipeline")
        @Sendable func done() async -> Int {
            await ledgerItemCounts(under: state, workflow: "watch")["succeeded", default: 0]
        }
        let command = ["watch", "wf.json", "--settle", "1s"] + (polling ? ["--poll"] : [])
        let watch = try Binary.start(command, in: scratch.root)
        try await waitUntil("the first file is taken") { await done() == 1 }
        // A file copied in slowly: chunks much closer together than the settle time, for longer than the settle time
        // and `--poll`'s 1 s rescan together (a watcher that counted the settle time from the file's first sighting
        // would take it half written, even when it first sees the file a rescan late).
        let slow = scratch.path("in/slow.txt")
        #expect(FileManager.default.createFile(atPath: slow.path, contents: nil))
        let handle = try FileHandle(forWritingTo: slow)
        for chunk in 0..<25 {
            try handle.write(contentsOf: Data(String(repeating: "\(chunk % 10)", count: 1000).utf8))
            try await Task.sleep(for: .milliseconds(100))
        }
        try handle.close()
        try await waitUntil("the slow file is taken") { await done() == 2 }
        #expect(lines(scratch, "taken.log") == ["first.txt 6", "slow.txt 25000"])
        watch.signal(SIGINT)
        #expect(await watch.exit() == 0, "\(watch.stderr.soFar)")

        let again = try Binary.start(command, in: scratch.root)
        try scratch.write("in/third.txt", "third\n")
        try await waitUntil("the third file is taken") { await done() == 3 }
        again.signal(SIGINT)
        #expect(await again.exit() == 0)
        #expect(lines(scratch, "taken.log") == ["first.txt 6", "slow.txt 25000", "third.txt 6"])
    }

    @Test func cancelWhileARunHoldsTheStoreStopsTheItemAndItStaysCancelled() async throws {
        let scratch = try Scratch()
        try scratch.write(
            "wf.json",
            """
            {"version": 1, "name": "cancel", "inputs": {"path": "in"},
             "stages": [{"id": "work", "uses": "exec", "with": {"command": ["sh", "-c", "sleep $(cat \\"$0\\")", "${input.path}"]}}],
             "onCancel": [{"id": "undo", "uses": "exec", "with": {"command": ["sh", "-c", "echo \\"$0\\" >> undone.log", "${input.name}"]}}]}
            """)
        try scratch.write("in/long.txt", "60")
        try scratch.write("in/short.txt", "0.5")
        let state = scratch.path(".pipeline")
        let run = try Binary.start(["run", "wf.json", "--jobs", "2"], in: scratch.root)
        // The long item is admitted (its 60 s stage runs); the short one may already be done: a window of
        // half a second is easy to miss on a loaded machine.
        try await waitUntil("the long item runs") {
            await ledgerEntries(under: state, workflow: "cancel").contains {
                $0.relativePath == "long.txt" && $0.status == "pending"
            }
        }
        let cancel = try await Binary.run(["cancel", "wf.json", "long.txt"], in: scratch.root)
        #expect(cancel.status == 0, "\(cancel.stderr)")
        #expect(cancel.stdout.contains("cancelled long.txt"))
        #expect(await run.exit() == 0)
        #expect(lines(scratch, "undone.log") == ["long.txt"])
        let entries = await ledgerEntries(under: state, workflow: "cancel")
        #expect(entries.first { $0.relativePath == "long.txt" }?.status == "cancelled")
        #expect(entries.first { $0.relativePath == "short.txt" }?.status == "succeeded")

        let again = try await Binary.run(["run", "wf.json"], in: scratch.root)
        #expect(again.status == 0)
        #expect(again.stdout.contains("long.txt: skipped: cancelled"), "\(again.stdout)")
    }

    /// `pipeline cancel` tells the truth: an undo stage that fails (the platform answers 500) or whose
    /// options cannot be evaluated makes it exit 1 with the reason, and the item is not cancelled.
    @Test func aCancelWhoseUndoFailsExitsOneAndTheItemIsNotCancelled() async throws {
        let scratch = try Scratch()
        let sandbox = try await SandboxServer.start(SandboxConfiguration(dataFolder: scratch.path("sandbox").path))
        try scratch.write(
            "wf.json",
            """
            {"version": 1, "name": "undo", "inputs": {"path": "in"},
             "stages": [
              {"id": "work", "uses": "exec", "with": {"command": ["echo", "${input.name}"]}},
              {"id": "never", "uses": "exec", "if": "input.name == 'none'", "with": {"command": ["echo", "x"]}}
             ],
             "onCancel": [
              {"id": "delete", "uses": "http.request", "if": "input.name == 'remote.txt'", "retry": {"attempts": 1},
               "with": {"method": "DELETE", "url": "\(sandbox.baseURL)/videos/1", "headers": {"Authorization": "bearer sandbox-token"},
                 "expect": [204, 404]}},
              {"id": "local", "uses": "exec", "if": "input.name == 'local.txt'", "with": {"command": ["echo", "${never.stdout}"]}}
             ]}
            """)
        try scratch.write("in/remote.txt", "remote")
        try scratch.write("in/local.txt", "local")
        #expect(try await Binary.run(["run", "wf.json"], in: scratch.root).status == 0)
        _ = await httpPost("\(sandbox.baseURL)/sandbox/faults", json: #"{"errorRate": 1}"#)
        let state = scratch.path(".pipeline")
        for (name, reason) in [("remote.txt", "DELETE"), ("local.txt", "cannot undo")] {
            let cancel = try await Binary.run(["cancel", "wf.json", name], in: scratch.root)
            #expect(cancel.status == 1, "\(name): \(cancel.stdout)\(cancel.stderr)")
            #expect((cancel.stdout + cancel.stderr).contains(reason), "\(name): \(cancel.stdout)\(cancel.stderr)")
            #expect(!cancel.stdout.contains("cancelled \(name)"), "\(cancel.stdout)")
            let entries = await ledgerEntries(under: state, workflow: "undo")
            #expect(entries.first { $0.relativePath == name }?.status == "succeeded")
        }
        await sandbox.stop()
    }

    @Test func failuresAreReportedRetriedAloneAndForgottenItemsAreNewAgain() async throws {
        let scratch = try Scratch()
        try scratch.write(
            "wf.json",
            """
            {"version": 1, "name": "queue", "inputs": {"path": "in"},
             "stages": [{"id": "check", "uses": "exec", "retry": {"attempts": 1}, "with": {"command": ["sh", "-c", "echo \\"$1\\" >> checked.log; test \\"$(cat \\"$0\\")\\" != fail", "${input.path}", "${input.name}"]}}]}
            """)
        try scratch.write("in/ok.txt", "fine")
        try scratch.write("in/bad.txt", "fail")
        let first = try await Binary.run(["run", "wf.json", "--report", "report.json"], in: scratch.root)
        #expect(first.status == 1)
        let report = try JSONValue(parsing: Data(contentsOf: scratch.path("report.json")))
        let bad = try #require(
            report["items"]?.arrayValue?.first { $0["path"]?.stringValue?.hasSuffix("bad.txt") == true })
        #expect(bad["outcome"] == "failed" && bad["errorKind"] == "command-failed", "\(bad)")
        let check = bad["stages"]?.arrayValue?.first
        #expect(check?["status"] == "failed" && check?["attempts"] == 1, "\(bad)")
        #expect(report["summary"]?["failed"] == 1 && report["summary"]?["succeeded"] == 1)

        let failed = try await Binary.run(["status", "--failed"], in: scratch.root)
        #expect(failed.stdout.contains("bad.txt") && !failed.stdout.contains("ok.txt"), "\(failed.stdout)")
        let json = try JSONValue(parsing: try await Binary.run(["status", "--json"], in: scratch.root).stdout)
        let statuses = (json.arrayValue?.first?["items"]?.arrayValue ?? []).compactMap { $0["status"]?.stringValue }
            .sorted()
        #expect(statuses == ["failed", "succeeded"])

        try scratch.write("in/bad.txt", "fixed")
        let retry = try await Binary.run(["run", "wf.json", "--failed", "--json"], in: scratch.root)
        #expect(retry.status == 0)
        #expect(runFinished(retry.stdout)?["succeeded"] == 1 && runFinished(retry.stdout)?["skipped"] == 1)
        #expect(lines(scratch, "checked.log") == ["bad.txt", "ok.txt", "bad.txt"])

        let refused = try await Binary.run(["forget", "wf.json", "ok.txt"], in: scratch.root)
        #expect(refused.status == 2 && refused.stderr.contains("--yes"), "\(refused.stderr)")
        #expect(try await Binary.run(["forget", "wf.json", "ok.txt", "--yes"], in: scratch.root).status == 0)
        #expect(try await Binary.run(["run", "wf.json"], in: scratch.root).status == 0)
        #expect(lines(scratch, "checked.log") == ["bad.txt", "ok.txt", "bad.txt", "ok.txt"])
    }
}
