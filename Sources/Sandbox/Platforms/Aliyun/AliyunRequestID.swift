import StageKit

extension RandomID {
    /// A request id in the shape Alibaba Cloud answers (upper-case hex groups).
    static func requestID() -> String {
        let hex = RandomID.hex(bytes: 16).uppercased()
        let characters = Array(hex)
        return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(characters[$0]) }.joined(separator: "-")
    }
}
