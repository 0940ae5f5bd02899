// ms_join: the video parts of a segmented encode and its one audio pass, joined by stream copy into one
// MP4. Packets are taken from the video parts (one after the other, each shifted by its range start) and
// from the audio file (its audio, and the text subtitle tracks the audio pass keeps) in decode-time order, so
// the muxer never has to hold more than a few of them.
// With room for the index reserved ahead of the media data, everything after the head is final once
// written: a gate then lets the caller hand parts over as they are encoded and read what is final.
#include "ms_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/// A file whose packets of one stream (and, for the audio file, of its subtitle tracks) go to output streams.
typedef struct join_source {
    AVFormatContext *fmt;
    int stream;        // the input stream copied
    int out;           // the output stream
    int *subtitle_out; // the audio file's: per input stream, the output stream of a subtitle track, or -1
    int64_t shift;     // added to its timestamps, in the output stream's time base
    AVPacket *next;    // its next packet, retimed; valid while `ready` (none left: not ready)
    int ready;
} join_source;

typedef struct joiner {
    const char *const *parts;
    const double *starts;
    int count;
    int part;          // the video part being read
    AVFormatContext *ofmt;
    join_source video, audio;
    int64_t *last_dts; // per output stream
    int64_t video_packets;
    int64_t parts_left_out;  // empty parts skipped
    double out_end;
    ms_progress *progress;
    ms_join_gate_fn gate;
    void *gate_ctx;
    int synced_fd;     // the output, opened again to make what is final durable (gate only), or -1
    int64_t head;      // bytes the trailer rewrites: the file type, the index room and the mdat header
    char *errbuf;
    size_t errlen;
} joiner;

/// Makes what is written so far durable and tells the gate (`part`: the part to wait for, or -1).
static int pass_gate(joiner *j, int part) {
    if (!j->gate) return 0;
    int64_t final = 0;
    if (j->ofmt && j->ofmt->pb) {
        ff.avio_flush(j->ofmt->pb);
        if (j->ofmt->pb->error < 0) return ms_write_error(j->errbuf, j->errlen, j->ofmt->pb->error, "cannot write the output");
        if (j->synced_fd >= 0 && fdatasync(j->synced_fd) != 0)
            return ms_write_error(j->errbuf, j->errlen, AVERROR(errno), "cannot sync the output");
        final = ff.avio_seek(j->ofmt->pb, 0, SEEK_CUR);
    }
    return j->gate(j->gate_ctx, part, j->head, final)
               ? ms_fail(j->errbuf, j->errlen, MS_ERROR_CANCELLED, MS_ERROR_CANCELLED, "join")
               : 0;
}

/// Whether `path` is an empty part: an MP4 without a track, which a range transcode writes for a range in which
/// no frame could be decoded (a damaged or lost stretch of the source). Asked only of a part that ms_open_input
/// refused as not media.
static int is_empty_part(const char *path) {
    AVFormatContext *fmt = NULL;
    if (ms_open_file(path, &fmt) < 0) return 0;
    int empty = fmt->nb_streams == 0;
    ff.avformat_close_input(&fmt);
    return empty;
}

/// Opens the first part from `index` on that is not empty as the video source, checking that it was encoded as
/// the first part was; 1 when every part from `index` on is empty.
static int open_part(joiner *j, int index) {
    ff.avformat_close_input(&j->video.fmt);
    int ret = pass_gate(j, index);
    if (ret < 0) return ret;
    ret = ms_open_input(j->parts[index], &j->video.fmt, j->errbuf, j->errlen);
    if (ret == MS_ERROR_NOT_MEDIA && is_empty_part(j->parts[index])) {
        ff.av_log(NULL, AV_LOG_INFO, "leaving out part %d, empty: no frame of its range could be decoded\n", index);
        j->parts_left_out++;
        j->part = index;
        return index + 1 < j->count ? open_part(j, index + 1) : 1;
    }
    if (ret < 0) return ret;
    int v = ms_find_video_stream(j->video.fmt);
    if (v < 0) return ms_fail(j->errbuf, j->errlen, MS_ERROR_NO_VIDEO, MS_ERROR_NO_VIDEO, "'%s'", j->parts[index]);
    j->video.stream = v;
    j->video.ready = 0;
    j->part = index;
    if (!j->ofmt->nb_streams) return 0;  // the first part: its parameters become the output's
    const AVCodecParameters *want = j->ofmt->streams[0]->codecpar, *have = j->video.fmt->streams[v]->codecpar;
    if (have->codec_id != want->codec_id || have->width != want->width || have->height != want->height ||
        have->extradata_size != want->extradata_size ||
        (want->extradata_size && memcmp(have->extradata, want->extradata, want->extradata_size) != 0))
        return ms_fail(j->errbuf, j->errlen, MS_ERROR_INVALID_ARGUMENT, MS_ERROR_INVALID_ARGUMENT,
                       "part %d ('%s') was encoded with other settings than part 0", index, j->parts[index]);
    j->video.shift = ff.av_rescale_q(ms_microseconds(j->starts[index]), AV_TIME_BASE_Q, j->ofmt->streams[0]->time_base);
    return 0;
}

