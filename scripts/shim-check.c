// shim-check: drives CMediaShim over every sample, checks the outputs with ffprobe, and exercises
// the error paths and cancellation. Built and run by scripts/shim-check.sh.
//
//   shim-check [--valgrind] SAMPLES_DIR TEMP_DIR
//
// Prints one line per operation; exits 0 when every check passed, 1 otherwise. --valgrind runs
// the same checks under `valgrind --leak-check=full --error-exitcode=9`.
#define _GNU_SOURCE
#include "CMediaShim.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *samples, *tmp;
static int failures;

/// shim-check-routes.c: the lines of FFmpeg's own threads; returns the number of failures.
int check_ffmpeg_thread_routes(void);
/// shim-check-encoder.c: the options an encoder lacks or refuses (encoder_settings.c); returns the number of failures.
int check_encoder_settings(void);
int check_quality(const char *tmp);

static void fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    printf("  FAIL: ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    failures++;
}

#define CHECK(cond, ...) \
    do {                 \
        if (!(cond)) fail(__VA_ARGS__); \
    } while (0)

static const char *in_path(const char *name) {
    static char buf[4][1024];
    static int next;
    char *p = buf[next++ % 4];
    snprintf(p, 1024, "%s/%s", samples, name);
    return p;
}

static const char *out_path(const char *name) {
    static char buf[4][1024];
    static int next;
    char *p = buf[next++ % 4];
    snprintf(p, 1024, "%s/%s", tmp, name);
    return p;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

static const char *code_name(int code) {
    switch (code) {
    case 0: return "ok";
    case MS_ERROR_INVALID_ARGUMENT: return "MS_ERROR_INVALID_ARGUMENT";
    case MS_ERROR_INPUT_NOT_FOUND: return "MS_ERROR_INPUT_NOT_FOUND";
    case MS_ERROR_NOT_MEDIA: return "MS_ERROR_NOT_MEDIA";
    case MS_ERROR_NO_VIDEO: return "MS_ERROR_NO_VIDEO";
    case MS_ERROR_UNSUPPORTED_CODEC: return "MS_ERROR_UNSUPPORTED_CODEC";
    case MS_ERROR_REMUX_UNSUPPORTED: return "MS_ERROR_REMUX_UNSUPPORTED";
    case MS_ERROR_OUTPUT_OPEN: return "MS_ERROR_OUTPUT_OPEN";
    case MS_ERROR_DISK_FULL: return "MS_ERROR_DISK_FULL";
    case MS_ERROR_CANCELLED: return "MS_ERROR_CANCELLED";
    case MS_ERROR_NO_FRAMES: return "MS_ERROR_NO_FRAMES";
    case MS_ERROR_EVERY_PART_EMPTY: return "MS_ERROR_EVERY_PART_EMPTY";
    default: return "ffmpeg error";
    }
}

// MARK: - ffprobe

typedef struct probed {
    char vcodec[32], acodec[32];
    int width, height, rotation, channels, sample_rate, video_streams, audio_streams;
    long frames;
    double duration;
} probed;

/// Runs ffprobe (counting frames) on path; rotation converted to our clockwise convention.
static int ffprobe(const char *path, probed *p) {
    memset(p, 0, sizeof *p);
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "ffprobe -v error -count_frames -show_entries format=duration:stream=codec_type,codec_name,width,height,"
             "channels,sample_rate,nb_read_frames:stream_side_data=rotation -of compact=p=1:nk=0 'file:%s' 2>/dev/null",
             path);
    FILE *f = popen(cmd, "r");
    if (!f) return -1;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        int is_stream = strncmp(line, "stream|", 7) == 0;
        int video = is_stream && strstr(line, "codec_type=video") != NULL;
        int audio = is_stream && strstr(line, "codec_type=audio") != NULL;
        p->video_streams += video;
        p->audio_streams += audio;
        for (char *tok = strtok(line, "|"); tok; tok = strtok(NULL, "|")) {
            char *eq = strchr(tok, '=');
            if (!eq) continue;
            *eq = '\0';
            const char *k = tok, *v = eq + 1;
            if (!strcmp(k, "duration")) p->duration = atof(v);
            else if (video && !strcmp(k, "codec_name")) snprintf(p->vcodec, sizeof p->vcodec, "%s", v);
            else if (audio && !strcmp(k, "codec_name")) snprintf(p->acodec, sizeof p->acodec, "%s", v);
            else if (video && !strcmp(k, "width")) p->width = atoi(v);
            else if (video && !strcmp(k, "height")) p->height = atoi(v);
            else if (video && !strcmp(k, "nb_read_frames")) p->frames = atol(v);
            else if (video && !strcmp(k, "rotation")) p->rotation = ((-atoi(v)) % 360 + 360) % 360;
            else if (audio && !strcmp(k, "channels")) p->channels = atoi(v);
            else if (audio && !strcmp(k, "sample_rate")) p->sample_rate = atoi(v);
        }
    }
    return pclose(f) == 0 ? 0 : -1;
}

