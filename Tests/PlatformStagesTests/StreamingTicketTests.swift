import StageKit
import Testing

@testable import PlatformStages

/// A streaming ticket is read in both shapes a platform may answer.
@Suite struct StreamingTicketTests {
    @Test func theLegacyTicketAtTheTopLevel() throws {
        let answer: JSONValue = [
            "uri": "/users/7/tickets/abc123", "ticket_id": "abc123",
            "upload_link": "http://upload.example/upload?ticket_id=abc123",
            "upload_link_secure": "https://upload.example/upload?ticket_id=abc123",
            "complete_uri": "/users/7/uploads/abc123?video_file_id=9&signature=s",
        ]
        let ticket = try StreamingTicket(answer, doing: "test")
        #expect(ticket.uri == "/users/7/tickets/abc123")
        #expect(ticket.id == "abc123")
        #expect(ticket.uploadLink == "https://upload.example/upload?ticket_id=abc123")
        #expect(ticket.completeURI == "/users/7/uploads/abc123?video_file_id=9&signature=s")
    }

    @Test func aVersionThreeFourVideoWithItsUploadObject() throws {
        let answer: JSONValue = [
            "uri": "/videos/42",
            "upload": [
                "approach": "streaming", "upload_link": "https://upload.example/42",
                "complete_uri": "/users/7/uploads/42?video_file_id=9&signature=s",
            ],
        ]
        let ticket = try StreamingTicket(answer, doing: "test")
        #expect(ticket.uri == "/videos/42" && ticket.id == "42")
        #expect(ticket.uploadLink == "https://upload.example/42")
        #expect(ticket.completeURI == "/users/7/uploads/42?video_file_id=9&signature=s")
    }

    @Test func anAnswerWithoutAnUploadLinkNamesTheMissingField() {
        let answer: JSONValue = ["uri": "/videos/42", "upload": ["approach": "streaming"]]
        #expect {
            try StreamingTicket(answer, doing: "creating")
        } throws: { error in
            "\(error)".contains("upload.upload_link")
        }
    }
}
