// ms_transcode: options, dispatch to remux, and a transcode's course: the input, its decoders, the encoders of the
// video path (transcode_video.c) and the audio path (transcode_audio.c), the reading loop and the MP4.
#include "transcoder.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void ms_transcode_options_init(ms_transcode_options *opt) {
    if (!opt) return;
    memset(opt, 0, sizeof *opt);
    opt->mode = MS_MODE_TRANSCODE;
    opt->crf = -1;
    opt->faststart = 1;
}

int ms_transcode_fail(transcoder *t, int code, int cause, const char *what) {
    return ms_fail(t->errbuf, t->errlen, code, cause, "%s", what);
}

int ms_transcode_validate(const ms_transcode_options *o, char *errbuf, size_t errlen) {
    const char *bad = NULL;
    if (o->mode != MS_MODE_TRANSCODE && o->mode != MS_MODE_REMUX) bad = "mode";
    else if (o->crf < -1 || o->crf > 63) bad = "crf (-1...63)";
    else if (o->video_bit_rate < 0 || o->audio_bit_rate < 0) bad = "bit rate";
    else if (o->max_width < 0 || o->max_height < 0) bad = "maximum size";
    else if (!(o->max_fps >= 0) || isinf(o->max_fps)) bad = "max_fps";
    else if (o->audio_channels < 0 || o->audio_channels > 8) bad = "audio_channels (0...8)";
    else if (o->audio_sample_rate < 0 || o->audio_sample_rate > 384000) bad = "audio_sample_rate (0...384000)";
    else if (o->threads < 0 || o->threads > 256) bad = "threads";
    else if (o->streams < MS_STREAMS_ALL || o->streams > MS_STREAMS_AUDIO_AND_TEXT) bad = "streams";
    else if (o->mode == MS_MODE_REMUX && o->streams != MS_STREAMS_ALL) bad = "streams (remux copies all)";
    else if (!(o->range_start >= 0) || !(o->range_duration >= 0) || isinf(o->range_start) || isinf(o->range_duration))
        bad = "range (seconds >= 0)";
    else if ((o->range_start > 0 || o->range_duration > 0) && (o->mode != MS_MODE_TRANSCODE || o->streams != MS_STREAMS_VIDEO))
        bad = "range (only for MS_STREAMS_VIDEO transcodes)";
    else if (!(o->keyframe_interval >= 0) || isinf(o->keyframe_interval)) bad = "keyframe_interval (seconds >= 0)";
    else if (o->video_codec < MS_VIDEO_H264 || o->video_codec > MS_VIDEO_AV1) bad = "video_codec (ms_video_codec)";
    else if (o->preset < MS_PRESET_DEFAULT || o->preset > MS_PRESET_VERYSLOW) bad = "preset (ms_preset)";
    else if (o->closed_gop != 0 && o->closed_gop != 1) bad = "closed_gop (0 or 1)";
    return bad ? ms_fail(errbuf, errlen, MS_ERROR_INVALID_ARGUMENT, MS_ERROR_INVALID_ARGUMENT, "option %s", bad) : 0;
}

// MARK: - Encoding

