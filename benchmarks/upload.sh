#!/usr/bin/env bash
# Upload throughput and memory on loopback, in one run. Each comparison runs its tools ROUNDS times (default
# 5), the order rotating every round, and prints the medians and ratios "reference time / pipeline's time"
# (1.0 = as fast, above = faster), of the medians and, spared the host's drift, the median of each round's:
#  1. S3 to moto, 1 GiB, 8 MiB parts, 4 in flight: s3.upload vs `aws s3 cp` vs rclone, the whole upload and
#     the parts phase alone (from the server's own timeline: moto's CompleteMultipartUpload is slow, and the
#     same for every client). Goal ≥ 1.0 against aws.
#  2. Content-Range PUT, 1 GiB: http.upload vs `curl -T`, to the Sandbox and to nginx answering 204 to every
#     request (a sink that only reads: the client's own ceiling, apart from any server). Goal ≥ 0.95.
#  3. tus, 1 GiB: tus.upload vs curl (create, then one PATCH), to tuspyserver and to the Sandbox's tus server;
#     curl to the Sandbox against curl to tuspyserver (goal: the Sandbox twice as fast). tus.upload runs
#     without checksums there, as curl does; tus.upload+sum is its default against the Sandbox, which
#     offers checksums: sha1 over 16 MiB PATCHes.
#  4. Memory: peak RSS of http.upload of 1 GiB and 4 GiB to the sink (goal ≤ 64 MiB, flat).
# Files and servers' storage live in /dev/shm, so that no disk is measured. pipeline is built in release.
# Needs: nginx, rclone (apt); awscli (pip); tuspyserver, uvicorn, moto (scripts/install-deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-5}
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
for tool in nginx rclone; do
  command -v $tool >/dev/null || PATH=$PATH:/usr/sbin command -v $tool >/dev/null \
    || $sudo apt-get install -y -qq $tool >/dev/null
done
NGINX=$(PATH=$PATH:/usr/sbin command -v nginx)
python3 -c "import awscli" 2>/dev/null || python3 -m pip install -q awscli
swift build -c release --product pipeline >/dev/null
PIPELINE=$PWD/.build/release/pipeline
PEERS=$PWD/Tests/TestSupport/Peers
work=$(mktemp -d -p /dev/shm pipeline-upload-bench.XXXXXX)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
cd "$work"
GiB=$((1 << 30))
dd if=/dev/urandom of=1g.bin bs=1M count=1024 status=none
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_for() { for _ in $(seq 200); do eval "$1" && return 0; sleep 0.05; done; echo "gave up waiting for: $1" >&2; exit 1; }
start_peer() {  # script args... ; prints port
  mkdir -p "peer-$1"
  python3 "$PEERS/$1" "$work/peer-$1" "${@:2}" > "port-$1" 2>/dev/null &
  pids+=($!)
  wait_for "[ -s port-$1 ]"
  head -1 "port-$1"
}

