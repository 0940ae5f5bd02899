#!/usr/bin/env bash
# oss.upload against oss2's resumable_upload (Alibaba Cloud's official Python SDK), both to the Sandbox's OSS
# on loopback, 1 GiB, 8 MiB parts, 4 threads/parts in flight. Runs ROUNDS rounds (default 5), the order
# rotating, and prints the medians, the ratio "oss2's time / oss.upload's time" (goal ≥ 1.0) of the medians
# and, spared the host's drift, the median of each round's; then oss.upload's peak RSS for 1 GiB and 4 GiB
# (goal ≤ 64 MiB, flat). Files and the Sandbox's data live in /dev/shm. pipeline is built in release
# (CONFIGURATION=debug uses the debug build instead: slower, say so with its figures).
# Needs: oss2 (scripts/install-deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-5}
CONFIGURATION=${CONFIGURATION:-release}
swift build -c "$CONFIGURATION" --product pipeline >/dev/null
PIPELINE=$PWD/.build/$CONFIGURATION/pipeline
work=$(mktemp -d -p /dev/shm pipeline-oss-bench.XXXXXX)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
cd "$work"
dd if=/dev/urandom of=1g.bin bs=1M count=1024 status=none
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port=$(free_port)
"$PIPELINE" sandbox --port "$port" --data "$work/sandbox" > sandbox.log 2>&1 &
pids+=($!)
for _ in $(seq 200); do grep -q "^sandbox: " sandbox.log && break; sleep 0.05; done
endpoint=http://127.0.0.1:$port
export ALIBABA_CLOUD_ACCESS_KEY_ID=sandbox-access-key-id ALIBABA_CLOUD_ACCESS_KEY_SECRET=sandbox-access-key-secret

cat > oss2_upload.py <<'PY'
import sys
import oss2
endpoint, path, key = sys.argv[1:4]
bucket = oss2.Bucket(oss2.AuthV4("sandbox-access-key-id", "sandbox-access-key-secret"), endpoint, "vod-sandbox",
                     region="cn-shanghai")
oss2.resumable_upload(bucket, key, path, store=oss2.ResumableStore(root=sys.argv[4]),
                      multipart_threshold=8 << 20, part_size=8 << 20, num_threads=4)
PY

timed() {  # label command...: appends "label seconds peak-KiB" to runs.txt
  local label=$1
  shift
  if ! /usr/bin/time -f "%e %M" -o time.txt "$@" >/dev/null 2>errors.txt; then
    echo "$label failed:" >&2
    cat errors.txt time.txt >&2
    exit 1
  fi
  read -r seconds kib < <(tail -1 time.txt)
  echo "$label $seconds $kib" >> runs.txt
}
ours() {  # round file
  echo "{\"version\": 1, \"name\": \"bench-$1\", \"stages\": [{\"id\": \"up\", \"uses\": \"oss.upload\", \"with\": {
    \"endpoint\": \"$endpoint\", \"region\": \"cn-shanghai\", \"bucket\": \"vod-sandbox\", \"key\": \"bench/ours-$1.bin\", \"file\": \"$work/$2\",
    \"partSize\": \"8MiB\", \"concurrency\": 4}}]}" > "wf-$1.json"
  timed "oss.upload-$2" "$PIPELINE" run "wf-$1.json" --state "state-$1" --input "$work/$2"
}
theirs() {  # round
  mkdir -p "store-$1"
  timed "oss2-1g.bin" python3 oss2_upload.py "$endpoint" 1g.bin "bench/oss2-$1.bin" "$work/store-$1"
}

echo "== oss.upload vs oss2.resumable_upload, 1 GiB, $ROUNDS rounds"
for round in $(seq "$ROUNDS"); do
  if ((round % 2)); then ours "$round" 1g.bin; theirs "$round"; else theirs "$round"; ours "$round" 1g.bin; fi
done
echo "== memory"
dd if=/dev/urandom of=4g.bin bs=1M count=4096 status=none
ours 4g 4g.bin
python3 - runs.txt <<'PY'
import sys
from statistics import median
runs = {}
for line in open(sys.argv[1]):
    label, seconds, kib = line.split()
    runs.setdefault(label, []).append((float(seconds), int(kib)))
ours, theirs = runs["oss.upload-1g.bin"], runs["oss2-1g.bin"]
print(f"  oss.upload {median(r[0] for r in ours):.2f} s, oss2 {median(r[0] for r in theirs):.2f} s")
print(f"  oss2/oss.upload: {median(r[0] for r in theirs) / median(r[0] for r in ours):.2f}, "
      f"round by round {median(b[0] / a[0] for a, b in zip(ours, theirs)):.2f}")
for label in ("oss.upload-1g.bin", "oss.upload-4g.bin", "oss2-1g.bin"):
    print(f"  peak RSS {label}: {max(r[1] for r in runs[label]) // 1024} MiB")
PY
