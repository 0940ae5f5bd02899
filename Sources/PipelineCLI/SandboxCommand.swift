import ArgumentParser
import Foundation
import Sandbox

import struct StageKit.TimeSpan

/// `pipeline sandbox`: the embedded local video platform (Vimeo's upload API, ApsaraVideo VOD's API and OSS),
/// for trying workflows and for tests without an account.
struct SandboxCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sandbox",
        abstract:
            "Serve the embedded local video platforms (Vimeo's upload API, ApsaraVideo VOD and OSS) until interrupted.")

    @Option(name: .long, help: "The port on 127.0.0.1 (0: any free port).")
    var port: Int = 0

    @Option(
        name: .long,
        help: ArgumentHelp("Keep videos and uploads in this folder (default: a temporary one).", valueName: "DIR"))
    var data: String?

    @Option(
        name: .long,
        help: ArgumentHelp("An accepted bearer token (repeatable; default: sandbox-token).", valueName: "TOKEN"))
    var token: [String] = []

    @Option(
        name: .customLong("sts-ttl"),
        help: ArgumentHelp(
            "How long ApsaraVideo VOD's temporary upload credentials work, such as 30s or 50m (by default as long as on Alibaba Cloud).",
            valueName: "DURATION"))
    var stsTTL = TimeSpan(SandboxConfiguration().stsTTL)

    @Flag(
        name: .customLong("oss-v1"),
        help:
            "Also take OSS V1 signatures, as an Alibaba Cloud account made before March 2025 does (by default only V4, as for a new account)."
    )
    var ossV1 = false

    @Flag(
        name: .customLong("vod-review"),
        help: "ApsaraVideo VOD reviews videos before publishing them: a transcoded video stays Checking.")
    var vodReview = false

    @Flag(
        name: .customLong("oss-sts-write-only"),
        help:
            "The temporary credentials of VOD's upload addresses may write but not read their object: PutObject and the multipart calls (ListParts included) work, HEAD and GET answer 403."
    )
    var ossSTSWriteOnly = false

    func validate() throws {
        guard stsTTL.duration >= .seconds(1) else {
            throw ValidationError("--sts-ttl must be a duration of at least 1s, such as 30s or 50m, not \(stsTTL)")
        }
    }

    func run() async throws {
        var configuration = SandboxConfiguration(port: port, dataFolder: data)
        if !token.isEmpty { configuration.tokens = token }
        configuration.stsTTL = stsTTL.duration
        configuration.acceptsOSSV1 = ossV1
        configuration.vodReview = vodReview
        configuration.ossSTSWriteOnly = ossSTSWriteOnly
        let sandbox = try await SandboxServer.start(configuration)
        Output.line(
            "sandbox: \(sandbox.baseURL) (token \(configuration.tokens.first ?? "")), data in \(sandbox.dataFolderPath)"
        )
        let keys = configuration.aliyunAccessKeys.sorted { $0.key < $1.key }.first
        Output.line(
            "sandbox: ApsaraVideo VOD at \(sandbox.baseURL) (AccessKey \(keys?.key ?? "") / \(keys?.value ?? "")), OSS bucket \(configuration.ossBucket)"
        )
        let outcome: Result<Void, any Error> = await SignalHandling.cancellingOnSignal {
            do {
                try await sandbox.run()
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try outcome.get()
    }
}
