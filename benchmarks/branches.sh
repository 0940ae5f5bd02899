#!/usr/bin/env bash
# Branches within an item: one clip exported (ffmpeg.transcode with mode auto: the clip is H.264/AAC already, so
# it is remuxed and the stages after the export are most of the item's time), then a thumbnail, an S3 upload
# (moto) and a tus upload (tuspyserver), as three branches after the export (`"after": ["export"]`) against the same four stages
# chained. Prints each variant's item latency (the item's seconds in --report) over ROUNDS paired rounds (chained
# then branched, each with a fresh state folder, so that every stage runs), the medians, and the median of the
# per-round ratios chained/branched (above 1: branches are faster; the hosts drift, so rounds are paired). With
# --cpu-jobs 1 (the default on 2 cores) the thumbnail holds the one processor slot while both uploads run.
# Needs: ffmpeg (apt); moto, tuspyserver, uvicorn (scripts/install-deps.sh). pipeline is built in release
# (PIPELINE=path runs that binary instead).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-5}
SECONDS_OF_CLIP=${SECONDS_OF_CLIP:-20}
if [ -z "${PIPELINE:-}" ]; then
  swift build -c release --product pipeline >/dev/null
  PIPELINE=$PWD/.build/release/pipeline
fi
PEERS=$PWD/Tests/TestSupport/Peers
work=$(mktemp -d -p /dev/shm pipeline-branches-bench.XXXXXX)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
cd "$work"
wait_for() { for _ in $(seq 400); do eval "$1" && return 0; sleep 0.05; done; echo "gave up waiting for: $1" >&2; exit 1; }
start_peer() {  # script args... ; prints port
  mkdir -p "peer-$1"
  python3 "$PEERS/$1" "$work/peer-$1" "${@:2}" > "port-$1" 2>/dev/null &
  pids+=($!)
  wait_for "[ -s port-$1 ]"
  head -1 "port-$1"
}
s3_port=$(start_peer s3_server.py media)
tus_port=$(start_peer tus_server.py)

mkdir -p in
ffmpeg -v error -f lavfi -i "testsrc2=size=1280x720:rate=30:duration=$SECONDS_OF_CLIP" -f lavfi \
  -i "sine=frequency=440:duration=$SECONDS_OF_CLIP" -c:v libx264 -preset ultrafast -crf 10 -pix_fmt yuv420p -c:a aac -shortest in/clip.mp4

workflow() {  # name after-export after-thumbnail after-s3
  cat > "$1.json" <<JSON
{"version": 1, "name": "$1", "inputs": {"path": "in"}, "stages": [
  {"id": "export", "uses": "ffmpeg.transcode", "with": {"mode": "auto"}},
  {"id": "thumbnail", "uses": "ffmpeg.thumbnail", "after": ["export"], "with": {"file": "\${export.path}"}},
  {"id": "s3", "uses": "s3.upload", "after": [$3], "with": {"endpoint": "http://127.0.0.1:$s3_port", "bucket": "media",
   "key": "\${vars.round}/\${input.name}", "file": "\${export.path}", "partSize": "8MiB", "accessKeyId": "bench",
   "secretAccessKey": "bench"}},
  {"id": "tus", "uses": "tus.upload", "after": [$4], "with": {"endpoint": "http://127.0.0.1:$tus_port/files/",
   "file": "\${export.path}"}}
], "vars": {"round": "0"}}
JSON
}
workflow chained '"export"' '"thumbnail"' '"s3"'
workflow branched '"export"' '"export"' '"export"'

latency() {  # workflow round: prints the item's seconds
  "$PIPELINE" run "$1.json" --state "state-$1-$2" --var "round=$1-$2" --report "report-$1-$2.json" >/dev/null
  python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["items"][0]["seconds"])' "report-$1-$2.json"
}

echo "branches within an item: ${SECONDS_OF_CLIP} s 720p clip ($(du -m in/clip.mp4 | cut -f1) MiB), export (remux) then thumbnail + s3.upload (moto) + tus.upload (tuspyserver)"
for round in $(seq 1 "$ROUNDS"); do
  chained=$(latency chained "$round")
  branched=$(latency branched "$round")
  echo "$round $chained $branched" >> rounds.txt
  printf "  round %d: chained %6.2f s, branched %6.2f s\n" "$round" "$chained" "$branched"
done
python3 - rounds.txt <<'PY'
import statistics, sys
rows = [list(map(float, line.split()[1:])) for line in open(sys.argv[1])]
chained, branched = [r[0] for r in rows], [r[1] for r in rows]
ratios = [c / b for c, b in rows]
print(f"  item latency, median: chained {statistics.median(chained):.2f} s, branched {statistics.median(branched):.2f} s")
print(f"  chained/branched, median of per-round ratios: {statistics.median(ratios):.2f}")
PY
