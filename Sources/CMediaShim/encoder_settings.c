// The video encoder's own settings, from the typed fields of ms_transcode_options: the one place that knows which
// FFmpeg encoder writes each codec, each encoder's name or number for a preset, and the parameters x265 and
// SVT-AV1 take for threads and GOPs.
#include "transcoder.h"

#include <errno.h>

#include <libavutil/opt.h>

/// x264's name of each preset (x265 takes the same names) and SVT-AV1's number for it (0, the slowest, to 13).
static const struct {
    const char *name;
    int svt_av1;
} presets[] = {
    [MS_PRESET_ULTRAFAST] = {"ultrafast", 12}, [MS_PRESET_SUPERFAST] = {"superfast", 11},
    [MS_PRESET_VERYFAST] = {"veryfast", 10},   [MS_PRESET_FASTER] = {"faster", 9},
    [MS_PRESET_FAST] = {"fast", 8},            [MS_PRESET_MEDIUM] = {"medium", 7},
    [MS_PRESET_SLOW] = {"slow", 5},            [MS_PRESET_SLOWER] = {"slower", 4},
    [MS_PRESET_VERYSLOW] = {"veryslow", 2},
};
_Static_assert(sizeof presets / sizeof *presets == MS_PRESET_VERYSLOW + 1, "a name for every preset");

const char *ms_video_encoder(int codec) {
    switch (codec) {
    case MS_VIDEO_HEVC: return "libx265";
    case MS_VIDEO_AV1: return "libsvtav1";
    default: return "libx264";
    }
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
    if (o->preset != MS_PRESET_DEFAULT && o->video_codec == MS_VIDEO_AV1)
        ret = ff.av_opt_set_int(enc->priv_data, "preset", presets[o->preset].svt_av1, 0);
    else if (o->preset != MS_PRESET_DEFAULT)
        ret = ff.av_opt_set(enc->priv_data, "preset", presets[o->preset].name, 0);
    if (ret < 0) return refused(enc, "preset", ret, errbuf, errlen);
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
