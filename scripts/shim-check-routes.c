// One of shim-check's two looks inside the shim (shim-check-encoder.c is the other): a line FFmpeg logs on a thread of its own (a frame-threaded codec's, a
// filter graph's slice threads) for a codec context or a filter graph the shim made for an operation comes with that
// operation's route. No sample makes those threads log (they seldom do), so the check logs as they would: on a
// thread without a route, for contexts made the way the shim makes each of its own, on a thread with one.
#include "../Sources/CMediaShim/ms_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

int check_ffmpeg_thread_routes(void);

enum { OPERATION_ROUTE = 44, CONTEXTS = 4 };
#define LINE "a line from a thread of FFmpeg's own"

static int routed, unrouted;

static void on_line(void *ctx, uint64_t route, int level, const char *line) {
    (void)ctx;
    (void)level;
    if (!strstr(line, LINE)) return;
    if (route == OPERATION_ROUTE) {
        routed++;
    } else {
        unrouted++;
        printf("  FAIL: line with route %llu: %s\n", (unsigned long long)route, line);
    }
}

/// A thread FFmpeg starts: it has no route of its own.
static void *log_as_ffmpeg_thread(void *arg) {
    void **contexts = arg;
    for (int i = 0; i < CONTEXTS; i++) ff.av_log(contexts[i], AV_LOG_WARNING, LINE "\n");
    return NULL;
}

static AVCodecContext *encoder(enum AVCodecID id) {
    const AVCodec *codec = ff.avcodec_find_encoder(id);
    return codec ? ms_new_codec_context(codec) : NULL;
}

/// Returns the number of failures.
int check_ffmpeg_thread_routes(void) {
    char err[512];
    if (ms_ffmpeg_load(err, sizeof err) < 0 || ms_ffmpeg_load_filters(err, sizeof err) < 0) {
        printf("  FAIL: %s\n", err);
        return 1;
    }
    ms_set_log_handler(on_line, NULL);
    uint64_t route = ms_log_route();
    ms_log_set_route(OPERATION_ROUTE);
    // The encoders whose threads were once left without a route, and a filter of a tone-mapping graph.
    AVCodecContext *aac = encoder(AV_CODEC_ID_AAC), *jpeg = encoder(AV_CODEC_ID_MJPEG),
                   *subtitles = encoder(AV_CODEC_ID_MOV_TEXT);
    AVFilterGraph *graph = ms_new_filter_graph();
    AVFilterContext *tonemap = NULL;
    if (graph)
        ffl.avfilter_graph_create_filter(&tonemap, ffl.avfilter_get_by_name("tonemap"), "tonemap", NULL, NULL, graph);
    ms_log_set_route(route);

    int failures = 0;
    void *contexts[CONTEXTS] = {aac, jpeg, subtitles, tonemap};
    if (!aac || !jpeg || !subtitles || !tonemap) {
        printf("  FAIL: cannot make the contexts\n");
        failures++;
    } else {
        pthread_t thread;
        pthread_create(&thread, NULL, log_as_ffmpeg_thread, contexts);
        pthread_join(thread, NULL);
    }
    ms_set_log_handler(NULL, NULL);
    printf("lines of FFmpeg's own threads: %d with the operation's route, %d without\n", routed, unrouted);
    if (routed != CONTEXTS && !failures) {
        printf("  FAIL: %d of %d lines came with the operation's route\n", routed, CONTEXTS);
        failures++;
    }
    ff.avcodec_free_context(&aac);
    ff.avcodec_free_context(&jpeg);
    ff.avcodec_free_context(&subtitles);
    ffl.avfilter_graph_free(&graph);
    return failures;
}
