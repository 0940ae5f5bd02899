import Foundation
import PipelineKit
import TestSupport
import Testing

/// One normal form of a path for output claims: two spellings of one file are one path.
@Suite struct OutputPathTests {
    @Test func spellingsOfOneFileHaveOneNormalForm() throws {
        let scratch = try Scratch()
        let root = URL(fileURLWithPath: scratch.root.path).resolvingSymlinksInPath().path
        try FileManager.default.createDirectory(at: scratch.path("real/out"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            atPath: scratch.path("link").path, withDestinationPath: scratch.path("real").path)
        let normal = root + "/real/out/a.mp4"
        let spellings = [
            normal, root + "/real/./out//a.mp4", root + "/real/other/../out/a.mp4", root + "/link/out/a.mp4",
        ]
        for spelling in spellings {
            #expect(OutputPath.normal(spelling, relativeTo: "/elsewhere") == normal, "\(spelling)")
        }
        // A relative path is taken from the folder given (the workflow's), through its links.
        #expect(OutputPath.normal("out/a.mp4", relativeTo: root + "/link") == normal)
        #expect(OutputPath.normal("../real/out/a.mp4", relativeTo: root + "/link") == normal)
        // Folders that do not exist yet are kept as written, under the real path of the part that does.
        #expect(OutputPath.normal("link/new/deeper/b.mp4", relativeTo: root) == root + "/real/new/deeper/b.mp4")
        // The file itself is not followed: a link at the output's own path is a file the stage replaces.
        try FileManager.default.createSymbolicLink(
            atPath: scratch.path("real/out/linked.mp4").path, withDestinationPath: normal)
        #expect(OutputPath.normal(root + "/real/out/linked.mp4", relativeTo: "/") == root + "/real/out/linked.mp4")
        #expect(OutputPath.normal("/nowhere/x", relativeTo: "/") == "/nowhere/x")
        #expect(OutputPath.normal("/out/", relativeTo: "/") == "/out")
    }
}
