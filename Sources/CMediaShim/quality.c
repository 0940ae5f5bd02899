// ms_quality: decode a reference and a distorted file side by side and score each pair of frames (quality_scorers.c).
#include "quality.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

/// One file's video, decoded in display order.
typedef struct video_input {
    const char *path;
    AVFormatContext *ifmt;
    AVCodecContext *dec;
    const AVStream *st;
    AVPacket *pkt;
    int flushed;  // the file is read to its end and the decoder told so
} video_input;

typedef struct quality_run {
    video_input reference, distorted;
    AVFrame *ref_frame, *dist_frame, *converted;
    ms_scaler scaler;
    ms_scorer scorer;
    ms_progress *progress;
    char *errbuf;
    size_t errlen;
} quality_run;

static int open_video(video_input *v, const char *path, int threads, char *errbuf, size_t errlen) {
    v->path = path;
    int ret = ms_open_input(path, &v->ifmt, errbuf, errlen);
    if (ret < 0) return ret;
    int index = ms_find_video_stream(v->ifmt);
    if (index < 0) return ms_fail(errbuf, errlen, MS_ERROR_NO_VIDEO, MS_ERROR_NO_VIDEO, "'%s'", path);
    v->st = v->ifmt->streams[index];
    if ((ret = ms_open_decoder(v->st, threads, &v->dec, errbuf, errlen)) < 0) return ret;
    if (!(v->pkt = ff.av_packet_alloc())) return ms_fail(errbuf, errlen, AVERROR(ENOMEM), AVERROR(ENOMEM), "%s", path);
    return 0;
}

static void close_video(video_input *v) {
    ff.avformat_close_input(&v->ifmt);
    ff.avcodec_free_context(&v->dec);
    ff.av_packet_free(&v->pkt);
}

/// The next frame of `v` into `f`: 1, or 0 at the end. Damaged packets and frames are skipped, as a transcode does.
static int next_frame(video_input *v, AVFrame *f, char *errbuf, size_t errlen) {
    for (;;) {
        int ret = ff.avcodec_receive_frame(v->dec, f);
        if (ret >= 0) return 1;
        if (ret == AVERROR_EOF || (ret == AVERROR(EAGAIN) && v->flushed)) return 0;
        if (ret == AVERROR(ENOMEM)) return ms_fail(errbuf, errlen, ret, ret, "decoding '%s'", v->path);
        if (ret != AVERROR(EAGAIN)) {  // a damaged frame
            ms_log_clear();
            continue;
        }
        ret = ff.av_read_frame(v->ifmt, v->pkt);
        if (ret == AVERROR(ENOMEM)) return ms_fail(errbuf, errlen, ret, ret, "reading '%s'", v->path);
        if (ret < 0) {  // the end, or unreadable from here on: what was decoded so far counts
            ff.avcodec_send_packet(v->dec, NULL);
            v->flushed = 1;
            continue;
        }
        if (v->pkt->stream_index == v->st->index) ret = ff.avcodec_send_packet(v->dec, v->pkt);
        ff.av_packet_unref(v->pkt);
        if (ret == AVERROR(ENOMEM)) return ms_fail(errbuf, errlen, ret, ret, "decoding '%s'", v->path);
    }
}

/// Checks that the frame `f` just decoded from `v` is 8-bit 4:2:0 (yuv420p, or yuvj420p): every frame, since a file may change its
/// format mid-stream (MJPEG can turn gray), and a frame of another format would be scored as garbage or not at all.
static int check_format(quality_run *q, const video_input *v, const AVFrame *f) {
    if (f->format == AV_PIX_FMT_YUV420P || f->format == AV_PIX_FMT_YUVJ420P) return 0;
    const char *name = ff.av_get_pix_fmt_name(f->format);
    return ms_fail(q->errbuf, q->errlen, MS_ERROR_QUALITY_UNSUPPORTED, MS_ERROR_QUALITY_UNSUPPORTED,
                   "'%s' decodes to %s at frame %lld, not 8-bit 4:2:0 (yuv420p)", v->path,
                   name ? name : "an unknown format", (long long)q->scorer.pairs);
}

/// Checks, at the first pair, that the reference is SDR and that both files are shown turned alike.
static int check_files(quality_run *q, const AVFrame *ref) {
    const char *path = q->reference.path;
    if (ms_hdr_transfer(ref->color_trc) || ms_hdr_transfer(q->reference.st->codecpar->color_trc))
        return ms_fail(q->errbuf, q->errlen, MS_ERROR_QUALITY_UNSUPPORTED, MS_ERROR_QUALITY_UNSUPPORTED,
                       "'%s' is HDR (PQ or HLG), and its exports are tone-mapped to SDR", path);
    if (ms_stream_rotation(q->reference.st) != ms_stream_rotation(q->distorted.st))
        return ms_fail(q->errbuf, q->errlen, MS_ERROR_QUALITY_MISMATCH, MS_ERROR_QUALITY_MISMATCH,
                       "'%s' is shown turned by %d°, '%s' by %d°", path, ms_stream_rotation(q->reference.st),
                       q->distorted.path, ms_stream_rotation(q->distorted.st));
    return 0;
}

/// Sets up for pictures like the first reference frame.
static int start(quality_run *q, const AVFrame *ref) {
    if (!(q->converted = ff.av_frame_alloc()))
        return ms_fail(q->errbuf, q->errlen, AVERROR(ENOMEM), AVERROR(ENOMEM), "quality");
    q->converted->format = AV_PIX_FMT_YUV420P;
    q->converted->width = ref->width;
    q->converted->height = ref->height;
    int ret = ff.av_frame_get_buffer(q->converted, 0);
    if (ret < 0) return ms_fail(q->errbuf, q->errlen, ret, ret, "quality");
    return ms_scorer_open(&q->scorer, ref, q->errbuf, q->errlen);
}

