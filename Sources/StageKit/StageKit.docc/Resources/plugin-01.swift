import PipelinePluginSDK

/// The plugin's entry point: pipeline calls it when it loads the library. List every stage of the plugin here.
@_cdecl("pipeline_plugin_register")
public func registerStages(_ registrar: PluginRegistrar?) -> Int32 {
    PluginExport.register([SizeStage.self, ChecksumStage.self], with: registrar)
}
