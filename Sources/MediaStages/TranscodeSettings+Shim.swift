import CMediaShim

/// The settings and the report as the shim takes and gives them (`ms_transcode_options`, `ms_transcode_result`):
/// every field a number or an enum, so nothing is cut to fit or parsed on the other side.
extension TranscodeSettings {
    /// The shim's options for these settings.
    var shimOptions: ms_transcode_options {
        var options = ms_transcode_options()
        ms_transcode_options_init(&options)
        options.mode = Int32(mode == .remux ? MS_MODE_REMUX.rawValue : MS_MODE_TRANSCODE.rawValue)
        options.crf = crf ?? -1
        options.video_bit_rate = videoBitRate ?? 0
        options.video_codec = Int32(codec.shimCodec.rawValue)
        options.preset = Int32((preset?.shimPreset ?? MS_PRESET_DEFAULT).rawValue)
        // A ladder's renditions switch at their forced keyframes: each must stand alone. With open GOPs (libx265's
        // default) a forced keyframe is a CRA picture, whose leading pictures refer to the segment before.
        options.closed_gop = keyframeInterval == nil ? 0 : 1
        options.max_width = Int32(maxWidth ?? 0)
        options.max_height = Int32(maxHeight ?? 0)
        options.max_fps = maxFPS ?? 0
        options.audio_bit_rate = audioBitRate ?? 0
        options.audio_channels = Int32(audioChannels ?? 0)
        options.audio_sample_rate = Int32(audioSampleRate ?? 0)
        options.faststart = faststart ? 1 : 0
        options.threads = Int32(threads)
        options.streams = Int32(streams.shimStreams.rawValue)
        if let range {
            options.range_start = range.start
            options.range_duration = range.end.map { $0 - range.start } ?? 0
        }
        options.keyframe_interval = keyframeInterval ?? 0
        return options
    }
}

extension TranscodeSettings.Streams {
    /// The shim's name for these streams.
    fileprivate var shimStreams: ms_streams {
        switch self {
        case .all: MS_STREAMS_ALL
        case .video: MS_STREAMS_VIDEO
        case .audio: MS_STREAMS_AUDIO
        case .audioAndText: MS_STREAMS_AUDIO_AND_TEXT
        }
    }
}

extension TranscodeReport {
    init(_ result: ms_transcode_result) {
        duration = result.duration
        width = Int(result.display_width)
        height = Int(result.display_height)
        rotation = Int(result.rotation)
        hasAudio = result.has_audio != 0
        size = result.size
        videoFrames = result.video_frames
        decodeErrors = result.decode_errors
        decodedSeconds = result.decoded_seconds
        inputDuration = result.input_duration
        partsLeftOut = Int(result.parts_left_out)
    }
}
