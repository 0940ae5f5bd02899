// The text subtitle tracks of an export: decoded and written again as mov_text (tx3g), the text track MP4 and MOV
// players show, by both the transcode and the remux. Bitmap subtitles (DVD, PGS, DVB) have no text to carry over
// and are left out, as are tracks whose decoder is missing.
#include "ms_internal.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

/// What one encoded cue may take; as the ffmpeg CLI's buffer.
#define MS_SUBTITLE_MAX_BYTES (1 << 20)

int ms_text_subtitle(const AVCodecParameters *par) {
    switch (par->codec_id) {
    case AV_CODEC_ID_SUBRIP:
    case AV_CODEC_ID_SRT:
    case AV_CODEC_ID_ASS:
    case AV_CODEC_ID_SSA:
    case AV_CODEC_ID_WEBVTT:
    case AV_CODEC_ID_MOV_TEXT:
    case AV_CODEC_ID_TEXT: return 1;
    default: return 0;
    }
}

/// Opens the decoder of `ist` and a mov_text encoder fed by it, and adds the output track. 0, or a negative error
/// after which the track is left out (the caller frees what was opened).
static int open_track(ms_subtitle_track *track, const AVStream *ist, AVFormatContext *ofmt, int width, int height,
                      char *errbuf, size_t errlen) {
    int ret = ms_open_decoder(ist, 1, &track->dec, errbuf, errlen);
    if (ret < 0) return ret;
    const AVCodec *codec = ff.avcodec_find_encoder(AV_CODEC_ID_MOV_TEXT);
    if (!codec) return MS_ERROR_UNSUPPORTED_CODEC;
    if (!(track->enc = ms_new_codec_context(codec))) return AVERROR(ENOMEM);
    AVCodecContext *dec = track->dec, *enc = track->enc;
    // The encoder reads the decoder's styles (an ASS header) and scales its font to the picture, as the CLI sets it.
    if (dec->subtitle_header_size > 0) {
        if (!(enc->subtitle_header = ff.av_mallocz((size_t)dec->subtitle_header_size + 1))) return AVERROR(ENOMEM);
        memcpy(enc->subtitle_header, dec->subtitle_header, (size_t)dec->subtitle_header_size);
        enc->subtitle_header_size = dec->subtitle_header_size;
    }
    enc->width = width;
    enc->height = height;
    enc->time_base = AV_TIME_BASE_Q;
    if ((ret = ff.avcodec_open2(enc, codec, NULL)) < 0) return ret;
    if (!(track->ost = ff.avformat_new_stream(ofmt, NULL))) return AVERROR(ENOMEM);
    AVStream *ost = track->ost;
    if ((ret = ff.avcodec_parameters_from_context(ost->codecpar, enc)) < 0) return ret;
    if ((ret = ms_copy_stream_metadata(ist, ost)) < 0) return ret;
    // MP4 has no track title: players show the handler name instead.
    const AVDictionaryEntry *title = ff.av_dict_get(ist->metadata, "title", NULL, 0);
    if (title && !ff.av_dict_get(ist->metadata, "handler_name", NULL, 0) &&
        (ret = ff.av_dict_set(&ost->metadata, "handler_name", title->value, 0)) < 0)
        return ret;
    ost->time_base = (AVRational){1, 1000};
    ost->disposition = ist->disposition & ~AV_DISPOSITION_ATTACHED_PIC;  // default, forced, hearing impaired...
    track->in_index = ist->index;
    track->last_pts = AV_NOPTS_VALUE;
    return 0;
}

static void free_track(ms_subtitle_track *track) {
    ff.avcodec_free_context(&track->dec);
    ff.avcodec_free_context(&track->enc);
}

