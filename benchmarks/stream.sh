#!/usr/bin/env bash
# An upload that streams the export: one clip exported in segments (ffmpeg.transcode, encoder pinned to core 0
# with taskset, moto's S3 on core 1) and uploaded to S3, once after the export (sequential) and once while it is
# written ("stream": true). First the export alone gives its encode time E and the file's size; the upload's
# bandwidth (--bwlimit) is then set so that the upload time U is about E. Each of ROUNDS paired rounds (sequential
# then streamed, fresh state folders) prints the item's time-to-uploaded (its seconds in --report); the medians
# and the median of per-round ratios streamed/sequential follow, against the goal streamed <= 0.6 x (E + U) (the
# floor is max(E, U)). Where the streamed time goes: the export ends, then the upload needs about one segment's
# bytes (the last segment is final only when it is encoded; SEGMENT_SECONDS, default 10) and part 1 (the head)
# at the limited rate; the line "after the export" compares the two. With LARGE_GIB > 0 a synthetic MP4 of that
# many GiB (the clip's streams copied over and over) is remuxed with a streaming upload (a remux of an MP4 streams
# like a segmented transcode), and the run's peak RSS is reported (/usr/bin/time) with its peak anonymous memory
# and where the memory is at the highest sampled RSS (the binary, Swift's libraries, the others, anonymous memory).
# A short setting that checks the script works:
#   SECONDS_OF_CLIP=12 ROUNDS=1 LARGE_GIB=0 benchmarks/stream.sh
# (ROUNDS=0 measures only the large upload.)
# Needs: ffmpeg (apt); moto (scripts/install-deps.sh). pipeline is built in release (PIPELINE=path runs that
# binary instead).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
SECONDS_OF_CLIP=${SECONDS_OF_CLIP:-60}
SEGMENT_SECONDS=${SEGMENT_SECONDS:-10}
LARGE_GIB=${LARGE_GIB:-4}
if [ -z "${PIPELINE:-}" ]; then
  swift build -c release --product pipeline >/dev/null
  PIPELINE=$PWD/.build/release/pipeline
fi
PEERS=$PWD/Tests/TestSupport/Peers
work=$(mktemp -d -p /var/tmp pipeline-stream-bench.XXXXXX)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
cd "$work"
wait_for() { for _ in $(seq 400); do eval "$1" && return 0; sleep 0.05; done; echo "gave up waiting for: $1" >&2; exit 1; }
mkdir -p peer
taskset -c 1 python3 "$PEERS/s3_server.py" "$work/peer" media > port 2>/dev/null &
pids+=($!)
wait_for "[ -s port ]"
s3_port=$(head -1 port)

clip() {  # seconds crf file
  mkdir -p "$(dirname "$3")"
  # Film grain (noise) keeps the export's bit rate high, so that the file spans many parts.
  ffmpeg -v error -f lavfi -i "testsrc2=size=1280x720:rate=30:duration=$1,noise=alls=8:allf=t" -f lavfi \
    -i "sine=frequency=440:duration=$1" -c:v libx264 -preset ultrafast -crf "$2" -pix_fmt yuv420p -c:a aac -shortest "$3"
}
clip "$SECONDS_OF_CLIP" 18 in/clip.mp4

