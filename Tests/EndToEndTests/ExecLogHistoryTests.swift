import Foundation
import StageKit
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// An `exec` stage's stderr in its item's history (`GET /api/items/:id/history`), from a real run of a shell script:
/// after a success (the checkpoint's attempt carries the lines), after a failing exit (the recorded attempt carries
/// them beside its error), and after a stop at its `timeLimit` (what it wrote before it was stopped is kept); the run's
/// output shows those lines only with `--verbose`.
@Suite(.serialized) struct ExecLogHistoryTests {
    /// Each file's script says something on stderr, then succeeds, fails, or hangs past the 2 s limit.
    static let workflow = """
        {"version": 1, "name": "said", "inputs": {"path": "in"},
         "stages": [{"id": "say", "uses": "exec", "retry": {"attempts": 1}, "with": {"timeLimit": "2s", "command": ["sh", "-c",
           "echo \\"$0 said this\\" >&2; echo 'second line' >&2; case \\"$0\\" in ok*) exit 0;; bad*) exit 3;; esac; sleep 30",
           "${input.stem}"]}}]}
        """

    @Test func stderrShowsInTheHistoryAfterASuccessAFailureAndAStop() async throws {
        let scratch = try Scratch()
        try scratch.write("wf.json", Self.workflow)
        for name in ["ok", "bad", "slow"] { try scratch.write("in/\(name).txt", "\(name)\n") }
        let run = try await Binary.run(["run", "wf.json", "--state", "state"], in: scratch.root)
        #expect(run.status != 0, "two of the three fail")
        let shown = run.stdout + run.stderr
        #expect(!shown.contains("ok said this") && !shown.contains("slow said this"), "\(shown)")
        let said = shown.split(separator: "\n").filter { $0.contains("said this") }
        let inTheError = said.filter { $0.contains("bad.txt › say FAILED: ") || $0.contains("✗ bad.txt: ") }
        #expect(said.count == 2 && inTheError.count == 2, "only in bad.txt's error: \(shown)")
        let served = try await ServedDashboard.start(["--state", "state"], in: scratch.root)
        defer { served.process.signal(SIGKILL) }

        let ok = try await lastAttempt(of: "ok.txt", served)
        #expect(ok["outcome"] == "succeeded")
        #expect(ok["log"] == ["info: ok said this", "info: second line"], "\(ok)")

        let bad = try await lastAttempt(of: "bad.txt", served)
        #expect(bad["outcome"] == "failed" && bad["error"] == "sh exited with status 3: bad said this\nsecond line")
        #expect(bad["log"] == ["info: bad said this", "info: second line"], "\(bad)")

        let slow = try await lastAttempt(of: "slow.txt", served)
        #expect(slow["error"] == "sh ran longer than its timeLimit of 2.0s and was stopped", "\(slow)")
        #expect(slow["log"] == ["info: slow said this", "info: second line"], "\(slow)")
    }

    /// With `--verbose` the run's output shows what the program said, a line each, at debug level.
    @Test func verboseShowsTheStderrLinesOneByOne() async throws {
        let scratch = try Scratch()
        try scratch.write("wf.json", Self.workflow)
        try scratch.write("in/ok.txt", "ok\n")
        let run = try await Binary.run(["run", "wf.json", "--state", "state", "--verbose"], in: scratch.root)
        #expect(run.status == 0, "\(run.stderr)")
        let lines = (run.stdout + run.stderr).split(separator: "\n").map(String.init)
        #expect(lines.filter { $0.hasSuffix("ok.txt › say: [debug] ok said this") }.count == 1, "\(lines)")
        #expect(lines.filter { $0.hasSuffix("ok.txt › say: [debug] second line") }.count == 1, "\(lines)")
    }

    /// The last attempt of the only stage of the item at `path`, as its history shows it.
    private func lastAttempt(of path: String, _ served: ServedDashboard) async throws -> JSONValue {
        let (_, items) = try await served.request("/api/items?q=\(path)")
        let id = try #require(
            items["items"]?.arrayValue?.first { $0["relativePath"]?.stringValue == path }?["id"]?.intValue)
        let (status, history) = try await served.request("/api/items/\(id)/history")
        #expect(status == 200)
        let stage = history["versions"]?.arrayValue?.last?["stages"]?.arrayValue?.first
        return try #require(stage?["attempts"]?.arrayValue?.last)
    }
}
