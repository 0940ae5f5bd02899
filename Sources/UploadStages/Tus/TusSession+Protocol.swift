import AsyncHTTPClient
import Foundation
import HTTPTransport
import Logging
import NIOCore
import NIOHTTP1
import StageKit

extension TusSession {
    func record(_ value: TusUploadStage.Progress) async throws {
        progress = value
        try await context.checkpoint(value)
    }

    func baseHeaders() -> [(String, String)] {
        [("Tus-Resumable", Self.version)] + options.headers.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    /// `Upload-Metadata`: `key base64(value)` pairs; tus servers commonly need filename and filetype.
    func metadataHeader() -> String {
        var metadata = options.metadata
        let name = (file.path as NSString).lastPathComponent
        if metadata["filename"] == nil { metadata["filename"] = name }
        if metadata["filetype"] == nil { metadata["filetype"] = MediaType.guess(for: name) }
        return metadata.sorted { $0.key < $1.key }.map { key, value in
            "\(key) \(Data(value.utf8).base64EncodedString())"
        }.joined(separator: ",")
    }

    /// OPTIONS: the extensions and checksum algorithms the server offers (none if it does not answer).
    func discover(_ url: String) async -> Capabilities {
        guard
            let answer = try? await exchange.send(
                HTTPClientRequest(url: url, method: .OPTIONS, headers: baseHeaders()), doing: "OPTIONS \(url)"),
            answer.status.code < 300
        else { return Capabilities() }
        func list(_ name: String) -> [String] {
            (answer.headers.first(name: name) ?? "").split(separator: ",").map {
                $0.trimmingCharacters(in: .whitespaces).lowercased()
            }
        }
        return Capabilities(extensions: Set(list("Tus-Extension")), checksumAlgorithms: list("Tus-Checksum-Algorithm"))
    }

    func checksumAlgorithm() throws -> String? {
        let wanted = options.checksum.rawValue
        let supported = ["sha1", "md5", "sha256"]
        switch options.checksum {
        case .none: return nil
        case .auto:
            guard capabilities.extensions.contains("checksum") else { return nil }
            return supported.first { capabilities.checksumAlgorithms.contains($0) }
        default:
            guard capabilities.extensions.contains("checksum"), capabilities.checksumAlgorithms.contains(wanted) else {
                throw StageFailure(
                    "the server does not offer \(wanted) checksums (it offers: \(capabilities.checksumAlgorithms.joined(separator: ", ")))",
                    kind: .invalidOptions)
            }
            return wanted
        }
    }

    /// DELETE (termination): frees the server's partial upload; failures are only logged.
    func terminate(_ url: String) async {
        let answer = try? await exchange.send(
            HTTPClientRequest(url: url, method: .DELETE, headers: baseHeaders()), doing: "terminating \(url)")
        context.logger.info("terminated the upload \(url) (\(answer.map { String($0.status.code) } ?? "no answer"))")
    }
}
