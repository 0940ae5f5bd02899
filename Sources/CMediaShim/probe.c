// ms_probe: container and stream facts without decoding anything.
#include "ms_internal.h"

#include <stdio.h>
#include <string.h>

#include <libavutil/pixdesc.h>

static void copy_name(char dst[MS_NAME_LEN], const char *src) { snprintf(dst, MS_NAME_LEN, "%s", src ? src : ""); }

/// "4:2:0" and friends from the pixel format's chroma subsampling; RGB counts as 4:4:4.
static const char *chroma_name(const AVPixFmtDescriptor *desc) {
    if (!desc) return "";
    if (desc->nb_components < 3) return "4:0:0";
    if (desc->flags & AV_PIX_FMT_FLAG_RGB) return "4:4:4";
    int w = desc->log2_chroma_w, h = desc->log2_chroma_h;
    return w == 1 && h == 1 ? "4:2:0" : w == 1 && h == 0 ? "4:2:2" : w == 0 && h == 0 ? "4:4:4"
           : w == 2 && h == 0 ? "4:1:1" : w == 0 && h == 1 ? "4:4:0" : "";
}

/// Seconds from the file's start to the stream's first timestamp.
static double stream_start(const AVFormatContext *ifmt, const AVStream *st) {
    if (st->start_time == AV_NOPTS_VALUE || ifmt->start_time == AV_NOPTS_VALUE) return 0;
    double start = ms_seconds(st->start_time, st->time_base) - (double)ifmt->start_time / AV_TIME_BASE;
    return start > 0 ? start : 0;
}

static void describe_video(AVFormatContext *ifmt, AVStream *st, ms_media_info *out) {
    const AVCodecParameters *par = st->codecpar;
    out->has_video = 1;
    copy_name(out->video_codec, ff.avcodec_get_name(par->codec_id));
    out->width = par->width;
    out->height = par->height;
    out->rotation = ms_stream_rotation(st);
    int swap = out->rotation == 90 || out->rotation == 270;
    out->display_width = swap ? par->height : par->width;
    out->display_height = swap ? par->width : par->height;
    AVRational fps = st->avg_frame_rate.num > 0 && st->avg_frame_rate.den > 0 ? st->avg_frame_rate : st->r_frame_rate;
    out->fps = fps.num > 0 && fps.den > 0 ? av_q2d(fps) : 0;
    copy_name(out->pixel_format, ff.av_get_pix_fmt_name((enum AVPixelFormat)par->format));
    out->video_bit_rate = par->bit_rate;
    out->frame_count = st->nb_frames;
    out->video_duration = st->duration != AV_NOPTS_VALUE ? ms_seconds(st->duration, st->time_base) : 0;

    copy_name(out->video_profile, ff.avcodec_profile_name(par->codec_id, par->profile));
    out->video_level = par->level > 0 ? par->level : 0;
    if (par->codec_tag) {
        char tag[AV_FOURCC_MAX_STRING_SIZE];
        snprintf(out->video_tag, sizeof out->video_tag, "%s", ff.av_fourcc_make_string(tag, par->codec_tag));
    }
    const AVPixFmtDescriptor *desc = ff.av_pix_fmt_desc_get((enum AVPixelFormat)par->format);
    out->bit_depth = desc ? desc->comp[0].depth : 0;
    snprintf(out->chroma, sizeof out->chroma, "%s", chroma_name(desc));
    out->full_range = par->color_range == AVCOL_RANGE_JPEG || ms_full_range_format(par->format);
    out->interlaced = par->field_order == AV_FIELD_TT || par->field_order == AV_FIELD_BB ||
                      par->field_order == AV_FIELD_TB || par->field_order == AV_FIELD_BT;
    AVRational sar = ff.av_guess_sample_aspect_ratio(ifmt, st, NULL);
    out->sar_num = sar.num > 0 && sar.den > 0 ? sar.num : 1;
    out->sar_den = sar.num > 0 && sar.den > 0 ? sar.den : 1;
    out->video_start = stream_start(ifmt, st);
    const char *format = ifmt->iformat->name;
    out->still_image = strcmp(format, "image2") == 0 || strstr(format, "_pipe") != NULL;  // png_pipe, jpeg_pipe...
    if (par->color_trc != AVCOL_TRC_UNSPECIFIED) copy_name(out->color_transfer, ff.av_color_transfer_name(par->color_trc));
    if (par->color_primaries != AVCOL_PRI_UNSPECIFIED)
        copy_name(out->color_primaries, ff.av_color_primaries_name(par->color_primaries));
}

static void describe_audio(const AVFormatContext *ifmt, const AVStream *st, ms_media_info *out) {
    const AVCodecParameters *par = st->codecpar;
    out->has_audio = 1;
    copy_name(out->audio_codec, ff.avcodec_get_name(par->codec_id));
    out->sample_rate = par->sample_rate;
    out->channels = par->ch_layout.nb_channels;
    out->audio_bit_rate = par->bit_rate;
    copy_name(out->audio_profile, ff.avcodec_profile_name(par->codec_id, par->profile));
    out->audio_start = stream_start(ifmt, st);
    out->audio_duration = st->duration != AV_NOPTS_VALUE ? ms_seconds(st->duration, st->time_base) : 0;
}

