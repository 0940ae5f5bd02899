// CMediaShim — the small, stable C API over FFmpeg that the Swift `MediaStages` module wraps.
// This header holds what every call shares (errors, set-up, logging) and the probe; ms_transcode.h, which it
// includes, the operations that write media files.
//
// Rules of this API:
// - Every symbol starts with `ms_`/`MS_`; no FFmpeg type or header appears here, so Swift never
//   sees FFmpeg and an FFmpeg major upgrade only touches the .c files.
// - Functions return 0 on success or a negative code: one of `ms_error` below, or an FFmpeg error
//   (`AVERROR(errno)` or an FFmpeg tag). `ms_strerror` describes both. Functions that can fail
//   take `errbuf`/`errlen` (may be NULL/0) and fill it with a message for people that includes
//   the real cause FFmpeg logged on the calling thread (e.g. "moov atom not found"); it is "" on
//   success. (Lines FFmpeg logs on its own worker threads reach only the log handler.)
// - Structs are plain data. What the shim reports (ms_media_info) holds fixed-size, NUL-terminated
//   char arrays, truncated when a name does not fit; what a caller asks for (ms_transcode_options)
//   holds no string: numbers and enums, and the `video_read` callback with its context pointer, so
//   nothing a caller sets is cut or parsed. Changing a struct's layout bumps MS_ABI_VERSION.
// - All functions are thread-safe: different threads may probe, transcode and thumbnail at the
//   same time. Each call blocks until done; run it on a thread of its own, not on a shared pool.
// - Paths are local files only: they are opened as `file:<path>` with `protocol_whitelist=file`,
//   so a name like `a:b.mp4` is a file name and nothing (not even a playlist) reaches the network.
#ifndef C_MEDIA_SHIM_H
#define C_MEDIA_SHIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Version of this API and of the struct layouts. A caller that links a shim built apart from the header it was
/// compiled with (a C program over prebuilt objects, as benchmarks/shim-transcode.c over a release build's)
/// compares it with `ms_abi_version()` at start-up. MediaStages needs no such check: SwiftPM compiles the shim and
/// the Swift that imports this header in one build, so the two cannot differ (its tests pin the version it was
/// written for).
/// ABI 11: ms_transcode_options names the video encoder's settings by type (`video_codec`, `preset`,
/// `closed_gop`) instead of an encoder name and an options string.
/// ABI 12: ms_quality and its struct ms_quality_scores (ms_quality.h), and the errors MS_ERROR_QUALITY_UNSUPPORTED
/// and MS_ERROR_QUALITY_MISMATCH.
/// ABI 13: ms_scene_detect and its struct ms_scene_changes (ms_scenes.h).
/// ABI 14: ms_transcode_options.encoder_psnr, the encoder's own PSNR of each frame.
/// ABI 15: ms_transcode_options' `crf` is a double: libx264 and libx265 take fractional CRFs.
#define MS_ABI_VERSION 15

/// Size of the name fields (codec, format, pixel format names), including the NUL.
#define MS_NAME_LEN 64

/// Error codes of our own. They lie outside FFmpeg's ranges (AVERROR(errno) is -1...-200,
/// FFmpeg's tags are below -0x10000000), so every negative return has one meaning.
typedef enum ms_error {
    /// A NULL path, an option out of range, or the output path names the input file.
    MS_ERROR_INVALID_ARGUMENT = -10001,
    /// The input file does not exist.
    MS_ERROR_INPUT_NOT_FOUND = -10002,
    /// The input is not a media file, or is damaged or incomplete so that it cannot be opened
    /// (e.g. an MP4 cut before its index: "moov atom not found").
    MS_ERROR_NOT_MEDIA = -10003,
    /// The input has no video stream (an audio-only file, or only a cover picture).
    MS_ERROR_NO_VIDEO = -10004,
    /// No decoder for the input's codec, or the needed encoder (the video encoder asked for, aac,
    /// mjpeg) is not in this FFmpeg build. The message names the codec.
    MS_ERROR_UNSUPPORTED_CODEC = -10005,
    /// Stream copy (remux) is impossible: a kept stream's codec cannot be stored in MP4 (e.g. PCM
    /// audio). Transcoding works.
    MS_ERROR_REMUX_UNSUPPORTED = -10006,
    /// The output file cannot be created: its folder is missing or not writable (the message
    /// says which, from errno).
    MS_ERROR_OUTPUT_OPEN = -10007,
    /// Writing the output failed because the disk (or quota) is full.
    MS_ERROR_DISK_FULL = -10008,
    /// The progress callback asked to stop.
    MS_ERROR_CANCELLED = -10009,
    /// The input opened but not a single video frame could be decoded from it.
    MS_ERROR_NO_FRAMES = -10010,
    /// FFmpeg's libraries (loaded on first use) are missing, or lack a function the shim needs.
    /// The message names the library or function.
    MS_ERROR_FFMPEG_UNAVAILABLE = -10011,
    /// Audio alone was asked for (MS_STREAMS_AUDIO) but the input has no audio stream.
    MS_ERROR_NO_AUDIO = -10012,
    /// ms_join: every part is empty (ABI 10): no frame of any part's range could be decoded, so the source had
    /// nothing to join, as MS_ERROR_NO_FRAMES says of a whole transcode.
    MS_ERROR_EVERY_PART_EMPTY = -10013,
    /// ms_quality: the reference is not what a measurement compares (8-bit 4:2:0 SDR video); the message says what
    /// it is.
    MS_ERROR_QUALITY_UNSUPPORTED = -10014,
    /// ms_quality: the two files cannot be compared frame by frame: their frame counts or display rotations differ.
    MS_ERROR_QUALITY_MISMATCH = -10015,
} ms_error;

