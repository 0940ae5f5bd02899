// ms_transcode's audio path: decoded frames → resampler → FIFO of 1024-sample frames → AAC.
#include "transcoder.h"

#include <libavutil/opt.h>

static int choose_sample_rate(const AVCodec *codec, int rate) {
    const int *r = codec->supported_samplerates;
    if (!r) return rate > 0 ? rate : 48000;
    int best = 0;
    for (; *r; r++) {
        if (*r == rate) return rate;
        if (*r > rate && (!best || *r < best)) best = *r;  // the nearest higher rate loses nothing
    }
    return best ? best : 48000;
}

int ms_transcode_open_audio(transcoder *t) {
    const AVStream *ist = t->aist;
    int ret = ms_open_decoder(ist, t->opt->threads, &t->adec, t->errbuf, t->errlen);
    if (ret < 0) return ret;
    const AVCodec *codec = ff.avcodec_find_encoder(AV_CODEC_ID_AAC);
    if (!codec) return ms_transcode_fail(t, MS_ERROR_UNSUPPORTED_CODEC, MS_ERROR_UNSUPPORTED_CODEC, "encoder aac");
    AVCodecContext *enc = t->aenc = ms_new_codec_context(codec);
    if (!enc) return ms_transcode_fail(t, AVERROR(ENOMEM), AVERROR(ENOMEM), "audio encoder");
    int channels = t->opt->audio_channels;
    if (channels == 0) channels = FFMIN(FFMAX(t->adec->ch_layout.nb_channels, 1), 2);
    ff.av_channel_layout_default(&enc->ch_layout, channels);
    enc->sample_fmt = codec->sample_fmts ? codec->sample_fmts[0] : AV_SAMPLE_FMT_FLTP;
    enc->sample_rate =
        choose_sample_rate(codec, t->opt->audio_sample_rate > 0 ? t->opt->audio_sample_rate : t->adec->sample_rate);
    enc->time_base = (AVRational){1, enc->sample_rate};
    enc->bit_rate = t->opt->audio_bit_rate;  // 0: the encoder's default, as the CLI
    enc->thread_count = t->opt->threads;
    if (t->ofmt->oformat->flags & AVFMT_GLOBALHEADER) enc->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    ms_log_clear();
    if ((ret = ff.avcodec_open2(enc, codec, NULL)) < 0) return ms_transcode_fail(t, ret, ret, "cannot open the AAC encoder");

    if (!(t->aost = ff.avformat_new_stream(t->ofmt, NULL))) return ms_transcode_fail(t, AVERROR(ENOMEM), AVERROR(ENOMEM), "stream");
    if ((ret = ff.avcodec_parameters_from_context(t->aost->codecpar, enc)) < 0 ||
        (ret = ms_copy_stream_metadata(ist, t->aost)) < 0)
        return ms_transcode_fail(t, ret, ret, "audio stream");
    t->aost->time_base = enc->time_base;
    if (!(t->fifo = ff.av_audio_fifo_alloc(enc->sample_fmt, channels, 4096)) || !(t->aframe = ff.av_frame_alloc()))
        return ms_transcode_fail(t, AVERROR(ENOMEM), AVERROR(ENOMEM), "audio buffer");
    t->next_apts = AV_NOPTS_VALUE;
    return 0;
}

/// (Re)configures swr for the format of `f`: the decoder's output may differ from its parameters. Returns a
/// negative AVERROR without recording it when swr cannot convert that format (the caller decides what that means).
static int configure_resampler(transcoder *t, const AVFrame *f) {
    AVChannelLayout in_layout = {0};
    int ret = f->ch_layout.order == AV_CHANNEL_ORDER_UNSPEC
                  ? (ff.av_channel_layout_default(&in_layout, f->ch_layout.nb_channels), 0)
                  : ff.av_channel_layout_copy(&in_layout, &f->ch_layout);
    if (ret < 0) return ret;
    if (t->swr && t->swr_format == f->format && t->swr_rate == f->sample_rate &&
        !ff.av_channel_layout_compare(&t->swr_layout, &in_layout)) {
        ff.av_channel_layout_uninit(&in_layout);
        return 0;
    }
    ff.swr_free(&t->swr);
    ff.av_channel_layout_uninit(&t->swr_layout);
    t->swr_layout = in_layout;  // owned by t from here on
    t->swr_format = f->format;
    t->swr_rate = f->sample_rate;
    ret = ff.swr_alloc_set_opts2(&t->swr, &t->aenc->ch_layout, t->aenc->sample_fmt, t->aenc->sample_rate, &in_layout,
                                 f->format, f->sample_rate, 0, NULL);
    if (ret >= 0) ret = ff.swr_init(t->swr);
    if (ret < 0) ff.swr_free(&t->swr);  // the next frame configures afresh
    return ret;
}

/// Room for `samples` converted samples in t->conv.
static int conv_room(transcoder *t, int samples) {
    if (samples <= t->conv_samples) return 0;
    if (t->conv) ff.av_freep(&t->conv[0]);
    ff.av_freep(&t->conv);
    t->conv_samples = 0;
    int ret = ff.av_samples_alloc_array_and_samples(&t->conv, NULL, t->aenc->ch_layout.nb_channels, samples,
                                                    t->aenc->sample_fmt, 0);
    if (ret < 0) return ms_transcode_fail(t, ret, ret, "resample");
    t->conv_samples = samples;
    return 0;
}