int ms_subtitles_open(ms_subtitles *subs, AVFormatContext *ifmt, AVFormatContext *ofmt, int width, int height,
                      char *errbuf, size_t errlen) {
    subs->offset = ifmt->start_time != AV_NOPTS_VALUE ? ifmt->start_time : 0;
    int text = 0;
    for (unsigned i = 0; i < ifmt->nb_streams; i++) text += ms_text_subtitle(ifmt->streams[i]->codecpar);
    if (text == 0) return 0;
    if (!(subs->tracks = ff.av_calloc((size_t)text, sizeof *subs->tracks)) || !(subs->pkt = ff.av_packet_alloc()) ||
        !(subs->buf = ff.av_malloc(MS_SUBTITLE_MAX_BYTES)))
        return ms_fail(errbuf, errlen, AVERROR(ENOMEM), AVERROR(ENOMEM), "subtitles");
    for (unsigned i = 0; i < ifmt->nb_streams; i++) {
        const AVStream *ist = ifmt->streams[i];
        if (!ms_text_subtitle(ist->codecpar)) continue;
        ms_subtitle_track *track = &subs->tracks[subs->count];
        int ret = open_track(track, ist, ofmt, width, height, NULL, 0);
        if (ret < 0 && (ret == AVERROR(ENOMEM) || track->ost)) {  // out of memory, or the track is in the output
            free_track(track);
            return ms_fail(errbuf, errlen, ret, ret, "subtitle track %u", i);
        }
        if (ret < 0) {  // no decoder, or one that refuses the track: never a reason to fail the export
            char why[128];
            ms_strerror(ret, why, sizeof why);
            ff.av_log(NULL, AV_LOG_WARNING, "leaving out the %s subtitle track %u: %s\n",
                      ff.avcodec_get_name(ist->codecpar->codec_id), i, why);
            free_track(track);
            continue;
        }
        subs->count++;
    }
    return 0;
}

int ms_subtitles_track(const ms_subtitles *subs, int in_index) {
    for (int i = 0; i < subs->count; i++)
        if (subs->tracks[i].in_index == in_index) return i;
    return -1;
}

/// Encodes `count` of the cues in `track->shown` from `first` on, each on its own lines, in the order they came.
static int encode_shown(ms_subtitles *subs, ms_subtitle_track *track, int first, int count) {
    AVSubtitleRect rect_store[MS_CUES_SHOWN], *rects[MS_CUES_SHOWN];
    for (int i = 0; i < count; i++) {
        const ms_cue *cue = &track->shown[first + i];
        rect_store[i] = (AVSubtitleRect){.type = SUBTITLE_ASS, .ass = i ? cue->ass_below : cue->ass};
        rects[i] = &rect_store[i];
    }
    AVSubtitle sub = {.num_rects = (unsigned)count, .rects = rects};
    return ff.avcodec_encode_subtitle(track->enc, subs->buf, MS_SUBTITLE_MAX_BYTES, &sub);
}

/// Logs, once per track, that cues were left out because mov_text cannot hold them (64 KiB of text a sample).
static void note_unwritable(ms_subtitle_track *track, int64_t from) {
    ms_log_clear();
    if (track->unwritable++ == 0)
        ff.av_log(NULL, AV_LOG_WARNING, "leaving out cues of subtitle track %d that mov_text cannot hold, from %.3f s\n",
                  track->in_index, ms_seconds(from, AV_TIME_BASE_Q));
}

