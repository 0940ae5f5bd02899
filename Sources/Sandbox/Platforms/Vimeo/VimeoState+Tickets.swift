import Foundation
import StageKit

extension VimeoState {
    /// Legacy streaming (`POST /me/videos` with `type: streaming`): a ticket and its upload, whose size the
    /// first `PUT` declares. An `Idempotency-Key` seen before returns the ticket it created.
    func createTicket(idempotencyKey: String?) -> TicketRecord {
        if let existingID = self.core.idempotencyKeys.created(by: idempotencyKey, in: .ticket),
            let existing = self.section.tickets[existingID]
        {
            return existing
        }
        let ticket = TicketRecord(
            id: RandomID.hex(bytes: 10), videoFileID: String(UInt32.random(in: 100_000_000...999_999_999)),
            signature: RandomID.hex(bytes: 16), createdAt: Date())
        _ = self.uploads.add(id: ticket.id, uploadProtocol: .streaming, length: nil, token: RandomID.hex(bytes: 16))
        self.section.tickets[ticket.id] = ticket
        self.core.idempotencyKeys.remember(idempotencyKey, in: .ticket, created: ticket.id)
        self.core.index.persist()
        return ticket
    }

    /// The legacy streaming ticket `id`, `nil` when there is none.
    func ticket(_ id: String) -> TicketRecord? {
        self.section.tickets[id]
    }

    /// `DELETE complete_uri` of a ticket: makes the video from the uploaded bytes. Calling it again returns
    /// the same video, so a client that lost the answer can repeat it.
    func completeTicket(_ id: String, videoFileID: String?, signature: String?) throws -> VideoRecord {
        guard var ticket = self.section.tickets[id] else { throw APIError.notFound("upload") }
        try APIError.checkCompleteURI(
            videoFileID: videoFileID, signature: signature, expected: (ticket.videoFileID, ticket.signature))
        if let videoID = ticket.videoID, let video = self.section.videos[videoID] {
            return video
        }
        let upload = self.uploads.record(id)
        guard let upload, upload.isComplete else {
            throw APIError.incompleteUpload(
                stored: upload?.offset ?? 0, size: upload?.lengthDeferred == true ? nil : upload?.length)
        }
        // The bytes arrived; the video must still fit (other videos may have taken the space meanwhile).
        guard upload.length <= self.quotaFree else {
            throw APIError.quotaExceeded(size: upload.length, free: self.quotaFree)
        }
        let videoID = self.newVideoID()
        self.uploads.assign(id, toVideo: videoID)
        var video = self.addVideo(
            id: videoID, name: nil, description: nil, privacyView: nil, upload: upload, fileName: "Untitled")
        video.uploadComplete = true
        video.uploadCompletedAt = Date()
        self.section.videos[videoID] = video
        ticket.videoID = videoID
        self.section.tickets[id] = ticket
        self.core.index.persist()
        return video
    }

    /// The API JSON of a ticket, as API 3.2/3.3 answered `POST /me/videos` with `type: streaming`.
    func render(_ ticket: TicketRecord) -> JSONValue {
        let link = TusRoutes.link(
            baseURL: self.baseURL, uploadID: ticket.id, token: self.uploads.record(ticket.id)?.token)
        return [
            "uri": .string("/users/1/tickets/\(ticket.id)"),
            "ticket_id": .string(ticket.id),
            "user": self.renderUser(),
            "upload_link": .string(link),
            "upload_link_secure": .string(link),
            "complete_uri": .string(
                "/users/1/uploads/\(ticket.id)?video_file_id=\(ticket.videoFileID)&signature=\(ticket.signature)"),
        ]
    }
}
