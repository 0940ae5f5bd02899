import Foundation
import StageKit
import TestSupport
import Testing

@testable import PipelineCLI
@testable import PipelineKit

/// The engine knows no stage by name: what it needs of a stage (whether it streams, the file it reads, where its
/// result lands, why it refuses a stream) the stage type declares. So `Sources/PipelineKit` and
/// `Sources/SharedBatch` hold, outside comments, no built-in stage type's name and read no stage option or output
/// by its key. The names and keys come from the built-in registry, so a stage added later is covered too.
@Suite struct EngineStageNamesTests {
    /// The engine's folders.
    static let engine = ["Sources/PipelineKit", "Sources/SharedBatch"]

    @Test func theEngineNamesNoStageTypeAndReadsNoStageKey() throws {
        let rules = try EngineRules()
        var findings: [String] = []
        for folder in Self.engine {
            let root = repositoryRoot.appendingPathComponent(folder)
            let files = try FileManager.default.subpathsOfDirectory(atPath: root.path)
            for file in files.sorted() where file.hasSuffix(".swift") {
                let source = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
                findings += rules.findings(in: source).map { "\(folder)/\(file): \($0)" }
            }
        }
        #expect(rules.stageTypes.count > 20 && rules.keys.count > 100, "\(rules.stageTypes.count) types")
        #expect(findings.isEmpty, "\(findings.joined(separator: "\n"))")
    }