/// 1 when the top-level "moov" box precedes "mdat", 0 when it follows, -1 when unreadable.
static int moov_first(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    int result = -1;
    unsigned char h[16];
    long pos = 0;
    while (fseek(f, pos, SEEK_SET) == 0 && fread(h, 1, 8, f) == 8) {
        unsigned long long size = (unsigned long long)h[0] << 24 | h[1] << 16 | h[2] << 8 | h[3];
        if (size == 1 && fread(h + 8, 1, 8, f) == 8) {
            size = 0;
            for (int i = 8; i < 16; i++) size = size << 8 | h[i];
        }
        if (!memcmp(h + 4, "moov", 4)) { result = 1; break; }
        if (!memcmp(h + 4, "mdat", 4)) { result = 0; break; }
        if (size < 8) break;
        pos += (long)size;
    }
    fclose(f);
    return result;
}

/// PSNR (average) between two pictures of the same size, via the ffmpeg CLI; -1 on failure.
static double psnr(const char *a, const char *b) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "ffmpeg -nostdin -hide_banner -i 'file:%s' -i 'file:%s' -lavfi psnr -f null - 2>&1",
             a, b);
    FILE *f = popen(cmd, "r");
    if (!f) return -1;
    double value = -1;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        char *p = strstr(line, "average:");
        if (p) value = strncmp(p + 8, "inf", 3) == 0 ? 99 : atof(p + 8);
    }
    pclose(f);
    return value;
}

// MARK: - Log handler and progress

static int log_lines[4];
/// The routes the checks run under (ms_log_set_route): every line must come with the one of the thread
/// that asked for the work, also from the threads the shim and FFmpeg start for it.
enum { MAIN_ROUTE = 42, PROBE_ROUTE = 43 };
static int probe_route_lines, misrouted_lines;
static void on_log(void *ctx, uint64_t route, int level, const char *line) {
    (void)ctx;
    if (level >= 0 && level < 4) log_lines[level]++;
    if (route == PROBE_ROUTE) probe_route_lines++;
    else if (route != MAIN_ROUTE && misrouted_lines++ < 5)
        printf("  line with route %llu: %s\n", (unsigned long long)route, line);
    if (!line[0] || line[strlen(line) - 1] == '\n') fail("log line empty or not trimmed: '%s'", line);
}

typedef struct progress {
    int calls, monotonic;
    double last, total, cancel_at;  // cancel_at < 0: never
} progress;

static int on_progress(void *ctx, double done, double total) {
    progress *p = ctx;
    if (p->calls > 0 && done < p->last) p->monotonic = 0;
    p->calls++;
    p->last = done;
    p->total = total;
    return p->cancel_at >= 0 && done >= p->cancel_at;
}

// MARK: - Checks

static void expect_code(const char *what, int got, int want, const char *msg) {
    printf("  %-44s %-27s %s\n", what, code_name(got), msg);
    CHECK(got == want, "%s: expected %s, got %s (%d)", what, code_name(want), code_name(got), got);
    CHECK(got == 0 || msg[0], "%s: error without a message", what);
}

static void check_probe(const char *name, int want, const char *vcodec, int w, int h, int rotation, int channels) {
    ms_media_info info;
    char err[512];
    int ret = ms_probe(in_path(name), &info, err, sizeof err);
    if (ret < 0) {
        printf("probe     %-27s %s: %s\n", name, code_name(ret), err);
        CHECK(ret == want, "probe %s: expected %s", name, code_name(want));
        return;
    }
    printf("probe     %-27s %s %.2fs %lld B, %d streams | %s %dx%d (shown %dx%d, rot %d) %.2f fps %s %lld frames",
           name, info.format_name, info.duration, (long long)info.size, info.stream_count, info.video_codec, info.width,
           info.height, info.display_width, info.display_height, info.rotation, info.fps, info.pixel_format,
           (long long)info.frame_count);
    if (info.has_audio)
        printf(" | %s %d Hz %d ch (%d audio)", info.audio_codec, info.sample_rate, info.channels,
               info.audio_stream_count);
    printf("\n");
    CHECK(want == 0, "probe %s: expected %s", name, code_name(want));
    CHECK(!strcmp(info.video_codec, vcodec) && info.width == w && info.height == h && info.rotation == rotation,
          "probe %s: video facts", name);
    CHECK(info.channels == channels, "probe %s: %d channels, expected %d", name, info.channels, channels);
}

typedef struct expect {
    int code;
    const char *vcodec, *acodec;  // acodec NULL: no audio
    int width, height, rotation, channels;
    long frames;                  // 0: same as the input
} expect;

static const char *src_path(const char *name) { return strchr(name, '/') ? name : in_path(name); }
static const char *shown(const char *name) { return strrchr(name, '/') ? strrchr(name, '/') + 1 : name; }

