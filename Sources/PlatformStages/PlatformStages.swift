public import PipelineKit

extension StageRegistry {
    /// Registers the platform stages: `vimeo.ticket`, `vimeo.activate`, `vimeo.metadata`, `vimeo.wait`, `http.request`.
    public mutating func registerPlatformStages() {
        register(VimeoTicketStage.self, source: .builtIn)
        register(VimeoActivateStage.self, source: .builtIn)
        register(VimeoMetadataStage.self, source: .builtIn)
        register(VimeoWaitStage.self, source: .builtIn)
        register(HTTPRequestStage.self, source: .builtIn)
    }
}
