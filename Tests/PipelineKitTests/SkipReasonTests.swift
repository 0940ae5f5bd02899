import Foundation
import StageKit
import Testing

@testable import PipelineKit

/// Skip reasons: the text events and `pipeline plan` show, and the groups a run's totals count.
@Suite struct SkipReasonTests {
    @Test func reasonsReadAsBeforeAndGroupPerKindNotPerFile() {
        let cases: [(SkipReason, text: String, group: String)] = [
            (.hidden, "hidden", "hidden"),
            (.brokenLink, "a broken link", "a broken link"),
            (.unreadable("permission denied"), "cannot read it: permission denied", "cannot read it"),
            (.folder, "a folder (set inputs.recursive to go into folders)", "a folder"),
            (.unlistable("permission denied"), "cannot list: permission denied", "cannot list"),
            (.sameFolder(as: "/in/a"), "the same folder as /in/a", "the same folder as /in/a"),
            (.notRegularFile, "not a regular file", "not a regular file"),
            (.sidecar(of: "a.mp4"), "sidecar (the metadata of a.mp4)", "sidecar"),
            (.notIncluded(by: ["*.mp4", "*.mov"]), "not included by *.mp4, *.mov", "not included by *.mp4, *.mov"),
            (.excluded(by: "*.tmp"), "excluded by *.tmp", "excluded by *.tmp"),
            (
                .outsideLimits(.smaller(10, than: 2048)), "smaller than inputs.limits.minSize (10 B < 2.0 KiB)",
                "smaller than inputs.limits.minSize"
            ),
            (
                .outsideLimits(.container("matroska,webm", allowed: ["mp4"])),
                "container matroska,webm is not one of inputs.limits.containers (mp4)",
                "container matroska,webm is not one of inputs.limits.containers"
            ),
            (
                .notMedia("moov atom not found"), "not media FFmpeg can read: moov atom not found",
                "not media FFmpeg can read"
            ),
            (.sameContent(as: "/in/b.mp4"), "the same content as /in/b.mp4", "the same content as another file"),
            (.notFailed, "not failed last time (--failed)", "not failed last time"),
            (.cancelled(donePath: nil), "cancelled (run with --reprocess to take it up again)", "cancelled"),
            (
                .cancelled(donePath: "/in/old.mp4"),
                "cancelled (as /in/old.mp4) (run with --reprocess to take it up again)", "cancelled"
            ),
            (.cancelledByRequest, "cancelled by pipeline cancel", "cancelled by pipeline cancel"),
        ]
        for (reason, text, group) in cases {
            #expect(reason.description == text)
            #expect(reason.group == group, "\(reason)")
        }
        #expect(ReuseReason().description == "done")
        #expect(ReuseReason(donePath: "/in/a.mp4").description == "done (as /in/a.mp4)")
    }

    @Test func aRunsTotalsCountSkipsByGroupAndRenderThemInTheFinishedEvent() throws {
        var outcome = RunOutcome(summary: RunSummary(items: 4), results: [])
        let skipped: [(String, SkipReason)] = [
            ("/in/a.mp4", .sameContent(as: "/in/x.mp4")), ("/in/b.mp4", .sameContent(as: "/in/y.mp4")),
            ("/in/c.tmp", .excluded(by: "*.tmp")), ("/in/d.mp4", .outsideLimits(.larger(4096, than: 1024))),
        ]
        for (path, reason) in skipped {
            outcome.add(
                ItemResult(ref: nil, fingerprint: nil, path: path, outcome: .skipped, reason: reason.description),
                skipped: reason)
        }
        #expect(outcome.summary.skipped == 4)
        let expected = [
            "the same content as another file": 2, "excluded by *.tmp": 1, "larger than inputs.limits.maxSize": 1,
        ]
        #expect(outcome.summary.skipReasons == expected)
        #expect(RunFinished(summary: outcome.summary).fields["skipReasons"] == .object(expected.mapValues { .int($0) }))
    }
}
