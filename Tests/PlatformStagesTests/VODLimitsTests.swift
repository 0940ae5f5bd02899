import Foundation
import StageKit
import Testing

@testable import PlatformStages

/// ApsaraVideo VOD's documented limits on titles, descriptions, tags and file names, checked before a request.
@Suite struct VODLimitsTests {
    @Test func titlesAreCountedInCharactersAndEmojiAreRefused() {
        #expect(VODLimits.problem(with: String(repeating: "题", count: 128), field: "Title", length: 128) == nil)
        #expect(
            VODLimits.problem(with: String(repeating: "x", count: 129), field: "Title", length: 128)
                == "ApsaraVideo VOD takes a Title of at most 128 characters; this one has 129")
        #expect(VODLimits.problem(with: "clip \u{1F3AC}", field: "Title", length: 128)?.contains("no emoji") == true)
        #expect(VODLimits.problem(with: "clip ☀", field: "Title", length: 128) == nil, "a text symbol is no emoji")
    }

    @Test func aTitleIsFittedWithoutEmojiToAtMost128Characters() throws {
        let fitted = try VODLimits.fitted(title: String(repeating: "Clip \u{1F3AC}\u{200D}\u{1F525} é ", count: 30))
        #expect(fitted.unicodeScalars.count <= 128 && fitted.unicodeScalars.count > 100, "\(fitted)")
        #expect(VODLimits.problem(with: fitted, field: "Title", length: 128) == nil)
        #expect(!fitted.hasSuffix(" ") && fitted.hasPrefix("Clip  é Clip"), "\(fitted)")
        #expect(try VODLimits.fitted(title: " short ") == "short")
        #expect(throws: PlatformError.self) { try VODLimits.fitted(title: "\u{1F3AC}\u{1F3AC} ") }
    }

    @Test func tagsAndFileNames() {
        #expect(VODLimits.problem(withTags: "a, b,c") == nil)
        #expect(VODLimits.normalized(tags: " a , b,c ") == "a,b,c")
        #expect(
            VODLimits.problem(withTags: Array(repeating: "t", count: 17).joined(separator: ","))?.contains("16") == true
        )
        #expect(VODLimits.problem(withTags: "ok," + String(repeating: "y", count: 33))?.contains("32") == true)
        #expect(VODLimits.problem(withFileName: "clip.MOV") == nil)
        #expect(VODLimits.problem(withFileName: "notes.txt")?.hasSuffix("notes.txt has the extension .txt") == true)
        #expect(VODLimits.problem(withFileName: "clip")?.hasSuffix("clip has no extension") == true)
    }

    /// Literal values are checked at `validate`; a template's value once it is resolved.
    @Test func onlyKnownTextsAreCheckedAndFitTitleLeavesTheTitle() {
        let long = JSONValue.string(String(repeating: "x", count: 200))
        #expect(VODLimits.problems(in: ["title": long], fitTitle: false).map(\.message).count == 1)
        #expect(VODLimits.problems(in: ["title": long], fitTitle: true).isEmpty)
        let templated = JSONValue.string("${input.stem}" + String(repeating: "x", count: 2000))
        #expect(VODLimits.problems(in: ["title": templated, "description": templated], fitTitle: false).isEmpty)
    }
}
