// The encoder's own PSNR of each frame it encodes, gathered as the transcode goes. FFmpeg 5.1's libx264 computes it
// with AV_CODEC_FLAG_PSNR but hands it out only in its per-frame report line (later FFmpeg releases put it in the
// packet's AV_PKT_DATA_QUALITY_STATS, which 5.1 fills only for libaom): the line is logged just before the packet of
// its frame is returned, so lines and packets pair in order.
#include "encoder_psnr.h"

#include "include/ms_quality.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/// x264's PSNR of one plane back to its squared error over `samples` samples (x264: -10 log10(sse / (255² n)),
/// 100 when the error is under 1e-10 per sample).
static double squared_error(double psnr, double samples) { return 255.0 * 255.0 * samples * pow(10.0, -psnr / 10.0); }

/// Appends `value` to a growing array of doubles; 0, or AVERROR(ENOMEM).
static int push(double **values, int64_t *count, int64_t *capacity, double value) {
    if (*count == *capacity) {
        int64_t grown = *capacity ? *capacity * 2 : 256;
        double *bigger = realloc(*values, (size_t)grown * sizeof **values);
        if (!bigger) return AVERROR(ENOMEM);
        *values = bigger;
        *capacity = grown;
    }
    (*values)[(*count)++] = value;
    return 0;
}

void ms_encoder_psnr_line(ms_encoder_psnr *p, const char *line) {
    const char *at = strstr(line, " PSNR Y:");
    double y, u, v, score = NAN;
    if (p->width == 0) return;  // no video encoder asked for its PSNR
    if (at && sscanf(at, " PSNR Y:%lf U:%lf V:%lf", &y, &u, &v) == 3 && p->width > 0 && p->height > 0) {
        double luma = (double)p->width * p->height;
        double chroma = (double)((p->width + 1) / 2) * ((p->height + 1) / 2);
        double error = squared_error(y, luma) + squared_error(u, chroma) + squared_error(v, chroma);
        double mse = error / (255.0 * 255.0 * (luma + 2 * chroma));
        score = mse <= 1e-10 ? MS_QUALITY_PSNR_IDENTICAL : fmin(-10.0 * log10(mse), MS_QUALITY_PSNR_IDENTICAL);
    }
    if (push(&p->pending, &p->pending_count, &p->pending_capacity, score) < 0) p->failed = 1;
}

void ms_encoder_psnr_packet(ms_encoder_psnr *p, int64_t pts, int kept) {
    if (p->pending_head >= p->pending_count) {
        p->unpaired = 1;  // a packet without its line: the report would pair the rest wrongly
        return;
    }
    double score = p->pending[p->pending_head++];
    if (p->pending_head == p->pending_count) p->pending_head = p->pending_count = 0;
    if (!kept) return;
    if (isnan(score)) p->unpaired = 1;
    if (push(&p->scores, &p->count, &p->capacity, score) < 0 ||
        push(&p->times, &p->times_count, &p->times_capacity, (double)pts) < 0)
        p->failed = 1;
}

typedef struct timed_score {
    double time, score;
} timed_score;

static int by_time(const void *a, const void *b) {
    double x = ((const timed_score *)a)->time, y = ((const timed_score *)b)->time;
    return (x > y) - (x < y);
}

void ms_encoder_psnr_finish(ms_encoder_psnr *p, ms_quality_scores *out) {
    memset(out, 0, sizeof *out);
    // A line still waiting for its packet means lines and packets slipped apart: the pairs would be wrong.
    if (p->pending_head < p->pending_count) p->unpaired = 1;
    // The encoder does not report (or not for every frame), or the bookkeeping ran out of memory: no report, as a
    // report never costs a good export.
    if (p->failed || p->unpaired || p->count == 0) return;
    timed_score *frames = malloc((size_t)p->count * sizeof *frames);
    out->frames = malloc((size_t)p->count * sizeof *out->frames);
    if (!frames || !out->frames) {
        free(frames);
        free(out->frames);
        out->frames = NULL;
        return;
    }
    for (int64_t i = 0; i < p->count; i++) frames[i] = (timed_score){p->times[i], p->scores[i]};
    qsort(frames, (size_t)p->count, sizeof *frames, by_time);  // packets come in decode order
    for (int64_t i = 0; i < p->count; i++) out->frames[i] = frames[i].score;
    free(frames);
    out->count = p->count;
    out->width = p->width;
    out->height = p->height;
}

void ms_encoder_psnr_free(ms_encoder_psnr *p) {
    free(p->pending);
    free(p->scores);
    free(p->times);
    memset(p, 0, sizeof *p);
}
