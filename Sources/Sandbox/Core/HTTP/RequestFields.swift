import Foundation
import Hummingbird
import StageKit

/// Small readers of request details shared by the routes.
extension Request {
    /// A query parameter, percent-decoded.
    func query(_ name: String) -> String? {
        self.uri.queryParameters[name[...]].map(String.init)
    }

    /// The `fields=` selection, `nil` when absent.
    var fieldSelection: FieldSelection? {
        FieldSelection(self.query("fields"))
    }

    /// `Idempotency-Key`, trimmed; `nil` when absent or empty.
    var idempotencyKey: String? {
        guard let key = self.headers[.idempotencyKey]?.trimmingCharacters(in: .whitespaces), !key.isEmpty else {
            return nil
        }
        return key
    }

    /// `Idempotency-Key`, unless the `ignoreIdempotencyKeys` fault has the sandbox ignore it (as Vimeo does).
    func idempotencyKey(honouredBy faults: FaultInjector) -> String? {
        faults.faults.ignoreIdempotencyKeys ? nil : self.idempotencyKey
    }

    /// `Content-Length` as a number, `nil` when absent (chunked) or malformed.
    var contentLength: Int64? {
        self.headers[.contentLength].flatMap { Int64($0) }
    }
}

/// Applies a `fields=` selection when there is one.
func selected(_ value: JSONValue, _ selection: FieldSelection?) -> JSONValue {
    selection.map { $0.apply(to: value) } ?? value
}
