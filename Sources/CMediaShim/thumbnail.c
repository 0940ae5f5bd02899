// ms_thumbnail: seek, decode the frame shown at a time, turn it upright, scale, write one JPEG.
#include "ms_internal.h"

#include <errno.h>
#include <math.h>

#include <libswscale/swscale.h>

typedef struct thumbnailer {
    const char *in;
    char *errbuf;
    size_t errlen;
    AVFormatContext *ifmt;
    const AVStream *st;
    AVCodecContext *dec, *enc;
    AVPacket *pkt;
    AVFrame *frame, *best;  // best: the frame kept so far
    AVFrame *scaled, *rotated;
    ms_scaler scaler;
    ms_tonemap tonemap;     // an HDR picture is tone-mapped first, as an export's
    AVIOContext *out;
    int out_opened;
} thumbnailer;

static int fail(thumbnailer *t, int code, const char *what) {
    return ms_fail(t->errbuf, t->errlen, code, code, "%s", what);
}

/// Copies plane `src` (w x h) into `dst` turned clockwise by `rotation` (90/180/270).
static void rotate_plane(const uint8_t *src, int src_stride, uint8_t *dst, int dst_stride, int w, int h,
                         int rotation) {
    for (int y = 0; y < h; y++) {
        const uint8_t *row = src + (ptrdiff_t)y * src_stride;
        for (int x = 0; x < w; x++) {
            int dx = rotation == 90 ? h - 1 - y : rotation == 180 ? w - 1 - x : y;
            int dy = rotation == 90 ? x : rotation == 180 ? h - 1 - y : w - 1 - x;
            dst[(ptrdiff_t)dy * dst_stride + dx] = row[x];
        }
    }
}

/// A full-range yuv420p picture: what yuvj420p means, without swscale's deprecation warning.
static int new_picture(AVFrame **f, int w, int h) {
    if (!(*f = ff.av_frame_alloc())) return AVERROR(ENOMEM);
    (*f)->format = AV_PIX_FMT_YUV420P;
    (*f)->color_range = AVCOL_RANGE_JPEG;
    (*f)->width = w;
    (*f)->height = h;
    return ff.av_frame_get_buffer(*f, 0);
}

/// Decodes from the current position until the frame shown at `target` (stream time base) and
/// keeps it in t->best; keeps the latest frame before it when the stream ends first.
static int decode_until(thumbnailer *t, int64_t target) {
    int have = 0, eof = 0;
    while (!eof) {
        int ret = ff.av_read_frame(t->ifmt, t->pkt);
        if (ret == AVERROR(ENOMEM)) return fail(t, ret, "reading the input");
        if (ret < 0) eof = 1;  // end, or unreadable from here on: flush what we have
        else if (t->pkt->stream_index != t->st->index) {
            ff.av_packet_unref(t->pkt);
            continue;
        }
        ret = ff.avcodec_send_packet(t->dec, eof ? NULL : t->pkt);
        ff.av_packet_unref(t->pkt);
        if (ret == AVERROR(ENOMEM)) return fail(t, ret, "decoding");
        while ((ret = ff.avcodec_receive_frame(t->dec, t->frame)) != AVERROR(EAGAIN) && ret != AVERROR_EOF) {
            if (ret == AVERROR(ENOMEM)) return fail(t, ret, "decoding");
            if (ret < 0) break;  // a damaged frame: skip it
            ff.av_frame_unref(t->best);
            ff.av_frame_move_ref(t->best, t->frame);
            have = 1;
            int64_t pts = t->best->best_effort_timestamp;
            if (pts == AV_NOPTS_VALUE || pts >= target) return 0;
        }
    }
    return have ? 0 : MS_ERROR_NO_FRAMES;
}

/// Seeks to `at` seconds (negative: 10 % of the duration) and decodes the frame shown there.
static int find_frame(thumbnailer *t, double at) {
    double duration = t->ifmt->duration != AV_NOPTS_VALUE ? (double)t->ifmt->duration / AV_TIME_BASE : 0;
    if (at < 0) at = duration * 0.1;
    if (at > 1e9) at = 1e9;  // past any end: the last frame
    int64_t start = t->ifmt->start_time != AV_NOPTS_VALUE ? t->ifmt->start_time : 0;
    int64_t ts = start + (int64_t)(at * AV_TIME_BASE);
    int64_t target = ff.av_rescale_q(ts, AV_TIME_BASE_Q, t->st->time_base);
    if (at > 0 && ff.avformat_seek_file(t->ifmt, -1, INT64_MIN, ts, ts, 0) < 0)
        ff.avformat_seek_file(t->ifmt, -1, INT64_MIN, start, start, 0);  // unseekable: decode from the start
    ms_log_clear();
    int ret = decode_until(t, target);
    if (ret == MS_ERROR_NO_FRAMES && at > 0) {  // nothing decodable after the seek point (a file cut
        ff.avcodec_flush_buffers(t->dec);           // short): the last frame before it will do
        if (ff.avformat_seek_file(t->ifmt, -1, INT64_MIN, start, start, 0) >= 0) ret = decode_until(t, target);
    }
    if (ret == MS_ERROR_NO_FRAMES) return ms_fail(t->errbuf, t->errlen, ret, ret, "'%s' at %.3f s", t->in, at);
    return ret;
}

