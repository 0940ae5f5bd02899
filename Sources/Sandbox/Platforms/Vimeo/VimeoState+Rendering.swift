import StageKit

extension VimeoState {
    private var videoRepresentation: VideoRepresentation {
        VideoRepresentation(baseURL: self.baseURL, transcodeDelay: self.core.configuration.transcodeDelay)
    }

    /// The API JSON of a video.
    func render(_ video: VideoRecord) -> JSONValue {
        let json = self.videoRepresentation.render(video, upload: self.uploads.record(video.uploadID))
        guard case .object(var members) = json else { return json }
        // `pictures`: the active picture, or none yet.
        members["pictures"] = self.pictures(of: video.id).first { $0.active }.map(self.render) ?? .null
        return .object(members)
    }

    /// The API JSON of a video by id, `nil` when there is none.
    func renderVideo(_ id: String) -> JSONValue? {
        self.section.videos[id].map { self.render($0) }
    }

    /// The API JSON of the user.
    func renderUser() -> JSONValue {
        UserRepresentation.render(quotaMax: self.core.configuration.quotaBytes, used: self.quotaUsed)
    }
}
