// ms_probe: container and stream facts without decoding anything.
#include "ms_internal.h"

#include <stdio.h>
#include <string.h>

#include <libavutil/pixdesc.h>

static void copy_name(char dst[MS_NAME_LEN], const char *src) { snprintf(dst, MS_NAME_LEN, "%s", src ? src : ""); }

static void describe_video(const AVStream *st, ms_media_info *out) {
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
}

static void describe_audio(const AVStream *st, ms_media_info *out) {
    const AVCodecParameters *par = st->codecpar;
    out->has_audio = 1;
    copy_name(out->audio_codec, ff.avcodec_get_name(par->codec_id));
    out->sample_rate = par->sample_rate;
    out->channels = par->ch_layout.nb_channels;
    out->audio_bit_rate = par->bit_rate;
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
        case AVMEDIA_TYPE_VIDEO: out->video_stream_count += !(st->disposition & AV_DISPOSITION_ATTACHED_PIC); break;
        case AVMEDIA_TYPE_AUDIO: out->audio_stream_count++; break;
        case AVMEDIA_TYPE_SUBTITLE: out->subtitle_stream_count++; break;
        default: break;
        }
    }
    int video = ms_find_video_stream(ifmt);
    if (video >= 0) describe_video(ifmt->streams[video], out);
    int audio = ms_find_audio_stream(ifmt, video);
    if (audio >= 0) describe_audio(ifmt->streams[audio], out);

    ff.avformat_close_input(&ifmt);
    return 0;
}
