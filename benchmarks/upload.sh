#!/usr/bin/env bash
# Upload throughput and memory, on loopback, in one run:
#  - tus.upload vs curl sending the same file to the same tuspyserver (three alternating runs each);
#  - s3.upload vs `aws s3 cp` and rclone, same part size (8 MiB) and concurrency (4), same moto server,
#    three rounds in rotating order: total time, and the parts phase apart from moto's slow
#    CompleteMultipartUpload (from the server's own timeline);
#  - peak RSS of `pipeline` for a 1 GiB and a 4 GiB http.upload to the Sandbox (must not grow with the
#    file), with curl's figures beside it.
# Needs: rclone, awscli (pip), tuspyserver/uvicorn/moto (scripts/install-deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in rclone; do
  command -v $tool >/dev/null || { sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo; $sudo apt-get install -y -qq $tool >/dev/null; }
done
python3 -c "import awscli" 2>/dev/null || python3 -m pip install -q awscli
swift build -c release --product pipeline >/dev/null
PIPELINE=$PWD/.build/release/pipeline
PEERS=$PWD/Tests/TestSupport/Peers
work=$(mktemp -d)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
cd "$work"
dd if=/dev/urandom of=1g.bin bs=1M count=1024 status=none
/usr/bin/time -f "%M" -o base.txt "$PIPELINE" --help >/dev/null 2>&1
echo "pipeline's own footprint (pipeline --help): peak RSS $(( $(tail -1 base.txt) / 1024 )) MiB"
measure() {  # prints "seconds peak-KiB"
  /usr/bin/time -f "%e %M" -o time.txt "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; cat time.txt >&2; }
  tail -1 time.txt
}
start_peer() {  # script args... ; prints port
  python3 "$PEERS/$1" "$work/peer-$RANDOM" "${@:2}" > "port-$1" 2>/dev/null &
  pids+=($!)
  for _ in $(seq 100); do [ -s "port-$1" ] && break; sleep 0.1; done
  head -1 "port-$1"
}
mb_s() { awk -v b="$1" -v s="$2" 'BEGIN { printf "%.0f MB/s", b / s / 1e6 }'; }
size=$((1 << 30))

echo "== tus (tuspyserver) 1 GiB"
tus=$(start_peer tus_server.py)
curl -sS -X POST "http://127.0.0.1:$tus/files/" -H "Tus-Resumable: 1.0.0" -H "Upload-Length: 1" \
  -H "Upload-Metadata: filename d2FybQ==,filetype YXBwbGljYXRpb24vb2N0ZXQtc3RyZWFt" -o /dev/null  # warm-up
cat > tus.json <<JSON
{"version": 1, "name": "bench-tus", "stages": [{"id": "up", "uses": "tus.upload", "with": {"endpoint": "http://127.0.0.1:$tus/files/"}}]}
JSON
curl_tus() {
  location=$(curl -sS -i -X POST "http://127.0.0.1:$tus/files/" -H "Tus-Resumable: 1.0.0" -H "Upload-Length: $size" \
    -H "Upload-Metadata: filename MWcuYmlu,filetype YXBwbGljYXRpb24vb2N0ZXQtc3RyZWFt" | tr -d '\r' | awk -F': ' 'tolower($1)=="location" {print $2}')
  curl -sS -X PATCH "$location" -H "Tus-Resumable: 1.0.0" -H "Upload-Offset: 0" -H "Content-Type: application/offset+octet-stream" \
    -H "Expect:" -T 1g.bin -o /dev/null
}
export -f curl_tus; export tus size
for _ in 1 2 3; do  # alternating, then the medians
  read -r s kb < <(measure "$PIPELINE" run tus.json --input 1g.bin --state state-tus --fresh)
  echo "tus.upload $s $kb" >> tus-runs.txt
  read -r s kb < <(measure bash -c curl_tus)
  echo "curl $s $kb" >> tus-runs.txt
done
python3 - tus-runs.txt <<'PY'
import statistics, sys
runs = [line.split() for line in open(sys.argv[1])]
for tool in ("tus.upload", "curl"):
    seconds = sorted(float(r[1]) for r in runs if r[0] == tool)
    peak = max(int(r[2]) for r in runs if r[0] == tool) // 1024
    median = statistics.median(seconds)
    print(f"  {tool:<10} median {median:6.2f} s ({(1 << 30) / median / 1e6:.0f} MB/s) of {', '.join(f'{s:.2f}' for s in seconds)} s; peak RSS {peak} MiB")
PY

echo "== S3 (moto) 1 GiB, 8 MiB parts, 4 in flight"
s3=$(start_peer s3_server.py media)
export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_DEFAULT_REGION=us-east-1
# moto's first multipart upload is much slower than the next ones: warm it up so that the order of the
# tools does not decide the ranking.
head -c $((64 << 20)) 1g.bin > warm.bin
aws --endpoint-url "http://127.0.0.1:$s3" s3 cp warm.bin s3://media/warm.bin >/dev/null 2>&1
cat > s3.json <<JSON
{"version": 1, "name": "bench-s3", "stages": [{"id": "up", "uses": "s3.upload", "with": {"endpoint": "http://127.0.0.1:$s3",
 "bucket": "media", "key": "pipeline.bin", "partSize": "8MiB", "concurrency": 4, "checksum": "crc32c"}}]}
