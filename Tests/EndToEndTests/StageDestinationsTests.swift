import PipelineKit
import PluginHost
import StageKit
import Testing

@testable import PipelineCLI

/// The built-in stages that write a file at a path the workflow chose declare it, and only those: the engine claims
/// what they declare (``OutputClaimCheck``) and knows no stage by name.
@Suite struct StageDestinationsTests {
    @Test func everyBuiltInWriterDeclaresItsFileAndSetAndExecDoNot() throws {
        let registry = try StageCatalog.shipped.registry()
        let writers: [String: (JSONValue, [String])] = [
            "ffmpeg.transcode": (["output": "out/a.mp4"], ["out/a.mp4"]),
            "ffmpeg.remux": (["output": "/out/a.mp4"], ["/out/a.mp4"]),
            "ffmpeg.thumbnail": (["output": "/out/a.jpg"], ["/out/a.jpg"]),
            "ffmpeg.package": (["output": "/out/a-hls"], ["/out/a-hls"]),
            "file.copy": (["from": "/in/a.mov", "to": "/out/"], ["/out/a.mov"]),
        ]
        for (type, (options, expected)) in writers {
            let descriptor = try #require(registry.descriptor(for: type))
            #expect(descriptor.destinations(with: options) == expected, "\(type)")
        }
        // Left to their defaults (the stage's scratch folder), they write no file of the workflow's.
        let none: JSONValue = [:]
        for type in ["ffmpeg.transcode", "ffmpeg.remux", "ffmpeg.thumbnail", "ffmpeg.package"] {
            #expect(try #require(registry.descriptor(for: type)).destinations(with: none) == [], "\(type)")
        }
        let named: JSONValue = ["from": "/in/a.mov", "to": "out", "name": "b.mov"]
        #expect(try #require(registry.descriptor(for: "file.copy")).destinations(with: named) == ["out/b.mov"])
        // Stages that name paths without writing them at the workflow's choice declare nothing.
        let set: JSONValue = ["output": "/out/a.mp4"]
        let exec: JSONValue = ["command": ["touch", "/out/a.mp4"]]
        #expect(try #require(registry.descriptor(for: "set")).destinations(with: set) == [])
        #expect(try #require(registry.descriptor(for: "exec")).destinations(with: exec) == [])
    }
}
