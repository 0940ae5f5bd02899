import Foundation
import StageKit
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `kill -9` at random moments, rerun until done: every stage of every item ran, side effects repeat at
/// most once per kill, outputs are right, and a rerun over finished work runs nothing.
@Suite struct KillResumeTests {
    static let items = 20
    static let kills = 10

    /// Five stages; each exec stage appends "item" to its own log as its side effect.
    static let workflow = """
        {
          "version": 1,
          "name": "kill-resume",
          "inputs": {"path": "in", "include": "*.dat"},
          "vars": {"out": "out", "logs": "logs"},
          "defaults": {"retry": {"attempts": 2, "initialDelay": "10ms"}},
          "stages": [
            {"id": "size", "uses": "exec", "with": {"command": ["sh", "-c",
              "echo \\"$1\\" >> $0/size.log; sleep 0.03; printf '{\\"bytes\\": %s}' $(wc -c < \\"$2\\")",
              "${vars.logs}", "${input.name}", "${input.path}"]}},
            {"id": "copy", "uses": "file.copy", "with": {"from": "${input.path}", "to": "${vars.out}/copies"}},
            {"id": "sum", "uses": "exec", "with": {"command": ["sh", "-c",
              "echo \\"$1\\" >> $0/sum.log; sleep 0.03; cksum < \\"$2\\" | cut -d' ' -f1",
              "${vars.logs}", "${input.name}", "${copy.path}"]}},
            {"id": "note", "uses": "exec", "with": {"command": ["sh", "-c",
              "echo \\"$1\\" >> $0/note.log; mkdir -p $3; echo \\"$4 $5\\" > $3/$1.txt; sleep 0.03",
              "${vars.logs}", "${input.name}", "unused", "${vars.out}/notes", "${sum.stdout}", "${size.stdout.bytes}"]}},
            {"id": "final", "uses": "exec", "with": {"command": ["sh", "-c",
              "sleep 0.03; echo \\"$1\\" >> $0/final.log", "${vars.logs}", "${input.name}"]}}
          ]
        }
        """

