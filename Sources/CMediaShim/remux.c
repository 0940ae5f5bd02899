// ms_remux (MS_MODE_REMUX of ms_transcode): the best video and audio streams copied unchanged
// into MP4, with the text subtitle tracks converted to mov_text (subtitles.c).
#include "ms_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

/// How many bytes a streamed remux writes between two syncs that make them final for its reader.
#define MS_REMUX_GATE_STEP (4 << 20)

typedef struct remuxer {
    AVFormatContext *ifmt, *ofmt;
    AVPacket *pkt;
    int in_index[2];       // input stream of output stream 0 (video) and 1 (audio, or -1)
    int64_t last_dts[2];   // in the output stream's time base
    int64_t video_packets, skipped;
    double copied_seconds, out_end;
    int reserve_index;     // asked to reserve room for the index (see index_space)
    int64_t index_space;   // bytes reserved for the MP4 index before the media data, or 0
    int index_too_small;   // the reservation did not fit: write again with +faststart
    ms_writeback writeback;
    ms_join_gate_fn gate;  // a reader follows the output (see ms_remux_streamed), or NULL
    void *gate_ctx;
    ms_subtitles subs;     // text subtitle tracks, after video and audio
    int synced_fd;         // the output, opened again to make what is final durable (gate only), or -1
    int64_t head;          // bytes the trailer rewrites: the file type, the index room and the mdat header
    int64_t unsynced;      // bytes written since the gate was last told
} remuxer;

/// Makes what is written so far durable and tells the gate how far the output is final.
static int pass_gate(remuxer *r, char *errbuf, size_t errlen) {
    r->unsynced = 0;
    ff.avio_flush(r->ofmt->pb);
    if (r->ofmt->pb->error < 0) return ms_write_error(errbuf, errlen, r->ofmt->pb->error, "cannot write the output");
    if (fdatasync(r->synced_fd) != 0) return ms_write_error(errbuf, errlen, AVERROR(errno), "cannot sync the output");
    int64_t final = ff.avio_seek(r->ofmt->pb, 0, SEEK_CUR);
    return r->gate(r->gate_ctx, -1, r->head, final)
               ? ms_fail(errbuf, errlen, MS_ERROR_CANCELLED, MS_ERROR_CANCELLED, "remux")
               : 0;
}

/// Shifts to a start at 0, converts to the output time base, keeps dts strictly increasing
/// (as the CLI does) so the muxer never refuses a packet of a sloppy source.
static void retime(remuxer *r, int out, const AVStream *ist, AVPacket *pkt) {
    const AVStream *ost = r->ofmt->streams[out];
    int64_t shift = ff.av_rescale_q(r->ifmt->start_time != AV_NOPTS_VALUE ? r->ifmt->start_time : 0, AV_TIME_BASE_Q,
                                    ist->time_base);
    if (pkt->pts != AV_NOPTS_VALUE) pkt->pts -= shift;
    if (pkt->dts != AV_NOPTS_VALUE) pkt->dts -= shift;
    ff.av_packet_rescale_ts(pkt, ist->time_base, ost->time_base);
    if (pkt->dts != AV_NOPTS_VALUE && r->last_dts[out] != AV_NOPTS_VALUE && pkt->dts <= r->last_dts[out]) {
        pkt->dts = r->last_dts[out] + 1;
        if (pkt->pts != AV_NOPTS_VALUE && pkt->pts < pkt->dts) pkt->pts = pkt->dts;
    }
    if (pkt->dts != AV_NOPTS_VALUE) r->last_dts[out] = pkt->dts;
    pkt->stream_index = out;
    pkt->pos = -1;
}

static int64_t metadata_bytes(const AVDictionary *m) {
    int64_t bytes = 0;
    const AVDictionaryEntry *e = NULL;
    while ((e = ff.av_dict_get(m, "", e, AV_DICT_IGNORE_SUFFIX))) bytes += 64 + strlen(e->key) + strlen(e->value);
    return bytes;
}

