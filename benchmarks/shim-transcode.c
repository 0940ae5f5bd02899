// The shim's transcode alone, without the pipeline around it: `codecs.sh` with SHIM=1 runs it beside `pipeline`
// and the ffmpeg CLI, so a difference splits into what the encode itself costs (this against the CLI) and what the
// pipeline does around it (the pipeline against this: its start, ledger, probes and the output's fsync).
// Usage: shim-transcode INPUT OUTPUT ENCODER OPTIONS CRF THREADS (OPTIONS as TranscodeSettings writes them).
#include "CMediaShim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    if (argc != 7) {
        fprintf(stderr, "usage: %s INPUT OUTPUT ENCODER OPTIONS CRF THREADS\n", argv[0]);
        return 2;
    }
    ms_prepare_process();
    ms_transcode_options options;
    ms_transcode_options_init(&options);
    snprintf(options.video_encoder, sizeof options.video_encoder, "%s", argv[3]);
    snprintf(options.video_options, sizeof options.video_options, "%s", argv[4]);
    options.crf = atoi(argv[5]);
    options.threads = atoi(argv[6]);
    char message[1024] = "";
    int status = ms_transcode(argv[1], argv[2], &options, NULL, NULL, NULL, message, sizeof message);
    if (status != 0) fprintf(stderr, "shim-transcode: %s\n", message);
    return status == 0 ? 0 : 1;
}
