// The video encoder's own settings, from the typed fields of ms_transcode_options: the one place that knows which
// FFmpeg encoder writes each codec, each encoder's name or number for a preset, the parameters x265 and SVT-AV1 take
// for threads and GOPs, and which encoders a range's rolls and first-frame boost suit.
#include "transcoder.h"

#include <errno.h>
#include <math.h>

#include <libavutil/opt.h>

/// What an encoder is told for a preset: x264's name (x265 takes the same names) and SVT-AV1's number (0, the
/// slowest, to 13).
typedef struct preset_setting {
    const char *name;  // NULL: no preset (MS_PRESET_DEFAULT, or a value that is no ms_preset)
    int svt_av1;
} preset_setting;

// A switch without a default, with -Wswitch an error here: a preset added to ms_preset without its case below does
// not compile, so no preset can lack its name or number.
#pragma GCC diagnostic push
#pragma GCC diagnostic error "-Wswitch"
/// The setting of `preset`.
static preset_setting preset_setting_of(ms_preset preset) {
    switch (preset) {
    case MS_PRESET_DEFAULT: break;
    case MS_PRESET_ULTRAFAST: return (preset_setting){"ultrafast", 12};
    case MS_PRESET_SUPERFAST: return (preset_setting){"superfast", 11};
    case MS_PRESET_VERYFAST: return (preset_setting){"veryfast", 10};
    case MS_PRESET_FASTER: return (preset_setting){"faster", 9};
    case MS_PRESET_FAST: return (preset_setting){"fast", 8};
    case MS_PRESET_MEDIUM: return (preset_setting){"medium", 7};
    case MS_PRESET_SLOW: return (preset_setting){"slow", 5};
    case MS_PRESET_SLOWER: return (preset_setting){"slower", 4};
    case MS_PRESET_VERYSLOW: return (preset_setting){"veryslow", 2};
    }
    return (preset_setting){NULL, 0};
}
#pragma GCC diagnostic pop

const char *ms_video_encoder(int codec) {
    switch (codec) {
    case MS_VIDEO_HEVC: return "libx265";
    case MS_VIDEO_AV1: return "libsvtav1";
    default: return "libx264";
    }
}

int ms_encoder_takes_rolls(const ms_transcode_options *opt) { return opt->video_codec == MS_VIDEO_H264; }

int ms_encoder_takes_boost(const ms_transcode_options *opt) {
    // x264 ignores regions of interest without its adaptive quantization (and says so once per encoder). Of what
    // the options set, only preset ultrafast turns it off.
    return opt->video_codec == MS_VIDEO_H264 && opt->preset != MS_PRESET_ULTRAFAST;
}

/// The failure of setting the encoder's private option `key` (`ret` < 0).
static int refused(const AVCodecContext *enc, const char *key, int ret, char *errbuf, size_t errlen) {
    if (ret == AVERROR_OPTION_NOT_FOUND)
        return ms_fail(errbuf, errlen, MS_ERROR_INVALID_ARGUMENT, MS_ERROR_INVALID_ARGUMENT,
                       "the %s encoder has no option '%s'", enc->codec->name, key);
    return ms_fail(errbuf, errlen, ret == AVERROR(ENOMEM) ? ret : MS_ERROR_INVALID_ARGUMENT, ret,
                   "the %s encoder's option '%s'", enc->codec->name, key);
}

/// x265's own parameters, in the order x265 gets them.
static int x265_params(const ms_transcode_options *o, AVDictionary **params) {
    int ret = 0;
    if (o->closed_gop) ret = ff.av_dict_set(params, "open-gop", "0", 0);
    if (ret >= 0) ret = ff.av_dict_set(params, "log-level", "error", 0);  // else x265 prints its banner on stderr
    if (ret >= 0 && o->threads > 0) ret = ff.av_dict_set_int(params, "pools", o->threads, 0);
    if (ret >= 0 && o->threads > 0) ret = ff.av_dict_set_int(params, "frame-threads", FFMIN(o->threads, 4), 0);
    return ret;
}

int ms_set_encoder_options(AVCodecContext *enc, const ms_transcode_options *o, char *errbuf, size_t errlen) {
    int ret = 0;
    if (o->preset != MS_PRESET_DEFAULT) {
        preset_setting preset = preset_setting_of((ms_preset)o->preset);
        if (!preset.name)  // ms_transcode_validate refuses it first
            return ms_fail(errbuf, errlen, MS_ERROR_INVALID_ARGUMENT, MS_ERROR_INVALID_ARGUMENT,
                           "option preset (ms_preset): %d", o->preset);
        ret = o->video_codec == MS_VIDEO_AV1 ? ff.av_opt_set_int(enc->priv_data, "preset", preset.svt_av1, 0)
                                             : ff.av_opt_set(enc->priv_data, "preset", preset.name, 0);
        if (ret < 0) return refused(enc, "preset", ret, errbuf, errlen);
    }
    // SVT-AV1 (FFmpeg 5.1, SVT-AV1 1.4) ignores a frame's forced picture type and makes a keyframe every gop_size
    // frames: a ladder's AV1 rendition gets a GOP of one keyframe interval (exact at a constant frame rate).
    if (o->keyframe_interval > 0 && o->video_codec == MS_VIDEO_AV1)
        enc->gop_size = (int)FFMAX(1, lround(o->keyframe_interval * av_q2d(enc->framerate)));
    // The encoder library's own parameters, which FFmpeg's wrapper hands it one by one.
    AVDictionary *params = NULL;
    const char *key = NULL;
    if (o->video_codec == MS_VIDEO_HEVC) {
        key = "x265-params";
        ret = x265_params(o, &params);
    } else if (o->video_codec == MS_VIDEO_AV1 && o->threads > 0) {
        key = "svtav1-params";
        ret = ff.av_dict_set_int(&params, "lp", o->threads, 0);
    }
    if (key && ret >= 0) ret = ff.av_opt_set_dict_val(enc->priv_data, key, params, 0);
    ff.av_dict_free(&params);
    return ret < 0 ? refused(enc, key, ret, errbuf, errlen) : 0;
}
