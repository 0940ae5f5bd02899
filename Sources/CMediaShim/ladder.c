// ms_transcode_ladder: the renditions of an adaptive streaming ladder in one pass over the source. A reading thread
// (reader.c) reads and decodes the source once; the calling thread encodes the audio rendition and hands the
// decoded pictures on: every video rendition scales and encodes on a thread of its own, from references to the
// same decoded frames handed over through a short queue.
#include "transcoder.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/// Decoded frames a rendition may fall behind the decoder: enough to even out the encoders' uneven pace, few
/// enough that the held pictures stay small (4 × 3 MiB at 1080p per rendition).
enum { LADDER_QUEUE = 4, LADDER_MAX_RENDITIONS = 16 };

typedef struct rendition {
    transcoder t;  // its encoder, scaler and MP4; the input and the decoder are the ladder's, borrowed
    const char *out;
    ms_progress progress;  // no callback: the ladder reports progress as it decodes
    char errbuf[1024];
    pthread_t thread;
    int started;
    uint64_t route;  // the ladder's log route, taken over by the thread

    pthread_mutex_t lock;  // guards what follows
    pthread_cond_t changed;
    AVFrame *queue[LADDER_QUEUE];
    int head, count;
    int ended;   // no frame follows: encode what is queued, flush and finish the MP4
    int stop;    // the ladder failed or was cancelled: drop what is queued and end now
    int done;    // the thread ended; status says how
    int status;
} rendition;

typedef struct ladder {
    transcoder main;  // input, decoders and the audio rendition's encoder and MP4
    rendition *video[LADDER_MAX_RENDITIONS];
    int video_count;
    int failed;  // the first rendition whose thread failed, or -1
} ladder;

/// A rendition's thread: scales and encodes every frame handed over, then flushes the encoder and writes the
/// trailer.
static void *encode_rendition(void *arg) {
    rendition *r = arg;
    ms_log_set_route(r->route);
    ms_log_clear();
    int ret = 0, stopped = 0;
    for (;;) {
        pthread_mutex_lock(&r->lock);
        while (r->count == 0 && !r->ended && !r->stop) pthread_cond_wait(&r->changed, &r->lock);
        stopped = r->stop;
        AVFrame *f = NULL;
        if (!stopped && r->count > 0) {
            f = r->queue[r->head];
            r->head = (r->head + 1) % LADDER_QUEUE;
            r->count--;
            pthread_cond_broadcast(&r->changed);
        }
        pthread_mutex_unlock(&r->lock);
        if (!f) break;  // stopped, or ended with nothing left
        ret = ms_transcode_video_frame(&r->t, f);
        ff.av_frame_free(&f);
        if (ret < 0) break;
    }
    if (ret >= 0 && !stopped && r->t.frames_sent > 0) {
        ret = ms_transcode_encode(&r->t, r->t.venc, r->t.vost, NULL);
        if (ret >= 0) ret = ms_write_trailer(r->t.ofmt, r->errbuf, sizeof r->errbuf);
    }
    pthread_mutex_lock(&r->lock);
    r->status = ret;
    r->done = 1;
    pthread_cond_broadcast(&r->changed);
    pthread_mutex_unlock(&r->lock);
    return NULL;
}

/// Reports progress, then hands a reference to the decoded frame to every rendition, waiting while a rendition's
/// queue is full. Returns a failed rendition's status.
static int hand_over(ladder *l, AVFrame *f) {
    transcoder *m = &l->main;
    if (f->best_effort_timestamp != AV_NOPTS_VALUE) {
        int64_t start = ff.av_rescale_q(m->offset, AV_TIME_BASE_Q, m->vist->time_base);
        int ret = ms_progress_report(m->progress, ms_seconds(f->best_effort_timestamp - start, m->vist->time_base));
        if (ret < 0) return ms_transcode_fail(m, ret, ret, "ladder");
    }
    m->frames_sent++;
    for (int i = 0; i < l->video_count; i++) {
        rendition *r = l->video[i];
        AVFrame *ref = ff.av_frame_clone(f);
        if (!ref) return ms_transcode_fail(m, AVERROR(ENOMEM), AVERROR(ENOMEM), "ladder");
        pthread_mutex_lock(&r->lock);
        while (r->count == LADDER_QUEUE && !r->done) pthread_cond_wait(&r->changed, &r->lock);
        int status = r->done ? (r->status < 0 ? r->status : AVERROR_BUG) : 0;
        if (!r->done) {
            r->queue[(r->head + r->count) % LADDER_QUEUE] = ref;
            r->count++;
            pthread_cond_broadcast(&r->changed);
        }
        pthread_mutex_unlock(&r->lock);
        if (status < 0) {
            ff.av_frame_free(&ref);
            l->failed = i;
            return status;
        }
    }
    return 0;
}

