#!/usr/bin/env bash
# Batches, in one run:
#  - FILES small files (default 100,000) through two cheap stages (`set`): the first run's throughput next to
#    `xargs -P` running a per-file command (cksum) over the same files; the no-op rerun; `pipeline plan`;
#    the state folder's size per item; peak RSS; the time of a checkpointed stage transition (fsync).
#  - the sampled fingerprint of a 4 GiB file (`pipeline plan` over it, page cache dropped when allowed).
#  - 8 clips transcoded and uploaded (http.upload to the Sandbox under --bwlimit): wall time with the
#    per-resource limits (--jobs 8, one encode at a time, 4 transfers) against --jobs 1 and against
#    --jobs 8 with every stage unbounded (--cpu-jobs 8).
# The no-op rerun and the plan are also guarded: their CPU time (user + sys, the least of ROUNDS rounds,
# default 3) is printed against the figure recorded for FILES in benchmarks/batch-recorded.txt, and a figure
# more than 25 % over its record is flagged as a regression (the script then exits 1, after all its parts).
# FILES=1000000 measures a million files (about 4 GB of inodes in /tmp: check `df -i`). PIPELINE names another
# binary to measure (the release build is made otherwise); FILES_ONLY=1 measures the small files only.
# Needs ffmpeg (the CLI, to make the clips) and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/lib/batch-files.sh
FILES=${FILES:-100000}
ROUNDS=${ROUNDS:-3}
recorded=$PWD/benchmarks/batch-recorded.txt
if [ -z "${PIPELINE:-}" ]; then
  swift build -c release --product pipeline >/dev/null
  PIPELINE=$PWD/.build/release/pipeline
fi
PIPELINE=$(realpath "$(command -v "$PIPELINE")")
regressed=0
work=$(mktemp -d)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
cd "$work"

measure() {  # prints "seconds peak-KiB"
  /usr/bin/time -f "%e %M" -o time.txt "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; cat time.txt >&2; exit 1; }
  tail -1 time.txt
}

cpu_measure() {  # prints "wall-seconds cpu-seconds peak-KiB" (CPU: user + sys)
  /usr/bin/time -f "%e %U %S %M" -o time.txt "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; cat time.txt >&2; exit 1; }
  tail -1 time.txt | awk '{ printf "%s %.2f %s\n", $1, $2 + $3, $4 }'
}

# Prints a guarded figure next to its record ("rerun" or "plan" for FILES in batch-recorded.txt) and flags it
# when it is more than 25 % over the record.
against_record() {  # what cpu-seconds wall-seconds
  local what=$1 cpu=$2 wall=$3 record
  record=$(awk -v n="$FILES" -v w="$what" '$1 == n && $2 == w { print $3 }' "$recorded")
  if [ -z "$record" ]; then
    printf "  %-26s no recorded figure for %s files; now %.2f s CPU (%.2f s wall)\n" "$what:" "$FILES" "$cpu" "$wall"
    return
  fi
  local verdict
  verdict=$(awk -v r="$record" -v c="$cpu" 'BEGIN { d = (c - r) * 100 / r; printf "%+.0f %%%s", d, (d > 25 ? " REGRESSION (over +25 %)" : "") }')
  printf "  %-26s recorded %.2f s CPU, now %.2f s CPU (%.2f s wall): %s\n" "$what:" "$record" "$cpu" "$wall" "$verdict"
  case $verdict in *REGRESSION*) regressed=1 ;; esac
}

echo "== $FILES small files, two cheap stages"
make_batch "$FILES"
read -r run_s run_kb < <(measure "$PIPELINE" run wf.json --jobs 8)
read -r idle_s idle_kb < <(measure "$PIPELINE" run wf.json --jobs 8)
read -r plan_s plan_kb < <(measure "$PIPELINE" plan wf.json)
state_bytes=$(du -sb .pipeline | cut -f1)
read -r xargs_s xargs_kb < <(measure sh -c "find in -type f -print0 | xargs -0 -P 2 -n 1 cksum")
# Checkpointed stage transitions one at a time (--jobs 1: no group commit), over the first 1,000 files:
# each transition is one synced commit (the stage's start is recorded with its end), and so are an item's
# admission and its finish.
read -r one_s _ < <(measure "$PIPELINE" run wf.json --input in/d000 --state one-at-a-time --jobs 1)
transitions=$((FILES * 2))
awk -v n="$FILES" -v t="$transitions" -v os="$one_s" -v rs="$run_s" -v rk="$run_kb" -v is="$idle_s" -v ik="$idle_kb" \
    -v ps="$plan_s" -v pk="$plan_kb" -v sb="$state_bytes" -v xs="$xargs_s" -v xk="$xargs_kb" 'BEGIN {
  printf "  pipeline run (--jobs 8):   %7.2f s  %8.0f items/s  %5.3f ms/stage transition  peak RSS %6.1f MiB\n", rs, n/rs, rs*1000/t, rk/1024
  printf "  xargs -P 2 cksum:          %7.2f s  %8.0f items/s                             peak RSS %6.1f MiB\n", xs, n/xs, xk/1024
  printf "  no-op rerun:               %7.2f s                                             peak RSS %6.1f MiB\n", is, ik/1024
  printf "  pipeline plan:             %7.2f s                                             peak RSS %6.1f MiB\n", ps, pk/1024
  printf "  state folder:              %7.1f MiB, %5.0f bytes per item\n", sb/1048576, sb/n
  # Each item is four synced commits one after another (admission, two stage transitions, finish): charging
  # the whole command (start-up, discovery and plan included) to them bounds the cost of one from above.
  printf "  --jobs 1 over 1,000 files: %7.2f s  at most %5.3f ms per synced commit (4,000: 2,000 stage transitions, 1,000 admissions, 1,000 finishes)\n", os, os*1000/4000
}'
echo "== guarded: the least CPU time of $ROUNDS rounds (rerun and plan alternated), against $recorded"
for _ in $(seq "$ROUNDS"); do
  read -r w c _ < <(cpu_measure "$PIPELINE" run wf.json --jobs 8)
  echo "$c $w" >> rerun-rounds.txt
  read -r w c _ < <(cpu_measure "$PIPELINE" plan wf.json)
  echo "$c $w" >> plan-rounds.txt