JSON
aws configure set default.s3.multipart_chunksize 8MB
aws configure set default.s3.max_concurrent_requests 4
unset AWS_CA_BUNDLE  # rclone cannot load some bundles; loopback needs none
s3_tool() {  # name round: one upload of 1g.bin (a new key each round: rclone skips or fails on an existing one)
  case $1 in
  s3.upload) "$PIPELINE" run s3.json --input 1g.bin --state state-s3 --fresh ;;
  aws) aws --endpoint-url "http://127.0.0.1:$s3" s3 cp 1g.bin s3://media/aws.bin ;;
  rclone) rclone copyto 1g.bin ":s3:media/rclone-$2.bin" --s3-provider Other --s3-endpoint "http://127.0.0.1:$s3" \
    --s3-access-key-id test --s3-secret-access-key test --s3-chunk-size 8M --s3-upload-concurrency 4 --s3-upload-cutoff 8M ;;
  esac
}
export -f s3_tool; export PIPELINE s3
# moto's speed drifts with its disk and memory: three rounds in rotating order. The server's own
# timeline separates the parts phase (the client's work) from CompleteMultipartUpload (moto's).
round=0
for order in "s3.upload aws rclone" "aws rclone s3.upload" "rclone s3.upload aws"; do
  round=$((round + 1))
  for tool in $order; do
    curl -sS "http://127.0.0.1:$s3/__timeline?reset=1" -o /dev/null
    read -r s kb < <(measure bash -c "s3_tool $tool $round")
    curl -sS "http://127.0.0.1:$s3/__timeline" | python3 -c '
import json, sys
t = json.load(sys.stdin)
parts = max(e for _, e in t["parts"]) - min(s for s, _ in t["parts"]) if t["parts"] else float("nan")
complete = sum(e - s for s, e in t["completes"])
print(f"{parts:.2f} {complete:.2f}")' > phases.txt
    read -r parts complete < phases.txt
    echo "$tool $s $parts $complete $kb" >> s3-runs.txt
    printf "  %-10s total %6.2f s  parts phase %5.2f s (%s)  Complete %5.2f s  peak RSS %d MiB\n" \
      "$tool" "$s" "$parts" "$(mb_s $size "$parts")" "$complete" $((kb / 1024))
  done
done
echo "  medians over the three rounds:"
python3 - s3-runs.txt <<'PY'
import statistics, sys
runs = [line.split() for line in open(sys.argv[1])]
for tool in ("s3.upload", "aws", "rclone"):
    total = statistics.median(float(r[1]) for r in runs if r[0] == tool)
    parts = statistics.median(float(r[2]) for r in runs if r[0] == tool)
    print(f"  {tool:<10} total {total:6.2f} s  parts phase {parts:5.2f} s ({(1 << 30) / parts / 1e6:.0f} MB/s)")
PY

echo "== memory: http.upload of 1 GiB and 4 GiB to the Sandbox (data on /dev/shm, so the disk is not the limit)"
"$PIPELINE" sandbox --port 18189 --data /dev/shm/pipeline-bench-sandbox > sandbox.log 2>&1 &
pids+=($!)
for _ in $(seq 100); do grep -q "^sandbox: " sandbox.log 2>/dev/null && break; sleep 0.1; done
dd if=/dev/urandom of=4g.bin bs=1M count=4096 status=none
asset() {  # size -> upload URL of a new generic asset
  curl -sS -X POST http://127.0.0.1:18189/generic/assets -H "Authorization: Bearer sandbox-token" \
    -H "Content-Type: application/json" --data "{\"name\": \"bench\", \"size\": $1}" \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["upload_url"])'
}
for file in 1g.bin 4g.bin; do
  bytes=$(stat -c %s $file)
  cat > put.json <<JSON
{"version": 1, "name": "bench-put-$file", "stages": [{"id": "up", "uses": "http.upload", "with": {"url": "$(asset "$bytes")"}}]}
JSON
  # The peak so far (VmHWM) one second in, and at the end: an upload's memory must not grow after it started.
  /usr/bin/time -f "%e %M" -o time.txt "$PIPELINE" run put.json --input $file --state state-put --fresh >/dev/null 2>&1 &
  timer=$!
  sleep 1
  early=$(awk '/VmHWM/ { print int($2 / 1024) }' "/proc/$(pgrep -P $timer)/status" 2>/dev/null || echo "?")
  wait $timer
  read -r s kb < time.txt
  echo "  http.upload $file $(printf '%6.2f' "$s") s  $(mb_s "$bytes" "$s")  peak RSS $((kb / 1024)) MiB (after 1 s: $early MiB)"
  read -r s kb < <(measure curl -sS -T $file -H "Expect:" "$(asset "$bytes")" -o /dev/null)
  echo "  curl -T     $file $(printf '%6.2f' "$s") s  $(mb_s "$bytes" "$s")  peak RSS $((kb / 1024)) MiB"
  rm -rf /dev/shm/pipeline-bench-sandbox/uploads/*
done
rm -rf /dev/shm/pipeline-bench-sandbox
