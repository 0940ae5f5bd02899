import Crypto
import Foundation
public import StageKit

/// What a run will do with each file it found, decided from the ledger before any stage runs: `pipeline plan`
/// prints it, `pipeline run` carries it out.
public struct BatchPlan: Sendable {
    /// The files found, in order, each with what happens to it.
    public var items: [PlannedItem]
    /// Files the input selection left out, with the reason.
    public var passedOver: [PassedOver]
    /// Fingerprints and probes computed for this plan, for the ledger's cache (a run saves them, a plan
    /// does not).
    public var cacheEntries: [FingerprintCacheEntry]

    /// The items a run takes up.
    public var runnable: [PlannedItem] {
        items.filter { if case .run = $0.action { true } else { false } }
    }
}

/// One file of a batch and what happens to it.
public struct PlannedItem: Sendable {
    /// What a run does with an item.
    public enum Action: Sendable, Hashable {
        /// Its stages run (those whose checkpoint is up to date are reused).
        case run(ItemAdmission, reason: RunReason)
        /// It is done: nothing runs.
        case reuse(item: Int64, reason: String)
        /// It is left alone.
        case skip(reason: String)
    }

    /// Why an item's stages run.
    public enum RunReason: Sendable, Hashable, CustomStringConvertible {
        /// Content the ledger has not seen.
        case new
        /// The file at a known item's path has new content: a new version.
        case changed(version: Int)
        /// Not finished last time (failed, interrupted or still pending).
        case resume(ItemStatus)
        /// Done, but the workflow or the file's metadata changed since: its stages are checked one by one.
        case workflowChanged
        /// `--reprocess`: a new version, every stage runs.
        case reprocess(version: Int)

        public var description: String {
            switch self {
            case .new: "new"
            case .changed(let version): "changed: version \(version)"
            case .resume(let status): "resume (\(status.rawValue) last time)"
            case .workflowChanged: "the workflow or its metadata changed since it was done"
            case .reprocess(let version): "--reprocess: version \(version)"
            }
        }
    }

    /// The file.
    public var input: InputItem
    /// Its content's fingerprint (nil when it could not be read).
    public var fingerprint: String?
    /// What happens to it.
    public var action: Action
    /// The ledger's item for this content or path, if any.
    public var known: LedgerItem?
    /// What the item is done with once it succeeds: the workflow's digest, with its metadata when it has any.
    public var digest: String = ""
}

/// A file the input selection left out, and why.
public struct PassedOver: Sendable, Hashable {
    /// The file or folder.
    public var path: String
    /// Why: "hidden", "excluded by *.tmp", "not included by *.mp4", "not a regular file".
    public var reason: String
}

/// Decides a ``BatchPlan`` from the files found, the ledger's items and its fingerprint cache.
public struct BatchPlanner: Sendable {
    /// How content is identified.
    public var method: FingerprintMethod
    /// The workflow's digest: a done item whose digest differs is checked stage by stage.
    public var digest: String
    /// Items that are done run again as a new version.
    public var reprocess: Bool
    /// Only items that failed last time run.
    public var onlyFailed: Bool
    /// Limits checked before any stage runs.
    public var limits: InputLimits
    /// Whether a stage reads the input file as media: files FFmpeg cannot read are skipped with the reason.
    public var needsMedia: Bool
    /// Probes media files, when limits or stages need it.
    public var prober: MediaProber?

    /// Creates a planner.
    public init(
        method: FingerprintMethod, digest: String, reprocess: Bool = false, onlyFailed: Bool = false,
        limits: InputLimits = InputLimits(), needsMedia: Bool = false, prober: MediaProber? = nil
    ) {
        self.method = method
        self.digest = digest
        self.reprocess = reprocess
        self.onlyFailed = onlyFailed
        self.limits = limits
        self.needsMedia = needsMedia
        self.prober = prober
    }

    /// The planner of a workflow: its fingerprint method, limits and digest, and whether a stage reads the
    /// input as media (a stage type that says so, without a `file` option of its own).
    public init(
        workflow: Workflow, registry: StageRegistry, prober: MediaProber? = nil, reprocess: Bool = false,
        onlyFailed: Bool = false
    ) {
        let needsMedia = workflow.stages.contains { spec in
            registry.descriptor(for: spec.uses)?.readsMediaInput == true
                && (spec.with["file"] == nil || spec.with["file"] == "${input.path}")
        }
        self.init(
            method: workflow.inputs?.fingerprint ?? .sampled, digest: workflow.digest, reprocess: reprocess,
            onlyFailed: onlyFailed, limits: workflow.inputs?.limits ?? InputLimits(), needsMedia: needsMedia,
            prober: prober)
    }