/// Tells every started rendition thread to finish (`stop` 0: after the queued frames; 1: now) and waits for it.
static void end_renditions(ladder *l, int stop) {
    for (int i = 0; i < l->video_count; i++) {
        rendition *r = l->video[i];
        if (!r->started) continue;
        pthread_mutex_lock(&r->lock);
        if (stop) r->stop = 1;
        else r->ended = 1;
        pthread_cond_broadcast(&r->changed);
        pthread_mutex_unlock(&r->lock);
        pthread_join(r->thread, NULL);
        r->started = 0;
        if (r->status < 0 && l->failed < 0) l->failed = i;
    }
}

/// Opens a video rendition's encoder and MP4 on the ladder's input and decoder.
static int open_rendition(ladder *l, rendition *r, const char *in) {
    transcoder *m = &l->main;
    r->t.ifmt = m->ifmt;
    r->t.vist = m->vist;
    r->t.vdec = m->vdec;
    r->t.offset = m->offset;
    r->t.progress = &r->progress;
    ms_progress_start(&r->progress, NULL, NULL, m->progress->total);
    if (!(r->t.out_pkt = ff.av_packet_alloc()))
        return ms_transcode_fail(&r->t, AVERROR(ENOMEM), AVERROR(ENOMEM), "ladder");
    int ret = ms_new_mp4_muxer(r->out, &r->t.ofmt, r->errbuf, sizeof r->errbuf);
    if (ret < 0) return ret;
    if ((ret = ff.av_dict_copy(&r->t.ofmt->metadata, m->ifmt->metadata, 0)) < 0)
        return ms_transcode_fail(&r->t, ret, ret, "metadata");
    if ((ret = ms_transcode_open_video(&r->t)) < 0) return ret;
    return ms_start_output(r->t.ofmt, in, r->out, r->t.opt->faststart, 0, r->errbuf, sizeof r->errbuf);
}

/// Opens the input and its video decoder; `*v` is the video stream, and when a rendition is audio (`*audio`, or
/// -1), `*a` is the audio stream (or -1).
static int open_input(ladder *l, const char *in, int count, const ms_transcode_options *opts, int *v, int *a,
                      int *audio) {
    transcoder *m = &l->main;
    int ret = ms_open_input(in, &m->ifmt, m->errbuf, m->errlen);
    if (ret < 0) return ret;
    *v = ms_find_video_stream(m->ifmt);
    if (*v < 0) return ms_fail(m->errbuf, m->errlen, MS_ERROR_NO_VIDEO, MS_ERROR_NO_VIDEO, "'%s'", in);
    *audio = -1, *a = -1;
    for (int i = 0; i < count; i++)
        if (opts[i].streams == MS_STREAMS_AUDIO) *audio = i;
    if (*audio >= 0 && (*a = ms_find_audio_stream(m->ifmt, *v)) < 0)
        return ms_fail(m->errbuf, m->errlen, MS_ERROR_NO_AUDIO, MS_ERROR_NO_AUDIO, "'%s'", in);
    m->vist = m->ifmt->streams[*v];
    m->aist = *a >= 0 ? m->ifmt->streams[*a] : NULL;
    m->offset = m->ifmt->start_time != AV_NOPTS_VALUE ? m->ifmt->start_time : 0;
    m->progress->total = ms_media_duration(m->ifmt);
    if (!(m->out_pkt = ff.av_packet_alloc())) return ms_transcode_fail(m, AVERROR(ENOMEM), AVERROR(ENOMEM), "ladder");
    // The decoder takes the first video rendition's threads: decoding is exact, whatever the thread count.
    return ms_open_decoder(m->vist, l->video[0]->t.opt->threads, &m->vdec, m->errbuf, m->errlen);
}

