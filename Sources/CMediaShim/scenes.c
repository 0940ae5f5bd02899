// ms_scene_detect: where a video's scenes change, scored by libavfilter's `scdet` on small gray pictures.
#include "ms_internal.h"

#include <errno.h>
#include <stdlib.h>

typedef struct scene_run {
    AVFormatContext *ifmt;
    AVCodecContext *dec;
    const AVStream *st;
    AVPacket *pkt;
    AVFrame *frame, *scored;
    AVFilterGraph *graph;
    AVFilterContext *src, *sink;
    int64_t start;  // the input's start, in the stream's time base
    double threshold;
    int height;
    int flushed;  // the file is read to its end and the decoder told so
    ms_scene_changes found;
    int64_t capacity;
    ms_progress *progress;
    char *errbuf;
    size_t errlen;
} scene_run;

/// The next decoded frame into `r->frame`: 1, or 0 at the end. Damaged packets and frames are skipped.
static int next_frame(scene_run *r) {
    for (;;) {
        int ret = ff.avcodec_receive_frame(r->dec, r->frame);
        if (ret >= 0) return 1;
        if (ret == AVERROR_EOF || (ret == AVERROR(EAGAIN) && r->flushed)) return 0;
        if (ret == AVERROR(ENOMEM)) return ms_fail(r->errbuf, r->errlen, ret, ret, "decoding");
        if (ret != AVERROR(EAGAIN)) {  // a damaged frame
            ms_log_clear();
            continue;
        }
        ret = ff.av_read_frame(r->ifmt, r->pkt);
        // Only the end: a plan cut by part of the source's scene changes would be checkpointed for good.
        if (ret < 0 && ret != AVERROR_EOF) return ms_fail(r->errbuf, r->errlen, ret, ret, "reading");
        if (ret < 0) {
            ff.avcodec_send_packet(r->dec, NULL);
            r->flushed = 1;
            continue;
        }
        if (r->pkt->stream_index == r->st->index) ret = ff.avcodec_send_packet(r->dec, r->pkt);
        ff.av_packet_unref(r->pkt);
        if (ret == AVERROR(ENOMEM)) return ms_fail(r->errbuf, r->errlen, ret, ret, "decoding");
    }
}

/// buffer → scale (gray, at most `height` lines) → scdet → buffersink, for frames like `f`.
static int open_graph(scene_run *r, const AVFrame *f) {
    int ret = ms_ffmpeg_load_filters(r->errbuf, r->errlen);
    if (ret < 0) return ret;
    int w = f->width, h = f->height;
    if (r->height > 0) ms_fit_size(f->width, f->height, 0, r->height, &w, &h);
    char args[256], chain[256];
    AVRational sar = f->sample_aspect_ratio.num > 0 ? f->sample_aspect_ratio : (AVRational){1, 1};
    snprintf(args, sizeof args, "video_size=%dx%d:pix_fmt=%d:time_base=%d/%d:pixel_aspect=%d/%d", f->width,
             f->height, f->format, r->st->time_base.num, r->st->time_base.den, sar.num, sar.den);
    snprintf(chain, sizeof chain, "scale=%d:%d:flags=fast_bilinear,format=gray,scdet=threshold=%g", w, h,
             r->threshold);
    AVFilterInOut *outputs = NULL, *inputs = NULL;
    if (!(r->graph = ms_new_filter_graph()) || !(outputs = ffl.avfilter_inout_alloc()) ||
        !(inputs = ffl.avfilter_inout_alloc())) {
        ret = AVERROR(ENOMEM);
        goto done;
    }
    r->graph->nb_threads = 1;
    ms_log_clear();
    if ((ret = ffl.avfilter_graph_create_filter(&r->src, ffl.avfilter_get_by_name("buffer"), "in", args, NULL,
                                                r->graph)) < 0 ||
        (ret = ffl.avfilter_graph_create_filter(&r->sink, ffl.avfilter_get_by_name("buffersink"), "out", NULL, NULL,
                                                r->graph)) < 0)
        goto done;
    *outputs = (AVFilterInOut){.name = ff.av_strdup("in"), .filter_ctx = r->src};
    *inputs = (AVFilterInOut){.name = ff.av_strdup("out"), .filter_ctx = r->sink};
    if (!outputs->name || !inputs->name) {
        ret = AVERROR(ENOMEM);
        goto done;
    }
    if ((ret = ffl.avfilter_graph_parse_ptr(r->graph, chain, &inputs, &outputs, NULL)) < 0) goto done;
    ret = ffl.avfilter_graph_config(r->graph, NULL);
done:
    ffl.avfilter_inout_free(&outputs);
    ffl.avfilter_inout_free(&inputs);
    return ret < 0 ? ms_fail(r->errbuf, r->errlen, ret, ret, "cannot set up the filter graph %s", chain) : 0;
}