static void check_transcode(const char *name, const char *out, const ms_transcode_options *opt, expect e) {
    progress pr = {.monotonic = 1, .cancel_at = -1};
    ms_transcode_result res;
    char err[512];
    const char *mode = opt->mode == MS_MODE_REMUX ? "remux" : "transcode";
    double t0 = now();
    int ret = ms_transcode(src_path(name), out_path(out), opt, on_progress, &pr, &res, err, sizeof err);
    double elapsed = now() - t0;
    if (ret < 0) {
        printf("%-9s %-27s %s: %s\n", mode, shown(name), code_name(ret), err);
        CHECK(ret == e.code, "%s %s: expected %s", mode, name, code_name(e.code));
        CHECK(!exists(out_path(out)), "%s %s: partial output left behind", mode, name);
        return;
    }
    printf("%-9s %-27s -> %s %dx%d (shown %dx%d, rot %d) %lld frames %.3fs %lld B, %lld errors, decoded "
           "%.2f/%.2fs, %d progress calls, %.2fs\n",
           mode, shown(name), out, res.width, res.height, res.display_width, res.display_height, res.rotation,
           (long long)res.video_frames, res.duration, (long long)res.size, (long long)res.decode_errors,
           res.decoded_seconds, res.input_duration, pr.calls, elapsed);
    if (res.decoded_seconds + 0.1 < res.input_duration)
        printf("  warning: input truncated, decoded %.2f of %.2f s\n", res.decoded_seconds, res.input_duration);
    CHECK(e.code == 0, "%s %s: expected %s", mode, name, code_name(e.code));
    CHECK(pr.calls >= 1 && pr.monotonic && fabs(pr.total - res.input_duration) < 1e-6, "%s %s: progress", mode, name);

    probed in, o;
    CHECK(ffprobe(src_path(name), &in) == 0, "ffprobe %s", name);
    if (ffprobe(out_path(out), &o) != 0) {
        fail("ffprobe %s", out);
        return;
    }
    long frames = e.frames ? e.frames : in.frames;
    double frame = o.frames > 0 ? o.duration / o.frames : 0.05;
    printf("  ffprobe: %s %dx%d rot %d %ld frames %.3fs", o.vcodec, o.width, o.height, o.rotation, o.frames,
           o.duration);
    if (o.audio_streams) printf(" | %s %d Hz %d ch", o.acodec, o.sample_rate, o.channels);
    printf(" | moov %s\n", moov_first(out_path(out)) == 1 ? "first" : "last");
    CHECK(!strcmp(o.vcodec, e.vcodec), "%s: video codec %s, expected %s", out, o.vcodec, e.vcodec);
    CHECK(o.video_streams == 1, "%s: %d video streams", out, o.video_streams);
    CHECK(e.acodec ? o.audio_streams == 1 && !strcmp(o.acodec, e.acodec) : o.audio_streams == 0,
          "%s: audio %s (%d streams), expected %s", out, o.acodec, o.audio_streams, e.acodec ? e.acodec : "none");
    CHECK(!e.acodec || o.channels == e.channels, "%s: %d channels, expected %d", out, o.channels, e.channels);
    CHECK(o.width == e.width && o.height == e.height && res.width == e.width && res.height == e.height,
          "%s: %dx%d, expected %dx%d", out, o.width, o.height, e.width, e.height);
    CHECK(o.rotation == e.rotation && res.rotation == e.rotation, "%s: rotation %d, expected %d", out, o.rotation,
          e.rotation);
    CHECK(o.frames == res.video_frames, "%s: ffprobe counts %ld frames, result says %lld", out, o.frames,
          (long long)res.video_frames);
    CHECK(labs(o.frames - frames) <= (e.frames ? 1 : 0), "%s: %ld frames, expected %ld", out, o.frames, frames);
    CHECK(fabs(o.duration - res.duration) <= frame + 0.001, "%s: duration %.3f, result says %.3f", out, o.duration,
          res.duration);
    CHECK(fabs(o.duration - res.decoded_seconds) <= frame + 0.001, "%s: duration %.3f, decoded %.3f", out,
          o.duration, res.decoded_seconds);
    CHECK(res.size > 0, "%s: size", out);
    CHECK(moov_first(out_path(out)) == (opt->faststart ? 1 : 0), "%s: faststart not honoured", out);
}

static void check_thumbnail(const char *name, const char *out, double at, int max_width, int want, int w, int h) {
    char err[512];
    int ow = 0, oh = 0;
    double t0 = now();
    int ret = ms_thumbnail(src_path(name), out_path(out), at, max_width, &ow, &oh, err, sizeof err);
    if (ret < 0) {
        printf("thumbnail %-27s %s: %s\n", shown(name), code_name(ret), err);
        CHECK(ret == want, "thumbnail %s: expected %s", name, code_name(want));
        return;
    }
    probed o;
    int probed_ok = ffprobe(out_path(out), &o) == 0;
    printf("thumbnail %-27s -> %s at %.1fs: %dx%d, ffprobe %s %dx%d, %.2fs\n", shown(name), out, at, ow, oh, o.vcodec,
           o.width, o.height, now() - t0);
    CHECK(want == 0, "thumbnail %s: expected %s", name, code_name(want));
    CHECK(probed_ok && !strcmp(o.vcodec, "mjpeg") && o.width == w && o.height == h && ow == w && oh == h,
          "thumbnail %s: %dx%d, expected mjpeg %dx%d", name, o.width, o.height, w, h);
}

