import CMediaShim
import Foundation
import TestSupport
import Testing

/// libvmaf's AVX2 code (CVMAFx86) against its C paths: libvmaf picks AVX2 on an x86_64 CPU that has it, and both
/// give the same scores frame by frame. `ms_quality_set_vmaf_simd` is process-wide: these tests assume no other VMAF
/// measurement runs at the same time (`swift test --no-parallel`); one that did would only change which code ran.
@Suite(.serialized) struct VMAFSIMDTests {
    let folder = temporaryFolder()

    /// Whether this machine's CPU reports AVX2 (Linux's /proc/cpuinfo, macOS's sysctl), read apart from libvmaf's
    /// own check.
    static var cpuHasAVX2: Bool {
        #if arch(x86_64) && canImport(Darwin)
            var value: Int32 = 0
            var size = MemoryLayout<Int32>.size
            return sysctlbyname("hw.optional.avx2_0", &value, &size, nil, 0) == 0 && value == 1
        #elseif arch(x86_64)
            let info = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
            return info.split(separator: "\n").contains {
                $0.hasPrefix("flags") && $0.split(separator: " ").contains("avx2")
            }
        #else
            return false
        #endif
    }

    /// The per-frame VMAF of `distorted` against `reference`, and the code libvmaf ran.
    private func vmaf(_ reference: URL, _ distorted: URL, simd: Bool) throws -> (frames: [Double], code: ms_vmaf_simd) {
        ms_quality_set_vmaf_simd(simd ? 1 : 0)
        defer { ms_quality_set_vmaf_simd(1) }
        var scores = ms_quality_scores()
        defer { ms_quality_scores_free(&scores) }
        var message = [CChar](repeating: 0, count: 1024)
        let status = ms_quality(
            reference.path, distorted.path, MS_QUALITY_VMAF, 1, nil, nil, &scores, &message, message.count)
        try #require(
            status == 0, "\(String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))")
        return (Array(UnsafeBufferPointer(start: scores.frames, count: Int(scores.count))), ms_quality_vmaf_simd())
    }

    /// A lossless reference of `source` and its CRF 35 encode.
    private func pair(_ source: String, name: String) async throws -> (reference: URL, encode: URL) {
        let reference = folder.appendingPathComponent("\(name)-reference.mp4")
        let encode = folder.appendingPathComponent("\(name)-crf35.mp4")
        for (input, output, quality) in [(nil, reference, ["-qp", "0"]), (reference, encode, ["-crf", "35"])] {
            let inputArguments = input.map { ["-i", $0.path] } ?? ["-f", "lavfi", "-i", source]
            let made = await runTool(
                "/usr/bin/ffmpeg",
                ["-nostdin", "-v", "error", "-y"] + inputArguments
                    + ["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p"] + quality + [output.path])
            try #require(made.status == 0, "\(made.stderr)")
        }
        return (reference, encode)
    }

    /// A width that is a multiple of 8 (where ADM's 8-bit wavelet has an AVX2 version too) and one that is not.
    @Test(arguments: [
        ("mandelbrot=size=320x180:rate=24,trim=duration=1", "mandelbrot-320"),
        ("testsrc2=size=302x170:rate=24:duration=1", "testsrc2-302"),
    ])
    func theAVX2CodeScoresAsTheCPathsDo(source: String, name: String) async throws {
        let (reference, encode) = try await pair(source, name: name)
        let plain = try vmaf(reference, encode, simd: false)
        #expect(plain.code == MS_VMAF_SIMD_NONE)
        let fast = try vmaf(reference, encode, simd: true)
        #expect(
            fast.code == (Self.cpuHasAVX2 ? MS_VMAF_SIMD_AVX2 : MS_VMAF_SIMD_NONE),
            "libvmaf should pick AVX2 exactly when the CPU has it (AVX2 in /proc/cpuinfo: \(Self.cpuHasAVX2))")
        #expect(plain.frames.count == 24 && fast.frames.count == plain.frames.count)
        let gap = zip(plain.frames, fast.frames).map { abs($0 - $1) }.max() ?? .infinity
        #expect(gap <= 1e-3, "\(name): C paths \(plain.frames), AVX2 \(fast.frames)")
        #expect(plain.frames.contains { $0 < 99 }, "the encode should differ from its reference: \(plain.frames)")
    }
}
