import Foundation
import Testing

/// The DocC tutorial (Sources/StageKit/StageKit.docc) shows the stage and its tests as they grow, one listing per
/// step. Its last listings are the files this target compiles and runs, and every line of an earlier listing is a
/// line of them, but for the few placeholder lines a skeleton needs: a listing cannot drift from the tested code.
@Suite struct TutorialListingsTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let listings = root.appendingPathComponent("Sources/StageKit/StageKit.docc/Resources")
    static let tested = root.appendingPathComponent("Tests/StageTutorialTests")

    /// Lines of the skeleton listings that later steps replace.
    static let placeholders: Set<String> = [
        "return Outputs(parts: [], partSize: 0, size: 0)",
        "return Outputs(parts: [], partSize: partSize, size: 0)",
    ]

    /// The listings of one file, in the tutorial's order (`checksum-01.swift`, `checksum-02.swift`, …).
    static func steps(_ prefix: String) throws -> [URL] {
        try FileManager.default.contentsOfDirectory(atPath: listings.path)
            .filter { $0.hasPrefix(prefix) && $0.dropFirst(prefix.count).first?.isNumber == true }
            .sorted()
            .map { listings.appendingPathComponent($0) }
    }

    static func text(_ url: URL) throws -> String {
        try String(contentsOf: url, encoding: .utf8)
    }

    @Test(arguments: [("checksum-", "ChecksumStage.swift"), ("checksum-tests-", "ChecksumStageTests.swift")])
    func theLastListingIsTheTestedFile(prefix: String, file: String) throws {
        let last = try #require(try Self.steps(prefix).last, "no listing \(prefix)NN.swift")
        #expect(
            try Self.text(last) == Self.text(Self.tested.appendingPathComponent(file)),
            "\(last.lastPathComponent) differs from Tests/StageTutorialTests/\(file): copy the file over the listing")
    }

    @Test(arguments: [("checksum-", "ChecksumStage.swift"), ("checksum-tests-", "ChecksumStageTests.swift")])
    func everyLineOfAnEarlierListingIsInTheTestedFile(prefix: String, file: String) throws {
        let lines = Set(try Self.text(Self.tested.appendingPathComponent(file)).split(separator: "\n").map(String.init))
        for step in try Self.steps(prefix) {
            let strays = try Self.text(step).split(separator: "\n").map(String.init).filter {
                !lines.contains($0) && !Self.placeholders.contains($0.trimmingCharacters(in: .whitespaces))
            }
            #expect(strays.isEmpty, "\(step.lastPathComponent) has lines the tested \(file) lacks: \(strays)")
        }
    }

    /// The tutorial's Package.swift and entry point are what `make plugin NAME=acme-tools` writes (the SDK's path
    /// aside, which depends on where the plugin is; the entry point registers the tutorial's stage besides).
    @Test func thePluginListingsAreWhatTheTemplateWrites() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("template-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let script = Process()
        script.executableURL = Self.root.appendingPathComponent("scripts/new-plugin.sh")
        script.arguments = ["acme-tools", folder.path]
        script.standardOutput = FileHandle.nullDevice
        try script.run()
        script.waitUntilExit()
        #expect(script.terminationStatus == 0)
        let package = try Self.text(folder.appendingPathComponent("Package.swift")).split(
            separator: "\n", omittingEmptySubsequences: false
        ).map { line in
            line.contains(".package(path: ") ? #"        .package(path: "../media-pipeline/sdk")"# : String(line)
        }.joined(separator: "\n")
        let listed = try Self.text(Self.listings.appendingPathComponent("package-01.swift"))
        #expect(package == listed)
        let guide = try Self.text(Self.root.appendingPathComponent("docs/writing-a-stage.md"))
        #expect(guide.contains("```swift\n" + listed + "```"), "docs/writing-a-stage.md shows another Package.swift")
        let entry = try Self.text(folder.appendingPathComponent("Sources/AcmeTools/Plugin.swift"))
        let listing = try Self.text(Self.listings.appendingPathComponent("plugin-01.swift"))
        #expect(
            listing == entry.replacingOccurrences(of: "[SizeStage.self]", with: "[SizeStage.self, ChecksumStage.self]"))
    }
}
