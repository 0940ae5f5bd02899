// FFmpeg's log output: assembled into complete lines per thread, the last error line kept for
// error messages, and every line up to the chosen level passed to the host's handler with the route
// of the operation that logged it.
#include "ms_internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#define MS_LINE_LEN 1024

/// Per thread: the line being assembled (FFmpeg often logs one line in several calls) and the
/// last error line, which is what turns "Invalid data" into "moov atom not found".
typedef struct ms_log_thread {
    char line[MS_LINE_LEN];
    size_t len;
    size_t prefix_len;  ///< length of the "[name] " prefix at the start of line
    int level;          ///< FFmpeg level of the line's first part
    uint64_t line_route;  ///< the route of the line's first part
    char last_error[MS_LINE_LEN];
    uint64_t route;  ///< the route of the operation this thread works for (ms_log_set_route), 0 none
    ms_encoder_psnr *encoder_psnr;  ///< where libx264's per-frame lines go (ms_log_set_encoder_psnr), NULL none
} ms_log_thread;

static _Thread_local ms_log_thread tls;

/// The most verbose FFmpeg level formatted and handed on (ms_set_log_level).
static _Atomic int wanted_level = AV_LOG_INFO;

// A route travels in a codec context's `opaque`, which FFmpeg copies into the contexts of its frame threads, and in
// a filter graph's, which its filters point to.
_Static_assert(sizeof(uintptr_t) >= sizeof(uint64_t), "a route fits in a pointer");
static const AVClass *codec_class;  ///< AVCodecContext's class, set before the callback is installed
/// AVFilterContext's class, set when libavfilter is loaded, while the callback may already run.
static _Atomic(const AVClass *) filter_class;

static pthread_mutex_t handler_lock = PTHREAD_MUTEX_INITIALIZER;
static ms_log_fn handler_fn;
static void *handler_ctx;

static int to_ms_level(int level) {
    if (level <= AV_LOG_ERROR) return MS_LOG_ERROR;
    if (level <= AV_LOG_WARNING) return MS_LOG_WARNING;
    if (level <= AV_LOG_INFO) return MS_LOG_INFO;
    return MS_LOG_DEBUG;
}

static void emit_line(ms_log_thread *t) {
    if (t->len > t->prefix_len) {
        if (t->level <= AV_LOG_ERROR) {
            snprintf(t->last_error, sizeof t->last_error, "%s", t->line + t->prefix_len);
        }
        pthread_mutex_lock(&handler_lock);
        if (handler_fn) handler_fn(handler_ctx, t->line_route, to_ms_level(t->level), t->line);
        pthread_mutex_unlock(&handler_lock);
    }
    t->len = 0;
    t->prefix_len = 0;
    t->line[0] = '\0';
}

static void append(ms_log_thread *t, const char *s, size_t n) {
    size_t room = sizeof t->line - 1 - t->len;
    if (n > room) n = room;  // an over-long line is cut, not split
    memcpy(t->line + t->len, s, n);
    t->len += n;
    t->line[t->len] = '\0';
}

/// The route a context was given when it was made (ms_new_codec_context, ms_new_filter_graph).
static uint64_t tagged_route(const void *opaque) { return (uint64_t)(uintptr_t)opaque; }

/// The route of a line: the thread's, else the one its codec context or its filter's graph carries (a line from one
/// of FFmpeg's own threads: a frame-threaded codec's, an encoder's pool through its log callback, a filter graph's
/// slice threads), else 0.
static uint64_t line_route(const ms_log_thread *t, void *avcl, const AVClass *cls) {
    if (t->route || !cls) return t->route;
    if (cls == codec_class) return tagged_route(((const AVCodecContext *)avcl)->opaque);
    if (cls == atomic_load_explicit(&filter_class, memory_order_relaxed)) {
        const AVFilterGraph *graph = ((const AVFilterContext *)avcl)->graph;
        return graph ? tagged_route(graph->opaque) : 0;
    }
    return 0;
}

/// libx264 logs a line per frame at debug level (FFmpeg sets its log level to debug and filters in the callback):
/// with its PSNR asked for (AV_CODEC_FLAG_PSNR), the line carries the frame's PSNR by plane.
static int is_frame_report(const void *avcl, const char *fmt) {
    return avcl && *(const AVClass *const *)avcl == codec_class && strncmp(fmt, "frame=", 6) == 0;
}

