import Foundation
import StageKit

/// RFC 7231 `IMF-fixdate` (`Sun, 06 Nov 1994 08:49:37 GMT`), the format tus requires for
/// `Upload-Expires`.
enum HTTPDate {
    private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    static func format(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0) ?? calendar.timeZone
        let parts = calendar.dateComponents([.weekday, .day, .month, .year, .hour, .minute, .second], from: date)
        let weekday = Self.weekdays[((parts.weekday ?? 1) - 1 + 7) % 7]
        let month = Self.months[((parts.month ?? 1) - 1 + 12) % 12]
        func two(_ value: Int?) -> String {
            let number = value ?? 0
            return number < 10 ? "0\(number)" : "\(number)"
        }
        return "\(weekday), \(two(parts.day)) \(month) \(parts.year ?? 1970) "
            + "\(two(parts.hour)):\(two(parts.minute)):\(two(parts.second)) GMT"
    }

    /// Reads an `IMF-fixdate` (as OSS clients send `Date`); nil when it is not one.
    static func parse(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.date(from: text)
    }

    /// ISO 8601 with seconds and an offset, as Vimeo writes `created_time`.
    static func iso8601(_ date: Date) -> String {
        date.formatted(.iso8601)
    }
}