/// Room for the MP4 index when every sample of the kept streams is known before the copy starts (an
/// MP4/MOV input: its demuxer indexes every sample when it opens the file); 0 otherwise. With the
/// index written into space reserved ahead of the media data, the output is finished in one pass:
/// +faststart instead writes the index at the end, then reads and rewrites the whole file to move it
/// forward. The bound is generous (unused room stays as a `free` box of a few bytes per sample).
static int64_t index_space(const remuxer *r) {
    if (strcmp(r->ifmt->iformat->name, "mov,mp4,m4a,3gp,3g2,mj2") != 0) return 0;
    int64_t bytes = 16384 + 2 * metadata_bytes(r->ifmt->metadata);  // movie header, user data
    for (int i = 0; i < 2; i++) {
        if (r->in_index[i] < 0) continue;
        const AVStream *st = r->ifmt->streams[r->in_index[i]];
        int samples = ff.avformat_index_get_entries_count(st);
        if (samples <= 0) return 0;
        // Per sample at most: its size (stsz, 4 bytes), duration (stts, 8), composition offset (ctts, 8),
        // sync flag (stss, 4) and chunk (stsc, 12; co64, 8).
        bytes += 4096 + st->codecpar->extradata_size + 2 * metadata_bytes(st->metadata) + 44 * (int64_t)samples;
    }
    for (int i = 0; i < r->subs.count; i++) {  // cues' starts and ends bound the samples, gaps included: 2 a cue
        const AVStream *st = r->ifmt->streams[r->subs.tracks[i].in_index];
        int64_t cues = ff.avformat_index_get_entries_count(st);
        bytes += 4096 + 2 * metadata_bytes(st->metadata) + 2 * 44 * (cues > 0 ? cues : 0);
    }
    return bytes;
}

/// Opens `in` and picks the streams to copy: the best video stream and the best audio stream, refused (before
/// any work) when MP4 cannot store their codecs.
static int open_input(remuxer *r, const char *in, ms_progress *progress, char *errbuf, size_t errlen) {
    int ret = ms_open_input(in, &r->ifmt, errbuf, errlen);
    if (ret < 0) return ret;
    r->in_index[0] = ms_find_video_stream(r->ifmt);
    if (r->in_index[0] < 0) return ms_fail(errbuf, errlen, MS_ERROR_NO_VIDEO, MS_ERROR_NO_VIDEO, "'%s'", in);
    r->in_index[1] = ms_find_audio_stream(r->ifmt, r->in_index[0]);
    const AVOutputFormat *mp4 = ff.av_guess_format("mp4", NULL, NULL);
    for (int i = 0; i < 2 && mp4; i++) {  // refuse before any work
        if (r->in_index[i] < 0) continue;
        enum AVCodecID id = r->ifmt->streams[r->in_index[i]]->codecpar->codec_id;
        if (ff.avformat_query_codec(mp4, id, FF_COMPLIANCE_NORMAL) != 1)
            return ms_fail(errbuf, errlen, MS_ERROR_REMUX_UNSUPPORTED, MS_ERROR_REMUX_UNSUPPORTED,
                           "cannot stream-copy the %s codec '%s' of '%s'", i == 0 ? "video" : "audio",
                           ff.avcodec_get_name(id), in);
    }
    progress->total = ms_media_duration(r->ifmt);
    if (!(r->pkt = ff.av_packet_alloc())) return ms_fail(errbuf, errlen, AVERROR(ENOMEM), AVERROR(ENOMEM), "remux");
    return 0;
}

/// Creates the MP4 `out` with the input's metadata, its copied streams and the subtitle tracks, and writes its
/// header: with room for the index when `opt` asks for faststart and the copy reserves it (see index_space). A
/// gated copy then passes the gate over the head.
static int open_output(remuxer *r, const char *in, const char *out, const ms_transcode_options *opt, char *errbuf,
                       size_t errlen) {
    int ret;
    if ((ret = ms_new_mp4_muxer(out, &r->ofmt, errbuf, errlen)) < 0) return ret;
    if ((ret = ff.av_dict_copy(&r->ofmt->metadata, r->ifmt->metadata, 0)) < 0)
        return ms_fail(errbuf, errlen, ret, ret, "metadata");
    for (int i = 0; i < 2; i++) {
        r->last_dts[i] = AV_NOPTS_VALUE;
        if (r->in_index[i] >= 0 && (ret = ms_add_copy_stream(r->ofmt, r->ifmt->streams[r->in_index[i]], errbuf, errlen)) < 0)
            return ret;
    }
    const AVCodecParameters *video = r->ifmt->streams[r->in_index[0]]->codecpar;
    if ((ret = ms_subtitles_open(&r->subs, r->ifmt, r->ofmt, video->width, video->height, errbuf, errlen)) < 0)
        return ret;
    r->index_space = opt->faststart && r->reserve_index ? index_space(r) : 0;
    if ((ret = ms_start_output(r->ofmt, in, out, opt->faststart, r->index_space, errbuf, errlen)) < 0) return ret;
    if (!opt->faststart || r->index_space > 0) ms_writeback_start(&r->writeback, out);  // one pass: no rewrite to come
    if (r->index_space > 0 && r->gate) {
        // The muxer has written the file type, skipped the index room and written the mdat header, which the
        // trailer rewrites with the size: all that is the head. Without the room nothing is final before the
        // end (+faststart moves every byte), and the reader waits for the finished file.
        ff.avio_flush(r->ofmt->pb);
        r->head = ff.avio_seek(r->ofmt->pb, 0, SEEK_CUR);
        r->synced_fd = open(out, O_RDONLY | O_CLOEXEC);
        if (r->synced_fd < 0) return ms_write_error(errbuf, errlen, AVERROR(errno), "cannot sync the output");
        if ((ret = pass_gate(r, errbuf, errlen)) < 0) return ret;
    }
    return 0;
}

