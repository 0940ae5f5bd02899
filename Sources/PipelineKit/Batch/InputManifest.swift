public import Foundation
public import StageKit

/// Per-file metadata from one file (`inputs.manifest`): a CSV with a `file` column and a column per field, or
/// a JSON object from file to fields. A file is found by its relative path or its name.
public struct InputManifest: Sendable {
    /// Fields by relative path or file name.
    public var entries: [String: [String: JSONValue]]

    /// No metadata.
    public init(entries: [String: [String: JSONValue]] = [:]) {
        self.entries = entries
    }

    /// Reads a manifest; `.csv` files are CSV, anything else JSON.
    public init(contentsOf url: URL) throws(InputError) {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw InputError(message: "cannot read the manifest \(url.path): \(error.localizedDescription)")
        }
        if url.pathExtension.lowercased() == "csv" {
            var text = String(decoding: data, as: UTF8.self)
            if text.hasPrefix("\u{FEFF}") { text.removeFirst() }  // the byte-order mark spreadsheets write
            entries = try Self.parseCSV(text, file: url.path)
        } else {
            guard case .object(let files)? = try? JSONValue(parsing: data) else {
                throw InputError(message: "the manifest \(url.path) is not a JSON object from file names to fields")
            }
            var entries: [String: [String: JSONValue]] = [:]
            for (file, fields) in files {
                guard case .object(let members) = fields else {
                    throw InputError(message: "the manifest \(url.path): the fields of \(file) are not an object")
                }
                entries[file] = members
            }
            self.entries = entries
        }
    }

    /// The fields for a file: those given for its relative path, else for its name.
    public func fields(for relativePath: String, name: String) -> [String: JSONValue] {
        // Most runs have no manifest: a file's names are then not hashed twice for nothing.
        guard !entries.isEmpty else { return [:] }
        return entries[relativePath] ?? entries[name] ?? [:]
    }

    /// RFC 4180 CSV: a header row naming a `file` column, quoted fields with `""` for a quote.
    private static func parseCSV(_ text: String, file: String) throws(InputError) -> [String: [String: JSONValue]] {
        let rows = csvRows(text)
        guard let header = rows.first, let fileColumn = header.firstIndex(of: "file") else {
            throw InputError(message: "the manifest \(file) has no header row with a \"file\" column")
        }
        var entries: [String: [String: JSONValue]] = [:]
        for (number, values) in rows.dropFirst().enumerated() {
            guard values.count == header.count else {
                throw InputError(
                    message:
                        "the manifest \(file), row \(number + 2): \(values.count) fields where the header has \(header.count)"
                )
            }
            var fields: [String: JSONValue] = [:]
            for (column, name) in header.enumerated() where column != fileColumn {
                fields[name] = .string(values[column])
            }
            entries[values[fileColumn]] = fields
        }
        return entries
    }

    /// The rows of RFC 4180 CSV text, each the list of its fields: unquoted, `""` inside quotes read as a quote, and
    /// blank lines left out.
    private static func csvRows(_ text: String) -> [[String]] {
        var rows: [[String]] = []
        var row: [String] = []
        var field = ""
        var quoted = false
        var iterator = text.makeIterator()
        var pending: Character? = nil
        while let character = pending ?? iterator.next() {
            pending = nil
            if quoted {
                if character == "\"" {
                    if let next = iterator.next() {
                        if next == "\"" {
                            field.append("\"")
                        } else {
                            quoted = false
                            pending = next
                        }
                    } else {
                        quoted = false
                    }
                } else {
                    field.append(character)
                }
                continue
            }
            switch character {
            case "\"" where field.isEmpty: quoted = true
            case ",":
                row.append(field)
                field = ""
            case "\n", "\r\n", "\r":
                row.append(field)
                field = ""
                if row != [""] { rows.append(row) }
                row = []
            default: field.append(character)
            }
        }
        if !field.isEmpty || !row.isEmpty {
            row.append(field)
            rows.append(row)
        }
        return rows
    }
}