done
# shellcheck disable=SC2046
against_record rerun $(sort -n rerun-rounds.txt | head -1)
# shellcheck disable=SC2046
against_record plan $(sort -n plan-rounds.txt | head -1)
rm -rf in .pipeline one-at-a-time
if [ -n "${FILES_ONLY:-}" ]; then
  exit "$regressed"
fi

echo "== sampled fingerprint of a 4 GiB file"
mkdir big
if fallocate -l 4G big/4g.bin 2>/dev/null; then
  # fallocate leaves unwritten extents (reads as zeros without touching the disk): write real data where
  # the sampled blocks fall, and all over, so the reads are real reads.
  dd if=/dev/urandom of=big/4g.bin bs=64M count=64 conv=notrunc status=none
else
  dd if=/dev/urandom of=big/4g.bin bs=64M count=64 status=none
fi
cat > big.json <<'JSON'
{"version": 1, "name": "bench-big", "inputs": {"path": "big"}, "stages": [{"id": "x", "uses": "set", "with": {}}]}
JSON
# Milliseconds a command takes (`time` counts in hundredths of a second, too coarse here).
elapsed_ms() {
  local start
  start=$(date +%s%N)
  "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; return 1; }
  echo $((($(date +%s%N) - start) / 1000000))
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# Each figure is a plan over the 4 GiB file minus a plan over one tiny file, the median of 5 rounds.
tiny() { elapsed_ms "$PIPELINE" plan wf.json --input wf.json --state empty-state; }
big() { elapsed_ms "$PIPELINE" plan big.json --state empty-state; }
"$PIPELINE" plan big.json --state empty-state >/dev/null  # start-up and page cache warm
warm=() cold=()
for _ in 1 2 3 4 5; do
  t=$(tiny)
  b=$(big)
  warm+=($((b - t)))
  if sync && { echo 3 > /proc/sys/vm/drop_caches; } 2>/dev/null; then
    # The binary and its libraries are read back first: only the sampled blocks come from the disk.
    tiny >/dev/null
    t=$(tiny)
    b=$(big)
    cold+=($((b - t)))
  fi
done
cold_text="(page cache not dropped: not allowed here)"
[ ${#cold[@]} -gt 0 ] && cold_text="$(printf '%s\n' "${cold[@]}" | median) ms from disk (rounds: ${cold[*]})"
echo "  plan over one 4 GiB file minus plan over one tiny file: $(printf '%s\n' "${warm[@]}" | median) ms from the page cache (rounds: ${warm[*]}), $cold_text"
rm -rf big

echo "== 8 clips: transcode, then upload to the Sandbox at --bwlimit 4MiB"
mkdir clips
for i in 1 2 3 4 5 6 7 8; do
  ffmpeg -v error -y -f lavfi -i "testsrc2=size=1280x720:rate=30:duration=8" -f lavfi -i "sine=frequency=$((300 + i * 50)):duration=8" \
    -c:v libx264 -preset veryfast -crf 18 -c:a aac -shortest "clips/clip$i.mp4"
done
"$PIPELINE" sandbox --port 18190 --data "$work/sandbox" > sandbox.log 2>&1 &
pids+=($!)
for _ in $(seq 100); do grep -q "^sandbox: " sandbox.log 2>/dev/null && break; sleep 0.1; done
cat > clips.json <<'JSON'
{"version": 1, "name": "bench-clips", "inputs": {"path": "clips"},
 "stages": [
  {"id": "export", "uses": "ffmpeg.transcode", "with": {"profile": "web-720p"}},
  {"id": "asset", "uses": "http.request", "with": {"method": "POST", "url": "http://127.0.0.1:18190/generic/assets",
    "headers": {"Authorization": "Bearer sandbox-token"}, "json": {"name": "${input.stem}", "size": "${export.size}"},
    "outputs": {"url": "/upload_url"}}},
  {"id": "upload", "uses": "http.upload", "with": {"url": "${asset.url}", "file": "${export.path}"}}
 ]}
JSON
for mode in "limits:--jobs 8" "one-at-a-time:--jobs 1" "unbounded:--jobs 8 --cpu-jobs 8 --transfers 8"; do
  name=${mode%%:*}
  # shellcheck disable=SC2086
  read -r s kb < <(measure "$PIPELINE" run clips.json --state "state-$name" --bwlimit 4MiB ${mode#*:})
  printf "  %-14s %-40s %7.2f s  peak RSS %6.1f MiB\n" "$name" "(${mode#*:})" "$s" "$((kb / 1024))"
done
exit "$regressed"
