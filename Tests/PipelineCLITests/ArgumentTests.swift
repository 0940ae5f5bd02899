import ArgumentParser
import Foundation
import Sandbox
import SharedBatch
import StageKit
import TestSupport
import Testing

@testable import PipelineCLI

/// The command line's arguments as `pipeline` takes or refuses them, parsed in this process: a refused argument
/// ends with exit code 2 (the README's and `--help`'s code for invalid arguments, not ArgumentParser's EX_USAGE 64),
/// with a message that names it and says what it takes.
@Suite struct ArgumentTests {
    /// Durations and sizes are read once, where they enter, into the types the engine uses; an option left out is
    /// the default its library declares.
    @Test func durationsAndSizesAreReadIntoTheirTypes() throws {
        let worker = try parsed(
            ["worker", "--db", "postgres://h/db", "--lease", "2m", "--poll", "250ms", "--bwlimit", "20MiB"],
            as: WorkerCommand.self)
        #expect(worker.lease.duration == .seconds(120) && worker.poll.duration == .milliseconds(250))
        #expect(worker.runOptions.bwlimit?.bytes == 20 << 20)
        let defaults = try parsed(["worker", "--db", "postgres://h/db"], as: WorkerCommand.self)
        #expect(defaults.lease.duration == WorkerSettings.defaultLease)
        #expect(defaults.poll.duration == WorkerSettings.defaultPoll)
        #expect(defaults.runOptions.bwlimit == nil)
        #expect(defaults.abandonAfter == TakeoverLimit.defaultLimit)
        #expect(
            try parsed(["worker", "--db", "postgres://h/db", "--abandon-after", "100"], as: WorkerCommand.self)
                .abandonAfter == 100)
        #expect(
            try parsed(["watch", "wf.json", "--settle", "1.5s"], as: WatchCommand.self).settle.duration
                == .milliseconds(1500))
        #expect(try parsed(["watch", "wf.json"], as: WatchCommand.self).settle.duration == .seconds(5))
        #expect(
            try parsed(["run", "wf.json", "--bwlimit", "5000000"], as: RunCommand.self).runOptions.bwlimit?.bytes
                == 5_000_000)
        #expect(try parsed(["sandbox", "--sts-ttl", "20m"], as: SandboxCommand.self).stsTTL.duration == .seconds(1200))
        #expect(try parsed(["sandbox"], as: SandboxCommand.self).stsTTL.duration == SandboxConfiguration().stsTTL)
    }

    /// `--drain` and `--stop` ask a running worker and start none: a worker's option beside them is refused, not left
    /// unused, also when it is given at its default value (`--lease 30s`, `--jobs 1`): what counts is what was typed.
    @Test func askingAWorkerTakesNoWorkerOptionEvenAtItsDefault() throws {
        let db = ["worker", "--db", "postgres://h/db"]
        let options: [[String]] = [
            ["--lease", "30s"], ["--poll", "500ms"], ["--abandon-after", "3"], ["--metrics-host", "127.0.0.1"],
            ["--jobs", "1"], ["--transfers", "4"], ["--lease", "2m"], ["--artifacts", "/tmp/a"],
            ["--segments", "/tmp/s"],
            ["--metrics-port", "9100"], ["--cpu-jobs", "1"], ["--bwlimit", "1MiB"], ["--json"], ["--verbose"],
            ["--plugin", "/lib/x.so"], ["--notify", "https://hooks.test/x"],
        ]
        for (index, option) in options.enumerated() {
            let asked = index % 2 == 0 ? "--drain" : "--stop"
            let refused = refusal(of: db + [asked, "w1"] + option)
            #expect(refused?.code == 2, "\(asked) \(option)")
            #expect(
                refused?.message.contains(
                    "\(asked) asks a running worker and starts none: it takes only --db, not \(option[0])")
                    == true, "\(String(describing: refused))")
        }
        let drain = try parsed(db + ["--drain", "w1"], as: WorkerCommand.self)
        #expect(drain.requestOptions.drain == "w1" && drain.givenOptions.isEmpty)
        let worker = try parsed(db + ["--jobs", "1", "--lease", "30s"], as: WorkerCommand.self)
        #expect(worker.givenOptions == ["--lease", "--jobs"] && worker.runOptions.jobs == 1)
    }

    /// `--help` shows each default as it would be written on the command line.
    @Test func theHelpShowsTheDefaultsAsTheyAreWritten() {
        let worker = WorkerCommand.helpMessage(columns: 1000)
        #expect(worker.contains("(default: 30s)") && worker.contains("(default: 500ms)"), "\(worker)")
        #expect(worker.contains("--abandon-after <N>") && worker.contains("(1 to 100). (default: 3)"), "\(worker)")
        #expect(worker.contains("(default: 127.0.0.1)") && worker.contains("at the same time. (default: 1)"))
        #expect(worker.contains("transfers at once. (default: 4)"), "\(worker)")
        #expect(WatchCommand.helpMessage(columns: 1000).contains("(default: 5s)"))
        #expect(SandboxCommand.helpMessage(columns: 1000).contains("(default: 3000s)"))
    }

    /// A duration or size that is not one, or one out of range, is refused before anything runs, saying what the
    /// option takes.
    @Test func badDurationsAndSizesAreRefusedWithWhatTheyTake() {
        let db = ["--db", "postgres://h/db"]
        let cases: [([String], [String])] = [
            (
                ["worker"] + db + ["--lease", "0.5s"],
                ["--lease expects a duration of at least 1s, such as 30s or 2m, not 500ms"]
            ),
            (
                ["worker"] + db + ["--lease", "soon"],
                ["The value 'soon' is invalid for '--lease <DURATION>'", "such as 30s or 2m"]
            ),
            (
                ["worker"] + db + ["--poll", "5ms"],
                ["--poll expects a duration of at least 10ms, such as 500ms or 2s, not 5ms"]
            ),
            (
                ["worker"] + db + ["--poll", "often"],
                ["The value 'often' is invalid for '--poll <DURATION>'", "such as 500ms or 2s"]
            ),
            (
                ["run", "wf.json", "--bwlimit", "5XB"],
                ["The value '5XB' is invalid for '--bwlimit <SIZE>'", "e.g. 20MiB"]
            ),
            (
                ["run", "wf.json", "--bwlimit", "0"],
                ["--bwlimit expects bytes per second such as 20MiB or 5000000, not 0 B"]
            ),
            (
                ["watch", "wf.json", "--settle", "never"],
                ["The value 'never' is invalid for '--settle <DURATION>'", "e.g. 5s"]
            ),
            (
                ["worker"] + db + ["--abandon-after", "0"],
                ["--abandon-after expects a number of takeovers from 1 to 100, not 0"]
            ),
            (
                ["worker"] + db + ["--abandon-after", "101"],
                ["--abandon-after expects a number of takeovers from 1 to 100, not 101"]
            ),
            (
                ["worker"] + db + ["--abandon-after", "99999999999999999999"],
                ["The value '99999999999999999999' is invalid for '--abandon-after <N>'"]
            ),
            (
                ["sandbox", "--sts-ttl", "0s"],
                ["--sts-ttl must be a duration of at least 1s, such as 30s or 50m, not 0ms"]
            ),
        ]
        for (arguments, messages) in cases {
            let refused = refusal(of: arguments)
            #expect(refused?.code == 2, "\(arguments)")
            for message in messages {
                #expect(refused?.message.contains(message) == true, "\(arguments): \(refused?.message ?? "taken")")
            }
        }
    }

    /// Arguments ArgumentParser refuses itself and those a command's validation refuses end with 2 and the usage;
    /// `--help` ends with 0.
    @Test func argumentErrorsExitWithTwo() throws {
        let scratch = try Scratch()
        try scratch.write("in/a.txt", "a")
        let missing = scratch.path("missing").path
        let refused: [[String]] = [
            ["run"], ["run", "wf.json", "--jobs", "0"], ["run", "wf.json", "--jobs", "many"],
            ["run", "wf.json", "--bogus"], ["frobnicate"],
            ["run", "wf.json", "--fresh", "--failed"], ["run", "wf.json", "--reprocess", "--failed"],
            // A report that could not be written is refused before the run, not after it.
            ["run", "wf.json", "--report", "\(missing)/report.json"],
            ["run", "wf.json", "--report", scratch.path("in").path],
            ["run", "wf.json", "--report", "\(missing)/"], ["run", "wf.json", "--report", ""],
        ]
        for arguments in refused {
            let result = refusal(of: arguments)
            #expect(result?.code == 2, "\(arguments): \(result?.message ?? "taken")")
            #expect(result?.message.contains("Error: ") == true && result?.message.contains("Usage: ") == true)
        }
        let report = refusal(of: ["run", "wf.json", "--report", "\(missing)/report.json"])
        #expect(
            report?.message.contains("--report \(missing)/report.json: the folder \(missing) does not exist") == true,
            "\(report?.message ?? "")")
        // `--help` parses to ArgumentParser's help command, whose run ends the process cleanly.
        for arguments in [["run", "--help"], ["--help"]] {
            var help = try PipelineCommand.parseAsRoot(arguments)
            let end = #expect(throws: (any Error).self, "\(arguments)") { try help.run() }
            #expect(end.map { PipelineCommand.exitCode(ending: $0).rawValue } == 0, "\(arguments)")
        }
    }

    /// `pipeline --help` lists every exit code the program ends with: 0, and each code a failure carries.
    @Test func theHelpListsEveryExitCode() {
        let help = PipelineCommand.helpMessage(columns: 1000).split(whereSeparator: \.isWhitespace).joined(
            separator: " ")
        #expect(help.contains("Exit codes: 0 no item failed"), "\(help)")
        for code in CommandFailure.Code.all {
            #expect(help.contains("\(code.exitCode.rawValue) \(code.meaning)"), "\(code.exitCode.rawValue): \(help)")
        }
        #expect(CommandFailure.Code.all.map(\.exitCode.rawValue) == [1, 2, 3, 130])
    }
}