int ms_transcode_encode(transcoder *t, AVCodecContext *enc, AVStream *ost, AVFrame *frame) {
    int ret = ff.avcodec_send_frame(enc, frame);
    if (ret < 0) return ms_transcode_fail(t, ret, ret, enc == t->venc ? "video encoding failed" : "audio encoding failed");
    for (;;) {
        ret = ff.avcodec_receive_packet(enc, t->out_pkt);
        if (ret == AVERROR(EAGAIN) || ret == AVERROR_EOF) return 0;
        if (ret < 0) return ms_transcode_fail(t, ret, ret, enc == t->venc ? "video encoding failed" : "audio encoding failed");
        if (enc == t->venc) {
            if (t->out_pkt->pts != AV_NOPTS_VALUE) t->out_pkt->pts -= t->preroll_shift;
            if (t->out_pkt->dts != AV_NOPTS_VALUE) t->out_pkt->dts -= t->preroll_shift;
            int roll = t->out_pkt->pts < 0 || t->out_pkt->pts >= t->range_end - t->range_start;
            if (t->gather_psnr) ms_encoder_psnr_packet(&t->psnr, t->out_pkt->pts, !roll);
            if (roll) {  // a range's pre/post-roll
                ff.av_packet_unref(t->out_pkt);
                continue;
            }
            if (t->out_pkt->duration <= 0) t->out_pkt->duration = t->frame_dur;  // libx264 leaves it 0
            // libx265 derives its decode times from the first frames' times: with fewer frames than its B-frame
            // delay (a one-frame video) they can be garbage, far out of MP4's range. A decode time is never after
            // its presentation, nor a minute before it.
            AVPacket *p = t->out_pkt;
            int64_t earliest = p->pts - ff.av_rescale_q(60, (AVRational){1, 1}, enc->time_base);
            if (p->pts != AV_NOPTS_VALUE && (p->dts == AV_NOPTS_VALUE || p->dts > p->pts || p->dts < earliest))
                p->dts = p->dts == AV_NOPTS_VALUE || p->dts > p->pts ? p->pts : earliest;
            t->video_frames++;
        }
        t->out_pkt->stream_index = ost->index;
        ff.av_packet_rescale_ts(t->out_pkt, enc->time_base, ost->time_base);
        if (t->out_pkt->pts != AV_NOPTS_VALUE) {
            double end = ms_seconds(t->out_pkt->pts + t->out_pkt->duration, ost->time_base);
            if (end > t->out_end) t->out_end = end;
        }
        ret = ms_write_packet(t->ofmt, t->out_pkt, t->errbuf, t->errlen);
        if (ret < 0) return ret;
    }
}

/// Every video frame is decoded (or a range's last one is handed on): the encoder drains its delayed frames. A
/// range with no decodable frame is an empty part (see ms_transcode), which the join leaves out.
static int finish_video(transcoder *t, const char *in) {
    int ranged = t->opt->range_start > 0 || t->opt->range_duration > 0;
    if (t->frames_sent == 0 && !ranged)
        return ms_fail(t->errbuf, t->errlen, MS_ERROR_NO_FRAMES, MS_ERROR_NO_FRAMES, "'%s'", in);
    if (t->opt->video_read) t->opt->video_read(t->opt->video_read_ctx);
    return ms_transcode_encode(t, t->venc, t->vost, NULL);
}

/// Subtitles go with a whole export, and with a segmented one's audio pass, from which the join copies them.
/// mov_text scales styled fonts to the picture the video encoder gets (or would get, in the audio pass: `picture`).
static int open_subtitles(transcoder *t, const AVStream *picture) {
    if (t->opt->streams != MS_STREAMS_ALL && t->opt->streams != MS_STREAMS_AUDIO_AND_TEXT) return 0;
    int width, height;
    if (t->venc) {
        width = t->venc->width;
        height = t->venc->height;
    } else {
        ms_transcode_encoded_size(t, picture, picture->codecpar->width, picture->codecpar->height, &width, &height);
    }
    return ms_subtitles_open(&t->subs, t->ifmt, t->ofmt, width, height, t->errbuf, t->errlen);
}

/// Opens the input, picks its streams (`*video`, `*audio`: their indexes, -1 for none), opens their decoders and
/// encoders and the MP4 with its streams, not yet started.
static int open_streams(transcoder *t, const char *in, const char *out, int *video, int *audio) {
    int ret = ms_open_input(in, &t->ifmt, t->errbuf, t->errlen);
    if (ret < 0) return ret;
    int v = ms_find_video_stream(t->ifmt);
    if (v < 0) return ms_fail(t->errbuf, t->errlen, MS_ERROR_NO_VIDEO, MS_ERROR_NO_VIDEO, "'%s'", in);
    int a = t->opt->streams == MS_STREAMS_VIDEO ? -1 : ms_find_audio_stream(t->ifmt, v);
    const AVStream *picture = t->ifmt->streams[v];  // the video, also where it is not written: subtitles scale to it
    if (t->opt->streams == MS_STREAMS_AUDIO || t->opt->streams == MS_STREAMS_AUDIO_AND_TEXT) {
        if (a < 0) return ms_fail(t->errbuf, t->errlen, MS_ERROR_NO_AUDIO, MS_ERROR_NO_AUDIO, "'%s'", in);
        v = -1;
    }
    *video = v;
    *audio = a;
    t->vist = v >= 0 ? t->ifmt->streams[v] : NULL;
    t->aist = a >= 0 ? t->ifmt->streams[a] : NULL;
    t->offset = t->ifmt->start_time != AV_NOPTS_VALUE ? t->ifmt->start_time : 0;
    t->progress->total = ms_media_duration(t->ifmt);
    if (!(t->out_pkt = ff.av_packet_alloc())) return ms_transcode_fail(t, AVERROR(ENOMEM), AVERROR(ENOMEM), "transcode");

    if ((ret = ms_new_mp4_muxer(out, &t->ofmt, t->errbuf, t->errlen)) < 0) return ret;
    if ((ret = ff.av_dict_copy(&t->ofmt->metadata, t->ifmt->metadata, 0)) < 0) return ms_transcode_fail(t, ret, ret, "metadata");
    if (t->vist && ((ret = ms_open_decoder(t->vist, t->opt->threads, &t->vdec, t->errbuf, t->errlen)) < 0 ||
                    (ret = ms_transcode_open_video(t)) < 0))
        return ret;
    if (t->aist && (ret = ms_transcode_open_audio(t)) < 0) return ret;
    return open_subtitles(t, picture);
}

