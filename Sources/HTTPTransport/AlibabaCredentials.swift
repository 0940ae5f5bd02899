import Foundation
public import StageKit

/// An Alibaba Cloud AccessKey, as every stage that talks to Alibaba Cloud (the ApsaraVideo VOD API, OSS) takes
/// it: from the options, else from the standard environment variables.
public struct AlibabaCredentials: StageOptions {
    /// AccessKey id.
    @Option("AccessKey id (default: ALIBABA_CLOUD_ACCESS_KEY_ID).") public var accessKeyId: String?
    /// AccessKey secret.
    @Option("AccessKey secret (default: ALIBABA_CLOUD_ACCESS_KEY_SECRET); use ${env.…} so it stays secret.")
    public var accessKeySecret: String?
    /// STS security token, for a temporary AccessKey.
    @Option("STS security token, for a temporary AccessKey (default: ALIBABA_CLOUD_SECURITY_TOKEN).")
    public var securityToken: String?

    public init() {}

    /// The AccessKey the options give, else the environment's. Without an id and a secret the failure is fatal:
    /// no renewal can supply keys that were never configured.
    package func accessKey(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(StageFailure) -> AlibabaAccessKey {
        guard let id = accessKeyId ?? environment["ALIBABA_CLOUD_ACCESS_KEY_ID"],
            let secret = accessKeySecret ?? environment["ALIBABA_CLOUD_ACCESS_KEY_SECRET"]
        else {
            throw StageFailure(
                "no AccessKey: set accessKeyId and accessKeySecret (as ${env.…}) or ALIBABA_CLOUD_ACCESS_KEY_ID and ALIBABA_CLOUD_ACCESS_KEY_SECRET",
                kind: .notAuthenticated)
        }
        let token = securityToken ?? environment["ALIBABA_CLOUD_SECURITY_TOKEN"]
        return AlibabaAccessKey(id: id, secret: secret, securityToken: token.flatMap { $0.isEmpty ? nil : $0 })
    }
}

/// An AccessKey to sign requests with.
package struct AlibabaAccessKey: Sendable, Equatable {
    /// The AccessKey id.
    package var id: String
    /// The AccessKey secret.
    package var secret: String
    /// The STS security token of a temporary AccessKey; nil for a permanent one.
    package var securityToken: String?

    /// An AccessKey.
    package init(id: String, secret: String, securityToken: String?) {
        self.id = id
        self.secret = secret
        self.securityToken = securityToken
    }
}
