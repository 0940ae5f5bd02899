#!/usr/bin/env bash
# Workers sharing a batch through PostgreSQL, on this machine:
#  1. Scaling: an upload-bound batch (ITEMS files of 2 MiB, each worker limited to 8 MiB/s with --bwlimit, to
#     nginx answering 204) run by 1, 2 and 4 workers: items per second, and the scaling ratio
#     "items/s with N workers / (N × items/s with one)" (goal ≥ 0.9). The clock runs from the workers' start to
#     the last item's success, so a worker's start (about 0.1 s) counts; 96 items keep it small beside the work.
#  2. Claim latency: the mean time a worker's claim query takes (its pipeline_claim_seconds metric).
#  3. Takeover: a worker killed with -9 in the middle of an item; the time until another worker holds it
#     (goal ≤ lease + 1 s; the lease is 5 s here, the other worker looks for work every 500 ms).
#  4. A stage transition on PostgreSQL against SQLite: 200 items × 5 `set` stages, one at a time, run by a
#     worker and by `pipeline run`; seconds per stage (each is two checkpoints written).
# PostgreSQL 15 runs in a temporary folder as the postgres user (initdb refuses root). pipeline is built in
# release (SKIP_BUILD=1 uses the release build as it is). Needs: postgresql-15, nginx, bc (apt).
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/lib/postgres.sh
ITEMS=${ITEMS:-96}
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
command -v bc >/dev/null || $sudo apt-get install -y -qq bc >/dev/null
command -v nginx >/dev/null || PATH=$PATH:/usr/sbin command -v nginx >/dev/null \
  || $sudo apt-get install -y -qq nginx >/dev/null
NGINX=$(PATH=$PATH:/usr/sbin command -v nginx)
[ -n "${SKIP_BUILD:-}" ] || swift build -c release --product pipeline >/dev/null
PIPELINE=$PWD/.build/release/pipeline
work=$(mktemp -d -p /tmp pipeline-workers-bench.XXXXXX)
chmod 755 "$work"
pids=()
nginx_pid=""
cleanup() {
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  # nginx stops its worker process only when asked: -9 would leave it running.
  [ -z "$nginx_pid" ] || kill -TERM "$nginx_pid" 2>/dev/null || true
  pg_cleanup
  rm -rf "$work"
}
trap cleanup EXIT
wait_for() { for _ in $(seq 6000); do eval "$1" && return 0; sleep 0.05; done; echo "gave up waiting for: $1" >&2; exit 1; }
now() { date +%s.%N; }
cd "$work"

pg_setup "$work"
psql_() { psql -h 127.0.0.1 -p "$pgport" -U pipeline -d "$1" -Atqc "$2"; }

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
nginx_pid=$!
wait_for "curl -s -o /dev/null http://127.0.0.1:$sink/"

mkdir -p in
for i in $(seq -w 1 "$ITEMS"); do head -c $((2 << 20)) /dev/urandom > "in/clip-$i.bin"; done
cat > upload.json <<JSON
{"version": 1, "name": "upload", "inputs": {"path": "in"}, "stages": [
  {"id": "put", "uses": "http.upload", "with": {"url": "http://127.0.0.1:$sink/\${input.name}"}}
]}
JSON

echo "== 1. Scaling: $ITEMS items of 2 MiB, each worker at 8 MiB/s"
declare -A rate
for workers in 1 2 4; do
  url=$(database "scale$workers")
  "$PIPELINE" submit upload.json --db "$url" >/dev/null
  started=$(now)
  worker_pids=()
  for _ in $(seq "$workers"); do
    "$PIPELINE" worker --db "$url" --bwlimit 8MiB --poll 100ms >/dev/null 2>&1 &
    worker_pids+=($!)
    pids+=($!)
  done
  wait_for "[ \"\$(psql_ scale$workers \"select count(*) from items where status = 'succeeded'\")\" = $ITEMS ]"
  seconds=$(echo "$(now) - $started" | bc -l)
  kill -TERM "${worker_pids[@]}"
  wait "${worker_pids[@]}" 2>/dev/null || true
  rate[$workers]=$(echo "$ITEMS / $seconds" | bc -l)
  printf '  %d worker(s): %6.2f s, %6.2f items/s' "$workers" "$seconds" "${rate[$workers]}"
  if [ "$workers" -gt 1 ]; then
    printf ', scaling %.2f' "$(echo "${rate[$workers]} / ($workers * ${rate[1]})" | bc -l)"
  fi
  echo
