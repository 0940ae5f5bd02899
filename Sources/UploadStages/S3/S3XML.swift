import Foundation

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// The elements of a small S3 XML document as (path, text) pairs in document order, such as
/// `("ListPartsResult/Part/ETag", "\"abc\"")`: enough to read S3's answers without a model per answer.
struct S3XML {
    private(set) var elements: [(path: String, text: String)] = []

    /// Parses `data`; nil when it is not XML (an HTML error page, a truncated body).
    init?(_ data: Data) {
        let collector = Collector()
        let parser = XMLParser(data: data)
        parser.delegate = collector
        guard parser.parse(), !collector.elements.isEmpty else { return nil }
        elements = collector.elements
    }

    /// The text of the first element whose path ends with `suffix` (e.g. `UploadId`, `Error/Code`).
    func first(_ suffix: String) -> String? {
        elements.first { $0.path == suffix || $0.path.hasSuffix("/" + suffix) }?.text
    }

    /// The root element's name.
    var root: String? {
        elements.first.map { String($0.path.split(separator: "/").first ?? "") }
    }

    /// The children of every element named `name` (e.g. each `Part`), as dictionaries.
    func records(_ name: String) -> [[String: String]] {
        var records: [[String: String]] = []
        for (path, text) in elements {
            let parts = path.split(separator: "/").map(String.init)
            if parts.last == name {
                records.append([:])
            } else if parts.count >= 2, parts[parts.count - 2] == name, !records.isEmpty {
                records[records.count - 1][parts[parts.count - 1]] = text
            }
        }
        return records
    }

    private final class Collector: NSObject, XMLParserDelegate {
        var elements: [(path: String, text: String)] = []
        private var stack: [String] = []
        private var text = ""

        func parser(
            _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            stack.append(name)
            text = ""
            elements.append((stack.joined(separator: "/"), ""))
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            text += string
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            let path = stack.joined(separator: "/")
            if let index = elements.lastIndex(where: { $0.path == path }) {
                elements[index].text = text.trimmingCharacters(in: .whitespacesAndNewlines)
            }
            stack.removeLast()
            text = ""
        }
    }
}

/// Escapes text for an XML element.
func xmlEscaped(_ text: String) -> String {
    text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
        .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
}
