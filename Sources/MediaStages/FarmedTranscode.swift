import Foundation
import Logging
import StageKit
import StageRuntime

/// A segmented transcode whose units every worker of a shared batch may encode (see ``SegmentFarm``).
///
/// The worker that holds the item publishes the plan (the segments' starts at the source's scene changes or
/// keyframes, the audio as a unit of its own, the settings, a pinned thread count and the encoder build), then
/// encodes units of it as long as any is unclaimed; other workers claim the rest. Beside that it gathers each unit
/// as soon as it is done (its own from disk, the others' from the segment store, each verified against its
/// recorded SHA-256), joins them by stream copy (beside the encode when an upload streams the export), and after
/// the output is committed retires the plan. The plan's id digests everything that decides the units' bytes, so a
/// worker that takes the item over after a crash finds the same plan and its finished units.
struct FarmedTranscode {
    let input: String
    /// The transcode's settings (mode transcode).
    let settings: TranscodeSettings
    /// The source's duration in seconds.
    let duration: Double
    let hasAudio: Bool
    /// Room reserved for the joined file's index (``SegmentedTranscode/indexSpace(duration:source:settings:)``).
    let indexSpace: Int64
    let segmentSeconds: Double
    /// Where the segments start.
    let cuts: SegmentCuts
    /// The `segmentJobs` a one-machine run would encode at once: the thread count is theirs, so that the farm's
    /// output is the one-machine run's.
    let jobs: Int
    let farm: any SegmentFarm
    let store: any SegmentStore
    let context: StageContext

    /// Where the units this worker encodes or fetches wait for the join: the stage's scratch folder.
    private var encoder: SegmentUnitEncoder {
        SegmentUnitEncoder(
            store: store, folder: context.scratchFolder.appendingPathComponent("units"), logger: context.logger)
    }

    /// What the item's checkpoint keeps: the thread count the plan was made with, so that a worker on a machine
    /// with another number of cores that takes the item over finds the same plan, and the segments' starts when
    /// they are cut at scene changes, so that it finds them without another pass over the source (nil in a
    /// checkpoint saved before they were kept).
    private struct Checkpoint: Codable {
        var plan: String
        var threads: Int
        var cuts: SegmentCuts?
        var length: Double?
        var starts: [Double]?
    }

    /// The plan for this source and these settings. A pass over the source that finds its scene changes reports
    /// to `progress` (seconds scored, the duration), before any unit is shared.
    func plan(progress: @escaping @Sendable (Double, Double) -> Void = { _, _ in }) async throws -> SegmentPlan {
        let saved =
            context.savedCheckpoint?["threads"] != nil ? context.lastCheckpoint(as: Checkpoint.self) : nil
        let threads = saved?.threads ?? SegmentedTranscode.pinnedThreads(settings.threads, jobs: jobs)
        let starts: [Double]
        if let saved, let kept = saved.starts,
            cuts.takesStarts(cutBy: saved.cuts, for: saved.length, length: segmentSeconds)
        {
            starts = kept
        } else {
            starts = try await SegmentedTranscode.starts(
                input, duration: duration, length: segmentSeconds, cuts: cuts, logger: context.logger,
                progress: progress)
        }
        var units = starts.indices.map { index in
            let end = index + 1 < starts.count ? starts[index + 1] : nil
            return SegmentUnit(
                index: index, kind: .video, start: starts[index], end: end,
                seconds: (end ?? duration) - starts[index])
        }
        if hasAudio {
            units.append(SegmentUnit(index: units.count, kind: .audio, start: 0, end: nil, seconds: duration))
        }
        // What a unit's encode takes from the plan's settings, not what it sets for itself.
        var shared = settings
        (shared.threads, shared.faststart, shared.streams, shared.range) = (0, false, .all, nil)
        let settingsJSON = try JSONDecoder().decode(JSONValue.self, from: try JSONEncoder().encode(shared))
        let encoderBuild = farm.encoder
        let item = context.item
        let id = SegmentKey.planID(
            digesting: [
                input, "\(item.size)", "\(item.modified)", settingsJSON.serialized(), "\(threads)", encoderBuild,
            ] + units.map { "\($0.kind.rawValue):\($0.start):\($0.end ?? -1)" })
        return SegmentPlan(
            id: id, input: input, settings: settingsJSON, threads: threads, encoder: encoderBuild, seconds: duration,
            units: units)
    }

