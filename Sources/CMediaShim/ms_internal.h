// Private to CMediaShim: the helpers the .c files share. This is the only header that includes
// FFmpeg; the public headers (include/CMediaShim.h and the ms_transcode.h it includes) never do.
#ifndef MS_INTERNAL_H
#define MS_INTERNAL_H

#include "CMediaShim.h"

#include <libavcodec/avcodec.h>
#include <libavfilter/avfilter.h>
#include <libavfilter/buffersink.h>
#include <libavfilter/buffersrc.h>
#include <libavformat/avformat.h>
#include <libavutil/audio_fifo.h>
#include <libavutil/avstring.h>
#include <libavutil/avutil.h>
#include <libavutil/cpu.h>
#include <libavutil/display.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
#include <libavutil/time.h>
#include <libswresample/swresample.h>
#include <libswscale/swscale.h>

// ffmpeg.c: FFmpeg itself, loaded on first use (dlopen) so that a process that never touches
// media never maps FFmpeg and its dependencies. Call FFmpeg as `ff.av_read_frame(...)`.
typedef struct ms_ffmpeg {
#define MS_FFMPEG(library, function) __typeof__(function) *function;
#include "ffmpeg_symbols.h"
#undef MS_FFMPEG
} ms_ffmpeg;
/// Filled in by ms_ffmpeg_load; read-only afterwards.
extern ms_ffmpeg ff;
/// Loads FFmpeg's libraries once per process and installs the log callback; 0, or
/// MS_ERROR_FFMPEG_UNAVAILABLE with a message naming the library or function that is missing.
int ms_ffmpeg_load(char *errbuf, size_t errlen);

/// libavfilter, loaded apart on first need (ffmpeg_filter_symbols.h). Call it as `ffl.avfilter_graph_config(...)`.
typedef struct ms_ffmpeg_filters {
#define MS_FFMPEG_FILTER(function) __typeof__(function) *function;
#include "ffmpeg_filter_symbols.h"
#undef MS_FFMPEG_FILTER
} ms_ffmpeg_filters;
/// Filled in by ms_ffmpeg_load_filters; read-only afterwards.
extern ms_ffmpeg_filters ffl;
/// Loads libavfilter once per process (after ms_ffmpeg_load); 0, or MS_ERROR_FFMPEG_UNAVAILABLE naming what is
/// missing.
int ms_ffmpeg_load_filters(char *errbuf, size_t errlen);

// log.c: FFmpeg's log output goes through our callback, installed by ms_ffmpeg_load.
void ms_log_install(void);
/// Lets the callback tell a filter's lines by their graph (ms_new_filter_graph); called once libavfilter is loaded.
void ms_log_install_filters(void);
/// Forgets the last FFmpeg error line logged on this thread (call before a step whose cause we
/// want to report).
void ms_log_clear(void);
/// The last error line FFmpeg logged on this thread since ms_log_clear, without its "[name] "
/// prefix; "" if none.
const char *ms_log_last_error(void);
/// The calling thread's route (ms_log_set_route): a thread the shim starts for an operation takes it over, so
/// that what FFmpeg logs there goes where the operation's lines go.
uint64_t ms_log_route(void);
/// The encoder's per-frame PSNR (encoder_psnr.c) that this thread's transcode gathers: libx264's per-frame report
/// lines logged on this thread go there; NULL stops it.
typedef struct ms_encoder_psnr ms_encoder_psnr;
void ms_log_set_encoder_psnr(ms_encoder_psnr *psnr);
/// Takes one of libx264's per-frame report lines ("frame=   3 QP=... PSNR Y:41.98 U:41.43 V:41.62"), logged before
/// the packet of that frame is handed out: its frame's PSNR waits for the packet (ms_encoder_psnr_packet).
void ms_encoder_psnr_line(ms_encoder_psnr *psnr, const char *line);
/// A codec context (avcodec_alloc_context3) that carries the calling thread's route: FFmpeg copies it into the
/// contexts of the codec's own threads (frame-threaded decoding and encoding; an encoder's pool logging through its
/// callback), which the shim does not start and whose lines no thread route reaches. Every codec context the shim
/// opens is made here (scripts/shim-check.sh checks), so that no line of an operation's codecs goes without its
/// route. NULL when out of memory.
AVCodecContext *ms_new_codec_context(const AVCodec *codec);
/// A filter graph (avfilter_graph_alloc, after ms_ffmpeg_load_filters) that carries the calling thread's route, for
/// the lines its filters log on the graph's slice threads; as ms_new_codec_context, the only maker of graphs.
AVFilterGraph *ms_new_filter_graph(void);

