import Foundation
import PipelineKit
import StageKit
import Testing

/// Output claims held to the same rules by both ledgers: all of an item's files or none, the item's own claims move
/// to its new version, another workflow's claim counts, forgetting the item releases them.
@Suite struct OutputClaimStoreTests {
    @Test(arguments: LedgerKind.allCases)
    func anItemClaimsAllItsFilesOrNoneAndForgettingReleasesThem(_ kind: LedgerKind) async throws {
        try await kind.withStore { store in
            let first = try await store.admit(admission("one"), workflow: "w").ref
            let second = try await store.admit(admission("two"), workflow: "w").ref
            let other = try await store.admit(admission("three"), workflow: "other").ref
            #expect(try await store.claimOutputs(["/out/a.mp4", "/out/a.jpg"], for: first, workflow: "w") == nil)
            #expect(try await store.claimOutputs([], for: second, workflow: "w") == nil)

            // Another item is refused, with the claim that stands in its way, and claims nothing.
            let taken = try await store.claimOutputs(["/out/b.mp4", "/out/a.jpg"], for: second, workflow: "w")
            #expect(
                taken
                    == OutputClaim(path: "/out/a.jpg", workflow: "w", item: first.item, version: 1, input: "/m/one.mp4")
            )
            #expect(try await store.outputClaims(paths: ["/out/b.mp4"]).isEmpty)
            // So is an item of another workflow.
            #expect(try await store.claimOutputs(["/out/a.mp4"], for: other, workflow: "other")?.item == first.item)

            // A new version of the item claims its files again, and more.
            let newer = try await store.admit(
                ItemAdmission(item: first.item, newVersion: true, fingerprint: "one-b", input: input("one-b")),
                workflow: "w"
            ).ref
            #expect(try await store.claimOutputs(["/out/a.mp4", "/out/c.mp4"], for: newer, workflow: "w") == nil)
            let claims = try await store.outputClaims(paths: ["/out/a.mp4", "/out/a.jpg", "/out/c.mp4", "/out/d"])
            #expect(claims.mapValues(\.version) == ["/out/a.mp4": 2, "/out/a.jpg": 1, "/out/c.mp4": 2])
            #expect(claims["/out/a.mp4"]?.input == "/m/one-b.mp4")

            try await store.forget(items: [first.item])
            #expect(try await store.outputClaims(paths: ["/out/a.mp4", "/out/a.jpg", "/out/c.mp4"]).isEmpty)
            #expect(try await store.claimOutputs(["/out/a.jpg"], for: second, workflow: "w") == nil)
            // Forgetting a whole workflow releases its items' claims too.
            try await store.forget(workflow: "w")
            #expect(try await store.claimOutputs(["/out/a.jpg"], for: other, workflow: "other") == nil)
        }
    }
}

private func input(_ name: String) -> InputItem {
    InputItem(path: "/m/\(name).mp4", relativePath: "\(name).mp4", size: 1, modified: 0)
}

private func admission(_ name: String) -> ItemAdmission {
    ItemAdmission(item: nil, newVersion: false, fingerprint: name, input: input(name))
}
