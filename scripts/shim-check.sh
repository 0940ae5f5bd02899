#!/bin/sh
# Builds scripts/shim-check.c (and shim-check-routes.c, shim-check-encoder.c, shim-check-quality.c) against CMediaShim and runs it over samples/ (see shim-check.c).
#   scripts/shim-check.sh             the checks, and FFmpeg must print nothing on stderr
#   scripts/shim-check.sh --valgrind  the same under valgrind: no memory errors, no leaks
#   scripts/shim-check.sh [--valgrind] --quality-only   ms_quality's checks alone (shim-check-quality.c)
# Needs: gcc, pkg-config, FFmpeg 5.1+ dev packages, the ffmpeg/ffprobe CLI with libx265 and zscale (zimg) for the
# HDR clip, valgrind for --valgrind.
# SHIM_CHECK_KEEP=1 keeps the temporary folder with the outputs.
set -eu
cd "$(dirname "$0")/.."
LIBS="libavformat libavcodec libavutil libswscale libswresample"
work=$(mktemp -d "${TMPDIR:-/tmp}/shim-check.XXXXXX")
if [ "${SHIM_CHECK_KEEP:-0}" = 1 ]; then echo "outputs in $work"; else trap 'rm -rf "$work"' EXIT; fi

# Every codec context and filter graph carries the log route of the operation it is made for: the shim makes them
# only through log.c's ms_new_codec_context and ms_new_filter_graph, never with FFmpeg's allocators elsewhere.
if grep -n "avcodec_alloc_context3(\|avfilter_graph_alloc(" Sources/CMediaShim/*.c |
    grep -v "^Sources/CMediaShim/log.c:"; then
    echo "FAIL: a codec context or filter graph made without its log route (ms_new_codec_context, ms_new_filter_graph)"
    exit 1
fi

# libvmaf (Sources/CVMAF, upstream's code: built without our warning flags), for ms_quality.
vmaf="-D_GNU_SOURCE -DOC_NEW_STYLE_INCLUDES -ISources/CVMAF/include -ISources/CVMAF/src -ISources/CVMAF/src/feature"
mkdir -p "$work/vmaf"
# src/x86 (the CPU check) only on x86_64, as Package.swift builds it.
skipped=/none; [ "$(uname -m)" = x86_64 ] || skipped='*/x86/*'
for source in $(find Sources/CVMAF/src -name '*.c' ! -path "$skipped"); do
    # shellcheck disable=SC2086  # $vmaf is a list of flags
    gcc -std=gnu11 -g -O1 $vmaf -ISources/CVMAF/src/feature/common -c "$source" \
        -o "$work/vmaf/$(echo "$source" | tr / _).o"
done
# Its AVX2 code as Package.swift's CVMAFx86 builds it: without flags, the AVX2 target by pragma (avx2_target.h;
# nothing on another architecture).
for source in Sources/CVMAFx86/*.c; do
    # shellcheck disable=SC2086
    gcc -std=gnu11 -g -O1 $vmaf -ISources/CVMAF/src/feature/common -c "$source" \
        -o "$work/vmaf/$(echo "$source" | tr / _).o"
done
# shellcheck disable=SC2086
g++ -g -O1 $vmaf -c Sources/CVMAF/src/svm.cpp -o "$work/vmaf/svm.o"

# shellcheck disable=SC2046  # pkg-config output is a list of flags
gcc -std=gnu11 -g -O1 -Wall -Wextra -Werror -ISources/CMediaShim/include -ISources/CVMAF/include \
    Sources/CMediaShim/*.c scripts/shim-check.c scripts/shim-check-routes.c scripts/shim-check-encoder.c \
    scripts/shim-check-quality.c \
    "$work"/vmaf/*.o $(pkg-config --cflags --libs $LIBS) -lpthread -lm -lstdc++ \
    -o "$work/shim-check"

# Inputs that are not committed samples: an audio-only file, a full-range (yuvj420p) MJPEG AVI
# (shim-check turns a copy into an unknown codec), an HDR (PQ) clip with audio and a subtitle, and a sample whose
# name has a colon.
ffmpeg -nostdin -v error -f lavfi -i sine=d=1 -c:a aac "$work/audio-only.m4a"
ffmpeg -nostdin -v error -f lavfi -i testsrc2=s=320x240:r=25:d=1 -c:v mjpeg -pix_fmt yuvj420p "$work/mjpeg.avi"
printf '1\n00:00:00,100 --> 00:00:00,400\nHDR\n' > "$work/hdr.srt"
ffmpeg -nostdin -v error -f lavfi -i testsrc2=s=320x240:r=25:d=0.5 -f lavfi -i sine=d=0.5 -i "$work/hdr.srt" \
    -c:v libx265 -preset ultrafast -x265-params log-level=error -pix_fmt yuv420p10le -color_primaries bt2020 \
    -color_trc smpte2084 -colorspace bt2020nc -c:a aac -c:s srt "$work/hdr-subtitled.mkv"
cp samples/clip-no-audio.mp4 "$work/a:b.mp4"
# For ms_quality (shim-check-quality.c): a lossless 12-frame reference, an encode of it, one at a smaller size, one
# cut to 6 frames, a 10-bit clip, a 2 s clip to cancel, and MJPEG that switches from yuvj420p to yuvj444p at frame 10.
ffmpeg -nostdin -v error -f lavfi -i testsrc2=s=160x96:r=24:d=0.5 -c:v libx264 -qp 0 -pix_fmt yuv420p \
    "$work/quality-ref.mp4"
ffmpeg -nostdin -v error -i "$work/quality-ref.mp4" -c:v libx264 -crf 35 "$work/quality-dist.mp4"
ffmpeg -nostdin -v error -i "$work/quality-ref.mp4" -vf scale=80:48 -c:v libx264 -crf 23 "$work/quality-small.mp4"
ffmpeg -nostdin -v error -i "$work/quality-ref.mp4" -frames:v 6 -c copy "$work/quality-short.mp4"
ffmpeg -nostdin -v error -f lavfi -i testsrc2=s=160x96:r=24:d=0.25 -c:v ffv1 -pix_fmt yuv420p10le \
    "$work/quality-10bit.mkv"
ffmpeg -nostdin -v error -f lavfi -i testsrc2=s=160x96:r=24:d=2 -c:v libx264 -crf 23 "$work/quality-long.mp4"
for format in yuvj420p yuvj444p; do
    ffmpeg -nostdin -v error -f lavfi -i testsrc2=s=160x96:r=25:d=0.4 -c:v mjpeg -pix_fmt $format -f mjpeg - \
        >>"$work/quality-switching.mjpeg"
done

status=0
"$work/shim-check" "$@" samples "$work" 2> "$work/stderr" || status=$?
case " $* " in
*" --valgrind "*)
    grep -E "ERROR SUMMARY|definitely lost|indirectly lost|possibly lost|still reachable|All heap" "$work/stderr" || true
    ;;
*)
    if [ -s "$work/stderr" ]; then
        echo "FAIL: something was printed on stderr:"; cat "$work/stderr"; status=1
    fi
    ;;
esac
[ $status -eq 0 ] || { tail -n 40 "$work/stderr"; echo "shim-check: exit status $status"; }
exit $status
