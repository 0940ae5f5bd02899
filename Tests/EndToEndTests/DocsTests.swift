import Foundation
import TestSupport
import Testing

/// The documentation a user reads first: a short README, links that lead somewhere, and example workflows that
/// `pipeline validate` accepts.
@Suite struct DocsTests {
    /// Files other tools write (`pipeline stages --markdown`); a link to one is checked once it exists.
    static let generated: Set<String> = ["docs/stages.md"]

    static func markdownFiles() throws -> [URL] {
        let docs = repositoryRoot.appendingPathComponent("docs")
        let pages = try FileManager.default.contentsOfDirectory(atPath: docs.path).filter { $0.hasSuffix(".md") }
        return [repositoryRoot.appendingPathComponent("README.md")]
            + pages.sorted().map { docs.appendingPathComponent($0) }
    }

    /// The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces as hyphens.
    static func anchors(of text: String) -> Set<String> {
        var anchors: Set<String> = []
        var inCode = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { inCode.toggle() }
            guard !inCode, line.hasPrefix("#") else { continue }
            let title = line.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces).lowercased()
            anchors.insert(
                String(
                    title.compactMap { character -> Character? in
                        if character == " " { return "-" }
                        return character.isLetter || character.isNumber || character == "-" || character == "_"
                            ? character : nil
                    }))
        }
        return anchors
    }

    /// Every `](target)` of a Markdown text outside code blocks.
    static func links(in text: String) -> [String] {
        var links: [String] = []
        var inCode = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { inCode.toggle() }
            guard !inCode else { continue }
            var rest = Substring(line)
            while let open = rest.range(of: "](") {
                let tail = rest[open.upperBound...]
                guard let close = tail.firstIndex(of: ")") else { break }
                links.append(String(tail[..<close]))
                rest = tail[close...]
            }
        }
        return links
    }

    @Test func theReadmeIsShort() throws {
        let lines = try String(contentsOf: repositoryRoot.appendingPathComponent("README.md"), encoding: .utf8)
            .split(separator: "\n", omittingEmptySubsequences: false).count
        #expect(lines <= 250, "README.md has \(lines) lines: move the detail to docs/")
    }

    @Test func everyLinkOfTheReadmeAndDocsLeadsToAFileAndHeading() throws {
        for page in try Self.markdownFiles() {
            let folder = page.deletingLastPathComponent()
            let name = page.path.replacingOccurrences(of: repositoryRoot.path + "/", with: "")
            let text = try String(contentsOf: page, encoding: .utf8)
            for link in Self.links(in: text) where !link.hasPrefix("http://") && !link.hasPrefix("https://") {
                let parts = link.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
                let file = parts[0].isEmpty ? page : folder.appendingPathComponent(String(parts[0])).standardized
                let relative = file.path.replacingOccurrences(of: repositoryRoot.path + "/", with: "")
                guard FileManager.default.fileExists(atPath: file.path) else {
                    #expect(Self.generated.contains(relative), "\(name): \(link) leads to no file")
                    continue
                }
                if parts.count == 2, file.pathExtension == "md" {
                    let anchors = Self.anchors(of: try String(contentsOf: file, encoding: .utf8))
                    #expect(anchors.contains(String(parts[1])), "\(name): \(link) leads to no heading of \(relative)")
                }
            }
        }
    }

    @Test func theExampleWorkflowsAreValid() async throws {
        let folder = repositoryRoot.appendingPathComponent("Workflows")
        let workflows = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .filter { $0.hasSuffix(".json") && $0 != "workflow.schema.json" }
        #expect(workflows.contains("hls-to-s3.json") && workflows.contains("vimeo.json"))
        for workflow in workflows.sorted() {
            let result = try await Binary.run(["validate", "Workflows/\(workflow)"], in: repositoryRoot)
            #expect(result.status == 0, "\(workflow): \(result.stdout)\(result.stderr)")
        }
    }
}
