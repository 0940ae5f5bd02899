// CMediaShim's operations that write media files: transcode and remux, join, keyframes, adaptive streaming and
// thumbnails. Part of the API that CMediaShim.h describes (its rules hold here), which includes this header.
#ifndef C_MEDIA_SHIM_TRANSCODE_H
#define C_MEDIA_SHIM_TRANSCODE_H

#include "CMediaShim.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ms_quality_scores;

// MARK: - Transcode and remux

/// Progress of a transcode: `done_seconds` of the input handled so far out of `total_seconds`
/// (0 when the input's duration is unknown). Called on the calling thread at the start (0) and
/// then whenever 0.25 s of media or 100 ms of wall time have passed. Return non-zero to cancel:
/// the operation stops, frees everything, removes its partial output and returns MS_ERROR_CANCELLED.
typedef int (*ms_progress_fn)(void *ctx, double done_seconds, double total_seconds);

/// How `ms_transcode` produces its MP4.
typedef enum ms_mode {
    /// Decode and re-encode: the video encoder asked for (libx264 by default) + AAC.
    MS_MODE_TRANSCODE = 0,
    /// Copy the compressed streams unchanged (fast, lossless; text subtitles are converted to
    /// mov_text, see ms_transcode); the video/audio options below are ignored. Fails with
    /// MS_ERROR_REMUX_UNSUPPORTED when a codec cannot go into MP4.
    MS_MODE_REMUX = 1,
} ms_mode;

/// Which streams `ms_transcode` writes.
typedef enum ms_streams {
    /// The best video stream and the best audio stream (default).
    MS_STREAMS_ALL = 0,
    /// Video only: for the parts of a segmented encode.
    MS_STREAMS_VIDEO = 1,
    /// Audio only (the input must have audio): for a ladder's audio rendition.
    MS_STREAMS_AUDIO = 2,
    /// Audio and the text subtitle tracks (the input must have audio): for the one audio pass of a segmented
    /// encode, from which `ms_join` copies both.
    MS_STREAMS_AUDIO_AND_TEXT = 3,
} ms_streams;

/// The video codecs `ms_transcode` encodes, each through one FFmpeg encoder (ABI 11).
typedef enum ms_video_codec {
    /// H.264 through libx264 (default).
    MS_VIDEO_H264 = 0,
    /// HEVC through libx265, tagged hvc1 (the sample entry Apple's players need). x265's own log level is set to
    /// error: it prints on stderr itself, not through FFmpeg's log.
    MS_VIDEO_HEVC = 1,
    /// AV1 through SVT-AV1 (libsvtav1), which takes no forced picture type (see `keyframe_interval`).
    MS_VIDEO_AV1 = 2,
} ms_video_codec;

/// A video encoder's speed preset, by x264's names, fastest first (ABI 11). libx264 and libx265 get the name as
/// their `preset`; libsvtav1 gets the number given below (its presets run from 0, the slowest, to 13).
typedef enum ms_preset {
    MS_PRESET_DEFAULT = 0,    ///< the encoder's own default (default)
    MS_PRESET_ULTRAFAST = 1,  ///< SVT-AV1 12. x264 turns its adaptive quantization off, and with it a range's boost
                              ///< (see `range_start`)
    MS_PRESET_SUPERFAST = 2,  ///< SVT-AV1 11
    MS_PRESET_VERYFAST = 3,   ///< SVT-AV1 10
    MS_PRESET_FASTER = 4,     ///< SVT-AV1 9
    MS_PRESET_FAST = 5,       ///< SVT-AV1 8
    MS_PRESET_MEDIUM = 6,     ///< SVT-AV1 7
    MS_PRESET_SLOW = 7,       ///< SVT-AV1 5
    MS_PRESET_SLOWER = 8,     ///< SVT-AV1 4
    MS_PRESET_VERYSLOW = 9,   ///< SVT-AV1 2
} ms_preset;

