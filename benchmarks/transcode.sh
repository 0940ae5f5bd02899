#!/usr/bin/env bash
# ffmpeg.transcode and ffmpeg.remux against the ffmpeg CLI, same machine, same run, same settings
# (-c:v libx264 -preset veryfast -crf 23 -c:a aac -movflags +faststart). Prints wall time, CPU time,
# peak RSS and the ratio pipeline/CLI for a 10 s 720p and a 60 s 1080p clip (medians of alternating
# runs: 5 transcodes of the short clip, 3 of the long one, 9 remuxes of each), then
# a batch: 20 clips remuxed by one `pipeline run` over their folder against 20 runs of the CLI.
# The pipeline's figures include what the CLI does not do: the output is fsynced before it is renamed
# into place, and the run's state is checkpointed (fsynced) before and after the stage.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product pipeline >/dev/null
PIPELINE=$PWD/.build/release/pipeline
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

make_clip() {  # seconds size name
  ffmpeg -v error -y -f lavfi -i "testsrc2=size=$2:rate=30:duration=$1" -f lavfi -i "sine=frequency=440:duration=$1" \
    -c:v libx264 -preset ultrafast -crf 18 -c:a aac -shortest "$3"
}
measure() {  # prints "wall cpu peak-KiB" (wall to the millisecond: a remux takes a tenth of a second)
  local start=$EPOCHREALTIME
  /usr/bin/time -f "%U %S %M" -o time.txt "$@" >/dev/null 2>&1
  local end=$EPOCHREALTIME
  awk -v wall="$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.3f", e - s }')" '{ printf "%s %.2f %s\n", wall, $1 + $2, $3 }' time.txt
}
workflow() {  # mode
  cat <<JSON
{"version": 1, "name": "bench-$1", "stages": [{"id": "export", "uses": "ffmpeg.$1", "with": {"output": "out/\${input.stem}.$1.mp4"$( [ "$1" = transcode ] && echo ', "video": {"preset": "veryfast", "crf": 23}' )}}]}
JSON
}
workflow transcode > transcode.json
workflow remux > remux.json
report() {  # label pipeline-figures cli-figures
  read -r pw pc pm <<<"$2"
  read -r cw cc cm <<<"$3"
  awk -v l="$1" -v pw="$pw" -v pc="$pc" -v pm="$pm" -v cw="$cw" -v cc="$cc" -v cm="$cm" 'BEGIN {
    printf "%-24s pipeline %7.3f s wall %6.2f s CPU %6.1f MiB | ffmpeg CLI %7.3f s wall %6.2f s CPU %6.1f MiB | wall ratio %.2f\n",
      l, pw, pc, pm/1024, cw, cc, cm/1024, pw/cw }'
}

median() {  # file of "wall cpu peak" lines: the line with the median wall time
  sort -n "$1" | sed -n "$(( ($(wc -l < "$1") + 1) / 2 ))p"
}
for spec in "10 1280x720 clip720 5" "60 1920x1080 clip1080 3"; do
  read -r seconds size name runs <<<"$spec"
  make_clip "$seconds" "$size" "$name.mp4"
  : > transcode-p.txt; : > transcode-c.txt
  for _ in $(seq "$runs"); do
    measure "$PIPELINE" run transcode.json --input "$name.mp4" --state "state-t-$name" --fresh >> transcode-p.txt
    measure ffmpeg -v error -y -i "$name.mp4" -c:v libx264 -preset veryfast -crf 23 -c:a aac -movflags +faststart "cli-$name.mp4" >> transcode-c.txt
  done
  report "transcode ${seconds}s $size" "$(median transcode-p.txt)" "$(median transcode-c.txt)"
  : > remux-p.txt; : > remux-c.txt
  for _ in $(seq 9); do
    measure "$PIPELINE" run remux.json --input "$name.mp4" --state "state-r-$name" --fresh >> remux-p.txt
    measure ffmpeg -v error -y -i "$name.mp4" -c copy -movflags +faststart "cli-copy-$name.mp4" >> remux-c.txt
  done
  report "remux ${seconds}s $size" "$(median remux-p.txt)" "$(median remux-c.txt)"
done

mkdir -p batch cli-batch
for i in $(seq -w 20); do cp clip720.mp4 "batch/clip$i.mp4"; done
p=$(measure "$PIPELINE" run remux.json --input batch --state state-batch --fresh)
c=$(measure sh -c 'for f in batch/*.mp4; do ffmpeg -v error -y -i "$f" -c copy -movflags +faststart "cli-batch/${f##*/}"; done')
report "remux 20 × 10s 1280x720" "$p" "$c"