done

echo "== 2. Claim latency (the same batch again, one worker, with its metrics)"
url=$(database claims)
"$PIPELINE" submit upload.json --db "$url" >/dev/null
metrics=$(free_port)
"$PIPELINE" worker --db "$url" --poll 100ms --metrics-port "$metrics" >/dev/null 2>&1 &
worker=$!
pids+=($worker)
wait_for "[ \"\$(psql_ claims \"select count(*) from items where status = 'succeeded'\")\" = $ITEMS ]"
curl -s "http://127.0.0.1:$metrics/metrics" | awk '
  /^pipeline_claim_seconds_sum/ { sum = $2 } /^pipeline_claim_seconds_count/ { count = $2 }
  END { printf "  %d claims, mean %.2f ms\n", count, 1000 * sum / count }'
kill -TERM $worker
wait $worker 2>/dev/null || true

echo "== 3. Takeover after kill -9 (lease 5 s)"
cat > slow.json <<'JSON'
{"version": 1, "name": "slow", "inputs": {"path": "in"}, "stages": [
  {"id": "wait", "uses": "exec", "with": {"command": ["sleep", "3"]}}
]}
JSON
for round in 1 2 3; do
  url=$(database "takeover$round")
  "$PIPELINE" submit slow.json --db "$url" --input "in/$(ls in | head -1)" >/dev/null
  "$PIPELINE" worker --db "$url" --lease 5s >/dev/null 2>&1 &
  first=$!
  pids+=($first)
  wait_for "[ -n \"\$(psql_ takeover$round \"select lease_owner from items where lease_owner is not null\")\" ]"
  owner=$(psql_ "takeover$round" "select lease_owner from items")
  "$PIPELINE" worker --db "$url" --lease 5s >/dev/null 2>&1 &
  second=$!
  pids+=($second)
  sleep 1
  killed=$(now)
  kill -9 $first
  wait $first 2>/dev/null || true
  wait_for "[ \"\$(psql_ takeover$round \"select lease_owner from items\")\" != \"$owner\" ]"
  printf '  round %d: taken over %.2f s after the kill\n' "$round" "$(echo "$(now) - $killed" | bc -l)"
  kill -TERM $second
  wait $second 2>/dev/null || true
done

echo "== 4. A stage transition: 200 items × 5 set stages, one item at a time"
mkdir -p small
for i in $(seq -w 1 200); do echo "$i" > "small/$i.txt"; done
cat > steps.json <<'JSON'
{"version": 1, "name": "steps", "inputs": {"path": "small"}, "stages": [
  {"id": "s1", "uses": "set", "with": {"n": 1}}, {"id": "s2", "uses": "set", "with": {"n": 2}},
  {"id": "s3", "uses": "set", "with": {"n": 3}}, {"id": "s4", "uses": "set", "with": {"n": 4}},
  {"id": "s5", "uses": "set", "with": {"n": 5}}
]}
JSON
started=$(now)
"$PIPELINE" run steps.json --state sqlite-state >/dev/null
sqlite=$(echo "$(now) - $started" | bc -l)
url=$(database steps)
"$PIPELINE" submit steps.json --db "$url" >/dev/null
started=$(now)
"$PIPELINE" worker --db "$url" --poll 50ms >/dev/null 2>&1 &
worker=$!
pids+=($worker)
wait_for "[ \"\$(psql_ steps \"select count(*) from items where status = 'succeeded'\")\" = 200 ]"
postgres=$(echo "$(now) - $started" | bc -l)
kill -TERM $worker
wait $worker 2>/dev/null || true
printf '  SQLite (pipeline run): %.2f s, %.2f ms per stage\n' "$sqlite" "$(echo "$sqlite * 1000 / 1000" | bc -l)"
printf '  PostgreSQL (worker):   %.2f s, %.2f ms per stage (%.2f× SQLite)\n' "$postgres" \
  "$(echo "$postgres * 1000 / 1000" | bc -l)" "$(echo "$postgres / $sqlite" | bc -l)"