/// Options of `ms_transcode`. Fill with `ms_transcode_options_init` first, then change fields, so
/// that fields added later get their defaults.
typedef struct ms_transcode_options {
    int mode;                 ///< ms_mode; default MS_MODE_TRANSCODE
    double crf;               ///< the encoder's constant rate factor (libx264/libx265 0...51, fractions
                              ///< too; libsvtav1 0...63, whole only); -1 = the encoder's default
    int64_t video_bit_rate;   ///< bits/s; 0 = none. Alone: average bit rate. With crf >= 0: CRF
                              ///< capped at this rate (maxrate, buffer of 2 s)
    // ABI 11: the encoder's settings by type (before: an encoder name and a "key=value;..." options string).
    int video_codec;          ///< ms_video_codec; default MS_VIDEO_H264. An encoder missing from this FFmpeg
                              ///< build fails with MS_ERROR_UNSUPPORTED_CODEC
    int preset;               ///< ms_preset; default MS_PRESET_DEFAULT. A preset the encoder refuses fails with
                              ///< MS_ERROR_INVALID_ARGUMENT
    int closed_gop;           ///< 1: every keyframe is an IDR picture that no later picture looks past, so
                              ///< the stretch from one keyframe to the next stands alone (libx265 gets
                              ///< open-gop=0; libx264 and libsvtav1 close their GOPs anyway); 0 = the
                              ///< encoder's default (default): libx265 makes a forced keyframe a CRA picture,
                              ///< whose leading pictures refer to the pictures before it
    int max_width;            ///< fit inside this box as displayed (after rotation and with square
    int max_height;           ///< pixels), keeping the aspect ratio, never upscaling; 0 = no limit. Output
                              ///< sizes are even
    double max_fps;           ///< drop frames to stay at or below this rate; 0 = keep the source's
    int64_t audio_bit_rate;   ///< bits/s; 0 = the AAC encoder's default (as the ffmpeg CLI)
    int audio_channels;       ///< 1...8; 0 = keep the source's, at most 2 (stereo downmix)
    int audio_sample_rate;    ///< Hz; 0 = the source's when AAC takes it, else the nearest higher one
    int faststart;            ///< 1 = put the index (moov) first for progressive playback; default 1
    int threads;              ///< decoder and encoder threads; 0 = one per core (default). libx265, whose output
                              ///< depends on its threads, gets a pool of this many and as many frame threads,
                              ///< at most 4; libsvtav1 this many logical processors (its output does not depend
                              ///< on them, its memory does). 0 leaves them their own choice
    int streams;              ///< ms_streams; default MS_STREAMS_ALL (transcode mode only)
    double range_start;       ///< seconds from the input's start: encode only the video frames shown at
    double range_duration;    ///< range_start <= t < range_start + range_duration (0 = to the end). A
                              ///< range needs MS_STREAMS_VIDEO. The output starts with an IDR frame and
                              ///< its timestamps are the input's minus range_start, so consecutive ranges
                              ///< split the video into parts that share no frame (see ms_join). With
                              ///< libx264 the few frames either side of a range are encoded too and then
                              ///< dropped, so its edges are coded as they are inside one whole encode, and
                              ///< its first frames get a quantizer 1 lower (a boost that needs x264's
                              ///< adaptive quantization: none with MS_PRESET_ULTRAFAST); the other
                              ///< encoders' parts start and end cold. A range in
                              ///< which no frame can be decoded (a damaged stretch of the source) gives an
                              ///< empty part: an MP4 without a track, which ms_join leaves out.
    void (*video_read)(void *ctx);  ///< NULL, or called once on the calling thread when the video (or its
    void *video_read_ctx;     ///< range) is read and decoded, before the encoder gives up its delayed
                              ///< frames (transcode mode): a caller encoding consecutive ranges may
                              ///< start the next one then, while this one drains
    // ABI 5: the renditions of an adaptive streaming ladder.
    double keyframe_interval; ///< seconds; > 0 forces a keyframe on the first frame at or after every multiple of
                              ///< it on the output's timeline, so renditions of one source encoded apart have
                              ///< keyframes at the same times (an IDR picture with libx264, and with libx265 when
                              ///< `closed_gop`); libsvtav1 instead gets a GOP of this many seconds of frames at
                              ///< the frame rate. 0 = the encoder's own choice (default)
    // ABI 14
    struct ms_quality_scores *encoder_psnr;  ///< NULL (default), or filled on success with the video encoder's
                              ///< own PSNR of every frame written, in display order, as ms_quality's PSNR (the
                              ///< planes' squared error weighted by their size; MS_QUALITY_PSNR_IDENTICAL at most)
                              ///< of the frame against the picture the encoder was given. libx264 alone hands it
                              ///< out (its per-frame report; the bytes written do not
                              ///< change); with the other encoders `count` stays 0. Free with ms_quality_scores_free
} ms_transcode_options;

