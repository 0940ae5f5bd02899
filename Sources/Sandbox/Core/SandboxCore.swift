import Logging
import StageKit

/// What the platforms of a sandbox share: the data folder and its index, the uploads, idempotency keys, the
/// REST APIs' bearer tokens, injected faults and traffic counters. Platforms use the core; the core knows none
/// of them.
struct SandboxCore: Sendable {
    let configuration: SandboxConfiguration
    let folder: DataFolder
    let logger: Logger
    let address: SandboxAddress
    let index: SandboxIndex
    let uploads: UploadStore
    let idempotencyKeys: IdempotencyKeys
    let tokens: AccessTokens
    let faults: FaultInjector
    let stats: SandboxStats

    /// Reads the shared sections of `document` from `folder`.
    @SandboxActor
    init(
        configuration: SandboxConfiguration, folder: DataFolder, document: IndexDocument, logger: Logger
    ) throws {
        let index = try SandboxIndex(document, folder: folder, logger: logger)
        self.configuration = configuration
        self.folder = folder
        self.logger = logger
        self.address = SandboxAddress()
        self.index = index
        self.uploads = try UploadStore(document, folder: folder, configuration: configuration, index: index)
        self.idempotencyKeys = try IdempotencyKeys(document)
        self.tokens = AccessTokens(configured: configuration.tokens)
        self.faults = FaultInjector(configuration.faults)
        self.stats = SandboxStats()
    }
}
