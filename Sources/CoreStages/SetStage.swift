public import StageKit

/// `set`: outputs its `with` object as resolved, so a workflow can compute a value once and name it
/// (`${names.output}`), and so the engine's own overhead can be measured with a stage that does nothing else.
public struct SetStage: Stage {
    public typealias Options = JSONValue
    public typealias Outputs = JSONValue

    public static let stageType = "set"
    public static let summary = "Outputs its options as resolved: names computed values for later stages."
    /// A `set` that names a `url` gives where its item landed, as it did before stages declared their landing: a
    /// workflow that computes the address of what it published reports it that way (its outputs are its `with`,
    /// so no convention can find one).
    public static let landingOutput = "url"

    /// Its outputs are the members of `with`.
    public static func outputSchema(for with: JSONValue) -> OutputSchema {
        OutputSchema((with.objectValue ?? [:]).keys.sorted().map { OutputField($0, "As given in with.") })
    }

    public init() {}

    public func run(_ options: JSONValue, context: StageContext) async throws -> JSONValue {
        options
    }
}