/// Encodes what the reading thread decodes from streams `v` and `a` (and the subtitle tracks kept), then drains the
/// encoders and writes the trailer.
static int convert(transcoder *t, const char *in, int v, int a) {
    int ret;
    // Decoded frames come from the reading thread in decoding order, handled as one thread would handle them:
    // the output is the same, byte for byte.
    if ((ret = ms_reader_start(t, v, a, &t->reader)) < 0) return ret;
    for (;;) {
        ms_read next;
        if ((ret = ms_reader_next(t->reader, &next, t->errbuf, t->errlen)) < 0) return ret;
        if (next.kind == MS_READ_END) break;
        if (next.kind == MS_READ_VIDEO_END) {
            if ((ret = finish_video(t, in)) < 0) return ret;
            continue;
        }
        ret = next.kind == MS_READ_VIDEO   ? ms_transcode_video_frame(t, next.frame)
              : next.kind == MS_READ_AUDIO ? ms_transcode_audio_frame(t, next.frame)
                                           : ms_subtitles_write(&t->subs, ms_subtitles_track(&t->subs, next.packet->stream_index),
                                                                next.packet, t->ofmt, t->errbuf, t->errlen);
        ff.av_frame_free(&next.frame);
        ff.av_packet_free(&next.packet);
        if (ret < 0) return ret;
        if (t->subs.count &&
            (ret = ms_subtitles_advance(&t->subs, ms_microseconds(t->out_end), t->ofmt, t->errbuf, t->errlen)) < 0)
            return ret;
        if (t->range_done) {  // a range (video alone) is complete: the rest of the input is not needed
            if ((ret = finish_video(t, in)) < 0) return ret;
            break;
        }
    }
    ms_reader_stop(&t->reader, t);
    if (t->adec) {
        if ((ret = ms_transcode_flush_audio(t)) < 0) return ret;
        if ((ret = ms_transcode_encode(t, t->aenc, t->aost, NULL)) < 0) return ret;
    }
    if ((ret = ms_subtitles_finish(&t->subs, ms_microseconds(t->out_end), t->ofmt, t->errbuf, t->errlen)) < 0)
        return ret;
    return ms_write_trailer(t->ofmt, t->errbuf, t->errlen);
}

static int run(transcoder *t, const char *in, const char *out) {
    int v = -1, a = -1;
    int ret = open_streams(t, in, out, &v, &a);
    if (ret < 0) return ret;
    if (t->vist && (ret = ms_transcode_start_range(t)) < 0) return ret;
    if ((ret = ms_start_output(t->ofmt, in, out, t->opt->faststart, 0, t->errbuf, t->errlen)) < 0) return ret;
    if ((ret = ms_progress_report(t->progress, 0)) < 0) return ms_transcode_fail(t, ret, ret, "transcode");
    return convert(t, in, v, a);
}

void ms_transcode_report(const transcoder *t, ms_transcode_result *res) {
    int rotation = t->vist ? ms_stream_rotation(t->vist) : 0;
    int swap = rotation == 90 || rotation == 270;
    int width = t->venc ? t->venc->width : 0, height = t->venc ? t->venc->height : 0;
    *res = (ms_transcode_result){
        .duration = t->out_end,
        .width = width,
        .height = height,
        .display_width = swap ? height : width,
        .display_height = swap ? width : height,
        .rotation = rotation,
        .has_audio = t->aost != NULL,
        .video_frames = t->video_frames,
        .decode_errors = t->decode_errors,
        .decoded_seconds = t->decoded_seconds,
        .input_duration = ms_declared_duration(t->ifmt),
    };
}

