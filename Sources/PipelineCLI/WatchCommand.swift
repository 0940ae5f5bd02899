import ArgumentParser
import AsyncHTTPClient
import Foundation
import HTTPTransport
import PipelineKit
import PluginHost

import enum StageKit.BlockingWork
import struct StageKit.TimeSpan

/// `pipeline watch WORKFLOW`: processes files as they appear in the input folders, once each has stopped
/// growing; the ledger carries what is done across restarts.
struct WatchCommand: StageCatalogCommand {
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
    var settle = TimeSpan(seconds: 5)

    @Flag(name: .long, help: "Look for changes every second instead of asking the kernel (inotify) to tell.")
    var poll = false

    func run(stages catalog: StageCatalog) async throws {
        let (workflow, registry) = try WorkflowFile.load(
            self.workflow, catalog: catalog, plugins: pluginOptions.paths, varOverrides: try varOptions.overrides())
        let environment = try WorkflowFile.environment(for: workflow, file: self.workflow)
        let first = try BatchInputs.discover(
            workflow, inputs: inputOptions.input, file: self.workflow, state: stateOptions.state)
        let state = try StateFolder.openForWriting(stateOptions.state, fresh: false, watching: workflow.name)
        defer { state.close() }
        // A killed run's progress is not this watch's; its own goes when it ends.
        ProgressFile.remove(in: state.folder)
        defer { ProgressFile.remove(in: state.folder) }
        let client = HTTPClient.makeForStages()
        // Only a batch's failures are read (and reported), so results are not kept for the whole session.
        var settings = runOptions.runnerSettings(
            scratchRoot: state.scratchRoot, client: client, keepsEveryResult: false)
        settings.publishProgress(of: workflow.name, in: state.folder)
        let runner = settings.runner(
            workflow: workflow, registry: registry, store: state.ledger, environment: environment)
        let watcher = FolderWatcher(folders: first.folders, polling: poll)
        let watch = Watch(
            workflow: workflow, registry: registry, ledger: state.ledger, runner: runner, watcher: watcher,
            file: URL(fileURLWithPath: self.workflow).standardizedFileURL.path, inputs: inputOptions.input,
            state: stateOptions.state)
        // A request left in the ledger by another process is a cancel (the runner carries it out) or a retry (the
        // watch looks again at once).
        let failure = await SignalHandling.cancellingOnSignal(onRequest: {
            await runner.applyCancelRequests()
            watcher.wake()
        }) {
            await watch.run(WatchSession(settle: settle.duration))
        }
        try? await client.shutdown()
        if let failure { throw failure }
    }
}

/// The loop of `pipeline watch`: scan, plan what has settled, run what is new, wait for a change.
private struct Watch: Sendable {
    var workflow: Workflow
    var registry: StageRegistry
    var ledger: SQLiteLedger
    var runner: Runner
    var watcher: FolderWatcher
    /// The workflow file's full path.
    var file: String
    /// `--input` paths.
    var inputs: [String]
    /// The state folder, left out of the scans.
    var state: String

    /// The files of the workflow's retry requests; the requests of files the scan no longer finds are withdrawn, as
    /// no pass would run them.
    private func retryRequests(scanned discovery: Discovery) async throws(CommandFailure) -> [String] {
        try await CommandFailure.mappingErrors {
            let retried = try await ledger.retryRequests(workflow: workflow.name)
            let scanned = Set(discovery.files.map(\.input.path))
            let gone = retried.filter { !scanned.contains($0.value) }.keys
            if !gone.isEmpty { try await ledger.withdrawRetryRequests(of: Array(gone)) }
            return retried.values.filter(scanned.contains)
        }
    }

    /// Watches until the task is cancelled; returns what ended it early.
    func run(_ start: WatchSession) async -> CommandFailure? {
        var session = start
        var announced = false
        while !Task.isCancelled {
            let next: ContinuousClock.Instant?
            do throws(CommandFailure) {
                let discovery = try await scan()
                watcher.watch(discovery.folders)
                let ready: Discovery
                (ready, next) = session.settled(discovery)
                session.retry(try await retryRequests(scanned: discovery))
                let plan = try await BatchInputs.plan(
                    workflow, registry: registry, discovery: ready, ledger: ledger)
                let news = session.unseen(in: plan)
                if !news.items.isEmpty || !news.passedOver.isEmpty {
                    let outcome = try await CommandFailure.mappingErrors {
                        try await ledger.answerRetryRequests(takenUpBy: news)
                        return try await runner.run(news, file: file)
                    }
                    if outcome.summary.interrupted { return CommandFailure(.interrupted) }
                    session.record(outcome)
                } else if !plan.cacheEntries.isEmpty {
                    // No run starts to commit what the plan learned (a done file touched, say): without it, each
                    // pass would read the file again.
                    try await CommandFailure.mappingErrors { try await ledger.cacheFingerprints(plan.cacheEntries) }
                }
                if !announced {
                    announced = true
                    announce(discovery.folders.count, settle: session.settle)
                }
            } catch {
                // A scan or plan cut short by Ctrl-C is the stop that was asked for, not a failure.
                return Task.isCancelled ? nil : error
            }
            _ = await watcher.wait(timeout: next.map { $0 - ContinuousClock.now })
        }
        return nil
    }

    /// The input files as they are now; scanning reads folders and sidecars, on a thread of its own.
    private func scan() async throws(CommandFailure) -> Discovery {
        let (workflow, inputs, file, state) = (self.workflow, self.inputs, self.file, self.state)
        return try await BlockingWork.runLong {
            Result { () throws(CommandFailure) in
                try BatchInputs.discover(workflow, inputs: inputs, file: file, state: state)
            }
        }.get()
    }

    /// Says, once, what is watched and how.
    private func announce(_ folders: Int, settle: Duration) {
        Output.line(
            "watching \(folders) folder\(folders == 1 ? "" : "s") "
                + (watcher.isNotified ? "(inotify)" : "(polling every second)")
                + "; files are taken once unchanged for \(TimeSpan(seconds: settle.seconds)); Ctrl-C stops")
    }
}
