import PipelineKit
import PluginHost
import StageKit
import Testing

/// The built-in stages that write a file at a path the workflow chose declare it, and only those: the engine claims
/// what they declare (``OutputClaimCheck``) and knows no stage by name.
@Suite struct StageDestinationsTests {
    @Test func everyBuiltInWriterDeclaresItsFileAndNoOtherStageDoes() throws {
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
        for type in ["ffmpeg.transcode", "ffmpeg.remux", "ffmpeg.thumbnail", "ffmpeg.package"] {
            #expect(registry.descriptor(for: type)?.destinations(with: [:]) == [], "\(type)")
        }
        let copy = try #require(registry.descriptor(for: "file.copy"))
        #expect(copy.destinations(with: ["from": "/in/a.mov", "to": "out", "name": "b.mov"]) == ["out/b.mov"])
        // Stages that name paths without writing them at the workflow's choice declare nothing.
        #expect(registry.descriptor(for: "set")?.destinations(with: ["output": "/out/a.mp4"]) == [])
        #expect(registry.descriptor(for: "exec")?.destinations(with: ["command": ["touch", "/out/a.mp4"]]) == [])
    }
}