/// Reads the next packet of `s` into s->next (retimed to its output stream), or marks it ended.
static int advance(joiner *j, join_source *s) {
    for (;;) {
        int ret = ff.av_read_frame(s->fmt, s->next);
        if (ret == AVERROR_EOF) {
            if (s == &j->video && j->part + 1 < j->count) {
                if ((ret = open_part(j, j->part + 1)) < 0) return ret;
                if (ret == 0) continue;  // else the parts left are empty: the video ends here
            }
            return 0;
        }
        if (ret < 0) return ms_fail(j->errbuf, j->errlen, ret, ret, "reading a part of the join");
        int in = s->next->stream_index;
        int out = in == s->stream ? s->out : s->subtitle_out ? s->subtitle_out[in] : -1;
        if (out < 0) {
            ff.av_packet_unref(s->next);
            continue;
        }
        const AVStream *ist = s->fmt->streams[in];
        const AVStream *ost = j->ofmt->streams[out];
        ff.av_packet_rescale_ts(s->next, ist->time_base, ost->time_base);
        if (s->next->pts != AV_NOPTS_VALUE) s->next->pts += s->shift;
        if (s->next->dts != AV_NOPTS_VALUE) s->next->dts += s->shift;
        // Strictly increasing decode times, as the muxer demands (a join never needs more than a nudge).
        int64_t *last = &j->last_dts[out];
        if (s->next->dts != AV_NOPTS_VALUE && *last != AV_NOPTS_VALUE && s->next->dts <= *last) {
            s->next->dts = *last + 1;
            if (s->next->pts != AV_NOPTS_VALUE && s->next->pts < s->next->dts) s->next->pts = s->next->dts;
        }
        if (s->next->dts != AV_NOPTS_VALUE) *last = s->next->dts;
        s->next->stream_index = out;
        s->next->pos = -1;
        s->ready = 1;
        return 0;
    }
}

/// Writes the ready packet of `s` and reads its next one.
static int write_next(joiner *j, join_source *s) {
    AVPacket *pkt = s->next;
    AVRational tb = j->ofmt->streams[pkt->stream_index]->time_base;
    int64_t ts = pkt->pts != AV_NOPTS_VALUE ? pkt->pts : pkt->dts;
    double end = ms_seconds(ts + pkt->duration, tb);
    if (pkt->stream_index == s->out && end > j->out_end) j->out_end = end;  // a cue shown past the end does not count
    if (s == &j->video) {
        j->video_packets++;
        int ret = ms_progress_report(j->progress, ms_seconds(ts, tb));
        if (ret < 0) return ms_fail(j->errbuf, j->errlen, ret, ret, "join");
    }
    s->ready = 0;
    int ret = ms_write_packet(j->ofmt, pkt, j->errbuf, j->errlen);
    if (ret < 0) return ret;
    return advance(j, s);
}

/// Adds an output track for each mov_text track of the audio file (the text subtitles the audio pass keeps).
static int add_subtitle_tracks(joiner *j) {
    AVFormatContext *fmt = j->audio.fmt;
    if (!(j->audio.subtitle_out = malloc(fmt->nb_streams * sizeof(int))))
        return ms_fail(j->errbuf, j->errlen, AVERROR(ENOMEM), AVERROR(ENOMEM), "join");
    for (unsigned i = 0; i < fmt->nb_streams; i++) {
        j->audio.subtitle_out[i] = -1;
        if (fmt->streams[i]->codecpar->codec_id != AV_CODEC_ID_MOV_TEXT) continue;
        j->audio.subtitle_out[i] = (int)j->ofmt->nb_streams;
        int ret = ms_add_copy_stream(j->ofmt, fmt->streams[i], j->errbuf, j->errlen);
        if (ret < 0) return ret;
    }
    return 0;
}

