import Foundation
import Logging
import Synchronization
import TestSupport
import Testing

@testable import MediaStages

/// A batch runs several FFmpeg operations at once: each line FFmpeg logs reaches the logger of the operation that
/// made it, and counts against that operation's cap, whichever operation started last. The tests read the
/// process's routes, so they run one at a time; the damaged file decodes on one thread, since a frame-threaded
/// decoder's workers log some lines without saying for which file.
@Suite(.serialized) struct ConcurrentLogTests {
    /// Quick, and one decoding thread.
    static let settings: TranscodeSettings = {
        var settings = TranscodeSettings()
        settings.preset = .ultrafast
        settings.threads = 1
        return settings
    }()

    @Test func aDamagedFilesLinesStayWithItsTranscodeWhileAnotherTranscodeRuns() async throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (damaged, clean) = try await Self.clips(in: folder, random: SeededRandom(#function))
        let settings = Self.settings
        let alone = try await DamagedInputLogTests.ffmpegLines(
            damaged.path, settings: settings, level: .debug, folder: folder)
        #expect(alone.count > FFmpegLog.linesShown + 1, "the damage makes more lines than are shown: \(alone.count)")

        // The damaged file's transcode starts first and waits, once under way, until the clean one has started:
        // the clean one is then the latest operation while the damaged one complains. The clean one waits at its
        // start until the damaged one is done. The damaged one's logger is quiet and the clean one's verbose, so
        // FFmpeg formats lines the quiet one must not count.
        let damagedLines = LineCollector(level: .info)
        let cleanLines = LineCollector(level: .debug)
        let damagedStarted = Latch()
        let cleanStarted = Latch()
        let damagedDone = Latch()
        let damagedRun = Task {
            try await MediaToolkit.transcode(
                damaged.path, to: folder.appendingPathComponent("damaged-out.mp4").path, settings: settings,
                logger: Logger(label: "damaged") { _ in damagedLines },
                progress: { _, _ in
                    damagedStarted.open()
                    cleanStarted.wait()
                })
        }
        try await waitUntil("the damaged file's transcode is under way") { damagedStarted.isOpen }
        let cleanRun = Task {
            try await MediaToolkit.transcode(
                clean.path, to: folder.appendingPathComponent("clean-out.mp4").path, settings: settings,
                logger: Logger(label: "clean") { _ in cleanLines },
                progress: { _, _ in
                    cleanStarted.open()
                    damagedDone.wait()
                })
        }
        let damagedResult = await damagedRun.result
        damagedDone.open()
        _ = try await cleanRun.value
        _ = try damagedResult.get()

        let strays = cleanLines.lines.withLock { $0 }.filter { $0.hasPrefix("ffmpeg") }
        #expect(strays.isEmpty, "\(strays.count) lines, the first: \(strays.prefix(3))")
        Self.expectCapped(damagedLines, alone: alone)
    }

    @Test func aProbeWhileADamagedFileTranscodesGetsNoneOfItsLines() async throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (damaged, clean) = try await Self.clips(in: folder, random: SeededRandom(#function))
        let settings = Self.settings
        let alone = try await DamagedInputLogTests.ffmpegLines(
            damaged.path, settings: settings, level: .debug, folder: folder)

        // Probes of the clean file one after another, each the latest operation, for as long as the damaged file
        // transcodes.
        let damagedLines = LineCollector(level: .info)
        let probeLines = LineCollector(level: .info)
        let transcoding = Latch()
        let done = Latch()
        let damagedRun = Task {
            defer { done.open() }
            return try await MediaToolkit.transcode(
                damaged.path, to: folder.appendingPathComponent("damaged-out.mp4").path, settings: settings,
                logger: Logger(label: "damaged") { _ in damagedLines }, progress: { _, _ in transcoding.open() })
        }
        try await waitUntil("the damaged file's transcode is under way") { transcoding.isOpen }
        var probes = 0
        while !done.isOpen {
            _ = try await MediaToolkit.probe(clean.path, logger: Logger(label: "probe") { _ in probeLines })
            probes += 1
        }
        _ = try await damagedRun.value

        #expect(probes > 0)
        let strays = probeLines.lines.withLock { $0 }.filter { $0.hasPrefix("ffmpeg") }
        #expect(strays.isEmpty, "\(probes) probes, \(strays.count) lines, the first: \(strays.prefix(3))")
        Self.expectCapped(damagedLines, alone: alone)
    }

    /// A line without a route (FFmpeg logged it where no operation can be told) is the operation's when one runs;
    /// with several, the latest one's logger shows it with every file's name, under a cap of its own. (It counts
    /// the operations of the whole process: no other test's may run meanwhile, as with `--no-parallel`.)
    @Test func aLineWithoutARouteNamesEveryFileWhenSeveralRun() async throws {
        let warning: Int32 = 1  // MS_LOG_WARNING
        let first = LineCollector(level: .info)
        let second = LineCollector(level: .info)
        let (firstRunning, secondRunning, firstEnds, secondEnds) = (Latch(), Latch(), Latch(), Latch())
        let firstRun = Task {
            await FFmpegLog.run(logging: Logger(label: "a") { _ in first }, about: "a.mp4") {
                firstRunning.open()
                firstEnds.wait()
            }
        }
        try await waitUntil("the first operation runs") { firstRunning.isOpen }
        FFmpegLog.forward(route: 0, level: warning, line: "alone")
        let secondRun = Task {
            await FFmpegLog.run(logging: Logger(label: "b") { _ in second }, about: "b.mp4") {
                secondRunning.open()
                secondEnds.wait()
            }
        }
        try await waitUntil("the second operation runs") { secondRunning.isOpen }
        for index in 0..<(FFmpegLog.linesShown + 5) {
            FFmpegLog.forward(route: 0, level: warning, line: "line \(index)")
        }
        secondEnds.open()
        await secondRun.value
        firstEnds.open()
        await firstRun.value

        #expect(first.lines.withLock { $0 } == ["ffmpeg: alone"])
        let expected =
            (0..<FFmpegLog.linesShown).map { "ffmpeg (one of a.mp4, b.mp4): line \($0)" } + [
                "ffmpeg (one of several files): 5 more message(s) left out (--verbose shows every one)"
            ]
        #expect(second.lines.withLock { $0 } == expected)
    }

    /// A 4 s clip with a third overwritten by `random`'s noise, and a clean 2 s one.
    static func clips(in folder: URL, random: SeededRandom) async throws -> (damaged: URL, clean: URL) {
        let damaged = folder.appendingPathComponent("damaged.mp4")
        let clean = folder.appendingPathComponent("clean.mp4")
        try await makeClip(seconds: 4, size: "320x240", rate: "25", at: damaged)
        try await makeClip(seconds: 2, size: "320x240", rate: "25", at: clean)
        try DamagedInputLogTests.damage(damaged, with: random)
        return (damaged, clean)
    }

    /// The damaged file's quiet logger got its first lines (lines it makes alone) and the number of the others, as alone.
    static func expectCapped(_ collector: LineCollector, alone: [String]) {
        let lines = collector.lines.withLock { $0 }.filter { $0.hasPrefix("ffmpeg") }
        let leftOut = alone.count - FFmpegLog.linesShown
        #expect(lines.count == FFmpegLog.linesShown + 1, "\(lines.count) lines, the last: \(lines.suffix(2))")
        let shown = lines.prefix(FFmpegLog.linesShown).filter { !alone.contains($0) }
        #expect(shown == [], "lines shown that the file does not make alone")
        #expect(lines.last == "ffmpeg: \(leftOut) more message(s) left out (--verbose shows every one)")
    }
}

/// A moment a shim callback waits for on its own thread (the thread of an operation, never a task's).
final class Latch: Sendable {
    private let condition = Mutex<Bool>(false)
    private let semaphore = DispatchSemaphore(value: 0)

    var isOpen: Bool { condition.withLock { $0 } }

    func open() {
        let wasOpen = condition.withLock { open in
            defer { open = true }
            return open
        }
        if !wasOpen { semaphore.signal() }
    }

    /// Returns once the latch is open (at the latest after a minute, so that a broken test fails instead of
    /// hanging).
    func wait() {
        guard !isOpen else { return }
        _ = semaphore.wait(timeout: .now() + 60)
        semaphore.signal()  // for the next waiter
    }
}