/// Scales t->best to `max_width` as displayed and turns it upright; returns the picture in *pic.
static int upright_picture(thumbnailer *t, int max_width, AVFrame **pic) {
    AVFrame *f = t->best;
    int rotation = ms_stream_rotation(t->st);
    int swap = rotation == 90 || rotation == 270;  // then the JPEG's width is the stored height
    int w, h;
    ms_fit_size(f->width, f->height, swap ? 0 : max_width, swap ? max_width : 0, &w, &h);
    if (ms_hdr_transfer(f->color_trc) || ms_hdr_transfer(t->st->codecpar->color_trc)) {
        ms_tonemap_source(&t->tonemap, t->st->codecpar);
        int ret = ms_tonemap_frame(&t->tonemap, t->best, w, h, &f, t->errbuf, t->errlen);
        if (ret < 0) return ret;
    }
    int ret = new_picture(&t->scaled, w, h);
    if (ret < 0) return fail(t, ret, "thumbnail");
    if ((ret = ms_scale(&t->scaler, f, t->scaled)) < 0) return fail(t, ret, "cannot convert the picture");
    *pic = t->scaled;
    if (!rotation) return 0;
    if ((ret = new_picture(&t->rotated, swap ? h : w, swap ? w : h)) < 0) return fail(t, ret, "thumbnail");
    for (int p = 0; p < 3; p++) {
        rotate_plane(t->scaled->data[p], t->scaled->linesize[p], t->rotated->data[p], t->rotated->linesize[p],
                     p ? w / 2 : w, p ? h / 2 : h, rotation);
    }
    *pic = t->rotated;
    return 0;
}

static int write_jpeg(thumbnailer *t, AVFrame *pic, const char *in, const char *out) {
    const AVCodec *codec = ff.avcodec_find_encoder(AV_CODEC_ID_MJPEG);
    if (!codec) return fail(t, MS_ERROR_UNSUPPORTED_CODEC, "encoder mjpeg");
    if (!(t->enc = ms_new_codec_context(codec))) return fail(t, AVERROR(ENOMEM), "JPEG encoder");
    t->enc->width = pic->width;
    t->enc->height = pic->height;
    t->enc->pix_fmt = AV_PIX_FMT_YUV420P;
    t->enc->color_range = AVCOL_RANGE_JPEG;
    t->enc->time_base = (AVRational){1, 25};
    t->enc->flags |= AV_CODEC_FLAG_QSCALE;
    t->enc->global_quality = FF_QP2LAMBDA * 3;  // as `ffmpeg -q:v 3`: high quality, small file
    ms_log_clear();
    int ret = ff.avcodec_open2(t->enc, codec, NULL);
    if (ret < 0) return fail(t, ret, "cannot open the JPEG encoder");
    pic->pts = 0;
    pic->quality = t->enc->global_quality;
    pic->pict_type = AV_PICTURE_TYPE_NONE;
    if ((ret = ff.avcodec_send_frame(t->enc, pic)) < 0 || (ret = ff.avcodec_send_frame(t->enc, NULL)) < 0 ||
        (ret = ff.avcodec_receive_packet(t->enc, t->pkt)) < 0)
        return fail(t, ret, "JPEG encoding failed");

    if ((ret = ms_open_avio_output(in, out, &t->out, t->errbuf, t->errlen)) < 0) return ret;
    t->out_opened = 1;
    ff.avio_write(t->out, t->pkt->data, t->pkt->size);
    ff.avio_flush(t->out);
    return t->out->error < 0 ? ms_write_error(t->errbuf, t->errlen, t->out->error, "cannot write the JPEG") : 0;
}

static int run(thumbnailer *t, const char *in, const char *out, double at, int max_width, int *ow, int *oh) {
    int ret = ms_open_input(in, &t->ifmt, t->errbuf, t->errlen);
    if (ret < 0) return ret;
    int v = ms_find_video_stream(t->ifmt);
    if (v < 0) return ms_fail(t->errbuf, t->errlen, MS_ERROR_NO_VIDEO, MS_ERROR_NO_VIDEO, "'%s'", in);
    t->st = t->ifmt->streams[v];
    if ((ret = ms_open_decoder(t->st, 0, &t->dec, t->errbuf, t->errlen)) < 0) return ret;
    if (!(t->pkt = ff.av_packet_alloc()) || !(t->frame = ff.av_frame_alloc()) || !(t->best = ff.av_frame_alloc()))
        return fail(t, AVERROR(ENOMEM), "thumbnail");
    AVFrame *pic = NULL;
    if ((ret = find_frame(t, at)) < 0 || (ret = upright_picture(t, max_width, &pic)) < 0 ||
        (ret = write_jpeg(t, pic, in, out)) < 0)
        return ret;
    if (ow) *ow = pic->width;
    if (oh) *oh = pic->height;
    return 0;
}

int ms_thumbnail(const char *in, const char *out_jpeg, double at_seconds, int max_width, int *out_width,
                 int *out_height, char *errbuf, size_t errlen) {
    int loaded = ms_begin(errbuf, errlen);
    if (loaded < 0) return loaded;
    if (!in || !out_jpeg || max_width < 0 || !isfinite(at_seconds))
        return ms_fail(errbuf, errlen, MS_ERROR_INVALID_ARGUMENT, MS_ERROR_INVALID_ARGUMENT, "ms_thumbnail");
    thumbnailer t = {.in = in, .errbuf = errbuf, .errlen = errlen};
    int ret = run(&t, in, out_jpeg, at_seconds, max_width, out_width, out_height);
    ff.avio_closep(&t.out);
    if (ret < 0 && t.out_opened) ms_remove_partial(out_jpeg);
    ff.avformat_close_input(&t.ifmt);
    ff.avcodec_free_context(&t.dec);
    ff.avcodec_free_context(&t.enc);
    ms_scaler_free(&t.scaler);
    ms_tonemap_free(&t.tonemap);
    ff.av_packet_free(&t.pkt);
    ff.av_frame_free(&t.frame);
    ff.av_frame_free(&t.best);
    ff.av_frame_free(&t.scaled);
    ff.av_frame_free(&t.rotated);
    return ret;
}