/// Sets the defaults: transcode, H.264, the encoder's own preset, open GOPs as the encoder likes, crf -1, no
/// limits, faststart 1, threads 0, all streams, no range, no video_read callback, no forced keyframes.
void ms_transcode_options_init(ms_transcode_options *opt);

/// What `ms_transcode` wrote.
typedef struct ms_transcode_result {
    double duration;          ///< output duration in seconds (longest stream)
    int width;                ///< stored picture size of the output video
    int height;
    int display_width;        ///< as shown (swapped for rotation 90/270)
    int display_height;
    int rotation;             ///< display rotation carried over from the input (see ms_transcode)
    int has_audio;            ///< 1 when an audio stream was written
    int64_t size;             ///< output file size in bytes
    int64_t video_frames;     ///< video frames (packets) written
    int64_t decode_errors;    ///< packets/frames that could not be read or decoded and were skipped
    double decoded_seconds;   ///< how far into the input video decoding (or copying) got
    double input_duration;    ///< how long the input's video runs as its header states (else its audio, else
                              ///< the container's); 0 if unknown or only estimated from the bit rate
    // ABI 9
    int64_t parts_left_out;   ///< ms_join: empty parts left out (ranges with nothing decodable); else 0
} ms_transcode_result;

/// Converts `in` into an MP4 at `out`. `out` is created (or truncated) only once the input is open
/// and the encoders are set up, so an early failure leaves an existing file there untouched.
/// `opt` NULL means the defaults of `ms_transcode_options_init`.
///
/// Streams: the best video stream and the best audio stream (the one marked default, else the
/// first one with the most data) are kept; other audio tracks, data streams and cover pictures are
/// dropped. Text subtitle tracks (see `text_subtitle_count`) are kept as mov_text in both modes, each
/// cue decoded and encoded again, timed as the other streams, with its language, title (as the
/// handler name) and default/forced dispositions; bitmap subtitles (DVD, PGS, DVB) are dropped.
/// MS_STREAMS_VIDEO and MS_STREAMS_AUDIO outputs keep none, MS_STREAMS_AUDIO_AND_TEXT outputs keep them. Inputs
/// without audio give a video-only MP4. Container and stream metadata (title, creation_time,
/// language) are copied.
///
/// Picture: always 8-bit 4:2:0 with limited ("tv") range, whatever the source's pixel format, bit
/// depth or range. An HDR picture (transfer PQ or HLG) is tone-mapped into SDR BT.709 (libavfilter's
/// zscale and tonemap=hable, loaded on first need) and the output tagged BT.709. Non-square pixels are resampled to square ones, keeping the display aspect ratio
/// (the stored width grows, or the height for tall pixels); sizes are made even. Interlaced frames
/// (as the decoder flags them, or the whole stream when its field order says so) are deinterlaced by
/// a linear blend: each line averaged with its neighbours (1-2-1), one frame out per frame in.
///
/// Timing: source timestamps are kept (variable frame rate stays variable); no frames are
/// duplicated. `max_fps` drops frames to stay under the cap. Timestamps are shifted so the output
/// starts at 0: the earliest stream starts there, and a track that starts later is made to start
/// at 0 too (the first picture is shown from 0; silence is put before the first audio sample), so
/// both start together and stay in sync. Audio is re-timed from its first sample and encoded
/// continuously; a damaged frame in a channel layout that cannot be converted is heard as silence of its
/// packet's length, so what follows stays in sync. Each track keeps its own length.
/// (The ffmpeg CLI instead forces constant frame rate for MP4, duplicating or dropping frames, so
/// on inputs with gaps or jitter its frame count differs from ours.)
///
/// Rotation: pixels are not rotated. The input's display matrix is copied to the output video
/// stream, so players show it upright as they did the input; `max_width`/`max_height` apply to
/// the picture as displayed.
///
/// Damaged input: decode errors (other than out-of-memory) are skipped and counted, as the CLI
/// does; a file cut short converts up to where its data ends. Compare `decoded_seconds` with
/// `input_duration` to warn about truncated input. A kept stream without a decoder (video or
/// audio) fails the call with MS_ERROR_UNSUPPORTED_CODEC rather than silently losing it.
///
/// `cb` may be NULL. On failure or cancellation a partially written regular file at `out` is
/// removed. `res` (may be NULL) is filled on success.
/// Errors: MS_ERROR_INVALID_ARGUMENT, MS_ERROR_INPUT_NOT_FOUND, MS_ERROR_NOT_MEDIA,
/// MS_ERROR_NO_VIDEO, MS_ERROR_UNSUPPORTED_CODEC, MS_ERROR_REMUX_UNSUPPORTED,
/// MS_ERROR_OUTPUT_OPEN, MS_ERROR_DISK_FULL, MS_ERROR_CANCELLED, MS_ERROR_NO_FRAMES, FFmpeg errors.
int ms_transcode(const char *in, const char *out, const ms_transcode_options *opt, ms_progress_fn cb,
                 void *ctx, ms_transcode_result *res, char *errbuf, size_t errlen);