static void check_cancel(double cancel_at) {
    ms_transcode_options opt;
    ms_transcode_options_init(&opt);
    opt.preset = MS_PRESET_ULTRAFAST;
    progress pr = {.monotonic = 1, .cancel_at = cancel_at};
    char err[512], what[64];
    int ret = ms_transcode(in_path("clip-h264-aac.mp4"), out_path("cancelled.mp4"), &opt, on_progress, &pr, NULL, err,
                           sizeof err);
    snprintf(what, sizeof what, "cancel at %.1fs (stopped at %.2fs)", cancel_at, pr.last);
    expect_code(what, ret, MS_ERROR_CANCELLED, err);
    CHECK(pr.last >= cancel_at && pr.last < cancel_at + 0.5, "cancelled late: %.2f", pr.last);
    CHECK(!exists(out_path("cancelled.mp4")), "cancelled output left behind");
}

/// Copies an AVI and renames its video codec's FourCC (in the headers before "movi") to "ABCD",
/// a codec no FFmpeg knows.
static int make_unknown_codec(const char *src, const char *dst) {
    FILE *in = fopen(src, "rb"), *out = fopen(dst, "wb");
    int ok = in && out;
    static unsigned char buf[1 << 20];
    size_t n = ok ? fread(buf, 1, sizeof buf, in) : 0;
    unsigned char *movi = n ? memmem(buf, n, "movi", 4) : NULL;
    for (unsigned char *p = buf; movi && (p = memmem(p, (size_t)(movi - p), "MJPG", 4)); p += 4) memcpy(p, "ABCD", 4);
    ok = ok && movi && fwrite(buf, 1, n, out) == n;
    if (in) fclose(in);
    if (out) fclose(out);
    return ok ? 0 : -1;
}

typedef struct concurrent_probe {
    char err[512];
    int ret;
} concurrent_probe;

static void *probe_truncated(void *arg) {
    concurrent_probe *c = arg;
    ms_media_info info;
    ms_log_set_route(PROBE_ROUTE);
    for (int i = 0; i < 20 && c->ret >= 0; i++)
        c->ret = ms_probe(in_path("truncated.mp4"), &info, c->err, sizeof c->err);
    return NULL;
}

/// A rendition for a ladder: keyframes forced every second, then packaged into HLS fMP4 segments of a second.
static void check_package(void) {
    ms_transcode_options o;
    ms_transcode_options_init(&o);
    o.preset = MS_PRESET_VERYFAST;
    o.streams = MS_STREAMS_VIDEO;
    o.max_width = 320;
    o.max_height = 180;
    o.faststart = 0;
    o.keyframe_interval = 1.0;
    char err[512];
    ms_transcode_result res;
    int ret = ms_transcode(in_path("clip-h264-aac.mp4"), out_path("rendition.mp4"), &o, NULL, NULL, &res, err, sizeof err);
    CHECK(ret == 0, "rendition: %s", err);
    char folder[1024], playlist[1100];
    snprintf(folder, sizeof folder, "%s", out_path("hls"));
    mkdir(folder, 0755);
    snprintf(playlist, sizeof playlist, "%s/index.m3u8", folder);
    progress pr = {.monotonic = 1, .cancel_at = -1};
    ret = ms_package_hls(out_path("rendition.mp4"), playlist, 1.0, on_progress, &pr, err, sizeof err);
    printf("  %-44s %-27s %s\n", "package rendition.mp4 (1 s segments)", code_name(ret), err);
    CHECK(ret == 0, "package: %s", err);
    CHECK(pr.calls >= 1 && pr.monotonic, "package: progress");
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "test $(ffprobe -v error -select_streams v -skip_frame nokey -show_entries frame=pts_time -of csv=p=0 "
             "'%s' | grep -c '^[0-9]') -eq $(grep -c '^seg_' '%s') && grep -q '#EXT-X-MAP:URI=\"init.mp4\"' '%s'",
             playlist, playlist, playlist);
    CHECK(system(cmd) == 0, "package: a keyframe per segment, and the init segment, expected in %s", playlist);
    // The first picture is shown at 0, as in the MP4 (not later by the B-frame delay).
    snprintf(cmd, sizeof cmd,
             "test \"$(ffprobe -v error -show_entries format=start_time -of csv=p=0 '%s')\" = 0.000000", playlist);
    CHECK(system(cmd) == 0, "package: the video of %s does not start at 0", playlist);
    expect_code("package a missing input", ms_package_hls(in_path("missing.mp4"), playlist, 1.0, NULL, NULL, err,
                                                          sizeof err), MS_ERROR_INPUT_NOT_FOUND, err);
    expect_code("package with 0 s segments", ms_package_hls(out_path("rendition.mp4"), playlist, 0, NULL, NULL, err,
                                                            sizeof err), MS_ERROR_INVALID_ARGUMENT, err);
}