/// Writes the packet in `r->pkt`, of output stream `o` (0: video, 1: audio), retimed; counts the video packets
/// and reports progress by them, lets the subtitles follow, and passes the gate every MS_REMUX_GATE_STEP bytes.
static int copy_packet(remuxer *r, int o, ms_progress *progress, char *errbuf, size_t errlen) {
    int ret;
    const AVStream *ist = r->ifmt->streams[r->pkt->stream_index];
    retime(r, o, ist, r->pkt);
    AVRational tb = r->ofmt->streams[o]->time_base;
    int64_t ts = r->pkt->pts != AV_NOPTS_VALUE ? r->pkt->pts : r->pkt->dts;
    double end = ms_seconds(ts + r->pkt->duration, tb);
    if (end > r->out_end) r->out_end = end;
    if (o == 0) {
        r->video_packets++;
        if (end > r->copied_seconds) r->copied_seconds = end;
        if ((ret = ms_progress_report(progress, ms_seconds(ts, tb))) < 0) {
            ff.av_packet_unref(r->pkt);
            return ms_fail(errbuf, errlen, ret, ret, "remux");
        }
    }
    int size = r->pkt->size;
    if ((ret = ms_write_packet(r->ofmt, r->pkt, errbuf, errlen)) < 0) return ret;
    if (r->subs.count &&
        (ret = ms_subtitles_advance(&r->subs, ms_microseconds(r->out_end), r->ofmt, errbuf, errlen)) < 0)
        return ret;
    ms_writeback_note(&r->writeback, size);
    if (r->synced_fd >= 0 && (r->unsynced += size) >= MS_REMUX_GATE_STEP &&
        (ret = pass_gate(r, errbuf, errlen)) < 0)
        return ret;
    return 0;
}

/// Copies the input's packets to the end of the file, or to a read error (what was read so far is kept, and the
/// error counts as a skipped packet): the kept streams' packets and the text subtitles; the packets of other
/// streams and the corrupt ones (a cut-off last packet) are dropped.
static int copy_packets(remuxer *r, ms_progress *progress, char *errbuf, size_t errlen) {
    for (;;) {
        int ret = ff.av_read_frame(r->ifmt, r->pkt);
        if (ret == AVERROR(ENOMEM)) return ms_fail(errbuf, errlen, ret, ret, "reading the input");
        if (ret < 0) {  // end of file, or a read error: what was read so far is kept
            if (ret != AVERROR_EOF) r->skipped++;
            return 0;
        }
        int o = r->pkt->stream_index == r->in_index[0] ? 0 : r->pkt->stream_index == r->in_index[1] ? 1 : -1;
        int sub = ms_subtitles_track(&r->subs, r->pkt->stream_index);
        if (sub >= 0) {
            ret = ms_subtitles_write(&r->subs, sub, r->pkt, r->ofmt, errbuf, errlen);
            ff.av_packet_unref(r->pkt);
            if (ret < 0) return ret;
            continue;
        }
        if (o < 0 || (r->pkt->flags & AV_PKT_FLAG_CORRUPT)) {  // a cut-off last packet is dropped
            r->skipped += o >= 0;
            ff.av_packet_unref(r->pkt);
            continue;
        }
        if ((ret = copy_packet(r, o, progress, errbuf, errlen)) < 0) return ret;
    }
}

