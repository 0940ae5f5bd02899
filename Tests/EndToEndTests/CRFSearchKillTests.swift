import Foundation
import StageKit
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `quality.target` killed with `kill -9` during its CRF search, then during the final encode in segments: each rerun
/// repeats no probe that was checkpointed (the probes are counted in the runs' logs, one "probing CRF" line each),
/// the segments' checkpoints keep the search beside them, and once the CRF is chosen no rerun searches again, while
/// the segments encoded are reused. PSNR, as the test is about checkpoints, not scores.
@Suite struct CRFSearchKillTests {
    private static let workflow = "crf-search-kill"

    /// The CRFs probed by a run, from its log lines.
    private func probed(_ log: String) -> [Double] {
        log.split(separator: "\n").compactMap { line in
            guard let range = line.range(of: "crf search: probing CRF ") else { return nil }
            return Double(line[range.upperBound...].prefix { $0.isNumber || $0 == "." })
        }
    }

    /// The search's checkpoint of the one item: its probes' CRFs, whether it chose, and the segments checkpointed
    /// with it.
    private func searchCheckpoint(_ state: URL) async -> (crfs: [Double], chosen: Bool, segments: Int) {
        let checkpoints = await stageCheckpoints(under: state, workflow: Self.workflow)
        let resume = checkpoints.values.first?["export"]?["resume"]
        let search = resume?["crfSearch"]
        let crfs = (search?["probes"]?.arrayValue ?? []).compactMap { $0["crf"]?.doubleValue }
        let chosen = search?["choice"].map { $0 != .null } ?? false
        return (crfs, chosen, resume?["segments"]?.arrayValue?.count ?? 0)
    }

    /// The segments checkpointed, in any checkpoint of the item (with or without the search).
    private func segmentsCheckpointed(_ state: URL) async -> Int {
        let checkpoints = await stageCheckpoints(under: state, workflow: Self.workflow)
        return checkpoints.values.first?["export"]?["resume"]?["segments"]?.arrayValue?.count ?? 0
    }

    @Test func killedDuringTheSearchAndTheEncodeItRepeatsNoCheckpointedProbe() async throws {
        let scratch = try Scratch()
        try FileManager.default.createDirectory(at: scratch.path("in"), withIntermediateDirectories: true)
        // 36 s: sampled (3 samples), and 9 segments of 4 s encoded one at a time, to be killed between.
        let made = await runTool(
            "/usr/bin/ffmpeg",
            [
                "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x180:rate=24:duration=36,noise=alls=10:allf=t",
                "-f", "lavfi", "-i", "sine=duration=36", "-c:v", "libx264", "-preset", "ultrafast", "-crf", "10",
                "-g", "24", "-c:a", "aac", "-shortest", scratch.path("in/clip.mp4").path,
            ])
        try #require(made.status == 0, "\(made.stderr)")
        try scratch.write(
            "wf.json",
            """
            {"version": 1, "name": "\(Self.workflow)", "inputs": {"path": "in"}, "stages": [
              {"id": "export", "uses": "ffmpeg.transcode", "with": {"output": "out/${input.stem}.mp4", "threads": 2,
               "segmentSeconds": 4, "segmentJobs": 1, "video": {"preset": "medium"},
               "quality": {"metric": "psnr", "target": 40}}}
            ]}
            """)
        let state = scratch.path(".pipeline")

        // 1. Killed once a seeded number of probes (1 or 2) is checkpointed, before the CRF is chosen.
        let random = SeededRandom("killedDuringTheSearchAndTheEncodeItRepeatsNoCheckpointedProbe")
        let probesBeforeKill = 1 + random.int(in: 0...1)
        let searching = try Binary.start(["run", "wf.json"], in: scratch.root)
        try await waitUntil("\(probesBeforeKill) probe(s) checkpointed") {
            guard searching.isRunning else { return true }
            let saved = await searchCheckpoint(state)
            return saved.crfs.count >= probesBeforeKill || saved.chosen
        }
        try #require(searching.isRunning, "the run ended before it could be killed: \(searching.stdout.soFar)")
        searching.signal(SIGKILL)
        _ = await searching.exit()
        let first = await searchCheckpoint(state)
        #expect(!first.chosen && !first.crfs.isEmpty, "\(first)")

        // 2. The rerun goes on from those probes; killed in the final encode once a segment is checkpointed.
        let encoding = try Binary.start(["run", "wf.json"], in: scratch.root)
        try await waitUntil("a segment checkpointed") {
            guard encoding.isRunning else { return true }
            return await segmentsCheckpointed(state) > 0
        }
        try #require(encoding.isRunning, "the run ended before it could be killed: \(encoding.stdout.soFar)")
        encoding.signal(SIGKILL)
        _ = await encoding.exit()
        let second = await searchCheckpoint(state)
        let resumedProbes = probed(encoding.stdout.soFar)
        // The segments' checkpoint keeps the search: its choice and every probe.
        #expect(second.chosen && second.segments > 0, "\(second)")
        #expect(Set(resumedProbes).isDisjoint(with: first.crfs), "probed \(resumedProbes) again after \(first.crfs)")
        #expect(Set(second.crfs) == Set(first.crfs + resumedProbes), "\(second.crfs)")

        // 3. The last run searches no more: it encodes at the CRF chosen.
        let last = try await Binary.run(["run", "wf.json"], in: scratch.root)
        #expect(last.status == 0, "\(last.stdout)\(last.stderr)")
        #expect(probed(last.stdout + last.stderr).isEmpty, "\(last.stdout)")
        #expect(last.stdout.contains("chosen by an earlier run"), "\(last.stdout)")
        #expect(!last.stdout.contains("segments of about 4.0 s, 0 reused"), "\(last.stdout)")
        #expect(last.stdout.contains("segments of about 4.0 s, \(second.segments) reused"), "\(last.stdout)")
        #expect(FileManager.default.fileExists(atPath: scratch.path("out/clip.mp4").path))
    }
}