    /// The rules find what the engine used to hold, in the forms it held it: a list of stage types, a stage's type
    /// compared by name, an option read from `with`, output keys listed or read, a message naming stage types.
    @Test func theRulesFindWhatTheEngineUsedToKnow() throws {
        let rules = try EngineRules()
        let before: [(String, String)] = [
            (#"static let streamingUploads: Set<String> = ["s3.upload", "tus.upload"]"#, "s3.upload"),
            (#"if stage.uses == "tus.upload", stage.with["url"] != nil {"#, "tus.upload"),
            (#"(spec.with["file"] == nil || spec.with["file"] == "${input.path}")"#, #"with["file"]"#),
            (#"if export.with["faststart"] == .bool(false) {"#, "faststart"),
            (#"for key in ["link", "url", "location", "path"] {"#, "location"),
            (
                #"if let path = outputs?["path"]?.stringValue, let size = outputs?["size"]?.intValue {"#,
                #"outputs?["path"]"#
            ),
            (#"return "only an upload (s3.upload, tus.upload) streams the export it follows""#, "s3.upload"),
            (#"case let vimeo where vimeo.hasPrefix("vimeo."): return nil"#, "vimeo."),
        ]
        for (code, found) in before {
            let findings = rules.findings(in: code)
            #expect(findings.contains { $0.contains(found) }, "\(code) → \(findings)")
        }
        // Comments may name stages; the engine's own words (a workflow key, an `${input.*}` fact) are no stage's.
        let allowed = """
            // The stage that follows (s3.upload, tus.upload) reads `with["file"]`.
            /* ffmpeg.transcode */ let member = "timeout"; let fact = "path"; let key = "description"
            """
        #expect(rules.findings(in: allowed).isEmpty, "\(rules.findings(in: allowed))")
    }
}

/// What the engine must not hold: the built-in stage types' names, and their option and output keys, except the
/// words that are also the engine's own.
private struct EngineRules {
    /// The built-in stage type names.
    let stageTypes: Set<String>
    /// Every option key (nested ones too) and output key of the built-in stage types.
    let keys: Set<String>
    /// Keys that are also words of the engine's own formats: read by the engine in their own meaning, so only
    /// reading them from a stage's `with` or outputs is stage knowledge.
    let engineWords: Set<String>

    init() throws {
        let registry = try StageCatalog.registry()
        let builtIn = registry.all.filter { $0.source == .builtIn }
        stageTypes = Set(builtIn.map(\.stageType))
        keys = Set(builtIn.flatMap { Self.names(in: $0.optionSchema) + $0.outputSchema.fields.map(\.name) })
        engineWords = Self.grammarNames(WorkflowGrammar.workflow).union(WorkflowLoader.reservedRoots)
            .union(InputItem.factNames)
            // JSON Schema's keywords and the workflow's value types (`pipeline schema`), the count of items in the
            // engine's events, and the `file` of a run in the ledger and of an input in a manifest.
            .union(["title", "type", "object", "items", "duration", "file"])
    }

    /// What `source` holds that the engine must not: each finding names the rule and the text.
    func findings(in source: String) -> [String] {
        let scanned = SwiftSource(source)
        var findings: [String] = []
        for literal in scanned.literals {
            for name in stageTypes where Self.names(name, in: literal) {
                findings.append("stage type \(name) in \"\(literal.text)\"")
            }
            if literal.isWhole, keys.contains(literal.text), !engineWords.contains(literal.text) {
                findings.append("stage key \"\(literal.text)\"")
            }
        }
        let code = scanned.code
        // After a `.`, a `?` or anything but a name's characters (`spec.with[…]`, `outputs?[…]`).
        let lookup = /(?:^|[^A-Za-z0-9_])((?:with|options|outputs|Outputs)[?!]?\[\s*"([A-Za-z0-9_]+)"\s*\])/
        for match in code.matches(of: lookup) where keys.contains(String(match.output.2)) {
            findings.append("stage key read as \(match.output.1)")
        }
        return findings
    }

    /// Whether `literal` names the stage type `name`: a dotted name anywhere as a word (a message), an undotted one
    /// (`exec`, `set`) as the whole literal, and a name's prefix up to its dot (`"vimeo."`) as a whole literal.
    private static func names(_ name: String, in literal: SwiftSource.Literal) -> Bool {
        guard let dot = name.firstIndex(of: ".") else { return literal.isWhole && literal.text == name }
        if literal.isWhole, literal.text == String(name[...dot]) { return true }
        var searched = literal.text[...]
        while let range = searched.range(of: name) {
            let before =
                range.lowerBound == literal.text.startIndex
                ? nil : literal.text[literal.text.index(before: range.lowerBound)]
            let after = range.upperBound == literal.text.endIndex ? nil : literal.text[range.upperBound]
            if !isNamePart(before), !isNamePart(after) { return true }
            searched = literal.text[range.upperBound...]
        }
        return false
    }

    private static func isNamePart(_ character: Character?) -> Bool {
        guard let character else { return false }
        return character.isLetter || character.isNumber || character == "_" || character == "."
    }

    /// Every option name in a schema, nested objects included.
    private static func names(in schema: OptionSchema) -> [String] {
        schema.fields.flatMap { [$0.name] + names(in: $0.type) }
    }

    private static func names(in type: OptionType) -> [String] {
        switch type {
        case .object(let schema): names(in: schema)
        case .array(let element), .dictionary(let element): names(in: element)
        default: []
        }
    }

    /// The member names of a section of the workflow file and of the sections it holds.
    private static func grammarNames(_ section: WorkflowGrammar.Section) -> Set<String> {
        section.members.reduce(into: Set<String>()) { names, member in
            names.insert(member.name)
            switch member.kind {
            case .section(let inner), .list(let inner): names.formUnion(grammarNames(inner))
            case .stages: names.formUnion(grammarNames(WorkflowGrammar.stage))
            default: break
            }
        }
    }
}

/// Swift source without its comments, and its string literals (the text between the quotes; an interpolation's
/// code is code, with literals of its own).
private struct SwiftSource {
    /// A string literal.
    struct Literal {
        /// Its text, interpolations left out.
        var text: String
        /// Whether it has no interpolation: the text is the whole value.
        var isWhole: Bool
    }

    private let bytes: [UInt8]
    private var index = 0
    private var codeBytes: [UInt8] = []
    private(set) var literals: [Literal] = []

    /// The source without comments, literals kept.
    var code: String { String(decoding: codeBytes, as: UTF8.self) }

    init(_ source: String) {
        bytes = Array(source.utf8)
        scanCode(untilClosingParenthesis: false)
    }

    private func starts(with text: String, at position: Int) -> Bool {
        let pattern = Array(text.utf8)
        return position + pattern.count <= bytes.count && Array(bytes[position..<position + pattern.count]) == pattern
    }

    /// Code, to the end or (in an interpolation) to the parenthesis that closes it.
    private mutating func scanCode(untilClosingParenthesis: Bool) {
        var depth = 0
        while index < bytes.count {
            if starts(with: "//", at: index) {
                while index < bytes.count, bytes[index] != UInt8(ascii: "\n") { index += 1 }
                continue
            }
            if starts(with: "/*", at: index) {
                skipBlockComment()
                continue
            }
            if let hashes = stringStart() {
                scanString(hashes: hashes)
                continue
            }
            let byte = bytes[index]
            if untilClosingParenthesis {
                if byte == UInt8(ascii: "(") { depth += 1 }
                if byte == UInt8(ascii: ")") {
                    if depth == 0 {
                        codeBytes.append(byte)
                        index += 1
                        return
                    }
                    depth -= 1
                }
            }
            codeBytes.append(byte)
            index += 1
        }
    }

    /// Skips a block comment, nested ones included.
    private mutating func skipBlockComment() {
        var depth = 0
        while index < bytes.count {
            if starts(with: "/*", at: index) {
                depth += 1
                index += 2
            } else if starts(with: "*/", at: index) {
                depth -= 1
                index += 2
                if depth == 0 { return }
            } else {
                index += 1
            }
        }
    }

    /// The number of `#` before a string's opening quote at `index`; nil when no string starts there.
    private func stringStart() -> Int? {
        var position = index
        while position < bytes.count, bytes[position] == UInt8(ascii: "#") { position += 1 }
        guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { return nil }
        return position - index
    }

    /// A string literal from its opening delimiter, kept in the code and recorded with its text.
    private mutating func scanString(hashes: Int) {
        let raw = String(repeating: "#", count: hashes)
        let multiline = starts(with: raw + "\"\"\"", at: index)
        let open = raw + (multiline ? "\"\"\"" : "\"")
        let close = (multiline ? "\"\"\"" : "\"") + raw
        codeBytes += Array(open.utf8)
        index += open.utf8.count
        var text: [UInt8] = []
        var isWhole = true
        while index < bytes.count {
            if starts(with: close, at: index) {
                codeBytes += Array(close.utf8)
                index += close.utf8.count
                break
            }
            if starts(with: "\\" + raw + "(", at: index) {
                isWhole = false
                let opening = "\\" + raw + "("
                codeBytes += Array(opening.utf8)
                index += opening.utf8.count
                scanCode(untilClosingParenthesis: true)
                continue
            }
            if starts(with: "\\" + raw, at: index), index + 1 + hashes < bytes.count {
                // An escape: the backslash and the character it escapes.
                let length = 2 + hashes
                codeBytes += bytes[index..<index + length]
                text += bytes[index..<index + length]
                index += length
                continue
            }
            codeBytes.append(bytes[index])
            text.append(bytes[index])
            index += 1
        }
        literals.append(Literal(text: String(decoding: text, as: UTF8.self), isWhole: isWhole))
    }
}
