import StageKit

/// Which stages stream an export while it is written (`"stream": true`), and the export each one follows: the stage
/// whose file its input-file option references, as the stage types declare them (``StageDescriptor/streamRole``,
/// ``StageDescriptor/inputFileOption``, ``StageDescriptor/landingOutput``). The runner starts such a stage as soon
/// as its export starts (the rest of its waits being over); `validate` refuses a stream that cannot work
/// (``WorkflowReader``).
public struct StreamPlan: Sendable, Hashable {
    /// For each streaming stage (by index), the index of the export it follows.
    public let follows: [Int: Int]

    /// The plan of `stages`, whose types `registry` declares; a streaming stage whose input file names no stage is
    /// left out (`validate` says why).
    public init(_ stages: [StageSpec], registry: StageRegistry) {
        var follows: [Int: Int] = [:]
        for (index, stage) in stages.enumerated() where stage.stream {
            follows[index] = Self.export(followedBy: stage, among: stages, registry: registry)
        }
        self.follows = follows
    }

    /// The streaming stages that follow `export`.
    public func followers(of export: Int) -> [Int] {
        follows.filter { $0.value == export }.map(\.key).sorted()
    }

    /// The index of the stage whose file `stage`, a follower, reads: its input-file option is exactly `${ID.FILE}`,
    /// where FILE is the output stage ID's type declares as its file (any output, for a type that declares none:
    /// `validate` says it cannot be streamed); nil otherwise.
    static func export(followedBy stage: StageSpec, among stages: [StageSpec], registry: StageRegistry) -> Int? {
        guard let follower = registry.descriptor(for: stage.uses), follower.streamRole == .follower,
            let option = follower.inputFileOption, let text = stage.with[option]?.stringValue, text.hasPrefix("${"),
            text.hasSuffix("}")
        else { return nil }
        let parts = text.dropFirst(2).dropLast().split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = stages.firstIndex(where: { $0.id == parts[0] }),
            WorkflowNames.isIdentifier(String(parts[0]))
        else { return nil }
        let file = registry.descriptor(for: stages[index].uses)?.landingOutput
        return String(parts[1]) == (file ?? String(parts[1])) ? index : nil
    }
}

/// `"stream": true`: checked once the references are, so that each refusal says why the stream cannot work.
extension WorkflowReader {
    mutating func checkStreams(
        _ stages: [StageSpec], onCancel: [StageSpec], inputs: InputSelection?, plan: StreamPlan
    ) {
        for stage in onCancel where stage.stream {
            log.error(stage.path.appending("stream"), "onCancel stages run after every stage: they cannot stream")
        }
        let graph = StageGraph(stages)
        for (index, stage) in stages.enumerated() where stage.stream {
            let path = stage.path.appending("stream")
            // A follower always names its input-file option: a stage type that does not is refused when registered.
            guard let follower = registry.descriptor(for: stage.uses), follower.streamRole == .follower,
                let option = follower.inputFileOption
            else {
                log.error(path, "\(stage.uses) cannot stream an export: \(notFollowing(stage, inputs: inputs))")
                continue
            }
            guard let export = plan.follows[index] else {
                log.error(
                    stage.path.appending("with").appending(option),
                    "a streaming stage reads the file of the export it follows: set \(option) to \(exportFiles), the file output of a stage it waits for (\(names(of: .producer)))"
                )
                continue
            }
            let exportID = stages[export].id
            guard graph.waitIDs(of: index).contains(exportID) else {
                log.error(
                    path,
                    "a streaming stage starts with the export it follows: make it wait for \"\(exportID)\" directly (\"after\": [\"\(exportID)\"])"
                )
                continue
            }
            if let reason = follower.streamRefusal(
                with: stage.with, inputs: follower.inputSummary(with: stage.with, inputs: inputs))
            {
                log.error(path, "\(stage.uses) cannot stream an export: \(reason)")
            }
            if let reason = exportRefusal(stages[export], inputs: inputs) {
                log.error(path, "stage \"\(exportID)\" cannot be streamed: \(reason)")
            }
            var found = references(in: stage.with, at: stage.path.appending("with"))
            if let condition = stage.condition {
                found += references(in: .string(condition), at: stage.path.appending("if"))
            }
            if let refresher = stage.refreshWith, refresher == exportID {
                log.error(stage.path.appending("refreshWith"), "a streaming stage cannot renew with its export")
            }
            // An export that declares no file is refused above.
            guard let file = registry.descriptor(for: stages[export].uses)?.landingOutput else { continue }
            for (reference, referencePath) in found where reference.root == exportID && reference.member != file {
                log.error(
                    referencePath,
                    "${\(reference)}: a streaming stage starts before stage \"\(exportID)\" finishes, when only its \(file) is known"
                )
            }
        }
    }

    /// Why `export` cannot write a file that grows behind its head, as its type says; nil when it can.
    private func exportRefusal(_ export: StageSpec, inputs: InputSelection?) -> String? {
        guard let producer = registry.descriptor(for: export.uses), producer.streamRole == .producer else {
            return
                "it is \(export.uses); only \(names(of: .producer)) write a file that is final behind its head as it is written"
        }
        return producer.streamRefusal(
            with: export.with, inputs: producer.inputSummary(with: export.with, inputs: inputs))
    }

    /// Why `stage` cannot follow an export at all: its type's reason, else the registered followers.
    private func notFollowing(_ stage: StageSpec, inputs: InputSelection?) -> String {
        guard let descriptor = registry.descriptor(for: stage.uses) else { return onlyFollowersStream }
        return descriptor.streamRefusal(
            with: stage.with, inputs: descriptor.inputSummary(with: stage.with, inputs: inputs))
            ?? onlyFollowersStream
    }

    /// Why a stage type that is no follower cannot stream, when it says nothing itself.
    private var onlyFollowersStream: String {
        "only a stage that follows an export (\(names(of: .follower))) streams"
    }

    /// How a follower references its export's file: `"${EXPORT.path}"` for every producer declaring `path`.
    private var exportFiles: String {
        let outputs = Set(registry.all.filter { $0.streamRole == .producer }.compactMap(\.landingOutput))
        return outputs.sorted().map { "\"${EXPORT.\($0)}\"" }.joined(separator: " or ")
    }

    /// The registered stage types of a stream role, for messages.
    private func names(of role: StreamRole) -> String {
        let names = registry.all.filter { $0.streamRole == role }.map(\.stageType)
        return names.isEmpty ? "no registered stage type" : names.joined(separator: ", ")
    }
}
