import Foundation
import StageKit
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The dashboard follows a running transcode as the server pushes its status: the stage's progress advances in its
/// row without a reload and without redrawing what did not change, so a name selected in the table stays selected;
/// when the stream breaks, the page reads the status every second until the stream is back.
@Suite(.serialized) struct DashboardProgressTests {
    /// The transcode's percentage in the running table.
    static let percent =
        "parseFloat(document.querySelector('#running tr[data-key] .progress[data-stage=\"export\"] .percent')?.textContent)"

    @Test func aRunningTranscodesProgressAdvancesWithoutAReloadAndASelectionSurvives() async throws {
        let scratch = try Scratch()
        try FileManager.default.createDirectory(at: scratch.path("in"), withIntermediateDirectories: true)
        let made = await runTool(
            "/usr/bin/ffmpeg",
            [
                "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=30:duration=60", "-c:v", "libx264",
                "-preset", "ultrafast", scratch.path("in/clip.mp4").path,
            ])
        #expect(made.status == 0, "\(made.stderr)")
        // One thread at x264's medium preset: long enough to watch its progress move.
        try scratch.write(
            "wf.json",
            """
            {"version": 1, "name": "progress", "inputs": {"path": "in"}, "stages": [
              {"id": "export", "uses": "ffmpeg.transcode", "with": {"output": "out/${input.stem}.mp4",
               "segmentSeconds": 0, "video": {"preset": "medium", "crf": 23}, "threads": 1}}
            ]}
            """)
        let run = try Binary.start(["run", "wf.json", "--state", "state"], in: scratch.root)
        defer { if run.isRunning { run.signal(SIGKILL) } }
        var served = try await ServedDashboard.start(["--state", "state"], in: scratch.root)
        defer { served.process.signal(SIGKILL) }
        let browser = try BrowserSession()
        defer { browser.close() }

        try await browser.navigate(served.base + "/")
        try await browser.waitFor("document.body.dataset.transport === 'stream' && \(Self.percent) > 0")
        // A person selects the item's name in the table; a value set on the page would be gone after a reload.
        try await browser.eval(
            """
            window.marked = document.querySelector('#running tr[data-key] td.path a');
            getSelection().selectAllChildren(window.marked);
            window.firstPercent = \(Self.percent); window.notReloaded = true;
            """)
        try await browser.waitFor("\(Self.percent) >= window.firstPercent + 2")
        let progress = try await browser.eval("document.querySelector('#running .progress').textContent")
        #expect(progress.stringValue?.contains("real time · ETA") == true, "\(progress)")
        #expect(try await browser.eval("getSelection().toString()") == "clip.mp4")
        #expect(
            try await browser.eval(
                "window.marked.isConnected && window.marked.contains(getSelection().anchorNode) && window.notReloaded")
                == true)

        // The stream breaks: the page reads the status itself (and says it cannot); a server on the same port brings
        // the stream back, and the progress moves on.
        served.process.signal(SIGKILL)
        _ = await served.process.exit()
        try await browser.waitFor(
            "document.body.dataset.transport === 'polling' && document.getElementById('live').textContent.startsWith('cannot read')"
        )
        served = try await ServedDashboard.start(["--state", "state"], in: scratch.root, port: served.port)
        try await browser.eval("window.afterRestart = \(Self.percent)")
        try await browser.waitFor(
            "document.body.dataset.transport === 'stream' && \(Self.percent) > window.afterRestart && window.notReloaded"
        )
        #expect(try await browser.eval("getSelection().toString()") == "clip.mp4")
    }
}