/// Returns MS_ABI_VERSION as compiled into the library.
int ms_abi_version(void);

/// Writes a description of `code` (an `ms_error` or an FFmpeg error) into `buf` (NUL-terminated,
/// truncated to `len`). Returns 0, or a negative value when the code is unknown (a generic text
/// is written anyway).
int ms_strerror(int code, char *buf, size_t len);

/// Sets what the encoders read from the environment (SVT-AV1's log level) unless the user set it. Call at the start
/// of the process, before other threads read the environment: setenv beside getenv is a data race. The first media
/// call does it otherwise.
void ms_prepare_process(void);
/// Starts loading FFmpeg's libraries on a thread of its own and returns at once (every `ms_` media call loads
/// them on first use, once per process, and waits for a load under way): a caller that knows media work follows
/// calls this before other start-up work. A failure to load is reported by the first media call.
void ms_preload(void);

// MARK: - Logging

/// Our log levels; FFmpeg's levels are mapped onto them (panic/fatal/error → ERROR,
/// verbose/debug/trace → DEBUG).
typedef enum ms_log_level {
    MS_LOG_ERROR = 0,
    MS_LOG_WARNING = 1,
    MS_LOG_INFO = 2,
    MS_LOG_DEBUG = 3,
} ms_log_level;

/// Receives one complete log line (no trailing newline) with the route of the operation that logged
/// it (`ms_log_set_route`; 0 when none can be told, see there), its `ms_log_level` and the `ctx`
/// given to `ms_set_log_handler` (ABI 8: `route` added). Lines look like "[libx264] using cpu
/// capabilities: ...". It is called on whichever thread FFmpeg logs from, one call at a time (a
/// lock is held, so the handler need not be thread-safe); it must return quickly and must not call
/// any `ms_` function.
typedef void (*ms_log_fn)(void *ctx, uint64_t route, int level, const char *line);

/// Routes FFmpeg's log output (for the whole process: FFmpeg has one log callback) to `fn`.
/// With no handler (the default, or `fn` NULL) nothing is printed. After this returns, the
/// previous handler is never called again, so its `ctx` may be released.
void ms_set_log_handler(ms_log_fn fn, void *ctx);

/// Sets the most verbose `ms_log_level` that is formatted and passed to the handler
/// (default MS_LOG_INFO), for the whole process: with operations that want different levels
/// running at once, set the most verbose and drop, by route, the lines an operation does not want.
/// Errors are always captured for the `errbuf` messages.
void ms_set_log_level(int level);

/// Sets the route of the calling thread (ABI 8): an id of the caller's choosing for the operations
/// this thread runs from now on (0: none, the default), passed to the log handler with every line
/// logged for them, so that operations running at once on different threads each get their own
/// lines. A line carries the route when it is logged on this thread, on a thread the shim starts for
/// the operation (the reading thread, a ladder's rendition threads), or by a decoder, encoder or
/// filter graph the operation opened, also on their own threads (frame-threaded decoding and
/// encoding; an encoder's pool that logs through FFmpeg, as libx264 does; a filter graph's slice
/// threads, ABI 10). A line FFmpeg logs elsewhere (without a context on a thread of its own, as a
/// frame-threaded decoder's workers do for some damaged pictures) has route 0. Encoders that print on stderr themselves (libx265, SVT-AV1) never reach
/// the handler.
void ms_log_set_route(uint64_t route);

// MARK: - Probe

