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
    if (!(track->enc = ff.avcodec_alloc_context3(codec))) return AVERROR(ENOMEM);
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

/// Encodes one decoded cue shown from `start` (microseconds on the output's timeline) for `shown` milliseconds.
static int write_cue(ms_subtitles *subs, ms_subtitle_track *track, AVSubtitle *sub, int64_t start, int64_t shown,
                     AVFormatContext *ofmt, char *errbuf, size_t errlen) {
    sub->pts = start;
    sub->start_display_time = 0;
    sub->end_display_time = (uint32_t)shown;
    int size = ff.avcodec_encode_subtitle(track->enc, subs->buf, MS_SUBTITLE_MAX_BYTES, sub);
    if (size < 0) return ms_fail(errbuf, errlen, size, size, "subtitle encoding failed");
    int ret = ff.av_new_packet(subs->pkt, size);
    if (ret < 0) return ms_fail(errbuf, errlen, ret, ret, "subtitles");
    memcpy(subs->pkt->data, subs->buf, (size_t)size);
    AVRational tb = track->ost->time_base;
    int64_t pts = ff.av_rescale_q(start, AV_TIME_BASE_Q, tb);
    if (track->last_pts != AV_NOPTS_VALUE && pts <= track->last_pts) pts = track->last_pts + 1;  // MP4: increasing
    track->last_pts = pts;
    subs->pkt->pts = subs->pkt->dts = pts;
    subs->pkt->duration = ff.av_rescale_q(shown, (AVRational){1, 1000}, tb);
    subs->pkt->stream_index = track->ost->index;
    return ms_write_packet(ofmt, subs->pkt, errbuf, errlen);
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
    // The decoder gives the packet's time (microseconds) and the cue's display times relative to it (ms). A cue
    // whose end is unknown is written without a duration, and the muxer ends it at the next packet of any track:
    // SubRip, ASS, WebVTT and mov_text give every cue its end. MP4 text tracks cannot overlap: a cue that starts
    // while another is shown ends that one.
    if (sub.num_rects > 0 && sub.pts != AV_NOPTS_VALUE) {
        int64_t start = sub.pts + (int64_t)sub.start_display_time * 1000 - subs->offset;
        int64_t shown = sub.end_display_time > sub.start_display_time && sub.end_display_time != UINT32_MAX
                            ? (int64_t)(sub.end_display_time - sub.start_display_time)
                            : 0;
        if (start < 0) {  // begins before the output's zero: the part still shown is kept
            shown += start / 1000;
            start = 0;
        }
        if (shown > 0 || sub.end_display_time == 0 || sub.end_display_time == UINT32_MAX)
            ret = write_cue(subs, track, &sub, start, shown > 0 ? shown : 0, ofmt, errbuf, errlen);
    }
    ff.avsubtitle_free(&sub);
    return ret;
}

void ms_subtitles_free(ms_subtitles *subs) {
    for (int i = 0; i < subs->count; i++) free_track(&subs->tracks[i]);
    ff.av_freep(&subs->tracks);
    ff.av_packet_free(&subs->pkt);
    ff.av_freep(&subs->buf);
    subs->count = 0;
}
