// Shared by probe, transcode, remux and thumbnail: version, error texts and messages, and the
// input side (open a file safely, pick streams, open a decoder).
// No libm function is used anywhere in this target (only macros such as isnan): SwiftPM does not
// link libm into C targets on its own, and the FFmpeg pkg-config flags do not bring it either.
#define _GNU_SOURCE  // dl_iterate_phdr
#include "ms_internal.h"

#include <errno.h>
#include <limits.h>
#include <link.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libavutil/display.h>
#include <libswscale/swscale.h>

// Our codes must never be mistaken for FFmpeg's: AVERROR(errno) is small, FFmpeg's tags are huge.
_Static_assert(MS_ERROR_QUALITY_MISMATCH < -4096 && MS_ERROR_INVALID_ARGUMENT > -0x10000000, "ms_error range");
_Static_assert(AVERROR_EOF < -0x10000000 && AVERROR_INVALIDDATA < -0x10000000, "FFmpeg tags are large");
_Static_assert(AVERROR_EXPERIMENTAL < -0x10000000 && AVERROR_BUG < -0x10000000, "FFmpeg tags are large");
// Layout checks: the Swift side imports these structs; a change here must bump MS_ABI_VERSION.
_Static_assert(MS_ABI_VERSION == 15, "update the layout checks below with the ABI version");
_Static_assert(sizeof(ms_media_info) == 8 * MS_NAME_LEN + 200, "ms_media_info layout changed");
_Static_assert(sizeof(ms_transcode_options) == 136 && offsetof(ms_transcode_options, encoder_psnr) == 128,
               "ms_transcode_options layout changed");
_Static_assert(offsetof(ms_transcode_options, video_codec) == 24 && offsetof(ms_transcode_options, closed_gop) == 32,
               "ms_transcode_options' encoder settings moved");
_Static_assert(sizeof(ms_transcode_result) == 80, "ms_transcode_result layout changed");
_Static_assert(sizeof(ms_quality_scores) == 24 && offsetof(ms_quality_scores, count) == 8 &&
                   offsetof(ms_quality_scores, width) == 16,
               "ms_quality_scores layout changed");
_Static_assert(sizeof(ms_scene_changes) == 32 && offsetof(ms_scene_changes, count) == 16,
               "ms_scene_changes layout changed");

int ms_abi_version(void) { return MS_ABI_VERSION; }

static const char *ms_error_text(int code) {
    switch (code) {
    case MS_ERROR_INVALID_ARGUMENT: return "invalid argument";
    case MS_ERROR_INPUT_NOT_FOUND: return "file not found";
    case MS_ERROR_NOT_MEDIA: return "not a media file, or damaged or incomplete";
    case MS_ERROR_NO_VIDEO: return "no video stream";
    case MS_ERROR_UNSUPPORTED_CODEC: return "unsupported codec";
    case MS_ERROR_REMUX_UNSUPPORTED: return "MP4 cannot hold this codec (transcode instead)";
    case MS_ERROR_OUTPUT_OPEN: return "cannot create the output file";
    case MS_ERROR_DISK_FULL: return "disk full";
    case MS_ERROR_CANCELLED: return "cancelled";
    case MS_ERROR_NO_FRAMES: return "no video frame could be decoded";
    case MS_ERROR_FFMPEG_UNAVAILABLE: return "FFmpeg's libraries cannot be loaded";
    case MS_ERROR_NO_AUDIO: return "no audio stream";
    case MS_ERROR_EVERY_PART_EMPTY: return "every part is empty: no video frame could be decoded";
    case MS_ERROR_QUALITY_UNSUPPORTED: return "a quality measurement compares 8-bit 4:2:0 SDR video only";
    case MS_ERROR_QUALITY_MISMATCH: return "the two files cannot be compared frame by frame";
    default: return NULL;
    }
}

int ms_strerror(int code, char *buf, size_t len) {
    if (!buf || len == 0) return 0;
    const char *ours = ms_error_text(code);
    if (ours) {
        snprintf(buf, len, "%s", ours);
        return 0;
    }
    if (ms_ffmpeg_load(NULL, 0) < 0) {
        snprintf(buf, len, "error %d", code);
        return 0;
    }
    return ff.av_strerror(code, buf, len);  // writes "Error number N occurred" when unknown
}

int ms_begin(char *errbuf, size_t errlen) {
    if (errbuf && errlen) errbuf[0] = '\0';
    int ret = ms_ffmpeg_load(errbuf, errlen);
    ms_log_clear();
    return ret;
}