// common.c: error messages.
/// Fills errbuf with "<what>: <description of cause>[ (<last FFmpeg error line>)]" and returns
/// `code`. `cause` is the FFmpeg or ms error whose text is used (often equal to `code`).
int ms_fail(char *errbuf, size_t errlen, int code, int cause, const char *what, ...)
    __attribute__((format(printf, 5, 6)));
/// Loads FFmpeg if needed (ms_ffmpeg_load), clears errbuf and starts a fresh error capture for this
/// thread. Every public entry point that uses FFmpeg starts with it and returns its error.
int ms_begin(char *errbuf, size_t errlen);

// common.c: input side.
/// "file:<path>" (av_free it): a path is never parsed as a protocol or URL. NULL if out of memory.
char *ms_file_url(const char *path);
/// Opens `path` as a local file (file: prefix, protocol_whitelist=file) with its header read, nothing more; an
/// AVERROR on failure.
int ms_open_file(const char *path, AVFormatContext **ifmt);
/// ms_open_file, then reads stream info; a file without streams is refused.
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
/// How long the input's media runs, in seconds: the longest duration a video stream states (its own or Matroska's
/// per-track DURATION tag), else an audio stream's, else the container's; 0 when none is known. Sound that runs on
/// past the pictures, or a subtitle track (a container's duration is its longest stream's), does not count when
/// there is video: a transcode's progress and its decode are measured in video.
double ms_media_duration(const AVFormatContext *ifmt);
/// ms_media_duration, or 0 (unknown) when FFmpeg only estimated it from the bit rate (raw AAC or MP3, some MPEG
/// program streams): what a decode that stops short is compared with (ms_transcode_result.input_duration).
double ms_declared_duration(const AVFormatContext *ifmt);
/// Fits w x h inside max_w x max_h (0 = no limit) keeping the aspect ratio, never upscaling,
/// rounding down to even sizes (at least 2).
void ms_fit_size(int w, int h, int max_w, int max_h, int *out_w, int *out_h);
/// 1 for the deprecated yuvj* formats, which mean full-range YUV.
int ms_full_range_format(int format);
/// A scaler and what it was set up for: swscale rewrites some of its options as it sets itself up (RGB ranges,
/// formats it handles as others), so what was asked is kept beside it.
typedef struct ms_scaler {
    struct SwsContext *sws;
    int64_t key[8];
} ms_scaler;
/// Converts `src` into the allocated `dst` (its size, format and color_range), full or limited
/// range as each frame says; reuses the scaler while the input stays the same.
int ms_scale(ms_scaler *scaler, const AVFrame *src, AVFrame *dst);
/// Frees the scaler's context; NULL-safe.
void ms_scaler_free(ms_scaler *scaler);
/// Seconds, 0 when `ts` is AV_NOPTS_VALUE.
double ms_seconds(int64_t ts, AVRational tb);
/// Non-negative seconds in AV_TIME_BASE units (microseconds), rounded to the nearest.
int64_t ms_microseconds(double seconds);

// output.c: output side.
/// Opens `path` for writing through avio (file: prefix, protocol_whitelist=file). Refuses a path
/// that is the input file. Maps open failures to MS_ERROR_OUTPUT_OPEN.
int ms_open_avio_output(const char *in_path, const char *path, AVIOContext **pb, char *errbuf, size_t errlen);
/// Allocates an MP4 muxer whose url is "file:<path>" (faststart re-opens the output by its url).
/// The file is not touched until ms_start_output, so a failure before that leaves no file behind.
int ms_new_mp4_muxer(const char *path, AVFormatContext **ofmt, char *errbuf, size_t errlen);
/// Creates the file (ms_open_avio_output) and writes the MP4 header. With `faststart`, the index goes
/// before the media data: into `index_space` bytes reserved now when > 0 (one pass; the trailer fails
/// with AVERROR(EINVAL) if the index does not fit), otherwise moved there by a second pass.
int ms_start_output(AVFormatContext *ofmt, const char *in_path, const char *path, int faststart, int64_t index_space,
                    char *errbuf, size_t errlen);
