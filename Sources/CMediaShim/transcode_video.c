// ms_transcode's video path: the encoder and the output's video stream, a range's pre- and post-roll, and each
// decoded frame's timing, forced keyframes, tone mapping, deinterlacing and scaling on its way to the encoder.
#include "transcoder.h"

#include <errno.h>
#include <limits.h>
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

// MARK: - The encoder

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

void ms_transcode_encoded_size(const transcoder *t, const AVStream *ist, int width, int height, int *out_w,
                               int *out_h) {
    int rotation = ms_stream_rotation(ist);
    int swap = rotation == 90 || rotation == 270;
    int square_w, square_h;
    square_pixels(width, height, ff.av_guess_sample_aspect_ratio(t->ifmt, (AVStream *)ist, NULL), &square_w,
                  &square_h);
    ms_fit_size(square_w, square_h, swap ? t->opt->max_height : t->opt->max_width,
                swap ? t->opt->max_width : t->opt->max_height, out_w, out_h);
}

/// The frame rate the encoder is told: the stream's, capped at max_fps; 30 when unknown.
static AVRational encoder_rate(const transcoder *t) {
    AVRational fps = ff.av_guess_frame_rate(t->ifmt, (AVStream *)t->vist, NULL);
    if (t->opt->max_fps > 0 && (fps.num <= 0 || av_q2d(fps) > t->opt->max_fps)) fps = ff.av_d2q(t->opt->max_fps, 100000);
    if (fps.num <= 0 || fps.den <= 0) fps = (AVRational){30, 1};  // unknown: x264 would take 1/time_base
    return fps;
}

/// What the encoder gets but its own options: the picture (size, format, timing, colour), threads and rate
/// control; and whether the source is HDR or interlaced.
static void describe_picture(transcoder *t, AVCodecContext *enc, AVRational fps) {
    const AVStream *ist = t->vist;
    const AVCodecContext *dec = t->vdec;
    ms_transcode_encoded_size(t, ist, dec->width, dec->height, &enc->width, &enc->height);
    enc->pix_fmt = AV_PIX_FMT_YUV420P;  // 8-bit 4:2:0: what every player decodes
    enc->time_base = ist->time_base;  // source timestamps are kept as they are
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
    if (t->opt->encoder_psnr && t->opt->video_codec == MS_VIDEO_H264) {  // libx264 alone reports it (encoder_psnr.c)
        enc->flags |= AV_CODEC_FLAG_PSNR;
        t->gather_psnr = 1;
        t->psnr.width = enc->width;
        t->psnr.height = enc->height;
    }
    if (t->opt->crf >= 0) ff.av_opt_set_double(enc->priv_data, "crf", t->opt->crf, 0);
    if (t->opt->video_bit_rate > 0 && t->opt->crf >= 0) {  // CRF with a ceiling
        enc->rc_max_rate = t->opt->video_bit_rate;
        enc->rc_buffer_size = (int)FFMIN(2 * t->opt->video_bit_rate, INT_MAX);
    } else if (t->opt->video_bit_rate > 0) {
        enc->bit_rate = t->opt->video_bit_rate;
    }
}

/// The output's video stream for the opened encoder, and the state its frames start from.
static int open_stream(transcoder *t, const AVCodecContext *enc, AVRational fps) {
    const AVStream *ist = t->vist;
    int ret;
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

int ms_transcode_open_video(transcoder *t) {
    int ret;
    const char *name = ms_video_encoder(t->opt->video_codec);
    const AVCodec *codec = ff.avcodec_find_encoder_by_name(name);
    if (!codec || codec->type != AVMEDIA_TYPE_VIDEO)
        return ms_fail(t->errbuf, t->errlen, MS_ERROR_UNSUPPORTED_CODEC, MS_ERROR_UNSUPPORTED_CODEC,
                       "video encoder '%s' (not in this FFmpeg build)", name);
    AVCodecContext *enc = t->venc = ms_new_codec_context(codec);
    if (!enc) return ms_transcode_fail(t, AVERROR(ENOMEM), AVERROR(ENOMEM), "video encoder");
    if (t->vdec->width <= 0 || t->vdec->height <= 0)
        return ms_transcode_fail(t, MS_ERROR_NOT_MEDIA, MS_ERROR_NOT_MEDIA, "the video stream has no picture size");
    AVRational fps = encoder_rate(t);
    describe_picture(t, enc, fps);
    ms_log_clear();  // a refused option's message or the encoder's failure to open carries its own cause
    if ((ret = ms_set_encoder_options(enc, t->opt, t->errbuf, t->errlen)) < 0) return ret;
    if ((ret = ff.avcodec_open2(enc, codec, NULL)) < 0)
        return ms_fail(t->errbuf, t->errlen, ret == AVERROR(EINVAL) ? MS_ERROR_INVALID_ARGUMENT : ret, ret,
                       "cannot open the %s encoder", name);
    return open_stream(t, enc, fps);
}

// MARK: - A range

int ms_transcode_start_range(transcoder *t) {
    if (!(t->opt->range_start > 0 || t->opt->range_duration > 0)) return 0;
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
    int ret;
    if (start > 0 && (ret = ff.avformat_seek_file(t->ifmt, -1, INT64_MIN, t->offset + seek, t->offset + seek, 0)) < 0)
        return ms_transcode_fail(t, ret, ret, "cannot seek to the start of the range");
    return 0;
}

// MARK: - Frames

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

/// The timestamps of the decoded `f`: `*pts_out` in the input stream's time base from the input's start,
/// `*out_pts_out` on the output's timeline. Returns 1 when the frame is encoded, 0 when it is not (before a range's
/// pre-roll, past its post-roll, over the frame rate cap, a repeated timestamp), or a failure (cancelled).
static int frame_times(transcoder *t, const AVFrame *f, int64_t *pts_out, int64_t *out_pts_out) {
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
    *pts_out = pts;
    *out_pts_out = out_pts;
    return 1;
}

/// Whether the frame at `pts` (`out_pts` on the output's timeline) is forced to be a keyframe.
static int forced_key(transcoder *t, int64_t pts, int64_t out_pts) {
    AVRational tb = t->venc->time_base;
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
    return key;
}

/// Timestamps, range, frame rate cap, scaling, then the encoder. Takes `f` (decoded) as borrowed.
int ms_transcode_video_frame(transcoder *t, AVFrame *f) {
    int64_t pts = 0, out_pts = 0;
    int ret = frame_times(t, f, &pts, &out_pts);
    if (ret <= 0) return ret;
    int key = forced_key(t, pts, out_pts);

    AVFrame *in = NULL;
    ret = 0;
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