int ms_fail(char *errbuf, size_t errlen, int code, int cause, const char *what, ...) {
    if (!errbuf || errlen == 0) return code;
    va_list ap;
    va_start(ap, what);
    int n = vsnprintf(errbuf, errlen, what, ap);
    va_end(ap);
    size_t used = n < 0 ? 0 : (size_t)n < errlen ? (size_t)n : errlen - 1;
    char cause_text[256];
    ms_strerror(cause, cause_text, sizeof cause_text);
    const char *logged = ms_log_last_error();
    if (logged[0] && strcmp(logged, cause_text) != 0) {
        snprintf(errbuf + used, errlen - used, ": %s (%s)", cause_text, logged);
    } else {
        snprintf(errbuf + used, errlen - used, ": %s", cause_text);
    }
    return code;
}

double ms_seconds(int64_t ts, AVRational tb) {
    return ts == AV_NOPTS_VALUE ? 0 : (double)ts * av_q2d(tb);
}

int64_t ms_microseconds(double seconds) { return (int64_t)(seconds * AV_TIME_BASE + 0.5); }

/// What find_library looks for and what it found.
typedef struct library_search {
    char prefix[64];  // "libx265.so."
    char path[4096];  // the loaded object's path, "" until found
} library_search;

/// dl_iterate_phdr callback: the first loaded object whose file name starts with the prefix.
static int find_library(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    library_search *search = data;
    const char *slash = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
    const char *file = slash ? slash + 1 : info->dlpi_name;
    if (!file || strncmp(file, search->prefix, strlen(search->prefix)) != 0) return 0;
    snprintf(search->path, sizeof search->path, "%s", info->dlpi_name);
    return 1;
}

int ms_library_version(const char *name, char *buf, size_t len) {
    if (buf && len) buf[0] = '\0';
    if (!name || !buf || len == 0 || strlen(name) > 40) return MS_ERROR_INVALID_ARGUMENT;
    if (ms_ffmpeg_load(NULL, 0) < 0) return MS_ERROR_INVALID_ARGUMENT;  // libavcodec brings the encoders in
    library_search search = {.path = ""};
    snprintf(search.prefix, sizeof search.prefix, "lib%s.so.", name);
    dl_iterate_phdr(find_library, &search);
    if (!search.path[0]) return MS_ERROR_INVALID_ARGUMENT;
    // The soname (libSvtAv1Enc.so.1) is a link to the file that names the whole version.
    char resolved[PATH_MAX];
    const char *path = realpath(search.path, resolved) ? resolved : search.path;
    const char *file = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    if (strncmp(file, search.prefix, strlen(search.prefix)) != 0) file = strrchr(search.path, '/') + 1;
    snprintf(buf, len, "%s", file + strlen(search.prefix));
    return 0;
}

unsigned ms_avcodec_version(void) { return ms_ffmpeg_load(NULL, 0) < 0 ? 0 : ff.avcodec_version(); }

unsigned ms_cpu_flags(void) { return ms_ffmpeg_load(NULL, 0) < 0 ? 0 : (unsigned)ff.av_get_cpu_flags(); }

char *ms_file_url(const char *path) { return ff.av_asprintf("file:%s", path); }

int ms_open_file(const char *path, AVFormatContext **ifmt) {
    AVDictionary *opts = NULL;
    char *url = ms_file_url(path);
    if (!url) return AVERROR(ENOMEM);
    ff.av_dict_set(&opts, "protocol_whitelist", "file", 0);
    int ret = ff.avformat_open_input(ifmt, url, NULL, &opts);
    ff.av_dict_free(&opts);
    ff.av_free(url);
    return ret;
}

int ms_open_input(const char *path, AVFormatContext **ifmt, char *errbuf, size_t errlen) {
    int ret = ms_open_file(path, ifmt);
    if (ret < 0) {
        int code = ret == AVERROR(ENOENT) ? MS_ERROR_INPUT_NOT_FOUND
                   : ret == AVERROR_INVALIDDATA ? MS_ERROR_NOT_MEDIA : ret;
        return ms_fail(errbuf, errlen, code, ret, "cannot open '%s'", path);
    }
    ret = ff.avformat_find_stream_info(*ifmt, NULL);
    if (ret < 0 || (*ifmt)->nb_streams == 0) {
        ff.avformat_close_input(ifmt);
        int code = ret == AVERROR(ENOMEM) ? ret : MS_ERROR_NOT_MEDIA;
        return ms_fail(errbuf, errlen, code, ret < 0 ? ret : MS_ERROR_NOT_MEDIA, "cannot read '%s'", path);
    }
    return 0;
}

