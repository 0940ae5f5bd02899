// The state of one transcode, shared by its course (transcode.c), the video path (transcode_video.c) and the audio
// path (transcode_audio.c), and by a ladder's renditions (ladder.c).
#pragma once
#include "encoder_psnr.h"
#include "ms_internal.h"

#include <libavutil/audio_fifo.h>
#include <libswresample/swresample.h>
#include <libswscale/swscale.h>

/// What ms_reader_next hands over.
typedef enum ms_read_kind {
    MS_READ_VIDEO,      // a decoded video frame
    MS_READ_AUDIO,      // a decoded audio frame
    MS_READ_SUBTITLE,   // a packet of a text subtitle track kept (t->subs), as read
    MS_READ_VIDEO_END,  // the video decoder is drained: no video frame follows
    MS_READ_END,        // nothing follows
} ms_read_kind;

/// One thing ms_reader_next hands over: a frame (video, audio), a packet (subtitle), or neither (the ends).
typedef struct ms_read {
    ms_read_kind kind;
    AVFrame *frame;
    AVPacket *packet;
    int64_t decode_errors;  // packets and frames the thread skipped before this one
} ms_read;

/// A thread that reads and decodes the input ahead of the encoders (reader.c).
typedef struct ms_reader ms_reader;

typedef struct transcoder {
    const ms_transcode_options *opt;
    ms_progress *progress;
    char *errbuf;
    size_t errlen;
    AVFormatContext *ifmt, *ofmt;
    AVPacket *out_pkt;
    ms_reader *reader;    // the reading thread, which decodes the input
    int64_t offset;       // input start time, AV_TIME_BASE units: the output starts at 0

    const AVStream *vist;
    AVStream *vost;
    AVCodecContext *vdec, *venc;
    ms_scaler scaler;
    AVFrame *scaled;      // encoder input when the decoded frame needs scaling or conversion
    AVFrame *deint;       // an interlaced frame at its decoded size, 8-bit 4:2:0, while it is deinterlaced
    ms_scaler deint_scaler;
    uint8_t *deint_line;  // one line of the picture before blending
    int deint_line_size;
    int interlaced;       // the stream's field order says every frame is interlaced
    int hdr;              // PQ or HLG: every picture is tone-mapped to SDR first
    ms_tonemap tonemap;   // progressive pictures, to the encoder's size
    ms_tonemap tonemap_fields;  // interlaced pictures, at their size: their fields are blended before any scaling
    int64_t last_pts;     // last pts sent to the video encoder (= input stream time base)
    int64_t frame_dur;    // nominal frame duration in that time base
    int64_t last_slot;    // max_fps: index of the last frame slot that got a frame
    int64_t range_start;  // the range's frames, in the input stream's time base from the input's start:
    int64_t range_end;    // range_start <= pts < range_end (0 and INT64_MAX without a range)
    int64_t preroll_from; // frames from here up to range_start are encoded as the range's pre-roll, then dropped
    int64_t preroll_shift; // added to the encoder's timestamps so that a pre-roll starts at 0 (x264 warns of
                           // timestamps below 0), taken off its packets
    int postroll_left;    // frames at or past range_end still to encode as its post-roll, then dropped
    int boost_left;       // frames of the range still to encode with a lower quantizer (RANGE_BOOST_FRAMES)
    int range_entered;    // a frame of the range itself was sent (its first is forced to be a keyframe)
    int range_done;       // a frame at or past range_end was decoded: the rest of the input is not needed
    double next_key;      // keyframe_interval: the output time (seconds) from which the next frame is forced key

    const AVStream *aist;
    AVStream *aost;
    AVCodecContext *adec, *aenc;
    SwrContext *swr;
    AVChannelLayout swr_layout;  // input format swr was configured for
    int swr_format, swr_rate;
    AVAudioFifo *fifo;
    AVFrame *aframe;      // encoder input
    uint8_t **conv;       // resampled samples on their way into the fifo
    int conv_samples;
    int64_t next_apts;    // in 1/sample_rate

    ms_subtitles subs;    // text subtitle tracks kept as mov_text (MS_STREAMS_ALL only)

    ms_encoder_psnr psnr;  // the encoder's PSNR of each frame, gathered when gather_psnr (opt->encoder_psnr)
    int gather_psnr;

    int64_t video_frames, frames_sent, decode_errors;
    double decoded_seconds, out_end;
} transcoder;

