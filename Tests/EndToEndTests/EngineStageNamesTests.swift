import Foundation
import PipelineKit
import PluginHost
import StageKit
import TestSupport
import Testing

@testable import PipelineCLI

/// The engine knows no stage by name: what it needs of a stage (whether it streams, the file it reads, where its
/// result lands, why it refuses a stream) the stage type declares. So the engine's sources hold, outside comments, no
/// built-in stage type's name and read no stage option or output by its key. The names and keys come from the
/// built-in registry, so a stage added later is covered too.
@Suite struct EngineStageNamesTests {
    /// The engine's folders: the engine, the shared batch, the runtime it shares with the stages, the plugin host,
    /// the dashboard and the notifications.
    static let engine = [
        "Sources/PipelineKit", "Sources/SharedBatch", "Sources/StageRuntime", "Sources/PluginHost",
        "Sources/Dashboard", "Sources/Notifications",
    ]

    @Test func theEngineNamesNoStageTypeAndReadsNoStageKey() throws {
        let rules = try EngineRules()
        var findings: [String] = []
        var scanned: Set<String> = []
        for folder in Self.engine {
            let root = repositoryRoot.appendingPathComponent(folder)
            let files = try FileManager.default.subpathsOfDirectory(atPath: root.path)
            for file in files.sorted() where file.hasSuffix(".swift") {
                let path = "\(folder)/\(file)"
                scanned.insert(path)
                let source = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
                findings += rules.findings(in: source, file: path).map { "\(path): \($0)" }
            }
        }
        #expect(rules.stageTypes.count > 20 && rules.keys.count > 100, "\(rules.stageTypes.count) types")
        #expect(findings.isEmpty, "\(findings.joined(separator: "\n"))")
        // An allowance for a file that is gone would excuse the word in a file of that name later.
        let stale = Set(EngineRules.ownWords.keys).subtracting(scanned)
        #expect(stale.isEmpty, "allowances for files that are not scanned: \(stale.sorted())")
    }