/// Opens the audio file `audio` (the audio pass's output) as the join's second source: its audio track becomes
/// output track 1, and its subtitle tracks follow.
static int open_audio(joiner *j, const char *audio) {
    int ret = ms_open_input(audio, &j->audio.fmt, j->errbuf, j->errlen);
    if (ret < 0) return ret;
    j->audio.stream = ms_find_audio_stream(j->audio.fmt, -1);
    if (j->audio.stream < 0) return ms_fail(j->errbuf, j->errlen, MS_ERROR_NO_AUDIO, MS_ERROR_NO_AUDIO, "'%s'", audio);
    if ((ret = ms_add_copy_stream(j->ofmt, j->audio.fmt->streams[j->audio.stream], j->errbuf, j->errlen)) < 0)
        return ret;
    j->audio.out = 1;
    return add_subtitle_tracks(j);
}

static int run(joiner *j, const char *audio, const char *out, int faststart, int64_t index_space) {
    if (!(j->video.next = ff.av_packet_alloc()) || (audio && !(j->audio.next = ff.av_packet_alloc())))
        return ms_fail(j->errbuf, j->errlen, AVERROR(ENOMEM), AVERROR(ENOMEM), "join");
    int ret = ms_new_mp4_muxer(out, &j->ofmt, j->errbuf, j->errlen);
    if (ret < 0 || (ret = open_part(j, 0)) < 0) return ret;
    if (ret > 0)
        return ms_fail(j->errbuf, j->errlen, MS_ERROR_EVERY_PART_EMPTY, MS_ERROR_NO_FRAMES, "every part is empty");
    if ((ret = ff.av_dict_copy(&j->ofmt->metadata, j->video.fmt->metadata, 0)) < 0)
        return ms_fail(j->errbuf, j->errlen, ret, ret, "metadata");
    if ((ret = ms_add_copy_stream(j->ofmt, j->video.fmt->streams[j->video.stream], j->errbuf, j->errlen)) < 0)
        return ret;
    j->video.out = 0;
    if (audio && (ret = open_audio(j, audio)) < 0) return ret;
    if (!(j->last_dts = malloc(j->ofmt->nb_streams * sizeof *j->last_dts)))
        return ms_fail(j->errbuf, j->errlen, AVERROR(ENOMEM), AVERROR(ENOMEM), "join");
    for (unsigned i = 0; i < j->ofmt->nb_streams; i++) j->last_dts[i] = AV_NOPTS_VALUE;
    // The muxer's interleaver groups each track's packets into runs of this length, which the index stores as
    // one chunk each.
    j->ofmt->max_chunk_duration = MS_JOIN_CHUNK_MICROSECONDS;
    // Packets arrive in decode-time order already: the interleaver need not wait for a sparse subtitle track's
    // next cue (10 s by default) before it writes the others, which holds those packets and the streamed final.
    j->ofmt->max_interleave_delta = MS_JOIN_CHUNK_MICROSECONDS;
    if ((ret = ms_start_output(j->ofmt, j->parts[0], out, faststart, index_space, j->errbuf, j->errlen)) < 0)
        return ret;
    if (j->gate) {
        // The muxer has written the file type, skipped the index room and written the mdat header, which the
        // trailer rewrites with the size: all that is the head.
        ff.avio_flush(j->ofmt->pb);
        j->head = ff.avio_seek(j->ofmt->pb, 0, SEEK_CUR);
        j->synced_fd = open(out, O_RDONLY | O_CLOEXEC);
        if (j->synced_fd < 0) return ms_write_error(j->errbuf, j->errlen, AVERROR(errno), "cannot sync the output");
        if ((ret = pass_gate(j, -1)) < 0) return ret;
    }
    // The time bases are final once the header is written.
    j->video.shift = ff.av_rescale_q(ms_microseconds(j->starts[j->part]), AV_TIME_BASE_Q, j->ofmt->streams[0]->time_base);
    if ((ret = advance(j, &j->video)) < 0 || (audio && (ret = advance(j, &j->audio)) < 0)) return ret;
    while (j->video.ready || j->audio.ready) {
        join_source *s = !j->audio.ready ? &j->video
                         : !j->video.ready
                             ? &j->audio
                             : ff.av_compare_ts(j->video.next->dts, j->ofmt->streams[0]->time_base,
                                                j->audio.next->dts,
                                                j->ofmt->streams[j->audio.next->stream_index]->time_base) <= 0
                                   ? &j->video
                                   : &j->audio;
        if ((ret = write_next(j, s)) < 0) return ret;
    }
    if (j->video_packets == 0)
        return ms_fail(j->errbuf, j->errlen, MS_ERROR_NO_FRAMES, MS_ERROR_NO_FRAMES, "'%s'", j->parts[0]);
    if ((ret = pass_gate(j, -1)) < 0) return ret;
    return ms_write_trailer(j->ofmt, j->errbuf, j->errlen);
}

