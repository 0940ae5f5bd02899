import Hummingbird
import StageKit

/// Alibaba Cloud as the sandbox serves it: ApsaraVideo VOD's RPC API at `/` and the inspection endpoint
/// `GET /sandbox/aliyun`. OSS (`/BUCKET/…`) is ``OSSMiddleware``, which the router puts ahead of every route.
enum AliyunRoutes {
    static func register(on router: Router<SandboxRequestContext>, aliyun: AliyunState) {
        VODRoutes.register(on: router, aliyun: aliyun)
        AliyunAdminRoutes.register(on: router, aliyun: aliyun)
    }
}
