// The scorers of ms_quality: VMAF through libvmaf (the CVMAF target, model vmaf_v0.6.1 built in), SSIM and PSNR
// through libavfilter's `ssim` and `psnr` filters, which leave each frame's score in its metadata.
#include "quality.h"

#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/// The model every VMAF score of the shim is made with: the default of libvmaf and of FFmpeg's `libvmaf` filter.
#define MS_VMAF_MODEL "vmaf_v0.6.1"

static int keep_score(ms_scorer *s, double score) {
    if (s->count == s->capacity) {
        int64_t capacity = s->capacity ? s->capacity * 2 : 1024;
        double *grown = realloc(s->scores, (size_t)capacity * sizeof *grown);
        if (!grown) return AVERROR(ENOMEM);
        s->scores = grown;
        s->capacity = capacity;
    }
    s->scores[s->count++] = score;
    return 0;
}

// MARK: - VMAF

// libvmaf's own CPU check (src/cpu.h; not in its public headers): the flags vmaf_init last read, masked by its
// `cpumask`. On x86_64 bit 3 is VMAF_X86_CPU_FLAG_AVX2 (src/x86/cpu.h); other builds have no flags.
unsigned vmaf_get_cpu_flags(void);
#define MS_VMAF_X86_CPU_FLAG_AVX2 (1u << 3)

/// ms_quality_set_vmaf_simd's setting: 1 lets libvmaf pick SIMD code, 0 keeps it on the C paths.
static atomic_int vmaf_simd_enabled = 1;

void ms_quality_set_vmaf_simd(int enabled) { atomic_store(&vmaf_simd_enabled, enabled != 0); }

ms_vmaf_simd ms_quality_vmaf_simd(void) {
#if defined(__x86_64__)
    if (vmaf_get_cpu_flags() & MS_VMAF_X86_CPU_FLAG_AVX2) return MS_VMAF_SIMD_AVX2;
#endif
    return MS_VMAF_SIMD_NONE;
}

static int open_vmaf(ms_scorer *s, char *errbuf, size_t errlen) {
    VmafConfiguration cfg = {.log_level = VMAF_LOG_LEVEL_NONE,
                             .n_threads = (unsigned)s->threads,
                             .cpumask = atomic_load(&vmaf_simd_enabled) ? 0 : UINT64_MAX};
    int ret = vmaf_init(&s->vmaf, cfg);
    if (ret < 0) return ms_fail(errbuf, errlen, ret, ret, "cannot set up libvmaf");
    VmafModelConfig model = {.name = "vmaf", .flags = VMAF_MODEL_FLAGS_DEFAULT};
    if ((ret = vmaf_model_load(&s->model, &model, MS_VMAF_MODEL)) < 0)
        return ms_fail(errbuf, errlen, ret, ret, "cannot load the VMAF model " MS_VMAF_MODEL);
    if ((ret = vmaf_use_features_from_model(s->vmaf, s->model)) < 0)
        return ms_fail(errbuf, errlen, ret, ret, "cannot set up VMAF's features");
    return 0;
}

/// A libvmaf picture holding a copy of `f`'s three planes (8-bit 4:2:0).
static int vmaf_copy(const AVFrame *f, VmafPicture *pic) {
    int ret = vmaf_picture_alloc(pic, VMAF_PIX_FMT_YUV420P, 8, (unsigned)f->width, (unsigned)f->height);
    if (ret < 0) return ret;
    for (int p = 0; p < 3; p++) {
        const uint8_t *src = f->data[p];
        uint8_t *dst = pic->data[p];
        for (unsigned y = 0; y < pic->h[p]; y++)
            memcpy(dst + (ptrdiff_t)y * pic->stride[p], src + (ptrdiff_t)y * f->linesize[p], pic->w[p]);
    }
    return 0;
}

