// Private to CMediaShim: the helpers the .c files share. This is the only header that includes
// FFmpeg; the public header (include/CMediaShim.h) never does.
#ifndef MS_INTERNAL_H
#define MS_INTERNAL_H

#include "CMediaShim.h"

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/avstring.h>
#include <libavutil/avutil.h>

struct SwsContext;

// log.c: FFmpeg's log output goes through our callback, installed once per process.
void ms_log_install(void);
/// Forgets the last FFmpeg error line logged on this thread (call before a step whose cause we
/// want to report).
void ms_log_clear(void);
/// The last error line FFmpeg logged on this thread since ms_log_clear, without its "[name] "
/// prefix; "" if none.
const char *ms_log_last_error(void);

// common.c: error messages.
/// Fills errbuf with "<what>: <description of cause>[ (<last FFmpeg error line>)]" and returns
/// `code`. `cause` is the FFmpeg or ms error whose text is used (often equal to `code`).
int ms_fail(char *errbuf, size_t errlen, int code, int cause, const char *what, ...)
    __attribute__((format(printf, 5, 6)));
/// Clears errbuf (success) and starts a fresh error capture for this thread.
void ms_begin(char *errbuf, size_t errlen);

// common.c: input side.
/// "file:<path>" (av_free it): a path is never parsed as a protocol or URL. NULL if out of memory.
char *ms_file_url(const char *path);
/// Opens `path` as a local file (file: prefix, protocol_whitelist=file) and reads stream info.
/// Maps ENOENT to MS_ERROR_INPUT_NOT_FOUND and unreadable data to MS_ERROR_NOT_MEDIA.
int ms_open_input(const char *path, AVFormatContext **ifmt, char *errbuf, size_t errlen);
/// The best video stream that is not a cover picture, or -1.
int ms_find_video_stream(AVFormatContext *ifmt);
/// The best audio stream (default disposition first), related to `video` if >= 0, or -1.
int ms_find_audio_stream(AVFormatContext *ifmt, int video);
/// Degrees (0/90/180/270) a player turns the stored picture clockwise, from the display matrix.
int ms_stream_rotation(const AVStream *st);
/// Opens a decoder for `st` with `threads` (0 = auto). MS_ERROR_UNSUPPORTED_CODEC if none exists.
int ms_open_decoder(const AVStream *st, int threads, AVCodecContext **dec, char *errbuf, size_t errlen);
/// Fits w x h inside max_w x max_h (0 = no limit) keeping the aspect ratio, never upscaling,
/// rounding down to even sizes (at least 2).
void ms_fit_size(int w, int h, int max_w, int max_h, int *out_w, int *out_h);
/// 1 for the deprecated yuvj* formats, which mean full-range YUV.
int ms_full_range_format(int format);
/// Converts `src` into the allocated `dst` (its size, format and color_range), full or limited
/// range as each frame says; reuses *sws while the input stays the same.
int ms_scale(struct SwsContext **sws, const AVFrame *src, AVFrame *dst);
/// Seconds, 0 when `ts` is AV_NOPTS_VALUE.
double ms_seconds(int64_t ts, AVRational tb);

// output.c: output side.
/// Opens `path` for writing through avio (file: prefix, protocol_whitelist=file). Refuses a path
/// that is the input file. Maps open failures to MS_ERROR_OUTPUT_OPEN.
int ms_open_avio_output(const char *in_path, const char *path, AVIOContext **pb, char *errbuf, size_t errlen);
/// Allocates an MP4 muxer whose url is "file:<path>" (faststart re-opens the output by its url).
/// The file is not touched until ms_start_output, so a failure before that leaves no file behind.
int ms_new_mp4_muxer(const char *path, AVFormatContext **ofmt, char *errbuf, size_t errlen);
/// Creates the file (ms_open_avio_output) and writes the MP4 header (with +faststart if asked).
int ms_start_output(AVFormatContext *ofmt, const char *in_path, const char *path, int faststart, char *errbuf,
                    size_t errlen);
/// Writes one packet (interleaved); maps ENOSPC/EDQUOT to MS_ERROR_DISK_FULL.
int ms_write_packet(AVFormatContext *ofmt, AVPacket *pkt, char *errbuf, size_t errlen);
/// Writes the trailer. Call ms_close_output in every case afterwards.
int ms_write_trailer(AVFormatContext *ofmt, char *errbuf, size_t errlen);
/// Maps a write error: ENOSPC/EDQUOT → MS_ERROR_DISK_FULL, others unchanged, with a message.
int ms_write_error(char *errbuf, size_t errlen, int err, const char *what);
/// Closes the file and frees the muxer (NULL-safe, sets *ofmt to NULL); when `failed`, removes the
/// file if this muxer created it.
void ms_close_output(AVFormatContext **ofmt, const char *path, int failed);
/// Removes a failed output if it is a regular file (never a device such as /dev/full).
void ms_remove_partial(const char *path);
/// Size of the file at path in bytes, or 0.
int64_t ms_file_size(const char *path);
/// Copies the display matrix of `in` (if any) to `out`.
int ms_copy_display_matrix(const AVStream *in, AVStream *out);
/// Copies the metadata (language, handler name, ...) of stream in → out.
int ms_copy_stream_metadata(const AVStream *in, AVStream *out);

// output.c: progress reporting, throttled to every 0.25 s of media or 100 ms of wall time.
typedef struct ms_progress {
    ms_progress_fn fn;
    void *ctx;
    double total;
    double last_done;
    int64_t last_wall;
} ms_progress;
void ms_progress_start(ms_progress *p, ms_progress_fn fn, void *ctx, double total);
/// Calls the callback if due; returns MS_ERROR_CANCELLED when it asks to stop, else 0.
int ms_progress_report(ms_progress *p, double done);

// remux.c
int ms_remux(const char *in, const char *out, const ms_transcode_options *opt, ms_progress *progress,
             ms_transcode_result *res, char *errbuf, size_t errlen);

#endif
