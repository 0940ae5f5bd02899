import AsyncHTTPClient
import Crypto
import Foundation
import HTTPTransport
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import StageKit

/// ApsaraVideo VOD's RPC-style API (version 2017-03-21) as the aliyun.vod.* stages call it: the action and
/// its parameters in the query with the common parameters (`Format`, `Version`, `AccessKeyId`,
/// `SignatureMethod` HMAC-SHA1, `SignatureVersion` 1.0, a fresh `SignatureNonce`, `Timestamp` in UTC, and
/// `SecurityToken` for a temporary credential), signed over the sorted, RFC 3986-encoded parameters with
/// HMAC-SHA1 keyed with `AccessKeySecret&`. Errors are read from the JSON body's `Code` and `Message`.
struct AliyunVODAPI: Sendable {
    /// The API's endpoint, e.g. `https://vod.cn-shanghai.aliyuncs.com`.
    let endpoint: String
    let accessKeyID: String
    let accessKeySecret: String
    let securityToken: String?
    let exchange: HTTPExchange

    static let version = "2017-03-21"

    init(endpoint: String, accessKeyID: String, accessKeySecret: String, securityToken: String?, context: StageContext)
        throws
    {
        let endpoint = endpoint.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        guard URL(string: endpoint)?.host != nil else {
            throw PlatformError(.invalidRequest, "api \(endpoint) is not a URL")
        }
        guard !accessKeyID.isEmpty, !accessKeySecret.isEmpty else {
            throw StageFailure("the AccessKey id or secret is empty", kind: .notAuthenticated)
        }
        self.endpoint = endpoint
        self.accessKeyID = accessKeyID
        self.accessKeySecret = accessKeySecret
        self.securityToken = securityToken.flatMap { $0.isEmpty ? nil : $0 }
        exchange = HTTPExchange(
            client: context.httpClient, stallTimeout: TimeSpan(seconds: 60), answerTimeout: TimeSpan(seconds: 60))
    }

    /// Calls `action` with `parameters` (POST, everything in the query as the official SDKs send it); returns
    /// the JSON answer, or throws the failure its status and `Code` say.
    func call(_ action: String, _ parameters: [String: String], doing what: String) async throws -> JSONValue {
        var all = parameters
        all["Action"] = action
        all["Version"] = Self.version
        all["Format"] = "JSON"
        all["AccessKeyId"] = accessKeyID
        all["SignatureMethod"] = "HMAC-SHA1"
        all["SignatureVersion"] = "1.0"
        all["SignatureNonce"] = UUID().uuidString.lowercased()
        all["Timestamp"] = Self.timestamp(Date())
        if let securityToken { all["SecurityToken"] = securityToken }
        all["Signature"] = Self.signature(method: "POST", parameters: all, secret: accessKeySecret)
        let query = all.sorted { $0.key < $1.key }.map {
            "\(Self.percentEncode($0.key))=\(Self.percentEncode($0.value))"
        }
        .joined(separator: "&")
        let request = HTTPClientRequest(
            url: endpoint + "/?" + query, method: .POST, headers: [("Accept", "application/json")])
        let answer = try await exchange.send(request, doing: what)
        guard answer.status == .ok else {
            let json = try? JSONValue(parsing: Data(buffer: answer.body))
            let code = json?["Code"]?.stringValue ?? ""
            let said = [json?["Code"]?.stringValue, json?["Message"]?.stringValue].compactMap { $0 }
                .joined(separator: ": ")
            throw HTTPFailure.aliyun(answer, code: code, said: said, doing: what)
        }
        guard let value = try? JSONValue(parsing: Data(buffer: answer.body)), case .object = value else {
            throw PlatformError(.invalidResponse, "\(what): the answer is not a JSON object: \(answer.bodyExcerpt)")
        }
        return value
    }

