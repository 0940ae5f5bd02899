#!/usr/bin/env bash
# Runs the concurrency-heavy tests under ThreadSanitizer: the runner (items in parallel, checkpoint
# journals), the stage SDK, parallel tus parts, S3 parts in flight, the upload body's write window, the
# Sandbox's upload sessions, and the C shim's threads (the transcode's decode thread, the ladder, the streamed
# remux's gate, FFmpeg's log lines routed per operation; the shim is instrumented, FFmpeg's own code is not). Its own build folder (.build-tsan) keeps the normal build intact; the
# first run builds everything with instrumentation (several minutes on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
filter='RunnerTests|StageSDKTests|TusUploadTests|S3UploadTests|FileChunksTests|PresignedUploadTests|MediaToolkitTests|StreamedRemuxTests|LadderTranscodeTests|ConcurrentLogTests'
# halt_on_error makes the first race fail the run instead of scrolling past.
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/scripts/tsan.supp}"
swift build --build-tests --sanitize=thread --scratch-path .build-tsan
swift test --skip-build --sanitize=thread --scratch-path .build-tsan --no-parallel --filter "$filter"
