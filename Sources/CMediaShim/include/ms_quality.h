// CMediaShim's quality measurement: how close an encode (the distorted file) is to its source (the reference), frame
// by frame. Part of the API that CMediaShim.h describes (its rules hold here), which includes this header.
#ifndef C_MEDIA_SHIM_QUALITY_H
#define C_MEDIA_SHIM_QUALITY_H

#include "ms_transcode.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// What `ms_quality` measures.
typedef enum ms_quality_metric {
    /// VMAF with the model vmaf_v0.6.1 (libvmaf, built into the shim): 0–100, 100 when indistinguishable.
    MS_QUALITY_VMAF = 0,
    /// SSIM of the three planes weighted by their size (libavfilter's `ssim`, its "All"): 0–1.
    MS_QUALITY_SSIM = 1,
    /// PSNR in dB of the planes' mean squared error weighted by their size (libavfilter's `psnr`, its "psnr_avg");
    /// a frame identical to its reference counts as MS_QUALITY_PSNR_IDENTICAL.
    MS_QUALITY_PSNR = 2,
} ms_quality_metric;

/// The PSNR given to a frame equal to its reference (whose PSNR is infinite), so that means stay finite.
#define MS_QUALITY_PSNR_IDENTICAL 100.0

/// The scores of a measurement, one per frame in display order.
typedef struct ms_quality_scores {
    /// `count` scores (malloc'd; free with ms_quality_scores_free).
    double *frames;
    int64_t count;
    /// The reference's picture size, at which the frames were compared.
    int width, height;
} ms_quality_scores;

/// Decodes the best video stream of `reference` and of `distorted` and scores each distorted frame against the
/// reference frame of the same position. Every frame of both files must decode to 8-bit 4:2:0 (yuv420p, or yuvj420p),
/// and the reference must not be HDR (PQ or HLG) nor change its picture size: anything else (10-bit, 4:2:2, 4:4:4,
/// RGB, HDR, also from some frame on) fails with MS_ERROR_QUALITY_UNSUPPORTED naming the format and the frame. The distorted frames are scaled (bicubic) to the reference's size and converted to its format and
/// range. The files must have as many frames and the same display rotation (an export that changes the frame rate
/// cannot be compared frame by frame): else MS_ERROR_QUALITY_MISMATCH.
/// `threads`: decoder threads and libvmaf's (0: one per core). `cb` (may be NULL) reports the reference's seconds
/// compared and may cancel (MS_ERROR_CANCELLED). On success `out` holds the scores; on failure it is empty.
/// Errors: as ms_probe for either file, MS_ERROR_NO_VIDEO, MS_ERROR_NO_FRAMES, MS_ERROR_UNSUPPORTED_CODEC, the two
/// above, MS_ERROR_CANCELLED, MS_ERROR_FFMPEG_UNAVAILABLE (libavfilter, for SSIM and PSNR).
int ms_quality(const char *reference, const char *distorted, ms_quality_metric metric, int threads,
               ms_progress_fn cb, void *ctx, ms_quality_scores *out, char *errbuf, size_t errlen);

/// The code libvmaf's feature extractors (integer VIF, ADM, motion) run: the same integer features either way.
typedef enum ms_vmaf_simd {
    /// libvmaf's C paths: a CPU without AVX2, a build for another architecture than x86_64, or SIMD turned off.
    MS_VMAF_SIMD_NONE = 0,
    /// libvmaf's AVX2 code (x86_64 builds, on a CPU with AVX2): about 6.5× faster than the C paths
    /// (docs/benchmarks.md).
    MS_VMAF_SIMD_AVX2 = 1,
} ms_vmaf_simd;

/// Lets later VMAF measurements of this process use the CPU's SIMD code (`enabled` 1, the default) or keeps them on
/// libvmaf's C paths (0: libvmaf's `cpumask` set to all flags). For tests and benchmarks that compare the two; the
/// setting is process-wide, and libvmaf reads it when a measurement starts.
void ms_quality_set_vmaf_simd(int enabled);

/// The code the last VMAF measurement of this process chose (MS_VMAF_SIMD_NONE before the first): libvmaf's own
/// run-time CPU check, masked as ms_quality_set_vmaf_simd asked.
ms_vmaf_simd ms_quality_vmaf_simd(void);

/// Frees the scores and empties `scores`; NULL-safe.
void ms_quality_scores_free(ms_quality_scores *scores);

#ifdef __cplusplus
}
#endif

#endif
