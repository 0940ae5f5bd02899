import Foundation
package import HTTPTransport
import StageKit

extension HTTPFailure {
    /// The failure for a platform API's answer that is not the one asked for: the platform's own error text
    /// (`error`, `developer_message` or `message` of its JSON body) is the detail the status table reads, and
    /// Vimeo's `error_code` refines the kind where the status alone is ambiguous.
    package static func platform(_ answer: HTTPAnswer, doing action: String) -> HTTPFailure {
        let json = try? JSONValue(parsing: answer.text)
        let said = json.flatMap { value in
            [value["error"]?.stringValue, value["developer_message"]?.stringValue, value["message"]?.stringValue]
                .compactMap { $0 }.first
        }
        let failure = HTTPFailure.answer(answer, doing: action, detail: said)
        switch json?["error_code"]?.intValue {
        // Vimeo's 403 for an upload beyond the account's free space, whatever its text says.
        case 4101: return failure.refined(as: .quotaExceeded)
        default: return failure
        }
    }
}
