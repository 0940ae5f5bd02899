import Hummingbird
public import Logging
import NIOCore
import ServiceLifecycle
import StageKit

/// Starts the sandbox: an embedded local implementation of Vimeo's upload API (API 3.4: `/me`,
/// `/me/videos`, `/videos/ID`, tus and legacy streaming uploads), a generic asset API for
/// "another platform" workflows, Alibaba Cloud's ApsaraVideo VOD and OSS, and fault injection — all on one
/// loopback port.
///
/// ```swift
/// let sandbox = try await SandboxServer.start(SandboxConfiguration())
/// print(sandbox.baseURL)          // http://127.0.0.1:PORT
/// await sandbox.stop()
/// ```
public enum SandboxServer {
    /// Starts listening and returns once the port is known.
    ///
    /// - Parameters:
    ///   - configuration: where to listen, what to store where, which tokens and faults.
    ///   - logger: the server's logger (request errors at `debug`, storage errors at `error`).
    /// - Throws: ``SandboxError`` when the data folder cannot be prepared or the port not bound.
    public static func start(
        _ configuration: SandboxConfiguration = SandboxConfiguration(),
        logger: Logger = Logger(label: "pipeline.sandbox")
    ) async throws -> RunningSandbox {
        let folder = try DataFolder.prepare(configuration.dataFolder)
        let platforms: SandboxPlatforms
        do {
            platforms = try await SandboxPlatforms.load(configuration: configuration, folder: folder, logger: logger)
        } catch {
            if folder.isTemporary { folder.removeAll() }
            throw error
        }

        let listening = ListeningSignal()
        let application = Application(
            router: SandboxRouter.build(platforms),
            server: .http1(configuration: .init(additionalChannelHandlers: [ExpectContinueHandler()])),
            configuration: ApplicationConfiguration(address: .hostname(configuration.host, port: configuration.port)),
            onServerRunning: { channel in listening.succeed(port: channel.localAddress?.port ?? configuration.port) },
            logger: logger
        )
        // Our own group (no signal handling: the embedding command owns signals) so that stop()
        // can shut the server down gracefully: idle keep-alive connections close, requests finish.
        let group = ServiceGroup(services: [application], logger: logger)
        let serving = Task {
            do {
                try await group.run()
                listening.fail(SandboxError(code: .startup, message: "The server stopped before it listened."))
            } catch {
                listening.fail(error)
                throw error
            }
        }

        let port: Int
        do {
            port = try await listening.wait()
        } catch {
            serving.cancel()
            if folder.isTemporary { folder.removeAll() }
            throw SandboxError(
                code: .startup,
                message: "Cannot listen on \(configuration.host):\(configuration.port)",
                cause: error
            )
        }
        let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        let baseURL = configuration.publicBaseURL ?? "http://\(host):\(port)"
        platforms.core.address.set(baseURL)
        logger.info("sandbox listening", metadata: ["url": "\(baseURL)", "data": "\(folder.path)"])
        return RunningSandbox(
            port: port, baseURL: baseURL, dataFolder: folder, platforms: platforms, group: group, serving: serving)
    }
}
