import Foundation
import PipelineKit

struct FileSize: Stage {
    struct Options: Decodable, Sendable { var file: String }
    struct Outputs: Encodable, Sendable { var bytes: Int }

    static let type = "acme.size"
    static let summary = "Counts the bytes of a file."
    static let optionSchema = OptionSchema([OptionField("file", .string, required: true, "The file.")])
    static let outputSchema = OutputSchema([OutputField("bytes", "Its size.")])

    init() {}

    func run(_ options: Options, context: StageContext) async throws -> Outputs {
        guard let size = try? FileManager.default.attributesOfItem(atPath: options.file)[.size] as? Int else {
            throw StageFailure("cannot read \(options.file)")  // fatal; StageFailure.retryable(...) to retry
        }
        return Outputs(bytes: size)
    }
}
