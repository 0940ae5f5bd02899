import ArgumentParser
import Foundation
import Sandbox

/// `pipeline sandbox`: the embedded local video platform (Vimeo's upload API), for trying workflows and
/// for tests without an account.
struct SandboxCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sandbox",
        abstract: "Serve the embedded local video platform (Vimeo's upload API) until interrupted.")

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

    func run() async throws {
        var configuration = SandboxConfiguration(port: port, dataFolder: data)
        if !token.isEmpty { configuration.tokens = token }
        let sandbox = try await SandboxServer.start(configuration)
        Output.line(
            "sandbox: \(sandbox.baseURL) (token \(configuration.tokens.first ?? "")), data in \(sandbox.dataFolderPath)"
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
