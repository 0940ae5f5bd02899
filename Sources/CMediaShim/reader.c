// ms_transcode's reading side: a thread that reads the input and decodes its video and audio ahead of the
// encoders, handing the decoded frames (and the packets of the subtitle tracks kept) over in reading order through a
// short queue. An encoder's calls wait on its own
// threads (x265 for a frame encoder to finish, SVT-AV1 for a free input buffer, x264 for its lookahead): on one
// thread that reads, decodes and encodes (as the ffmpeg CLI 5.1 does) nothing is decoded meanwhile; here the next
// frames are.
#include "transcoder.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

/// Frames decoded ahead, in decoding order: up to four pictures (enough to even out the encoder's uneven pace, few
/// enough that the held pictures stay small: 4 × 3 MiB at 1080p) with the audio and subtitles between them.
enum { READER_PICTURES = 4, READER_QUEUE = 64 };

struct ms_reader {
    // Borrowed from the transcoder and used by the reader's thread alone until ms_reader_stop.
    AVFormatContext *ifmt;
    AVCodecContext *vdec, *adec;
    int video, audio;  // stream indexes, -1 for none
    const ms_subtitles *subs;  // the text subtitle tracks whose packets go through
    AVPacket *pkt;
    AVFrame *spare;  // receives the next decoded frame
    int64_t decode_errors;
    char errbuf[1024];
    pthread_t thread;
    int started;
    uint64_t route;  // the operation's log route, taken over by the thread

    pthread_mutex_t lock;  // guards what follows
    pthread_cond_t changed;
    ms_read queue[READER_QUEUE];
    int head, count;
    int pictures;         // video frames in the queue
    int64_t used_errors;  // decode errors before the last thing handed over (all of them once it ended)
    int ended;  // nothing follows what is queued; status says why
    int stop;   // the encoding side wants no more frames
    int status;
};

static int stopped(ms_reader *r) {
    pthread_mutex_lock(&r->lock);
    int stop = r->stop;
    pthread_mutex_unlock(&r->lock);
    return stop;
}

/// Queues `next` (its frame or packet taken), waiting while the queue is full; AVERROR_EXIT once the encoding side
/// stopped reading (`next` is then the caller's to free).
static int hand_over(ms_reader *r, ms_read next) {
    int picture = next.kind == MS_READ_VIDEO;
    next.decode_errors = r->decode_errors;
    pthread_mutex_lock(&r->lock);
    while ((r->count == READER_QUEUE || (picture && r->pictures == READER_PICTURES)) && !r->stop)
        pthread_cond_wait(&r->changed, &r->lock);
    int stop = r->stop;
    if (!stop) {
        r->queue[(r->head + r->count) % READER_QUEUE] = next;
        r->count++;
        r->pictures += picture;
        pthread_cond_broadcast(&r->changed);
    }
    pthread_mutex_unlock(&r->lock);
    return stop ? AVERROR_EXIT : 0;
}

/// Sends `pkt` (NULL = flush) to `dec` and queues every frame. Errors other than ENOMEM are counted and skipped,
/// as the CLI does.
static int decode(ms_reader *r, AVCodecContext *dec, const AVPacket *pkt, ms_read_kind kind) {
    int ret = ff.avcodec_send_packet(dec, pkt);
    if (ret == AVERROR(ENOMEM)) return ms_fail(r->errbuf, sizeof r->errbuf, ret, ret, "decoding");
    if (ret < 0 && ret != AVERROR_EOF) {
        r->decode_errors++;
        ms_log_clear();
        if (pkt) return 0;
    }
    for (;;) {
        if (!r->spare && !(r->spare = ff.av_frame_alloc()))
            return ms_fail(r->errbuf, sizeof r->errbuf, AVERROR(ENOMEM), AVERROR(ENOMEM), "decoding");
        ret = ff.avcodec_receive_frame(dec, r->spare);
        if (ret == AVERROR(EAGAIN) || ret == AVERROR_EOF) return 0;
        if (ret == AVERROR(ENOMEM)) return ms_fail(r->errbuf, sizeof r->errbuf, ret, ret, "decoding");
        if (ret < 0) {
            r->decode_errors++;
            ms_log_clear();
            if (pkt) return 0;
            continue;
        }
        if ((ret = hand_over(r, (ms_read){.kind = kind, .frame = r->spare})) < 0) return ret;
        r->spare = NULL;
    }
}

/// Queues the packet just read (a subtitle track's): the encoding side writes it, as it owns the output.
static int hand_over_subtitle(ms_reader *r) {
    AVPacket *packet = ff.av_packet_alloc();
    if (!packet) return ms_fail(r->errbuf, sizeof r->errbuf, AVERROR(ENOMEM), AVERROR(ENOMEM), "reading subtitles");
    ff.av_packet_move_ref(packet, r->pkt);
    int ret = hand_over(r, (ms_read){.kind = MS_READ_SUBTITLE, .packet = packet});
    if (ret < 0) ff.av_packet_free(&packet);
    return ret;
}

