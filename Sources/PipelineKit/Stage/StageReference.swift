import Foundation
import StageKit

/// The stage reference for people, in Markdown: every stage type with its summary, its options (type, default,
/// bounds, summary; nested ones by their dotted path) and its outputs, written from the declarations the
/// registry holds, so the documentation cannot say other than the code (`pipeline stages --markdown`, committed
/// as docs/stages.md).
public enum StageReference {
    /// The reference of `stages`, in their order.
    public static func markdown(_ stages: [StageDescriptor]) -> String {
        var lines = [
            "# Stage reference", "",
            "<!-- Generated from the code by `pipeline stages --markdown` (`make docs`); do not edit. -->", "",
            "Every stage type a workflow can `use`, with its options (the `with` object) and its outputs "
                + "(`${id.output}`). Sizes are bytes or a string such as `\"8MiB\"`, durations seconds or a string such "
                + "as `\"30s\"`, bit rates bits per second or a string such as `\"2500k\"`.", "",
            "| Stage | Summary |", "| --- | --- |",
        ]
        lines += stages.map { "| [`\($0.stageType)`](#\(anchor($0.stageType))) | \(cell($0.summary)) |" }
        for stage in stages {
            lines += ["", "## `\(stage.stageType)`", "", prose(stage.summary)]
            lines += options(stage.optionSchema)
            lines += outputs(stage.outputSchema)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func options(_ schema: OptionSchema) -> [String] {
        let rows = optionRows(schema, prefix: "")
        guard !rows.isEmpty || schema.additionalFields != nil else { return ["", "No options."] }
        var lines = ["", "| Option | Type | Default | Bounds | Summary |", "| --- | --- | --- | --- | --- |"] + rows
        if let additional = schema.additionalFields {
            lines.append("| any name | \(cell(additional.displayName)) | | | Any option name. |")
        }
        return lines
    }

    /// One row an option, with the options nested in an object (or in each element of an array) after it.
    private static func optionRows(_ schema: OptionSchema, prefix: String) -> [String] {
        schema.fields.flatMap { field -> [String] in
            let name = prefix + field.name
            let value = field.isRequired ? "required" : field.defaultValue.map { code($0.serialized()) } ?? ""
            let row =
                "| `\(name)` | \(cell(field.type.displayName)) | \(value) | \(cell(field.boundsDescription ?? "")) | "
                + "\(cell(field.summary)) |"
            switch field.type {
            case .object(let nested): return [row] + optionRows(nested, prefix: name + ".")
            case .array(.object(let nested)): return [row] + optionRows(nested, prefix: name + "[].")
            default: return [row]
            }
        }
    }

    private static func outputs(_ schema: OutputSchema) -> [String] {
        var lines = ["", "| Output | Summary |", "| --- | --- |"]
        lines += schema.fields.map { field in
            let condition = field.option.map { " (only with the option `\($0)`)" } ?? ""
            return "| `\(field.name)` | \(cell(field.summary))\(condition) |"
        }
        if schema.isOpen { lines.append("| any name | Those the workflow names in `with`. |") }
        return schema.fields.isEmpty && !schema.isOpen ? ["", "No outputs."] : lines
    }

    /// Text that reads as it is written: a `<stem>` would be taken for HTML.
    private static func prose(_ text: String) -> String {
        text.replacingOccurrences(of: "<", with: "&lt;")
    }

    /// Code in a table cell: a `|` still ends the cell, but nothing else is read as Markdown or HTML.
    private static func code(_ text: String) -> String {
        "`" + text.replacingOccurrences(of: "|", with: "\\|") + "`"
    }

    /// Text that stays in its table cell, where a `|` would end the cell.
    private static func cell(_ text: String) -> String {
        prose(text).replacingOccurrences(of: "|", with: "\\|")
    }

    /// The anchor a Markdown renderer gives the heading "`type`": lower case, without the dots.
    private static func anchor(_ stageType: String) -> String {
        String(stageType.lowercased().filter { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
    }
}
