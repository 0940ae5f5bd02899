import AsyncHTTPClient
import Crypto
import Foundation
public import HTTPTransport
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
public import StageKit

/// ApsaraVideo VOD's RPC-style API (version 2017-03-21) as the aliyun.vod.* stages call it: the action and
/// its parameters in the query with the common parameters (`Format`, `Version`, `AccessKeyId`,
/// `SignatureMethod` HMAC-SHA1, `SignatureVersion` 1.0, a fresh `SignatureNonce`, `Timestamp` in UTC, and
/// `SecurityToken` for a temporary credential), signed over the sorted, RFC 3986-encoded parameters with
/// HMAC-SHA1 keyed with `AccessKeySecret&`. Errors are read from the JSON body's `Code` and `Message`.
struct AliyunVODAPI: Sendable {
    /// The API's endpoint, e.g. `https://vod.cn-shanghai.aliyuncs.com`.
    let endpoint: String
    let accessKey: AlibabaAccessKey
    let exchange: HTTPExchange

    static let version = "2017-03-21"

    init(endpoint: String, accessKey: AlibabaAccessKey, context: StageContext) throws {
        let endpoint = endpoint.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        guard URL(string: endpoint)?.host != nil else {
            throw PlatformError(.invalidRequest, "api \(endpoint) is not a URL")
        }
        guard !accessKey.id.isEmpty, !accessKey.secret.isEmpty else {
            throw StageFailure("the AccessKey id or secret is empty", kind: .notAuthenticated)
        }
        self.endpoint = endpoint
        self.accessKey = accessKey
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
        all["AccessKeyId"] = accessKey.id
        all["SignatureMethod"] = "HMAC-SHA1"
        all["SignatureVersion"] = "1.0"
        all["SignatureNonce"] = UUID().uuidString.lowercased()
        all["Timestamp"] = Self.timestamp(Date())
        if let securityToken = accessKey.securityToken { all["SecurityToken"] = securityToken }
        all["Signature"] = Self.signature(method: "POST", parameters: all, secret: accessKey.secret)
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

/// How every aliyun.vod.* stage reaches the VOD API: its endpoint and the AccessKey.
public struct AliyunConnection: StageOptions {
    /// The VOD API's endpoint.
    @Option("The VOD API's endpoint (the Sandbox's for local runs).")
    public var api = "https://vod.cn-shanghai.aliyuncs.com"
    /// The AccessKey.
    @OptionGroup public var credentials: AlibabaCredentials

    public init() {}

    /// The API at the endpoint, signing with the AccessKey the options give, else the environment's.
    func connect(context: StageContext) throws -> AliyunVODAPI {
        try AliyunVODAPI(endpoint: api, accessKey: credentials.accessKey(), context: context)
    }
}
