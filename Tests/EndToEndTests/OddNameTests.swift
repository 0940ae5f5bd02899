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

    /// The lines of a stage, not only of its item, quote a file's name escaped: a retry's and a failure's message (a
    /// command's stderr naming the file) and the log lines carrying the path.
    @Test func aStagesRetryFailureAndLogLinesEscapeTheName() async throws {
        let scratch = try Scratch()
        let name = "new\nline\u{1B}[31m.txt"
        let shown = "new\\nline\\u{1B}[31m.txt"
        try scratch.write(
            "wf.json",
            #"""
            {"version": 1, "name": "odd-stage-lines", "inputs": {"path": "in"}, "stages": [
              {"id": "note", "uses": "exec", "with": {"command": ["sh", "-c", "echo \"reading $0\" >&2", "${input.path}"]}},
              {"id": "open", "uses": "exec", "retry": {"attempts": 2, "initialDelay": "10ms", "maxDelay": "10ms"},
               "with": {"command": ["sh", "-c", "echo \"cannot open $0\" >&2; exit 1", "${input.path}"]}}
            ]}
            """#)
        try scratch.write("in/\(name)", "one\n")
        let run = try await Binary.run(["run", "wf.json", "--verbose"], in: scratch.root)
        #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(!run.stdout.contains("\u{1B}"), "a terminal escape from a file name reached the output: \(lines)")
        #expect(!lines.contains { $0.hasPrefix("line") || $0.hasPrefix(".txt") }, "a line split in two: \(lines)")
        let retry = lines.first { $0.contains("open: attempt 1 of 2 failed") }
        #expect(retry?.hasPrefix("  \(shown) › open: ") == true, "\(lines)")
        #expect(retry?.contains("cannot open ") == true && retry?.contains("\(shown); retrying in") == true, "\(lines)")
        let failed = lines.first { $0.contains("open FAILED") }
        #expect(failed?.hasPrefix("  \(shown) › open FAILED: ") == true, "\(lines)")
        #expect(failed?.contains("cannot open ") == true && failed?.hasSuffix("in/\(shown)") == true, "\(lines)")
        // The program's stderr is shown a line each (at debug level), so the name's newline ends its first line.
        let log = try #require(lines.firstIndex { $0.contains("reading ") }, "\(lines)")
        #expect(lines[log].hasPrefix("  \(shown) › note: [debug] reading /") && lines[log].hasSuffix("in/new"))
        #expect(lines.dropFirst(log + 1).first == "  \(shown) › note: [debug] line\\u{1B}[31m.txt", "\(lines)")
    }
}