    /// Encodes units while any is unclaimed and gathers each one as it is done (by this worker or others), then
    /// joins them into `output`. With `stream`, the join runs beside the encode: it appends each segment as soon
    /// as it is in place here (after the audio unit), and publishes what of `output` is final, for the upload that
    /// streams it to `destination`.
    func run(
        to output: String, stream: (ExportStream, destination: String)? = nil,
        progress: @escaping @Sendable (Double, Double) -> Void
    ) async throws -> (TranscodeReport, SegmentPlan) {
        let plan = try await plan(progress: progress)
        let replaced = try await farm.otherPlans(of: context.item, than: plan.id)
        let states = try await farm.publish(plan, for: context.item)
        await remove(replaced)
        let starts = plan.units.filter { $0.kind == .video }.map(\.start)
        try await context.checkpoint(
            Checkpoint(
                plan: plan.id, threads: plan.threads, cuts: cuts, length: segmentSeconds,
                starts: cuts == .scenes ? starts : nil))
        context.logger.info(
            "segmented transcode shared with the workers: \(plan.units.count) units, \(states.filter { $0.status == .done }.count) done (plan \(plan.id))"
        )
        let video = plan.units.filter { $0.kind == .video }
        let audio = plan.units.first { $0.kind == .audio }
        let audioFile = audio.map { encoder.file(of: $0, in: plan.id).path }
        let join = Join(
            input: plan.input, parts: video.map { encoder.file(of: $0, in: plan.id).path }, starts: video.map(\.start),
            output: output,
            faststart: settings.faststart, indexSpace: indexSpace)
        let arrivals = PartArrivals([])
        let encodeAndGather = { @Sendable in
            try await self.encodeAndGather(plan, states: states, progress: progress, inPlace: arrivals.add)
        }
        var report: TranscodeReport
        if let stream {
            let gate = JoinGate.streaming(
                stream.0, destination: stream.destination, writing: output, arrivals: arrivals)
            (_, report) = try await joinBeside(arrivals: arrivals, encode: encodeAndGather) { [context] in
                if let audio, await !arrivals.arrival(of: audio.index) { throw CancellationError() }
                context.logger.info("joining the segments as they are in place, for the upload that streams them")
                return try await join.run(audio: audioFile, gate: gate, context: context)
            }
        } else {
            try await encodeAndGather()
            report = try await join.run(audio: audioFile, gate: nil, context: context)
        }
        report.inputDuration = duration
        return (report, plan)
    }