/// The `part` a join's gate is told when the index did not fit its room and the file is written again: the
/// bytes it said were final are not.
#define MS_JOIN_REWRITTEN (-2)
/// How long a run of one track's samples the join writes together (microseconds): each run is one chunk of the
/// MP4's index, so the index holds one chunk entry per track for this much media instead of one per sample,
/// and players still find audio and video close together.
#define MS_JOIN_CHUNK_MICROSECONDS 500000
/// Called by ms_join before each part and when bytes become final (see ms_join); non-zero stops the join.
typedef int (*ms_join_gate_fn)(void *ctx, int part, int64_t head, int64_t final);

/// Joins by stream copy the video parts of a segmented encode (`count` MP4s made with MS_STREAMS_VIDEO and
/// consecutive ranges, in order; part i is shifted by `starts[i]` seconds, its range_start) and, when
/// `audio` is not NULL, the audio and the mov_text tracks of an MP4 made with MS_STREAMS_AUDIO_AND_TEXT (or
/// the audio alone of one made with MS_STREAMS_AUDIO), into one MP4 at `out` (the index
/// in front with `faststart`). The parts must share their encoder settings: the first part's codec
/// parameters describe them all. An empty part (an MP4 without a track: see `range_start`) is left out, with a
/// warning, so the video has a gap there as a whole transcode of a damaged stretch has; when every part is empty
/// the join fails with MS_ERROR_EVERY_PART_EMPTY. Timestamps stay strictly increasing across the joins; both tracks
/// start where their parts do. `res` is filled as by ms_transcode (`video_frames`: video packets copied). Each track's
/// samples are written in runs of MS_JOIN_CHUNK_MICROSECONDS (one chunk each, unless it reaches 1 MiB).
/// With `faststart` and `index_space` > 0 the index is written into that many bytes reserved ahead of the media
/// data (one pass, a `free` box keeps what is left), so every byte after the head is final once written; when
/// the index does not fit, the join is made again with +faststart (the gate is told MS_JOIN_REWRITTEN).
/// `gate` (may be NULL) is called on the joining thread before part i is opened (`part` = i: it may block until
/// the part exists), after the header and before the trailer (`part` = -1), with `head` (the bytes the trailer
/// rewrites: file type, index room, mdat header) and `final` (bytes written and synced so far); a non-zero
/// return stops the join (MS_ERROR_CANCELLED).
/// Errors: MS_ERROR_INVALID_ARGUMENT, MS_ERROR_INPUT_NOT_FOUND, MS_ERROR_NOT_MEDIA, MS_ERROR_NO_VIDEO,
/// MS_ERROR_EVERY_PART_EMPTY, MS_ERROR_OUTPUT_OPEN, MS_ERROR_DISK_FULL, MS_ERROR_CANCELLED, FFmpeg errors.
int ms_join(const char *const *parts, const double *starts, int count, const char *audio, const char *out,
            int faststart, int64_t index_space, ms_join_gate_fn gate, void *gate_ctx, ms_progress_fn cb, void *ctx,
            ms_transcode_result *res, char *errbuf, size_t errlen);