/// Scores the pair of frames just decoded: the distorted one at the reference's size, format and range.
static int score_pair(quality_run *q) {
    AVFrame *ref = q->ref_frame, *dist = q->dist_frame;
    int ret = q->scorer.pairs == 0 ? check_files(q, ref) : 0;
    if (ret >= 0) ret = check_format(q, &q->reference, ref);
    if (ret >= 0) ret = check_format(q, &q->distorted, dist);
    if (ret < 0) return ret;
    if (q->scorer.pairs == 0) {
        if ((ret = start(q, ref)) < 0) return ret;
    } else if (ref->width != q->converted->width || ref->height != q->converted->height) {
        return ms_fail(q->errbuf, q->errlen, MS_ERROR_QUALITY_UNSUPPORTED, MS_ERROR_QUALITY_UNSUPPORTED,
                       "'%s' changes its picture size at frame %lld", q->reference.path, (long long)q->scorer.pairs);
    }
    // yuvj420p is yuv420p in full range: the same planes, which the scorers take as yuv420p.
    int full = ref->color_range == AVCOL_RANGE_JPEG || ref->format == AV_PIX_FMT_YUVJ420P;
    ref->format = AV_PIX_FMT_YUV420P;
    ref->color_range = full ? AVCOL_RANGE_JPEG : AVCOL_RANGE_MPEG;
    q->converted->color_range = ref->color_range;
    ret = ms_scale(&q->scaler, dist, q->converted);
    if (ret < 0) return ms_fail(q->errbuf, q->errlen, ret, ret, "cannot convert a frame of '%s'", q->distorted.path);
    return ms_scorer_add(&q->scorer, ref, q->converted, q->errbuf, q->errlen);
}

static int compare(quality_run *q, const char *reference, const char *distorted, int threads) {
    int ret = open_video(&q->reference, reference, threads, q->errbuf, q->errlen);
    if (ret >= 0) ret = open_video(&q->distorted, distorted, threads, q->errbuf, q->errlen);
    if (ret < 0) return ret;
    if (!(q->ref_frame = ff.av_frame_alloc()) || !(q->dist_frame = ff.av_frame_alloc()))
        return ms_fail(q->errbuf, q->errlen, AVERROR(ENOMEM), AVERROR(ENOMEM), "quality");
    q->progress->total = ms_media_duration(q->reference.ifmt);
    const AVStream *st = q->reference.st;
    int64_t start_time = st->start_time != AV_NOPTS_VALUE ? st->start_time : 0;
    if ((ret = ms_progress_report(q->progress, 0)) < 0) return ret;
    for (;;) {
        int r = next_frame(&q->reference, q->ref_frame, q->errbuf, q->errlen);
        if (r < 0) return r;
        int d = next_frame(&q->distorted, q->dist_frame, q->errbuf, q->errlen);
        if (d < 0) return d;
        if (!r && !d) break;
        if (r != d)
            return ms_fail(q->errbuf, q->errlen, MS_ERROR_QUALITY_MISMATCH, MS_ERROR_QUALITY_MISMATCH,
                           "'%s' ends after %lld frames, '%s' has more", r ? distorted : reference,
                           (long long)q->scorer.pairs, r ? reference : distorted);
        int64_t shown = q->ref_frame->best_effort_timestamp;
        if ((ret = score_pair(q)) < 0) return ret;
        ff.av_frame_unref(q->ref_frame);
        ff.av_frame_unref(q->dist_frame);
        double done = shown == AV_NOPTS_VALUE ? 0 : ms_seconds(shown - start_time, st->time_base);
        if ((ret = ms_progress_report(q->progress, done)) < 0) return ret;
    }
    if (q->scorer.pairs == 0)
        return ms_fail(q->errbuf, q->errlen, MS_ERROR_NO_FRAMES, MS_ERROR_NO_FRAMES, "'%s'", reference);
    return ms_scorer_finish(&q->scorer, q->errbuf, q->errlen);
}

int ms_quality(const char *reference, const char *distorted, ms_quality_metric metric, int threads,
               ms_progress_fn cb, void *ctx, ms_quality_scores *out, char *errbuf, size_t errlen) {
    if (out) *out = (ms_quality_scores){0};
    int ret = ms_begin(errbuf, errlen);
    if (ret < 0) return ret;
    if (!reference || !distorted || !out || threads < 0 || metric < MS_QUALITY_VMAF || metric > MS_QUALITY_PSNR)
        return ms_fail(errbuf, errlen, MS_ERROR_INVALID_ARGUMENT, MS_ERROR_INVALID_ARGUMENT, "ms_quality");
    ms_progress progress;
    ms_progress_start(&progress, cb, ctx, 0);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    quality_run q = {.progress = &progress, .errbuf = errbuf, .errlen = errlen};
    q.scorer = (ms_scorer){.metric = metric, .threads = threads > 0 ? threads : cores > 0 ? (int)cores : 1};
    ret = compare(&q, reference, distorted, threads);
    if (ret >= 0) {
        *out = (ms_quality_scores){.frames = q.scorer.scores, .count = q.scorer.count,
                                   .width = q.converted->width, .height = q.converted->height};
    } else {
        free(q.scorer.scores);
    }
    ms_scorer_free(&q.scorer);
    ms_scaler_free(&q.scaler);
    ff.av_frame_free(&q.ref_frame);
    ff.av_frame_free(&q.dist_frame);
    ff.av_frame_free(&q.converted);
    close_video(&q.reference);
    close_video(&q.distorted);
    return ret;
}

void ms_quality_scores_free(ms_quality_scores *scores) {
    if (!scores) return;
    free(scores->frames);
    *scores = (ms_quality_scores){0};
}
