// The shim's transcode alone, without the pipeline around it: `codecs.sh` with SHIM=1 runs it beside `pipeline`
// and the ffmpeg CLI, so a difference splits into what the encode itself costs (this against the CLI) and what the
// pipeline does around it (the pipeline against this: its start, ledger, probes and the output's fsync).
// Usage: shim-transcode INPUT OUTPUT CODEC PRESET CRF THREADS (CODEC h264, hevc or av1; PRESET one of x264's names,
// as a workflow's video.codec and video.preset). With SHIM_PSNR=1 in the environment it asks for the encoder's PSNR
// of each frame (encoder-psnr.sh) and prints their count and mean.
#include "CMediaShim.h"
#include "ms_quality.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/// The index of `name` in `names` (count entries), or -1.
static int lookup(const char *name, const char *const *names, int count) {
    for (int i = 0; i < count; i++)
        if (!strcmp(name, names[i])) return i;
    return -1;
}

int main(int argc, char **argv) {
    // These names repeat those of the shim's preset table (encoder_settings.c, internal to the shim) on purpose: a
    // benchmark stands alone on the public header, as a caller of the shim would.
    static const char *const codecs[] = {[MS_VIDEO_H264] = "h264", [MS_VIDEO_HEVC] = "hevc", [MS_VIDEO_AV1] = "av1"};
    static const char *const presets[] = {
        [MS_PRESET_ULTRAFAST] = "ultrafast", [MS_PRESET_SUPERFAST] = "superfast", [MS_PRESET_VERYFAST] = "veryfast",
        [MS_PRESET_FASTER] = "faster",       [MS_PRESET_FAST] = "fast",           [MS_PRESET_MEDIUM] = "medium",
        [MS_PRESET_SLOW] = "slow",           [MS_PRESET_SLOWER] = "slower",       [MS_PRESET_VERYSLOW] = "veryslow",
    };
    int codec = argc == 7 ? lookup(argv[3], codecs, 3) : -1;
    int preset = argc == 7 ? lookup(argv[4], presets + 1, MS_PRESET_VERYSLOW) + 1 : 0;
    if (codec < 0 || preset <= 0) {
        fprintf(stderr, "usage: %s INPUT OUTPUT h264|hevc|av1 PRESET CRF THREADS\n", argv[0]);
        return 2;
    }
    // The shim's objects come from a release build that may be older than this header (codecs.sh with PIPELINE set
    // does not rebuild it): with another layout the options would be read wrong.
    if (ms_abi_version() != MS_ABI_VERSION) {
        fprintf(stderr, "shim-transcode: the shim's ABI is %d, this program's %d: rebuild the release build\n",
                ms_abi_version(), MS_ABI_VERSION);
        return 1;
    }
    ms_prepare_process();
    ms_transcode_options options;
    ms_transcode_options_init(&options);
    options.video_codec = codec;
    options.preset = preset;
    options.crf = atoi(argv[5]);
    options.threads = atoi(argv[6]);
    ms_quality_scores psnr = {0};
    const char *asked = getenv("SHIM_PSNR");
    if (asked && !strcmp(asked, "1")) options.encoder_psnr = &psnr;
    char message[1024] = "";
    int status = ms_transcode(argv[1], argv[2], &options, NULL, NULL, NULL, message, sizeof message);
    if (status != 0) fprintf(stderr, "shim-transcode: %s\n", message);
    if (status == 0 && options.encoder_psnr) {
        double sum = 0;
        for (int64_t i = 0; i < psnr.count; i++) sum += psnr.frames[i];
        printf("%lld frames, PSNR mean %.3f\n", (long long)psnr.count, psnr.count ? sum / (double)psnr.count : 0.0);
    }
    ms_quality_scores_free(&psnr);
    return status == 0 ? 0 : 1;
}
