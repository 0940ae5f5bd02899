// The shim's scene-change detection alone: `scenes.sh` times it on a clip.
// Usage: shim-scenes FILE HEIGHT; prints "<changes> <frames>" and each change's time and score.
#include "CMediaShim.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s FILE HEIGHT (0: the source's)\n", argv[0]);
        return 2;
    }
    if (ms_abi_version() != MS_ABI_VERSION) {
        fprintf(stderr, "shim-scenes: the shim's ABI is %d, this program's %d\n", ms_abi_version(), MS_ABI_VERSION);
        return 2;
    }
    ms_scene_changes changes;
    char message[1024];
    if (ms_scene_detect(argv[1], 10, atoi(argv[2]), NULL, NULL, &changes, message, sizeof message) < 0) {
        fprintf(stderr, "shim-scenes: %s\n", message);
        return 1;
    }
    printf("%lld %lld", (long long)changes.count, (long long)changes.frames);
    for (int64_t i = 0; i < changes.count; i++) printf(" %.3f:%.1f", changes.times[i], changes.scores[i]);
    printf("\n");
    ms_scene_changes_free(&changes);
    return 0;
}