/// Resamples `nb` samples (NULL = drain swr) into the fifo.
static int resample(transcoder *t, const uint8_t **data, int nb) {
    int room = ff.swr_get_out_samples(t->swr, nb);
    if (room < 0) return ms_transcode_fail(t, room, room, "resample");
    int ret = conv_room(t, room);
    if (ret < 0) return ret;
    int n = ff.swr_convert(t->swr, t->conv, t->conv_samples, data, nb);
    if (n < 0) return ms_transcode_fail(t, n, n, "resample");
    if (n > 0 && ff.av_audio_fifo_write(t->fifo, (void **)t->conv, n) < n)
        return ms_transcode_fail(t, AVERROR(ENOMEM), AVERROR(ENOMEM), "audio buffer");
    return 0;
}

/// Encodes whole frames from the fifo; with `flush`, also the short remainder.
static int drain_fifo(transcoder *t, int flush) {
    int frame_size = t->aenc->frame_size > 0 ? t->aenc->frame_size : 1024;
    while (ff.av_audio_fifo_size(t->fifo) >= frame_size || (flush && ff.av_audio_fifo_size(t->fifo) > 0)) {
        AVFrame *a = t->aframe;
        a->nb_samples = FFMIN(frame_size, ff.av_audio_fifo_size(t->fifo));
        a->format = t->aenc->sample_fmt;
        a->sample_rate = t->aenc->sample_rate;
        int ret = ff.av_channel_layout_copy(&a->ch_layout, &t->aenc->ch_layout);
        if (ret >= 0) ret = ff.av_frame_get_buffer(a, 0);
        if (ret < 0) return ms_transcode_fail(t, ret, ret, "audio buffer");
        ff.av_audio_fifo_read(t->fifo, (void **)a->data, a->nb_samples);
        a->pts = t->next_apts;
        t->next_apts += a->nb_samples;
        ret = ms_transcode_encode(t, t->aenc, t->aost, a);
        ff.av_frame_unref(a);
        if (ret < 0) return ret;
    }
    return 0;
}

/// Puts `samples` of silence into the fifo, encoding as it fills.
static int put_silence(transcoder *t, int64_t samples) {
    while (samples > 0) {
        int n = (int)FFMIN(samples, 4096);
        int ret = conv_room(t, n);
        if (ret < 0) return ret;
        ff.av_samples_set_silence(t->conv, 0, n, t->aenc->ch_layout.nb_channels, t->aenc->sample_fmt);
        if (ff.av_audio_fifo_write(t->fifo, (void **)t->conv, n) < n)
            return ms_transcode_fail(t, AVERROR(ENOMEM), AVERROR(ENOMEM), "audio buffer");
        if ((ret = drain_fifo(t, 0)) < 0) return ret;
        samples -= n;
    }
    return 0;
}

/// The samples at the encoder's rate that the damaged frame `f` stands for: its packet's duration, which the
/// container gives, rather than its own sample count and rate, which came out of the damage (at most a second).
static int64_t frame_duration(const transcoder *t, const AVFrame *f) {
    int64_t duration = MS_FRAME_DURATION(f);
    if (duration <= 0) return 0;
    return FFMIN(ff.av_rescale_q(duration, t->aist->time_base, t->aenc->time_base), t->aenc->sample_rate);
}

int ms_transcode_audio_frame(transcoder *t, AVFrame *f) {
    int ret = configure_resampler(t, f);
    if (ret < 0) {
        // A frame in a channel layout other than the stream's that cannot be converted (a damaged packet decodes
        // to ten channels of noise) is heard as silence of its length, so the tracks stay in sync; a stream whose
        // own layout cannot be converted fails.
        if (ret == AVERROR(ENOMEM) || f->ch_layout.nb_channels == t->aist->codecpar->ch_layout.nb_channels)
            return ms_transcode_fail(t, ret, ret, "cannot set up audio resampling");
        ff.av_log(NULL, AV_LOG_WARNING, "an audio frame in %d channels (the stream has %d) was replaced by silence\n",
                  f->ch_layout.nb_channels, t->aist->codecpar->ch_layout.nb_channels);
        if (t->next_apts == AV_NOPTS_VALUE) return 0;  // nothing heard yet: the first good frame places the audio
        return put_silence(t, frame_duration(t, f));
    }
    if (t->next_apts == AV_NOPTS_VALUE) {  // audio runs continuously from its first sample
        int64_t pts = f->best_effort_timestamp;
        int64_t start = pts == AV_NOPTS_VALUE ? 0
                        : ff.av_rescale_q(pts - ff.av_rescale_q(t->offset, AV_TIME_BASE_Q, t->aist->time_base),
                                          t->aist->time_base, t->aenc->time_base);
        // Audio that starts after the video (or a data stream) starts at 0 with silence before it, so both
        // tracks start together in sync (at most an hour of it: later than that is a broken timestamp).
        t->next_apts = 0;
        if (start > 0 && start <= 3600LL * t->aenc->sample_rate && (ret = put_silence(t, start)) < 0) return ret;
    }
    if ((ret = resample(t, (const uint8_t **)f->extended_data, f->nb_samples)) < 0) return ret;
    return drain_fifo(t, 0);
}

// MARK: - Decoding

int ms_transcode_flush_audio(transcoder *t) {
    // Without a resampler (the last frames could not be converted) the fifo still holds what was heard before.
    int ret = t->swr ? resample(t, NULL, 0) : 0;
    return ret < 0 ? ret : drain_fifo(t, 1);
}
