#!/usr/bin/env bash
# An HDR export: a 4K HLG clip (10-bit HEVC, BT.2020, CLIP_SECONDS long) exported at 720p with the web-720p profile
# (tone-mapped into SDR BT.709, x264 veryfast, THREADS threads), against the ffmpeg CLI running FFmpeg's usual CPU
# recipe at the source's size and scaling after it (zscale to linear light, tonemap, zscale back, then scale), with
# the same encoder settings. The pipeline scales in linear light before the tone curve, so its float steps run at
# 720p. Rounds pair the two, the one that goes first swapping every round (the hosts drift within minutes); prints the median wall time, CPU time and peak
# RSS of each and the median of the per-round wall ratios. PIPELINE=path skips the release build.
set -euo pipefail
cd "$(dirname "$0")/.."
. benchmarks/measure.sh
ROUNDS=${ROUNDS:-3}
THREADS=${THREADS:-1}
CLIP_SECONDS=${CLIP_SECONDS:-2}
set_up_bench

ffmpeg -v error -y -f lavfi -i "testsrc2=size=3840x2160:rate=30:duration=$CLIP_SECONDS" -c:v libx265 -preset ultrafast \
  -x265-params log-level=error -pix_fmt yuv420p10le -color_trc arib-std-b67 -color_primaries bt2020 \
  -colorspace bt2020nc hlg.mp4
cat > hdr.json <<JSON
{"version": 1, "name": "bench-hdr", "stages": [{"id": "export", "uses": "ffmpeg.transcode",
  "with": {"output": "out/\${input.stem}.mp4", "profile": "web-720p", "threads": $THREADS, "video": {"preset": "veryfast"}}}]}
JSON
graph="zscale=t=linear:npl=100,format=gbrpf32le,zscale=p=bt709,tonemap=tonemap=hable:desat=0,zscale=t=bt709:m=bt709:r=tv"
graph="$graph,format=yuv420p,scale=1280:720:flags=bicubic"


: > p.txt; : > c.txt; : > ratio.txt
run_pipeline() { rm -rf out; measure "$PIPELINE" run hdr.json --input hlg.mp4 --state "state-$1" --fresh; }
run_cli() {
  measure ffmpeg -v error -y -threads "$THREADS" -i hlg.mp4 -filter_threads "$THREADS" -vf "$graph" -c:v libx264 \
    -preset veryfast -crf 23 -threads "$THREADS" -an cli.mp4
}
for round in $(seq "$ROUNDS"); do
  if [ $((round % 2)) = 1 ]; then  # the one that goes first swaps every round
    p=$(run_pipeline "$round")
    c=$(run_cli)
  else
    c=$(run_cli)
    p=$(run_pipeline "$round")
  fi
  [ -s out/hlg.mp4 ] || { echo "the pipeline's export is missing" >&2; exit 1; }
  echo "$p" >> p.txt
  echo "$c" >> c.txt
  awk -v p="${p%% *}" -v c="${c%% *}" 'BEGIN { print p / c }' >> ratio.txt
done
printf 'HDR 4K HLG -> 720p SDR, %s s: pipeline %6.2f s wall %6.2f s CPU %6.1f MiB | ffmpeg CLI (tone map at 4K, then scale) %6.2f s wall %6.2f s CPU %6.1f MiB | wall ratio %.2f\n' \
  "$CLIP_SECONDS" "$(cut -d' ' -f1 p.txt | median)" "$(cut -d' ' -f2 p.txt | median)" "$(cut -d' ' -f3 p.txt | median | awk '{ print $1 / 1024 }')" \
  "$(cut -d' ' -f1 c.txt | median)" "$(cut -d' ' -f2 c.txt | median)" "$(cut -d' ' -f3 c.txt | median | awk '{ print $1 / 1024 }')" \
  "$(median < ratio.txt)"
