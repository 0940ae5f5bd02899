// shim-check's look at ms_quality: each metric on a pair, the refusals (10-bit, HDR, a format switch mid-file, files
// of different lengths), a distorted file at another size (the scaler path), and a cancel in the middle of VMAF on
// two threads (vmaf_close with frames still queued). Under --valgrind this is what shows every path frees what it
// allocated. Inputs are made by shim-check.sh in `tmp`.
#include "../Sources/CMediaShim/include/CMediaShim.h"

#include <stdio.h>
#include <string.h>

int check_quality(const char *tmp);

static const char *at(const char *tmp, const char *name) {
    static char paths[32][1024];  // every path of the checks: fewer than 32
    static int next;
    char *path = paths[next++ % 32];
    snprintf(path, sizeof paths[0], "%s/%s", tmp, name);
    return path;
}

static int cancel_after(void *ctx, double done, double total) {
    (void)total;
    return done >= *(double *)ctx;
}

/// Measures `distorted` against `reference`: 1 when the code is `code`, the message holds `message`, and a success
/// has `frames` scores between `low` and `high`.
static int expect(const char *what, const char *reference, const char *distorted, ms_quality_metric metric,
                  int threads, double cancel_at, int code, const char *message, int64_t frames, double low,
                  double high) {
    ms_quality_scores scores;
    char err[1024] = "";
    int ret = ms_quality(reference, distorted, metric, threads, cancel_at >= 0 ? cancel_after : NULL, &cancel_at,
                         &scores, err, sizeof err);
    double mean = 0;
    for (int64_t i = 0; i < scores.count; i++) mean += scores.frames[i] / (double)scores.count;
    printf("  %-44s %5d  %lld frames, mean %.4f  %s\n", what, ret, (long long)scores.count, mean, err);
    int ok = ret == code && strstr(err, message) && (code != 0 || (scores.count == frames && mean >= low && mean <= high));
    ms_quality_scores_free(&scores);
    if (!ok) printf("  FAIL: %s: expected %d '%s'\n", what, code, message);
    return ok;
}

/// Returns the number of failures.
int check_quality(const char *tmp) {
    printf("quality measurements:\n");
    const char *ref = at(tmp, "quality-ref.mp4"), *dist = at(tmp, "quality-dist.mp4");
    int checks = 0, passed = 0;
    checks++, passed += expect("VMAF of a CRF 35 encode", ref, dist, MS_QUALITY_VMAF, 2, -1, 0, "", 12, 20, 99);
    checks++, passed += expect("SSIM of it", ref, dist, MS_QUALITY_SSIM, 1, -1, 0, "", 12, 0.5, 0.999);
    checks++, passed += expect("PSNR of it", ref, dist, MS_QUALITY_PSNR, 1, -1, 0, "", 12, 20, 60);
    checks++, passed += expect("VMAF of a smaller encode (scaled)", ref, at(tmp, "quality-small.mp4"), MS_QUALITY_VMAF,
                               1, -1, 0, "", 12, 5, 99);
    checks++, passed += expect("VMAF of a file with itself", ref, ref, MS_QUALITY_VMAF, 1, -1, 0, "", 12, 97, 100.01);
    const char *ten_bit = at(tmp, "quality-10bit.mkv");
    checks++, passed += expect("a 10-bit reference", ten_bit, ten_bit, MS_QUALITY_VMAF, 1, -1,
                               MS_ERROR_QUALITY_UNSUPPORTED, "yuv420p10le", 0, 0, 0);
    const char *hdr = at(tmp, "hdr-subtitled.mkv");
    checks++, passed += expect("an HDR reference", hdr, hdr, MS_QUALITY_VMAF, 1, -1, MS_ERROR_QUALITY_UNSUPPORTED,
                               "HDR", 0, 0, 0);
    const char *switching = at(tmp, "quality-switching.mjpeg");
    checks++, passed += expect("a format switch mid-file (VMAF)", switching, switching, MS_QUALITY_VMAF, 2, -1,
                               MS_ERROR_QUALITY_UNSUPPORTED, "yuvj444p at frame 10", 0, 0, 0);
    checks++, passed += expect("a format switch mid-file (SSIM)", switching, switching, MS_QUALITY_SSIM, 1, -1,
                               MS_ERROR_QUALITY_UNSUPPORTED, "yuvj444p at frame 10", 0, 0, 0);
    checks++, passed += expect("a shorter distorted file", ref, at(tmp, "quality-short.mp4"), MS_QUALITY_PSNR, 1, -1,
                               MS_ERROR_QUALITY_MISMATCH, "ends after 6 frames", 0, 0, 0);
    const char *longer = at(tmp, "quality-long.mp4");
    checks++, passed += expect("VMAF on 2 threads cancelled at 0.5 s", longer, longer, MS_QUALITY_VMAF, 2, 0.5,
                               MS_ERROR_CANCELLED, "", 0, 0, 0);
    checks++, passed += expect("a missing file", ref, at(tmp, "missing.mp4"), MS_QUALITY_VMAF, 1, -1,
                               MS_ERROR_INPUT_NOT_FOUND, "missing.mp4", 0, 0, 0);
    return checks - passed;
}
