import Foundation
import Hummingbird
import StageKit

/// The checks of the RPC-style API before any action runs: the common parameters, the API version, the
/// signature method, the `Timestamp`, the AccessKey, the signature (HMAC-SHA1 keyed with `AccessKeySecret&`)
/// and the `SignatureNonce`, each failing with the code Alibaba Cloud documents.
enum RPCAuthentication {
    /// The parameters every call carries.
    static let commonParameters = [
        "Action", "Version", "AccessKeyId", "Signature", "SignatureMethod", "SignatureVersion", "SignatureNonce",
        "Timestamp",
    ]

    /// Checks `call`, sent with `method`.
    static func check(_ call: RPCCall, method: String, aliyun: AliyunState) async throws {
        try self.checkForm(call)
        try self.checkTimestamp(call)
        let accessKeyID = call["AccessKeyId"] ?? ""
        guard let key = await aliyun.secret(ofAccessKey: accessKeyID), key.temporary == nil else {
            throw VODError(
                status: .notFound, code: "InvalidAccessKeyId.NotFound", message: "Specified access key is not found.")
        }
        let expected = AliyunSignature.rpcSignature(method: method, parameters: call.parameters, secret: key.secret)
        guard expected == call["Signature"] else {
            let stringToSign = AliyunSignature.rpcStringToSign(method: method, parameters: call.parameters)
            throw VODError(
                status: .badRequest, code: "SignatureDoesNotMatch",
                message: "Specified signature is not matched with our calculation. server string to sign is:"
                    + stringToSign)
        }
        guard await aliyun.useNonce(call["SignatureNonce"] ?? "") else {
            throw VODError(
                status: .badRequest, code: "SignatureNonceUsed", message: "Specified signature nonce was used already.")
        }
    }

    /// The common parameters are there, for this version and signature method.
    private static func checkForm(_ call: RPCCall) throws {
        for name in self.commonParameters where call.parameters[name] == nil {
            throw VODError.missing(name)
        }
        guard call.parameters["Version"] == VODRoutes.version else {
            throw VODError.invalid("Version", "this API is version \(VODRoutes.version)")
        }
        guard call.parameters["SignatureMethod"] == "HMAC-SHA1", call.parameters["SignatureVersion"] == "1.0" else {
            throw VODError(
                status: .badRequest, code: "InvalidSignatureMethod",
                message: "Specified signature method is not supported: use HMAC-SHA1, version 1.0.")
        }
    }

    /// `Timestamp` is an ISO 8601 time within ``AliyunSignature/requestTimeWindow`` of the sandbox's clock.
    private static func checkTimestamp(_ call: RPCCall) throws {
        guard let timestamp = ISO8601DateFormatter().date(from: call["Timestamp"] ?? "") else {
            throw VODError(
                status: .badRequest, code: "InvalidTimeStamp.Format",
                message: "Specified time stamp or date value is not well formatted.")
        }
        guard abs(timestamp.timeIntervalSinceNow) <= AliyunSignature.requestTimeWindow else {
            throw VODError(
                status: .badRequest, code: "InvalidTimeStamp.Expired",
                message: "Specified time stamp or date value is expired.")
        }
    }
}
