// shim-check's look at the failures of encoder_settings.c: ms_transcode cannot reach them with this FFmpeg build,
// whose libx264, libx265 and libsvtav1 have every option the shim sets (and ms_transcode_validate refuses a preset
// out of range first). So ms_set_encoder_options is called here on a libx264 context with the settings of another
// encoder, whose options libx264 lacks or types otherwise, and with a value that is no preset.
#include "../Sources/CMediaShim/transcoder.h"

#include <stdio.h>
#include <string.h>

int check_encoder_settings(void);

/// Sets `o` on a new libx264 context: 1 when the code and the message are the ones expected.
static int expect(const char *what, ms_transcode_options o, int code, const char *message) {
    const AVCodec *codec = ff.avcodec_find_encoder_by_name("libx264");
    AVCodecContext *enc = codec ? ms_new_codec_context(codec) : NULL;
    char err[512] = "";
    ms_log_clear();  // as ms_transcode_open_video does
    int ret = enc ? ms_set_encoder_options(enc, &o, err, sizeof err) : AVERROR(ENOMEM);
    ff.avcodec_free_context(&enc);
    printf("  %-44s %-27s %s\n", what, ret == 0 ? "ok" : ret == MS_ERROR_INVALID_ARGUMENT ? "MS_ERROR_INVALID_ARGUMENT" : "error", err);
    if (ret == code && strstr(err, message)) return 1;
    printf("  FAIL: %s: expected %d '%s', got %d '%s'\n", what, code, message, ret, err);
    return 0;
}

/// Returns the number of failures.
int check_encoder_settings(void) {
    char err[512];
    if (ms_ffmpeg_load(err, sizeof err) < 0) {
        printf("  FAIL: %s\n", err);
        return 1;
    }
    printf("encoder settings refused (libx264 given other encoders' settings):\n");
    ms_transcode_options o;
    ms_transcode_options_init(&o);
    int passed = 0, checks = 0;
    o.preset = MS_PRESET_VERYFAST;
    checks++, passed += expect("libx264's own settings", o, 0, "");
    o.video_codec = MS_VIDEO_HEVC;  // x265-params, which libx264 has not
    o.closed_gop = 1;
    checks++, passed += expect("x265's parameters", o, MS_ERROR_INVALID_ARGUMENT,
                               "the libx264 encoder has no option 'x265-params'");
    o.video_codec = MS_VIDEO_AV1;  // a preset number, which libx264's preset (a name) does not take
    o.closed_gop = 0;
    checks++, passed += expect("SVT-AV1's preset number", o, MS_ERROR_INVALID_ARGUMENT,
                               "the libx264 encoder's option 'preset'");
    o.preset = MS_PRESET_DEFAULT;  // svtav1-params, which libx264 has not
    o.threads = 2;
    checks++, passed += expect("SVT-AV1's logical processors", o, MS_ERROR_INVALID_ARGUMENT,
                               "the libx264 encoder has no option 'svtav1-params'");
    ms_transcode_options_init(&o);
    o.preset = MS_PRESET_VERYSLOW + 1;
    checks++, passed += expect("a value that is no preset", o, MS_ERROR_INVALID_ARGUMENT, "option preset (ms_preset)");
    o.preset = -1;
    checks++, passed += expect("a negative preset", o, MS_ERROR_INVALID_ARGUMENT, "option preset (ms_preset)");
    return checks - passed;
}
