#!/usr/bin/env bash
# The segments of one long source spread across workers (`pipeline worker --segments`), on this machine with each
# worker pinned to one core (taskset) and encoding with one thread:
#  1. One long source (LONG seconds of 640x360, veryfast, SEGMENT-second segments): the time from the workers'
#     start to the item's success with one worker and with two (goal: two ≥ 1.7× faster). ROUNDS paired rounds,
#     the median of the per-round ratios (the host's speed drifts).
#  2. A folder of the long source and eight SHORT-second clips on two workers: the makespan with the long source's
#     segments shared against today's whole-item distribution (no --segments) (goal ≤ 0.7×).
#  3. Quality: the shared encode and an unsegmented one with the same settings, each against the source: whole-file
#     PSNR and SSIM, size, and the worst per-frame PSNR within 12 frames of each join against the same frames of
#     the unsegmented encode (goals: PSNR ≤ 0.1 dB, SSIM ≤ 0.001, size within 1.5 %, near joins ≤ 1 dB).
#  4. Work lost per kill: two workers, one killed with -9 at a seeded moment, started again: unit encodes beyond
#     the plan's units, per kill (goal ≤ 1).
# PostgreSQL 15 runs in a temporary folder as the postgres user. pipeline is built in release (SKIP_BUILD=1 uses the
# release build as it is; PIPELINE=path another binary). Needs: postgresql-15, ffmpeg, util-linux (taskset), bc.
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/lib/postgres.sh
LONG=${LONG:-600}
SHORT=${SHORT:-20}
SEGMENT=${SEGMENT:-20}
ROUNDS=${ROUNDS:-3}
SEED=${SEED:-1}
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
command -v bc >/dev/null || $sudo apt-get install -y -qq bc >/dev/null
# PIPELINE=path runs that binary instead (the encodes are x264's work, whichever build calls it).
if [ -z "${PIPELINE:-}" ]; then
  [ -n "${SKIP_BUILD:-}" ] || swift build -c release --product pipeline >/dev/null
  PIPELINE=$PWD/.build/release/pipeline
fi
work=$(mktemp -d -p /tmp pipeline-farm-bench.XXXXXX)
chmod 755 "$work"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  pg_cleanup
  rm -rf "$work"
}
trap cleanup EXIT
now() { date +%s.%N; }
cd "$work"

pg_setup "$work"
psql_() { psql -h 127.0.0.1 -p "$pgport" -U pipeline -d "$1" -Atqc "$2"; }

clip() {  # seconds path pattern tone: the tone makes each clip's content its own (identical files are one item)
  ffmpeg -v error -f lavfi -i "$3=size=640x360:rate=25:duration=$1" -f lavfi -i "sine=frequency=$4:duration=$1" \
    -c:v libx264 -preset ultrafast -g 50 -c:a aac -shortest "$2"
}
mkdir -p long folder
clip "$LONG" long/master.mp4 testsrc2 440
cp long/master.mp4 folder/master.mp4
for i in 1 2 3 4 5 6 7 8; do clip "$SHORT" "folder/short-$i.mp4" smptebars $((500 + 50 * i)); done

workflow() {  # name input-folder output-folder
  cat > "$1.json" <<JSON
{"version": 1, "name": "$1", "inputs": {"path": "$2"}, "stages": [
  {"id": "export", "uses": "ffmpeg.transcode",
   "with": {"output": "$3/\${input.stem}.mp4", "video": {"preset": "veryfast", "crf": 23}, "threads": 1,
            "segmentSeconds": $SEGMENT}}
]}
JSON
}

# run_batch NAME INPUT WORKERS SEGMENTS(yes|no) [KILL_AT_UNITS]: submits, starts the workers pinned to cores 0..N-1,
# waits for every item; prints the seconds from the workers' start to the last success. Its exports are in out-NAME.
run_batch() {
  local name=$1 input=$2 count=$3 shared=$4 kill_at=${5:-}
  local url out items
  url=$(database "$name")
  out="$work/out-$name"  # absolute: submit refuses relative destinations
  workflow "$name" "$input" "$out"
  "$PIPELINE" submit "$name.json" --db "$url" >/dev/null
  items=$(ls "$input" | wc -l)
  local args=(worker --db "$url" --lease 5s --poll 100ms --jobs 1)
  if [ "$shared" != no ]; then
    mkdir -p "$work/segments-$name"
    args+=(--segments "$work/segments-$name")
  fi
  local started worker_pids=()
  started=$(now)
  for core in $(seq 0 $((count - 1))); do
    taskset -c "$core" "$PIPELINE" "${args[@]}" --artifacts "$work/artifacts-$name-$core" >"$work/log-$name-$core" 2>&1 &
    worker_pids+=($!)
    pids+=($!)
  done
  local killed=0
  while [ "$(psql_ "$name" "SELECT count(*) FROM items WHERE status = 'succeeded'")" -lt "$items" ]; do
    if [ -n "$kill_at" ] && [ "$killed" -eq 0 ]; then
      local done_units
      done_units=$(psql_ "$name" "SELECT count(*) FROM segment_units WHERE status = 'done'")
      if [ "${done_units:-0}" -ge "$kill_at" ]; then
        kill -9 "${worker_pids[0]}"
        wait "${worker_pids[0]}" 2>/dev/null || true
        cat "$work/log-$name-0" >>"$work/log-$name-killed"
        taskset -c 0 "$PIPELINE" "${args[@]}" --artifacts "$work/artifacts-$name-0" >"$work/log-$name-0" 2>&1 &
        worker_pids[0]=$!
        pids+=($!)
        killed=1
      fi
    fi
    sleep 0.2
  done
  local finished
  finished=$(now)
  for pid in "${worker_pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  echo "$finished - $started" | bc
}