/// Opens every video rendition's output, the audio rendition's (rendition `audio`, when the input has audio), and
/// starts the video renditions' threads.
static int open_outputs(ladder *l, const char *in, const char *const *outs, const ms_transcode_options *opts,
                        int audio) {
    transcoder *m = &l->main;
    int ret;
    for (int i = 0; i < l->video_count; i++) {
        if ((ret = open_rendition(l, l->video[i], in)) < 0) {
            l->failed = i;
            return ret;
        }
    }
    if (m->aist) {
        if ((ret = ms_new_mp4_muxer(outs[audio], &m->ofmt, m->errbuf, m->errlen)) < 0) return ret;
        if ((ret = ff.av_dict_copy(&m->ofmt->metadata, m->ifmt->metadata, 0)) < 0)
            return ms_transcode_fail(m, ret, ret, "metadata");
        if ((ret = ms_transcode_open_audio(m)) < 0 ||
            (ret = ms_start_output(m->ofmt, in, outs[audio], opts[audio].faststart, 0, m->errbuf, m->errlen)) < 0)
            return ret;
    }
    for (int i = 0; i < l->video_count; i++) {
        rendition *r = l->video[i];
        if ((ret = pthread_create(&r->thread, NULL, encode_rendition, r)) != 0)
            return ms_transcode_fail(m, AVERROR(ret), AVERROR(ret), "cannot start a rendition's thread");
        r->started = 1;
    }
    return 0;
}

/// Reads and decodes the input once (video stream `v`, audio stream `a` or -1): hands the pictures over to the
/// renditions, which finish once the video ends, and encodes the audio rendition; then finishes its MP4.
static int decode(ladder *l, const char *in, int v, int a) {
    transcoder *m = &l->main;
    int ret;
    if ((ret = ms_reader_start(m, v, a, &m->reader)) < 0) return ret;
    for (;;) {
        ms_read next;
        if ((ret = ms_reader_next(m->reader, &next, m->errbuf, m->errlen)) < 0) return ret;
        if (next.kind == MS_READ_END) break;
        if (next.kind == MS_READ_VIDEO_END) {  // the renditions finish while the audio decoder drains
            if (m->frames_sent == 0)
                return ms_fail(m->errbuf, m->errlen, MS_ERROR_NO_FRAMES, MS_ERROR_NO_FRAMES, "'%s'", in);
            end_renditions(l, 0);
            if (l->failed >= 0) return l->video[l->failed]->status;
            for (int i = 0; i < l->video_count; i++) {
                if (l->video[i]->t.frames_sent == 0)
                    return ms_fail(m->errbuf, m->errlen, MS_ERROR_NO_FRAMES, MS_ERROR_NO_FRAMES, "'%s'", in);
            }
            continue;
        }
        ret = next.kind == MS_READ_VIDEO ? hand_over(l, next.frame) : ms_transcode_audio_frame(m, next.frame);
        ff.av_frame_free(&next.frame);
        ff.av_packet_free(&next.packet);  // a ladder keeps no subtitles: none come
        if (ret < 0) return ret;
    }
    ms_reader_stop(&m->reader, m);
    if (m->adec) {
        if ((ret = ms_transcode_flush_audio(m)) < 0) return ret;
        if ((ret = ms_transcode_encode(m, m->aenc, m->aost, NULL)) < 0) return ret;
        if ((ret = ms_write_trailer(m->ofmt, m->errbuf, m->errlen)) < 0) return ret;
    }
    return 0;
}

/// Opens the input, its decoders, every rendition's output and thread; then reads and decodes the input once.
static int run(ladder *l, const char *in, int count, const char *const *outs, const ms_transcode_options *opts) {
    int v = -1, a = -1, audio = -1, ret;
    if ((ret = open_input(l, in, count, opts, &v, &a, &audio)) < 0) return ret;
    if ((ret = open_outputs(l, in, outs, opts, audio)) < 0) return ret;
    if ((ret = ms_progress_report(l->main.progress, 0)) < 0) return ms_transcode_fail(&l->main, ret, ret, "ladder");
    return decode(l, in, v, a);
}

static int validate(int count, const char *const *outs, const ms_transcode_options *opts, char *errbuf,
                    size_t errlen) {
    if (count < 1 || count > LADDER_MAX_RENDITIONS || !outs || !opts)
        return ms_fail(errbuf, errlen, MS_ERROR_INVALID_ARGUMENT, MS_ERROR_INVALID_ARGUMENT,
                       "ms_transcode_ladder: 1...%d renditions", LADDER_MAX_RENDITIONS);
    int video = 0, audio = 0;
    for (int i = 0; i < count; i++) {
        int ret = ms_transcode_validate(&opts[i], errbuf, errlen);
        if (ret < 0) return ret;
        const char *bad = NULL;
        if (!outs[i]) bad = "path";
        else if (opts[i].mode != MS_MODE_TRANSCODE) bad = "mode (transcode only)";
        else if (opts[i].streams != MS_STREAMS_VIDEO && opts[i].streams != MS_STREAMS_AUDIO)
            bad = "streams (video or audio)";
        else if (opts[i].range_start > 0 || opts[i].range_duration > 0)
            bad = "range (a ladder encodes the whole input)";
        else if (opts[i].streams == MS_STREAMS_AUDIO && audio++) bad = "streams (one audio rendition at most)";
        else if (opts[i].encoder_psnr) bad = "encoder_psnr (a ladder reports no PSNR)";
        if (bad)
            return ms_fail(errbuf, errlen, MS_ERROR_INVALID_ARGUMENT, MS_ERROR_INVALID_ARGUMENT,
                           "ms_transcode_ladder: rendition %d: option %s", i, bad);
        video += opts[i].streams == MS_STREAMS_VIDEO;
    }
    return video ? 0 : ms_fail(errbuf, errlen, MS_ERROR_INVALID_ARGUMENT, MS_ERROR_INVALID_ARGUMENT,
                               "ms_transcode_ladder: no video rendition");
}

