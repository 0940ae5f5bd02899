import Foundation
import StageKit
import TestSupport
import Testing

/// A command whose reader went away (`pipeline status --db URL | head -1`, `pipeline stages | head -1`) ends normally, with its own exit code, instead
/// of crashing on the broken pipe or being killed by SIGPIPE: the process ignores SIGPIPE, so every write fails
/// with EPIPE and is dropped.
@Suite struct ClosedOutputTests {
    @Test(arguments: [true, false]) func aCommandIntoAClosedPipeEndsQuietly(shared: Bool) async throws {
        let scratch = try Scratch()
        let server = shared ? try await PostgresServer.start() : nil
        if let server {  // a batch, so that status has a table to print
            try scratch.write(
                "wf.json",
                """
                {"version": 1, "name": "closed", "inputs": {"path": "in"},
                 "stages": [{"id": "hello", "uses": "exec", "with": {"command": ["true"]}}]}
                """)
            try scratch.write("in/a.txt", "a")
            let submitted = try await Binary.run(["submit", "wf.json", "--db", server.url], in: scratch.root)
            try #require(submitted.status == 0, "\(submitted.stdout)\(submitted.stderr)")
        }
        let process = Process()
        process.executableURL = Binary.url
        process.currentDirectoryURL = scratch.root
        process.arguments = server.map { ["status", "--db", $0.url] } ?? ["stages"]
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // Nobody reads standard output any more: every write the command makes meets a broken pipe.
        try output.fileHandleForReading.close()
        let (status, stderr) = await BlockingWork.runLong {
            let stderr = errors.fileHandleForReading.readDataToEndOfFile()
            return (waitForExit(of: process), String(decoding: stderr, as: UTF8.self))
        }
        #expect(status == 0, "exit status \(status); stderr: \(stderr.prefix(300))")
        #expect(!stderr.contains("Fatal error"), "\(stderr.prefix(300))")
    }
}
