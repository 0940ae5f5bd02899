import Foundation
import StageKit
import TestSupport
import Testing

/// Where the fixtures of this test target are.
let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

@Suite struct MalformedWorkflowTests {
    static let expected: [(String, String)] = {
        let data = (try? Data(contentsOf: fixtures.appendingPathComponent("expected-messages.json"))) ?? Data()
        let object = (try? JSONValue(parsing: data).objectValue) ?? [:]
        return object.map { ($0.key, $0.value.stringValue ?? "") }.sorted { $0.0 < $1.0 }
    }()

    @Test func theCorpusIsLargeAndComplete() async throws {
        let files = try FileManager.default.contentsOfDirectory(
            atPath: fixtures.appendingPathComponent("malformed").path)
        #expect(files.count >= 30)
        #expect(Set(files) == Set(Self.expected.map(\.0)))
    }

    @Test(arguments: expected)
    func isRefusedWithAPreciseMessageAndNothingWritten(file: String, message: String) async throws {
        let scratch = try Scratch()
        let workflow = fixtures.appendingPathComponent("malformed").appendingPathComponent(file).path
        try FileManager.default.createDirectory(at: scratch.path("in"), withIntermediateDirectories: true)
        try scratch.write("in/a.txt", "a")
        for arguments in [["validate", workflow], ["run", workflow, "--input", "in", "--state", "state"]] {
            let result = try await Binary.run(arguments, in: scratch.root)
            #expect(result.status == 2, "\(arguments[0]) \(file): \(result.stderr)")
            #expect(result.stderr.contains(message), "\(file): \(result.stderr)")
            // Every diagnostic names the file, a line and a column.
            let first = result.stderr.split(separator: "\n").first.map(String.init) ?? ""
            #expect(first.hasPrefix("\(workflow):") && first.split(separator: ":").count >= 4, "\(first)")
            #expect(!result.stderr.contains("Fatal error"))
        }
        #expect(!FileManager.default.fileExists(atPath: scratch.path("state").path))
    }
}
