package import Foundation
package import Logging
public import StageKit
package import StageRuntime

/// The stage types a workflow may `use`.
public struct StageRegistry: Sendable {
    private var descriptors: [String: StageDescriptor] = [:]

    /// An empty registry.
    public init() {}

    /// Registers a stage type; a name that is already registered is refused, naming both sources, so a
    /// plugin can never shadow a built-in stage (``DuplicateStageType``), and so are declarations the engine could
    /// not act on (``StageDeclarationError``).
    public mutating func register<S: Stage>(_ stage: S.Type, source: StageSource = .compiledIn) throws {
        try register(StageDescriptor(stage, source: source))
    }

    /// Registers an already described stage type; a name that is already registered is refused.
    public mutating func register(_ descriptor: StageDescriptor) throws(DuplicateStageType) {
        if let existing = descriptors[descriptor.stageType] {
            throw DuplicateStageType(
                stageType: descriptor.stageType, registered: existing.source, refused: descriptor.source)
        }
        descriptors[descriptor.stageType] = descriptor
    }

    /// The stage type named in `uses`.
    public func descriptor(for stageType: String) -> StageDescriptor? {
        descriptors[stageType]
    }

    /// Every registered type, sorted by name.
    public var all: [StageDescriptor] {
        descriptors.values.sorted { $0.stageType < $1.stageType }
    }

    /// What is said of a stage type this registry does not have, by `validate` and by a run: the closest name it
    /// has, where the known ones are listed, and how a plugin's stage types are added.
    package func unknownTypeMessage(_ stageType: String) -> String {
        "unknown stage type \"\(stageType)\""
            + Suggestion.phrase(for: stageType, among: all.map(\.stageType))
            + " (pipeline stages lists them; a plugin's stage types are added with --plugin PATH"
            + " or the workflow's \"plugins\")"
    }

    /// How this machine encodes the units of segment plans (`pipeline worker --segments`), as the stage type that
    /// farms segments provides it; nil when no registered type does. A plan's units name no stage type: the first
    /// farming type by name encodes them.
    package func segmentEncoding(store: any SegmentStore, folder: URL, logger: Logger) async -> SegmentEncoding? {
        for descriptor in all {
            if let encoding = await descriptor.segmentEncoding(store: store, folder: folder, logger: logger) {
                return encoding
            }
        }
        return nil
    }
}

/// A second stage type of a name that is already registered.
public struct DuplicateStageType: Error, Sendable, CustomStringConvertible {
    /// The name both use.
    public var stageType: String
    /// Where the registered one comes from.
    public var registered: StageSource
    /// Where the refused one comes from.
    public var refused: StageSource

    public var description: String {
        "stage type \"\(stageType)\" from \(refused) is refused: \"\(stageType)\" is already registered (\(registered)); "
            + "give one of them another name"
    }
}