/// One join of the parts into `out`; `index_space` > 0 reserves the index room (see ms_join).
static int join_file(const char *const *parts, const double *starts, int count, const char *audio, const char *out,
                     int faststart, int64_t index_space, ms_join_gate_fn gate, void *gate_ctx, ms_progress *progress,
                     ms_transcode_result *res, int *index_too_small, char *errbuf, size_t errlen) {
    joiner j = {.parts = parts, .starts = starts, .count = count, .progress = progress, .gate = gate,
                .gate_ctx = gate_ctx, .synced_fd = -1, .errbuf = errbuf, .errlen = errlen,
                .video = {.stream = -1}, .audio = {.stream = -1}};
    int ret = run(&j, audio, out, faststart, index_space);
    // The muxer's answer to an index that does not fit the room reserved for it.
    *index_too_small = ret == AVERROR(EINVAL) && faststart && index_space > 0;
    if (ret >= 0 && res) {
        const AVStream *v = j.ofmt->streams[0];
        int rotation = ms_stream_rotation(v);
        int swap = rotation == 90 || rotation == 270;
        *res = (ms_transcode_result){
            .duration = j.out_end,
            .width = v->codecpar->width,
            .height = v->codecpar->height,
            .display_width = swap ? v->codecpar->height : v->codecpar->width,
            .display_height = swap ? v->codecpar->width : v->codecpar->height,
            .rotation = rotation,
            .has_audio = audio != NULL,
            .video_frames = j.video_packets,
            .decoded_seconds = j.out_end,
            .parts_left_out = j.parts_left_out,
        };
    }
    if (j.synced_fd >= 0) close(j.synced_fd);
    ms_close_output(&j.ofmt, out, ret < 0);
    if (ret >= 0 && res) res->size = ms_file_size(out);
    ff.avformat_close_input(&j.video.fmt);
    ff.avformat_close_input(&j.audio.fmt);
    ff.av_packet_free(&j.video.next);
    ff.av_packet_free(&j.audio.next);
    free(j.audio.subtitle_out);
    free(j.last_dts);
    return ret;
}

int ms_join(const char *const *parts, const double *starts, int count, const char *audio, const char *out,
            int faststart, int64_t index_space, ms_join_gate_fn gate, void *gate_ctx, ms_progress_fn cb, void *ctx,
            ms_transcode_result *res, char *errbuf, size_t errlen) {
    int ret = ms_begin(errbuf, errlen);
    if (ret < 0) return ret;
    if (!parts || !starts || count < 1 || !out || index_space < 0)
        return ms_fail(errbuf, errlen, MS_ERROR_INVALID_ARGUMENT, MS_ERROR_INVALID_ARGUMENT, "ms_join: parts");
    for (int i = 0; i < count; i++)
        if (!parts[i] || !(starts[i] >= 0) || (i > 0 && !(starts[i] > starts[i - 1])))
            return ms_fail(errbuf, errlen, MS_ERROR_INVALID_ARGUMENT, MS_ERROR_INVALID_ARGUMENT,
                           "ms_join: part %d (starts must increase)", i);
    if (res) memset(res, 0, sizeof *res);
    ms_progress progress;
    ms_progress_start(&progress, cb, ctx, 0);
    int index_too_small = 0;
    ret = join_file(parts, starts, count, audio, out, faststart, index_space, gate, gate_ctx, &progress, res,
                    &index_too_small, errbuf, errlen);
    if (index_too_small) {
        ff.av_log(NULL, AV_LOG_INFO, "the room reserved for the index was too small: joining again with +faststart\n");
        if (errbuf && errlen) errbuf[0] = '\0';
        if (gate && gate(gate_ctx, MS_JOIN_REWRITTEN, 0, 0))
            return ms_fail(errbuf, errlen, MS_ERROR_CANCELLED, MS_ERROR_CANCELLED, "join");
        ret = join_file(parts, starts, count, audio, out, faststart, 0, NULL, NULL, &progress, res, &index_too_small,
                        errbuf, errlen);
    }
    return ret;
}