/// Facts about a media file. Numbers are 0 when unknown or not present.
typedef struct ms_media_info {
    char format_name[MS_NAME_LEN];   ///< demuxer name, e.g. "mov,mp4,m4a,3gp,3g2,mj2", "matroska,webm"
    double duration;                 ///< seconds
    int64_t size;                    ///< file size in bytes
    int64_t bit_rate;                ///< overall bits per second
    int stream_count;                ///< all streams (video, audio, subtitles, data, ...)
    int video_stream_count;          ///< video streams, not counting cover pictures
    int audio_stream_count;
    int subtitle_stream_count;

    int has_video;                   ///< 1 when the fields below describe a video stream
    char video_codec[MS_NAME_LEN];   ///< e.g. "h264", "hevc", "mpeg4"
    int width;                       ///< stored (coded) picture size in pixels
    int height;
    int display_width;               ///< size as shown: width and height swapped for 90/270
    int display_height;
    int rotation;                    ///< 0, 90, 180 or 270: degrees clockwise a player turns the
                                     ///< stored picture (display matrix; phones write 90 upright)
    double fps;                      ///< average frame rate (avg_frame_rate, else r_frame_rate)
    char pixel_format[MS_NAME_LEN];  ///< e.g. "yuv420p"
    int64_t video_bit_rate;
    int64_t frame_count;             ///< from the container's index; 0 when it does not say
    double video_duration;           ///< seconds

    int has_audio;                   ///< 1 when the fields below describe an audio stream
    char audio_codec[MS_NAME_LEN];   ///< e.g. "aac", "opus", "pcm_s16le"
    int sample_rate;
    int channels;
    int64_t audio_bit_rate;

    // ABI 4: what deciding whether a file plays somewhere needs.
    char video_profile[MS_NAME_LEN]; ///< the codec's profile, e.g. "High", "High 4:4:4 Predictive", "Main 10"; "" unknown
    int video_level;                 ///< the codec's level as stored: H.264 level_idc (31 = 3.1), HEVC 30 × level
                                     ///< (93 = 3.1); 0 unknown
    char video_tag[8];               ///< the container's sample entry, e.g. "avc1", "hvc1", "hev1"; "" none
    int bit_depth;                   ///< bits per sample of the pixel format (8, 10, 12); 0 unknown
    char chroma[8];                  ///< "4:2:0", "4:2:2", "4:4:4" (also RGB), "4:1:1", "4:4:0", "4:0:0" (gray); "" unknown
    int full_range;                  ///< 1 when the samples use the full 0-255 range (yuvj*, color_range "pc")
    int interlaced;                  ///< 1 when the stream says its frames are interlaced (field order tt/bb/tb/bt)
    int sar_num;                     ///< sample (pixel) aspect ratio; 1:1 when the file does not say
    int sar_den;
    double video_start;              ///< seconds from the earliest stream's start to the video's first frame
    double audio_start;              ///< the same for the audio stream described
    double audio_duration;           ///< seconds; 0 unknown
    char audio_profile[MS_NAME_LEN]; ///< e.g. "LC", "HE-AAC"; "" unknown
    int data_stream_count;           ///< data streams (timecode, GPS, ...) and attachments (fonts)
    int attached_picture_count;      ///< cover pictures
    int still_image;                 ///< 1 when the input is a still picture (an image format, not a video)

    // ABI 7: what an export keeps and how it converts the picture.
    int text_subtitle_count;         ///< subtitle streams with text (SubRip, ASS/SSA, WebVTT, mov_text, plain
                                     ///< text): the ones an export keeps, as mov_text
    char color_transfer[MS_NAME_LEN];  ///< the video's transfer characteristic as FFmpeg names it: "bt709",
                                       ///< "smpte2084" (PQ), "arib-std-b67" (HLG); "" unspecified
    char color_primaries[MS_NAME_LEN]; ///< the video's colour primaries: "bt709", "bt2020"; "" unspecified
} ms_media_info;

/// Reads the container and stream facts of `path` into `out`. The video stream described is the
/// one transcode and thumbnail use (the best one, cover pictures excluded); the audio stream is
/// the best (default) one. A file without video probes fine with `has_video` = 0.
/// Errors: MS_ERROR_INVALID_ARGUMENT, MS_ERROR_INPUT_NOT_FOUND, MS_ERROR_NOT_MEDIA, FFmpeg I/O errors.
int ms_probe(const char *path, ms_media_info *out, char *errbuf, size_t errlen);

#ifdef __cplusplus
}
#endif

// The operations that write media files: transcode and remux, join, adaptive streaming, thumbnails.
#include "ms_transcode.h"
// Measuring an encode against its source: VMAF, SSIM, PSNR.
#include "ms_quality.h"
// Where a video's scenes change, for segments cut there.
#include "ms_scenes.h"

#endif
