import Foundation
import StageKit
import Testing

@testable import MediaStages

/// A write that fails on a full disk says which file it was writing and which folder's disk to free: the shim's
/// own message ("cannot write the output: No space left on device") names neither.
@Suite struct DiskFullTests {
    @Test func aFullDiskNamesTheFileAndTheFolderToFree() throws {
        let output = MediaOutput(destination: URL(fileURLWithPath: "/srv/exports/day 1/clip.mp4"))
        let shim = MediaError(code: .diskFull, message: "cannot write the output: No space left on device")
        let located = try #require(
            output.locating(shim, scratch: URL(fileURLWithPath: NSTemporaryDirectory())) as? MediaError)
        #expect(located.code == .diskFull && located.kind == .quotaExceeded)
        #expect(located.message.hasPrefix("cannot write the output: No space left on device"), "\(located.message)")
        #expect(located.message.contains("(writing /srv/exports/day 1/clip.mp4)"), "\(located.message)")
        // Neither disk is nearly full now (a quota, or space freed since): the output's folder is named.
        #expect(
            located.message.contains("no room was left in /srv/exports/day 1 (its disk or a quota)"),
            "\(located.message)")
    }

    @Test(arguments: [false, true]) func theFolderWhoseDiskIsFullIsNamed(scratchIsFull: Bool) throws {
        let output = MediaOutput(destination: URL(fileURLWithPath: "/srv/exports/clip.mp4"))
        let scratch = URL(fileURLWithPath: "/var/state/.pipeline/scratch/7")
        let shim = MediaError(code: .diskFull, message: "cannot write the output: No space left on device")
        let located = try #require(
            output.locating(shim, scratch: scratch) { folder in (folder == scratch) == scratchIsFull }
                as? MediaError)
        let full = scratchIsFull ? scratch.path : "/srv/exports"
        #expect(located.message.contains("the disk of \(full) is full; free space there"), "\(located.message)")
    }

    @Test func otherFailuresPassThrough() {
        let output = MediaOutput(destination: URL(fileURLWithPath: "/srv/exports/clip.mp4"))
        let notMedia = MediaError(code: .notMedia, message: "cannot open 'x.mov'")
        let located = output.locating(notMedia, scratch: URL(fileURLWithPath: "/tmp")) as? MediaError
        #expect(located?.message == "cannot open 'x.mov'")
    }

    @Test func aFolderNotMadeYetIsMeasuredOnItsNearestParent() {
        // The root file system of a test machine has more than 1 MiB free.
        #expect(!MediaOutput.isNearlyFull(URL(fileURLWithPath: NSTemporaryDirectory() + "/not/made/yet")))
    }
}