workflow() {  # name stream(true|false|none) input-folder
  local upload=""
  if [ "$2" != none ]; then
    upload=",
  {\"id\": \"s3\", \"uses\": \"s3.upload\", \"after\": [\"export\"], \"stream\": $2, \"with\": {
   \"endpoint\": \"http://127.0.0.1:$s3_port\", \"bucket\": \"media\", \"key\": \"\${vars.round}/\${input.name}\",
   \"file\": \"\${export.path}\", \"partSize\": \"5MiB\", \"accessKeyId\": \"bench\", \"secretAccessKey\": \"bench\"}}"
  fi
  cat > "$1.json" <<JSON
{"version": 1, "name": "$1", "inputs": {"path": "$3"}, "vars": {"round": "0"}, "stages": [
  {"id": "export", "uses": "ffmpeg.transcode", "with": {"output": "out-\${vars.round}/\${input.stem}.mp4",
   "segmentSeconds": $SEGMENT_SECONDS, "threads": 1, "video": {"preset": "veryfast", "crf": 18}}}$upload
]}
JSON
}
workflow export none in
workflow sequential false in
workflow streamed true in

seconds_of() {  # report stage: the stage's seconds, or the item's when stage is "item"
  python3 -c '
import json, sys
item = json.load(open(sys.argv[1]))["items"][0]
if sys.argv[2] == "item":
    print(item["seconds"])
else:
    print(next(s["seconds"] for s in item["stages"] if s["stage"] == sys.argv[2]))' "$1" "$2"
}

# The paired rounds (not indented: they hold Python code).
if [ "$ROUNDS" -gt 0 ]; then
taskset -c 0 "$PIPELINE" run export.json --state state-export --report report-export.json >/dev/null
encode=$(seconds_of report-export.json export)
bytes=$(stat -c %s out-0/clip.mp4)
rate=$(python3 -c "import sys; print(max(1, int(int(sys.argv[1]) / float(sys.argv[2]))))" "$bytes" "$encode")
echo "streamed upload: ${SECONDS_OF_CLIP} s 720p clip, export $((bytes >> 20)) MiB in ${encode} s (E), upload limited to $((rate >> 10)) KiB/s (U ~ E)"

for round in $(seq 1 "$ROUNDS"); do
  for variant in sequential streamed; do
    taskset -c 0 "$PIPELINE" run "$variant.json" --state "state-$variant-$round" --var "round=$variant-$round" \
      --bwlimit "$rate" --report "report-$variant-$round.json" >/dev/null
  done
  sequential=$(seconds_of "report-sequential-$round.json" item)
  streamed=$(seconds_of "report-streamed-$round.json" item)
  upload=$(seconds_of "report-sequential-$round.json" s3)
  exported=$(seconds_of "report-streamed-$round.json" export)
  echo "$round $sequential $streamed $upload" >> rounds.txt
  printf "  round %d: sequential %6.2f s (upload %5.2f s), streamed %6.2f s (export %6.2f s, upload done %5.2f s after it)\n" \
    "$round" "$sequential" "$upload" "$streamed" "$exported" "$(python3 -c "import sys; print(float(sys.argv[1]) - float(sys.argv[2]))" "$streamed" "$exported")"
done
python3 -c '
import math, sys
size, rate, seconds, segment = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
segments = max(1, math.ceil(seconds / segment - 1e-9))
print(f"  after the export: at least its last segment ({size / segments / 2**20:.0f} MiB of {segments}) and part 1 (5 MiB) at "
      f"{rate / 2**20:.2f} MiB/s, {(size / segments + (5 << 20)) / rate:.1f} s, and the Complete")' \
  "$bytes" "$rate" "$SECONDS_OF_CLIP" "$SEGMENT_SECONDS"
python3 - rounds.txt "$encode" <<'PY'
import statistics, sys
rows = [list(map(float, line.split()[1:])) for line in open(sys.argv[1])]
encode = float(sys.argv[2])
sequential, streamed, upload = [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]
ratios = [b / a for a, b, _ in rows]
u = statistics.median(upload)
print(f"  time-to-uploaded, median: sequential {statistics.median(sequential):.2f} s, streamed {statistics.median(streamed):.2f} s")
print(f"  streamed/sequential, median of per-round ratios: {statistics.median(ratios):.2f}")
print(f"  streamed / (E + U) = {statistics.median(streamed):.2f} / ({encode:.2f} + {u:.2f}) = "
      f"{statistics.median(streamed) / (encode + u):.2f} (goal <= 0.60; floor max(E, U) = {max(encode, u):.2f} s)")
PY
fi

if [ "$LARGE_GIB" -gt 0 ]; then
  # The clip's streams copied end to end until the file is LARGE_GIB GiB (a stream copy runs at the disk's speed).
  loops=$(( (LARGE_GIB << 30) / $(stat -c %s in/clip.mp4) ))
  mkdir -p large
  ffmpeg -v error -stream_loop "$loops" -i in/clip.mp4 -c copy large/clip.mp4
  cat > large.json <<JSON
{"version": 1, "name": "large", "inputs": {"path": "large"}, "stages": [
  {"id": "export", "uses": "ffmpeg.remux", "with": {"output": "out-large/\${input.stem}.mp4"}},
  {"id": "s3", "uses": "s3.upload", "after": ["export"], "stream": true, "with": {
   "endpoint": "http://127.0.0.1:$s3_port", "bucket": "media", "key": "large/\${input.name}",
   "file": "\${export.path}", "accessKeyId": "bench", "secretAccessKey": "bench"}}
]}
JSON
  /usr/bin/time -f "%M %e" -o rss.txt taskset -c 0 "$PIPELINE" run large.json --state state-large >/dev/null &
  timer=$!
  pids+=("$timer")
  # Most of the RSS is shared library code mapped from files (Swift's runtime, FFmpeg's ~150 libraries): the
  # process's own memory is its anonymous part, sampled every 0.1 s. The mappings at the highest sampled RSS are
  # kept to say where the memory is.
  anon=0
  peak=0
  while kill -0 "$timer" 2>/dev/null; do
    pid=$(pgrep -P "$timer" | head -1 || true)
    now=$(awk '/^RssAnon:/ { print $2 }' "/proc/${pid:-0}/status" 2>/dev/null || echo 0)
    [ "${now:-0}" -gt "$anon" ] && anon=$now
    rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/${pid:-0}/status" 2>/dev/null || echo 0)
    if [ "${rss:-0}" -gt "$peak" ] && cp "/proc/${pid:-0}/smaps" peak-smaps.new 2>/dev/null; then
      peak=$rss
      mv peak-smaps.new peak-smaps
    fi
    sleep 0.1
  done
  wait "$timer"
  large=$(stat -c %s out-large/clip.mp4 2>/dev/null || echo 0)
  read -r rss wall < rss.txt
  echo "  peak RSS of a streamed upload of a $((large >> 20)) MiB remux: $((rss >> 10)) MiB, of which anonymous (the process's own, not shared library code; sampled every 0.1 s) $((anon >> 10)) MiB (the run took ${wall} s)"
  if [ -s peak-smaps ]; then python3 - peak-smaps "$(basename "$PIPELINE")" <<'PY'
import collections, re, sys
rss, anon = collections.Counter(), collections.Counter()
group = "anonymous"
for line in open(sys.argv[1]):
    if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
        fields = line.split()
        path = fields[5] if len(fields) > 5 else ""
        if not path.startswith("/"):
            group = "anonymous"  # heap, stacks, buffers, and the libraries' zeroed data
        elif path.rsplit("/", 1)[-1] == sys.argv[2]:
            group = "pipeline"
        elif "/lib/swift/" in path:
            group = "swift"
        else:
            group = "libraries"
    elif line.startswith("Rss:"):
        rss[group] += int(line.split()[1])
    elif line.startswith("Anonymous:"):
        anon[group] += int(line.split()[1])
mib = lambda kib: f"{kib / 1024:.1f}"
print(f"    at the highest sampled RSS ({mib(sum(rss.values()))} MiB): the pipeline binary {mib(rss['pipeline'])} MiB, "
      f"Swift's runtime and Foundation {mib(rss['swift'])} MiB, FFmpeg's and the other shared libraries "
      f"{mib(rss['libraries'])} MiB (their mapped files; relocated data, anonymous, "
      f"{mib(anon['pipeline'] + anon['swift'] + anon['libraries'])} MiB of the three), "
      f"other anonymous memory (heap, stacks, buffers) {mib(rss['anonymous'])} MiB")
PY
  fi
fi