static int add_vmaf(ms_scorer *s, const AVFrame *reference, const AVFrame *distorted, char *errbuf, size_t errlen) {
    VmafPicture ref = {0}, dist = {0};
    int ret = vmaf_copy(reference, &ref);
    if (ret >= 0 && (ret = vmaf_copy(distorted, &dist)) < 0) vmaf_picture_unref(&ref);
    if (ret < 0) return ms_fail(errbuf, errlen, AVERROR(ENOMEM), AVERROR(ENOMEM), "VMAF");
    // libvmaf takes both pictures when it succeeds; when it fails it may not have (a picture refused, its pool or
    // thread queue out of memory), and vmaf_picture_unref empties what it frees, so whatever is left is ours to free.
    if ((ret = vmaf_read_pictures(s->vmaf, &ref, &dist, (unsigned)s->pairs)) < 0) {
        if (ref.ref) vmaf_picture_unref(&ref);
        if (dist.ref) vmaf_picture_unref(&dist);
        return ms_fail(errbuf, errlen, ret, ret, "VMAF failed at frame %lld", (long long)s->pairs);
    }
    return 0;
}

static int finish_vmaf(ms_scorer *s, char *errbuf, size_t errlen) {
    int ret = vmaf_read_pictures(s->vmaf, NULL, NULL, 0);
    if (ret < 0) return ms_fail(errbuf, errlen, ret, ret, "VMAF failed");
    for (int64_t i = 0; i < s->pairs; i++) {
        double score;
        if ((ret = vmaf_score_at_index(s->vmaf, s->model, &score, (unsigned)i)) < 0)
            return ms_fail(errbuf, errlen, ret, ret, "no VMAF score for frame %lld", (long long)i);
        if ((ret = keep_score(s, score)) < 0) return ms_fail(errbuf, errlen, ret, ret, "VMAF");
    }
    return 0;
}

// MARK: - SSIM and PSNR

static int new_source(ms_scorer *s, AVFilterContext **src, const char *name, const AVFrame *like) {
    char args[160];
    snprintf(args, sizeof args, "video_size=%dx%d:pix_fmt=%d:time_base=1/25:pixel_aspect=1/1", like->width,
             like->height, AV_PIX_FMT_YUV420P);
    return ffl.avfilter_graph_create_filter(src, ffl.avfilter_get_by_name("buffer"), name, args, NULL, s->graph);
}

/// Builds [distorted][reference] ssim|psnr [out], as `ffmpeg -i distorted -i reference -lavfi ssim` compares.
static int open_graph(ms_scorer *s, const AVFrame *reference, char *errbuf, size_t errlen) {
    int ret = ms_ffmpeg_load_filters(errbuf, errlen);
    if (ret < 0) return ret;
    const char *graph = s->metric == MS_QUALITY_SSIM ? "[distorted][reference]ssim[out]"
                                                     : "[distorted][reference]psnr[out]";
    AVFilterInOut *sources = NULL, *second = NULL, *sink = NULL;
    ret = AVERROR(ENOMEM);
    if (!(s->out = ff.av_frame_alloc()) || !(s->graph = ms_new_filter_graph()) ||
        !(sources = ffl.avfilter_inout_alloc()) || !(second = ffl.avfilter_inout_alloc()) ||
        !(sink = ffl.avfilter_inout_alloc()))
        goto done;
    s->graph->nb_threads = s->threads;
    ms_log_clear();
    if ((ret = new_source(s, &s->distorted_src, "distorted", reference)) < 0 ||
        (ret = new_source(s, &s->reference_src, "reference", reference)) < 0 ||
        (ret = ffl.avfilter_graph_create_filter(&s->sink, ffl.avfilter_get_by_name("buffersink"), "out", NULL, NULL,
                                                s->graph)) < 0)
        goto done;
    *sources = (AVFilterInOut){.name = ff.av_strdup("distorted"), .filter_ctx = s->distorted_src, .next = second};
    *second = (AVFilterInOut){.name = ff.av_strdup("reference"), .filter_ctx = s->reference_src};
    *sink = (AVFilterInOut){.name = ff.av_strdup("out"), .filter_ctx = s->sink};
    second = NULL;  // part of `sources` now
    if (!sources->name || !sources->next->name || !sink->name) {
        ret = AVERROR(ENOMEM);
        goto done;
    }
    if ((ret = ffl.avfilter_graph_parse_ptr(s->graph, graph, &sink, &sources, NULL)) < 0) goto done;
    ret = ffl.avfilter_graph_config(s->graph, NULL);
done:
    ffl.avfilter_inout_free(&sources);
    ffl.avfilter_inout_free(&second);
    ffl.avfilter_inout_free(&sink);
    return ret < 0 ? ms_fail(errbuf, errlen, ret, ret, "cannot set up the filter graph %s", graph) : 0;
}