// AVFrame.interlaced_frame became a flag in FFmpeg 6.1 (libavutil 58.7).
#if LIBAVUTIL_VERSION_INT >= AV_VERSION_INT(58, 7, 100)
#define MS_FRAME_INTERLACED(f) (((f)->flags & AV_FRAME_FLAG_INTERLACED) != 0)
#else
#define MS_FRAME_INTERLACED(f) ((f)->interlaced_frame)
#endif

// AVFrame.pkt_duration became AVFrame.duration in FFmpeg 6.0 (libavutil 58).
#if LIBAVUTIL_VERSION_MAJOR >= 58
#define MS_FRAME_DURATION(f) ((f)->duration)
#else
#define MS_FRAME_DURATION(f) ((f)->pkt_duration)
#endif

/// Checks the options of a transcode; MS_ERROR_INVALID_ARGUMENT names the first one out of range.
int ms_transcode_validate(const ms_transcode_options *opt, char *errbuf, size_t errlen);
/// Records a failure in the transcode's error buffer; returns `code`.
int ms_transcode_fail(transcoder *t, int code, int cause, const char *what);
/// Sends `frame` (NULL = flush) to `enc` and writes every packet it returns.
int ms_transcode_encode(transcoder *t, AVCodecContext *enc, AVStream *ost, AVFrame *frame);
/// Opens the video encoder for t->vist as decoded by t->vdec (opened by the caller) and the output's video stream.
int ms_transcode_open_video(transcoder *t);
/// The picture size the encoder gets for `ist`, stored at width × height: square pixels, within max_width and
/// max_height as displayed.
void ms_transcode_encoded_size(const transcoder *t, const AVStream *ist, int width, int height, int *out_w,
                               int *out_h);
/// With a range in the options (after ms_transcode_open_video): its bounds, pre- and post-roll and boost, and the
/// input seeked to the keyframe before its pre-roll. Without one, nothing.
int ms_transcode_start_range(transcoder *t);
/// FFmpeg's name of the encoder that writes `codec` (an ms_video_codec).
const char *ms_video_encoder(int codec);
/// Sets the encoder's own options from the typed fields of `opt` (preset, closed_gop, threads; SVT-AV1's GOP from
/// keyframe_interval and enc->framerate), on `enc` before it is opened; an option the encoder does not have or
/// refuses fails with MS_ERROR_INVALID_ARGUMENT.
int ms_set_encoder_options(AVCodecContext *enc, const ms_transcode_options *opt, char *errbuf, size_t errlen);
/// Whether a range of `opt`'s encoder is encoded with a pre- and post-roll that are then dropped (transcode_video.c): they
/// rely on a forced keyframe being an IDR frame that nothing after it looks past, as libx264 makes it; the other
/// encoders' parts start and end cold.
int ms_encoder_takes_rolls(const ms_transcode_options *opt);
/// Whether a range's first frames (after a pre-roll) get a lower quantizer through a region of interest: libx264
/// honours one with its adaptive quantization, which preset ultrafast turns off.
int ms_encoder_takes_boost(const ms_transcode_options *opt);
/// Timestamps, frame rate cap, forced keyframes, scaling, then the encoder, for one decoded frame (borrowed).
int ms_transcode_video_frame(transcoder *t, AVFrame *f);
/// What the transcode wrote, but the file's size.
void ms_transcode_report(const transcoder *t, ms_transcode_result *res);
/// Frees everything `t` holds but its output (ms_close_output); NULL-safe field by field.
void ms_transcoder_free(transcoder *t);
/// Opens the AAC encoder and the output's audio stream.
int ms_transcode_open_audio(transcoder *t);
/// Resamples a decoded audio frame into the FIFO and encodes every full frame.
int ms_transcode_audio_frame(transcoder *t, AVFrame *f);
/// Flushes the resampler and encodes what is left in the FIFO.
int ms_transcode_flush_audio(transcoder *t);

/// Starts a thread that reads t->ifmt from where it stands and decodes stream `video` with t->vdec and `audio` with
/// t->adec (-1: none) into a short queue, with the packets of t->subs's tracks as they are; the decoders and the
/// input are the thread's until ms_reader_stop.
int ms_reader_start(transcoder *t, int video, int audio, ms_reader **reader);
/// The next frame or packet (the caller frees it) and its kind, waiting for it. After MS_READ_END, which comes
/// with neither, a failure of the reading thread is returned with its message in errbuf.
int ms_reader_next(ms_reader *r, ms_read *next, char *errbuf, size_t errlen);
/// Stops the reading thread where it stands, frees the frames not taken and the reader, and adds its count of
/// skipped packets and frames (up to the last thing taken) to t->decode_errors; NULL-safe.
void ms_reader_stop(ms_reader **reader, transcoder *t);
