// ms_package_hls: one rendition's MP4 copied into an HLS rendition of fragmented MP4 segments, through
// libavformat's hls muxer.
#include "ms_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct packager {
    AVFormatContext *ifmt, *ofmt;
    AVPacket *pkt;
    char *errbuf;
    size_t errlen;
} packager;

/// "file:<folder of playlist>/<name>" (av_free it), or NULL if out of memory.
static char *sibling_url(const char *playlist, const char *name) {
    const char *slash = strrchr(playlist, '/');
    int folder = slash ? (int)(slash - playlist + 1) : 0;
    return ff.av_asprintf("file:%.*s%s", folder, playlist, name);
}

static int open_output(packager *p, const char *playlist, double segment_seconds) {
    char *url = ms_file_url(playlist);
    if (!url) return ms_fail(p->errbuf, p->errlen, AVERROR(ENOMEM), AVERROR(ENOMEM), "cannot create '%s'", playlist);
    int ret = ff.avformat_alloc_output_context2(&p->ofmt, NULL, "hls", url);
    ff.av_free(url);
    if (ret < 0) return ms_fail(p->errbuf, p->errlen, ret, ret, "cannot set up the HLS muxer");
    // The muxer opens the playlist, the init segment and every segment through io_open, which honours this.
    p->ofmt->protocol_whitelist = ff.av_strdup("file");
    if (!p->ofmt->protocol_whitelist) return ms_fail(p->errbuf, p->errlen, AVERROR(ENOMEM), AVERROR(ENOMEM), "muxer");
    for (unsigned i = 0; i < p->ifmt->nb_streams; i++) {
        if ((ret = ms_add_copy_stream(p->ofmt, p->ifmt->streams[i], p->errbuf, p->errlen)) < 0) return ret;
    }
    char *segments = sibling_url(playlist, "seg_%05d.m4s");
    if (!segments) return ms_fail(p->errbuf, p->errlen, AVERROR(ENOMEM), AVERROR(ENOMEM), "muxer");
    AVDictionary *opts = NULL;
    ff.av_dict_set(&opts, "hls_segment_type", "fmp4", 0);
    ff.av_dict_set(&opts, "hls_playlist_type", "vod", 0);
    ff.av_dict_set(&opts, "hls_flags", "independent_segments", 0);
    ff.av_dict_set(&opts, "hls_fmp4_init_filename", "init.mp4", 0);
    ff.av_dict_set(&opts, "hls_segment_filename", segments, 0);
    // Left to shift timestamps, libavformat moves a video with B-frames (its first decode time below 0) later by
    // the B-frame delay, and the init segment then delays it against the audio (80 ms at 25 fps with x264's
    // veryfast). Kept as they are, the first picture is shown at 0, as in the rendition's MP4.
    ff.av_dict_set(&opts, "avoid_negative_ts", "disabled", 0);
    char seconds[32];
    snprintf(seconds, sizeof seconds, "%.6f", segment_seconds);
    ff.av_dict_set(&opts, "hls_time", seconds, 0);
    ff.av_free(segments);
    ms_log_clear();
    ret = ff.avformat_write_header(p->ofmt, &opts);
    const AVDictionaryEntry *unknown = ret >= 0 ? ff.av_dict_get(opts, "", NULL, AV_DICT_IGNORE_SUFFIX) : NULL;
    ff.av_dict_free(&opts);
    if (unknown) return ms_fail(p->errbuf, p->errlen, MS_ERROR_INVALID_ARGUMENT, MS_ERROR_INVALID_ARGUMENT,
                                "the HLS muxer of this FFmpeg has no option '%s'", unknown->key);
    if (ret < 0) {
        int code = ret == AVERROR(ENOSPC) || ret == AVERROR(EDQUOT) ? MS_ERROR_DISK_FULL
                   : ret == AVERROR(ENOENT) || ret == AVERROR(EACCES) ? MS_ERROR_OUTPUT_OPEN : ret;
        return ms_fail(p->errbuf, p->errlen, code, ret, "cannot start the HLS rendition '%s'", playlist);
    }
    return 0;
}

static int run(packager *p, const char *in, const char *playlist, double segment_seconds, ms_progress *progress) {
    int ret = ms_open_input(in, &p->ifmt, p->errbuf, p->errlen);
    if (ret < 0) return ret;
    progress->total = ms_media_duration(p->ifmt);
    if (!(p->pkt = ff.av_packet_alloc())) return ms_fail(p->errbuf, p->errlen, AVERROR(ENOMEM), AVERROR(ENOMEM), "packet");
    if ((ret = open_output(p, playlist, segment_seconds)) < 0) return ret;
    if ((ret = ms_progress_report(progress, 0)) < 0) return ms_fail(p->errbuf, p->errlen, ret, ret, "packaging");
    for (;;) {
        ret = ff.av_read_frame(p->ifmt, p->pkt);
        if (ret == AVERROR_EOF) break;
        if (ret < 0) return ms_fail(p->errbuf, p->errlen, ret, ret, "cannot read '%s'", in);
        const AVStream *ist = p->ifmt->streams[p->pkt->stream_index];
        const AVStream *ost = p->ofmt->streams[p->pkt->stream_index];
        double at = ms_seconds(p->pkt->pts, ist->time_base);
        ff.av_packet_rescale_ts(p->pkt, ist->time_base, ost->time_base);
        p->pkt->pos = -1;
        if ((ret = ms_write_packet(p->ofmt, p->pkt, p->errbuf, p->errlen)) < 0) return ret;
        if ((ret = ms_progress_report(progress, at)) < 0) return ms_fail(p->errbuf, p->errlen, ret, ret, "packaging");
    }
    return ms_write_trailer(p->ofmt, p->errbuf, p->errlen);
}

int ms_package_hls(const char *in, const char *playlist, double segment_seconds, ms_progress_fn cb, void *ctx,
                   char *errbuf, size_t errlen) {
    int loaded = ms_begin(errbuf, errlen);
    if (loaded < 0) return loaded;
    if (!in || !playlist || !(segment_seconds > 0) || isinf(segment_seconds))
        return ms_fail(errbuf, errlen, MS_ERROR_INVALID_ARGUMENT, MS_ERROR_INVALID_ARGUMENT,
                       "ms_package_hls: path or segment_seconds");
    ms_progress progress;
    ms_progress_start(&progress, cb, ctx, 0);
    packager p = {.errbuf = errbuf, .errlen = errlen};
    int ret = run(&p, in, playlist, segment_seconds, &progress);
    if (p.ofmt) {
        ff.avio_closep(&p.ofmt->pb);
        ff.avformat_free_context(p.ofmt);
    }
    ff.avformat_close_input(&p.ifmt);
    ff.av_packet_free(&p.pkt);
    return ret;
}
