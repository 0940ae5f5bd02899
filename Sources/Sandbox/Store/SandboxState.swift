import Foundation
import Logging
import StageKit

/// Everything the sandbox knows — videos, assets, uploads, idempotency keys, tokens — behind one
/// actor, persisted to the data folder after every change.
///
/// Upload bytes never pass through the actor: a route takes a write lease on an upload
/// (``beginWrite(_:token:expectedOffset:)``), streams the body to the upload's file itself, reports
/// progress, and ends the lease with the final offset.
actor SandboxState {
    let folder: DataFolder
    let configuration: SandboxConfiguration
    let logger: Logger
    var index: SandboxIndex
    /// Uploads with a request writing to them right now.
    var writers: Set<String> = []
    /// The fetches of pull uploads under way, by upload id.
    var pulls: [String: Task<Void, Never>] = [:]
    /// Tokens issued by `POST /oauth/token`.
    var issuedTokens: Set<String> = []
    /// When each token was first seen (issued or used): the start of its lifetime.
    var tokenClock: [String: Date] = [:]
    /// Temporary credentials issued with upload addresses, by access key id (kept in memory: after a
    /// restart they are unknown, and a client asks for new ones as it would after they expired).
    var stsCredentials: [String: STSCredential] = [:]
    /// OSS parts stored since the sandbox started (a part sent again counts again), for tests.
    var ossPartsStored = 0
    /// `SignatureNonce`s of the RPC API seen recently: a nonce is accepted once.
    var rpcNonces: [String: Date] = [:]
    /// `http://HOST:PORT`, known once the server listens.
    private(set) var baseURL: String = ""

    init(configuration: SandboxConfiguration, folder: DataFolder, logger: Logger) throws {
        self.configuration = configuration
        self.folder = folder
        self.logger = logger
        self.index = try folder.loadIndex()
        // A pull under way when the sandbox stopped is not resumed: it failed.
        for (id, upload) in self.index.uploads
        where upload.uploadProtocol == .pull && !upload.isComplete && upload.failure == nil {
            self.index.uploads[id]?.failure = "the sandbox stopped while fetching the file"
        }
    }

    func setBaseURL(_ url: String) {
        self.baseURL = url
    }

    /// Writes the index; a failure is logged, not answered, since the change already happened in
    /// memory and the next write will carry it.
    func persist() {
        do {
            try self.folder.saveIndex(self.index)
        } catch {
            self.logger.error("sandbox: \(error)")
        }
    }

    /// Stops every pull under way (the sandbox is stopping).
    func cancelPulls() {
        for task in self.pulls.values { task.cancel() }
        self.pulls = [:]
    }

    /// Bytes reserved by existing videos.
    var quotaUsed: Int64 {
        self.index.videos.values.reduce(0) { $0 + $1.size }
    }

    var quotaFree: Int64 {
        max(0, self.configuration.quotaBytes - self.quotaUsed)
    }

    /// Counts for `GET /sandbox/stats`.
    func counts() -> (videos: Int, assets: Int, uploads: Int, storedBytes: Int64) {
        (
            self.index.videos.count, self.index.assets.count, self.index.uploads.count,
            self.index.uploads.values.reduce(0) { $0 + $1.offset }
        )
    }
}
