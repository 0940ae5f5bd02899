#!/usr/bin/env bash
# ffmpeg.transcode in 10 s segments against the same transcode in one pass, same machine, same run, same
# settings (preset veryfast, crf 23), on a 60 s 1080p clip: wall time, CPU time, size and SSIM against the
# source, over ROUNDS (default 3) alternating rounds. Besides the medians, each round's segmented encode is
# compared with that round's one pass: a shared host's speed drifts by tens of percent from minute to minute,
# and the median of these paired ratios is what that drift disturbs least. Then the work a crash loses: the
# segmented transcode is killed
# with -9 at seeded random moments (SEED, default 1; printed) and rerun until done; the CPU time of all runs
# beyond one uninterrupted run, per kill, against the CPU time of one segment.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product pipeline >/dev/null
PIPELINE=$PWD/.build/release/pipeline
SEED=${SEED:-1}
ROUNDS=${ROUNDS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

ffmpeg -v error -y -f lavfi -i "testsrc2=size=1920x1080:rate=30:duration=60" -f lavfi -i "sine=frequency=440:duration=60" \
  -c:v libx264 -preset ultrafast -crf 18 -c:a aac -shortest clip.mp4
workflow() {  # name segmentSeconds
  cat <<JSON
{"version": 1, "name": "$1", "stages": [{"id": "export", "uses": "ffmpeg.transcode",
  "with": {"output": "out/$1.mp4", "segmentSeconds": $2, "video": {"preset": "veryfast", "crf": 23}}}]}
JSON
}
workflow whole 0 > whole.json
workflow segmented 10 > segmented.json
workflow jobs2 '10, "segmentJobs": 2' > jobs2.json
measure() {  # prints "wall cpu"
  local start=$EPOCHREALTIME
  /usr/bin/time -f "%U %S" -o time.txt "$@" >/dev/null 2>&1 || true
  local end=$EPOCHREALTIME
  awk -v wall="$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.2f", e - s }')" '{ printf "%s %.2f\n", wall, $1 + $2 }' time.txt
}
median() { sort -n "$1" | sed -n "$(( ($(wc -l < "$1") + 1) / 2 ))p"; }
ssim() { ffmpeg -i "$1" -i clip.mp4 -lavfi ssim -f null - 2>&1 | sed -n 's/.*All:\([0-9.]*\).*/\1/p'; }

: > whole.txt; : > segmented.txt; : > jobs2.txt
for round in $(seq "$ROUNDS"); do
  measure "$PIPELINE" run whole.json --input clip.mp4 --state state-whole --fresh >> whole.txt
  measure "$PIPELINE" run segmented.json --input clip.mp4 --state state-segmented --fresh >> segmented.txt
  measure "$PIPELINE" run jobs2.json --input clip.mp4 --state state-jobs2 --fresh >> jobs2.txt
  echo "round $round (wall CPU): one pass $(tail -1 whole.txt), segments $(tail -1 segmented.txt), segmentJobs 2 $(tail -1 jobs2.txt)"
done
read -r jw jc <<<"$(median jobs2.txt)"
read -r ww wc <<<"$(median whole.txt)"
read -r sw sc <<<"$(median segmented.txt)"
wsize=$(stat -c %s out/whole.mp4); ssize=$(stat -c %s out/segmented.mp4)
wssim=$(ssim out/whole.mp4); sssim=$(ssim out/segmented.mp4)
awk -v jw="$jw" -v jc="$jc" -v ww="$ww" -v wc="$wc" -v sw="$sw" -v sc="$sc" -v wz="$wsize" -v sz="$ssize" -v wq="$wssim" -v sq="$sssim" 'BEGIN {
  printf "one pass      %6.2f s wall %7.2f s CPU %9d bytes SSIM %.5f\n", ww, wc, wz, wq
  printf "10 s segments %6.2f s wall %7.2f s CPU %9d bytes SSIM %.5f\n", sw, sc, sz, sq
  printf "segmented / one pass: wall %+.1f %%, CPU %+.1f %%, size %+.2f %%, SSIM %+.5f\n",
    (sw / ww - 1) * 100, (sc / wc - 1) * 100, (sz / wz - 1) * 100, sq - wq
  printf "segmentJobs 2 %6.2f s wall %7.2f s CPU: wall %+.1f %% against one segment at a time\n", jw, jc, (jw / sw - 1) * 100 }'
paste whole.txt segmented.txt | awk '{ printf "%.4f %.4f\n", ($3 / $1 - 1) * 100, ($4 / $2 - 1) * 100 }' > paired.txt
wall_ratios=$(cut -d" " -f1 paired.txt | sort -n | tr "\n" " ")
cpu_ratios=$(cut -d" " -f2 paired.txt | sort -n | tr "\n" " ")
middle=$(( ($(wc -l < paired.txt) + 1) / 2 ))
printf "segmented / one pass, round by round: wall %s(median %+.1f %%), CPU %s(median %+.1f %%)\n" \
  "$(printf "%+.1f " $wall_ratios)" "$(echo $wall_ratios | tr " " "\n" | sed -n "${middle}p")" \
  "$(printf "%+.1f " $cpu_ratios)" "$(echo $cpu_ratios | tr " " "\n" | sed -n "${middle}p")"

# Work lost per crash: kill -9 at seeded moments within the segmented run, rerun until it finishes.
echo "seed $SEED"
RANDOM=$SEED
kills=0; total=0
rm -rf state-crash out/segmented.mp4
while :; do
  delay=$(awk -v r=$RANDOM -v w="$sw" 'BEGIN { printf "%.2f", 2 + r / 32767 * (w / 2) }')
  start=$EPOCHREALTIME
  /usr/bin/time -f "%U %S" -o time.txt "$PIPELINE" run segmented.json --input clip.mp4 --state state-crash >/dev/null 2>&1 &
  timer=$!
  if [ "$kills" -lt 3 ]; then
    sleep "$delay"
    pkill -9 -f "^$PIPELINE run segmented.json" && kills=$((kills + 1)) || true
  fi
  wait "$timer" || true
  # A killed run's time.txt starts with "Command terminated by signal 9".
  total=$(awk -v t="$total" '$1 ~ /^[0-9.]+$/ { t += $1 + $2 } END { printf "%.2f", t }' time.txt)
  [ -f out/segmented.mp4 ] && break
done
awk -v total="$total" -v one="$sc" -v kills="$kills" 'BEGIN {
  printf "%d kills: %.2f s CPU over all runs, one run %.2f s: %.2f s lost per crash; one segment is %.2f s of CPU\n",
    kills, total, one, (total - one) / (kills ? kills : 1), one / 6 }'
