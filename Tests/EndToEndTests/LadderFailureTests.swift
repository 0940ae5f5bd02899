import Foundation
import TestSupport
import Testing

/// A rendition of `ffmpeg.package` whose encoder thread fails part way through the one pass, while the other
/// renditions' threads are encoding: the stage fails naming that rendition, every thread ends (the run exits),
/// and no file of the pass is left.
@Suite struct LadderFailureTests {
    @Test func aRenditionThatCannotBeWrittenMidEncodeFailsThePackageNamingIt() async throws {
        let scratch = try Scratch()
        try await LadderKillTests.makeTalk(seconds: 3, in: scratch)
        try scratch.write(
            "wf.json",
            """
            {"version": 1, "name": "ladder-failure", "inputs": {"path": "in"}, "stages": [
              {"id": "package", "uses": "ffmpeg.package", "with": {"output": "out/${input.stem}", "segmentSeconds": "1s",
                "preset": "ultrafast", "threads": 1, "renditions": [
                  {"height": 360, "bitrate": "4000k"}, {"height": 180, "bitrate": "250k"}]}}
            ]}
            """)
        // Files the run writes may not grow past 512 KiB (`ulimit -f` of /bin/sh, which is dash on Debian: 512-byte
        // blocks; bash would count 1 KiB blocks), and SIGXFSZ is ignored,
        // so a write past it fails with EFBIG: the 4 Mb/s rendition's MP4 (about 1.1 MB) reaches it after about a
        // second of video, in its encoder thread; the 250 kb/s one (about 90 kB), the audio and the ledger do not.
        let run = try await Binary.run(
            ["-c", "trap '' XFSZ; ulimit -f 1024; exec \"$0\" run wf.json --json", Binary.url.path],
            in: scratch.root, executable: URL(fileURLWithPath: "/bin/sh"))
        #expect(run.status == 1, "\(run.stdout)\n\(run.stderr)")
        let said = run.stdout + run.stderr
        #expect(said.contains("rendition '") && said.contains("360p.mp4"), "\(said)")
        // Written in the middle of the encode (the header went through), not refused at the start.
        #expect(said.contains("cannot write the output: File too large"), "\(said)")

        // No rendition is in place and no file of the pass is left, the other rendition's and the audio's included.
        let package = scratch.path("out/talk")
        let left = (FileManager.default.subpaths(atPath: package.path) ?? []).filter { name in
            var folder: ObjCBool = false
            let exists = FileManager.default.fileExists(
                atPath: package.appendingPathComponent(name).path, isDirectory: &folder)
            return exists && !folder.boolValue
        }
        #expect(left.isEmpty, "\(left)")
    }
}