/// Writes what the track shows from `from` for `shown` microseconds (0: until the next sample, as the muxer ends a
/// cue without a duration): every cue in `track->shown`. Each cue fits alone (take_cues checked); a sample of
/// more than mov_text holds leaves out the oldest cues until it fits, with a warning: subtitles never fail an
/// export.
static int write_shown(ms_subtitles *subs, ms_subtitle_track *track, int64_t from, int64_t shown,
                       AVFormatContext *ofmt, char *errbuf, size_t errlen) {
    int size = AVERROR(EINVAL), first = 0;
    for (; first < track->shown_count; first++) {
        size = encode_shown(subs, track, first, track->shown_count - first);
        if (size >= 0 || size == AVERROR(ENOMEM)) break;
    }
    if (size == AVERROR(ENOMEM)) return ms_fail(errbuf, errlen, size, size, "subtitles");
    if (first > 0 || size < 0) note_unwritable(track, from);
    if (size < 0) return 0;
    int ret = ff.av_new_packet(subs->pkt, size);
    if (ret < 0) return ms_fail(errbuf, errlen, ret, ret, "subtitles");
    memcpy(subs->pkt->data, subs->buf, (size_t)size);
    // The end is rounded as the next sample's start is, so that samples shown back to back stay so.
    AVRational tb = track->ost->time_base;
    int64_t pts = ff.av_rescale_q(from, AV_TIME_BASE_Q, tb);
    if (track->last_pts != AV_NOPTS_VALUE && pts <= track->last_pts) pts = track->last_pts + 1;  // MP4: increasing
    track->last_pts = pts;
    subs->pkt->pts = subs->pkt->dts = pts;
    subs->pkt->duration = shown > 0 ? FFMAX(1, ff.av_rescale_q(from + shown, AV_TIME_BASE_Q, tb) - pts) : 0;
    subs->pkt->stream_index = track->ost->index;
    return ms_write_packet(ofmt, subs->pkt, errbuf, errlen);
}

static void free_cue(ms_cue *cue) {
    ff.av_freep(&cue->ass);
    ff.av_freep(&cue->ass_below);
}

/// Lets go of the cues that have ended by `track->until`.
static void let_go_ended(ms_subtitle_track *track) {
    int kept = 0;
    for (int i = 0; i < track->shown_count; i++) {
        if (track->shown[i].end <= track->until) free_cue(&track->shown[i]);
        else track->shown[kept++] = track->shown[i];
    }
    track->shown_count = kept;
}

/// Writes what the track shows from `track->until` up to `to`: one sample for each stretch in which the same cues
/// are shown, each ending where a cue ends. Cues that have ended are let go.
static int show_until(ms_subtitles *subs, ms_subtitle_track *track, int64_t to, AVFormatContext *ofmt,
                      char *errbuf, size_t errlen) {
    while (track->shown_count > 0 && track->until < to) {
        int64_t next = to;
        for (int i = 0; i < track->shown_count; i++)
            if (track->shown[i].end < next) next = track->shown[i].end;
        int ret = write_shown(subs, track, track->until, next - track->until, ofmt, errbuf, errlen);
        if (ret < 0) return ret;
        track->until = next;
        let_go_ended(track);
    }
    if (track->until < to) track->until = to;  // nothing shown meanwhile
    return 0;
}

/// The text field of an ASS event line (ReadOrder,Layer,Style,Name,MarginL,MarginR,MarginV,Effect,Text), or NULL
/// when the line has none.
static const char *event_text(const char *ass) {
    const char *text = ass;
    for (int commas = 0; commas < 8 && text; commas++)
        if ((text = strchr(text, ','))) text++;
    return text;
}

/// `text` from `*at` on past ASS override blocks (`{\\bord4}`): its next character shown, or 0 at the end.
static char next_shown(const char *text, size_t *at) {
    while (text[*at] == '{') {
        const char *close = strchr(text + *at, '}');
        if (!close) break;  // an unclosed brace is text
        *at = (size_t)(close - text) + 1;
    }
    return text[*at] ? text[(*at)++] : 0;
}

/// Whether two event texts show the same characters, override blocks aside.
static int same_text(const char *a, const char *b) {
    size_t i = 0, j = 0;
    for (;;) {
        char x = next_shown(a, &i), y = next_shown(b, &j);
        if (x != y) return 0;
        if (!x) return 1;
    }
}

/// Whether an event is an ASS drawing (`\\p1`), whose commands mov_text would show as text.
static int drawing(const char *text) {
    for (const char *p = strstr(text, "\\p"); p; p = strstr(p + 2, "\\p"))
        if (p[2] >= '1' && p[2] <= '9') return 1;
    return 0;
}

