// ms_transcode: options, dispatch to remux, and the decode → scale/resample → encode → MP4 path.
#include "transcoder.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <libavutil/opt.h>

// A range is encoded with a few frames either side that are then dropped, so that x264 meets the range's edges as
// it meets them inside one unsegmented encode: the frames before give its rate control a history (the first IDR of
// an encode gets its quantizer from its own complexity, a later one from the P-frames before it, so a part that
// starts cold has a visibly worse first frame), and those after keep its lookahead from seeing the end of the
// stream early (which lowers the quality of the part's last frames). Measured on a 640x360 veryfast encode in
// 20 s parts: the worst frame near a join was 2.6 dB below the same frame unsegmented, 0.3 dB with these.
// Still, the part's first GOP starts without what x264's macroblock tree learnt from the frames before: on a 600 s
// 640x360 veryfast encode in 20 s parts the B-frame after one join's IDR came out 1.03 dB below the same frame
// unsegmented. The range's first frames get a quantizer 1 lower: worst 0.68 dB (the last frame before a join),
// for 0.07 % more bytes (0.67 % over the unsegmented file instead of 0.60 %).
enum { RANGE_PREROLL_FRAMES = 8, RANGE_POSTROLL_FRAMES = 4, RANGE_BOOST_FRAMES = 4, RANGE_BOOST_QP = 1 };

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
            if (t->out_pkt->pts < 0 || t->out_pkt->pts >= t->range_end - t->range_start) {  // a range's pre/post-roll
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

// MARK: - Video

/// The stored size that shows the picture with square pixels: the width grows for wide pixels, the height
/// for tall ones, so no detail is lost.
static void square_pixels(int width, int height, AVRational sar, int *out_w, int *out_h) {
    *out_w = width;
    *out_h = height;
    if (sar.num <= 0 || sar.den <= 0 || sar.num == sar.den) return;
    if (sar.num > sar.den) *out_w = (int)FFMIN((int64_t)width * sar.num / sar.den, 16384);
    else *out_h = (int)FFMIN((int64_t)height * sar.den / sar.num, 16384);
}

/// An 8-bit 4:2:0 limited-range frame of this size for `*frame` (kept while the size stays).
static int picture_frame(AVFrame **frame, int width, int height) {
    if (*frame && (*frame)->width == width && (*frame)->height == height) return 0;
    ff.av_frame_free(frame);
    if (!(*frame = ff.av_frame_alloc())) return AVERROR(ENOMEM);
    (*frame)->format = AV_PIX_FMT_YUV420P;
    (*frame)->color_range = AVCOL_RANGE_MPEG;
    (*frame)->width = width;
    (*frame)->height = height;
    return ff.av_frame_get_buffer(*frame, 0);
}

/// The picture size the encoder gets for `ist`, stored at width × height: square pixels, within max_width and
/// max_height as displayed.
static void encoded_size(const transcoder *t, const AVStream *ist, int width, int height, int *out_w, int *out_h) {
    int rotation = ms_stream_rotation(ist);
    int swap = rotation == 90 || rotation == 270;
    int square_w, square_h;
    square_pixels(width, height, ff.av_guess_sample_aspect_ratio(t->ifmt, (AVStream *)ist, NULL), &square_w,
                  &square_h);
    ms_fit_size(square_w, square_h, swap ? t->opt->max_height : t->opt->max_width,
                swap ? t->opt->max_width : t->opt->max_height, out_w, out_h);
}

int ms_transcode_open_video(transcoder *t) {
    const AVStream *ist = t->vist;
    int ret;
    const char *name = ms_video_encoder(t->opt->video_codec);
    const AVCodec *codec = ff.avcodec_find_encoder_by_name(name);
    if (!codec || codec->type != AVMEDIA_TYPE_VIDEO)
        return ms_fail(t->errbuf, t->errlen, MS_ERROR_UNSUPPORTED_CODEC, MS_ERROR_UNSUPPORTED_CODEC,
                       "video encoder '%s' (not in this FFmpeg build)", name);
    AVCodecContext *dec = t->vdec, *enc = t->venc = ms_new_codec_context(codec);
    if (!enc) return ms_transcode_fail(t, AVERROR(ENOMEM), AVERROR(ENOMEM), "video encoder");
    if (dec->width <= 0 || dec->height <= 0)
        return ms_transcode_fail(t, MS_ERROR_NOT_MEDIA, MS_ERROR_NOT_MEDIA, "the video stream has no picture size");

    encoded_size(t, ist, dec->width, dec->height, &enc->width, &enc->height);
    enc->pix_fmt = AV_PIX_FMT_YUV420P;  // 8-bit 4:2:0: what every player decodes
    enc->time_base = ist->time_base;  // source timestamps are kept as they are
    AVRational fps = ff.av_guess_frame_rate(t->ifmt, (AVStream *)ist, NULL);
    if (t->opt->max_fps > 0 && (fps.num <= 0 || av_q2d(fps) > t->opt->max_fps)) fps = ff.av_d2q(t->opt->max_fps, 100000);
    if (fps.num <= 0 || fps.den <= 0) fps = (AVRational){30, 1};  // unknown: x264 would take 1/time_base
    enc->framerate = fps;  // x264's rate control needs the real rate
    enc->sample_aspect_ratio = (AVRational){1, 1};
    enc->color_primaries = dec->color_primaries;
    enc->color_trc = dec->color_trc;
    enc->colorspace = dec->colorspace;
    // The output is 8-bit SDR whatever the profile: an HDR picture is tone-mapped, and tagged as what it then is.
    t->hdr = ms_hdr_transfer(ist->codecpar->color_trc) || ms_hdr_transfer(dec->color_trc);
    if (t->hdr) {
        enc->color_primaries = AVCOL_PRI_BT709;
        enc->color_trc = AVCOL_TRC_BT709;
        enc->colorspace = AVCOL_SPC_BT709;
        t->tonemap.threads = t->tonemap_fields.threads = t->opt->threads;
        ms_tonemap_source(&t->tonemap, ist->codecpar);
        ms_tonemap_source(&t->tonemap_fields, ist->codecpar);
    }
    enc->color_range = AVCOL_RANGE_MPEG;  // full-range sources are converted: not every player honours the flag
    enc->field_order = AV_FIELD_PROGRESSIVE;
    enc->thread_count = t->opt->threads;
    t->interlaced = ist->codecpar->field_order == AV_FIELD_TT || ist->codecpar->field_order == AV_FIELD_BB ||
                    ist->codecpar->field_order == AV_FIELD_TB || ist->codecpar->field_order == AV_FIELD_BT;
    if (t->ofmt->oformat->flags & AVFMT_GLOBALHEADER) enc->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    if (t->opt->crf >= 0) ff.av_opt_set_double(enc->priv_data, "crf", t->opt->crf, 0);
    if (t->opt->video_bit_rate > 0 && t->opt->crf >= 0) {  // CRF with a ceiling
        enc->rc_max_rate = t->opt->video_bit_rate;
        enc->rc_buffer_size = (int)FFMIN(2 * t->opt->video_bit_rate, INT_MAX);
    } else if (t->opt->video_bit_rate > 0) {
        enc->bit_rate = t->opt->video_bit_rate;
    }
    ms_log_clear();  // a refused option's message or the encoder's failure to open carries its own cause
    if ((ret = ms_set_encoder_options(enc, t->opt, t->errbuf, t->errlen)) < 0) return ret;
    if ((ret = ff.avcodec_open2(enc, codec, NULL)) < 0)
        return ms_fail(t->errbuf, t->errlen, ret == AVERROR(EINVAL) ? MS_ERROR_INVALID_ARGUMENT : ret, ret,
                       "cannot open the %s encoder", name);

    t->frame_dur = ff.av_rescale_q(1, av_inv_q(fps), enc->time_base);
    if (t->frame_dur < 1) t->frame_dur = 1;
    t->last_pts = AV_NOPTS_VALUE;
    t->last_slot = INT64_MIN;
    if (!(t->vost = ff.avformat_new_stream(t->ofmt, NULL))) return ms_transcode_fail(t, AVERROR(ENOMEM), AVERROR(ENOMEM), "stream");
    if ((ret = ff.avcodec_parameters_from_context(t->vost->codecpar, enc)) < 0 ||
        (ret = ms_copy_display_matrix(ist, t->vost)) < 0 || (ret = ms_copy_stream_metadata(ist, t->vost)) < 0)
        return ms_transcode_fail(t, ret, ret, "video stream");
    ms_set_mp4_tag(t->vost->codecpar);
    t->vost->time_base = enc->time_base;
    t->vost->avg_frame_rate = enc->framerate;
    t->vost->sample_aspect_ratio = enc->sample_aspect_ratio;
    t->range_end = INT64_MAX;
    ret = picture_frame(&t->scaled, enc->width, enc->height);
    return ret < 0 ? ms_transcode_fail(t, ret, ret, "frame") : 0;
}

/// Deinterlaces by a linear blend: every line but the first and last becomes (above + 2 × itself + below) / 4,
/// which mixes the two fields into one picture without combing, at the source's frame rate.
static void blend_fields(AVFrame *f, uint8_t *line) {
    for (int p = 0; p < 3; p++) {
        int w = p ? AV_CEIL_RSHIFT(f->width, 1) : f->width;
        int h = p ? AV_CEIL_RSHIFT(f->height, 1) : f->height;
        if (h < 3) continue;
        uint8_t *plane = f->data[p];
        memcpy(line, plane, (size_t)w);  // the line above, as it was
        for (int y = 1; y < h - 1; y++) {
            uint8_t *cur = plane + (ptrdiff_t)y * f->linesize[p], *below = cur + f->linesize[p];
            for (int x = 0; x < w; x++) {
                uint8_t c = cur[x];
                cur[x] = (uint8_t)((line[x] + 2 * c + below[x] + 2) >> 2);
                line[x] = c;
            }
        }
    }
}

/// Whether `f` is deinterlaced: the stream says all its frames are interlaced, or the frame says it is.
static int interlaced_picture(const transcoder *t, const AVFrame *f) { return t->interlaced || MS_FRAME_INTERLACED(f); }

/// The picture the encoder gets for the decoded `f`: deinterlaced when interlaced, then scaled and
/// converted to the encoder's size and 8-bit 4:2:0 limited range when it is not that already.
static int encoder_picture(transcoder *t, AVFrame *f, AVFrame **picture) {
    AVFrame *in = f;
    int ret;
    if (interlaced_picture(t, f)) {
        if ((ret = picture_frame(&t->deint, f->width, f->height)) < 0) return ret;
        if (t->deint_line_size < f->width) {
            uint8_t *line = realloc(t->deint_line, (size_t)f->width);
            if (!line) return AVERROR(ENOMEM);
            t->deint_line = line;
            t->deint_line_size = f->width;
        }
        if ((ret = ms_scale(&t->deint_scaler, f, t->deint)) < 0) return ret;
        blend_fields(t->deint, t->deint_line);
        in = t->deint;
    }
    int full = in->color_range == AVCOL_RANGE_JPEG || ms_full_range_format(in->format);
    if (in->format != AV_PIX_FMT_YUV420P || full || in->width != t->venc->width || in->height != t->venc->height) {
        if ((ret = ms_scale(&t->scaler, in, t->scaled)) < 0) return ret;
        in = t->scaled;
    }
    *picture = in;
    return 0;
}

/// Timestamps, range, frame rate cap, scaling, then the encoder. Takes `f` (decoded) as borrowed.
int ms_transcode_video_frame(transcoder *t, AVFrame *f) {
    AVRational tb = t->venc->time_base;
    // pts from here: the input's time base, from the input's start.
    int64_t pts = f->best_effort_timestamp;
    pts = pts == AV_NOPTS_VALUE ? t->range_start + (t->last_pts == AV_NOPTS_VALUE ? 0 : t->last_pts + t->frame_dur)
                                : pts - ff.av_rescale_q(t->offset, AV_TIME_BASE_Q, tb);
    if (pts < t->preroll_from) return 0;  // decoded after the seek only as a reference for later frames
    if (pts >= t->range_end && t->postroll_left == 0) {
        t->range_done = 1;
        return 0;
    }
    if (pts >= t->range_start && pts < t->range_end) {
        int64_t dur = MS_FRAME_DURATION(f) > 0 ? MS_FRAME_DURATION(f) : t->frame_dur;
        double end = ms_seconds(pts + dur, tb);
        if (end > t->decoded_seconds) t->decoded_seconds = end;
        int ret = ms_progress_report(t->progress, ms_seconds(pts, tb));
        if (ret < 0) return ms_transcode_fail(t, ret, ret, "transcode");
    }

    if (t->opt->max_fps > 0) {
        // One frame per 1/max_fps slot of the input's timeline (so the parts of a segmented encode agree).
        // A frame up to a quarter slot early counts for the next slot, so a jittery 30 fps source capped
        // at 30 keeps every frame.
        double x = ms_seconds(pts, tb) * t->opt->max_fps + 0.25;
        int64_t slot = (int64_t)x;
        if (slot > x) slot--;  // floor, without libm
        if (slot <= t->last_slot) return 0;
        t->last_slot = slot;
    }
    int64_t out_pts = pts - t->range_start;  // the output's timeline
    // A video that starts after the audio (or a data stream) shows its first picture from 0: both tracks start
    // together, and the rest stays where it was.
    if (t->last_pts == AV_NOPTS_VALUE && t->range_start == 0 && out_pts > 0) out_pts = 0;
    if (t->last_pts != AV_NOPTS_VALUE && out_pts <= t->last_pts) return 0;  // repeated timestamp: MP4 can't hold it
    t->last_pts = out_pts;
    int key = 0;  // the range's first frame and its post-roll's first are IDR frames: the cuts reference nothing
    if (pts >= t->range_end) {
        key = t->postroll_left-- == RANGE_POSTROLL_FRAMES;
    } else if (pts >= t->range_start) {
        key = t->preroll_from < t->range_start && !t->range_entered;
        t->range_entered = 1;
    }
    if (t->opt->keyframe_interval > 0 && pts >= t->range_start && pts < t->range_end) {
        // On the output's timeline, so renditions encoded apart agree; a microsecond of slack for rounding.
        double at = ms_seconds(out_pts, tb) + 1e-6;
        if (at >= t->next_key) {
            key = 1;
            t->next_key = (double)((int64_t)(at / t->opt->keyframe_interval) + 1) * t->opt->keyframe_interval;
        }
    }

    AVFrame *in = NULL;
    int ret = 0;
    if (t->hdr && interlaced_picture(t, f))
        ret = ms_tonemap_frame(&t->tonemap_fields, f, 0, 0, &f, t->errbuf, t->errlen);
    else if (t->hdr)
        ret = ms_tonemap_frame(&t->tonemap, f, t->venc->width, t->venc->height, &f, t->errbuf, t->errlen);
    if (ret < 0) return ret;
    ret = encoder_picture(t, f, &in);
    if (ret < 0) return ms_transcode_fail(t, ret, ret, "cannot convert the picture");
    in->pts = out_pts + t->preroll_shift;
    in->pict_type = key ? AV_PICTURE_TYPE_I : AV_PICTURE_TYPE_NONE;  // else the encoder copies the source's types
    t->frames_sent++;
    // The first frames of a range that has a pre-roll start a GOP cold: a quantizer lower for them (a region of
    // interest over the whole picture; x264 adds it to its adaptive quantization).
    int boost = pts >= t->range_start && pts < t->range_end && t->boost_left > 0;
    t->boost_left -= boost;
    if (boost) {
        AVFrameSideData *sd = ff.av_frame_new_side_data(in, AV_FRAME_DATA_REGIONS_OF_INTEREST, sizeof(AVRegionOfInterest));
        if (!sd) return ms_transcode_fail(t, AVERROR(ENOMEM), AVERROR(ENOMEM), "cannot attach the region of interest");
        *(AVRegionOfInterest *)sd->data = (AVRegionOfInterest){.self_size = sizeof(AVRegionOfInterest),
                                                               .bottom = in->height,
                                                               .right = in->width,
                                                               .qoffset = {-RANGE_BOOST_QP, 51}};
    }
    ret = ms_transcode_encode(t, t->venc, t->vost, in);
    if (boost) ff.av_frame_remove_side_data(in, AV_FRAME_DATA_REGIONS_OF_INTEREST);
    return ret;
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

static int run(transcoder *t, const char *in, const char *out) {
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
    t->vist = v >= 0 ? t->ifmt->streams[v] : NULL;
    t->aist = a >= 0 ? t->ifmt->streams[a] : NULL;
    t->offset = t->ifmt->start_time != AV_NOPTS_VALUE ? t->ifmt->start_time : 0;
    t->progress->total = t->ifmt->duration != AV_NOPTS_VALUE ? (double)t->ifmt->duration / AV_TIME_BASE : 0;
    if (!(t->out_pkt = ff.av_packet_alloc())) return ms_transcode_fail(t, AVERROR(ENOMEM), AVERROR(ENOMEM), "transcode");

    if ((ret = ms_new_mp4_muxer(out, &t->ofmt, t->errbuf, t->errlen)) < 0) return ret;
    if ((ret = ff.av_dict_copy(&t->ofmt->metadata, t->ifmt->metadata, 0)) < 0) return ms_transcode_fail(t, ret, ret, "metadata");
    if (t->vist && ((ret = ms_open_decoder(t->vist, t->opt->threads, &t->vdec, t->errbuf, t->errlen)) < 0 ||
                    (ret = ms_transcode_open_video(t)) < 0))
        return ret;
    if (t->aist && (ret = ms_transcode_open_audio(t)) < 0) return ret;
    // Subtitles go with a whole export, and with a segmented one's audio pass, from which the join copies them.
    // mov_text scales styled fonts to the picture the video encoder gets (or would get, in the audio pass).
    if (t->opt->streams == MS_STREAMS_ALL || t->opt->streams == MS_STREAMS_AUDIO_AND_TEXT) {
        int width, height;
        if (t->venc) {
            width = t->venc->width;
            height = t->venc->height;
        } else {
            encoded_size(t, picture, picture->codecpar->width, picture->codecpar->height, &width, &height);
        }
        if ((ret = ms_subtitles_open(&t->subs, t->ifmt, t->ofmt, width, height, t->errbuf, t->errlen)) < 0) return ret;
    }
    if (t->vist) {
        if (t->opt->range_start > 0 || t->opt->range_duration > 0) {
            int64_t start = ms_microseconds(t->opt->range_start);
            t->range_start = ff.av_rescale_q(start, AV_TIME_BASE_Q, t->vist->time_base);
            if (t->opt->range_duration > 0)
                t->range_end = ff.av_rescale_q(ms_microseconds(t->opt->range_start + t->opt->range_duration),
                                               AV_TIME_BASE_Q, t->vist->time_base);
            int rolls = ms_encoder_takes_rolls(t->opt);
            t->postroll_left = rolls && t->opt->range_duration > 0 ? RANGE_POSTROLL_FRAMES : 0;
            t->preroll_from = rolls ? FFMAX(0, t->range_start - RANGE_PREROLL_FRAMES * t->frame_dur) : t->range_start;
            int boost = ms_encoder_takes_boost(t->opt) && t->preroll_from < t->range_start;
            t->boost_left = boost ? RANGE_BOOST_FRAMES : 0;
            t->preroll_shift = t->range_start - t->preroll_from;
            // To the last keyframe at or before the pre-roll: its frames up to there are decoded, not encoded.
            int64_t seek = ff.av_rescale_q(t->preroll_from, t->vist->time_base, AV_TIME_BASE_Q);
            if (start > 0 &&
                (ret = ff.avformat_seek_file(t->ifmt, -1, INT64_MIN, t->offset + seek, t->offset + seek, 0)) < 0)
                return ms_transcode_fail(t, ret, ret, "cannot seek to the start of the range");
        }
    }
    if ((ret = ms_start_output(t->ofmt, in, out, t->opt->faststart, 0, t->errbuf, t->errlen)) < 0) return ret;
    if ((ret = ms_progress_report(t->progress, 0)) < 0) return ms_transcode_fail(t, ret, ret, "transcode");

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
        .input_duration = t->progress->total,
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
    int ret = run(&t, in, out);
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
