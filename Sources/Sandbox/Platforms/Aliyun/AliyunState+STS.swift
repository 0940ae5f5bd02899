import Foundation
import StageKit

/// Security Token Service: the temporary credentials issued with upload addresses, and the RPC nonces seen.
extension AliyunState {
    /// Issues a temporary credential for one object, valid for the configured `stsTTL`.
    func issueCredential(bucket: String, object: String) -> STSCredential {
        let credential = STSCredential(
            accessKeyID: "STS." + RandomID.hex(bytes: 12), accessKeySecret: RandomID.hex(bytes: 20),
            securityToken: "CAIS" + RandomID.hex(bytes: 48),
            expiresAt: Date().addingTimeInterval(self.core.configuration.stsTTL.seconds), bucket: bucket,
            object: object)
        self.stsCredentials[credential.accessKeyID] = credential
        return credential
    }

    /// The secret of an access key id: a configured AccessKey pair's, or a temporary credential's (with it).
    func secret(ofAccessKey id: String) -> (secret: String, temporary: STSCredential?)? {
        if let secret = self.core.configuration.aliyunAccessKeys[id] { return (secret, nil) }
        return self.stsCredentials[id].map { ($0.accessKeySecret, $0) }
    }

    /// Accepts an RPC `SignatureNonce` once; nonces older than ``AliyunSignature/requestTimeWindow`` are
    /// forgotten, since a request that old is refused for its `Timestamp` anyway.
    func useNonce(_ nonce: String) -> Bool {
        let now = Date()
        self.rpcNonces = self.rpcNonces.filter { now.timeIntervalSince($0.value) < AliyunSignature.requestTimeWindow }
        guard self.rpcNonces[nonce] == nil else { return false }
        self.rpcNonces[nonce] = now
        return true
    }
}