/// ms_transcode in MS_MODE_REMUX for a reader that follows the output as it is written (a streaming upload). When the
/// index room can be reserved (an MP4/MOV input, with faststart: see ffmpeg.remux), `gate` is called on the calling
/// thread as ms_join's with `part` -1: after the header, every few MiB copied and before the trailer, each time with
/// `head` (the bytes the trailer rewrites) and `final` (bytes written and synced so far, final from `head` on); when
/// the index outgrows its room, with MS_JOIN_REWRITTEN before the output is written again with +faststart. Without
/// the room it is never called (every byte moves at the end). A non-zero return stops the remux
/// (MS_ERROR_CANCELLED). The output is the one ms_transcode writes, byte for byte.
/// Errors: as ms_transcode; MS_ERROR_INVALID_ARGUMENT without a gate or in another mode.
int ms_remux_streamed(const char *in, const char *out, const ms_transcode_options *opt, ms_join_gate_fn gate,
                      void *gate_ctx, ms_progress_fn cb, void *ctx, ms_transcode_result *res, char *errbuf,
                      size_t errlen);

/// The presentation times (seconds from the input's start) of the video keyframes the container's index
/// lists, in order: MP4 and MOV index every sample, other containers few keyframes or none. At most
/// `capacity` are written to `times`; returns how many the index lists (0: none), or a negative error.
/// A segmented encode starts its segments at keyframes, so no segment decodes frames it does not keep.
/// Errors: MS_ERROR_INVALID_ARGUMENT, MS_ERROR_INPUT_NOT_FOUND, MS_ERROR_NOT_MEDIA, MS_ERROR_NO_VIDEO.
int ms_keyframes(const char *path, double *times, int capacity, char *errbuf, size_t errlen);

/// The version of the libavcodec the shim encodes with (LIBAVCODEC_VERSION_INT: major << 16 | minor << 8 |
/// micro); 0 when FFmpeg cannot be loaded. Its libx264 wrapper maps the options onto x264's.
unsigned ms_avcodec_version(void);

/// The processor features FFmpeg's code uses here (av_get_cpu_flags: SSE2, AVX2, AVX-512...); 0 when FFmpeg
/// cannot be loaded. The scaler, the AAC encoder and zimg pick their code by them, and what they compute may
/// differ in the last bit from one choice to another.
unsigned ms_cpu_flags(void);

