import Foundation
import StageKit
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `quality.target` killed with `kill -9` during its CRF search, then during the final encode: each rerun repeats no
/// probe that was checkpointed (the probes are counted in the runs' logs, one "probing CRF" line each), and once the
/// CRF is chosen no rerun searches again.
@Suite struct CRFSearchKillTests {
    private static let workflow = "crf-search-kill"

    /// The CRFs probed by a run, from its log lines.
    private func probed(_ log: String) -> [Double] {
        log.split(separator: "\n").compactMap { line in
            guard let range = line.range(of: "crf search: probing CRF ") else { return nil }
            return Double(line[range.upperBound...].prefix { $0.isNumber || $0 == "." })
        }
    }

    /// The search's checkpoint of the one item: its probes' CRFs, and whether it chose.
    private func searchCheckpoint(_ state: URL) async -> (crfs: [Double], chosen: Bool) {
        let checkpoints = await stageCheckpoints(under: state, workflow: Self.workflow)
        let search = checkpoints.values.first?["export"]?["resume"]?["crfSearch"]
        let crfs = (search?["probes"]?.arrayValue ?? []).compactMap { $0["crf"]?.doubleValue }
        return (crfs, search?["choice"].map { $0 != .null } ?? false)
    }

    @Test func killedDuringTheSearchAndTheEncodeItRepeatsNoCheckpointedProbe() async throws {
        let scratch = try Scratch()
        try FileManager.default.createDirectory(at: scratch.path("in"), withIntermediateDirectories: true)
        // 48 s: sampled (3 samples of 1 s), and a final encode long enough to be killed in.
        let made = await runTool(
            "/usr/bin/ffmpeg",
            [
                "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=480x270:rate=24:duration=48,noise=alls=10:allf=t",
                "-f", "lavfi", "-i", "sine=duration=48", "-c:v", "libx264", "-preset", "ultrafast", "-crf", "10",
                "-c:a", "aac", "-shortest", scratch.path("in/clip.mp4").path,
            ])
        try #require(made.status == 0, "\(made.stderr)")
        try scratch.write(
            "wf.json",
            """
            {"version": 1, "name": "\(Self.workflow)", "inputs": {"path": "in"}, "stages": [
              {"id": "export", "uses": "ffmpeg.transcode", "with": {"output": "out/${input.stem}.mp4", "threads": 2,
               "video": {"preset": "medium"}, "quality": {"target": 93}}}
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

        // 2. The rerun goes on from those probes; killed during the final encode, once the CRF is chosen.
        let partial = scratch.path("out/.clip.mp4.partial.mp4")
        let encoding = try Binary.start(["run", "wf.json"], in: scratch.root)
        try await waitUntil("the final encode under way") {
            guard encoding.isRunning else { return true }
            let size = (try? FileManager.default.attributesOfItem(atPath: partial.path)[.size] as? Int) ?? 0
            return await searchCheckpoint(state).chosen && size > 20_000
        }
        try #require(encoding.isRunning, "the run ended before it could be killed: \(encoding.stdout.soFar)")
        encoding.signal(SIGKILL)
        _ = await encoding.exit()
        let second = await searchCheckpoint(state)
        let resumedProbes = probed(encoding.stdout.soFar)
        #expect(second.chosen)
        #expect(Set(resumedProbes).isDisjoint(with: first.crfs), "probed \(resumedProbes) again after \(first.crfs)")
        #expect(Set(second.crfs) == Set(first.crfs + resumedProbes), "\(second.crfs)")

        // 3. The last run searches no more: it encodes at the CRF chosen.
        let last = try await Binary.run(["run", "wf.json"], in: scratch.root)
        #expect(last.status == 0, "\(last.stdout)\(last.stderr)")
        #expect(probed(last.stdout + last.stderr).isEmpty, "\(last.stdout)")
        #expect(last.stdout.contains("chosen by an earlier run"), "\(last.stdout)")
        #expect(FileManager.default.fileExists(atPath: scratch.path("out/clip.mp4").path))
    }
}
