import Foundation
import StageKit
import TestSupport
import Testing

/// Two items writing one file, as a user meets it in a state folder: the item that would write a file another item
/// writes is refused with `output-collision` before any of its stages runs, recorded failed in the ledger
/// (`status --failed`, `run --failed`, `forget`), and shown as refused by `plan`.
@Suite struct OutputClaimTests {
    /// Copies each input to `out/<stem>.copy`: `a.txt` and `a.dat` write one file. The folder is relative: it is
    /// taken from the workflow's folder.
    static let copying = """
        {"version": 1, "name": "copies", "inputs": {"path": "in"},
         "stages": [{"id": "copy", "uses": "file.copy", "with": {"from": "${input.path}", "to": "out", "name": "${input.stem}.copy"}}]}
        """

    /// How each file of a run's report ended: outcome, reason and error kind, by file name.
    private func outcomes(_ scratch: borrowing Scratch, _ report: String) throws -> [String: (String, String, String?)]
    {
        let document = try JSONValue(parsing: Data(contentsOf: scratch.path(report)))
        var outcomes: [String: (String, String, String?)] = [:]
        for record in document["items"]?.arrayValue ?? [] {
            let name = URL(fileURLWithPath: record["path"]?.stringValue ?? "").lastPathComponent
            outcomes[name] = (
                record["outcome"]?.stringValue ?? "", record["reason"]?.stringValue ?? "",
                record["errorKind"]?.stringValue
            )
        }
        return outcomes
    }

    @Test func twoFilesRemuxedToOneOutputAreBothRefusedAndRunOnceTheClashIsGone() async throws {
        let scratch = try Scratch()
        let samples = repositoryRoot.appendingPathComponent("samples")
        try FileManager.default.createDirectory(at: scratch.path("in"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: samples.appendingPathComponent("clip-h264-aac.mp4"), to: scratch.path("in/clip.mp4"))
        try FileManager.default.copyItem(
            at: samples.appendingPathComponent("clip-mpeg4.mov"), to: scratch.path("in/clip.mov"))
        try scratch.write(
            "wf.json",
            """
            {"version": 1, "name": "remux", "inputs": {"path": "in"},
             "stages": [{"id": "mp4", "uses": "ffmpeg.remux", "with": {"output": "out/${input.stem}.mp4"}}]}
            """)
        let planned = try await Binary.run(["plan", "wf.json"], in: scratch.root)
        #expect(planned.stdout.contains("2 refused"), "\(planned.stdout)")
        let output = scratch.path("out/clip.mp4").path
        let real = URL(fileURLWithPath: scratch.root.path).resolvingSymlinksInPath().path + "/out/clip.mp4"
        #expect(planned.stdout.contains(real), "\(planned.stdout)")

        let first = try await Binary.run(["run", "wf.json", "--report", "report.json"], in: scratch.root)
        #expect(first.status == 1, "\(first.stdout)\(first.stderr)")
        let ended = try outcomes(scratch, "report.json")
        for name in ["clip.mp4", "clip.mov"] {
            #expect(
                ended[name]?.0 == "failed" && ended[name]?.2 == "output-collision", "\(String(describing: ended[name]))"
            )
            #expect(ended[name]?.1.contains(real) == true, "\(String(describing: ended[name]))")
        }
        #expect(ended["clip.mp4"]?.1.contains("in/clip.mov of this batch") == true)
        #expect(!FileManager.default.fileExists(atPath: output))
        let failed = try await Binary.run(["status", "wf.json", "--failed"], in: scratch.root)
        #expect(failed.stdout.contains("clip.mp4") && failed.stdout.contains("clip.mov"), "\(failed.stdout)")
        #expect(failed.stdout.contains("output-collision"), "\(failed.stdout)")

        try FileManager.default.removeItem(at: scratch.path("in/clip.mov"))
        let again = try await Binary.run(["run", "wf.json", "--failed"], in: scratch.root)
        #expect(again.status == 0, "\(again.stdout)\(again.stderr)")
        #expect(FileManager.default.fileExists(atPath: output))
    }

