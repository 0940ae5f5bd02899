// Shared by transcode, remux and thumbnail: the output side (open a file safely, the MP4 muxer,
// write errors, early writeback, cleanup of a failed output) and throttled progress reporting.
#define _GNU_SOURCE  // sync_file_range
#include "ms_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libavutil/time.h>

static int same_file(const char *a, const char *b) {
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int ms_open_avio_output(const char *in_path, const char *path, AVIOContext **pb, char *errbuf, size_t errlen) {
    if (in_path && same_file(in_path, path)) {
        return ms_fail(errbuf, errlen, MS_ERROR_INVALID_ARGUMENT, MS_ERROR_INVALID_ARGUMENT,
                       "output '%s' is the input file", path);
    }
    AVDictionary *opts = NULL;
    char *url = ms_file_url(path);
    if (!url) return ms_fail(errbuf, errlen, AVERROR(ENOMEM), AVERROR(ENOMEM), "cannot create '%s'", path);
    ff.av_dict_set(&opts, "protocol_whitelist", "file", 0);
    ms_log_clear();
    int ret = ff.avio_open2(pb, url, AVIO_FLAG_WRITE, NULL, &opts);
    ff.av_dict_free(&opts);
    ff.av_free(url);
    if (ret < 0) {
        int code = ret == AVERROR(ENOSPC) || ret == AVERROR(EDQUOT) ? MS_ERROR_DISK_FULL
                   : ret == AVERROR(ENOMEM) ? ret : MS_ERROR_OUTPUT_OPEN;
        return ms_fail(errbuf, errlen, code, ret, "cannot create '%s'", path);
    }
    return 0;
}

int ms_new_mp4_muxer(const char *path, AVFormatContext **ofmt, char *errbuf, size_t errlen) {
    char *url = ms_file_url(path);
    if (!url) return ms_fail(errbuf, errlen, AVERROR(ENOMEM), AVERROR(ENOMEM), "cannot create '%s'", path);
    // The url matters: +faststart re-opens the finished file by it to move the index forward,
    // through io_open, which honours the whitelist set here.
    int ret = ff.avformat_alloc_output_context2(ofmt, NULL, "mp4", url);
    ff.av_free(url);
    if (ret < 0) return ms_fail(errbuf, errlen, ret, ret, "cannot set up the MP4 muxer");
    (*ofmt)->protocol_whitelist = ff.av_strdup("file");
    if (!(*ofmt)->protocol_whitelist) return ms_fail(errbuf, errlen, AVERROR(ENOMEM), AVERROR(ENOMEM), "muxer");
    return 0;
}

int ms_write_error(char *errbuf, size_t errlen, int err, const char *what) {
    int code = err == AVERROR(ENOSPC) || err == AVERROR(EDQUOT) ? MS_ERROR_DISK_FULL : err;
    return ms_fail(errbuf, errlen, code, err, "%s", what);
}

int ms_start_output(AVFormatContext *ofmt, const char *in_path, const char *path, int faststart, int64_t index_space,
                    char *errbuf, size_t errlen) {
    int ret = ms_open_avio_output(in_path, path, &ofmt->pb, errbuf, errlen);
    if (ret < 0) return ret;
    AVDictionary *opts = NULL;
    if (faststart && index_space > 0) ff.av_dict_set_int(&opts, "moov_size", index_space, 0);
    else if (faststart) ff.av_dict_set(&opts, "movflags", "+faststart", 0);
    ms_log_clear();
    ret = ff.avformat_write_header(ofmt, &opts);
    ff.av_dict_free(&opts);
    return ret < 0 ? ms_write_error(errbuf, errlen, ret, "cannot write the MP4 header") : 0;
}

int ms_write_packet(AVFormatContext *ofmt, AVPacket *pkt, char *errbuf, size_t errlen) {
    int ret = ff.av_interleaved_write_frame(ofmt, pkt);  // takes the packet's reference
    return ret < 0 ? ms_write_error(errbuf, errlen, ret, "cannot write the output") : 0;
}

int ms_write_trailer(AVFormatContext *ofmt, char *errbuf, size_t errlen) {
    ms_log_clear();
    int ret = ff.av_write_trailer(ofmt);  // flushes, and returns the avio error if a write failed
    return ret < 0 ? ms_write_error(errbuf, errlen, ret, "cannot finish the output") : 0;
}

void ms_close_output(AVFormatContext **ofmt, const char *path, int failed) {
    if (!*ofmt) return;
    int created = (*ofmt)->pb != NULL;
    ff.avio_closep(&(*ofmt)->pb);
    ff.avformat_free_context(*ofmt);  // also deinitialises a muxer whose trailer was never written
    *ofmt = NULL;
    if (failed && created) ms_remove_partial(path);
}

void ms_writeback_start(ms_writeback *w, const char *path) {
    *w = (ms_writeback){.fd = open(path, O_RDONLY | O_CLOEXEC)};
}

void ms_writeback_note(ms_writeback *w, int64_t bytes) {
    w->pending += bytes;
    if (w->fd < 0 || w->pending < MS_WRITEBACK_STEP) return;
    w->pending = 0;
#ifdef __linux__
    sync_file_range(w->fd, 0, 0, SYNC_FILE_RANGE_WRITE);  // starts the writes, does not wait for them
#endif
}

void ms_writeback_end(ms_writeback *w) {
    if (w->fd >= 0) close(w->fd);
    w->fd = -1;
}

void ms_remove_partial(const char *path) {
    struct stat st;
    if (path && lstat(path, &st) == 0 && S_ISREG(st.st_mode)) unlink(path);
}

int64_t ms_file_size(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (int64_t)st.st_size : 0;
}

int ms_add_copy_stream(AVFormatContext *ofmt, const AVStream *ist, char *errbuf, size_t errlen) {
    AVStream *ost = ff.avformat_new_stream(ofmt, NULL);
    if (!ost) return ms_fail(errbuf, errlen, AVERROR(ENOMEM), AVERROR(ENOMEM), "stream");
    int ret = ff.avcodec_parameters_copy(ost->codecpar, ist->codecpar);
    for (int i = 0; ret >= 0 && i < ist->nb_side_data; i++) {  // display matrix and friends
        const AVPacketSideData *sd = &ist->side_data[i];
        uint8_t *copy = ff.av_stream_new_side_data(ost, sd->type, sd->size);
        if (!copy) ret = AVERROR(ENOMEM);
        else memcpy(copy, sd->data, sd->size);
    }
    if (ret >= 0) ret = ms_copy_stream_metadata(ist, ost);
    if (ret < 0) return ms_fail(errbuf, errlen, ret, ret, "stream");
    ost->codecpar->codec_tag = 0;  // let the MP4 muxer choose its own tag, but for HEVC's
    ms_set_mp4_tag(ost->codecpar);
    ost->time_base = ist->time_base;
    ost->avg_frame_rate = ist->avg_frame_rate;
    ost->sample_aspect_ratio = ist->sample_aspect_ratio;
    ost->disposition = ist->disposition & ~AV_DISPOSITION_ATTACHED_PIC;
    return 0;
}

void ms_set_mp4_tag(AVCodecParameters *par) {
    if (par->codec_id == AV_CODEC_ID_HEVC) par->codec_tag = MKTAG('h', 'v', 'c', '1');
}

int ms_copy_display_matrix(const AVStream *in, AVStream *out) {
    size_t size = 0;
    const uint8_t *m = ff.av_stream_get_side_data(in, AV_PKT_DATA_DISPLAYMATRIX, &size);
    if (!m) return 0;
    uint8_t *copy = ff.av_stream_new_side_data(out, AV_PKT_DATA_DISPLAYMATRIX, size);
    if (!copy) return AVERROR(ENOMEM);
    memcpy(copy, m, size);
    return 0;
}

int ms_copy_stream_metadata(const AVStream *in, AVStream *out) {
    return ff.av_dict_copy(&out->metadata, in->metadata, 0);
}

void ms_progress_start(ms_progress *p, ms_progress_fn fn, void *ctx, double total) {
    *p = (ms_progress){.fn = fn, .ctx = ctx, .total = total > 0 ? total : 0, .last_done = -1};
}

int ms_progress_report(ms_progress *p, double done) {
    if (!p->fn) return 0;
    int64_t now = ff.av_gettime_relative();
    if (p->last_done >= 0 && done < p->last_done + 0.25 && now < p->last_wall + 100000) return 0;
    p->last_done = done;
    p->last_wall = now;
    return p->fn(p->ctx, done, p->total) ? MS_ERROR_CANCELLED : 0;
}