/// Ends the video renditions of a ladder that returned `ret`: frees the frames still queued, closes each MP4 (and
/// removes it when the ladder failed) and frees its encoder. On success, fills each one's `results` (may be NULL),
/// at the index of its place in `renditions`.
static void close_renditions(ladder *l, rendition *renditions, ms_transcode_result *results, int ret) {
    for (int i = 0; i < l->video_count; i++) {
        rendition *r = l->video[i];
        if (ret >= 0 && results) {
            int index = (int)(r - renditions);
            ms_transcode_report(&r->t, &results[index]);
            results[index].decode_errors = l->main.decode_errors;  // the input's: only the ladder decodes
        }
        for (; r->count > 0; r->count--, r->head = (r->head + 1) % LADDER_QUEUE) ff.av_frame_free(&r->queue[r->head]);
        ms_close_output(&r->t.ofmt, r->out, ret < 0);
        if (ret >= 0 && results) results[r - renditions].size = ms_file_size(r->out);
        r->t.ifmt = NULL;  // the ladder's, freed with its main transcoder
        r->t.vdec = NULL;
        ms_transcoder_free(&r->t);
        pthread_mutex_destroy(&r->lock);
        pthread_cond_destroy(&r->changed);
    }
}

int ms_transcode_ladder(const char *in, int count, const char *const *outs, const ms_transcode_options *opts,
                        ms_transcode_result *results, ms_progress_fn cb, void *ctx, char *errbuf, size_t errlen) {
    int ret = ms_begin(errbuf, errlen);
    if (ret < 0) return ret;
    if (!in)
        return ms_fail(errbuf, errlen, MS_ERROR_INVALID_ARGUMENT, MS_ERROR_INVALID_ARGUMENT, "ms_transcode_ladder: path");
    if ((ret = validate(count, outs, opts, errbuf, errlen)) < 0) return ret;
    if (results) memset(results, 0, sizeof *results * (size_t)count);
    ms_progress progress;
    ms_progress_start(&progress, cb, ctx, 0);
    rendition renditions[LADDER_MAX_RENDITIONS];
    memset(renditions, 0, sizeof renditions);
    ladder l = {.failed = -1};
    int audio = -1;
    for (int i = 0; i < count; i++) {
        if (opts[i].streams == MS_STREAMS_AUDIO) {
            audio = i;
            continue;
        }
        rendition *r = l.video[l.video_count++] = &renditions[i];
        r->t = (transcoder){.opt = &opts[i], .errbuf = r->errbuf, .errlen = sizeof r->errbuf};
        r->out = outs[i];
        r->route = ms_log_route();
        pthread_mutex_init(&r->lock, NULL);
        pthread_cond_init(&r->changed, NULL);
    }
    l.main = (transcoder){.opt = audio >= 0 ? &opts[audio] : l.video[0]->t.opt,
                          .progress = &progress,
                          .errbuf = errbuf,
                          .errlen = errlen};

    ret = run(&l, in, count, outs, opts);
    end_renditions(&l, ret < 0);
    if (ret < 0 && l.failed >= 0) {  // the failed rendition's own message, with its name
        rendition *r = l.video[l.failed];
        if (errbuf && errlen) snprintf(errbuf, errlen, "rendition '%s': %s", r->out, r->errbuf);
        if (r->status < 0) ret = r->status;
    }
    close_renditions(&l, renditions, results, ret);
    if (audio >= 0) {
        if (ret >= 0 && results) {
            ms_transcode_report(&l.main, &results[audio]);
            results[audio].rotation = 0;  // an audio rendition has no picture
        }
        ms_close_output(&l.main.ofmt, outs[audio], ret < 0);
        if (ret >= 0 && results) results[audio].size = ms_file_size(outs[audio]);
    }
    ms_transcoder_free(&l.main);
    return ret;
}