/// The file's duration, read from its last packets when it starts late. Some muxers write a duration that counts
/// the start offset (FFmpeg's Matroska muxer with `-output_ts_offset`: 7 s for 2 s starting at 5 s), and a
/// segmented export planned over it would look for frames past the end. The last keyframe before the stated end
/// is sought through the video's index and the packets of the picked video and audio streams from there to the
/// end of the file give the real end, which is kept only when it is the earlier one. Left as stated: durations
/// FFmpeg already read from the packets (MPEG-TS and -PS), files without video or without an index to seek by
/// (a seek would read the whole file), and tails longer than `MS_PROBE_TAIL_BYTES`.
#define MS_PROBE_TAIL_BYTES (64 << 20)
static double measured_duration(AVFormatContext *ifmt, int video, int audio, double stated) {
    if (ifmt->start_time == AV_NOPTS_VALUE || ifmt->start_time <= 0 || stated <= 0 || video < 0 ||
        ifmt->duration_estimation_method == AVFMT_DURATION_FROM_PTS ||
        ff.avformat_index_get_entries_count(ifmt->streams[video]) <= 0)
        return stated;
    int64_t end = ifmt->start_time + (int64_t)(stated * AV_TIME_BASE);
    if (ff.avformat_seek_file(ifmt, -1, INT64_MIN, end, end, 0) < 0) return stated;
    AVPacket *pkt = ff.av_packet_alloc();
    if (!pkt) return stated;
    double last = -1;
    int64_t bytes = 0;
    int ret = 0;
    while (bytes < MS_PROBE_TAIL_BYTES && (ret = ff.av_read_frame(ifmt, pkt)) >= 0) {
        bytes += pkt->size;
        int64_t ts = pkt->pts != AV_NOPTS_VALUE ? pkt->pts : pkt->dts;
        if (ts != AV_NOPTS_VALUE && (pkt->stream_index == video || pkt->stream_index == audio)) {
            double packet_end =
                ms_seconds(ts + (pkt->duration > 0 ? pkt->duration : 0), ifmt->streams[pkt->stream_index]->time_base);
            if (packet_end > last) last = packet_end;
        }
        ff.av_packet_unref(pkt);
    }
    ff.av_packet_free(&pkt);
    if (ret != AVERROR_EOF || last < 0) return stated;
    double measured = last - (double)ifmt->start_time / AV_TIME_BASE;
    return measured > 0 && measured < stated ? measured : stated;
}

int ms_probe(const char *path, ms_media_info *out, char *errbuf, size_t errlen) {
    int loaded = ms_begin(errbuf, errlen);
    if (loaded < 0) return loaded;
    if (!path || !out) return ms_fail(errbuf, errlen, MS_ERROR_INVALID_ARGUMENT, MS_ERROR_INVALID_ARGUMENT, "ms_probe");
    memset(out, 0, sizeof *out);
    AVFormatContext *ifmt = NULL;
    int ret = ms_open_input(path, &ifmt, errbuf, errlen);
    if (ret < 0) return ret;

    copy_name(out->format_name, ifmt->iformat->name);
    out->duration = ifmt->duration != AV_NOPTS_VALUE ? (double)ifmt->duration / AV_TIME_BASE : 0;
    int64_t size = ifmt->pb ? ff.avio_size(ifmt->pb) : -1;
    out->size = size > 0 ? size : ms_file_size(path);
    out->bit_rate = ifmt->bit_rate;
    out->stream_count = (int)ifmt->nb_streams;
    for (unsigned i = 0; i < ifmt->nb_streams; i++) {
        const AVStream *st = ifmt->streams[i];
        switch (st->codecpar->codec_type) {
        case AVMEDIA_TYPE_VIDEO:
            out->video_stream_count += !(st->disposition & AV_DISPOSITION_ATTACHED_PIC);
            out->attached_picture_count += !!(st->disposition & AV_DISPOSITION_ATTACHED_PIC);
            break;
        case AVMEDIA_TYPE_AUDIO: out->audio_stream_count++; break;
        case AVMEDIA_TYPE_SUBTITLE:
            out->subtitle_stream_count++;
            out->text_subtitle_count += ms_text_subtitle(st->codecpar);
            break;
        case AVMEDIA_TYPE_DATA:
        case AVMEDIA_TYPE_ATTACHMENT: out->data_stream_count++; break;
        default: break;
        }
    }
    int video = ms_find_video_stream(ifmt);
    if (video >= 0) describe_video(ifmt, ifmt->streams[video], out);
    int audio = ms_find_audio_stream(ifmt, video);
    if (audio >= 0) describe_audio(ifmt, ifmt->streams[audio], out);
    out->duration = measured_duration(ifmt, video, audio, out->duration);

    ff.avformat_close_input(&ifmt);
    return 0;
}