    /// Plans a batch of a workflow against a store (nil: an empty ledger); the files are read on a thread
    /// of their own. Writes nothing.
    public func plan(_ discovery: Discovery, store: (any StateStore)?, workflow: String) async throws(StateError)
        -> BatchPlan
    {
        let snapshot = try await store?.snapshot(workflow: workflow) ?? LedgerSnapshot(items: [])
        let cache = try await store?.cachedFingerprints() ?? [:]
        let found = await BlockingWork.runLong { plan(discovery, snapshot: snapshot, cache: cache) }
        return await probed(found, cache: cache)
    }

    /// Checks the media of the items that would run, where limits or stages need it: a file FFmpeg cannot
    /// read, or one outside the limits, is skipped with the reason. Probes are cached with the fingerprint.
    func probed(_ plan: BatchPlan, cache: [String: FingerprintCacheEntry]) async -> BatchPlan {
        guard let prober, needsMedia || limits.needProbe else { return plan }
        var plan = plan
        var entries = Dictionary(plan.cacheEntries.map { ($0.stamp.path, $0) }, uniquingKeysWith: { $1 })
        for index in plan.items.indices {
            guard case .run = plan.items[index].action else { continue }
            let input = plan.items[index].input
            guard var entry = entries[input.path] ?? cache[input.path] else { continue }
            let result: MediaProbeResult
            if let known = entry.media {
                result = known
            } else {
                result = await prober(input.path)
                entry.media = result
                entries[input.path] = entry
            }
            switch result {
            case .unreadable(let reason):
                let what = needsMedia ? "not media FFmpeg can read" : "cannot check inputs.limits"
                plan.items[index].action = .skip(reason: "\(what): \(reason)")
            case .facts(let facts):
                if let reason = limits.violation(of: facts) { plan.items[index].action = .skip(reason: reason) }
            }
        }
        plan.cacheEntries = Array(entries.values)
        return plan
    }

    /// Plans a batch; fingerprints files whose stamp is not in `cache` (reading at most a few MiB of each).
    /// Where several files have the same content, the one at the path the ledger knows it by (else the first)
    /// is the item and the others are skipped as copies.
    public func plan(
        _ discovery: Discovery, snapshot: LedgerSnapshot, cache: [String: FingerprintCacheEntry]
    ) -> BatchPlan {
        var plan = BatchPlan(items: [], passedOver: discovery.passedOver, cacheEntries: [])
        var fingerprints: [String?] = []
        var reasons: [String?] = []
        var claimed: [String: String] = [:]
        for file in discovery.files {
            let input = file.input
            if let reason = limits.violation(size: input.size) {
                fingerprints.append(nil)
                reasons.append(reason)
                continue
            }
            if let cached = cache[file.stamp.path], cached.stamp == file.stamp, cached.method == method {
                fingerprints.append(cached.fingerprint)
                reasons.append(nil)
            } else {
                do {
                    let fingerprint = try ContentFingerprint.compute(path: input.path, size: input.size, method: method)
                    plan.cacheEntries.append(
                        FingerprintCacheEntry(stamp: file.stamp, method: method, fingerprint: fingerprint))
                    fingerprints.append(fingerprint)
                    reasons.append(nil)
                } catch {
                    fingerprints.append(nil)
                    reasons.append(error.message)
                    continue
                }
            }
            if let fingerprint = fingerprints.last ?? nil,
                let known = snapshot.byFingerprint[fingerprint].map({ snapshot.items[$0] }),
                known.input.path == input.path
            {
                claimed[fingerprint] = input.path
            }
        }
        let present = Set(fingerprints.compactMap { $0 })
        for (index, file) in discovery.files.enumerated() {
            let input = file.input
            guard let fingerprint = fingerprints[index] else {
                plan.items.append(
                    PlannedItem(input: input, fingerprint: nil, action: .skip(reason: reasons[index] ?? "unreadable")))
                continue
            }
            if let owner = claimed[fingerprint], owner != input.path {
                plan.items.append(
                    PlannedItem(
                        input: input, fingerprint: fingerprint, action: .skip(reason: "the same content as \(owner)")))
                continue
            }
            claimed[fingerprint] = input.path
            let byContent = snapshot.byFingerprint[fingerprint].map { snapshot.items[$0] }
            let byPath = snapshot.byPath[input.path].map { snapshot.items[$0] }.flatMap { item in
                present.contains(item.fingerprint) ? nil : item
            }
            let digest = digest(of: input)
            plan.items.append(
                PlannedItem(
                    input: input, fingerprint: fingerprint,
                    action: action(
                        for: input, fingerprint: fingerprint, digest: digest, byContent: byContent,
                        byPath: byPath),
                    known: byContent ?? byPath, digest: digest))
        }
        return plan
    }

    /// The digest an item is done with: the workflow's, and its metadata's when it has any, so an edited
    /// sidecar has the item's stages checked again (only those that use the metadata run).
    func digest(of input: InputItem) -> String {
        guard !input.meta.isEmpty else { return digest }
        let canonical = digest + JSONValue.object(input.meta).serialized()
        return SHA256.hash(data: Data(canonical.utf8)).prefix(16).map { String(format: "%02x", $0) }.joined()
    }