/// Version of what `ms_transcode` makes of a segmented encode's pieces: how it cuts a range into a part (see
/// `range_duration`), how it converts pictures (tone mapping and its scaling, range), and what the audio pass
/// keeps (its text subtitles). Pieces made under two versions do not join into the bytes of one segmented encode.
#define MS_PART_FORMAT 5
/// The version of a library FFmpeg has loaded, from the name of its file: `name` "x265" finds
/// libx265.so.199 and writes "199", "SvtAv1Enc" finds libSvtAv1Enc.so.1.4.1 and writes "1.4.1". An
/// encoder's output may differ bit for bit between versions. Returns 0, or MS_ERROR_INVALID_ARGUMENT
/// when no such library is loaded ("" is written).
int ms_library_version(const char *name, char *buf, size_t len);

// MARK: - Adaptive streaming

/// Copies the streams of `in` (an MP4 of one rendition: one video or one audio stream, made by ms_transcode)
/// unchanged into an HLS rendition of fragmented MP4 (CMAF) segments: the media playlist at `playlist` (a VOD
/// playlist, version 7, independent segments), and beside it `init.mp4` (the initialisation segment) and
/// `seg_00000.m4s`, `seg_00001.m4s`, ... A segment ends at the first keyframe at or after each multiple of
/// `segment_seconds` (video; audio at the first packet there), so a video encoded with `keyframe_interval`
/// equal to it gets segments that start at exactly those times. The folder must exist; files there with those
/// names are replaced. `cb` may be NULL; a cancelled or failed call may leave some of the files behind.
/// Errors: MS_ERROR_INVALID_ARGUMENT, MS_ERROR_INPUT_NOT_FOUND, MS_ERROR_NOT_MEDIA, MS_ERROR_OUTPUT_OPEN,
/// MS_ERROR_DISK_FULL, MS_ERROR_CANCELLED, FFmpeg errors.
int ms_package_hls(const char *in, const char *playlist, double segment_seconds, ms_progress_fn cb, void *ctx,
                   char *errbuf, size_t errlen);

/// Makes the renditions of an adaptive streaming ladder in one pass over `in` (ABI 6): the input is read and its
/// video decoded once, and every video rendition encodes from the same decoded frames, each on a thread of its own
/// (its scaler and encoder are independent of the others'). `count` renditions (1...16): rendition i is written as
/// an MP4 at `outs[i]` with `opts[i]`, whose `streams` says what it is: MS_STREAMS_VIDEO (a video rendition: its
/// own size, frame rate cap, encoder, options, bit rate, forced keyframes and threads) or MS_STREAMS_AUDIO (the
/// audio rendition, at most one, encoded on the calling thread). Every video rendition is byte for byte the MP4
/// `ms_transcode` makes of it alone with the same options. Ranges and `video_read` are not used, and `encoder_psnr`
/// is refused (a ladder collects no PSNR, so libx264 is not asked to compute one); the decoder
/// takes the first video rendition's `threads`. `results` (may be NULL) has `count` entries, filled in the same
/// order; `decode_errors` counts the input's. `cb` is called on the calling thread as the input is decoded.
/// On failure or cancellation every output is removed, and `errbuf` names the rendition that failed, if one did.
/// Errors: as ms_transcode; MS_ERROR_NO_AUDIO when an audio rendition is asked of an input without audio.
int ms_transcode_ladder(const char *in, int count, const char *const *outs, const ms_transcode_options *opts,
                        ms_transcode_result *results, ms_progress_fn cb, void *ctx, char *errbuf, size_t errlen);

// MARK: - Thumbnail

/// Writes one JPEG of the video frame shown at `at_seconds` (negative: at 10 % of the duration;
/// past the end: the last frame). An HDR picture (PQ, HLG) is tone-mapped as ms_transcode does. The
/// picture is turned upright by the display rotation (a JPEG has no display matrix) and scaled down to `max_width` pixels wide as displayed (0 = full size,
/// never upscaled; sizes even). `out_width`/`out_height` (may be NULL) receive the JPEG's size.
/// A JPEG whose writing failed is removed.
/// Errors: as ms_transcode, minus the remux and cancel ones.
int ms_thumbnail(const char *in, const char *out_jpeg, double at_seconds, int max_width, int *out_width,
                 int *out_height, char *errbuf, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
