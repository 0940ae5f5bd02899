import StageKit

/// The parts of a streamed upload: those recorded (kept from before, not yet checked against the bytes written
/// again) and those settled (sent by this run, or checked), checkpointed as they change.
actor StreamedParts {
    private(set) var progress: StreamedMultipartUpload.Progress?
    private(set) var settled: Set<Int> = []

    init(progress: StreamedMultipartUpload.Progress?) {
        self.progress = progress
    }

    var sentBytes: Int64 {
        progress?.parts.filter { settled.contains($0.number) }.reduce(0) { $0 + $1.size } ?? 0
    }

    func restart(_ progress: StreamedMultipartUpload.Progress?) {
        self.progress = progress
        settled = []
    }

    func keep(_ parts: [StreamedMultipartUpload.Part]) {
        progress?.parts = parts
        settled.formIntersection(parts.map(\.number))
    }

    func recorded(_ number: Int) -> StreamedMultipartUpload.Part? {
        progress?.parts.first { $0.number == number }
    }

    func settle(_ number: Int) {
        settled.insert(number)
    }

    func unsettleAll() {
        settled = []
    }

    func sent(_ part: StreamedMultipartUpload.Part, context: StageContext) async throws {
        progress?.parts.removeAll { $0.number == part.number }
        progress?.parts.append(part)
        settled.insert(part.number)
        if let progress { try await context.checkpoint(progress) }
    }

    func parts(upTo count: Int) -> [StreamedMultipartUpload.Part] {
        (progress?.parts ?? []).filter { $0.number <= count }.sorted { $0.number < $1.number }
    }
}
