import HTTPTypes
import Hummingbird
import StageKit

/// The parts of tus 1.0.0 common to every request on the upload endpoints: `Tus-Resumable: 1.0.0`
/// is required on requests (412 Precondition Failed with `Tus-Version` otherwise) and added to
/// every response, errors included. `OPTIONS` needs no version, and the legacy streaming `PUT`
/// sharing the same path is not tus, so both pass untouched.
struct TusMiddleware: RouterMiddleware {
    typealias Context = SandboxRequestContext

    static let version = "1.0.0"

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        if request.method == .put {
            return try await next(request, context)
        }
        var response: Response
        if request.method != .options, request.headers[.tusResumable] != Self.version {
            response = JSONResponse.text(
                "Tus-Resumable: \(Self.version) is required.\n",
                status: .preconditionFailed,
                headers: [.tusVersion: Self.version]
            )
        } else {
            do {
                response = try await next(request, context)
            } catch let failure as UploadFailure {
                response = try failure.response(from: request, context: context)
            } catch let error as APIError {
                response = try error.response(from: request, context: context)
            }
        }
        response.headers[.tusResumable] = Self.version
        return response
    }
}
