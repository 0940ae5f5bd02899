public import PipelineKit
public import StageKit

/// The stage types a program offers: those it ships, those a custom executable compiles in, and, each time a
/// workflow is loaded, those of the plugin libraries named for it. The program's entry point makes the catalog and
/// hands it to the commands; nothing else holds it.
public struct StageCatalog: Sendable {
    /// The stage types the program ships; registered first, so that no other stage type can take their names.
    public var builtIn: [any Stage.Type]
    /// The stage types a custom executable adds (`PipelineCommand.main(registering:)`).
    public var compiledIn: [any Stage.Type]

    /// A catalog of `builtIn` and `compiledIn` stage types.
    public init(builtIn: [any Stage.Type], compiledIn: [any Stage.Type] = []) {
        self.builtIn = builtIn
        self.compiledIn = compiledIn
    }

    /// The built-in stage types, then the compiled-in ones, then those of the plugin libraries at `plugins`.
    /// Throws a ``PluginError`` for a plugin that cannot be used, and a `DuplicateStageType` for a stage type whose
    /// name is taken.
    public func registry(plugins: [String] = []) throws -> StageRegistry {
        var registry = StageRegistry()
        for stage in builtIn { try registry.register(stage, source: .builtIn) }
        for stage in compiledIn { try registry.register(stage, source: .compiledIn) }
        for path in plugins {
            for descriptor in try PluginLoader.load(path) { try registry.register(descriptor) }
        }
        return registry
    }
}