    /// `Timestamp`: ISO 8601 in UTC, to the second.
    static func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }

    /// The signature of `parameters` (all but `Signature`) for an HTTP `method`.
    static func signature(method: String, parameters: [String: String], secret: String) -> String {
        let canonical = parameters.filter { $0.key != "Signature" }.sorted { $0.key < $1.key }
            .map { "\(percentEncode($0.key))=\(percentEncode($0.value))" }.joined(separator: "&")
        let stringToSign = "\(method)&\(percentEncode("/"))&\(percentEncode(canonical))"
        let code = HMAC<Insecure.SHA1>.authenticationCode(
            for: Data(stringToSign.utf8), using: SymmetricKey(data: Data((secret + "&").utf8)))
        return Data(code).base64EncodedString()
    }

    /// RFC 3986: every byte but `A-Z a-z 0-9 - _ . ~` as `%XX` (a space is `%20`, `*` is `%2A`).
    static func percentEncode(_ text: String) -> String {
        var encoded = ""
        for byte in text.utf8 {
            let isUnreserved =
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
                || byte == UInt8(ascii: "~")
            encoded += isUnreserved ? String(UnicodeScalar(byte)) : String(format: "%%%02X", byte)
        }
        return encoded
    }
}

/// An upload address and credential as `CreateUploadVideo`, `RefreshUploadVideo` and `CreateUploadImage`
/// answer them: `UploadAddress` and `UploadAuth` are base64 JSON.
struct VODUploadTicket: Sendable {
    var endpoint: String
    var bucket: String
    var object: String
    var accessKeyID: String
    var accessKeySecret: String
    var securityToken: String
    /// When the credential expires, ISO 8601 (`ExpireUTCTime`, or now plus `Expiration` seconds).
    var expiration: String
    var region: String

    init(_ answer: JSONValue, doing action: String) throws {
        func decoded(_ field: String) throws -> JSONValue {
            guard let text = answer[field]?.stringValue, let data = Data(base64Encoded: text),
                let value = try? JSONValue(parsing: data), case .object = value
            else {
                throw PlatformError(.invalidResponse, "\(action): \(field) is not base64 JSON")
            }
            return value
        }
        let address = try decoded("UploadAddress")
        let auth = try decoded("UploadAuth")
        endpoint = try address.requiredString("Endpoint", in: action)
        bucket = try address.requiredString("Bucket", in: action)
        object = try address.requiredString("FileName", in: action)
        accessKeyID = try auth.requiredString("AccessKeyId", in: action)
        accessKeySecret = try auth.requiredString("AccessKeySecret", in: action)
        securityToken = try auth.requiredString("SecurityToken", in: action)
        region = auth["Region"]?.stringValue ?? ""
        if let expires = auth["ExpireUTCTime"]?.stringValue, !expires.isEmpty {
            expiration = expires
        } else if let seconds = auth["Expiration"]?.stringValue.flatMap(Double.init) {
            expiration = AliyunVODAPI.timestamp(Date().addingTimeInterval(seconds))
        } else {
            expiration = ""
        }
    }
}

/// The options every aliyun.vod.* stage shares: their summaries and defaults.
enum AliyunConnection {
    static let apiSummary = "The VOD API's endpoint (the Sandbox's for local runs)."
    static let defaultAPI = "https://vod.cn-shanghai.aliyuncs.com"
    static let keyIDSummary = "AccessKey id (default: ALIBABA_CLOUD_ACCESS_KEY_ID)."
    static let secretSummary =
        "AccessKey secret (default: ALIBABA_CLOUD_ACCESS_KEY_SECRET); use ${env.…} so it stays secret."
    static let tokenSummary = "STS security token, for a temporary AccessKey (default: ALIBABA_CLOUD_SECURITY_TOKEN)."

    /// The API with the given credentials, or those of the environment.
    static func api(
        _ endpoint: String, keyID: String?, secret: String?, token: String?, context: StageContext
    ) throws -> AliyunVODAPI {
        let environment = ProcessInfo.processInfo.environment
        guard let id = keyID ?? environment["ALIBABA_CLOUD_ACCESS_KEY_ID"],
            let secret = secret ?? environment["ALIBABA_CLOUD_ACCESS_KEY_SECRET"]
        else {
            // Fatal: no renewal can supply keys that were never configured.
            throw StageFailure(
                "no AccessKey: set accessKeyId and accessKeySecret (as ${env.…}) or ALIBABA_CLOUD_ACCESS_KEY_ID and ALIBABA_CLOUD_ACCESS_KEY_SECRET",
                kind: .notAuthenticated)
        }
        return try AliyunVODAPI(
            endpoint: endpoint, accessKeyID: id, accessKeySecret: secret,
            securityToken: token ?? environment["ALIBABA_CLOUD_SECURITY_TOKEN"], context: context)
    }
}
