import Foundation
public import StageKit

/// Where a bucket is and how to send to it: the options `s3.upload` and `s3.uploadFolder` share, and the
/// region, credentials and object URLs read from them.
public struct S3Connection: StageOptions {
    /// Base URL (default: https://s3.<region>.amazonaws.com).
    @Option("Base URL (default: https://s3.<region>.amazonaws.com).") public var endpoint: String?
    /// The signing region (default: AWS_REGION, then AWS_DEFAULT_REGION, then us-east-1).
    @Option("The signing region (default: AWS_REGION, then AWS_DEFAULT_REGION, then us-east-1).")
    public var region: String?
    /// The bucket.
    @Option("The bucket.") public var bucket: String
    /// Address the bucket in the path (default: true with a custom endpoint).
    @Option("Address the bucket in the path (default: true with a custom endpoint).") public var pathStyle: Bool?
    /// Default: AWS_ACCESS_KEY_ID, then ~/.aws/credentials.
    @Option("Default: AWS_ACCESS_KEY_ID, then ~/.aws/credentials.") public var accessKeyId: String?
    /// Default: AWS_SECRET_ACCESS_KEY, then ~/.aws/credentials. Use ${env.…} so it stays secret.
    @Option("Default: AWS_SECRET_ACCESS_KEY, then ~/.aws/credentials. Use ${env.…} so it stays secret.")
    public var secretAccessKey: String?
    /// Default: AWS_SESSION_TOKEN.
    @Option("Default: AWS_SESSION_TOKEN.") public var sessionToken: String?
    /// Checksum sent with each part and verified by the server.
    @Option("Checksum sent with each part and verified by the server.") public var checksum = Checksum.crc32c
    /// Abort a part that sends nothing for this long, then retry it.
    @Option("Abort a part that sends nothing for this long, then retry it.", exclusiveMinimum: 0)
    public var stallTimeout = TimeSpan(seconds: 30)

    public init() {}

    /// The checksum of each part.
    public enum Checksum: String, OptionChoice {
        /// CRC32C (x-amz-checksum-crc32c).
        case crc32c
        /// SHA-256 (x-amz-checksum-sha256).
        case sha256
        /// No checksum.
        case none
    }

    /// The signing region: the option, else the standard environment variables, else us-east-1.
    func signingRegion(environment: [String: String]) -> String {
        region ?? environment["AWS_REGION"] ?? environment["AWS_DEFAULT_REGION"] ?? "us-east-1"
    }

    /// Credentials from the options, the standard environment variables, or ~/.aws/credentials.
    func credentials(environment: [String: String]) throws -> AWSCredentials {
        if let id = accessKeyId ?? environment["AWS_ACCESS_KEY_ID"],
            let secret = secretAccessKey ?? environment["AWS_SECRET_ACCESS_KEY"]
        {
            return AWSCredentials(
                accessKeyId: id, secretAccessKey: secret, sessionToken: sessionToken ?? environment["AWS_SESSION_TOKEN"]
            )
        }
        let path = environment["AWS_SHARED_CREDENTIALS_FILE"] ?? ((environment["HOME"] ?? "") + "/.aws/credentials")
        let profile = environment["AWS_PROFILE"] ?? "default"
        if let text = try? String(contentsOfFile: path, encoding: .utf8) {
            var section = ""
            var values: [String: String] = [:]
            for line in text.split(whereSeparator: \.isNewline).map({ $0.trimmingCharacters(in: .whitespaces) }) {
                if line.hasPrefix("[") && line.hasSuffix("]") {
                    section = String(line.dropFirst().dropLast()).trimmingCharacters(in: .whitespaces)
                } else if section == profile, let equals = line.firstIndex(of: "=") {
                    values[line[..<equals].trimmingCharacters(in: .whitespaces)] = line[line.index(after: equals)...]
                        .trimmingCharacters(in: .whitespaces)
                }
            }
            if let id = values["aws_access_key_id"], let secret = values["aws_secret_access_key"] {
                return AWSCredentials(
                    accessKeyId: id, secretAccessKey: secret, sessionToken: values["aws_session_token"])
            }
        }
        throw StageFailure(
            "no AWS credentials: set accessKeyId/secretAccessKey (as ${env.…}), AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, or a [\(profile)] profile in \(path)",
            kind: .notAuthenticated)
    }

    /// The URL of object `key`, path-style or virtual-host style, with the key encoded as S3 signs it.
    func objectURL(key: String, region: String) throws -> String {
        let endpoint = self.endpoint ?? "https://s3.\(region).amazonaws.com"
        guard var components = URLComponents(string: endpoint), let host = components.host, components.scheme != nil
        else {
            throw StageFailure("invalid endpoint \(endpoint)", kind: .invalidOptions)
        }
        let encodedKey = S3Backend.encode(key, keepingSlashes: true)
        let pathStyle = self.pathStyle ?? (self.endpoint != nil)
        let base =
            components.percentEncodedPath.hasSuffix("/")
            ? String(components.percentEncodedPath.dropLast()) : components.percentEncodedPath
        if pathStyle {
            components.percentEncodedPath = base + "/" + S3Backend.encode(bucket) + "/" + encodedKey
        } else {
            components.host = "\(bucket).\(host)"
            components.percentEncodedPath = base + "/" + encodedKey
        }
        guard let url = components.string else {
            throw StageFailure("invalid S3 URL for \(bucket)/\(key)", kind: .invalidOptions)
        }
        return url
    }
}
