import Foundation
import NIOHTTP1
import StageKit
import TestSupport
import Testing

@testable import Sandbox

@Suite("Vimeo API semantics")
struct VimeoAPITests {
    @Test("401 with error code 8003 without a token or with a wrong one; the scheme is case-insensitive")
    func authentication() async throws {
        try await withSandbox { sandbox, client in
            let missing = try await client.send(.GET, "/me", auth: false)
            #expect(missing.status == 401)
            let body = try #require(missing.json)
            #expect(body["error_code"]?.integerValue == 8003)
            #expect(body["link"] == .null)
            #expect(body["error"]?.stringValue != nil)
            #expect(body["developer_message"]?.stringValue != nil)

            let wrong = try await SandboxClient(sandbox, token: "nope").send(.GET, "/me")
            #expect(wrong.status == 401)
            #expect(wrong.json?["error_code"]?.integerValue == 8003)

            let mixedCase = try await client.send(
                .GET, "/me", headers: [("Authorization", "BeArEr sandbox-token")], auth: false)
            #expect(mixedCase.status == 200)
            #expect(mixedCase.json?["name"] == "Sandbox User")
            #expect(mixedCase.json?["uri"] == "/users/1")
        }
    }

    @Test("400 naming the field that is missing or unknown; 403 4101 beyond the free quota")
    func validation() async throws {
        try await withSandbox(SandboxConfiguration(quotaBytes: 1000)) { _, client in
            let noSize = try await client.send(.POST, "/me/videos", json: ["upload": ["approach": "tus"]])
            #expect(noSize.status == 400)
            #expect(noSize.json?["invalid_parameters"]?.arrayValue?.first?["field"] == "upload.size")
            #expect(noSize.json?["developer_message"]?.stringValue?.contains("upload.size") == true)

            let noApproach = try await client.send(.POST, "/me/videos", json: ["upload": ["size": 10]])
            #expect(noApproach.json?["invalid_parameters"]?.arrayValue?.first?["field"] == "upload.approach")

            let badPrivacy = try await client.send(
                .POST,
                "/me/videos",
                json: ["upload": ["approach": "tus", "size": 10], "privacy": ["view": "everyone"]]
            )
            #expect(badPrivacy.status == 400)
            #expect(badPrivacy.json?["invalid_parameters"]?.arrayValue?.first?["field"] == "privacy.view")

            let tooBig = try await client.createVideo(approach: "tus", size: 1001)
            #expect(tooBig.status == 403)
            #expect(tooBig.json?["error_code"]?.integerValue == 4101)

            let notJSON = try await client.send(
                .POST, "/me/videos", headers: [("Content-Type", "application/json")], body: Array("{".utf8))
            #expect(notJSON.status == 400)
        }
    }

    @Test("PATCH and GET with a fields filter, unknown fields refused, tags")
    func metadata() async throws {
        try await withSandbox { _, client in
            let video = try #require(try await client.createVideo(approach: "tus", size: 10).json)
            let id = Fixture.videoID(video)
            #expect(video["link"]?.stringValue == "\(client.baseURL)/videos/\(id)/watch")

            let patched = try await client.send(
                .PATCH,
                "/videos/\(id)?fields=name,description,privacy.view",
                json: ["name": "Holiday", "description": "At the sea", "privacy": ["view": "unlisted"]]
            )
            #expect(patched.status == 200)
            #expect(patched.json == ["name": "Holiday", "description": "At the sea", "privacy": ["view": "unlisted"]])

            let fetched = try await client.send(.GET, "/videos/\(id)?fields=name,privacy.view,upload.approach").json
            #expect(fetched == ["name": "Holiday", "privacy": ["view": "unlisted"], "upload": ["approach": "tus"]])

            let unknown = try await client.send(.PATCH, "/videos/\(id)", json: ["titel": "typo"])
            #expect(unknown.status == 400)
            #expect(unknown.json?["invalid_parameters"]?.arrayValue?.first?["field"] == "titel")
            let unknownNested = try await client.send(.PATCH, "/videos/\(id)", json: ["privacy": ["veiw": "nobody"]])
            #expect(unknownNested.json?["invalid_parameters"]?.arrayValue?.first?["field"] == "privacy.veiw")

            let tagged = try await client.send(.PUT, "/videos/\(id)/tags", json: [["name": "sea"], "summer"])
            #expect(tagged.status == 200)
            #expect(tagged.json?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["sea", "summer"])
            let withTags = try await client.send(.GET, "/videos/\(id)?fields=tags.name").json
            #expect(withTags == ["tags": [["name": "sea"], ["name": "summer"]]])

            let list = try await client.send(.GET, "/me/videos?fields=uri,name").json
            #expect(list?["total"]?.integerValue == 1)
            #expect(list?["data"] == [["uri": .string("/videos/\(id)"), "name": "Holiday"]])

            #expect(try await client.send(.GET, "/videos/999").status == 404)
            #expect(try await client.send(.GET, "/videos/\(id)/watch", auth: false).status == 200)
        }
    }

    @Test("an expired token answers 401 8003 until the client gets a new one from POST /oauth/token")
    func tokenLifetime() async throws {
        let configuration = SandboxConfiguration(faults: SandboxFaults(tokenLifetime: 1.0))
        try await withSandbox(configuration) { sandbox, client in
            #expect(try await client.send(.GET, "/me").status == 200)
            // The token's lifetime runs from that first use; wait until the sandbox refuses it.
            try await waitUntil("the token's 1-second lifetime has passed") {
                try await client.send(.GET, "/me").status != 200
            }
            let expired = try await client.send(.GET, "/me")
            #expect(expired.status == 401)
            #expect(expired.json?["error_code"]?.integerValue == 8003)

            let refused = try await client.requestToken(secret: "wrong")
            #expect(refused.status == 401)

            // A new token's second runs from its issue, and a loaded machine may need longer than that to
            // use it. So when it is refused, the test asks for another, unless the refusal came well within
            // the second, measured from before the request for the token (less a margin, since the sandbox
            // times tokens by the wall clock): that fails the test at once.
            try await waitUntil("a new token from POST /oauth/token is accepted") {
                let asked = ContinuousClock.now
                let issued = try await client.requestToken(secret: "sandbox-secret")
                #expect(issued.status == 200)
                #expect(issued.json?["token_type"] == "bearer")
                #expect(issued.json?["expires_in"]?.integerValue == 1)
                let token = try #require(issued.json?["access_token"]?.stringValue)
                let answer = try await SandboxClient(sandbox, token: token).send(.GET, "/me")
                guard answer.status != 200 else { return true }
                try #require(
                    ContinuousClock.now - asked >= .milliseconds(900),
                    "a new token was refused within its lifetime: \(answer.status) \(answer.text)"
                )
                return false
            }
        }
    }
}

extension Array where Element == UInt8 {
    var base64: String {
        Data(self).base64EncodedString()
    }
}
