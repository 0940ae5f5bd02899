import Foundation
public import StageKit

/// Where a file for ApsaraVideo VOD goes and the temporary credential to send it with, as `aliyun.vod.ticket` and
/// `aliyun.vod.image` give them: outputs that `oss.upload` takes as options (`${ticket.endpoint}`, …).
public struct VODUploadAddress: StageOutputs {
    /// The OSS endpoint.
    @Output("The OSS endpoint of the upload address.") public var endpoint = ""
    /// The bucket.
    @Output("The bucket.") public var bucket = ""
    /// The object key (`FileName`).
    @Output("The object key (FileName).") public var object = ""
    /// The temporary AccessKey id.
    @Output("The temporary AccessKey id.") public var accessKeyId = ""
    /// The temporary AccessKey secret.
    @Output("The temporary AccessKey secret.") public var accessKeySecret = ""
    /// The STS security token.
    @Output("The STS security token.") public var securityToken = ""
    /// When the credential expires, ISO 8601 (`ExpireUTCTime`, or now plus `Expiration` seconds).
    @Output("When the credential expires (ISO 8601).") public var expiration = ""
    /// The region of the upload address (`UploadAuth`'s `Region`), which an OSS V4 signature names.
    @Output("The region of the upload address (UploadAuth's Region), for oss.upload's V4 signature.")
    public var region = ""

    public init() {}
}

/// An upload address and credential as `CreateUploadVideo`, `RefreshUploadVideo` and `CreateUploadImage`
/// answer them: `UploadAddress` and `UploadAuth` are base64 JSON.
struct VODUploadTicket: Sendable {
    var address: VODUploadAddress

    init(_ answer: JSONValue, doing action: String) throws {
        func decoded(_ field: String) throws -> JSONValue {
            guard let text = answer[field]?.stringValue, let data = Data(base64Encoded: text),
                let value = try? JSONValue(parsing: data), case .object = value
            else {
                throw PlatformError(.invalidResponse, "\(action): \(field) is not base64 JSON")
            }
            return value
        }
        let location = try decoded("UploadAddress")
        let auth = try decoded("UploadAuth")
        address = try VODUploadAddress.with {
            $0.endpoint = try location.requiredString("Endpoint", in: action)
            $0.bucket = try location.requiredString("Bucket", in: action)
            $0.object = try location.requiredString("FileName", in: action)
            $0.accessKeyId = try auth.requiredString("AccessKeyId", in: action)
            $0.accessKeySecret = try auth.requiredString("AccessKeySecret", in: action)
            $0.securityToken = try auth.requiredString("SecurityToken", in: action)
        }
        address.region = auth["Region"]?.stringValue ?? ""
        if let expires = auth["ExpireUTCTime"]?.stringValue, !expires.isEmpty {
            address.expiration = expires
        } else if let seconds = auth["Expiration"]?.stringValue.flatMap(Double.init) {
            address.expiration = AliyunVODAPI.timestamp(Date().addingTimeInterval(seconds))
        }
    }
}
