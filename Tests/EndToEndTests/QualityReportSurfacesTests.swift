import Foundation
import StageKit
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Every transcode's quality report (the encoder's PSNR, by default) where people look: the stage's outputs in
/// `run --report`, a line under `pipeline status`'s table, and the item's page of the dashboard in headless Chromium.
@Suite(.serialized) struct QualityReportSurfacesTests {
    static let workflow = """
        {"version": 1, "name": "quality", "inputs": {"path": "in"},
         "stages": [{"id": "export", "uses": "ffmpeg.transcode", "with": {"video": {"preset": "ultrafast"}, "threads": 1}}]}
        """

    @Test func theReportShowsInRunReportStatusAndTheDashboard() async throws {
        let scratch = try Scratch()
        try scratch.write("wf.json", Self.workflow)
        try FileManager.default.createDirectory(at: scratch.path("in"), withIntermediateDirectories: true)
        let made = await runTool(
            "/usr/bin/ffmpeg",
            [
                "-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x180:rate=24:duration=1", "-c:v",
                "libx264", "-qp", "0", "-pix_fmt", "yuv420p", scratch.path("in/clip.mp4").path,
            ])
        try #require(made.status == 0, "\(made.stderr)")
        let run = try await Binary.run(
            ["run", "wf.json", "--state", "state", "--report", "report.json"], in: scratch.root)
        #expect(run.status == 0, "\(run.stderr)")

        let report = try JSONValue(parsing: try Data(contentsOf: scratch.path("report.json")))
        let stage = report["items"]?.arrayValue?.first?["stages"]?.arrayValue?.first
        let quality = try #require(stage?["outputs"]?["quality"], "\(report)")
        #expect(quality["metric"] == "psnr" && quality["source"] == "encoder" && quality["frames"] == 24)
        let mean = try #require(quality["mean"]?.doubleValue)
        #expect(mean > 30 && mean < 100, "\(quality)")

        let status = try await Binary.run(["status", "--state", "state"], in: scratch.root)
        #expect(status.status == 0, "\(status.stderr)")
        let shown = String(format: "%.2f", mean)
        #expect(
            status.stdout.contains("clip.mp4: export quality PSNR \(shown) (1 % low "), "\(status.stdout)")
        #expect(status.stdout.contains("24 frames, the encoder's)"), "\(status.stdout)")

        let served = try await ServedDashboard.start(["--state", "state"], in: scratch.root)
        defer { served.process.signal(SIGKILL) }
        let (_, items) = try await served.request("/api/items?status=done")
        let id = try #require(items["items"]?.arrayValue?.first?["id"]?.intValue)
        let browser = try BrowserSession()
        defer { browser.close() }
        try await browser.navigate(served.base + "/#/item/\(id)")
        try await browser.waitFor("document.querySelectorAll('#quality li').length === 1")
        let line = try await browser.eval("document.querySelector('#quality li').innerText")
        #expect(line.stringValue?.hasPrefix("export: PSNR \(shown) (1 % low ") == true, "\(line)")
        #expect(line.stringValue?.contains("24 frames, the encoder's)") == true, "\(line)")
    }
}