    @Test func aNewFileWritingADoneItemsCopyIsRefusedUntilTheDoneItemIsForgotten() async throws {
        let scratch = try Scratch()
        try scratch.write("wf.json", Self.copying)
        try scratch.write("in/a.txt", "first\n")
        #expect(try await Binary.run(["run", "wf.json"], in: scratch.root).status == 0)
        // A new version of the done item keeps its claim on its copy.
        try scratch.write("in/a.txt", "second\n")
        let changed = try await Binary.run(["run", "wf.json"], in: scratch.root)
        #expect(changed.status == 0, "\(changed.stdout)\(changed.stderr)")
        #expect(scratch.read("out/a.copy") == "second\n")

        try scratch.write("in/a.dat", "another file\n")
        let second = try await Binary.run(["run", "wf.json", "--report", "report.json"], in: scratch.root)
        #expect(second.status == 1, "\(second.stdout)\(second.stderr)")
        let ended = try outcomes(scratch, "report.json")
        #expect(ended["a.txt"]?.0 == "reused")
        #expect(ended["a.dat"]?.0 == "failed" && ended["a.dat"]?.2 == "output-collision")
        #expect(ended["a.dat"]?.1.contains("/out/a.copy is also written by item 1 (") == true, "\(ended)")
        #expect(ended["a.dat"]?.1.contains("in/a.txt, workflow copies)") == true, "\(ended)")
        #expect(scratch.read("out/a.copy") == "second\n")
        // Refused again while the other item holds the file.
        let retried = try await Binary.run(["run", "wf.json", "--failed"], in: scratch.root)
        #expect(retried.status == 1, "\(retried.stdout)\(retried.stderr)")

        let forgot = try await Binary.run(["forget", "wf.json", "a.txt", "--yes"], in: scratch.root)
        #expect(forgot.status == 0, "\(forgot.stdout)\(forgot.stderr)")
        try FileManager.default.removeItem(at: scratch.path("in/a.txt"))
        let freed = try await Binary.run(["run", "wf.json", "--failed"], in: scratch.root)
        #expect(freed.status == 0, "\(freed.stdout)\(freed.stderr)")
        #expect(scratch.read("out/a.copy") == "another file\n")
    }

    @Test func aFileNamedByAnEarlierStagesOutputIsClaimedAsItsStageStarts() async throws {
        let scratch = try Scratch()
        try scratch.write(
            "wf.json",
            """
            {"version": 1, "name": "named", "inputs": {"path": "in"},
             "stages": [
              {"id": "names", "uses": "set", "with": {"name": "${input.stem}.copy"}},
              {"id": "copy", "uses": "file.copy", "with": {"from": "${input.path}", "to": "out", "name": "${names.name}"}}
             ]}
            """)
        try scratch.write("in/a.dat", "first\n")
        try scratch.write("in/a.txt", "second\n")
        // Unknown before the stages run: nothing is refused yet.
        let planned = try await Binary.run(["plan", "wf.json"], in: scratch.root)
        #expect(planned.stdout.contains("2 new") && !planned.stdout.contains("refused"), "\(planned.stdout)")
        let result = try await Binary.run(["run", "wf.json", "--report", "report.json"], in: scratch.root)
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        let ended = try outcomes(scratch, "report.json")
        #expect(ended["a.dat"]?.0 == "done", "\(ended)")
        #expect(ended["a.txt"]?.0 == "failed" && ended["a.txt"]?.2 == "output-collision", "\(ended)")
        #expect(ended["a.txt"]?.1.contains("in/a.dat, workflow named)") == true, "\(ended)")
        #expect(scratch.read("out/a.copy") == "first\n")
    }

    @Test func aPathNamedBySetOrExecIsNoClaim() async throws {
        let scratch = try Scratch()
        try scratch.write(
            "wf.json",
            """
            {"version": 1, "name": "intro", "inputs": {"path": "in"},
             "stages": [
              {"id": "intro", "uses": "set", "with": {"path": "out/intro.copy"}},
              {"id": "touch", "uses": "exec", "with": {"command": ["sh", "-c", "mkdir -p out && touch \\"$0\\"", "out/intro.copy"]}},
              {"id": "copy", "uses": "file.copy", "with": {"from": "${input.path}", "to": "out"}}
             ]}
            """)
        try scratch.write("in/intro.copy", "the intro\n")
        try scratch.write("in/b.txt", "b\n")
        let result = try await Binary.run(["run", "wf.json"], in: scratch.root)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(scratch.read("out/intro.copy") == "the intro\n")
    }

