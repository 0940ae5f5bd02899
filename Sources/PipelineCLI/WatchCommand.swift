import ArgumentParser
import AsyncHTTPClient
import Foundation
import HTTPTransport
import PipelineKit

import enum StageKit.BlockingWork
import struct StageKit.ByteCount
import struct StageKit.InputItem
import struct StageKit.TimeSpan

/// `pipeline watch WORKFLOW`: processes files as they appear in the input folders, once each has stopped
/// growing; the ledger carries what is done across restarts.
struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Process files as they appear in the input folders, once they stop growing; Ctrl-C stops.")

    @Argument(help: "The workflow file.")
    var workflow: String

    @OptionGroup var inputOptions: InputOptions

    @OptionGroup var varOptions: VarOptions

    @OptionGroup var stateOptions: StateOptions

    @OptionGroup var pluginOptions: PluginOptions

    @OptionGroup var runOptions: RunOptions

    @Option(
        name: .long,
        help: ArgumentHelp(
            "How long a file's size and modification time must stay the same before it is taken, e.g. 5s.",
            valueName: "DURATION"))
    var settle: String = "5s"

    @Flag(name: .long, help: "Look for changes every second instead of asking the kernel (inotify) to tell.")
    var poll = false

    func validate() throws {
        try runOptions.check()
        guard TimeSpan(parsing: settle) != nil else {
            throw ValidationError("--settle expects a duration such as 5s or 500ms, not \(settle)")
        }
    }

    func run() async throws {
        let (workflow, registry) = try WorkflowFile.load(
            self.workflow, plugins: pluginOptions.paths, varOverrides: try varOptions.overrides())
        let environment = try WorkflowFile.environment(for: workflow, file: self.workflow)
        let first = try BatchInputs.discover(
            workflow, inputs: inputOptions.input, file: self.workflow, state: stateOptions.state)
        let state = try StateFolder.openForWriting(stateOptions.state, fresh: false)
        defer { state.close() }
        // Only a batch's failures are read (and reported).
        let client = HTTPClient.makeForStages()
        let runner = runOptions.runner(
            workflow: workflow, registry: registry, state: state, environment: environment, client: client,
            keepsEveryResult: false)
        let watcher = FolderWatcher(folders: first.folders, polling: poll)
        let settle = TimeSpan(parsing: settle)?.duration ?? .seconds(5)
        let file = URL(fileURLWithPath: self.workflow).standardizedFileURL.path
        let inputs = inputOptions.input
        let statePath = stateOptions.state
        let status = await SignalHandling.cancellingOnSignal(onCancelRequest: runner.applyCancelRequests) {
            () async -> Int32 in
            var tracker = SettleTracker(settle: settle)
            var announced = false
            var reported = Set<String>()
            // Files that failed in this session, as they were: taken again once they change (or on a restart).
            var failed: [String: FileStamp] = [:]
            while !Task.isCancelled {
                let discovery: Discovery
                let plan: BatchPlan
                do {
                    // Scanning reads folders and sidecars: on a thread of its own.
                    discovery = try await BlockingWork.runLong {
                        Result { try BatchInputs.discover(workflow, inputs: inputs, file: file, state: statePath) }
                    }.get()
                } catch {
                    return (error as? ExitCode)?.rawValue ?? 1
                }
                watcher.watch(discovery.folders)
                let (ready, next) = tracker.settled(discovery.files)
                var fresh = discovery
                fresh.files = ready
                fresh.passedOver = discovery.passedOver.filter { reported.insert($0.path).inserted }
                do {
                    plan = try await BatchInputs.planForRun(
                        workflow, registry: registry, discovery: fresh, ledger: state.ledger)
                } catch {
                    return (error as? ExitCode)?.rawValue ?? 1
                }
                let stamps = Dictionary(discovery.files.map { ($0.input.path, $0.stamp) }, uniquingKeysWith: { $1 })
                var news = plan
                news.items = plan.items.filter { planned in
                    switch planned.action {
                    case .reuse: return false
                    case .skip: return reported.insert(planned.input.path).inserted
                    case .run:
                        return failed[planned.input.path] == nil
                            || failed[planned.input.path] != stamps[planned.input.path]
                    }
                }
                if !news.items.isEmpty || !news.passedOver.isEmpty {
                    do {
                        let outcome = try await runner.run(news, file: file)
                        if outcome.summary.interrupted { return 130 }
                        for result in outcome.results where result.outcome == .failed {
                            failed[result.path] = stamps[result.path]
                        }
                    } catch {
                        Output.error("pipeline: \(error)")
                        return 1
                    }
                } else if !plan.cacheEntries.isEmpty {
                    // No run starts to commit what the plan learned (a done file touched, say): without it, each
                    // pass would read the file again.
                    do {
                        try await state.ledger.cacheFingerprints(plan.cacheEntries)
                    } catch {
                        Output.error("pipeline: \(error)")
                        return 1
                    }
                }
                if !announced {
                    announced = true
                    Output.line(
                        "watching \(discovery.folders.count) folder\(discovery.folders.count == 1 ? "" : "s") "
                            + (watcher.isNotified ? "(inotify)" : "(polling every second)")
                            + "; files are taken once unchanged for \(TimeSpan(seconds: settle.seconds)); Ctrl-C stops")
                }
                _ = await watcher.wait(timeout: next.map { $0 - ContinuousClock.now })
            }
            return 0
        }
        try? await client.shutdown()
        if status != 0 { throw ExitCode(status) }
    }
}