/// Keeps the scores of the frames the graph has given out; `ended`: until its end.
static int drain_graph(ms_scorer *s, int ended, char *errbuf, size_t errlen) {
    const char *key = s->metric == MS_QUALITY_SSIM ? "lavfi.ssim.All" : "lavfi.psnr.psnr_avg";
    for (;;) {
        int ret = ffl.av_buffersink_get_frame(s->sink, s->out);
        if (ret == AVERROR(EAGAIN) && !ended) return 0;
        if (ret == AVERROR_EOF) return 0;
        if (ret < 0) return ms_fail(errbuf, errlen, ret, ret, "%s failed", key);
        const AVDictionaryEntry *entry = ff.av_dict_get(s->out->metadata, key, NULL, 0);
        double score = entry ? strtod(entry->value, NULL) : NAN;
        ff.av_frame_unref(s->out);
        if (isnan(score)) return ms_fail(errbuf, errlen, AVERROR_BUG, AVERROR_BUG, "a frame without %s", key);
        if (isinf(score)) score = MS_QUALITY_PSNR_IDENTICAL;  // the psnr filter's "inf": no difference at all
        if ((ret = keep_score(s, score)) < 0) return ms_fail(errbuf, errlen, ret, ret, "%s", key);
    }
}

static int add_filtered(ms_scorer *s, AVFrame *reference, AVFrame *distorted, char *errbuf, size_t errlen) {
    // Frame n at n/25 s in both: the filter pairs the two inputs by time.
    reference->pts = distorted->pts = s->pairs;
    ms_log_clear();
    int ret = ffl.av_buffersrc_add_frame_flags(s->reference_src, reference, AV_BUFFERSRC_FLAG_KEEP_REF);
    if (ret >= 0) ret = ffl.av_buffersrc_add_frame_flags(s->distorted_src, distorted, AV_BUFFERSRC_FLAG_KEEP_REF);
    if (ret < 0) return ms_fail(errbuf, errlen, ret, ret, "cannot compare frame %lld", (long long)s->pairs);
    return drain_graph(s, 0, errbuf, errlen);
}

static int finish_filtered(ms_scorer *s, char *errbuf, size_t errlen) {
    int ret = ffl.av_buffersrc_add_frame_flags(s->reference_src, NULL, 0);
    if (ret >= 0) ret = ffl.av_buffersrc_add_frame_flags(s->distorted_src, NULL, 0);
    if (ret < 0) return ms_fail(errbuf, errlen, ret, ret, "cannot end the comparison");
    return drain_graph(s, 1, errbuf, errlen);
}

// MARK: - Either

int ms_scorer_open(ms_scorer *s, const AVFrame *reference, char *errbuf, size_t errlen) {
    return s->metric == MS_QUALITY_VMAF ? open_vmaf(s, errbuf, errlen) : open_graph(s, reference, errbuf, errlen);
}

int ms_scorer_add(ms_scorer *s, AVFrame *reference, AVFrame *distorted, char *errbuf, size_t errlen) {
    int ret = s->metric == MS_QUALITY_VMAF ? add_vmaf(s, reference, distorted, errbuf, errlen)
                                           : add_filtered(s, reference, distorted, errbuf, errlen);
    if (ret >= 0) s->pairs++;
    return ret;
}

int ms_scorer_finish(ms_scorer *s, char *errbuf, size_t errlen) {
    int ret = s->metric == MS_QUALITY_VMAF ? finish_vmaf(s, errbuf, errlen) : finish_filtered(s, errbuf, errlen);
    if (ret >= 0 && s->count != s->pairs)
        return ms_fail(errbuf, errlen, AVERROR_BUG, AVERROR_BUG, "%lld scores for %lld frames", (long long)s->count,
                       (long long)s->pairs);
    return ret;
}

void ms_scorer_free(ms_scorer *s) {
    // The context first: closing it waits for its worker threads, which may still be scoring with the model.
    if (s->vmaf) vmaf_close(s->vmaf);
    if (s->model) vmaf_model_destroy(s->model);
    if (s->graph) ffl.avfilter_graph_free(&s->graph);
    if (s->out) ff.av_frame_free(&s->out);
    s->model = NULL;
    s->vmaf = NULL;
}
