// The shim's quality measurement alone: `quality.sh` times it on a clip and its encode, per metric.
// Usage: shim-quality REFERENCE DISTORTED vmaf|ssim|psnr THREADS [c]; prints "<mean> <frames>", and for VMAF the
// code libvmaf ran (avx2 or c; "c" as fifth argument keeps libvmaf on its C paths).
#include "CMediaShim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    static const char *const metrics[] = {[MS_QUALITY_VMAF] = "vmaf", [MS_QUALITY_SSIM] = "ssim",
                                          [MS_QUALITY_PSNR] = "psnr"};
    int metric = -1;
    for (int i = 0; (argc == 5 || (argc == 6 && !strcmp(argv[5], "c"))) && i < 3; i++)
        if (!strcmp(argv[3], metrics[i])) metric = i;
    if (metric < 0) {
        fprintf(stderr, "usage: %s REFERENCE DISTORTED vmaf|ssim|psnr THREADS [c]\n", argv[0]);
        return 2;
    }
    ms_quality_set_vmaf_simd(argc == 5);
    ms_quality_scores scores;
    char message[1024];
    int ret = ms_quality(argv[1], argv[2], (ms_quality_metric)metric, atoi(argv[4]), NULL, NULL, &scores, message,
                         sizeof message);
    if (ret < 0) {
        fprintf(stderr, "shim-quality: %s\n", message);
        return 1;
    }
    double sum = 0;
    for (int64_t i = 0; i < scores.count; i++) sum += scores.frames[i];
    const char *code = ms_quality_vmaf_simd() == MS_VMAF_SIMD_AVX2 ? "avx2" : "c";
    printf("%.4f %lld %s\n", sum / (double)scores.count, (long long)scores.count, metric ? "" : code);
    ms_quality_scores_free(&scores);
    return 0;
}