    /// The rules find what the engine used to hold, in the forms it held it: a list of stage types, a stage's type
    /// compared by name, an option read from `with`, output keys listed, read or written, a message naming stage
    /// types.
    @Test func theRulesFindWhatTheEngineUsedToKnow() throws {
        let rules = try EngineRules()
        let before: [(String, String)] = [
            (#"static let streamingUploads: Set<String> = ["s3.upload", "tus.upload"]"#, "s3.upload"),
            (#"if stage.uses == "tus.upload", stage.with["url"] != nil {"#, "tus.upload"),
            (#"(spec.with["file"] == nil || spec.with["file"] == "${input.path}")"#, #"with["file"]"#),
            (#"let named = spec.with.objectValue?["file"]"#, #"objectValue?["file"]"#),
            (#"if export.with["faststart"] == .bool(false) {"#, "faststart"),
            (#"for key in ["link", "url", "location", "path"] {"#, "location"),
            (
                #"if let path = outputs?["path"]?.stringValue, let size = outputs?["size"]?.intValue {"#,
                #"outputs?["path"]"#
            ),
            (#"let landed = scope.stageOutputs[id]?["url"]?.stringValue"#, #"]?["url"]"#),
            (
                #"progress.scope.stageOutputs[exportID] = .object(["path": .string(destination)])"#,
                #"stage key "path" as a dictionary key"#
            ),
            (#"return "only an upload (s3.upload, tus.upload) streams the export it follows""#, "s3.upload"),
            (#"case let vimeo where vimeo.hasPrefix("vimeo."): return nil"#, "vimeo."),
        ]
        for (code, found) in before {
            let findings = rules.findings(in: code, file: nil)
            #expect(findings.contains { $0.contains(found) }, "\(code) → \(findings)")
        }
        // Comments may name stages and keys.
        let comments = """
            // The stage that follows (s3.upload, tus.upload) reads `with["file"]`.
            /* ffmpeg.transcode */ let member = 1
            """
        #expect(rules.findings(in: comments, file: nil).isEmpty, "\(rules.findings(in: comments, file: nil))")
        // A word that is the engine's own in one file (the ledger's `file` column) is found in any other, and in that
        // file too when it is read from a stage's options or outputs or through an optional.
        let ledger = "Sources/PipelineKit/Ledger/SQLiteLedger+Reading.swift"
        #expect(rules.findings(in: #"workflow: row["workflow"], file: row["file"],"#, file: ledger).isEmpty)
        #expect(!rules.findings(in: #"file: row["file"],"#, file: "Sources/PipelineKit/Runner/Runner.swift").isEmpty)
        for lookup in [#"spec.with["file"]"#, #"spec.with.objectValue?["file"]"#, #"outputs[id]?["file"]"#] {
            #expect(!rules.findings(in: lookup, file: ledger).isEmpty, "\(lookup)")
        }
    }
}

/// What the engine must not hold: the built-in stage types' names, and their option and output keys, except where a
/// key is a word of the engine's own in one file.
private struct EngineRules {
    /// The built-in stage type names.
    let stageTypes: Set<String>
    /// Every option key (nested ones too) and output key of the built-in stage types.
    let keys: Set<String>

    /// Words that are stage keys too but mean the engine's own thing in one file, and why: there, and only as a
    /// whole literal or a dictionary key, they are not found. Read from a `with`, an `outputs` or through an
    /// optional (`?["…"]`), they are found in every file.
    static let ownWords: [String: Set<String>] = [
        // Columns of the shared batch's tables, read by name.
        "Sources/SharedBatch/PostgresStore.swift": ["id", "path", "size", "status", "version"],
        "Sources/SharedBatch/SegmentQueue.swift": ["size", "status", "threads"],
        // The id column a queue order sorts by, and the `status` parameter of a list's query.
        "Sources/SharedBatch/ItemFinding.swift": ["id"],
        "Sources/PipelineKit/Ledger/SQLiteLedger+Finding.swift": ["id"],
        "Sources/PipelineKit/Ledger/ItemQuery.swift": ["status"],
        // The queue's table and its id column, named in the item claim's SQL.
        "Sources/SharedBatch/BatchQueue+Claim.swift": ["id", "items"],
        // The column of a manifest that names the input file.
        "Sources/PipelineKit/Batch/InputManifest.swift": ["file"],
        // The ledger's column of the workflow file a run read.
        "Sources/PipelineKit/Ledger/SQLiteLedger+Reading.swift": ["file"],
        // The `${env.*}` root of an expression.
        "Sources/PipelineKit/Expressions/Scope.swift": ["env"],
        "Sources/PipelineKit/Workflow/Workflow.swift": ["env"],
        "Sources/PipelineKit/Workflow/WorkflowReader+References.swift": ["env"],
        // The workflow file's members, as the grammar declares them and the reader reads them (`name`,
        // `inputs.path`, an input filter's `maxSize`, `defaults.timeout`, a stage's `id`, a notification's `url` and
        // `format`).
        "Sources/PipelineKit/Workflow/WorkflowGrammar.swift": [
            "description", "format", "id", "maxSize", "name", "path", "timeout", "url", "version",
        ],
        "Sources/PipelineKit/Workflow/WorkflowLoader.swift": ["description", "env", "name", "version"],
        "Sources/PipelineKit/Workflow/WorkflowReader+Notify.swift": ["env", "format", "url"],
        "Sources/PipelineKit/Workflow/WorkflowReader+Sections.swift": ["maxSize", "name", "path", "timeout"],
        "Sources/PipelineKit/Workflow/WorkflowReader+Stages.swift": ["description", "id", "timeout"],
        // A stage's id in the document the workflow's digest hashes.
        "Sources/PipelineKit/Workflow/WorkflowDigest.swift": ["id"],
        // JSON Schema's keywords and the workflow's value types (`pipeline schema`).
        "Sources/PipelineKit/Workflow/WorkflowSchema.swift": [
            "description", "duration", "items", "object", "size", "title",
        ],
        // The count of items in the run's events and summary.
        "Sources/PipelineKit/Runner/RunEvent.swift": ["items"],
        "Sources/PipelineKit/Runner/RunSummary.swift": ["items"],
        "Sources/PipelineKit/Ledger/PastRun.swift": ["items"],
        // The item's path in a segment plan's progress, the dashboard's documents and a notification: the input's.
        "Sources/SharedBatch/SegmentQueue+Progress.swift": ["path"],
        "Sources/Notifications/Notice.swift": ["path"],
        // The dashboard's routes (an item's `id`, the `status` filter, the `items` listed, the sign-in `token`), its
        // documents' fields, and the words of output names whose values it masks as secrets.
        "Sources/Dashboard/DashboardRoutes.swift": ["id", "items", "status", "token"],
        // A past run's `id` and its chart's span (`from`, `to`); a retry of all takes failed items only (`status`).
        "Sources/Dashboard/DashboardRoutes+Runs.swift": ["from", "id", "status", "to"],
        "Sources/Dashboard/ItemDocument.swift": ["id", "key", "outputs", "path", "size", "status", "token", "version"],
        "Sources/Dashboard/StatusDocument.swift": ["id", "name"],
        // An item's history: the route's item `id`, and its document's fields (a version's number and path, a stage's
        // id and status).
        "Sources/Dashboard/DashboardRoutes+History.swift": ["id"],
        "Sources/Dashboard/HistoryDocument.swift": ["id", "path", "status", "version"],
        // The name of the stream's event that carries the status.
        "Sources/Dashboard/StatusStream.swift": ["status"],
        // The system call that failed, in a message.
        "Sources/StageRuntime/FolderSegmentStore.swift": ["create"],
        "Sources/StageRuntime/VerifiedFile.swift": ["create"],
    ]

    init() throws {
        let registry = try StageCatalog.shipped.registry()
        let builtIn = registry.all.filter { $0.source == .builtIn }
        stageTypes = Set(builtIn.map(\.stageType))
        keys = Set(builtIn.flatMap { Self.names(in: $0.optionSchema) + $0.outputSchema.fields.map(\.name) })
    }

    /// What `source`, the file `file` (from the repository's root; nil for code of no file), holds that the engine
    /// must not: each finding names the rule and the text.
    func findings(in source: String, file: String?) -> [String] {
        let scanned = SwiftSource(source)
        let own = file.flatMap { Self.ownWords[$0] } ?? []
        var findings: [String] = []
        for literal in scanned.literals {
            for name in stageTypes where Self.names(name, in: literal) {
                findings.append("stage type \(name) in \"\(literal.text)\"")
            }
            if literal.isWhole, keys.contains(literal.text), !own.contains(literal.text) {
                findings.append("stage key \"\(literal.text)\"\(literal.isDictionaryKey ? " as a dictionary key" : "")")
            }
        }
        let code = scanned.code
        // A key read from a stage's options or outputs (`spec.with[…]`, `outputs?[…]`), or from a value reached
        // through an optional or another subscript (`objectValue?[…]`, `stageOutputs[id]?[…]`): never the engine's own.
        let lookup =
            /(?:(?:^|[^A-Za-z0-9_])(?:with|options|outputs|Outputs)[?!]?|[A-Za-z0-9_)\]][?!]|\])\[\s*"([A-Za-z0-9_]+)"\s*\]/
        for match in code.matches(of: lookup) where keys.contains(String(match.output.1)) {
            findings.append("stage key read as \(Self.expression(in: code, ending: match.range))")
        }
        return findings
    }

    /// The text of `range` in `code` with the names and dots before it (`spec.with.objectValue?["file"]`), for a
    /// finding: without the character before a name that the rule matched to know the name begins there; a
    /// subscript of a subscript or call as it is (`]?["url"]`).
    private static func expression(in code: String, ending range: Range<String.Index>) -> Substring {
        var start = range.lowerBound
        guard let first = code[start...].first, first != ")", first != "]" else { return code[range] }
        if !isCodeNamePart(first) { start = code.index(after: start) }
        while start > code.startIndex, isCodeNamePart(code[code.index(before: start)]) {
            start = code.index(before: start)
        }
        return code[start..<range.upperBound]
    }

    /// A character of a name or of a member access (`spec.with`).
    private static func isCodeNamePart(_ character: Character) -> Bool {
        character.isLetter || character.isNumber || character == "_" || character == "."
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
        /// Whether it is a key of a dictionary literal (`["path": …]`): after `[` or `,`, before `:`.
        var isDictionaryKey: Bool
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
        let before = codeBytes.last { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\n") }
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
        let after = bytes[index...].first { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\n") }
        // A `case "a", "b":` lists patterns, not keys.
        let line = codeBytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).last ?? []
        let isCase = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespaces).hasPrefix("case ")
        let isDictionaryKey =
            (before == UInt8(ascii: "[") || before == UInt8(ascii: ",")) && after == UInt8(ascii: ":") && !isCase
        literals.append(
            Literal(text: String(decoding: text, as: UTF8.self), isWhole: isWhole, isDictionaryKey: isDictionaryKey))
    }
}
