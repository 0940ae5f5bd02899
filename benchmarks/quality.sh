#!/usr/bin/env bash
# What a quality report costs: ms_quality (the shim's C, built here with gcc -O2 as a release build compiles it)
# on a 720p clip against its CRF 23 encode, per metric, in seconds per minute of video (wall and CPU, median of
# ROUNDS; VMAF with libvmaf's AVX2 code where the CPU has it, and again on its C paths alone), beside imageio-ffmpeg's
# FFmpeg with libvmaf (upstream's build, with its AVX2 code) on the same pair.
# Then the per-title part: quality.target's CRF search over a corpus against one fixed CRF
# (benchmarks/lib/quality-per-title.sh); `benchmarks/quality.sh per-title` runs that part alone, `measure` the first.
#   CLIP_SECONDS=20 ROUNDS=3 THREADS=1 benchmarks/quality.sh [measure|per-title]
set -euo pipefail
cd "$(dirname "$0")/.."
part=${1:-all}
if [ "$part" = per-title ]; then exec benchmarks/lib/quality-per-title.sh; fi
seconds=${CLIP_SECONDS:-20}
rounds=${ROUNDS:-3}
threads=${THREADS:-1}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

vmaf="-D_GNU_SOURCE -DOC_NEW_STYLE_INCLUDES -ISources/CVMAF/include -ISources/CVMAF/src -ISources/CVMAF/src/feature"
vmaf="$vmaf -ISources/CVMAF/src/feature/common"
# src/x86 (the CPU check) only on x86_64, as Package.swift builds it.
not_x86=(); [ "$(uname -m)" = x86_64 ] || not_x86=(-not -path '*/x86/*')
for source in $(find Sources/CVMAF/src -name '*.c' "${not_x86[@]}"); do
  # shellcheck disable=SC2086  # $vmaf is a list of flags
  gcc -std=gnu11 -O2 $vmaf -c "$source" -o "$work/$(echo "$source" | tr / _).o"
done
# The AVX2 code, as Package.swift's CVMAFx86 builds it: without flags, the AVX2 target by pragma (avx2_target.h).
for source in Sources/CVMAFx86/*.c; do
  # shellcheck disable=SC2086
  gcc -std=gnu11 -O2 $vmaf -c "$source" -o "$work/$(echo "$source" | tr / _).o"
done
for source in Sources/CMediaShim/*.c; do
  gcc -std=gnu11 -O2 -ISources/CMediaShim/include -ISources/CVMAF/include -c "$source" \
    -o "$work/$(echo "$source" | tr / _).o"
done
# shellcheck disable=SC2086
g++ -O2 $vmaf -c Sources/CVMAF/src/svm.cpp -o "$work/svm.o"
gcc -O2 -ISources/CMediaShim/include benchmarks/shim-quality.c "$work"/*.o -o "$work/shim-quality" \
  -ldl -lpthread -lm -lstdc++

ffmpeg -nostdin -v error -f lavfi -i "testsrc2=size=1280x720:rate=30:duration=$seconds" -c:v libx264 -qp 0 \
  -pix_fmt yuv420p "$work/reference.mp4"
ffmpeg -nostdin -v error -i "$work/reference.mp4" -c:v libx264 -preset veryfast -crf 23 "$work/encode.mp4"
independent=$(python3 -c "import imageio_ffmpeg; print(imageio_ffmpeg.get_ffmpeg_exe())" 2>/dev/null || true)

source benchmarks/lib/timing.sh
echo "$seconds s 1280x720 30 fps, CRF 23 veryfast encode, $threads thread(s), median of $rounds"
for metric in vmaf ssim psnr; do
  median_per_minute "ms_quality $metric" "$work/shim-quality" "$work/reference.mp4" "$work/encode.mp4" "$metric" \
    "$threads"
  echo "  mean and frames: $(cat "$work/out.txt")"
done
median_per_minute "ms_quality vmaf, C paths only" "$work/shim-quality" "$work/reference.mp4" "$work/encode.mp4" \
  vmaf "$threads" c
echo "  mean and frames: $(cat "$work/out.txt")"
median_per_minute "decoding both files (ffmpeg CLI)" ffmpeg -nostdin -v error -threads "$threads" \
  -i "$work/encode.mp4" -threads "$threads" -i "$work/reference.mp4" -map 0:v -map 1:v -f null -
if [ -n "$independent" ]; then
  median_per_minute "imageio-ffmpeg libvmaf (AVX2)" "$independent" -nostdin -v error -threads "$threads" \
    -i "$work/encode.mp4" -threads "$threads" -i "$work/reference.mp4" \
    -lavfi "libvmaf=n_threads=$threads:log_fmt=json:log_path=$work/vmaf.json" -f null -
  python3 -c "import json; print('  mean:', json.load(open('$work/vmaf.json'))['pooled_metrics']['vmaf']['mean'])"
fi
[ "$part" = measure ] || benchmarks/lib/quality-per-title.sh