    /// The same stages as branches: `size` and `copy` start together, `sum` waits for `copy`, `note` for both
    /// sides, and `final` for `size` alone, so a kill lands while several stages of an item run at once.
    static let branchedWorkflow = workflow.replacingOccurrences(
        of: #"{"id": "copy", "uses""#, with: #"{"id": "copy", "after": [], "uses""#
    ).replacingOccurrences(
        of: #"{"id": "note", "uses""#, with: #"{"id": "note", "after": ["sum", "size"], "uses""#
    ).replacingOccurrences(
        of: #"{"id": "final", "uses""#, with: #"{"id": "final", "after": ["size"], "uses""#)

    @Test func killNineAtRandomMomentsThenResume() async throws {
        try await killAndResume(
            Self.workflow, items: Self.items, kills: Self.kills, seed: "killNineAtRandomMomentsThenResume")
    }

    @Test func killNineWhileBranchesRunThenResume() async throws {
        #expect(Self.branchedWorkflow.components(separatedBy: "\"after\"").count == 4, "the edit found its stages")
        // At most two of its stages run at once (size or final beside copy, sum or note): a kill cuts two at most.
        try await killAndResume(
            Self.branchedWorkflow, items: 8, kills: 5, atOnce: 2, seed: "killNineWhileBranchesRunThenResume")
    }

    /// Runs `workflow` over `items` files, killed with -9 `kills` times at seeded moments, then to the end, and
    /// checks what every stage did; `atOnce` stages of an item run at the same time at most, and each may be cut
    /// after its side effect.
    private func killAndResume(
        _ workflow: String, items: Int, kills wanted: Int, atOnce: Int = 1, seed: String
    ) async throws {
        let scratch = try Scratch()
        try scratch.write("wf.json", workflow)
        try FileManager.default.createDirectory(at: scratch.path("logs"), withIntermediateDirectories: true)
        for index in 0..<items {
            try scratch.write(
                "in/item\(String(format: "%02d", index)).dat",
                String(repeating: "media \(index) ", count: 100 + index * 37))
        }

        let random = SeededRandom(seed)
        let state = scratch.path("state")
        let logs = scratch.path("logs")
        var kills = 0
        var attempts = 0
        while kills < wanted && attempts < 40 {
            attempts += 1
            // The moment, chosen by the seed a few steps on from where the last run stopped: just after a
            // stage's side effect (before its checkpoint) or just after a stage's checkpoint (between stages).
            // Five steps at most per run: ten runs cannot finish the 100 stages.
            let afterSideEffect = random.int(in: 0...1) == 0
            let progress: @Sendable () async -> Int
            if afterSideEffect {
                progress = { Self.sideEffects(in: logs) }
            } else {
                progress = { await Self.finishedStages(in: state) }
            }
            let target = await progress() + random.int(in: 1...5)
            let process = try Binary.start(["run", "wf.json", "--state", "state"], in: scratch.root)
            try await waitUntil("\(target) \(afterSideEffect ? "side effects" : "finished stages")") {
                guard process.isRunning else { return true }
                return await progress() >= target
            }
            if process.isRunning {
                process.signal(SIGKILL)
                kills += 1
            }
            if await process.exit() != 128 + SIGKILL { break }  // finished before the kill: no more work to cut
        }
        #expect(kills == wanted, "the run finished before \(wanted) kills (\(kills))")

        var finalRun = try await Binary.run(["run", "wf.json", "--state", "state"], in: scratch.root)
        var reruns = 1
        while finalRun.status != 0 && reruns < 5 {
            finalRun = try await Binary.run(["run", "wf.json", "--state", "state"], in: scratch.root)
            reruns += 1
        }
        #expect(finalRun.status == 0, "\(finalRun.stdout)\n\(finalRun.stderr)")

        // Every stage of every item ran; repeats only where a kill cut a running stage after its work.
        var repeats = 0
        for log in ["size", "sum", "note", "final"] {
            let lines = scratch.read("logs/\(log).log").split(separator: "\n").map(String.init)
            let counts = Dictionary(lines.map { ($0, 1) }, uniquingKeysWith: +)
            #expect(counts.count == items, "\(log): \(counts.count) items")
            repeats += counts.values.reduce(0) { $0 + $1 - 1 }
        }
        #expect(repeats <= kills * atOnce, "\(repeats) repeated side effects for \(kills) kills")

        // Outputs are right: the copies equal the inputs; each note has the copy's checksum and size.
        for index in 0..<items {
            let name = "item\(String(format: "%02d", index)).dat"
            let input = try Data(contentsOf: scratch.path("in/\(name)"))
            #expect(try Data(contentsOf: scratch.path("out/copies/\(name)")) == input)
            let note = scratch.read("out/notes/\(name).txt").split(separator: " ").map {
                $0.trimmingCharacters(in: .whitespacesAndNewlines)
            }
            #expect(note.count == 2 && note[1] == String(input.count), "\(name): \(note)")
        }
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: scratch.path("out/copies").path).filter {
            $0.hasPrefix(".")
        }
        #expect(leftovers.isEmpty, "partial files left: \(leftovers)")

        // A rerun over finished work runs nothing.
        let idle = try await Binary.run(["run", "wf.json", "--state", "state", "--json"], in: scratch.root)
        #expect(idle.status == 0)
        let summary = try #require(runFinished(idle.stdout))
        #expect(summary["stagesRun"] == 0)
        #expect(summary["reused"] == .int(items))
    }

    /// The side effects so far: the lines of the stages' logs.
    static func sideEffects(in logs: URL) -> Int {
        ["size", "sum", "note", "final"].reduce(0) { count, log in
            let text = (try? String(contentsOf: logs.appendingPathComponent("\(log).log"), encoding: .utf8)) ?? ""
            return count + text.split(separator: "\n").count
        }
    }

    /// The stages finished so far: checkpoints that say `succeeded`.
    static func finishedStages(in state: URL) async -> Int {
        await ledgerStageCounts(under: state, workflow: "kill-resume")["succeeded", default: 0]
    }
}