static void check_errors(void) {
    char err[512];
    ms_media_info info;
    ms_transcode_options opt;
    ms_transcode_options_init(&opt);
    printf("errors:\n");
    expect_code("probe missing file", ms_probe(in_path("missing.mp4"), &info, err, sizeof err),
                MS_ERROR_INPUT_NOT_FOUND, err);
    expect_code("probe 'http://...' (a file name here)",
                ms_probe("http://127.0.0.1:9/x.mp4", &info, err, sizeof err), MS_ERROR_INPUT_NOT_FOUND, err);
    expect_code("transcode into a missing folder",
                ms_transcode(in_path("clip-no-audio.mp4"), out_path("no/such/dir/x.mp4"), &opt, NULL, NULL, NULL,
                             err, sizeof err),
                MS_ERROR_OUTPUT_OPEN, err);
    expect_code("transcode below a file (not a folder)",
                ms_transcode(in_path("clip-no-audio.mp4"), in_path("clip-no-audio.mp4/x.mp4"), &opt, NULL, NULL, NULL,
                             err, sizeof err),
                MS_ERROR_OUTPUT_OPEN, err);
    expect_code("transcode onto /dev/full",
                ms_transcode(in_path("clip-no-audio.mp4"), "/dev/full", &opt, NULL, NULL, NULL, err, sizeof err),
                MS_ERROR_DISK_FULL, err);
    CHECK(exists("/dev/full"), "/dev/full was removed");
    expect_code("remux onto /dev/full (faststart)",
                ms_transcode(in_path("clip-no-audio.mp4"), "/dev/full",
                             &(ms_transcode_options){.mode = MS_MODE_REMUX, .crf = -1, .faststart = 1}, NULL, NULL,
                             NULL, err, sizeof err),
                MS_ERROR_DISK_FULL, err);
    expect_code("thumbnail onto /dev/full",
                ms_thumbnail(in_path("clip-no-audio.mp4"), "/dev/full", 0, 0, NULL, NULL, err, sizeof err),
                MS_ERROR_DISK_FULL, err);
    expect_code("transcode audio-only input",
                ms_transcode(out_path("audio-only.m4a"), out_path("x.mp4"), &opt, NULL, NULL, NULL, err, sizeof err),
                MS_ERROR_NO_VIDEO, err);
    expect_code("thumbnail audio-only input",
                ms_thumbnail(out_path("audio-only.m4a"), out_path("x.jpg"), -1, 0, NULL, NULL, err, sizeof err),
                MS_ERROR_NO_VIDEO, err);
    expect_code("transcode output = input",
                ms_transcode(out_path("a:b.mp4"), out_path("a:b.mp4"), &opt, NULL, NULL, NULL, err, sizeof err),
                MS_ERROR_INVALID_ARGUMENT, err);
    CHECK(ms_probe(out_path("a:b.mp4"), &info, err, sizeof err) == 0, "a:b.mp4 damaged by output = input: %s", err);
    opt.preset = MS_PRESET_VERYSLOW + 1;
    expect_code("transcode with a preset out of range",
                ms_transcode(in_path("clip-no-audio.mp4"), out_path("x.mp4"), &opt, NULL, NULL, NULL, err, sizeof err),
                MS_ERROR_INVALID_ARGUMENT, err);
    CHECK(strstr(err, "option preset") != NULL, "preset out of range: the message names another field: %s", err);
    opt.preset = -1;
    expect_code("transcode with a negative preset",
                ms_transcode(in_path("clip-no-audio.mp4"), out_path("x.mp4"), &opt, NULL, NULL, NULL, err, sizeof err),
                MS_ERROR_INVALID_ARGUMENT, err);
    CHECK(strstr(err, "option preset") != NULL, "negative preset: the message names another field: %s", err);
    opt.preset = MS_PRESET_ULTRAFAST;
    opt.video_codec = MS_VIDEO_AV1 + 1;
    expect_code("transcode with a video_codec out of range",
                ms_transcode(in_path("clip-no-audio.mp4"), out_path("x.mp4"), &opt, NULL, NULL, NULL, err, sizeof err),
                MS_ERROR_INVALID_ARGUMENT, err);
    opt.video_codec = -1;
    expect_code("transcode with a negative video_codec",
                ms_transcode(in_path("clip-no-audio.mp4"), out_path("x.mp4"), &opt, NULL, NULL, NULL, err, sizeof err),
                MS_ERROR_INVALID_ARGUMENT, err);
    CHECK(strstr(err, "option video_codec") != NULL, "negative video_codec: the message names another field: %s", err);
    opt.video_codec = MS_VIDEO_HEVC;
    opt.closed_gop = 2;
    expect_code("transcode with closed_gop 2",
                ms_transcode(in_path("clip-no-audio.mp4"), out_path("x.mp4"), &opt, NULL, NULL, NULL, err, sizeof err),
                MS_ERROR_INVALID_ARGUMENT, err);
    CHECK(strstr(err, "option closed_gop") != NULL, "closed_gop 2: the message names another field: %s", err);
    opt.closed_gop = -1;
    expect_code("transcode with closed_gop -1",
                ms_transcode(in_path("clip-no-audio.mp4"), out_path("x.mp4"), &opt, NULL, NULL, NULL, err, sizeof err),
                MS_ERROR_INVALID_ARGUMENT, err);
    // A ladder checks every rendition's options as ms_transcode does.
    ms_transcode_options rungs[2];
    ms_transcode_options_init(&rungs[0]);
    rungs[0].streams = MS_STREAMS_VIDEO;
    rungs[1] = rungs[0];
    rungs[1].closed_gop = 2;
    const char *rung_outs[2] = {out_path("rung-0.mp4"), out_path("rung-1.mp4")};
    expect_code("ladder with a rendition's closed_gop 2",
                ms_transcode_ladder(in_path("clip-no-audio.mp4"), 2, rung_outs, rungs, NULL, NULL, NULL, err,
                                    sizeof err),
                MS_ERROR_INVALID_ARGUMENT, err);
    CHECK(!exists(rung_outs[0]) && !exists(rung_outs[1]), "ladder refused: output left behind");
    expect_code("probe NULL path", ms_probe(NULL, &info, err, sizeof err), MS_ERROR_INVALID_ARGUMENT, err);
    expect_code("probe 'a:b.mp4' (colon in the name)", ms_probe(out_path("a:b.mp4"), &info, err, sizeof err), 0, "");
    CHECK(ms_probe(in_path("not-media.mp4"), &info, NULL, 0) == MS_ERROR_NOT_MEDIA, "NULL errbuf");
    ms_transcode_options_init(&opt);
    CHECK(make_unknown_codec(out_path("mjpeg.avi"), out_path("unknown-codec.avi")) == 0, "unknown-codec.avi");
    expect_code("probe unknown codec (tag ABCD)", ms_probe(out_path("unknown-codec.avi"), &info, err, sizeof err), 0,
                "");
    CHECK(!strcmp(info.video_codec, "none") && info.width == 320, "probe unknown codec: %s", info.video_codec);
    expect_code("transcode unknown codec",
                ms_transcode(out_path("unknown-codec.avi"), out_path("x.mp4"), &opt, NULL, NULL, NULL, err,
                             sizeof err),
                MS_ERROR_UNSUPPORTED_CODEC, err);
    expect_code("thumbnail unknown codec",
                ms_thumbnail(out_path("unknown-codec.avi"), out_path("x.jpg"), -1, 0, NULL, NULL, err, sizeof err),
                MS_ERROR_UNSUPPORTED_CODEC, err);
    CHECK(!exists(out_path("x.mp4")) && !exists(out_path("x.jpg")), "outputs of failed calls left behind");

    // The error message comes from the failing thread's own log lines, whatever others log.
    concurrent_probe c = {.ret = 0};
    pthread_t th;
    pthread_create(&th, NULL, probe_truncated, &c);
    ms_transcode_options_init(&opt);
    opt.preset = MS_PRESET_ULTRAFAST;
    int ret = ms_transcode(in_path("clip-mpeg4.mov"), out_path("concurrent.mp4"), &opt, NULL, NULL, NULL, err,
                           sizeof err);
    pthread_join(th, NULL);
    expect_code("probe on a thread during a transcode", c.ret, MS_ERROR_NOT_MEDIA, c.err);
    CHECK(strstr(c.err, "moov atom not found") != NULL, "per-thread message lost: %s", c.err);
    CHECK(probe_route_lines > 0, "the probing thread's lines did not come with its route");
    CHECK(ret == 0, "concurrent transcode: %s", err);

    // A join whose every part is empty (ranges past the end: nothing in them to decode) has a code of its own.
    ms_transcode_options range;
    ms_transcode_options_init(&range);
    range.preset = MS_PRESET_ULTRAFAST;
    range.streams = MS_STREAMS_VIDEO;
    range.range_duration = 1;
    const char *parts[2] = {out_path("empty-part-0.mp4"), out_path("empty-part-1.mp4")};
    double starts[2] = {100, 101};
    for (int i = 0; i < 2; i++) {
        range.range_start = starts[i];
        ret = ms_transcode(in_path("clip-no-audio.mp4"), parts[i], &range, NULL, NULL, NULL, err, sizeof err);
        CHECK(ret == 0, "range past the end: %s", err);
    }
    expect_code("join of empty parts",
                ms_join(parts, starts, 2, NULL, out_path("empty-join.mp4"), 1, 0, NULL, NULL, NULL, NULL, NULL, err,
                        sizeof err),
                MS_ERROR_EVERY_PART_EMPTY, err);
    CHECK(!strncmp(err, "every part is empty", 19), "join of empty parts: %s", err);
    CHECK(!exists(out_path("empty-join.mp4")), "join of empty parts: output left behind");

    char text[128];
    ms_strerror(MS_ERROR_DISK_FULL, text, sizeof text);
    CHECK(!strcmp(text, "disk full"), "ms_strerror ours: %s", text);
    ms_strerror(-2, text, sizeof text);
    CHECK(!strcmp(text, "No such file or directory"), "ms_strerror errno: %s", text);
    CHECK(ms_strerror(-123456, text, sizeof text) < 0 && text[0], "ms_strerror unknown: %s", text);
}

