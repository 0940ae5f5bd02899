import Foundation
import TestSupport
import Testing

/// Files whose names hold a newline or a terminal escape: each item's lines (of `run`, `status` and `plan`) stay
/// one line each, with the character written as an escape, and nothing reaches the terminal as a control
/// sequence.
@Suite struct OddNameTests {
    @Test func namesWithControlCharactersStayOnOneLine() async throws {
        let scratch = try Scratch()
        try scratch.write(
            "wf.json",
            """
            {"version": 1, "name": "odd-names", "inputs": {"path": "in"}, "stages": [
              {"id": "touch", "uses": "exec", "with": {"command": ["true"]}},
              {"id": "fail", "uses": "exec", "if": "${input.size > 12}", "with": {"command": ["false"]}}
            ]}
            """)
        try scratch.write("in/new\nline.txt", "one\n")
        try scratch.write("in/esc\u{1B}[31mred.txt", "two, with more bytes\n")
        // A copy is skipped with a reason that quotes the other's name: that line is escaped too.
        try scratch.write("in/zcopy.txt", "two, with more bytes\n")
        let run = try await Binary.run(["run", "wf.json"], in: scratch.root)
        #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("✓ new\\nline.txt"), "\(lines)")
        #expect(lines.contains { $0.hasPrefix("✗ esc\\u{1B}[31mred.txt: ") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("  esc\\u{1B}[31mred.txt › fail FAILED") }, "\(lines)")
        #expect(
            lines.contains { $0.hasPrefix("– zcopy.txt: skipped: ") && $0.contains("esc\\u{1B}[31mred.txt") },
            "\(lines)")
        #expect(!run.stdout.contains("\u{1B}"), "a terminal escape from a file name reached the output")
        #expect(!lines.contains { $0.hasPrefix("line.txt") }, "a name split over two lines: \(lines)")

        // status and plan, one row each.
        for command in [["status", "wf.json"], ["plan", "wf.json"]] {
            let shown = try await Binary.run(command, in: scratch.root)
            let rows = shown.stdout.split(separator: "\n").map(String.init)
            #expect(rows.contains { $0.contains("new\\nline.txt") }, "\(command): \(rows)")
            #expect(rows.contains { $0.contains("esc\\u{1B}[31mred.txt") }, "\(command): \(rows)")
            #expect(!shown.stdout.contains("\u{1B}") && !rows.contains { $0.hasPrefix("line.txt") }, "\(rows)")
        }
    }
}
