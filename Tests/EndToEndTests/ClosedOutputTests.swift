import Foundation
import StageKit
import TestSupport
import Testing

/// A command whose reader went away (`pipeline status --db URL | head -1`) ends normally instead of crashing on
/// the broken pipe: once the database driver runs, SIGPIPE is ignored and every write fails with EPIPE instead.
@Suite struct ClosedOutputTests {
    @Test func statusIntoAClosedPipeEndsQuietly() async throws {
        let server = try await PostgresServer.start()
        let process = Process()
        process.executableURL = Binary.url
        process.arguments = ["status", "--db", server.url]
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