# Every measured run appends "section tool seconds peak-KiB [parts-phase-seconds]" to runs.txt.
timed() {  # section tool command...
  local section=$1 tool=$2
  shift 2
  if ! /usr/bin/time -f "%e %M" -o time.txt "$@" >/dev/null 2>errors.txt; then
    echo "$tool failed:" >&2
    cat errors.txt time.txt >&2
    exit 1
  fi
  read -r seconds kib < <(tail -1 time.txt)
  echo "$section $tool $seconds $kib" >> runs.txt
}
alternate() {  # section tool...: ROUNDS rounds of "run_<section>_<tool> round", the order rotating
  local section=$1
  shift
  local tools=("$@") round index
  for round in $(seq "$ROUNDS"); do
    for index in $(seq 0 $((${#tools[@]} - 1))); do
      "run_${section}_${tools[(index + round) % ${#tools[@]}]}" "$round"
    done
  done
}
workflow() {  # file stage-json: a one-stage workflow
  echo "{\"version\": 1, \"name\": \"bench\", \"stages\": [{\"id\": \"up\", $2}]}" > "$1"
}

echo "== servers"
s3=$(start_peer s3_server.py media)
tus=$(start_peer tus_server.py)
sandbox=$(free_port)
mkdir -p sandbox
"$PIPELINE" sandbox --port "$sandbox" --data "$work/sandbox" > sandbox.log 2>&1 &
pids+=($!)
wait_for "grep -q '^sandbox: ' sandbox.log"
sink=$(free_port)
mkdir -p nginx
cat > nginx/nginx.conf <<CONF
daemon off;
worker_processes 1;
error_log $work/nginx/error.log;
pid $work/nginx/nginx.pid;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path $work/nginx/body;
  server { listen 127.0.0.1:$sink; client_max_body_size 0; location / { return 204; } }
}
CONF
"$NGINX" -c "$work/nginx/nginx.conf" &
pids+=($!)
wait_for "curl -s -o /dev/null http://127.0.0.1:$sink/"
# The sink's own CPU time per run (user + system, in clock ticks): what receiving the client's bytes costs it.
nginx_worker=$(pgrep -P "${pids[-1]}" | head -1)
ticks=$(getconf CLK_TCK)
nginx_ticks() { awk '{print $14 + $15}' "/proc/$nginx_worker/stat"; }
echo "  moto :$s3, tuspyserver :$tus, Sandbox :$sandbox, nginx sink :$sink; $ROUNDS rounds each"

echo "== S3 (moto) 1 GiB, 8 MiB parts, 4 in flight"
export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_DEFAULT_REGION=us-east-1 AWS_CONFIG_FILE=$work/aws-config
unset AWS_CA_BUNDLE  # rclone cannot load some bundles; loopback needs none
aws configure set default.s3.multipart_chunksize 8MB
aws configure set default.s3.max_concurrent_requests 4
s3cli() { aws --endpoint-url "http://127.0.0.1:$s3" s3 "$@" >/dev/null 2>&1; }
# moto's first multipart upload is much slower than the next ones: warm it up so that the order of the tools
# does not decide the ranking.
head -c $((64 << 20)) 1g.bin > warm.bin
s3cli cp warm.bin s3://media/warm.bin
workflow s3.json "\"uses\": \"s3.upload\", \"with\": {\"endpoint\": \"http://127.0.0.1:$s3\", \"bucket\": \"media\",
  \"key\": \"pipeline.bin\", \"partSize\": \"8MiB\", \"concurrency\": 4, \"checksum\": \"crc32c\"}"
s3_timed() {  # tool key command...: one upload, its parts phase from moto's timeline, then the object is removed
  curl -sS "http://127.0.0.1:$s3/__timeline?reset=1" -o /dev/null
  local tool=$1 key=$2
  shift 2
  timed s3 "$tool" "$@"
  local parts
  parts=$(curl -sS "http://127.0.0.1:$s3/__timeline" | python3 -c '
import json, sys
parts = json.load(sys.stdin)["parts"]
print(f"{max(e for _, e in parts) - min(s for s, _ in parts):.3f}")')
  sed -i '$ s/$/ '"$parts"'/' runs.txt  # the parts phase joins the upload's record
  s3cli rm "s3://media/$key" || true
}
run_s3_pipeline() { s3_timed s3.upload pipeline.bin "$PIPELINE" run s3.json --input 1g.bin --state state-s3 --fresh; }
run_s3_aws() { s3_timed aws aws.bin aws --endpoint-url "http://127.0.0.1:$s3" s3 cp 1g.bin s3://media/aws.bin; }
run_s3_rclone() {
  s3_timed rclone rclone.bin rclone copyto 1g.bin ":s3:media/rclone.bin" --s3-provider Other \
    --s3-endpoint "http://127.0.0.1:$s3" --s3-access-key-id test --s3-secret-access-key test \
    --s3-chunk-size 8M --s3-upload-concurrency 4 --s3-upload-cutoff 8M
}
alternate s3 pipeline aws rclone

echo "== Content-Range PUT 1 GiB: to the Sandbox and to the nginx sink"
asset() {  # size -> upload URL of a new Sandbox generic asset
  curl -sS -X POST "http://127.0.0.1:$sandbox/generic/assets" -H "Authorization: Bearer sandbox-token" \
    -H "Content-Type: application/json" --data "{\"name\": \"bench\", \"size\": $1}" \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["upload_url"])'
}
clear_sandbox() { find sandbox -type f -path '*upload*' -delete 2>/dev/null || true; }
run_put_pipeline() {
  workflow put.json "\"uses\": \"http.upload\", \"with\": {\"url\": \"$(asset $GiB)\"}"
  timed put-sandbox http.upload "$PIPELINE" run put.json --input 1g.bin --state state-put --fresh
  clear_sandbox
}
run_put_curl() {
  timed put-sandbox curl curl -sS --fail -T 1g.bin -H "Expect:" "$(asset $GiB)" -o /dev/null
  clear_sandbox
}
alternate put pipeline curl
workflow sink.json "\"uses\": \"http.upload\", \"with\": {\"url\": \"http://127.0.0.1:$sink/upload\"}"
sink_timed() {  # tool command...: a timed run to the sink; appends "tool sink-CPU-ticks" to sink-cpu.txt
  local before
  before=$(nginx_ticks)
  timed put-sink "$@"
  echo "$1 $(($(nginx_ticks) - before))" >> sink-cpu.txt
}
run_sink_pipeline() { sink_timed http.upload "$PIPELINE" run sink.json --input 1g.bin --state state-sink --fresh; }
run_sink_curl() { sink_timed curl curl -sS --fail -T 1g.bin -H "Expect:" "http://127.0.0.1:$sink/upload" -o /dev/null; }
alternate sink pipeline curl

echo "== tus 1 GiB: to tuspyserver and to the Sandbox"
curl_tus() {  # creation URL: create an upload of 1g.bin, then send it in one PATCH
  local location
  location=$(curl -sS --fail -i -X POST "$1" -H "Tus-Resumable: 1.0.0" -H "Upload-Length: $GiB" \
    -H "Upload-Metadata: filename MWcuYmlu,filetype YXBwbGljYXRpb24vb2N0ZXQtc3RyZWFt" \
    | tr -d '\r' | awk -F': ' 'tolower($1) == "location" { print $2 }')
  curl -sS --fail -X PATCH "$location" -H "Tus-Resumable: 1.0.0" -H "Upload-Offset: 0" \
    -H "Content-Type: application/offset+octet-stream" -H "Expect:" -T 1g.bin -o /dev/null
}
export -f curl_tus
export GiB
clear_tuspy() { find peer-tus_server.py -type f -delete 2>/dev/null || true; }
workflow tus.json "\"uses\": \"tus.upload\", \"with\": {\"endpoint\": \"http://127.0.0.1:$tus/files/\", \"checksum\": \"none\"}"
workflow tus-sandbox.json \
  "\"uses\": \"tus.upload\", \"with\": {\"endpoint\": \"http://127.0.0.1:$sandbox/upload\", \"checksum\": \"none\"}"
workflow tus-sandbox-sum.json "\"uses\": \"tus.upload\", \"with\": {\"endpoint\": \"http://127.0.0.1:$sandbox/upload\"}"
run_tus_pipeline() {
  timed tus-tuspyserver tus.upload "$PIPELINE" run tus.json --input 1g.bin --state state-tus --fresh
  clear_tuspy
}
run_tus_curl() {
  timed tus-tuspyserver curl bash -c "curl_tus http://127.0.0.1:$tus/files/"
  clear_tuspy
}
run_tus_sandboxpipeline() {
  timed tus-sandbox tus.upload "$PIPELINE" run tus-sandbox.json --input 1g.bin --state state-tus-sandbox --fresh
  clear_sandbox
}
run_tus_sandboxsum() {
  timed tus-sandbox tus.upload+sum "$PIPELINE" run tus-sandbox-sum.json --input 1g.bin --state state-tus-sum --fresh
  clear_sandbox
}
run_tus_sandboxcurl() {
  timed tus-sandbox curl bash -c "curl_tus http://127.0.0.1:$sandbox/upload"
  clear_sandbox
}
alternate tus pipeline curl sandboxpipeline sandboxcurl sandboxsum

echo "== memory: http.upload of 1 GiB and 4 GiB to the sink"
dd if=/dev/urandom of=4g.bin bs=1M count=4096 status=none
for file in 1g.bin 4g.bin; do
  timed "rss-$file" http.upload "$PIPELINE" run sink.json --input $file --state state-sink --fresh
  timed "rss-$file" curl curl -sS --fail -T $file -H "Expect:" "http://127.0.0.1:$sink/upload" -o /dev/null
done

python3 - runs.txt sink-cpu.txt "$ticks" <<'PY'
import statistics, sys
from collections import defaultdict

runs = defaultdict(lambda: defaultdict(list))
for line in open(sys.argv[1]):
    section, tool, seconds, kib, *phase = line.split()
    runs[section][tool].append((float(seconds), int(kib), float(phase[0]) if phase else None))

def median(values):
    return statistics.median(values)

def report(section, title, ours, references, phase=False):
    tools = runs[section]
    print(f"== {title}")
    for tool, records in tools.items():
        seconds = [r[0] for r in records]
        line = (f"  {tool:<11} median {median(seconds):6.2f} s ({(1 << 30) / median(seconds) / 1e6:5.0f} MB/s)"
                f"  of {' '.join(f'{s:.2f}' for s in sorted(seconds))};  peak RSS {max(r[1] for r in records) // 1024} MiB")
        if phase:
            parts = [r[2] for r in records]
            line += f";  parts phase median {median(parts):5.2f} s of {' '.join(f'{p:.2f}' for p in sorted(parts))}"
        print(line)
    for reference in references:
        ratio = median(r[0] for r in tools[reference]) / median(r[0] for r in tools[ours])
        # Rounds run the tools back to back: the ratio within each round is spared the host's drift.
        paired = median(a[0] / b[0] for a, b in zip(tools[reference], tools[ours]))
        text = f"  {reference}/{ours}: {ratio:.2f}, round by round {paired:.2f}"
        if phase:
            text += f" (parts phase {median(r[2] for r in tools[reference]) / median(r[2] for r in tools[ours]):.2f})"
        print(text)

report("s3", "S3 to moto", "s3.upload", ["aws", "rclone"], phase=True)
report("put-sandbox", "Content-Range PUT to the Sandbox", "http.upload", ["curl"])
report("put-sink", "Content-Range PUT to the nginx sink", "http.upload", ["curl"])
sink_cpu = defaultdict(list)
for line in open(sys.argv[2]):
    tool, used = line.split()
    sink_cpu[tool].append(int(used) / int(sys.argv[3]))
print("  nginx's own CPU per run, median: " + ", ".join(
    f"{tool} {median(values):.2f} s" for tool, values in sink_cpu.items())
    + " (the receiver's cost: bytes sent with sendfile cost it about twice what written ones do on loopback,"
    " so uploads to this machine write theirs)")
report("tus-tuspyserver", "tus to tuspyserver", "tus.upload", ["curl"])
report("tus-sandbox", "tus to the Sandbox", "tus.upload", ["curl"])
sandbox = median(r[0] for r in runs["tus-sandbox"]["curl"])
tuspy = median(r[0] for r in runs["tus-tuspyserver"]["curl"])
print(f"  curl to tuspyserver / curl to the Sandbox: {tuspy / sandbox:.2f}")
print("== memory (peak RSS)")
for name in ("1g.bin", "4g.bin"):
    tools = runs[f"rss-{name}"]
    print("  " + name + ": " + ", ".join(f"{tool} {records[0][1] // 1024} MiB in {records[0][0]:.2f} s"
                                         for tool, records in tools.items()))
PY
