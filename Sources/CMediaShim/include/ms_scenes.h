// CMediaShim's scene-change detection: where a video's shots change, so that a segmented encode can start its
// segments there. Part of the API that CMediaShim.h describes (its rules hold here), which includes this header.
#ifndef C_MEDIA_SHIM_SCENES_H
#define C_MEDIA_SHIM_SCENES_H

#include "ms_transcode.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The scene changes of a video, in display order.
typedef struct ms_scene_changes {
    /// `count` times (seconds from the input's start, as ms_keyframes and a transcode's range count them), each the
    /// presentation time of the first frame of a new scene (malloc'd; free with ms_scene_changes_free).
    double *times;
    /// `count` scores, one per time: libavfilter's `scdet` score (0–100) of that frame against the one before.
    double *scores;
    int64_t count;
    /// The video frames scored.
    int64_t frames;
} ms_scene_changes;

/// Decodes the best video stream of `path` and scores every frame against the one before with libavfilter's
/// `scdet` (the lesser of the pictures' mean absolute difference and its change from the pair before: a cut scores
/// high, motion and a fade low), keeping the frames that score `threshold` or more (scdet's default is 10). To keep it cheap the
/// pictures are scored as gray at `height` lines at most (0: the source's), scaled with a fast bilinear filter, and
/// the decoder skips its loop filter (H.264, HEVC): a cut changes the whole picture, which neither hides.
/// `cb` (may be NULL) reports the seconds scored and may cancel (MS_ERROR_CANCELLED). On success `out` holds the
/// changes; on failure it is empty.
/// Errors: as ms_probe, MS_ERROR_NO_VIDEO, MS_ERROR_NO_FRAMES, MS_ERROR_UNSUPPORTED_CODEC, MS_ERROR_CANCELLED,
/// MS_ERROR_FFMPEG_UNAVAILABLE (libavfilter).
int ms_scene_detect(const char *path, double threshold, int height, ms_progress_fn cb, void *ctx,
                    ms_scene_changes *out, char *errbuf, size_t errlen);

/// Frees what ms_scene_detect returned and empties `changes`; NULL-safe.
void ms_scene_changes_free(ms_scene_changes *changes);

#ifdef __cplusplus
}
#endif

#endif
