import Foundation
import StageKit
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `kill -9` while `ffmpeg.package` makes a ladder: the rerun keeps the renditions finished before the kill (their
/// files untouched), makes the rest, and `s3.uploadFolder` puts the package on the S3 peer with the master
/// playlist last.
@Suite struct LadderKillTests {
    @Test func killNineDuringTheLadderKeepsFinishedRenditionsThenUploadsMasterLast() async throws {
        let scratch = try Scratch()
        let clip = scratch.path("in/talk.mp4")
        try FileManager.default.createDirectory(at: clip.deletingLastPathComponent(), withIntermediateDirectories: true)
        let made = await runTool(
            "/usr/bin/ffmpeg",
            [
                "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=30:duration=6", "-f", "lavfi",
                "-i", "sine=duration=6", "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac", "-shortest",
                clip.path,
            ])
        #expect(made.status == 0, "\(made.stderr)")
        let server = try await PeerServer(script: "s3_server.py", arguments: ["media"])
        try scratch.write(
            "wf.json",
            """
            {"version": 1, "name": "kill-ladder", "inputs": {"path": "in"}, "stages": [
              {"id": "package", "uses": "ffmpeg.package", "with": {"output": "out/${input.stem}", "segmentSeconds": "2s",
                "preset": "faster", "threads": 2, "renditions": [
                  {"height": 360, "bitrate": "800k"}, {"height": 270, "bitrate": "500k"}, {"height": 180, "bitrate": "250k"}]}},
              {"id": "upload", "uses": "s3.uploadFolder", "with": {"folder": "${package.folder}",
                "endpoint": "http://127.0.0.1:\(server.port)", "bucket": "media", "prefix": "hls/${input.stem}/",
                "accessKeyId": "test", "secretAccessKey": "test"}}
            ]}
            """)
        // The renditions are made audio first, then in the order listed; kill as a seeded one of the later two
        // starts: the ones before it are checkpointed by then.
        let random = SeededRandom("killNineDuringTheLadderKeepsFinishedRenditionsThenUploadsMasterLast")
        let killed = ["270p", "180p"][random.int(in: 0...1)]
        let finished = killed == "270p" ? ["audio", "360p"] : ["audio", "360p", "270p"]
        let process = try Binary.start(["run", "wf.json", "--json"], in: scratch.root)
        try await waitUntil("rendition \(killed) starts") {
            !process.isRunning || process.stdout.soFar.contains("making rendition \(killed)")
        }
        #expect(process.isRunning, "the ladder finished before it could be killed")
        process.signal(SIGKILL)
        _ = await process.exit()
        #expect(!FileManager.default.fileExists(atPath: scratch.path("out/talk/master.m3u8").path))

        func modified(_ rendition: String) -> [String: Date] {
            let folder = scratch.path("out/talk/\(rendition)")
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
            return Dictionary(
                uniqueKeysWithValues: names.compactMap { name in
                    let date =
                        (try? FileManager.default.attributesOfItem(
                            atPath: folder.appendingPathComponent(name).path)[.modificationDate]) as? Date
                    return date.map { (name, $0) }
                })
        }
        let before = Dictionary(uniqueKeysWithValues: finished.map { ($0, modified($0)) })
        #expect(before.values.allSatisfy { !$0.isEmpty })

        let rerun = try await Binary.run(["run", "wf.json", "--json"], in: scratch.root)
        #expect(rerun.status == 0, "\(rerun.stderr)")
        #expect(rerun.stdout.contains("\(finished.count) reused (\(finished.joined(separator: ", ")))"))
        for rendition in finished {
            #expect(modified(rendition) == before[rendition], "\(rendition) was made again")
        }
        let master = scratch.path("out/talk/master.m3u8")
        let probe = await runTool(
            "/usr/bin/ffprobe",
            ["-v", "error", "-show_entries", "stream=index,codec_type", "-of", "csv=p=0", master.path]
        ).text
        // Each stream is listed once on its own and once more under every program (variant) holding it.
        #expect(Set(probe.split(separator: "\n")).filter { $0.hasSuffix(",video") }.count == 3)

        // On the server: every file, the master playlist complete only after everything it lists.
        let timeline = try JSONValue(parsing: await httpGet("http://127.0.0.1:\(server.port)/__timeline"))
        let completed = (timeline["completed"]?.arrayValue ?? []).compactMap { entry -> (Double, Double, String)? in
            guard let values = entry.arrayValue, values.count == 3, let path = values[2].stringValue else { return nil }
            let number = { (value: JSONValue) in value.doubleValue ?? Double(value.intValue ?? 0) }
            return (number(values[0]), number(values[1]), path)
        }
        let local = scratch.allFiles(under: "out/talk").filter { !$0.0.hasPrefix(".") }
        #expect(completed.count == local.count)
        let masterUpload = try #require(completed.first { $0.2 == "/media/hls/talk/master.m3u8" })
        #expect(
            completed.filter { !$0.2.hasSuffix(".m3u8") && !$0.2.hasSuffix(".mpd") }.allSatisfy {
                $0.1 <= masterUpload.0
            })
        #expect(
            await peerTool("s3_tool.py", [String(server.port), "sha256", "media", "hls/talk/master.m3u8"])
                == (await sha256sum(master.path)))
    }
}