/// Ends the copy: the last subtitle cues, the packets still queued (a gated copy passes the gate over them, so
/// that only the head is left to write), and the trailer. Fails when no video packet was copied.
static int finish_output(remuxer *r, const char *in, char *errbuf, size_t errlen) {
    int ret;
    if (r->video_packets == 0) return ms_fail(errbuf, errlen, MS_ERROR_NO_FRAMES, MS_ERROR_NO_FRAMES, "'%s'", in);
    if ((ret = ms_subtitles_finish(&r->subs, ms_microseconds(r->out_end), r->ofmt, errbuf, errlen)) < 0) return ret;
    if (r->synced_fd >= 0) {
        // The packets still in the interleaving queue go out now, as the trailer would write them: then only the
        // head is left to write, and the reader may send all the rest before it.
        if ((ret = ff.av_interleaved_write_frame(r->ofmt, NULL)) < 0)
            return ms_write_error(errbuf, errlen, ret, "cannot write the output");
        if ((ret = pass_gate(r, errbuf, errlen)) < 0) return ret;
    }
    ret = ms_write_trailer(r->ofmt, errbuf, errlen);
    r->index_too_small = ret == AVERROR(EINVAL) && r->index_space > 0;  // the muxer's answer to an index that does not fit
    return ret;
}

static int run(remuxer *r, const char *in, const char *out, const ms_transcode_options *opt, ms_progress *progress,
               char *errbuf, size_t errlen) {
    int ret;
    if ((ret = open_input(r, in, progress, errbuf, errlen)) < 0) return ret;
    if ((ret = open_output(r, in, out, opt, errbuf, errlen)) < 0) return ret;
    if ((ret = ms_progress_report(progress, 0)) < 0) return ms_fail(errbuf, errlen, ret, ret, "remux");
    if ((ret = copy_packets(r, progress, errbuf, errlen)) < 0) return ret;
    return finish_output(r, in, errbuf, errlen);
}

/// One copy of `in` to `out`; `reserve` asks for the one-pass index (see index_space), which `gate` (may be NULL)
/// then follows.
static int remux_file(const char *in, const char *out, const ms_transcode_options *opt, int reserve,
                      ms_join_gate_fn gate, void *gate_ctx, ms_progress *progress, ms_transcode_result *res,
                      int *index_too_small, char *errbuf, size_t errlen) {
    remuxer r = {.in_index = {-1, -1}, .reserve_index = reserve, .writeback = {.fd = -1}, .gate = gate,
                 .gate_ctx = gate_ctx, .synced_fd = -1};
    int ret = run(&r, in, out, opt, progress, errbuf, errlen);
    *index_too_small = r.index_too_small;
    if (ret >= 0 && res) {
        const AVStream *v = r.ifmt->streams[r.in_index[0]];
        int rotation = ms_stream_rotation(v);
        int swap = rotation == 90 || rotation == 270;
        *res = (ms_transcode_result){
            .duration = r.out_end,
            .width = v->codecpar->width,
            .height = v->codecpar->height,
            .display_width = swap ? v->codecpar->height : v->codecpar->width,
            .display_height = swap ? v->codecpar->width : v->codecpar->height,
            .rotation = rotation,
            .has_audio = r.in_index[1] >= 0,
            .video_frames = r.video_packets,
            .decode_errors = r.skipped,
            .decoded_seconds = r.copied_seconds,
            .input_duration = ms_declared_duration(r.ifmt),
        };
    }
    ms_writeback_end(&r.writeback);
    if (r.synced_fd >= 0) close(r.synced_fd);
    ms_close_output(&r.ofmt, out, ret < 0);
    if (ret >= 0 && res) res->size = ms_file_size(out);
    ms_subtitles_free(&r.subs);
    ff.avformat_close_input(&r.ifmt);
    ff.av_packet_free(&r.pkt);
    return ret;
}

int ms_remux(const char *in, const char *out, const ms_transcode_options *opt, ms_join_gate_fn gate, void *gate_ctx,
             ms_progress *progress, ms_transcode_result *res, char *errbuf, size_t errlen) {
    int index_too_small = 0;
    int ret = remux_file(in, out, opt, 1, gate, gate_ctx, progress, res, &index_too_small, errbuf, errlen);
    if (index_too_small) {  // an input whose index was incomplete when opened (a fragmented MP4)
        ff.av_log(NULL, AV_LOG_INFO, "the room reserved for the index was too small: writing it again with +faststart\n");
        if (errbuf && errlen) errbuf[0] = '\0';
        if (gate && gate(gate_ctx, MS_JOIN_REWRITTEN, 0, 0))
            return ms_fail(errbuf, errlen, MS_ERROR_CANCELLED, MS_ERROR_CANCELLED, "remux");
        ret = remux_file(in, out, opt, 0, NULL, NULL, progress, res, &index_too_small, errbuf, errlen);
    }
    return ret;
}
