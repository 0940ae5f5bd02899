import ArgumentParser
import SharedBatch

/// `pipeline worker --db URL --drain WORKER` and `--stop WORKER`: asks a running worker, as the dashboard's buttons
/// do, instead of starting one.
struct WorkerRequestOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Ask the running worker with this id (as `pipeline status --db` lists it) to finish the items it holds, claim nothing new and exit, instead of starting a worker.",
            valueName: "WORKER"))
    var drain: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Ask the running worker with this id to stop now: its stages stop at their next checkpoint and its items go back to the queue at once, instead of starting a worker.",
            valueName: "WORKER"))
    var stop: String?

    func validate() throws {
        if drain != nil, stop != nil { throw ValidationError("--drain and --stop ask for one thing: give one of them") }
    }

    /// `--drain` or `--stop`, whichever was given.
    var given: String? { drain != nil ? "--drain" : stop != nil ? "--stop" : nil }

    /// Asks the worker `--drain` or `--stop` names, in the batch at `url`; false when neither was given (the command
    /// starts a worker).
    func askedAWorker(db url: String) async throws -> Bool {
        if let drain {
            try await Self.ask(drain, to: .drain, db: url)
        } else if let stop {
            try await Self.ask(stop, to: .stop, db: url)
        } else {
            return false
        }
        return true
    }

    /// Leaves the request on the worker's row in the batch at `url`; it sees it within a few seconds. A worker the
    /// batch does not list, one that is not live, or one whose pipeline takes no requests ends the command with exit
    /// code 1.
    private static func ask(_ worker: String, to request: WorkerRequest, db url: String) async throws {
        let refusal = try await SharedBatchOptions.using(url, opening: .existingBatch) { database in
            try await CommandFailure.mappingErrors { () async throws -> WorkerRequestRefusal? in
                guard let database else { return nil }
                return try await BatchQueue(database: database).ask(worker, to: request)
            }
        }
        switch refusal {
        case nil:
            Output.line(
                request == .drain
                    ? "asked worker \(worker) to drain: it finishes the items it holds, claims nothing new, then exits"
                    : "asked worker \(worker) to stop: its items go back to the queue for another worker")
        case .unknown:
            throw CommandFailure(
                .failed, "pipeline: no worker \(worker) in the batch: pipeline status --db URL lists the workers")
        case .notLive:
            throw CommandFailure(
                .failed, "pipeline: worker \(worker) is not live (it stopped, or its lease ran out): nothing to ask")
        case .takesNoRequests:
            throw CommandFailure(
                .failed, "pipeline: worker \(worker) runs a pipeline that takes no requests: stop it with SIGTERM")
        }
    }
}

extension WorkerCommand {
    /// The options given that only a worker that starts uses, which `--drain` and `--stop` (they start none) refuse
    /// rather than leave unused. What the user typed, not what differs from a default: every such option is optional,
    /// or a flag or list that is set only when given, so an option given at its default value counts too. An option
    /// added to the worker, or to the groups it shares with `run`, belongs here.
    var givenOptions: [String] {
        let (run, plugins, notify) = (runOptions, pluginOptions, notifyOptions)
        let given: [(option: String, given: Bool)] = [
            ("--lease", givenLease != nil), ("--poll", givenPoll != nil), ("--abandon-after", givenAbandonAfter != nil),
            ("--artifacts", artifacts != nil), ("--segments", segments != nil), ("--metrics-port", metricsPort != nil),
            ("--metrics-host", givenMetricsHost != nil), ("--jobs", run.givenJobs != nil),
            ("--cpu-jobs", run.cpuJobs != nil), ("--transfers", run.givenTransfers != nil),
            ("--bwlimit", run.bwlimit != nil), ("--json", run.json), ("--verbose", run.verbose),
            ("--plugin", !plugins.paths.isEmpty), ("--notify", !notify.targets.isEmpty),
        ]
        return given.filter(\.given).map(\.option)
    }
}