/// Writes one packet (interleaved); maps ENOSPC/EDQUOT to MS_ERROR_DISK_FULL.
int ms_write_packet(AVFormatContext *ofmt, AVPacket *pkt, char *errbuf, size_t errlen);
/// Writes the trailer. Call ms_close_output in every case afterwards.
int ms_write_trailer(AVFormatContext *ofmt, char *errbuf, size_t errlen);
/// Maps a write error: ENOSPC/EDQUOT → MS_ERROR_DISK_FULL, others unchanged, with a message.
int ms_write_error(char *errbuf, size_t errlen, int err, const char *what);
/// Closes the file and frees the muxer (NULL-safe, sets *ofmt to NULL); when `failed`, removes the
/// file if this muxer created it.
void ms_close_output(AVFormatContext **ofmt, const char *path, int failed);
/// Early writeback of an output written in one pass. The host makes a finished output durable (fsync)
/// before it relies on it; starting the disk writes while the output is still being produced leaves
/// little for that fsync to wait for. (Not for outputs rewritten by +faststart's second pass.)
typedef struct ms_writeback {
    int fd;           ///< a descriptor on the output, or -1 (then nothing is done)
    int64_t pending;  ///< bytes written since the last request
} ms_writeback;
#define MS_WRITEBACK_STEP (8 << 20)
void ms_writeback_start(ms_writeback *w, const char *path);
/// Counts `bytes` written; every MS_WRITEBACK_STEP asks the kernel to start writing the file out.
void ms_writeback_note(ms_writeback *w, int64_t bytes);
void ms_writeback_end(ms_writeback *w);
/// Removes a failed output if it is a regular file (never a device such as /dev/full).
void ms_remove_partial(const char *path);
/// Size of the file at path in bytes, or 0.
int64_t ms_file_size(const char *path);
/// Adds to `ofmt` a stream that receives `ist`'s packets unchanged: codec parameters, side data (the
/// display matrix among them), metadata, time base and disposition.
int ms_add_copy_stream(AVFormatContext *ofmt, const AVStream *ist, char *errbuf, size_t errlen);
/// Sets the MP4 sample entry a video stream gets when it is not the muxer's default: `hvc1` for HEVC
/// (parameter sets in the header only), the one Apple's players accept, instead of `hev1`.
void ms_set_mp4_tag(AVCodecParameters *par);
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

// subtitles.c: text subtitle tracks written as mov_text.
/// 1 when the stream is a text subtitle an export keeps (SubRip, ASS/SSA, WebVTT, mov_text, plain text).
int ms_text_subtitle(const AVCodecParameters *par);
/// A cue decoded and not yet written: its text as an ASS event line, shown from `start` to `end` (microseconds on
/// the output's timeline; `end` INT64_MAX until the next cue when its source did not give one).
typedef struct ms_cue {
    int64_t start, end;
    char *ass;
    char *ass_below;   // the same, with its text on a line of its own (`\N` first): shown below another cue
} ms_cue;
/// Cues shown at once, at most; a cue that would be one more ends the one shown longest.
#define MS_CUES_SHOWN 16
/// How far (microseconds) the other streams must have passed a cue's end before what it shows is written: a
/// container stores a cue near the media of its start, a little early or late, and no cue still to come may begin
/// before what is written.
#define MS_SUBTITLE_SLACK 2000000
/// One kept track: its input stream, its decoder, the mov_text encoder, the output stream, and the cues it shows.
typedef struct ms_subtitle_track {
    int in_index;
    AVCodecContext *dec, *enc;
    AVStream *ost;
    int64_t last_pts;  // in the output stream's time base
    int unreadable;    // cues the decoder could not read (skipped; the first one is logged)
    int unwritable;    // samples the mov_text encoder refused, even with the newest cue alone (the first is logged)
    ms_cue shown[MS_CUES_SHOWN];  // the cues shown from `until` on, in the order they came
    int shown_count;
    int64_t until;     // the output's time (microseconds) up to which the track is written
} ms_subtitle_track;
/// The text subtitle tracks of one export.
typedef struct ms_subtitles {
    ms_subtitle_track *tracks;
    int count;
    int64_t offset;  // the input's start (AV_TIME_BASE units): the output's zero
    AVPacket *pkt;
    uint8_t *buf;
} ms_subtitles;
/// Adds to `ofmt` a mov_text track for every text subtitle stream of `ifmt` (after the other streams, before the
/// header is written); `width`/`height` are the output picture's. A track that cannot be converted is left out
/// with a warning in the log; only running out of memory fails.
int ms_subtitles_open(ms_subtitles *subs, AVFormatContext *ifmt, AVFormatContext *ofmt, int width, int height,
                      char *errbuf, size_t errlen);