int ms_find_video_stream(AVFormatContext *ifmt) {
    int idx = ff.av_find_best_stream(ifmt, AVMEDIA_TYPE_VIDEO, -1, -1, NULL, 0);
    if (idx >= 0 && !(ifmt->streams[idx]->disposition & AV_DISPOSITION_ATTACHED_PIC)) return idx;
    for (unsigned i = 0; i < ifmt->nb_streams; i++) {  // best was a cover picture: any real video?
        const AVStream *st = ifmt->streams[i];
        if (st->codecpar->codec_type == AVMEDIA_TYPE_VIDEO && !(st->disposition & AV_DISPOSITION_ATTACHED_PIC))
            return (int)i;
    }
    return -1;
}

int ms_find_audio_stream(AVFormatContext *ifmt, int video) {
    int idx = ff.av_find_best_stream(ifmt, AVMEDIA_TYPE_AUDIO, -1, video, NULL, 0);
    return idx >= 0 ? idx : -1;
}

int ms_stream_rotation(const AVStream *st) {
    size_t size = 0;
    const uint8_t *m = ff.av_stream_get_side_data(st, AV_PKT_DATA_DISPLAYMATRIX, &size);
    if (!m || size < 9 * sizeof(int32_t)) return 0;
    double ccw = ff.av_display_rotation_get((const int32_t *)m);  // counter-clockwise, (-180, 180]
    if (isnan(ccw)) return 0;
    double quarters = -ccw / 90.0;  // clockwise; rounded to the nearest quarter turn below
    int cw = (int)(quarters < 0 ? quarters - 0.5 : quarters + 0.5) * 90;
    return ((cw % 360) + 360) % 360;
}

int ms_open_decoder(const AVStream *st, int threads, AVCodecContext **dec, char *errbuf, size_t errlen) {
    const AVCodec *codec = ff.avcodec_find_decoder(st->codecpar->codec_id);
    if (!codec) {
        const char *type = ff.av_get_media_type_string(st->codecpar->codec_type);
        char tag[AV_FOURCC_MAX_STRING_SIZE];
        return ms_fail(errbuf, errlen, MS_ERROR_UNSUPPORTED_CODEC, MS_ERROR_UNSUPPORTED_CODEC,
                       "no decoder for the %s codec '%s' (tag %s) of stream %d", type ? type : "",
                       ff.avcodec_get_name(st->codecpar->codec_id),
                       ff.av_fourcc_make_string(tag, st->codecpar->codec_tag), st->index);
    }
    *dec = ms_new_codec_context(codec);
    if (!*dec) return ms_fail(errbuf, errlen, AVERROR(ENOMEM), AVERROR(ENOMEM), "decoder");
    int ret = ff.avcodec_parameters_to_context(*dec, st->codecpar);
    if (ret >= 0) {
        (*dec)->pkt_timebase = st->time_base;
        (*dec)->thread_count = threads;
        ret = ff.avcodec_open2(*dec, codec, NULL);
    }
    if (ret < 0) {
        ff.avcodec_free_context(dec);
        return ms_fail(errbuf, errlen, ret, ret, "cannot open the %s decoder", codec->name);
    }
    return 0;
}

void ms_fit_size(int w, int h, int max_w, int max_h, int *out_w, int *out_h) {
    double scale = 1;
    if (max_w > 0 && w > max_w) scale = FFMIN(scale, (double)max_w / w);
    if (max_h > 0 && h > max_h) scale = FFMIN(scale, (double)max_h / h);
    int ow = (int)(w * scale + 1e-9) & ~1;
    int oh = (int)(h * scale + 1e-9) & ~1;
    *out_w = ow < 2 ? 2 : ow;
    *out_h = oh < 2 ? 2 : oh;
}

int ms_full_range_format(int format) {
    return format == AV_PIX_FMT_YUVJ420P || format == AV_PIX_FMT_YUVJ422P || format == AV_PIX_FMT_YUVJ444P ||
           format == AV_PIX_FMT_YUVJ440P || format == AV_PIX_FMT_YUVJ411P;
}

