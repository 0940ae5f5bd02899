import Foundation
public import StageKit

/// Why an export cannot write a file that grows behind its head for a stage that streams it (`"stream": true`),
/// decided from the workflow before anything runs: what ``TranscodeStage`` and ``RemuxStage`` tell `validate`.
enum ExportStreaming {
    /// The extensions of the inputs a remux writes behind its head: FFmpeg's MP4 and MOV demuxer lists every sample
    /// when it opens the file, so the index's room is known before the copy starts.
    static let indexedExtensions: Set<String> = ["mp4", "m4v", "mov", "3gp", "3g2"]
    /// FFmpeg's names of that demuxer, as `inputs.limits.containers` gives them.
    static let indexedContainers: Set<String> = ["mov", "mp4", "m4a", "3gp", "3g2", "mj2"]

    /// Why an export with `faststart` set to `false` cannot stream; nil when it is not.
    static func faststartRefusal(_ options: JSONValue) -> String? {
        guard options["faststart"] == .bool(false) else { return nil }
        return
            "faststart is false: the streamed file is a faststart MP4 whose index is written last into room reserved at its head"
    }

    /// Why a remux of the file `inputs` describes cannot stream, when that is known before the run: only an MP4 or
    /// MOV input gets room for the index ahead of the media data. (Any other input found at run time is uploaded
    /// once the remux finished.)
    static func remuxRefusal(inputs: InputSummary) -> String? {
        let reason =
            "a remux writes the index ahead of the media data only from an MP4 or MOV input (others are rewritten with +faststart at the end); upload it after the export"
        if let path = inputs.path {
            let name = (path as NSString).lastPathComponent
            return indexedExtensions.contains((name as NSString).pathExtension.lowercased())
                ? nil : "its file \(name) is not an MP4 or MOV: \(reason)"
        }
        guard inputs.isInputFile else { return nil }
        let containers = inputs.containers.map { $0.lowercased() }
        if !containers.isEmpty, !containers.contains(where: indexedContainers.contains) {
            return "inputs.limits.containers admits no MP4 or MOV: \(reason)"
        }
        if !inputs.include.isEmpty, !inputs.include.contains(where: mayNameIndexedFile) {
            return "inputs.include matches no MP4 or MOV name: \(reason)"
        }
        return nil
    }

    /// Whether an `include` pattern may match the name of an MP4 or MOV file.
    private static func mayNameIndexedFile(_ pattern: String) -> Bool {
        let name = pattern.split(separator: "/").last.map(String.init) ?? pattern
        guard let dot = name.lastIndex(of: ".") else { return name.contains("*") }
        let suffix = name[name.index(after: dot)...].lowercased()
        return suffix.contains(where: { "*?[".contains($0) }) || indexedExtensions.contains(suffix)
    }
}

extension TranscodeStage {
    /// A transcode streams when it joins segments into a faststart MP4, or remuxes an MP4 or MOV, and sets no quality
    /// gate.
    public static func streamRefusal(with options: JSONValue, inputs: InputSummary) -> String? {
        if let refusal = ExportStreaming.faststartRefusal(options) { return refusal }
        if QualityGate.gates(options) {
            return
                "quality sets a bound: the gate measures the finished export, and an upload that streams it would be done before the gate could stop it"
        }
        if options["mode"]?.stringValue == ExportMode.remux.rawValue {
            return ExportStreaming.remuxRefusal(inputs: inputs)
        }
        if let seconds = options["segmentSeconds"],
            [.int(0), .double(0), .string("0"), .string("0s")].contains(seconds)
        {
            return
                "segmentSeconds is 0: an unsegmented encode moves its index to the front in a second pass over the file; give it segments (e.g. \"segmentSeconds\": \"60s\")"
        }
        return nil
    }
}

extension RemuxStage {
    /// A remux streams when it writes a faststart MP4 from an MP4 or MOV.
    public static func streamRefusal(with options: JSONValue, inputs: InputSummary) -> String? {
        ExportStreaming.faststartRefusal(options) ?? ExportStreaming.remuxRefusal(inputs: inputs)
    }
}