/// The cue shown with the same text, override blocks aside, or -1: a typeset sign is often the same text on
/// several layers (border, fill, shadow), each with its own tags, and is shown once.
static int shown_with_text(const ms_subtitle_track *track, const char *text) {
    for (int i = 0; i < track->shown_count; i++) {
        const char *shown = event_text(track->shown[i].ass);
        if (shown && same_text(shown, text)) return i;
    }
    return -1;
}

/// Takes the rects of `sub` as cues shown from `start` to `end`, after writing what was shown before `start`. A
/// cue without an end (INT64_MAX) shows until the next one begins; one more than MS_CUES_SHOWN ends the oldest.
static int take_cues(ms_subtitles *subs, ms_subtitle_track *track, const AVSubtitle *sub, int64_t start, int64_t end,
                     AVFormatContext *ofmt, char *errbuf, size_t errlen) {
    if (start < track->until) start = track->until;  // MP4 samples follow each other: what came late starts now
    if (end <= start) return 0;
    for (int i = 0; i < track->shown_count; i++)
        if (track->shown[i].end == INT64_MAX) track->shown[i].end = start;
    int ret = show_until(subs, track, start, ofmt, errbuf, errlen);
    if (ret < 0) return ret;
    let_go_ended(track);  // cues without an end that began here too: nothing of them is shown
    for (unsigned r = 0; r < sub->num_rects; r++) {
        const char *ass = sub->rects[r]->type == SUBTITLE_ASS ? sub->rects[r]->ass : NULL;
        const char *text = ass ? event_text(ass) : NULL;
        if (!ass || drawing(text ? text : ass)) continue;
        int same = shown_with_text(track, text ? text : ass);
        if (same >= 0) {  // shown already, from earlier: it stays as long as either lasts
            if (end > track->shown[same].end) track->shown[same].end = end;
            continue;
        }
        if (track->shown_count == MS_CUES_SHOWN) {  // the oldest ends now: what it showed up to here is written
            free_cue(&track->shown[0]);
            memmove(&track->shown[0], &track->shown[1], sizeof track->shown[0] * (MS_CUES_SHOWN - 1));
            track->shown_count--;
        }
        // Below another cue, the text starts on a line of its own; a line without a text field is kept as it is.
        ms_cue cue = {.start = start, .end = end, .ass = ff.av_strdup(ass)};
        if (cue.ass && text) {
            size_t head = (size_t)(text - ass), size = head + 2 + strlen(text) + 1;
            if ((cue.ass_below = ff.av_malloc(size))) snprintf(cue.ass_below, size, "%.*s\\N%s", (int)head, ass, text);
        } else if (cue.ass) {
            cue.ass_below = ff.av_strdup(ass);
        }
        if (!cue.ass || !cue.ass_below) {
            free_cue(&cue);
            return ms_fail(errbuf, errlen, AVERROR(ENOMEM), AVERROR(ENOMEM), "subtitles");
        }
        track->shown[track->shown_count++] = cue;
        int size = encode_shown(subs, track, track->shown_count - 1, 1);  // a cue mov_text cannot hold alone
        if (size == AVERROR(ENOMEM)) return ms_fail(errbuf, errlen, size, size, "subtitles");
        if (size < 0) {
            free_cue(&track->shown[--track->shown_count]);
            note_unwritable(track, start);
        }
    }
    return 0;
}

int ms_subtitles_advance(ms_subtitles *subs, int64_t now, AVFormatContext *ofmt, char *errbuf, size_t errlen) {
    for (int t = 0; t < subs->count; t++) {
        ms_subtitle_track *track = &subs->tracks[t];
        // The latest end among the cues shown that the other streams have passed by MS_SUBTITLE_SLACK: no cue still
        // to come begins before it.
        int64_t to = track->until;
        for (int i = 0; i < track->shown_count; i++)
            if (track->shown[i].end != INT64_MAX && track->shown[i].end <= now - MS_SUBTITLE_SLACK &&
                track->shown[i].end > to)
                to = track->shown[i].end;
        int ret = to > track->until ? show_until(subs, track, to, ofmt, errbuf, errlen) : 0;
        if (ret < 0) return ret;
    }
    return 0;
}

