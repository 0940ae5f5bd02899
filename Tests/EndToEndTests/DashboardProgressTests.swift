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

    /// A 60 s 720p clip in `in/` and a workflow `wf.json` that transcodes it slowly enough to watch its progress.
    static func prepare(_ scratch: borrowing Scratch) async throws {
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
    }

    @Test func aRunningTranscodesProgressAdvancesWithoutAReloadAndASelectionSurvives() async throws {
        let scratch = try Scratch()
        try await Self.prepare(scratch)
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
        // the stream back, and the progress moves on. The run waits meanwhile, so it cannot end first on a fast
        // machine.
        run.signal(SIGSTOP)
        served.process.signal(SIGKILL)
        _ = await served.process.exit()
        try await browser.waitFor(
            "document.body.dataset.transport === 'polling' && document.getElementById('live').textContent.startsWith('cannot read')"
        )
        served = try await ServedDashboard.start(["--state", "state"], in: scratch.root, port: served.port)
        try await browser.eval("window.afterRestart = \(Self.percent)")
        run.signal(SIGCONT)
        try await browser.waitFor(
            "document.body.dataset.transport === 'stream' && \(Self.percent) > window.afterRestart && window.notReloaded"
        )
        #expect(try await browser.eval("getSelection().toString()") == "clip.mp4")

        // Interrupted, the run takes its progress file with it.
        run.signal(SIGINT)
        #expect(await run.exit() != 0)
        #expect(!FileManager.default.fileExists(atPath: scratch.path("state/progress.json").path))
    }

    /// The running stages `serve` at `base` reports (none while it answers nothing readable).
    static func progress(at base: String) async -> [JSONValue] {
        (try? JSONValue(parsing: Data(await httpGet(base + "/api/status").utf8)))?["progress"]?.arrayValue ?? []
    }

    @Test func aKilledRunsProgressIsNotShownAndWatchPublishesItsOwn() async throws {
        let scratch = try Scratch()
        try await Self.prepare(scratch)
        let run = try Binary.start(["run", "wf.json", "--state", "state"], in: scratch.root)
        defer { if run.isRunning { run.signal(SIGKILL) } }
        let served = try await ServedDashboard.start(["--state", "state"], in: scratch.root)
        defer { served.process.signal(SIGKILL) }
        try await waitUntil("the transcode's progress is served") { await !Self.progress(at: served.base).isEmpty }

        run.signal(SIGKILL)
        _ = await run.exit()
        let (lock, file) = (scratch.path("state/lock"), scratch.path("state/progress.json"))
        // The lock file's first line is the holder's pid (a watch names its command on the next one).
        let holder = { @Sendable in
            (try? String(contentsOf: lock, encoding: .utf8))?.split(separator: "\n").first.map(String.init)
        }
        #expect(FileManager.default.fileExists(atPath: file.path), "the killed run left its progress behind")
        // Nobody holds the folder: what the killed run left is not shown.
        #expect(await Self.progress(at: served.base).isEmpty, "nobody holds the folder")

        // `watch` takes the folder, removes what the killed run left, and publishes the transcode it takes up.
        let watch = try Binary.start(["watch", "wf.json", "--state", "state"], in: scratch.root)
        defer { if watch.isRunning { watch.signal(SIGKILL) } }
        try await waitUntil("watch holds the folder") { holder() == "\(watch.pid)" }
        try await waitUntil("the progress served is watch's own") {
            guard let data = FileManager.default.contents(atPath: file.path),
                (try? JSONValue(parsing: data))?["pid"]?.intValue == Int(watch.pid)
            else { return false }
            return await !Self.progress(at: served.base).isEmpty
        }
        watch.signal(SIGKILL)
        _ = await watch.exit()
        #expect(await Self.progress(at: served.base).isEmpty, "nobody holds the folder")

        // The next run removes it as soon as it holds the folder, before it plans.
        let next = try Binary.start(["run", "wf.json", "--state", "state"], in: scratch.root)
        defer { if next.isRunning { next.signal(SIGKILL) } }
        try await waitUntil("the next run holds the folder") { holder() == "\(next.pid)" }
        try await waitUntil("the progress file is its own") {
            guard let data = FileManager.default.contents(atPath: file.path) else { return true }
            return (try? JSONValue(parsing: data))?["pid"]?.intValue == Int(next.pid)
        }
    }
}
