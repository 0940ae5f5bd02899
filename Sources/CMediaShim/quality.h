// Private to CMediaShim: the scorers ms_quality feeds with pairs of pictures (quality_scorers.c).
#ifndef MS_QUALITY_INTERNAL_H
#define MS_QUALITY_INTERNAL_H

#include "ms_internal.h"

#include <libvmaf/libvmaf.h>

/// Scores pairs of pictures of one size and format (8-bit 4:2:0) with one metric, keeping a score per pair.
typedef struct ms_scorer {
    ms_quality_metric metric;
    int threads;  // libvmaf's threads and the filter graph's (> 0)
    // VMAF: libvmaf scores every pair it read once it is flushed.
    VmafContext *vmaf;
    VmafModel *model;
    // SSIM and PSNR: a graph [distorted][reference] ssim|psnr, whose frames carry the score as metadata.
    AVFilterGraph *graph;
    AVFilterContext *distorted_src, *reference_src, *sink;
    AVFrame *out;
    double *scores;
    int64_t count, capacity;
    int64_t pairs;  // pairs read
} ms_scorer;

/// Sets the scorer up for pictures like `reference` (its size; yuv420p or yuvj420p).
int ms_scorer_open(ms_scorer *s, const AVFrame *reference, char *errbuf, size_t errlen);
/// Scores `distorted` (converted to the reference's size, format and range) against `reference`; the scorer may
/// keep references to both.
int ms_scorer_add(ms_scorer *s, AVFrame *reference, AVFrame *distorted, char *errbuf, size_t errlen);
/// Scores what is still queued; afterwards `s->scores` holds `s->count` scores, one per pair in order.
int ms_scorer_finish(ms_scorer *s, char *errbuf, size_t errlen);
/// Frees everything but the scores (which the caller takes or frees); safe on a scorer never opened.
void ms_scorer_free(ms_scorer *s);

#endif
