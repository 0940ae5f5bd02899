// The encoder's own PSNR of each frame of a transcode (encoder_psnr.c), for ms_transcode_options.encoder_psnr.
#pragma once
#include "ms_internal.h"

struct ms_quality_scores;

struct ms_encoder_psnr {
    int width, height;  ///< the encoded picture's size, for the planes' weights
    double *pending;    ///< scores of report lines whose packet has not come yet (NAN: a line without PSNR)
    int64_t pending_head, pending_count, pending_capacity;
    double *scores, *times;  ///< per packet written: its frame's score and its presentation time
    int64_t count, capacity, times_count, times_capacity;
    int unpaired;  ///< a packet came without a line, or a line without PSNR: no report
    int failed;    ///< out of memory
};

/// The packet of the oldest pending line came: kept (written), its frame's score is kept with `pts`; a range's
/// dropped pre- or post-roll frame is forgotten.
void ms_encoder_psnr_packet(ms_encoder_psnr *psnr, int64_t pts, int kept);
/// The scores of the frames written, in display order, into `out`; empty when the encoder reported none, or not for
/// every frame, when a line was left without its packet, or when memory ran out (the export stands without it).
void ms_encoder_psnr_finish(ms_encoder_psnr *psnr, struct ms_quality_scores *out);
/// Frees what `psnr` holds; the struct can be used again.
void ms_encoder_psnr_free(ms_encoder_psnr *psnr);
