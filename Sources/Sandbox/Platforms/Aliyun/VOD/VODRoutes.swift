import Hummingbird
import StageKit

/// ApsaraVideo VOD's RPC-style API (version 2017-03-21) at the root path: `Action` and the common
/// parameters in the query or a form body, signed with the documented RPC signature (HMAC-SHA1 keyed with
/// `AccessKeySecret&`). Answers JSON: `CreateUploadVideo`, `RefreshUploadVideo`, `CreateUploadImage`,
/// `GetVideoInfo`, `UpdateVideoInfo`, `DeleteVideo`; errors with the documented codes.
enum VODRoutes {
    static let version = "2017-03-21"

    /// Registers `GET /` and `POST /`, with injected faults.
    static func register(on router: Router<SandboxRequestContext>, aliyun: AliyunState) {
        let rpc = router.group().add(middleware: FaultMiddleware(aliyun.core))
        rpc.get("/") { request, _ in try await self.answer(request, aliyun: aliyun) }
        rpc.post("/") { request, _ in try await self.answer(request, aliyun: aliyun) }
    }

    /// Checks the common parameters and the signature, then runs the action.
    static func answer(_ request: Request, aliyun: AliyunState) async throws -> Response {
        let call = try await RPCCall.read(request)
        try await RPCAuthentication.check(call, method: request.method.rawValue, aliyun: aliyun)
        return try await VODActions(aliyun: aliyun, call: call).run()
    }
}