/// The kept track of input stream `in_index`, or -1.
int ms_subtitles_track(const ms_subtitles *subs, int in_index);
/// Converts the packet of kept track `index` and writes its cue, timed on the output's timeline (shifted as the
/// other streams: the input's start is 0; a cue that starts before keeps what is shown after it).
int ms_subtitles_write(ms_subtitles *subs, int index, const AVPacket *pkt, AVFormatContext *ofmt, char *errbuf,
                       size_t errlen);
/// Writes what the cues shown have shown up to the last cue end the other streams passed, `now` being their time
/// (microseconds on the output's timeline), so that a cue's sample lies in the file near its time: call for each
/// picture or audio packet written.
int ms_subtitles_advance(ms_subtitles *subs, int64_t now, AVFormatContext *ofmt, char *errbuf, size_t errlen);
/// Writes the cues still shown at the end of the input, those without an end shown up to `end` (microseconds on the
/// output's timeline: where the other streams end); call once, before the trailer.
int ms_subtitles_finish(ms_subtitles *subs, int64_t end, AVFormatContext *ofmt, char *errbuf, size_t errlen);
/// Frees the tracks' codecs and the cues not written (the streams belong to the muxer); NULL-safe.
void ms_subtitles_free(ms_subtitles *subs);

// tonemap.c: HDR pictures tone-mapped to SDR.
/// 1 for the HDR transfers an export tone-maps: PQ (smpte2084) and HLG (arib-std-b67).
int ms_hdr_transfer(int trc);
/// A tone-mapping filter graph, built for the first picture and again when the size or format changes.
typedef struct ms_tonemap {
    AVFilterGraph *graph;
    AVFilterContext *src, *sink;
    AVFrame *out;         // the last SDR picture
    int width, height, format, out_width, out_height;  // what the graph was built for
    int threads;          // the graph's threads (0: one per core)
    // The stream's tags as the container gave them when it was opened (a demuxer may change its parameters while
    // another thread reads on), for pictures that carry none.
    enum AVColorTransferCharacteristic trc;
    enum AVColorPrimaries primaries;
    enum AVColorSpace space;
    enum AVColorRange range;
} ms_tonemap;
/// Records the tags of the stream `par` describes, for pictures that carry none; call before reading frames.
void ms_tonemap_source(ms_tonemap *tm, const AVCodecParameters *par);
/// Tone-maps `f` (its tags completed from the stream's where it has none) into `*sdr`: 8-bit 4:2:0 BT.709 in
/// limited range, valid until the next call; `width` × `height` when that is smaller than `f` (scaled in linear
/// light, before the tone curve: a 4K source for a 720p export is tone-mapped at 720p), else `f`'s size. Loads
/// libavfilter on first use.
int ms_tonemap_frame(ms_tonemap *tm, AVFrame *f, int width, int height, AVFrame **sdr, char *errbuf, size_t errlen);
/// Frees the graph; NULL-safe.
void ms_tonemap_free(ms_tonemap *tm);

// remux.c
/// MS_MODE_REMUX; `gate` (may be NULL) follows the output as ms_remux_streamed says.
int ms_remux(const char *in, const char *out, const ms_transcode_options *opt, ms_join_gate_fn gate, void *gate_ctx,
             ms_progress *progress, ms_transcode_result *res, char *errbuf, size_t errlen);

#endif
