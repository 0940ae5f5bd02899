import Foundation
import TestSupport
import Testing

/// `pipeline cancel` of an item whose branches ended differently: its `onCancel` stages read the outputs of every
/// branch that finished, whichever branch failed.
@Suite struct BranchCancelTests {
    @Test func onCancelSeesEveryFinishedBranch() async throws {
        let scratch = try Scratch()
        try scratch.write("in/clip.txt", "a clip\n")
        try scratch.write(
            "wf.json",
            """
            {"version": 1, "name": "undo", "inputs": {"path": "in"}, "defaults": {"retry": {"attempts": 1}},
             "stages": [
              {"id": "first", "uses": "set", "with": {"name": "${input.stem}"}},
              {"id": "publish", "uses": "set", "after": ["first"], "with": {"url": "https://video.example/${first.name}"}},
              {"id": "archive", "uses": "exec", "after": ["first"], "with": {"command": ["sh", "-c", "exit 3"]}},
              {"id": "announce", "uses": "set", "after": ["archive"], "with": {"note": "never"}}
             ],
             "onCancel": [{"id": "unpublish", "uses": "exec", "with": {"command": ["sh", "-c",
               "printf '%s %s' \\"$0\\" \\"$1\\" > undone.txt", "${first.name}", "${publish.url}"]}}]}
            """)
        let run = try await Binary.run(["run", "wf.json"], in: scratch.root)
        #expect(run.status == 1, "the archive branch fails the item: \(run.stdout)\(run.stderr)")
        #expect(run.stdout.contains("publish done"), "the publish branch finished: \(run.stdout)")

        let cancel = try await Binary.run(["cancel", "wf.json", "1"], in: scratch.root)
        #expect(cancel.status == 0, "\(cancel.stdout)\(cancel.stderr)")
        #expect(scratch.read("undone.txt") == "clip https://video.example/clip")
        let status = try await Binary.run(["status", "wf.json"], in: scratch.root)
        #expect(status.stdout.contains("cancelled"), "\(status.stdout)")
    }
}