/// libx264's warnings that its PSNR, asked for, is not what psy-optimised encoding aims at ("--psnr used with psy
/// on: results will be invalid!", "--tune psnr should be used if attempting to benchmark psnr!"): the report says
/// what the encode lost, not how it compares with encoders tuned for the metric, and the warning would be on every
/// export's log.
static int is_psnr_advice(const void *avcl, const char *fmt) {
    return avcl && *(const AVClass *const *)avcl == codec_class &&
           (strstr(fmt, "used with psy on") || strstr(fmt, "should be used if attempting to benchmark"));
}

static void on_av_log(void *avcl, int level, const char *fmt, va_list vl) {
    level &= 0xff;
    if (tls.encoder_psnr && level == AV_LOG_DEBUG && is_frame_report(avcl, fmt)) {
        char text[MS_LINE_LEN];
        va_list copy;
        va_copy(copy, vl);
        int n = vsnprintf(text, sizeof text, fmt, copy);
        va_end(copy);
        if (n > 0) ms_encoder_psnr_line(tls.encoder_psnr, text);
    }
    if (tls.encoder_psnr && level == AV_LOG_WARNING && is_psnr_advice(avcl, fmt)) return;
    if (level > atomic_load_explicit(&wanted_level, memory_order_relaxed) && level > AV_LOG_ERROR) return;
    ms_log_thread *t = &tls;
    if (t->len == 0) {
        t->level = level;
        const AVClass *cls = avcl ? *(const AVClass **)avcl : NULL;
        t->line_route = line_route(t, avcl, cls);
        if (cls && cls->item_name) {
            char prefix[128];
            int n = snprintf(prefix, sizeof prefix, "[%s] ", cls->item_name(avcl));
            if (n > 0) append(t, prefix, (size_t)n < sizeof prefix ? (size_t)n : sizeof prefix - 1);
            t->prefix_len = t->len;
        }
    }
    char text[MS_LINE_LEN];
    int n = vsnprintf(text, sizeof text, fmt, vl);
    if (n < 0) return;
    size_t len = (size_t)n < sizeof text ? (size_t)n : sizeof text - 1;
    const char *s = text;
    const char *end = text + len;
    while (s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        if (!nl) {
            append(t, s, (size_t)(end - s));
            break;
        }
        append(t, s, (size_t)(nl - s));
        emit_line(t);
        s = nl + 1;
    }
}

void ms_log_install(void) {
    codec_class = ff.avcodec_get_class();
    ff.av_log_set_level(AV_LOG_INFO);
    ff.av_log_set_callback(on_av_log);
}

void ms_log_install_filters(void) {
    atomic_store_explicit(&filter_class, ffl.avfilter_get_class(), memory_order_relaxed);
}

void ms_log_clear(void) { tls.last_error[0] = '\0'; }

const char *ms_log_last_error(void) { return tls.last_error; }

void ms_log_set_route(uint64_t route) { tls.route = route; }

void ms_log_set_encoder_psnr(ms_encoder_psnr *psnr) { tls.encoder_psnr = psnr; }

uint64_t ms_log_route(void) { return tls.route; }

AVCodecContext *ms_new_codec_context(const AVCodec *codec) {
    AVCodecContext *ctx = ff.avcodec_alloc_context3(codec);
    if (ctx) ctx->opaque = (void *)(uintptr_t)tls.route;
    return ctx;
}

AVFilterGraph *ms_new_filter_graph(void) {
    AVFilterGraph *graph = ffl.avfilter_graph_alloc();
    if (graph) graph->opaque = (void *)(uintptr_t)tls.route;
    return graph;
}

void ms_set_log_handler(ms_log_fn fn, void *ctx) {
    pthread_mutex_lock(&handler_lock);
    handler_fn = fn;
    handler_ctx = ctx;
    pthread_mutex_unlock(&handler_lock);
}

void ms_set_log_level(int level) {
    static const int levels[] = {AV_LOG_ERROR, AV_LOG_WARNING, AV_LOG_INFO, AV_LOG_DEBUG};
    if (level < MS_LOG_ERROR) level = MS_LOG_ERROR;
    if (level > MS_LOG_DEBUG) level = MS_LOG_DEBUG;
    // Kept here rather than as FFmpeg's own level, so that setting it never waits for the libraries to load.
    atomic_store_explicit(&wanted_level, levels[level], memory_order_relaxed);
}