void ms_transcoder_free(transcoder *t) {
    ms_reader_stop(&t->reader, t);  // first: it reads the input with the decoders
    ff.avformat_close_input(&t->ifmt);
    ff.avcodec_free_context(&t->vdec);
    ff.avcodec_free_context(&t->venc);
    ff.avcodec_free_context(&t->adec);
    ff.avcodec_free_context(&t->aenc);
    ms_subtitles_free(&t->subs);
    ms_tonemap_free(&t->tonemap);
    ms_tonemap_free(&t->tonemap_fields);
    ms_scaler_free(&t->scaler);
    ms_scaler_free(&t->deint_scaler);
    ff.av_frame_free(&t->deint);
    free(t->deint_line);
    ff.swr_free(&t->swr);
    ff.av_channel_layout_uninit(&t->swr_layout);
    if (t->fifo) ff.av_audio_fifo_free(t->fifo);
    if (t->conv) ff.av_freep(&t->conv[0]);
    ff.av_freep(&t->conv);
    ff.av_frame_free(&t->scaled);
    ff.av_frame_free(&t->aframe);
    ff.av_packet_free(&t->out_pkt);
}

static int transcode(const char *in, const char *out, const ms_transcode_options *opt, ms_progress *progress,
                     ms_transcode_result *res, char *errbuf, size_t errlen) {
    transcoder t = {.opt = opt, .progress = progress, .errbuf = errbuf, .errlen = errlen};
    // libx264's report lines are read only when its PSNR is asked for: other transcodes pay nothing for them.
    if (opt->encoder_psnr && opt->video_codec == MS_VIDEO_H264) ms_log_set_encoder_psnr(&t.psnr);
    int ret = run(&t, in, out);
    ms_log_set_encoder_psnr(NULL);
    if (ret >= 0 && opt->encoder_psnr) ms_encoder_psnr_finish(&t.psnr, opt->encoder_psnr);
    ms_encoder_psnr_free(&t.psnr);
    if (ret >= 0 && res) ms_transcode_report(&t, res);
    ms_close_output(&t.ofmt, out, ret < 0);
    if (ret >= 0 && res) res->size = ms_file_size(out);
    ms_transcoder_free(&t);
    return ret;
}

/// ms_transcode, or with `gate` ms_remux_streamed.
static int start(const char *in, const char *out, const ms_transcode_options *opt, ms_join_gate_fn gate,
                 void *gate_ctx, ms_progress_fn cb, void *ctx, ms_transcode_result *res, char *errbuf, size_t errlen) {
    int loaded = ms_begin(errbuf, errlen);
    if (loaded < 0) return loaded;
    ms_transcode_options defaults;
    if (!opt) {
        ms_transcode_options_init(&defaults);
        opt = &defaults;
    }
    if (!in || !out)
        return ms_fail(errbuf, errlen, MS_ERROR_INVALID_ARGUMENT, MS_ERROR_INVALID_ARGUMENT, "ms_transcode: path");
    int ret = ms_transcode_validate(opt, errbuf, errlen);
    if (ret < 0) return ret;
    if (res) memset(res, 0, sizeof *res);
    ms_progress progress;
    ms_progress_start(&progress, cb, ctx, 0);
    return opt->mode == MS_MODE_REMUX ? ms_remux(in, out, opt, gate, gate_ctx, &progress, res, errbuf, errlen)
                                      : transcode(in, out, opt, &progress, res, errbuf, errlen);
}

int ms_transcode(const char *in, const char *out, const ms_transcode_options *opt, ms_progress_fn cb, void *ctx,
                 ms_transcode_result *res, char *errbuf, size_t errlen) {
    return start(in, out, opt, NULL, NULL, cb, ctx, res, errbuf, errlen);
}

int ms_remux_streamed(const char *in, const char *out, const ms_transcode_options *opt, ms_join_gate_fn gate,
                      void *gate_ctx, ms_progress_fn cb, void *ctx, ms_transcode_result *res, char *errbuf,
                      size_t errlen) {
    if (!gate || !opt || opt->mode != MS_MODE_REMUX)
        return ms_fail(errbuf, errlen, MS_ERROR_INVALID_ARGUMENT, MS_ERROR_INVALID_ARGUMENT,
                       "ms_remux_streamed: a gate and MS_MODE_REMUX");
    return start(in, out, opt, gate, gate_ctx, cb, ctx, res, errbuf, errlen);
}
