import Foundation
import StageKit
import Testing

/// The bundled samples.
let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("samples")

/// The playable samples with what they contain.
struct Sample: Sendable, CustomTestStringConvertible {
    var name: String
    var videoCodec: String
    var audioCodec: String?
    var displayWidth: Int
    var displayHeight: Int

    var path: String { samples.appendingPathComponent(name).path }
    var testDescription: String { name }

    static let all = [
        Sample(name: "clip-h264-aac.mp4", videoCodec: "h264", audioCodec: "aac", displayWidth: 640, displayHeight: 360),
        Sample(
            name: "clip-mpeg4.mov", videoCodec: "mpeg4", audioCodec: "pcm_s16le", displayWidth: 480, displayHeight: 270),
        Sample(
            name: "clip-portrait-rotated.mp4", videoCodec: "h264", audioCodec: "aac", displayWidth: 360,
            displayHeight: 640),
        Sample(name: "clip-no-audio.mp4", videoCodec: "h264", audioCodec: nil, displayWidth: 426, displayHeight: 240),
        Sample(
            name: "clip-two-audio.mkv", videoCodec: "h264", audioCodec: "opus", displayWidth: 320, displayHeight: 180),
    ]
}

/// What `ffprobe` (the reference tool) says about a file.
struct FFprobe {
    let json: JSONValue

    /// Runs ffprobe on a thread of its own (it decodes the whole file to count frames).
    static func of(_ path: String) async throws -> FFprobe {
        try await BlockingWork.runLong { Result { try FFprobe(path) } }.get()
    }

    private init(_ path: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/ffprobe")
        process.arguments = [
            "-v", "error", "-print_format", "json", "-show_format", "-show_streams", "-count_frames", path,
        ]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        json = try JSONValue(parsing: data)
    }

    func stream(_ type: String) -> JSONValue? {
        json["streams"]?.arrayValue?.first { $0["codec_type"] == .string(type) }
    }

    var streams: [JSONValue] { json["streams"]?.arrayValue ?? [] }
    var duration: Double { Double(json["format"]?["duration"]?.stringValue ?? "") ?? 0 }
    var videoFrames: Int { Int(stream("video")?["nb_read_frames"]?.stringValue ?? "") ?? -1 }
    var fps: Double {
        let parts = (stream("video")?["avg_frame_rate"]?.stringValue ?? "0/1").split(separator: "/").compactMap {
            Double($0)
        }
        return parts.count == 2 && parts[1] > 0 ? parts[0] / parts[1] : 0
    }

    /// Displayed size: coded size turned by the display matrix's rotation.
    var displaySize: (Int, Int) {
        guard let video = stream("video"), let width = video["width"]?.intValue, let height = video["height"]?.intValue
        else {
            return (0, 0)
        }
        let rotation = video["side_data_list"]?.arrayValue?.compactMap { $0["rotation"]?.intValue }.first ?? 0
        return abs(rotation) % 180 == 90 ? (height, width) : (width, height)
    }
}

/// Whether the MP4's `moov` box comes before its `mdat` (faststart).
func moovBeforeMdat(_ path: String) throws -> Bool {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    var offset = 0
    while offset + 8 <= data.count {
        let size = data[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
        let type = String(decoding: data[offset + 4..<offset + 8], as: UTF8.self)
        if type == "moov" { return true }
        if type == "mdat" { return false }
        guard size >= 8 else { return false }
        offset += size
    }
    return false
}

/// A clip made with the ffmpeg CLI (on a thread of its own) for tests that need a longer input.
func makeClip(seconds: Double, size: String, rate: String = "30", at url: URL) async throws {
    try await BlockingWork.runLong {
        Result { try makeClipBlocking(seconds: seconds, size: size, rate: rate, at: url) }
    }.get()
}

private func makeClipBlocking(seconds: Double, size: String, rate: String, at url: URL) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
    process.arguments = [
        "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=\(size):rate=\(rate):duration=\(seconds)",
        "-f", "lavfi", "-i", "sine=frequency=440:duration=\(seconds)", "-c:v", "libx264", "-preset", "ultrafast",
        "-c:a", "aac", "-shortest", url.path,
    ]
    try process.run()
    process.waitUntilExit()
}

/// A temporary folder.
func temporaryFolder() -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("media-\(UUID().uuidString)")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}
