import CMediaShim
import Foundation
import StageKit
import Testing

@testable import MediaStages

/// The settings as they are stored (segment plans and their ids keep their JSON) and as the shim takes them
/// (typed fields, no strings).
struct TranscodeSettingsTests {
    /// The JSON of a setting, with sorted keys.
    private func json(_ settings: TranscodeSettings) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(settings), as: UTF8.self)
    }

    @Test func theStoredJSONKeepsItsShape() throws {
        var settings = TranscodeSettings()
        settings.codec = .h264
        settings.preset = .veryfast
        settings.threads = 2
        #expect(settings.videoCodec == nil)
        #expect(
            try json(settings)
                == #"{"faststart":true,"mode":"transcode","preset":"veryfast","streams":"all","threads":2}"#)
        settings.codec = .av1
        settings.preset = .slower
        #expect(try json(settings).contains(#""preset":"slower""#))
        #expect(try json(settings).contains(#""videoCodec":"av1""#))

        // Settings stored before the codec and the preset were types read back as they were written.
        let stored = Data(
            #"{"mode":"transcode","videoCodec":"hevc","preset":"medium","faststart":false,"threads":4,"streams":"video"}"#
                .utf8)
        let read = try JSONDecoder().decode(TranscodeSettings.self, from: stored)
        #expect(read.codec == .hevc && read.preset == .medium && read.threads == 4 && read.streams == .video)
    }

    @Test func theOptionsOfferTheSameChoices() {
        #expect(VideoCodec.optionType == .oneOf(["h264", "hevc", "av1"]))
        let presets = ["ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow"]
        #expect(EncoderPreset.optionType == .oneOf(presets))
    }

    /// The presets go to the shim in the order both sides list them, fastest first.
    @Test func everyPresetIsTheShimsOfTheSameName() {
        let shim = EncoderPreset.allCases.map { Int($0.shimPreset.rawValue) }
        #expect(shim == Array(1...Int(MS_PRESET_VERYSLOW.rawValue)))
    }

    @Test func theShimGetsTypedEncoderSettings() {
        var settings = TranscodeSettings()
        var options = settings.shimOptions
        #expect(options.video_codec == Int32(MS_VIDEO_H264.rawValue))
        #expect(options.preset == Int32(MS_PRESET_DEFAULT.rawValue))
        #expect(options.closed_gop == 0)

        settings.codec = .hevc
        settings.preset = .ultrafast
        settings.keyframeInterval = 2  // a ladder's rendition: its keyframes must stand alone
        settings.threads = 3
        options = settings.shimOptions
        #expect(options.video_codec == Int32(MS_VIDEO_HEVC.rawValue))
        #expect(options.preset == Int32(MS_PRESET_ULTRAFAST.rawValue))
        #expect(options.closed_gop == 1)
        #expect(options.threads == 3 && options.keyframe_interval == 2)
    }

    /// Another codec than the profile's drops the profile's CRF and preset; H.264 is stored as no codec.
    @Test func anotherCodecThanTheProfilesDropsItsCRFAndPreset() throws {
        let options = try TranscodeStage.decodeOptions(["profile": "archive-hevc", "video": ["codec": "h264"]])
        let (settings, rules) = try TranscodeStage.settings(from: options)
        #expect(settings.videoCodec == nil && settings.crf == nil && settings.preset == nil)
        #expect(rules.codec == .h264)
        let kept = try TranscodeStage.settings(from: try TranscodeStage.decodeOptions(["profile": "archive-hevc"])).0
        #expect(kept.codec == .hevc && kept.crf == 22 && kept.preset == .medium)
    }

    /// A whole CRF encodes as the integer it was before CRFs took fractions, so segment plan ids do not change.
    @Test func aWholeCRFEncodesAsAnInteger() throws {
        var settings = TranscodeSettings()
        settings.crf = 22
        let whole = String(decoding: try JSONEncoder().encode(settings), as: UTF8.self)
        #expect(whole.contains("\"crf\":22,") || whole.contains("\"crf\":22}"), "\(whole)")
        settings.crf = 22.25
        #expect(String(decoding: try JSONEncoder().encode(settings), as: UTF8.self).contains("\"crf\":22.25"))
    }
}
