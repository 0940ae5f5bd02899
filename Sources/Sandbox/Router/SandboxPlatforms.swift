import Logging
import StageKit

/// The platforms a sandbox serves, each with its own state, over the shared core.
///
/// Adding a platform is a folder under `Platforms/` (its state, records and routes), a state here, and a line
/// in ``SandboxRouter``.
struct SandboxPlatforms: Sendable {
    let core: SandboxCore
    let vimeo: VimeoState
    let assets: GenericAssetState
    let aliyun: AliyunState

    /// Reads the data folder's index: the core's sections, then each platform's; then makes every state that
    /// keeps a section part of the index written from now on.
    @SandboxActor
    static func load(configuration: SandboxConfiguration, folder: DataFolder, logger: Logger) throws
        -> SandboxPlatforms
    {
        let document = try IndexDocument.read(folder)
        let core = try SandboxCore(configuration: configuration, folder: folder, document: document, logger: logger)
        let platforms = SandboxPlatforms(
            core: core,
            vimeo: try VimeoState(document, core: core),
            assets: try GenericAssetState(document, core: core),
            aliyun: try AliyunState(document, core: core)
        )
        // Every section of index.json: a state missing here would be missing from the file.
        try core.index.keep([core.uploads, core.idempotencyKeys, platforms.vimeo, platforms.assets, platforms.aliyun])
        return platforms
    }

    /// Counts for `GET /sandbox/stats`.
    @SandboxActor
    func counts() -> [String: JSONValue] {
        let uploads = self.core.uploads.counts
        return [
            "videos": .integer(Int64(self.vimeo.videoCount)),
            "assets": .integer(Int64(self.assets.count)),
            "uploads": .integer(Int64(uploads.uploads)),
            "storedBytes": .integer(uploads.storedBytes),
        ]
    }

    /// Stops the work platforms do in the background (Vimeo's pulls, VOD's URL uploads): the sandbox is stopping.
    @SandboxActor
    func stopBackgroundWork() {
        self.vimeo.cancelPulls()
        self.aliyun.cancelURLFetches()
    }
}
