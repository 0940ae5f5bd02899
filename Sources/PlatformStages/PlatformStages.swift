public import StageKit

/// The platform stages: `vimeo.ticket`, `vimeo.activate`, `vimeo.metadata`, `vimeo.picture`, `vimeo.wait`,
/// `http.request`.
public enum PlatformStageTypes {
    /// Every stage type of the module.
    public static let all: [any Stage.Type] = [
        VimeoTicketStage.self, VimeoActivateStage.self, VimeoMetadataStage.self, VimeoPictureStage.self,
        VimeoWaitStage.self, HTTPRequestStage.self,
    ]
}