    private func action(
        for input: InputItem, fingerprint: String, digest: String, byContent: LedgerItem?, byPath: LedgerItem?
    ) -> PlannedItem.Action {
        // A path match counts only when the item's content is nowhere in this batch (else that content is
        // the item, moved, and this path holds a new one): an item is never given to two files.
        guard let item = byContent else {
            if onlyFailed, byPath?.status != .failed { return .skip(reason: "not failed last time (--failed)") }
            if let item = byPath {
                if item.status == .cancelled, !reprocess {
                    return .skip(reason: "cancelled (run with --reprocess to take it up again)")
                }
                let admission = ItemAdmission(item: item.id, newVersion: true, fingerprint: fingerprint, input: input)
                return .run(admission, reason: .changed(version: item.version + 1))
            }
            return .run(
                ItemAdmission(item: nil, newVersion: false, fingerprint: fingerprint, input: input), reason: .new)
        }
        let moved = item.input.path == input.path ? "" : " (as \(item.input.path))"
        if reprocess {
            let admission = ItemAdmission(item: item.id, newVersion: true, fingerprint: fingerprint, input: input)
            return .run(admission, reason: .reprocess(version: item.version + 1))
        }
        if onlyFailed, item.status != .failed { return .skip(reason: "not failed last time (--failed)") }
        let admission = ItemAdmission(item: item.id, newVersion: false, fingerprint: fingerprint, input: input)
        switch item.status {
        case .cancelled:
            return .skip(reason: "cancelled\(moved) (run with --reprocess to take it up again)")
        case .succeeded where item.digest == digest:
            return .reuse(item: item.id, reason: "done\(moved)")
        case .succeeded:
            return .run(admission, reason: .workflowChanged)
        case .pending, .failed, .interrupted:
            return .run(admission, reason: .resume(item.status))
        }
    }
}

/// Limits on input files (`inputs.limits`), checked before any stage runs.
public struct InputLimits: Sendable, Hashable {
    /// The smallest size taken, in bytes.
    public var minSize: Int64?
    /// The largest size taken, in bytes.
    public var maxSize: Int64?
    /// The shortest duration taken, in seconds.
    public var minDuration: Double?
    /// The longest duration taken, in seconds.
    public var maxDuration: Double?
    /// Container names taken (`mp4`, `mov`, `matroska`); empty takes any.
    public var containers: [String]
    /// Video codecs taken (`h264`, `hevc`); empty takes any.
    public var videoCodecs: [String]

    /// Creates limits.
    public init(
        minSize: Int64? = nil, maxSize: Int64? = nil, minDuration: Double? = nil, maxDuration: Double? = nil,
        containers: [String] = [], videoCodecs: [String] = []
    ) {
        self.minSize = minSize
        self.maxSize = maxSize
        self.minDuration = minDuration
        self.maxDuration = maxDuration
        self.containers = containers
        self.videoCodecs = videoCodecs
    }

    /// Whether checking the limits needs a media probe.
    var needProbe: Bool {
        minDuration != nil || maxDuration != nil || !containers.isEmpty || !videoCodecs.isEmpty
    }

    /// Why a file of `size` bytes is left out, or nil when it is within the size limits.
    func violation(size: Int64) -> String? {
        if let minSize, size < minSize {
            return "smaller than inputs.limits.minSize (\(ByteCount(size)) < \(ByteCount(minSize)))"
        }
        if let maxSize, size > maxSize {
            return "larger than inputs.limits.maxSize (\(ByteCount(size)) > \(ByteCount(maxSize)))"
        }
        return nil
    }

    /// Why a media file is left out, or nil when it is within the media limits.
    func violation(of facts: MediaFacts) -> String? {
        if let minDuration, facts.duration < minDuration {
            return
                "shorter than inputs.limits.minDuration (\(TimeSpan(seconds: facts.duration)) < \(TimeSpan(seconds: minDuration)))"
        }
        if let maxDuration, facts.duration > maxDuration {
            return
                "longer than inputs.limits.maxDuration (\(TimeSpan(seconds: facts.duration)) > \(TimeSpan(seconds: maxDuration)))"
        }
        let names = facts.container.split(separator: ",").map(String.init)
        if !containers.isEmpty, !names.contains(where: { containers.contains($0) }) {
            return
                "container \(facts.container) is not one of inputs.limits.containers (\(containers.joined(separator: ", ")))"
        }
        if !videoCodecs.isEmpty, !videoCodecs.contains(facts.videoCodec ?? "") {
            return
                "video codec \(facts.videoCodec ?? "none") is not one of inputs.limits.videoCodecs (\(videoCodecs.joined(separator: ", ")))"
        }
        return nil
    }
}