median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

echo "== 1. one ${LONG} s source, ${SEGMENT} s segments: one worker against two (each pinned to a core, 1 thread)"
ratios=()
for round in $(seq 1 "$ROUNDS"); do
  one=$(run_batch "one$round" long 1 yes)
  two=$(run_batch "two$round" long 2 yes)
  ratio=$(echo "scale=3; $one / $two" | bc)
  ratios+=("$ratio")
  printf '  round %d: 1 worker %.1f s, 2 workers %.1f s, speed-up %.2f×\n' "$round" "$one" "$two" "$ratio"
done
printf '  median speed-up: %.2f× (goal ≥ 1.7×)\n' "$(printf '%s\n' "${ratios[@]}" | median)"
shared_output="$work/out-two$ROUNDS/master.mp4"

echo "== 2. the long source and eight ${SHORT} s clips on two workers: segments shared against whole items"
ratios=()
for round in $(seq 1 "$ROUNDS"); do
  whole=$(run_batch "whole$round" folder 2 no)
  spread=$(run_batch "spread$round" folder 2 yes)
  ratio=$(echo "scale=3; $spread / $whole" | bc)
  ratios+=("$ratio")
  printf '  round %d: whole items %.1f s, shared segments %.1f s, makespan ratio %.2f\n' "$round" "$whole" "$spread" "$ratio"
done
printf '  median makespan ratio: %.2f (goal ≤ 0.7)\n' "$(printf '%s\n' "${ratios[@]}" | median)"

echo "== 3. quality of the shared encode against an unsegmented one (same settings), each against the source"
cat > plain.json <<JSON
{"version": 1, "name": "plain", "inputs": {"path": "long"}, "stages": [
  {"id": "export", "uses": "ffmpeg.transcode",
   "with": {"output": "plain/\${input.stem}.mp4", "video": {"preset": "veryfast", "crf": 23}, "threads": 1,
            "segmentSeconds": 0}}
]}
JSON
"$PIPELINE" run plain.json --state "$work/plain-state" >/dev/null
measure() {  # encode → "psnr ssim size" and per-frame PSNR in $1.psnr
  local psnr ssim
  ffmpeg -v error -i "$1" -i long/master.mp4 -lavfi "[0:v][1:v]psnr=stats_file=$2" -f null - 2>/dev/null
  psnr=$(awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^psnr_avg:/) { split($i, p, ":"); if (p[2] != "inf") { s += p[2]; n++ } } } END { printf "%.4f", s / n }' "$2")
  ssim=$(ffmpeg -i "$1" -i long/master.mp4 -lavfi "[0:v][1:v]ssim" -f null - 2>&1 | sed -n 's/.*All:\([0-9.]*\).*/\1/p' | tail -1)
  echo "$psnr $ssim $(stat -c %s "$1")"
}
read -r s_psnr s_ssim s_size <<<"$(measure "$shared_output" shared.psnr)"
read -r p_psnr p_ssim p_size <<<"$(measure plain/master.mp4 plain.psnr)"
printf '  PSNR %.3f dB against %.3f dB (delta %.3f dB, goal ≤ 0.1)\n' "$s_psnr" "$p_psnr" "$(echo "$p_psnr - $s_psnr" | bc)"
printf '  SSIM %s against %s (delta %s, goal ≤ 0.001)\n' "$s_ssim" "$p_ssim" "$(echo "$p_ssim - $s_ssim" | bc)"
printf '  size %d against %d bytes (%+.2f %%, goal within 1.5 %%)\n' "$s_size" "$p_size" \
  "$(echo "scale=4; ($s_size - $p_size) * 100 / $p_size" | bc)"
# Joins at the segments' starts: frames within 12 of each multiple of SEGMENT seconds (starts are at keyframes,
# every 2 s in this source, so at the multiples themselves).
worst=$(paste -d' ' shared.psnr plain.psnr | awk -v seg="$SEGMENT" -v fps=25 '
  { split($1, n, ":"); frame = n[2] - 1
    for (i = 1; i <= NF; i++) if ($i ~ /^psnr_avg:/) { split($i, p, ":"); v[++k] = p[2] }
    joint = frame % (seg * fps); near = (frame >= seg * fps) && (joint <= 12 || seg * fps - joint <= 12)
    if (near && v[1] != "inf" && v[2] != "inf") { d = v[2] - v[1]; if (d > worst) worst = d }
    k = 0 }
  END { printf "%.3f", worst + 0 }')
printf '  worst per-frame PSNR loss within 12 frames of a join: %s dB (goal ≤ 1)\n' "$worst"

echo "== 4. work lost per kill (two workers, one killed with -9 at a seeded moment)"
units=$(( (LONG + SEGMENT - 1) / SEGMENT + 1 ))
RANDOM=$SEED
target=$(( units / 4 + RANDOM % (units / 2) ))
run_batch "kill" long 2 yes "$target" >/dev/null
encodes=$(cat "$work"/log-kill-* | grep -c -E "encoding (video-|audio)" || true)
printf '  %d unit encodes for %d units and 1 kill after %d units: %d unit(s) encoded again (goal ≤ 1)\n' \
  "$encodes" "$units" "$target" "$((encodes - units))"
