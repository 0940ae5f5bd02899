import Hummingbird
import StageKit

/// Composes the platforms' routes into one router, each kind of route behind its own middleware:
///
/// - API routes (Vimeo and generic): injected faults, then bearer auth.
/// - The upload endpoint `/upload` (tus, streaming `PUT`): tus framing, then injected faults, no auth (the
///   upload link is the capability); content uploads (generic content, pictures): injected faults only.
/// - OAuth, sandbox and watch-page routes: neither.
/// - ApsaraVideo VOD's RPC API at `/` and OSS at `/BUCKET/…` (a middleware ahead of every route): injected
///   faults, then Alibaba Cloud's own signatures.
enum SandboxRouter {
    static func build(_ platforms: SandboxPlatforms) -> Router<SandboxRequestContext> {
        let core = platforms.core
        let router = Router(context: SandboxRequestContext.self)
        router.add(middleware: RequestCountingMiddleware(stats: core.stats))
        router.add(middleware: OSSMiddleware(aliyun: platforms.aliyun))

        let api = router.group()
            .add(middleware: FaultMiddleware(core))
            .add(middleware: BearerAuthMiddleware(tokens: core.tokens, faults: core.faults))
        let tusUploads = router.group()
            .add(middleware: TusMiddleware())
            .add(middleware: FaultMiddleware(core))
        let contentUploads = router.group().add(middleware: FaultMiddleware(core))

        TusRoutes.register(on: tusUploads, core: core)
        OAuthRoutes.register(on: router, core: core)
        SandboxAdminRoutes.register(on: router, platforms: platforms)
        VimeoRoutes.register(api: api, contentUploads: contentUploads, router: router, vimeo: platforms.vimeo)
        GenericAssetRoutes.register(api: api, uploads: contentUploads, assets: platforms.assets)
        AliyunRoutes.register(on: router, aliyun: platforms.aliyun)
        return router
    }
}