int ms_subtitles_write(ms_subtitles *subs, int index, const AVPacket *pkt, AVFormatContext *ofmt, char *errbuf,
                       size_t errlen) {
    ms_subtitle_track *track = &subs->tracks[index];
    AVSubtitle sub;
    int got = 0;
    int ret = ff.avcodec_decode_subtitle2(track->dec, &sub, &got, (AVPacket *)pkt);
    if (ret == AVERROR(ENOMEM)) return ms_fail(errbuf, errlen, ret, ret, "decoding subtitles");
    if (ret < 0 || !got) {  // a cue that cannot be read is skipped, as a damaged picture is
        ms_log_clear();
        if (ret < 0 && track->unreadable++ == 0)
            ff.av_log(NULL, AV_LOG_WARNING,
                      "skipping cues of subtitle track %d that cannot be read (text that is not UTF-8?), from %.3f s\n",
                      track->in_index,
                      pkt->pts == AV_NOPTS_VALUE
                          ? 0.0
                          : ms_seconds(ff.av_rescale_q(pkt->pts, track->dec->pkt_timebase, AV_TIME_BASE_Q) - subs->offset,
                                       AV_TIME_BASE_Q));
        return 0;
    }
    ret = 0;
    // The decoder gives the packet's time (microseconds) and the cue's display times relative to it (ms). SubRip,
    // ASS, WebVTT and mov_text give every cue its end. MP4 text tracks cannot overlap: while cues overlap, one
    // sample shows them all, each on its own lines, so a sign shown beside dialogue stays for its whole time.
    if (sub.num_rects > 0 && sub.pts != AV_NOPTS_VALUE) {
        int64_t start = sub.pts + (int64_t)sub.start_display_time * 1000 - subs->offset;
        int64_t end = sub.end_display_time > sub.start_display_time && sub.end_display_time != UINT32_MAX
                          ? sub.pts + (int64_t)sub.end_display_time * 1000 - subs->offset
                          : INT64_MAX;
        if (start < 0) start = 0;  // begins before the output's zero: the part still shown is kept
        ret = take_cues(subs, track, &sub, start, end, ofmt, errbuf, errlen);
    }
    ff.avsubtitle_free(&sub);
    return ret;
}

int ms_subtitles_finish(ms_subtitles *subs, int64_t end, AVFormatContext *ofmt, char *errbuf, size_t errlen) {
    for (int t = 0; t < subs->count; t++) {
        ms_subtitle_track *track = &subs->tracks[t];
        int64_t last = track->until;
        for (int i = 0; i < track->shown_count; i++)
            if (track->shown[i].end != INT64_MAX && track->shown[i].end > last) last = track->shown[i].end;
        int ret = show_until(subs, track, last, ofmt, errbuf, errlen);
        // Cues without an end are shown until the other streams end.
        if (ret >= 0 && track->shown_count > 0)
            ret = write_shown(subs, track, track->until, FFMAX(0, end - track->until), ofmt, errbuf, errlen);
        if (ret < 0) return ret;
        for (int i = 0; i < track->shown_count; i++) free_cue(&track->shown[i]);
        track->shown_count = 0;
    }
    return 0;
}

void ms_subtitles_free(ms_subtitles *subs) {
    for (int i = 0; i < subs->count; i++) {
        for (int c = 0; c < subs->tracks[i].shown_count; c++) free_cue(&subs->tracks[i].shown[c]);
        free_track(&subs->tracks[i]);
    }
    ff.av_freep(&subs->tracks);
    ff.av_packet_free(&subs->pkt);
    ff.av_freep(&subs->buf);
    subs->count = 0;
}