    @Test func watchRefusesAFileWritingADoneItemsCopy() async throws {
        let scratch = try Scratch()
        try scratch.write("wf.json", Self.copying)
        try scratch.write("in/a.txt", "first\n")
        let state = scratch.path(".pipeline")
        @Sendable func count(_ status: String) async -> Int {
            await ledgerItemCounts(under: state, workflow: "copies")[status, default: 0]
        }
        let watch = try Binary.start(["watch", "wf.json", "--settle", "1s"], in: scratch.root)
        try await waitUntil("the first file is copied") { await count("succeeded") == 1 }
        try scratch.write("in/a.dat", "another\n")
        try await waitUntil("the second file is refused") { await count("failed") == 1 }
        watch.signal(SIGINT)
        _ = await watch.exit()
        #expect(scratch.read("out/a.copy") == "first\n")
        let failed = try await Binary.run(["status", "wf.json", "--failed"], in: scratch.root)
        #expect(failed.stdout.contains("a.dat") && failed.stdout.contains("output-collision"), "\(failed.stdout)")
    }

    /// A path with `${env.…}` in it stays redacted wherever a refusal is kept or shown: the stage-start refusal in
    /// the ledger (`status --failed`) and the `--json` events (with the usual "stage ID (TYPE)" prefix), and `plan`.
    @Test func aRefusalShowsAnEnvValueOnlyAsItsName() async throws {
        let scratch = try Scratch()
        let hidden = scratch.path("hidden-target").path
        let environment = ["OUTDIR_X": hidden]
        let stages = """
              {"id": "names", "uses": "set", "with": {"name": "same.copy"}},
              {"id": "copy", "uses": "file.copy", "with": {"from": "${input.path}", "to": "${env.OUTDIR_X}", "name": "NAME"}}
            """
        try scratch.write(
            "fixed.json",
            #"{"version": 1, "name": "fixed", "inputs": {"path": "in"}, "stages": ["#
                + stages.replacingOccurrences(of: "NAME", with: "same.copy") + "]}")
        try scratch.write(
            "named.json",
            #"{"version": 1, "name": "named", "inputs": {"path": "in"}, "stages": ["#
                + stages.replacingOccurrences(of: "NAME", with: "${names.name}") + "]}")
        try scratch.write("in/a.dat", "first\n")
        try scratch.write("in/a.txt", "second\n")
        let shown = "${env.OUTDIR_X}/same.copy"

        let planned = try await Binary.run(["plan", "fixed.json"], in: scratch.root, environment: environment)
        #expect(planned.stdout.contains("2 refused") && planned.stdout.contains(shown), "\(planned.stdout)")
        #expect(!planned.stdout.contains(hidden), "\(planned.stdout)")

        // Known only as the copy starts: the second writer is refused then.
        let result = try await Binary.run(["run", "named.json", "--json"], in: scratch.root, environment: environment)
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("output-collision") && result.stdout.contains(shown), "\(result.stdout)")
        let refusals = result.stdout.split(separator: "\n").filter { $0.contains("output-collision") }
        #expect(refusals.count == 2 && !refusals.contains { $0.contains(hidden) }, "\(refusals)")
        let failed = try await Binary.run(["status", "named.json", "--failed"], in: scratch.root)
        #expect(failed.stdout.contains("stage copy (file.copy)") && failed.stdout.contains(shown), "\(failed.stdout)")
        #expect(!failed.stdout.contains(hidden), "\(failed.stdout)")
    }

    /// A relative output is the file the stage writes: it is taken from the folder the command runs in, for the
    /// claim as for the copy. Two workflows in two folders, run from a third, both copying to `out`, write one file:
    /// the second is refused, and the first one's copy stays.
    @Test func aRelativeOutputIsClaimedInTheFolderTheCommandRunsIn() async throws {
        let scratch = try Scratch()
        for name in ["p", "q"] {
            try scratch.write(
                "\(name)/wf.json",
                """
                {"version": 1, "name": "\(name)", "inputs": {"path": "in"},
                 "stages": [{"id": "copy", "uses": "file.copy", "with": {"from": "${input.path}", "to": "out", "name": "x.copy"}}]}
                """)
            try scratch.write("\(name)/in/x.txt", "from \(name)\n")
        }
        try FileManager.default.createDirectory(at: scratch.path("w"), withIntermediateDirectories: true)
        let work = scratch.path("w")
        let first = try await Binary.run(["run", "../p/wf.json", "--input", "../p/in"], in: work)
        #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
        let second = try await Binary.run(["run", "../q/wf.json", "--input", "../q/in", "--json"], in: work)
        #expect(second.status == 1 && second.stdout.contains("output-collision"), "\(second.stdout)\(second.stderr)")
        #expect(scratch.read("w/out/x.copy") == "from p\n")
    }
}