    /// Encodes units of the plan while any is unclaimed and, beside that, puts every done unit's file in place for
    /// the join as soon as it is done, whichever worker encoded it (`inPlace` is told its index); returns once
    /// every unit is in place.
    private func encodeAndGather(
        _ plan: SegmentPlan, states: [SegmentUnitState], progress: @escaping @Sendable (Double, Double) -> Void,
        inPlace: @escaping @Sendable (Int) -> Void
    ) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await encodeUnits(of: plan) }
            group.addTask { try await gatherUnits(of: plan, states: states, progress: progress, inPlace: inPlace) }
            // The gathering ends once every unit is in place; the encoding only when it fails or is stopped.
            try await group.next()
            group.cancelAll()
        }
    }

    /// Claims and encodes units of the plan, one at a time, until it is stopped; with none to claim, waits without
    /// this machine's CPU slot.
    private func encodeUnits(of plan: SegmentPlan) async throws {
        while true {
            if let claim = try await farm.claim(in: plan.id) {
                try await encode(claim)
            } else {
                try await pause()
            }
        }
    }

    /// Puts each done unit's file in place as soon as it is done, the audio first and then the segments in order
    /// (as the join takes them); a unit missing from the store or damaged there is queued to be encoded again.
    /// Returns once every unit is in place.
    private func gatherUnits(
        of plan: SegmentPlan, states: [SegmentUnitState], progress: @escaping @Sendable (Double, Double) -> Void,
        inPlace: (Int) -> Void
    ) async throws {
        var states = states
        var gathered = Set<Int>()
        var announced = false
        while true {
            report(states, progress: progress)
            // Only the item's holder retires or replaces its plan: an empty plan here was retired by a holder
            // this worker took over from before it committed; publish it again.
            if states.isEmpty { states = try await farm.publish(plan, for: context.item) }
            // The takeover limit first: a unit abandoned also has its attempts used up, for older workers.
            if let abandoned = states.first(where: { $0.status != .done && $0.abandoned }) {
                throw StageFailure(
                    "\(SegmentUnitEncoder.name(of: abandoned.unit)) of the shared segmented transcode was abandoned: the workers encoding it died each time; see their logs, then queue the item again with submit --failed or the dashboard's retry",
                    kind: .abandoned)
            }
            if let failing = states.first(where: { $0.status != .done && $0.attempts >= SegmentUnitState.attemptLimit })
            {
                throw MediaError(
                    code: .ffmpeg,
                    message:
                        "\(SegmentUnitEncoder.name(of: failing.unit)) of the shared segmented transcode failed \(failing.attempts) times on the workers (see their output)"
                )
            }
            let joinOrder = { (state: SegmentUnitState) in state.unit.kind == .audio ? -1 : state.unit.index }
            for state in states.sorted(by: { joinOrder($0) < joinOrder($1) })
            where state.status == .done && !gathered.contains(state.unit.index) {
                if try await gather(state, of: plan) {
                    gathered.insert(state.unit.index)
                    inPlace(state.unit.index)
                } else {
                    try await farm.requeue(state.unit, of: plan.id)
                }
            }
            if gathered.count == plan.units.count { return }
            if !announced, !states.contains(where: { $0.status == .queued }) {
                announced = true
                let workers = Set(states.filter { $0.status == .running }.compactMap(\.worker)).sorted()
                context.logger.info(
                    "waiting for \(states.filter { $0.status != .done }.count) unit(s) being encoded (\(workers.joined(separator: ", ")))"
                )
            }
            try await Task.sleep(for: .milliseconds(500))
            states = try await farm.units(of: plan.id)
        }
    }

    /// Removes the segments of plans the new one replaced from the store: no worker joins them any more. A store
    /// that cannot remove them now only keeps them, so that is a warning, not a failure.
    private func remove(_ replaced: [String: [SegmentUnit]]) async {
        guard !replaced.isEmpty else { return }
        do {
            let keys = try replaced.flatMap { plan, units in
                try units.map { try SegmentUnitEncoder.key(of: $0, in: plan) }
            }
            try await store.remove(keys)
            context.logger.info(
                "removed the segments of the replaced segment plan(s) \(replaced.keys.sorted().joined(separator: ", ")) from \(store.address)"
            )
        } catch {
            context.logger.warning(
                "cannot remove the segments of replaced segment plans from \(store.address): \(error)")
        }
    }

    /// Half a second, without this machine's CPU slot: its other jobs may encode units meanwhile.
    private func pause() async throws {
        let wait = { try await Task.sleep(for: .milliseconds(500)) }
        guard let slot = context.services[StageSlotKey.self] else { return try await wait() }
        try await slot.released(during: wait)
    }

    /// Encodes a claimed unit of the plan and records it. A unit whose lease another worker took over (this one
    /// stalled) is theirs now: the loop goes on without it. A failed encode gives the unit back and fails the
    /// stage, as a one-machine transcode's failure does.
    private func encode(_ claim: SegmentUnitClaim) async throws {
        let encoded: EncodedUnit
        do {
            encoded = try await farm.whileHolding(claim) { [encoder] in
                try await encoder.encode(claim, progress: $0)
            }
        } catch is CancellationError where !Task.isCancelled {
            return
        } catch {
            await farm.abandon(claim)
            throw error
        }
        do {
            try await farm.complete(claim, size: encoded.size, sha256: encoded.sha256)
        } catch let error as SegmentUnitLost {
            context.logger.notice("\(error)")
        }
    }

    /// Puts a done unit's file in place for the join: this worker's own from disk when its digest matches, another
    /// worker's from the store, verified. False when it is missing from the store or damaged there (it must be
    /// encoded again).
    private func gather(_ state: SegmentUnitState, of plan: SegmentPlan) async throws -> Bool {
        guard let sha256 = state.sha256 else { return false }
        let file = encoder.file(of: state.unit, in: plan.id)
        if MediaOutput.size(of: file) == state.size, (try? SegmentedTranscode.sha256(of: file)) == sha256 {
            return true
        }
        do {
            try FileManager.default.createDirectory(
                at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try await store.fetch(try SegmentUnitEncoder.key(of: state.unit, in: plan.id), sha256: sha256, to: file)
            return true
        } catch let error as SegmentStoreError where error.code == .notFound || error.code == .hashMismatch {
            context.logger.notice(
                "\(SegmentUnitEncoder.name(of: state.unit)) of plan \(plan.id) is not in the segment store as recorded (\(error)): encoding it again"
            )
            return false
        }
    }

    /// Reports the seconds of video encoded by every worker.
    private func report(_ states: [SegmentUnitState], progress: @Sendable (Double, Double) -> Void) {
        let done = states.filter { $0.status == .done && $0.unit.kind == .video }.reduce(0) { $0 + $1.unit.seconds }
        progress(min(duration, done), duration)
    }

    /// Retires the plan and removes its units from the store and from disk once the joined file is committed.
    func retire(_ plan: SegmentPlan) async {
        do {
            try await farm.retire(plan.id)
            try await store.remove(plan.units.map { try SegmentUnitEncoder.key(of: $0, in: plan.id) })
        } catch {
            context.logger.warning("cannot remove the units of plan \(plan.id) after the join: \(error)")
        }
        try? FileManager.default.removeItem(at: encoder.folder.appendingPathComponent(plan.id))
    }
}
