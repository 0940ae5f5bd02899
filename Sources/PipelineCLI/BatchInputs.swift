import ArgumentParser
import Foundation
import MediaStages
import PipelineKit

import struct StageKit.InputItem

/// `--input PATH`, shared by the commands that take a batch's files.
struct InputOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "An input file or folder (repeatable); replaces the workflow's inputs.path.", valueName: "PATH"))
    var input: [String] = []
}

/// The files of a batch and the plan for them, shared by `run`, `plan`, `watch` and `status`.
enum BatchInputs {
    /// The files selected by `--input` paths (or the workflow's `inputs.path`); problems end the command with
    /// exit code 2.
    static func discover(_ workflow: Workflow, inputs: [String], file: String, state: String) throws(CommandFailure)
        -> Discovery
    {
        let selection = workflow.inputs
        let paths = inputs.isEmpty ? selection.map { [$0.path] } ?? [] : inputs
        guard !paths.isEmpty else {
            throw CommandFailure(.invalid, "\(file): no inputs: give --input PATH or set inputs.path in the workflow")
        }
        do {
            let manifest = try selection?.manifest.map { name in
                try InputManifest(
                    contentsOf: URL(
                        fileURLWithPath: name, relativeTo: URL(fileURLWithPath: file).deletingLastPathComponent()))
            }
            return try InputDiscovery.discover(
                paths: paths, include: selection?.include ?? [], exclude: selection?.exclude ?? [],
                recursive: selection?.recursive ?? false, skipping: [state], manifest: manifest ?? InputManifest())
        } catch {
            throw CommandFailure(.invalid, "pipeline: \(error)")
        }
    }

    /// Starts loading FFmpeg when a stage of `workflow` reads its input as media, so that the run's first probe or
    /// encode does not wait for the libraries (see ``MediaToolkit/preload()``).
    static func preloadMedia(for workflow: Workflow, registry: StageRegistry) {
        if workflow.stages.contains(where: { registry.descriptor(for: $0.uses)?.readsMediaInput == true }) {
            MediaToolkit.preload()
        }
    }

    /// FFmpeg's probe, for limits and for skipping files no media stage can read.
    static let probe: MediaProber = { path in
        do {
            let info = try await MediaToolkit.probe(path)
            return .facts(MediaFacts(duration: info.duration, container: info.format, videoCodec: info.video?.codec))
        } catch {
            return .unreadable("\(error)")
        }
    }

    /// Plans the batch against the ledger (an empty one when `ledger` is nil); a ledger that cannot be read
    /// ends the command with exit code 1. With `claims`, the items that would write a file another item writes are
    /// refused (``OutputClaimCheck``). Writes nothing: a run commits the plan's fingerprints and probes when it starts.
    static func plan(
        _ workflow: Workflow, registry: StageRegistry, discovery: consuming Discovery, ledger: (any StateStore)?,
        reprocess: Bool = false, onlyFailed: Bool = false, claims: Bool = true
    ) async throws(CommandFailure) -> BatchPlan {
        let planner = BatchPlanner(
            workflow: workflow, registry: registry, prober: probe, reprocess: reprocess, onlyFailed: onlyFailed)
        do {
            var plan = try await planner.plan(consume discovery, store: ledger, workflow: workflow.name)
            if claims {
                let check = OutputClaimCheck(
                    workflow: workflow, registry: registry, environment: ProcessInfo.processInfo.environment)
                try await check.check(&plan, store: ledger)
            }
            return plan
        } catch {
            throw .failed(error)
        }
    }
}
