public import StageKit

/// The platform stages: `vimeo.ticket`, `vimeo.activate`, `vimeo.metadata`, `vimeo.picture`, `vimeo.wait`,
/// `http.request`, `aliyun.vod.ticket`, `aliyun.vod.metadata`, `aliyun.vod.wait`, `aliyun.vod.image`,
/// `aliyun.vod.delete`, `aliyun.vod.pull`.
public enum PlatformStageTypes {
    /// Every stage type of the module.
    public static let all: [any Stage.Type] = [
        VimeoTicketStage.self, VimeoActivateStage.self, VimeoMetadataStage.self, VimeoPictureStage.self,
        VimeoWaitStage.self, HTTPRequestStage.self, AliyunVODTicketStage.self, AliyunVODMetadataStage.self,
        AliyunVODWaitStage.self, AliyunVODImageStage.self, AliyunVODDeleteStage.self, AliyunVODPullStage.self,
    ]
}
