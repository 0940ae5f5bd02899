/// A stage that can say in `pipeline plan` how it would do its work for an item, without doing it: an export,
/// for example, whether it transcodes or remuxes and into how many segments it splits the source.
public protocol PlanDescribing: Stage {
    /// A short note on how the stage would run with `options` on the item's file `input`, given the checkpoint
    /// an earlier run saved with ``StageContext/checkpoint(_:)`` (nil: none). It may read the input (a
    /// probe, not a decode) and writes nothing; nil when there is nothing to say or the input cannot be read
    /// (the run says why).
    static func planNote(_ options: Options, input: String, checkpoint: JSONValue?) async -> String?
}

extension PlanDescribing {
    /// ``planNote(_:input:checkpoint:)`` on resolved `with` options; nil when they do not decode (the run says
    /// why).
    public static func planNote(json options: JSONValue, input: String, checkpoint: JSONValue?) async -> String? {
        guard let decoded = try? decodeOptions(options) else { return nil }
        return await planNote(decoded, input: input, checkpoint: checkpoint)
    }
}