/// Keeps the scene change `r->scored` marks, if it does.
static int keep(scene_run *r) {
    const AVDictionaryEntry *time = ff.av_dict_get(r->scored->metadata, "lavfi.scd.time", NULL, 0);
    const AVDictionaryEntry *score = ff.av_dict_get(r->scored->metadata, "lavfi.scd.score", NULL, 0);
    if (!time || !score || r->scored->pts == AV_NOPTS_VALUE) return 0;
    if (r->found.count == r->capacity) {
        int64_t capacity = r->capacity ? r->capacity * 2 : 256;
        double *times = realloc(r->found.times, (size_t)capacity * sizeof *times);
        if (times) r->found.times = times;
        double *scores = times ? realloc(r->found.scores, (size_t)capacity * sizeof *scores) : NULL;
        if (!scores) return ms_fail(r->errbuf, r->errlen, AVERROR(ENOMEM), AVERROR(ENOMEM), "scene detection");
        r->found.scores = scores;
        r->capacity = capacity;
    }
    r->found.times[r->found.count] = ms_seconds(r->scored->pts - r->start, r->st->time_base);
    r->found.scores[r->found.count++] = strtod(score->value, NULL);
    return 0;
}

/// Keeps the scene changes among the frames the graph has scored so far.
static int drain(scene_run *r) {
    for (;;) {
        int ret = ffl.av_buffersink_get_frame(r->sink, r->scored);
        if (ret == AVERROR(EAGAIN) || ret == AVERROR_EOF) return 0;
        if (ret < 0) return ms_fail(r->errbuf, r->errlen, ret, ret, "scene detection");
        r->found.frames++;
        ret = keep(r);
        ff.av_frame_unref(r->scored);
        if (ret < 0) return ret;
    }
}

/// Opens `path`'s best video stream and its decoder, feeds every decoded frame through the scoring graph (made for
/// the first frame's size) and keeps its scene changes in `r->found`.
static int detect(scene_run *r, const char *path) {
    int ret = ms_open_input(path, &r->ifmt, r->errbuf, r->errlen);
    if (ret < 0) return ret;
    int index = ms_find_video_stream(r->ifmt);
    if (index < 0) return ms_fail(r->errbuf, r->errlen, MS_ERROR_NO_VIDEO, MS_ERROR_NO_VIDEO, "'%s'", path);
    r->st = r->ifmt->streams[index];
    r->start = ff.av_rescale_q(r->ifmt->start_time != AV_NOPTS_VALUE ? r->ifmt->start_time : 0, AV_TIME_BASE_Q,
                               r->st->time_base);
    if ((ret = ms_open_decoder(r->st, 0, &r->dec, r->errbuf, r->errlen)) < 0) return ret;
    r->dec->skip_loop_filter = AVDISCARD_ALL;  // read on every frame, by every decoding thread
    if (!(r->pkt = ff.av_packet_alloc()) || !(r->frame = ff.av_frame_alloc()) || !(r->scored = ff.av_frame_alloc()))
        return ms_fail(r->errbuf, r->errlen, AVERROR(ENOMEM), AVERROR(ENOMEM), "scene detection");
    r->progress->total = ms_media_duration(r->ifmt);
    if ((ret = ms_progress_report(r->progress, 0)) < 0) return ret;
    int64_t decoded = 0;
    for (;;) {
        int got = next_frame(r);
        if (got < 0) return got;
        if (!got) break;
        r->frame->pts = r->frame->best_effort_timestamp;
        double done = r->frame->pts == AV_NOPTS_VALUE ? 0 : ms_seconds(r->frame->pts - r->start, r->st->time_base);
        if (!r->graph && (ret = open_graph(r, r->frame)) < 0) return ret;
        ret = ffl.av_buffersrc_add_frame_flags(r->src, r->frame, 0);  // takes the frame's data
        if (ret < 0) return ms_fail(r->errbuf, r->errlen, ret, ret, "scene detection");
        decoded++;
        if ((ret = drain(r)) < 0 || (ret = ms_progress_report(r->progress, done)) < 0) return ret;
    }
    if (decoded == 0) return ms_fail(r->errbuf, r->errlen, MS_ERROR_NO_FRAMES, MS_ERROR_NO_FRAMES, "'%s'", path);
    if ((ret = ffl.av_buffersrc_add_frame_flags(r->src, NULL, 0)) < 0)
        return ms_fail(r->errbuf, r->errlen, ret, ret, "scene detection");
    return drain(r);
}

int ms_scene_detect(const char *path, double threshold, int height, ms_progress_fn cb, void *ctx,
                    ms_scene_changes *out, char *errbuf, size_t errlen) {
    if (out) *out = (ms_scene_changes){0};
    int ret = ms_begin(errbuf, errlen);
    if (ret < 0) return ret;
    if (!path || !out || !(threshold >= 0 && threshold <= 100) || height < 0)
        return ms_fail(errbuf, errlen, MS_ERROR_INVALID_ARGUMENT, MS_ERROR_INVALID_ARGUMENT, "ms_scene_detect");
    ms_progress progress;
    ms_progress_start(&progress, cb, ctx, 0);
    scene_run r = {.threshold = threshold, .height = height, .progress = &progress, .errbuf = errbuf, .errlen = errlen};
    ret = detect(&r, path);
    if (ret >= 0) *out = r.found;
    else ms_scene_changes_free(&r.found);
    if (r.graph) ffl.avfilter_graph_free(&r.graph);  // ffl is loaded once a graph is made
    ff.av_frame_free(&r.frame);
    ff.av_frame_free(&r.scored);
    ff.av_packet_free(&r.pkt);
    ff.avcodec_free_context(&r.dec);
    ff.avformat_close_input(&r.ifmt);
    return ret;
}

void ms_scene_changes_free(ms_scene_changes *changes) {
    if (!changes) return;
    free(changes->times);
    free(changes->scores);
    *changes = (ms_scene_changes){0};
}
