public import StageKit

/// The stage types a workflow may `use`.
public struct StageRegistry: Sendable {
    private var descriptors: [String: StageDescriptor] = [:]

    /// An empty registry.
    public init() {}

    /// Registers a stage type; a name that is already registered is refused, naming both sources, so a
    /// plugin can never shadow a built-in stage.
    public mutating func register<S: Stage>(_ stage: S.Type, source: StageSource = .compiledIn)
        throws(DuplicateStageType)
    {
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