/// Reads the input to its end (a read error ends it too, counted), then drains the decoders: the video's, marked
/// by MS_READ_VIDEO_END, before the audio's.
static int read_input(ms_reader *r) {
    int ret;
    for (;;) {
        if (stopped(r)) return AVERROR_EXIT;
        ret = ff.av_read_frame(r->ifmt, r->pkt);
        if (ret == AVERROR(ENOMEM)) return ms_fail(r->errbuf, sizeof r->errbuf, ret, ret, "reading the input");
        if (ret < 0) {  // end of file, or a read error: what was read so far is converted
            if (ret != AVERROR_EOF) r->decode_errors++;
            break;
        }
        int s = r->pkt->stream_index;
        ret = s == r->video && r->video >= 0       ? decode(r, r->vdec, r->pkt, MS_READ_VIDEO)
              : s == r->audio && r->audio >= 0     ? decode(r, r->adec, r->pkt, MS_READ_AUDIO)
              : ms_subtitles_track(r->subs, s) >= 0 ? hand_over_subtitle(r)
                                                   : 0;
        ff.av_packet_unref(r->pkt);
        if (ret < 0) return ret;
    }
    if (r->video >= 0 && ((ret = decode(r, r->vdec, NULL, MS_READ_VIDEO)) < 0 ||
                          (ret = hand_over(r, (ms_read){.kind = MS_READ_VIDEO_END})) < 0))
        return ret;
    return r->audio >= 0 ? decode(r, r->adec, NULL, MS_READ_AUDIO) : 0;
}

static void *run_reader(void *arg) {
    ms_reader *r = arg;
    ms_log_set_route(r->route);
    ms_log_clear();
    int ret = read_input(r);
    pthread_mutex_lock(&r->lock);
    r->status = ret;
    r->ended = 1;
    pthread_cond_broadcast(&r->changed);
    pthread_mutex_unlock(&r->lock);
    return NULL;
}

int ms_reader_start(transcoder *t, int video, int audio, ms_reader **reader) {
    ms_reader *r = calloc(1, sizeof *r);
    if (!r) return ms_transcode_fail(t, AVERROR(ENOMEM), AVERROR(ENOMEM), "reader");
    *r = (ms_reader){.ifmt = t->ifmt,
                     .vdec = t->vdec,
                     .adec = t->adec,
                     .video = video,
                     .audio = audio,
                     .subs = &t->subs,
                     .route = ms_log_route()};
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->changed, NULL);
    *reader = r;
    if (!(r->pkt = ff.av_packet_alloc())) return ms_transcode_fail(t, AVERROR(ENOMEM), AVERROR(ENOMEM), "reader");
    int ret = pthread_create(&r->thread, NULL, run_reader, r);
    if (ret != 0) return ms_transcode_fail(t, AVERROR(ret), AVERROR(ret), "cannot start the reading thread");
    r->started = 1;
    return 0;
}

int ms_reader_next(ms_reader *r, ms_read *next, char *errbuf, size_t errlen) {
    pthread_mutex_lock(&r->lock);
    while (r->count == 0 && !r->ended) pthread_cond_wait(&r->changed, &r->lock);
    if (r->count > 0) {
        *next = r->queue[r->head];
        r->head = (r->head + 1) % READER_QUEUE;
        r->count--;
        r->pictures -= next->kind == MS_READ_VIDEO;
        r->used_errors = next->decode_errors;
        pthread_cond_broadcast(&r->changed);
        pthread_mutex_unlock(&r->lock);
        return 0;
    }
    int status = r->status;
    r->used_errors = r->decode_errors;  // the thread ended: it counts no more
    pthread_mutex_unlock(&r->lock);
    *next = (ms_read){.kind = MS_READ_END};
    if (status < 0 && errbuf && errlen) snprintf(errbuf, errlen, "%s", r->errbuf);  // written before `ended`
    return status < 0 ? status : 0;
}

void ms_reader_stop(ms_reader **reader, transcoder *t) {
    ms_reader *r = *reader;
    if (!r) return;
    if (r->started) {
        pthread_mutex_lock(&r->lock);
        r->stop = 1;
        pthread_cond_broadcast(&r->changed);
        pthread_mutex_unlock(&r->lock);
        pthread_join(r->thread, NULL);
    }
    for (; r->count > 0; r->count--, r->head = (r->head + 1) % READER_QUEUE) {
        ff.av_frame_free(&r->queue[r->head].frame);
        ff.av_packet_free(&r->queue[r->head].packet);
    }
    // What was counted before the last thing used: a range stops reading at its end, and what the thread read
    // beyond that meanwhile (as far as it got) is not the range's.
    t->decode_errors += r->used_errors;
    ff.av_frame_free(&r->spare);
    ff.av_packet_free(&r->pkt);
    pthread_mutex_destroy(&r->lock);
    pthread_cond_destroy(&r->changed);
    free(r);
    *reader = NULL;
}