/// The yuv format a yuvj one stands for (swscale warns about yuvj formats; the range is given apart).
static enum AVPixelFormat plain_format(int format) {
    switch (format) {
    case AV_PIX_FMT_YUVJ420P: return AV_PIX_FMT_YUV420P;
    case AV_PIX_FMT_YUVJ422P: return AV_PIX_FMT_YUV422P;
    case AV_PIX_FMT_YUVJ444P: return AV_PIX_FMT_YUV444P;
    case AV_PIX_FMT_YUVJ440P: return AV_PIX_FMT_YUV440P;
    case AV_PIX_FMT_YUVJ411P: return AV_PIX_FMT_YUV411P;
    default: return (enum AVPixelFormat)format;
    }
}

/// The options of a scaler that ms_scale sets, in the order of its key.
static const char *const scaler_keys[8] = {"srcw", "srch", "src_format", "src_range",
                                           "dstw", "dsth", "dst_format", "dst_range"};

int ms_scale(ms_scaler *scaler, const AVFrame *src, AVFrame *dst) {
    // The ranges are given before the scaler is set up: it picks its conversion then, and for two pictures of
    // one size and format, one that copies the samples unchanged; setting the ranges afterwards
    // (sws_setColorspaceDetails) does not undo that choice, so a full-range picture would stay full range.
    const int64_t key[8] = {src->width, src->height, plain_format(src->format),
                            src->color_range == AVCOL_RANGE_JPEG || ms_full_range_format(src->format),
                            dst->width, dst->height, dst->format, dst->color_range == AVCOL_RANGE_JPEG};
    if (!scaler->sws || memcmp(scaler->key, key, sizeof key) != 0) {
        ms_scaler_free(scaler);
        if (!(scaler->sws = ff.sws_alloc_context())) return AVERROR(ENOMEM);
        int ret = ff.av_opt_set_int(scaler->sws, "sws_flags", SWS_BICUBIC, 0);
        for (int i = 0; ret >= 0 && i < 8; i++) ret = ff.av_opt_set_int(scaler->sws, scaler_keys[i], key[i], 0);
        if (ret >= 0) ret = ff.sws_init_context(scaler->sws, NULL, NULL);
        if (ret < 0) {
            ms_scaler_free(scaler);
            return ret;
        }
        memcpy(scaler->key, key, sizeof key);
    }
    int ret = ff.av_frame_make_writable(dst);  // the encoder may still hold the previous picture
    if (ret < 0) return ret;
    ff.sws_scale(scaler->sws, (const uint8_t *const *)src->data, src->linesize, 0, src->height, dst->data, dst->linesize);
    return 0;
}

void ms_scaler_free(ms_scaler *scaler) {
    ff.sws_freeContext(scaler->sws);
    scaler->sws = NULL;
}

/// A stream's duration in seconds: its own, else the `DURATION` tag Matroska muxers write per track
/// (`00:00:02.023000000`, the time its last frame ends, so less the time its first starts); 0 when neither is
/// known.
static double stream_duration(const AVStream *st) {
    if (st->duration != AV_NOPTS_VALUE) return st->duration * av_q2d(st->time_base);
    const AVDictionaryEntry *tag = ff.av_dict_get(st->metadata, "DURATION", NULL, 0);
    unsigned hours = 0, minutes = 0;
    double seconds = 0;
    if (!tag || sscanf(tag->value, "%u:%u:%lf", &hours, &minutes, &seconds) != 3) return 0;
    double start = st->start_time != AV_NOPTS_VALUE ? st->start_time * av_q2d(st->time_base) : 0;
    return FFMAX(0, hours * 3600.0 + minutes * 60.0 + seconds - start);
}

double ms_media_duration(const AVFormatContext *ifmt) {
    double video = 0, audio = 0;
    for (unsigned i = 0; i < ifmt->nb_streams; i++) {
        const AVStream *st = ifmt->streams[i];
        if (st->disposition & AV_DISPOSITION_ATTACHED_PIC) continue;
        if (st->codecpar->codec_type == AVMEDIA_TYPE_VIDEO) video = FFMAX(video, stream_duration(st));
        if (st->codecpar->codec_type == AVMEDIA_TYPE_AUDIO) audio = FFMAX(audio, stream_duration(st));
    }
    if (video > 0) return video;
    if (audio > 0) return audio;
    return ifmt->duration != AV_NOPTS_VALUE ? (double)ifmt->duration / AV_TIME_BASE : 0;
}

double ms_declared_duration(const AVFormatContext *ifmt) {
    return ifmt->duration_estimation_method == AVFMT_DURATION_FROM_BITRATE ? 0 : ms_media_duration(ifmt);
}
