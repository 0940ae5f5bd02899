import Hummingbird
import StageKit

/// Assembles the routes into one router:
///
/// - API routes (Vimeo and generic): injected faults, then bearer auth.
/// - Upload routes (tus, streaming `PUT`, generic content): injected faults, tus framing, no auth
///   (the upload link is the capability).
/// - OAuth, sandbox and watch-page routes: neither.
/// - ApsaraVideo VOD's RPC API at `/` and OSS at `/BUCKET/…` (a middleware ahead of every route): injected
///   faults, then Alibaba Cloud's own signatures.
enum SandboxRouter {
    static func build(_ services: SandboxServices) -> Router<SandboxRequestContext> {
        let router = Router(context: SandboxRequestContext.self)
        router.add(middleware: RequestCountingMiddleware(stats: services.stats))
        router.add(middleware: OSSMiddleware(services: services))

        let api = router.group()
            .add(middleware: FaultMiddleware(services: services))
            .add(middleware: BearerAuthMiddleware(services: services))
        MeRoutes.register(on: api, services: services)
        VideoRoutes.register(on: api, services: services)

        let tusUploads = router.group()
            .add(middleware: TusMiddleware())
            .add(middleware: FaultMiddleware(services: services))
        TusRoutes.register(on: tusUploads, services: services)

        let contentUploads = router.group().add(middleware: FaultMiddleware(services: services))
        GenericAssetRoutes.register(api: api, uploads: contentUploads, services: services)
        PictureRoutes.register(api: api, uploads: contentUploads, services: services)

        OAuthRoutes.register(on: router, services: services)
        SandboxAdminRoutes.register(on: router, services: services)
        VideoRoutes.registerWatchPage(on: router, services: services)
        VODRoutes.register(on: router, services: services)
        return router
    }
}
