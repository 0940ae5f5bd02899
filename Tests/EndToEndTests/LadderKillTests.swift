import Foundation
import StageKit
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `kill -9` while `ffmpeg.package` makes a ladder (during its one pass over the source, or once renditions are
/// in place): the rerun keeps the renditions finished before the kill (their files untouched), makes the rest, and
/// `s3.uploadFolder` puts the package on the S3 peer with the master playlist last.
@Suite struct LadderKillTests {
    /// A `seconds`-long 640x360 clip with a tone at in/talk.mp4, the ladder tests' source.
    @discardableResult
    static func makeTalk(seconds: Int, in scratch: borrowing Scratch) async throws -> URL {
        let clip = scratch.path("in/talk.mp4")
        try FileManager.default.createDirectory(at: clip.deletingLastPathComponent(), withIntermediateDirectories: true)
        let made = await runTool(
            "/usr/bin/ffmpeg",
            [
                "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=30:duration=\(seconds)", "-f", "lavfi",
                "-i", "sine=duration=\(seconds)", "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac", "-shortest",
                clip.path,
            ])
        #expect(made.status == 0, "\(made.stderr)")
        return clip
    }

    @Test func killNineDuringTheLadderKeepsFinishedRenditionsThenUploadsMasterLast() async throws {
        let scratch = try Scratch()
        try await Self.makeTalk(seconds: 6, in: scratch)
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
        // The renditions are made in one pass over the source, then packaged and checkpointed one at a time: audio
        // first, then in the order listed. A kill during the pass loses the pass (no rendition is in place yet); a
        // kill once the audio is in place keeps it, and whatever else was checkpointed before the signal landed.
        let order = ["audio", "360p", "270p", "180p"]
        let random = SeededRandom("killNineDuringTheLadderKeepsFinishedRenditionsThenUploadsMasterLast")
        let killedAfter = ["the pass starts", "audio is in place"][random.int(in: 0...1)]
        let awaited =
            killedAfter == "the pass starts" ? "making renditions audio, 360p, 270p, 180p" : "rendition audio in place"
        let process = try Binary.start(["run", "wf.json", "--json"], in: scratch.root)
        try await waitUntil(killedAfter) { !process.isRunning || process.stdout.soFar.contains(awaited) }
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
        let before = Dictionary(uniqueKeysWithValues: order.map { ($0, modified($0)) })
        if killedAfter == "the pass starts" {
            #expect(before.values.allSatisfy { $0.isEmpty }, "a rendition was in place before the pass ended")
        }

        let rerun = try await Binary.run(["run", "wf.json", "--json"], in: scratch.root)
        #expect(rerun.status == 0, "\(rerun.stderr)")
        // "package: 4 renditions, 2 reused (audio, 360p), 2 to make"
        let reusedLine = rerun.stdout.split(separator: "\n").first { $0.contains("package: 4 renditions") } ?? ""
        let opening = reusedLine.range(of: " reused (")
        let listed = opening.map { reusedLine[$0.upperBound...].prefix { $0 != ")" } } ?? ""
        let reused = listed.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(reusedLine.contains("\(reused.count) reused"), "\(reusedLine)")
        // Checkpointed in order, so what is kept is a prefix of the order: nothing after a kill during the pass,
        // at least the audio after a kill once it is in place.
        #expect(Array(order.prefix(reused.count)) == reused, "\(reused)")
        #expect(killedAfter == "the pass starts" ? reused.isEmpty : reused.first == "audio", "\(reused)")
        for rendition in reused {
            #expect(!(before[rendition] ?? [:]).isEmpty)
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

    /// `kill -9` during the folder upload that follows the ladder: the rerun does not make the package again,
    /// sends only the files the server did not have, and ends with every object equal to its file and the
    /// master playlist complete after everything else.
    @Test func killNineDuringTheFolderUploadSendsOnlyWhatIsMissing() async throws {
        let scratch = try Scratch()
        try await Self.makeTalk(seconds: 3, in: scratch)
        let server = try await PeerServer(script: "s3_server.py", arguments: ["media"])
        try scratch.write(
            "wf.json",
            """
            {"version": 1, "name": "kill-folder-upload", "inputs": {"path": "in"}, "stages": [
              {"id": "package", "uses": "ffmpeg.package", "with": {"output": "out/${input.stem}",
                "segmentSeconds": "0.5s", "preset": "ultrafast", "threads": 2, "renditions": [
                  {"height": 360, "bitrate": "800k"}, {"height": 270, "bitrate": "500k"}, {"height": 180, "bitrate": "250k"}]}},
              {"id": "upload", "uses": "s3.uploadFolder", "after": ["package"], "with": {"folder": "${package.folder}",
                "endpoint": "http://127.0.0.1:\(server.port)", "bucket": "media", "prefix": "hls/${input.stem}/",
                "accessKeyId": "test", "secretAccessKey": "test"}}
            ]}
            """)
        let base = "http://127.0.0.1:\(server.port)"
        @Sendable func completed() async throws -> [(start: Double, end: Double, key: String)] {
            let timeline = try JSONValue(parsing: await httpGet("\(base)/__timeline"))
            return (timeline["completed"]?.arrayValue ?? []).compactMap { entry in
                guard let values = entry.arrayValue, values.count == 3, let path = values[2].stringValue else {
                    return nil
                }
                let number = { (value: JSONValue) in value.doubleValue ?? Double(value.intValue ?? 0) }
                return (number(values[0]), number(values[1]), String(path.dropFirst("/media/hls/talk/".count)))
            }
        }
        func received() async throws -> [String: Int] {
            let stats = try JSONValue(parsing: await httpGet("\(base)/__stats"))
            var bytes: [String: Int] = [:]
            for (path, count) in stats["receivedByPath"]?.objectValue ?? [:] {
                bytes[String(path.dropFirst("/media/hls/talk/".count))] = count.intValue ?? 0
            }
            return bytes
        }
        func objects() async -> [String: String] {
            let lines = await peerTool("s3_tool.py", [String(server.port), "objects", "media", "hls/talk/"])
            return Dictionary(
                lines.split(separator: "\n").compactMap { line -> (String, String)? in
                    let fields = line.split(separator: " ")
                    guard fields.count == 2 else { return nil }
                    return (String(fields[0].dropFirst("hls/talk/".count)), String(fields[1]))
                }, uniquingKeysWith: { first, _ in first })
        }

        // The upload is held to 192 KiB/s so that it lasts a few seconds; the kill comes once a seeded number of
        // objects are complete on the server.
        let random = SeededRandom("killNineDuringTheFolderUploadSendsOnlyWhatIsMissing")
        let killAfter = random.int(in: 1...8)
        let process = try Binary.start(["run", "wf.json", "--json", "--bwlimit", "192KiB"], in: scratch.root)
        try await waitUntil("\(killAfter) objects uploaded") {
            guard process.isRunning else { return true }
            return try await completed().count >= killAfter
        }
        #expect(process.isRunning, "the upload finished before it could be killed")
        process.signal(SIGKILL)
        _ = await process.exit()

        let package = scratch.path("out/talk")
        let names = try FileManager.default.subpathsOfDirectory(atPath: package.path).filter { name in
            var folder: ObjCBool = false
            let exists = FileManager.default.fileExists(
                atPath: package.appendingPathComponent(name).path, isDirectory: &folder)
            return exists && !folder.boolValue && !name.hasPrefix(".")
        }
        func modified() -> [String: Date] {
            Dictionary(
                uniqueKeysWithValues: names.compactMap { name in
                    let attributes = try? FileManager.default.attributesOfItem(
                        atPath: package.appendingPathComponent(name).path)
                    return (attributes?[.modificationDate] as? Date).map { (name, $0) }
                })
        }
        let written = modified()
        var local: [String: String] = [:]
        for name in names { local[name] = await sha256sum(package.appendingPathComponent(name).path) }
        #expect(local.count > 30 && local["master.m3u8"] != nil)
        let up = Set(await objects().filter { local[$0.key] == $0.value }.keys)
        let receivedBefore = try await received()
        #expect(!up.isEmpty && up.count < local.count && !up.contains("master.m3u8"), "\(up.sorted())")

        let rerun = try await Binary.run(["run", "wf.json", "--json"], in: scratch.root)
        #expect(rerun.status == 0, "\(rerun.stderr)")
        #expect(!rerun.stdout.contains("making renditions"), "the package was made again")
        #expect(modified() == written, "files of the package were written again")

        #expect(await objects() == local)
        let receivedAfter = try await received()
        let sentAgain = up.filter { receivedAfter[$0] != receivedBefore[$0] }
        #expect(sentAgain.isEmpty, "sent again: \(sentAgain.sorted())")
        let done = try await completed()
        let master = try #require(done.last { $0.key == "master.m3u8" })
        // The top-level manifests (the master playlist, the DASH manifest) go together, after all the rest.
        #expect(done.filter { $0.key.contains("/") }.allSatisfy { $0.end <= master.start })
    }
}
