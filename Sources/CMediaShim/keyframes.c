// ms_keyframes: where the video's keyframes are, from the container's index (no decoding).
#include "ms_internal.h"

int ms_keyframes(const char *path, double *times, int capacity, char *errbuf, size_t errlen) {
    int ret = ms_begin(errbuf, errlen);
    if (ret < 0) return ret;
    if (!path || capacity < 0 || (capacity > 0 && !times))
        return ms_fail(errbuf, errlen, MS_ERROR_INVALID_ARGUMENT, MS_ERROR_INVALID_ARGUMENT, "ms_keyframes");
    AVFormatContext *ifmt = NULL;
    AVPacket *pkt = NULL;
    if ((ret = ms_open_input(path, &ifmt, errbuf, errlen)) < 0) return ret;
    int v = ms_find_video_stream(ifmt);
    if (v < 0) {
        ret = ms_fail(errbuf, errlen, MS_ERROR_NO_VIDEO, MS_ERROR_NO_VIDEO, "'%s'", path);
        goto done;
    }
    AVStream *st = ifmt->streams[v];
    // The index holds decode times; a keyframe is shown later by the stream's composition delay (B-frames),
    // which the first keyframe packet tells.
    int64_t delay = 0;
    if (!(pkt = ff.av_packet_alloc())) {
        ret = ms_fail(errbuf, errlen, AVERROR(ENOMEM), AVERROR(ENOMEM), "ms_keyframes");
        goto done;
    }
    for (int read = 0; read < 500 && ff.av_read_frame(ifmt, pkt) >= 0; read++) {
        int found = pkt->stream_index == v && (pkt->flags & AV_PKT_FLAG_KEY);
        if (found && pkt->pts != AV_NOPTS_VALUE && pkt->dts != AV_NOPTS_VALUE) delay = pkt->pts - pkt->dts;
        ff.av_packet_unref(pkt);
        if (found) break;
    }
    int64_t start = ff.av_rescale_q(ifmt->start_time != AV_NOPTS_VALUE ? ifmt->start_time : 0, AV_TIME_BASE_Q,
                                    st->time_base);
    int entries = ff.avformat_index_get_entries_count(st), count = 0;
    for (int i = 0; i < entries; i++) {
        const AVIndexEntry *entry = ff.avformat_index_get_entry(st, i);
        if (!entry || !(entry->flags & AVINDEX_KEYFRAME)) continue;
        if (count < capacity) times[count] = ms_seconds(entry->timestamp + delay - start, st->time_base);
        count++;
    }
    ret = count;
done:
    ff.av_packet_free(&pkt);
    ff.avformat_close_input(&ifmt);
    return ret;
}
