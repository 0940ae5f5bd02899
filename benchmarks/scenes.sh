#!/usr/bin/env bash
# What cutting segments at scene changes costs (`segmentCuts: scenes`): ms_scene_detect (the shim's C, built here
# with gcc -O2 as a release build compiles it) on a 720p and a 1080p clip with a cut every few seconds, scored at
# 180 lines (the default) and at the source's size, beside decoding the clip alone and encoding it as a default
# `ffmpeg.transcode` does (libx264, its medium preset, CRF 23), in seconds per minute of video (wall and CPU,
# median of ROUNDS). The clips are made of lavfi's testsrc2, mandelbrot, smptebars and life in turn, so the cuts
# are known: the detected ones are printed.
#   CLIP_SECONDS=20 ROUNDS=3 benchmarks/scenes.sh
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${CLIP_SECONDS:-20}
rounds=${ROUNDS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The shim and libvmaf, which it links, as benchmarks/quality.sh builds them.
vmaf="-D_GNU_SOURCE -DOC_NEW_STYLE_INCLUDES -ISources/CVMAF/include -ISources/CVMAF/src -ISources/CVMAF/src/feature"
vmaf="$vmaf -ISources/CVMAF/src/feature/common"
not_x86=(); [ "$(uname -m)" = x86_64 ] || not_x86=(-not -path '*/x86/*')
for source in $(find Sources/CVMAF/src -name '*.c' "${not_x86[@]}") Sources/CVMAFx86/*.c; do
  # shellcheck disable=SC2086  # $vmaf is a list of flags
  gcc -std=gnu11 -O2 $vmaf -c "$source" -o "$work/$(echo "$source" | tr / _).o"
done
for source in Sources/CMediaShim/*.c; do
  gcc -std=gnu11 -O2 -ISources/CMediaShim/include -ISources/CVMAF/include -c "$source" \
    -o "$work/$(echo "$source" | tr / _).o"
done
# shellcheck disable=SC2086
g++ -O2 $vmaf -c Sources/CVMAF/src/svm.cpp -o "$work/svm.o"
gcc -O2 -ISources/CMediaShim/include benchmarks/shim-scenes.c "$work"/*.o -o "$work/shim-scenes" \
  -ldl -lpthread -lm -lstdc++

source benchmarks/lib/timing.sh

scene=$(awk -v s="$seconds" 'BEGIN { print s / 4 }')
for size in 1280x720 1920x1080; do
  clip="$work/clip-$size.mp4"
  rate="size=$size:rate=30"
  ffmpeg -nostdin -v error -f lavfi -i "testsrc2=$rate:duration=$scene" -f lavfi -i "mandelbrot=$rate" \
    -f lavfi -i "smptebars=$rate:duration=$scene" -f lavfi -i "life=$rate:mold=10:ratio=0.5" \
    -filter_complex "[1]trim=duration=$scene,setpts=PTS-STARTPTS[m];[3]trim=duration=$scene,setpts=PTS-STARTPTS,format=yuv420p[l];[0][m][2][l]concat=n=4:v=1:a=0[v]" \
    -map "[v]" -c:v libx264 -preset veryfast -crf 18 -g 60 -x264-params scenecut=0 "$clip"
  echo "$seconds s $size 30 fps (x264 veryfast CRF 18, a cut every $scene s), median of $rounds"
  median_per_minute "scene changes at 180 lines" "$work/shim-scenes" "$clip" 180
  echo "    found (changes frames time:score...): $(cat "$work/out.txt")"
  median_per_minute "scene changes at the source's size" "$work/shim-scenes" "$clip" 0
  median_per_minute "decoding alone (ffmpeg CLI)" ffmpeg -nostdin -v error -i "$clip" -f null -
  median_per_minute "encoding (x264 medium CRF 23, CLI)" ffmpeg -nostdin -v error -i "$clip" -c:v libx264 \
    -preset medium -crf 23 -f mp4 -y "$work/encode.mp4"
done
