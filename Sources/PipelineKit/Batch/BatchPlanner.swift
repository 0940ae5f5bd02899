import Crypto
import Foundation
public import StageKit
import StageRuntime

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
    /// What happens to a file named as media that FFmpeg cannot read.
    public var damaged: DamagedInputPolicy

    /// Creates a planner.
    public init(
        method: FingerprintMethod, digest: String, reprocess: Bool = false, onlyFailed: Bool = false,
        limits: InputLimits = InputLimits(), needsMedia: Bool = false, prober: MediaProber? = nil,
        damaged: DamagedInputPolicy = .default
    ) {
        self.method = method
        self.digest = digest
        self.reprocess = reprocess
        self.onlyFailed = onlyFailed
        self.limits = limits
        self.needsMedia = needsMedia
        self.prober = prober
        self.damaged = damaged
    }

    /// The planner of a workflow: its fingerprint method, limits and digest, and whether a stage reads the
    /// input file as media (a stage type that says so, whose input-file option the stage leaves to the input file).
    public init(
        workflow: Workflow, registry: StageRegistry, prober: MediaProber? = nil, reprocess: Bool = false,
        onlyFailed: Bool = false
    ) {
        let needsMedia = workflow.stages.contains { spec in
            registry.descriptor(for: spec.uses)?.readsMediaInputFile(with: spec.with) == true
        }
        self.init(
            method: workflow.inputs?.fingerprint ?? .sampled, digest: workflow.digest, reprocess: reprocess,
            onlyFailed: onlyFailed, limits: workflow.inputs?.limits ?? InputLimits(), needsMedia: needsMedia,
            prober: prober, damaged: workflow.inputs?.damaged ?? .default)
    }

    /// How many files a plan looks up in the ledger at once: a plan holds the ledger rows of two chunks (the one
    /// it plans and the next, being read), not
    /// the whole ledger.
    var chunkSize = 1024

    /// Plans a batch of a workflow against a store (nil: an empty ledger). Fingerprints files whose stamp the
    /// store's cache does not have (reading at most a few MiB of each, on a thread of their own). Where several
    /// files have the same content, the one at the path the ledger knows it by (else the first) is the item
    /// and the others are skipped as copies. Writes nothing: the fingerprints and probes it made are in
    /// ``BatchPlan/cacheEntries``, for the run's start to commit (an entry shares its path and fingerprint strings
    /// with the planned item, so a first run over a large folder holds little more for them).
    ///
    /// The ledger is read a chunk of files at a time, in the byte order of their paths: the items and cache
    /// entries of a range of paths, then by fingerprint only the files whose item is not at their path (new,
    /// moved or changed content). A rerun over an unchanged folder reads the ledger in order, once.
    public func plan(
        _ discovery: consuming Discovery, store: (any StateStore)?, workflow: String
    ) async throws(StateError) -> BatchPlan {
        var plan = BatchPlan(
            items: discovery.files.map { PlannedItem(input: $0.input, fingerprint: nil, action: .run(.new)) },
            passedOver: discovery.passedOver, cacheEntries: [])
        let order = Self.pathOrder(of: discovery.files)
        let chunks = stride(from: 0, to: order.count, by: chunkSize).map {
            order[$0..<min($0 + chunkSize, order.count)]
        }
        let bounds = chunks.map {
            (
                first: discovery.files[$0[$0.startIndex]].input.path,
                last: discovery.files[$0[$0.endIndex - 1]].input.path
            )
        }
        let reading = { (number: Int) in
            Self.rows(pathsFrom: bounds[number].first, through: bounds[number].last, store: store, workflow: workflow)
        }
        // The ledger's rows of the next chunk are read while this one is planned.
        var next = chunks.isEmpty ? nil : reading(0)
        // The contents of the batch, gathered while the ledger is read rather than after the last chunk.
        var contents = BatchContents(capacity: order.count)
        do {
            for (number, chunk) in chunks.enumerated() {
                let rows = try await (next ?? reading(number)).value.get()
                next = number + 1 < chunks.count ? reading(number + 1) : nil
                let files = chunk.map { discovery.files[$0] }
                var (items, entries) = await BlockingWork.runLong { [cache = rows.cache] in
                    fingerprinted(files, cache: cache)
                }
                let byPath = rows.atPaths
                let elsewhere = items.compactMap { item in
                    item.fingerprint.flatMap { byPath[item.input.path]?.fingerprint == $0 ? nil : $0 }
                }
                let byContent = try await store?.items(workflow: workflow, fingerprints: elsewhere) ?? []
                match(&items, byPath: byPath, byContent: byContent)
                contents.add(items)
                for (index, item) in zip(chunk, items) { plan.items[index] = item }
                plan.cacheEntries += entries
            }
        } catch {
            // A failed chunk leaves no read of the next one behind, using the store after the plan ended.
            _ = await next?.value
            throw error
        }
        // The files are in the plan now: a large batch does not hold both while it is settled.
        discovery.files = []
        settle(&plan.items, contents: contents)
        return try await probed(plan, store: store)
    }

    /// The positions of `files` in the byte order of their paths. Discovery sorts files by relative path, which
    /// under one input folder is the order of their paths too: then they are only checked, not sorted again.
    private static func pathOrder(of files: [DiscoveredFile]) -> [Int] {
        let inOrder = files.indices.dropFirst().allSatisfy { index in
            files[index - 1].input.path.precedesInByteOrder(files[index].input.path)
        }
        guard !inOrder else { return Array(files.indices) }
        return files.indices.sorted { files[$0].input.path.precedesInByteOrder(files[$1].input.path) }
    }

    /// What the ledger holds for a range of paths: the cached fingerprints and the items, both by path.
    private struct ChunkRows: Sendable {
        var cache: [String: FingerprintCacheEntry] = [:]
        var atPaths: [String: LedgerItem] = [:]

        /// Keys the items by path as they are read, beside the chunk being planned (the last item at a path
        /// wins).
        mutating func add(_ items: [LedgerItem]) {
            atPaths.reserveCapacity(items.count)
            for item in items { atPaths[item.input.path] = item }
        }
    }

    /// Starts reading the ledger's rows for the files from path `first` through `last` (none without a store).
    private static func rows(
        pathsFrom first: String, through last: String, store: (any StateStore)?, workflow: String
    ) -> Task<Result<ChunkRows, StateError>, Never> {
        Task {
            guard let store else { return .success(ChunkRows()) }
            do throws(StateError) {
                var rows = ChunkRows(cache: try await store.cachedFingerprints(pathsFrom: first, through: last))
                rows.add(try await store.items(workflow: workflow, pathsFrom: first, through: last))
                return .success(rows)
            } catch {
                return .failure(error)
            }
        }
    }

    /// The files of a chunk with their fingerprints (from the cache when their stamp is there, else read),
    /// and the cache entries of those read. A file over a size limit or that cannot be read is skipped.
    private func fingerprinted(_ files: [DiscoveredFile], cache: [String: FingerprintCacheEntry])
        -> ([PlannedItem], [FingerprintCacheEntry])
    {
        var items: [PlannedItem] = []
        var entries: [FingerprintCacheEntry] = []
        items.reserveCapacity(files.count)
        for file in files {
            let input = file.input
            if let reason = limits.violation(size: input.size) {
                items.append(PlannedItem(input: input, fingerprint: nil, action: .skip(reason: .outsideLimits(reason))))
                continue
            }
            let fingerprint: String
            if let cached = cache[file.stamp.path], cached.stamp == file.stamp, cached.method == method {
                fingerprint = cached.fingerprint
            } else {
                do {
                    fingerprint = try ContentFingerprint.compute(path: input.path, size: input.size, method: method)
                } catch {
                    items.append(
                        PlannedItem(
                            input: input, fingerprint: nil, action: .skip(reason: .unreadableContent(error.message))))
                    continue
                }
                entries.append(FingerprintCacheEntry(stamp: file.stamp, method: method, fingerprint: fingerprint))
            }
            items.append(
                PlannedItem(input: input, fingerprint: fingerprint, action: .run(.new), digest: digest(of: input)))
        }
        return (items, entries)
    }

    /// Gives each fingerprinted item of a chunk the ledger's item for its content, else the one last seen at its
    /// path (``settle(_:)`` drops a path match whose content is elsewhere in the batch). Strings the item and
    /// the file have in common are shared, so a plan of a large batch holds one copy of each.
    private func match(_ items: inout [PlannedItem], byPath: [String: LedgerItem], byContent: [LedgerItem]) {
        let byFingerprint = Dictionary(byContent.map { ($0.fingerprint, $0) }, uniquingKeysWith: { $1 })
        for index in items.indices {
            let (path, relativePath) = (items[index].input.path, items[index].input.relativePath)
            guard let fingerprint = items[index].fingerprint else { continue }
            let atPath = byPath[path]
            // Content at the path the ledger knows it by owns its fingerprint, whatever else the batch holds:
            // when it is done, it is decided now and the plan keeps no copy of the ledger's item.
            if let item = atPath, item.fingerprint == fingerprint, item.input.relativePath == relativePath {
                let action = action(for: items[index], known: item)
                if case .reuse = action {
                    items[index].action = action
                    continue
                }
            }
            guard var item = (atPath?.fingerprint == fingerprint ? atPath : nil) ?? byFingerprint[fingerprint] ?? atPath
            else { continue }
            if item.fingerprint == fingerprint { item.fingerprint = fingerprint }
            if item.input.path == path { item.input.path = path }
            if item.input.relativePath == relativePath { item.input.relativePath = relativePath }
            if item.digest == items[index].digest { item.digest = items[index].digest }
            items[index].known = item
        }
    }

    /// Decides what happens to each item, now that the whole batch's contents are known: a content found at
    /// several paths is one item (at the path the ledger knows, else the first), and a path match counts only
    /// when the item's content is nowhere in the batch (else that content is the item, moved, and this path
    /// holds a new one): an item is never given to two files.
    ///
    /// The items are looked at by index, a field at a time: a loop over the items would copy each whole item
    /// (and retain every string it holds) three times over.
    private func settle(_ items: inout [PlannedItem], contents: BatchContents) {
        let (present, repeated) = (contents.present, contents.repeated)
        let owners = repeated.isEmpty ? [:] : Self.owners(of: repeated, among: items)
        for index in items.indices where !items[index].isDecided {
            guard let fingerprint = items[index].fingerprint else { continue }
            if let owner = owners[fingerprint], owner != items[index].input.path {
                items[index].known = nil
                items[index].action = .skip(reason: .sameContent(as: owner))
                continue
            }
            if let known = items[index].known, known.fingerprint != fingerprint, present.contains(known.fingerprint) {
                items[index].known = nil
            }
            items[index].action = action(for: items[index], known: items[index].known)
        }
    }

    /// The fingerprints of a batch's items, and those of more than one item.
    private struct BatchContents {
        var present: Set<String>
        var repeated = Set<String>()

        init(capacity: Int) {
            present = Set(minimumCapacity: capacity)
        }

        /// Adds the fingerprints of a chunk's items, read by index (a loop over the items would copy each).
        mutating func add(_ items: [PlannedItem]) {
            for index in items.indices {
                if let fingerprint = items[index].fingerprint, !present.insert(fingerprint).inserted {
                    repeated.insert(fingerprint)
                }
            }
        }
    }

    /// The path that owns each content found at several paths: the one the ledger knows it by, else the first.
    private static func owners(of repeated: Set<String>, among items: [PlannedItem]) -> [String: String] {
        var owners: [String: String] = [:]
        for index in items.indices {
            guard let fingerprint = items[index].fingerprint, repeated.contains(fingerprint) else { continue }
            let path = items[index].input.path
            if items[index].isDecided
                || (items[index].known?.fingerprint == fingerprint && items[index].known?.input.path == path)
            {
                owners[fingerprint] = path
            }
        }
        for index in items.indices {
            guard let fingerprint = items[index].fingerprint, repeated.contains(fingerprint), owners[fingerprint] == nil
            else { continue }
            owners[fingerprint] = items[index].input.path
        }
        return owners
    }

    /// Checks the media of the items that would run, where limits or stages need it: a file FFmpeg cannot
    /// read, or one outside the limits, is skipped with the reason, unless a stage reads it as media and its name
    /// says it is media (then it is damaged, and fails unless ``damaged`` skips it). Probes are cached with the
    /// fingerprint.
    private func probed(_ plan: BatchPlan, store: (any StateStore)?) async throws(StateError) -> BatchPlan {
        guard let prober, needsMedia || limits.needProbe else { return plan }
        var plan = plan
        var entries = Dictionary(plan.cacheEntries.map { ($0.stamp.path, $0) }, uniquingKeysWith: { $1 })
        let runnable = plan.items.indices.filter { plan.items[$0].admission != nil }.sorted {
            plan.items[$0].input.path.precedesInByteOrder(plan.items[$1].input.path)
        }
        for start in stride(from: 0, to: runnable.count, by: chunkSize) {
            let chunk = runnable[start..<min(start + chunkSize, runnable.count)]
            let first = plan.items[chunk[chunk.startIndex]].input.path
            let last = plan.items[chunk[chunk.endIndex - 1]].input.path
            let cache = try await store?.cachedFingerprints(pathsFrom: first, through: last) ?? [:]
            for index in chunk {
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
                    if needsMedia, damaged != .skip, MediaFileName.claimsMedia(input.path) {
                        plan.items[index].damage = reason
                    } else {
                        plan.items[index].action = .skip(
                            reason: needsMedia ? .notMedia(reason) : .limitsUncheckable(reason))
                    }
                case .facts(let facts):
                    if let violation = limits.violation(of: facts) {
                        plan.items[index].action = .skip(reason: .outsideLimits(violation))
                    }
                }
            }
        }
        plan.cacheEntries = Array(entries.values)
        return plan
    }

    /// The digest an item is done with: the workflow's, and its metadata's when it has any, so an edited
    /// sidecar has the item's stages checked again (only those that use the metadata run).
    func digest(of input: InputItem) -> String {
        guard !input.meta.isEmpty else { return digest }
        let canonical = digest + JSONValue.object(input.meta).serialized()
        return HexDigest.text(SHA256.hash(data: Data(canonical.utf8)).prefix(16))
    }

    /// What happens to an item whose content is not elsewhere in the batch: `known` is the ledger's item for
    /// its content, or else the one last seen at its path (the planned item's own, or one being looked at).
    private func action(for planned: PlannedItem, known: LedgerItem?) -> PlannedItem.Action {
        guard let item = known, item.fingerprint == planned.fingerprint else {
            if onlyFailed, known?.status != .failed { return .skip(reason: .notFailed) }
            if let item = known {
                if item.status == .cancelled, !reprocess {
                    return .skip(reason: .cancelled(donePath: nil))
                }
                return .run(.changed(version: item.version + 1))
            }
            return .run(.new)
        }
        let donePath = item.input.path == planned.input.path ? nil : item.input.path
        if reprocess { return .run(.reprocess(version: item.version + 1)) }
        if onlyFailed, item.status != .failed { return .skip(reason: .notFailed) }
        switch item.status {
        case .cancelled:
            return .skip(reason: .cancelled(donePath: donePath))
        case .succeeded where item.digest == planned.digest:
            return .reuse(item.current, reason: ReuseReason(donePath: donePath))
        case .succeeded:
            return .run(.workflowChanged)
        case .pending, .failed, .interrupted:
            return .run(.resume(item.status))
        }
    }
}
