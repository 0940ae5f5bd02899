#!/usr/bin/env bash
# What a run costs around an encode: `pipeline run` of ffmpeg.transcode against the ffmpeg CLI with the same settings
# (-c:v libx264 -preset veryfast -crf 23 -c:a aac -movflags +faststart, threads chosen by libavcodec in both) on
# a 1 s and a 10 s 720p clip (CLIPS="1 10"). ROUNDS (default 20) paired rounds with INTERVAL seconds (default 1)
# of rest before every run; the one that goes first swaps every round. Every pipeline run starts from a new state
# folder (the ledger is made, as on a first run), removed outside the timing, as is each output. Wall and CPU time
# come from wait4 (microseconds; /usr/bin/time rounds CPU to 10 ms). Prints per clip the medians of each program's
# wall and CPU time and the medians of the per-round ratios pipeline / CLI (goal: both ≤ 1.02), each with a seeded
# bootstrap 95 % interval, and the rounds' wall ratios. A transcode reports x264's own PSNR of every frame by default
# (`qualityReport`), so the CLI is given `-flags +psnr`, which has x264 compute the same (the streams are the same
# either way); QUALITY_REPORT=0 turns both off.
# TIMELINE=1 instead traces one run of each on the first clip with strace and prints, in ms from exec, when the input
# and the output are opened, every fsync/fdatasync (with the file and how long it took), the renames and the exit.
# PIPELINE=path skips the release build.
set -euo pipefail
cd "$(dirname "$0")/.."
. benchmarks/measure.sh
ROUNDS=${ROUNDS:-20}
INTERVAL=${INTERVAL:-1}
CLIPS=${CLIPS:-1 10}
set_up_bench

report=$([ "${QUALITY_REPORT:-1}" = 1 ] && echo true || echo false)
cat >transcode.json <<JSON
{"version": 1, "name": "bench-startup", "stages": [{"id": "export", "uses": "ffmpeg.transcode",
 "with": {"output": "out/\${input.stem}.mp4", "video": {"preset": "veryfast", "crf": 23}, "qualityReport": $report}}]}
JSON
cli_args=(-c:v libx264 -preset veryfast -crf 23 -c:a aac -movflags +faststart)
[ "$report" = false ] || cli_args=(-flags +psnr "${cli_args[@]}")

timed() {  # runs a command; prints "wall cpu" in seconds, from wait4; fails when the command fails
  python3 - "$@" <<'PY'
import os, sys, time
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    fd = os.open(os.devnull, os.O_WRONLY)
    os.dup2(fd, 1); os.dup2(fd, 2)
    os.execvp(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - start
if os.waitstatus_to_exitcode(status) != 0:
    sys.exit(f"failed: {' '.join(sys.argv[1:])}")
print(f"{wall:.4f} {usage.ru_utime + usage.ru_stime:.4f}")
PY
}

run_pipeline() {  # clip
  rm -rf state out
  sleep "$INTERVAL"
  timed "$PIPELINE" run transcode.json --input "$1" --state state
}
run_cli() {  # clip
  rm -f cli.mp4
  sleep "$INTERVAL"
  timed ffmpeg -v error -y -i "$1" "${cli_args[@]}" cli.mp4
}

timeline() {  # label trace-file: the moments that matter, in ms from the exec
  awk -v label="$1" '
    /execve\(/ && !t0 { t0 = $2 }
    { ms = ($2 - t0) * 1000 }
    /openat\(.*clip-[0-9]+\.mp4/ && /= [0-9]/ && !input { input = 1; printf "  %s %7.1f ms  input opened\n", label, ms }
    /openat\(.*(out\/|cli\.mp4)/ && /O_CREAT/ && !output { output = 1; printf "  %s %7.1f ms  output opened\n", label, ms }
    /(fsync|fdatasync)\(/ {
      match($0, /<[^>]*>/); file = substr($0, RSTART + 1, RLENGTH - 2); sub(/.*\//, "", file)
      match($0, /<[0-9.]+>$/); took = substr($0, RSTART + 1, RLENGTH - 2) * 1000
      call = $3; sub(/\(.*/, "", call)
      printf "  %s %7.1f ms  %s %s (%.1f ms)\n", label, ms, call, file, took; syncs++ }
    /rename(at2?)?\(/ && /= 0/ { printf "  %s %7.1f ms  rename\n", label, ms }
    /\+\+\+ exited/ && $1 == pid0 { printf "  %s %7.1f ms  exit (%d syncs)\n", label, ms, syncs }
    !pid0 { pid0 = $1 }' "$2"
}

for seconds in $CLIPS; do
  ffmpeg -v error -y -f lavfi -i "testsrc2=size=1280x720:rate=30:duration=$seconds" \
    -f lavfi -i "sine=frequency=440:duration=$seconds" -c:v libx264 -preset ultrafast -crf 18 -c:a aac -shortest \
    "clip-$seconds.mp4"
done

if [ "${TIMELINE:-0}" = 1 ]; then
  clip=clip-${CLIPS%% *}.mp4
  trace=(strace -f -ttt -T -y -e trace=execve,openat,fsync,fdatasync,rename,renameat,renameat2,exit_group)
  rm -rf state out
  "${trace[@]}" -o p-trace.txt "$PIPELINE" run transcode.json --input "$clip" --state state >/dev/null 2>&1
  "${trace[@]}" -o c-trace.txt ffmpeg -v error -y -i "$clip" "${cli_args[@]}" cli.mp4
  echo "timeline of $clip under strace (slower than without it)"
  timeline pipeline p-trace.txt
  timeline "ffmpeg  " c-trace.txt
  exit 0
fi

echo "start-up: $ROUNDS paired rounds, ${INTERVAL} s rest before each run"
for seconds in $CLIPS; do
  clip=clip-$seconds.mp4
  : >rounds.txt
  for round in $(seq "$ROUNDS"); do
    if [ $((round % 2)) = 1 ]; then
      p=$(run_pipeline "$clip")
      c=$(run_cli "$clip")
    else
      c=$(run_cli "$clip")
      p=$(run_pipeline "$clip")
    fi
    echo "$p $c" >>rounds.txt
  done
  awk '{ print $1 / $3 }' rounds.txt >wall-ratio.txt
  awk '{ print $2 / $4 }' rounds.txt >cpu-ratio.txt
  printf '%s s 720p: pipeline %.3f s wall %.3f s CPU | ffmpeg CLI %.3f s wall %.3f s CPU (medians)\n' "$seconds" \
    "$(cut -d' ' -f1 rounds.txt | median)" "$(cut -d' ' -f2 rounds.txt | median)" \
    "$(cut -d' ' -f3 rounds.txt | median)" "$(cut -d' ' -f4 rounds.txt | median)"
  printf '  wall ratio %s\n  CPU ratio %s\n' "$(spread <wall-ratio.txt)" "$(spread <cpu-ratio.txt)"
  printf '  per round (wall ratio): %s\n' "$(awk '{ printf "%.3f ", $1 }' wall-ratio.txt)"
done
