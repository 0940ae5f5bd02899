import Foundation
import MediaStages
import StageKit
import TestSupport
import Testing

/// An HDR source exported with an SDR profile is tone-mapped into BT.709, not just cut to 8 bits.
@Suite struct ToneMappingTests {
    let folder = temporaryFolder()

    /// A half-second 10-bit HEVC clip tagged BT.2020 + PQ whose luma is the expression `luma` of X (neutral
    /// chroma); `lossless` keeps 1-pixel detail.
    private func pqClip(_ name: String, luma: String, lossless: Bool = false) async throws -> URL {
        let file = folder.appendingPathComponent("\(name).mkv")
        let made = await runTool(
            "/usr/bin/ffmpeg",
            [
                "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i",
                "nullsrc=s=160x96:r=24:d=0.5,format=yuv420p10le,geq=lum='\(luma)':cb=512:cr=512",
                "-c:v", "libx265", "-preset", "ultrafast", "-x265-params",
                lossless ? "log-level=error:lossless=1" : "log-level=error",
                "-pix_fmt", "yuv420p10le", "-color_primaries", "bt2020", "-color_trc", "smpte2084", "-colorspace",
                "bt2020nc", file.path,
            ])
        try #require(made.status == 0, "\(made.stderr)")
        return file
    }

    /// Its left half at PQ code 327 (about 10 nits), its right half at 723 (about 1000 nits, a highlight).
    private func pqSource() async throws -> URL { try await pqClip("pq", luma: "if(lt(X,W/2),327,723)") }

    /// The mean 8-bit luma code value of the first frame's left and right quarters (away from the edge between).
    private func luma(_ path: String, filter: [String] = []) async throws -> (left: Double, right: Double) {
        let decoded = await runTool(
            "/usr/bin/ffmpeg",
            ["-nostdin", "-v", "error", "-i", path, "-frames:v", "1"] + filter + [
                "-f", "rawvideo", "-pix_fmt", "yuv420p", "-",
            ])
        let bytes = Array(decoded.stdout)
        try #require(bytes.count >= 160 * 96, "\(decoded.stderr)")
        func mean(_ columns: Range<Int>) -> Double {
            var sum = 0
            for row in 0..<96 { for column in columns { sum += Int(bytes[row * 160 + column]) } }
            return Double(sum) / Double(96 * columns.count)
        }
        return (mean(8..<32), mean(128..<152))
    }

    @Test func aPQSourceIsToneMappedIntoBT709() async throws {
        let input = try await pqSource()
        let output = folder.appendingPathComponent("web.mp4")
        let run = await StageHarness(stateFolder: folder.appendingPathComponent("state")).run(
            TranscodeStage.self,
            options: [
                "file": .string(input.path), "output": .string(output.path), "mode": "auto", "profile": "web-720p",
                "video": ["preset": "ultrafast"], "threads": 1,
            ])
        _ = try run.outputs.get()
        let video = try #require(try await Probe.of(output.path).stream("video"))
        #expect(video["pix_fmt"] == "yuv420p")
        for tag in ["color_transfer", "color_primaries", "color_space"] {
            #expect(video[tag] == "bt709", "\(tag): \(String(describing: video[tag]))")
        }
        // The same clip converted without tone mapping (its code values kept, only cut to 8 bits) is flat: PQ puts
        // a 1000-nit highlight at 181 of 235 and 10 nits at 82. Tone mapping restores SDR's contrast: the
        // highlight goes to SDR's white, the dim half gets darker; both stay within the limited range.
        let plain = try await luma(input.path, filter: ["-vf", "format=yuv420p"])
        let mapped = try await luma(output.path)
        #expect(abs(plain.left - 82) < 3 && abs(plain.right - 181) < 3, "plain conversion: \(plain)")
        #expect(mapped.right > plain.right + 30, "highlight: \(mapped.right), plain \(plain.right)")
        #expect(mapped.left < plain.left - 5, "shadow: \(mapped.left), plain \(plain.left)")
        #expect(mapped.left >= 16 && mapped.right <= 236, "\(mapped)")
    }

    /// Columns 1 pixel wide, 1000 nits and black in turn.
    private func pqStripes() async throws -> URL {
        try await pqClip("stripes", luma: "if(mod(X,2),723,64)", lossless: true)
    }

    /// An export smaller than its source is scaled in linear light: columns of 1000 nits and black average to
    /// 500 nits, brighter than the columns' code values average to at full size (scaled in PQ's code values, or
    /// after the tone curve, they would come out darker or the same).
    @Test func aSmallerExportIsScaledInLinearLight() async throws {
        let input = try await pqStripes()
        var means: [Double] = []
        for maxWidth in [160, 80] {
            let output = folder.appendingPathComponent("stripes-\(maxWidth).mp4")
            let run = await StageHarness(stateFolder: folder.appendingPathComponent("state-\(maxWidth)")).run(
                TranscodeStage.self,
                options: [
                    "file": .string(input.path), "output": .string(output.path), "mode": "transcode",
                    "video": ["preset": "ultrafast", "crf": 1, "maxWidth": .int(maxWidth)], "threads": 1,
                ])
            _ = try run.outputs.get()
            let video = try #require(try await Probe.of(output.path).stream("video"))
            #expect(video["width"]?.intValue == maxWidth && video["height"]?.intValue == maxWidth * 96 / 160)
            let mapped = try await luma(output.path, filter: ["-vf", "scale=160:96:flags=neighbor"])
            means.append((mapped.left + mapped.right) / 2)
        }
        #expect(means[1] > means[0] + 15, "full size, then half: \(means)")
    }

    /// A thumbnail of an HDR source is tone-mapped as the export is, not washed out.
    @Test func aPQThumbnailIsToneMapped() async throws {
        let input = try await pqSource()
        let jpeg = folder.appendingPathComponent("thumb.jpg")
        _ = try await MediaToolkit.thumbnail(input.path, to: jpeg.path, at: 0, maxWidth: 0)
        let plain = try await luma(input.path, filter: ["-vf", "format=yuv420p"])
        let mapped = try await luma(jpeg.path)  // the JPEG's full range read back as limited, as the export's
        #expect(mapped.right > plain.right + 30, "highlight: \(mapped.right), plain \(plain.right)")
        #expect(mapped.left < plain.left - 5, "shadow: \(mapped.left), plain \(plain.left)")
    }
}
