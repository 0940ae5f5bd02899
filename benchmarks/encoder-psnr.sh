#!/usr/bin/env bash
# What the default quality report costs: the shim's transcode (built here with gcc -O2, as a release build compiles
# it) of a 720p clip with libx264 veryfast CRF 23, without and with the encoder's PSNR of each frame
# (ms_transcode_options.encoder_psnr), in pairs whose order alternates; prints each pair and the median of the
# per-pair ratios (with / without) of wall time and of CPU time, and checks that both outputs hold the same stream.
#   CLIP_SECONDS=10 PAIRS=10 THREADS=0 benchmarks/encoder-psnr.sh
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${CLIP_SECONDS:-10}
pairs=${PAIRS:-10}
threads=${THREADS:-0}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

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
gcc -O2 -ISources/CMediaShim/include benchmarks/shim-transcode.c "$work"/*.o -o "$work/shim-transcode" \
  -ldl -lpthread -lm -lstdc++

ffmpeg -nostdin -v error -f lavfi -i "testsrc2=size=1280x720:rate=30:duration=$seconds" -c:v libx264 -qp 0 \
  -pix_fmt yuv420p "$work/clip.mp4"

measure() {  # psnr(0|1) output: prints "wall cpu" in seconds
  local start=$EPOCHREALTIME
  SHIM_PSNR=$1 /usr/bin/time -f "%U %S" -o "$work/time.txt" "$work/shim-transcode" "$work/clip.mp4" "$2" h264 \
    veryfast 23 "$threads" >"$work/out-$1.txt"
  local end=$EPOCHREALTIME
  awk -v s="$start" -v e="$end" '{ printf "%.3f %.2f\n", e - s, $1 + $2 }' "$work/time.txt"
}
echo "$seconds s 1280x720 30 fps, libx264 veryfast CRF 23, threads $threads, $pairs pairs (order alternating)"
: >"$work/ratios.txt"
for pair in $(seq "$pairs"); do
  if [ $((pair % 2)) = 1 ]; then
    without=$(measure 0 "$work/without.mp4"); with=$(measure 1 "$work/with.mp4")
  else
    with=$(measure 1 "$work/with.mp4"); without=$(measure 0 "$work/without.mp4")
  fi
  echo "pair $pair: without $without, with $with (wall s, CPU s)"
  echo "$without $with" | awk '{ printf "%.4f %.4f\n", $3 / $1, $4 / $2 }' >>"$work/ratios.txt"
done
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "median ratio with / without: wall $(cut -d' ' -f1 "$work/ratios.txt" | median), CPU $(cut -d' ' -f2 "$work/ratios.txt" | median)"
echo "reported: $(cat "$work/out-1.txt")"
a=$(ffmpeg -nostdin -v error -i "$work/without.mp4" -map 0:v -c copy -f md5 -)
b=$(ffmpeg -nostdin -v error -i "$work/with.mp4" -map 0:v -c copy -f md5 -)
echo "video streams identical: $([ "$a" = "$b" ] && echo yes || echo "NO ($a, $b)")"