static int run_under_valgrind(int argc, char **argv) {
    char **args = calloc((size_t)argc + 8, sizeof *args);
    int n = 0;
    args[n++] = "valgrind";
    args[n++] = "--leak-check=full";
    args[n++] = "--show-leak-kinds=definite,indirect";
    args[n++] = "--errors-for-leak-kinds=definite,indirect";
    args[n++] = "--error-exitcode=9";
    args[n++] = "--suppressions=scripts/valgrind.supp";  // glibc's, not the shim's (shim-check.sh runs at the root)
    args[n++] = argv[0];
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--valgrind") != 0) args[n++] = argv[i];
    setenv("SHIM_CHECK_UNDER_VALGRIND", "1", 1);
    fflush(stdout);
    execvp("valgrind", args);
    perror("valgrind");
    return 2;
}

int main(int argc, char **argv) {
    int valgrind = 0, quality_only = 0, positional = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--valgrind")) valgrind = 1;
        else if (!strcmp(argv[i], "--quality-only")) quality_only = 1;
        else if (positional++ == 0) samples = argv[i];
        else tmp = argv[i];
    }
    if (!samples || !tmp) {
        fprintf(stderr, "usage: %s [--valgrind] [--quality-only] SAMPLES_DIR TEMP_DIR\n", argv[0]);
        return 2;
    }
    if (valgrind) return run_under_valgrind(argc, argv);
    setvbuf(stdout, NULL, _IOLBF, 0);

    CHECK(ms_abi_version() == MS_ABI_VERSION, "ABI version %d != %d", ms_abi_version(), MS_ABI_VERSION);
    if (quality_only) {  // ms_quality's checks alone: under valgrind, minutes instead of the whole run
        failures += check_quality(tmp);
        printf(failures ? "shim-check: %d FAILED\n" : "shim-check: all checks passed\n", failures);
        return failures ? 1 : 0;
    }
    // No handler yet: FFmpeg must print nothing (the script checks stderr stays empty).
    check_probe("truncated.mp4", MS_ERROR_NOT_MEDIA, "", 0, 0, 0, 0);
    ms_set_log_handler(on_log, NULL);
    ms_log_set_route(MAIN_ROUTE);

    check_probe("clip-h264-aac.mp4", 0, "h264", 640, 360, 0, 2);
    check_probe("clip-mpeg4.mov", 0, "mpeg4", 480, 270, 0, 1);
    check_probe("clip-portrait-rotated.mp4", 0, "h264", 640, 360, 90, 1);
    check_probe("clip-no-audio.mp4", 0, "h264", 426, 240, 0, 0);
    check_probe("clip-two-audio.mkv", 0, "h264", 320, 180, 0, 1);
    check_probe("truncated-faststart.mp4", 0, "h264", 640, 360, 0, 2);
    check_probe("not-media.mp4", MS_ERROR_NOT_MEDIA, "", 0, 0, 0, 0);

    ms_transcode_options t;
    ms_transcode_options_init(&t);
    t.preset = MS_PRESET_VERYFAST;
    t.crf = 28;
    ms_transcode_options small = t;
    small.max_width = 320;
    small.max_height = 320;
    check_transcode("clip-h264-aac.mp4", "h264-aac.mp4", &small, (expect){0, "h264", "aac", 320, 180, 0, 2, 0});
    check_transcode("clip-mpeg4.mov", "mpeg4.mp4", &t, (expect){0, "h264", "aac", 480, 270, 0, 1, 0});
    ms_transcode_options portrait = t;  // a box as displayed: 180 wide, 320 high
    portrait.max_width = 180;
    portrait.max_height = 320;
    check_transcode("clip-portrait-rotated.mp4", "portrait.mp4", &portrait,
                    (expect){0, "h264", "aac", 320, 180, 90, 1, 0});
    ms_transcode_options slow = t;
    slow.faststart = 0;
    slow.threads = 1;
    check_transcode("clip-no-audio.mp4", "no-audio.mp4", &slow, (expect){0, "h264", NULL, 426, 240, 0, 0, 0});
    check_transcode("clip-two-audio.mkv", "two-audio.mp4", &t, (expect){0, "h264", "aac", 320, 180, 0, 1, 0});
    // The other encoders' own parameters come from the typed fields: x265's (closed GOPs, pinned threads) and
    // SVT-AV1's (a preset number, logical processors).
    ms_transcode_options hevc = t;
    hevc.video_codec = MS_VIDEO_HEVC;
    hevc.closed_gop = 1;
    hevc.threads = 2;
    hevc.max_width = 160;
    hevc.max_height = 160;
    hevc.keyframe_interval = 0.5;
    check_transcode("clip-no-audio.mp4", "hevc.mp4", &hevc, (expect){0, "hevc", NULL, 160, 90, 0, 0, 0});
    ms_transcode_options av1 = hevc;
    av1.video_codec = MS_VIDEO_AV1;
    av1.crf = 50;
    check_transcode("clip-no-audio.mp4", "av1.mp4", &av1, (expect){0, "av1", NULL, 160, 90, 0, 0, 0});
    ms_transcode_options capped = t;
    capped.max_fps = 10;
    capped.video_bit_rate = 300000;
    capped.audio_bit_rate = 64000;
    capped.audio_channels = 1;
    check_transcode("clip-h264-aac.mp4", "h264-10fps.mp4", &capped, (expect){0, "h264", "aac", 640, 360, 0, 1, 30});
    check_transcode("truncated-faststart.mp4", "truncated-faststart.mp4", &t,
                    (expect){0, "h264", "aac", 640, 360, 0, 2, 0});
    check_transcode(out_path("mjpeg.avi"), "mjpeg.mp4", &t, (expect){0, "h264", NULL, 320, 240, 0, 0, 0});
    check_transcode("truncated.mp4", "truncated.mp4", &t, (expect){.code = MS_ERROR_NOT_MEDIA});
    check_transcode("not-media.mp4", "not-media.mp4", &t, (expect){.code = MS_ERROR_NOT_MEDIA});

    ms_transcode_options remux;
    ms_transcode_options_init(&remux);
    remux.mode = MS_MODE_REMUX;
    check_transcode("clip-h264-aac.mp4", "remux-h264-aac.mp4", &remux, (expect){0, "h264", "aac", 640, 360, 0, 2, 0});
    check_transcode("clip-mpeg4.mov", "remux-mpeg4.mp4", &remux, (expect){.code = MS_ERROR_REMUX_UNSUPPORTED});
    check_transcode("clip-portrait-rotated.mp4", "remux-portrait.mp4", &remux,
                    (expect){0, "h264", "aac", 640, 360, 90, 1, 0});
    check_transcode("clip-no-audio.mp4", "remux-no-audio.mp4", &remux, (expect){0, "h264", NULL, 426, 240, 0, 0, 0});
    check_transcode("clip-two-audio.mkv", "remux-two-audio.mp4", &remux,
                    (expect){0, "h264", "opus", 320, 180, 0, 1, 0});
    check_transcode("truncated-faststart.mp4", "remux-truncated-faststart.mp4", &remux,
                    (expect){0, "h264", "aac", 640, 360, 0, 2, 0});
    check_transcode("truncated.mp4", "remux-truncated.mp4", &remux, (expect){.code = MS_ERROR_NOT_MEDIA});

    check_thumbnail("clip-h264-aac.mp4", "h264-aac.jpg", -1, 320, 0, 320, 180);
    check_thumbnail("clip-mpeg4.mov", "mpeg4.jpg", 1.5, 0, 0, 480, 270);
    check_thumbnail("clip-portrait-rotated.mp4", "portrait.jpg", 1.0, 180, 0, 180, 320);
    check_thumbnail("clip-no-audio.mp4", "no-audio-end.jpg", 100, 0, 0, 426, 240);
    check_thumbnail("clip-two-audio.mkv", "two-audio.jpg", -1, 1000, 0, 320, 180);
    check_thumbnail("truncated-faststart.mp4", "truncated-faststart.jpg", 2.5, 0, 0, 640, 360);
    check_thumbnail(out_path("mjpeg.avi"), "mjpeg.jpg", 0.5, 0, 0, 320, 240);
    check_thumbnail("truncated.mp4", "truncated.jpg", -1, 0, MS_ERROR_NOT_MEDIA, 0, 0);
    check_thumbnail("not-media.mp4", "not-media.jpg", -1, 0, MS_ERROR_NOT_MEDIA, 0, 0);
    // Upright: the same frame from the CLI, which applies the display matrix itself.
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "ffmpeg -nostdin -v error -y -ss 1.0 -i '%s' -frames:v 1 -vf scale=180:320 '%s'",
             in_path("clip-portrait-rotated.mp4"), out_path("portrait-cli.png"));
    double db = system(cmd) == 0 ? psnr(out_path("portrait.jpg"), out_path("portrait-cli.png")) : -1;
    printf("  portrait thumbnail vs the CLI's autorotated frame: PSNR %.1f dB\n", db);
    CHECK(db > 25, "portrait thumbnail is not upright (PSNR %.1f dB)", db);

    check_cancel(0);
    check_cancel(1.0);
    check_package();
    check_errors();

    // HDR tone mapping beside the AAC and mov_text encoders, at debug level, together: a smoke run (their lines come
    // from this thread here, which has the route already; check_ffmpeg_thread_routes tests the tagging itself).
    ms_set_log_level(MS_LOG_DEBUG);
    check_transcode(out_path("hdr-subtitled.mkv"), "hdr-subtitled.mp4", &t,
                    (expect){0, "h264", "aac", 320, 240, 0, 1, 0});
    ms_set_log_level(MS_LOG_INFO);
    failures += check_encoder_settings();
    failures += check_quality(tmp);
    failures += check_ffmpeg_thread_routes();  // last: it replaces the log handler

    ms_set_log_handler(NULL, NULL);
    printf("log lines received: %d error, %d warning, %d info, %d debug\n", log_lines[0], log_lines[1], log_lines[2],
           log_lines[3]);
    CHECK(log_lines[0] > 0, "no error lines reached the log handler");
    CHECK(misrouted_lines == 0, "%d line(s) without the route of the thread that asked for the work",
          misrouted_lines);
    printf(failures ? "shim-check: %d FAILED\n" : "shim-check: all checks passed\n", failures);
    return failures ? 1 : 0;
}
