import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import StageKit

/// OSS's XML answers.
enum OSSXML {
    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    static func response(_ xml: String, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.contentType] = "application/xml"
        return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(string: xml)))
    }

    /// A time as OSS writes it (`2012-02-24T06:07:48.000Z`: the SDKs expect the milliseconds).
    static func time(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss'.000Z'"
        return formatter.string(from: date)
    }

    /// The text of every `<name>` element in `xml`, in order (the complete request's `PartNumber` and `ETag`).
    static func elements(_ name: String, in xml: String) -> [String] {
        var found: [String] = []
        var rest = xml[...]
        while let open = rest.range(of: "<\(name)>"), let close = rest[open.upperBound...].range(of: "</\(name)>") {
            found.append(
                String(rest[open.upperBound..<close.lowerBound]).replacingOccurrences(of: "&quot;", with: "\"")
                    .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
                    .replacingOccurrences(of: "&amp;", with: "&"))
            rest = rest[close.upperBound...]
        }
        return found
    }
}
