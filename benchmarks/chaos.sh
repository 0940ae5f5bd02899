#!/usr/bin/env bash
# The chaos suite of a shared batch: the eight failure scenarios of the PostgreSQL job queues' benchmarks, run
# against `pipeline worker` processes on a PostgreSQL server of this script's own (a free port of 127.0.0.1):
#  1. crash recovery: a worker killed with -9 in the middle of a stage;
#  2. repeated kills: a worker killed every KILL_MIN to KILL_MAX seconds (seeded moments, printed) for
#     KILL_SECONDS (60), each started again as a supervisor would;
#  3. PostgreSQL restart: `pg_ctl stop -m immediate` mid-batch, started again OUTAGE seconds (5) later;
#  4. backend kill: every session of the workers ended with pg_terminate_backend, three times;
#  5. pool exhaustion: the server's max_connections (POOL_CONNECTIONS, 5) below what the workers would open
#     (WORKERS workers of 2 jobs, each up to 8 connections), given POOL_PATIENCE seconds (120) to finish; prints
#     when the first item was done, the items of each worker, and the workers' connections the server refused;
#  6. a retry storm: every item's first stage fails its first attempt, then succeeds on its retry;
#  7. priority and starvation: a long source's segment units (a 120 s clip in 5 s segments, workers with
#     --segments) beside many short items;
#  8. a long-held transaction: a session idle in a transaction (it holds the xmin horizon) for HOLD_SECONDS
#     (default 60; `--hold 600` or HOLD_SECONDS=600 for the ten minutes of the queue benchmarks).
# The batch's stages record every side effect: two `exec` stages append a line per start and end to a log, and a
# `vimeo.ticket` stage creates a video on a `pipeline sandbox` (a remote side effect, counted by listing them).
# Each scenario checks: every item succeeded (none lost, none failed), each item's stages ended, stages started
# again at most once per item a disruption cut off (the documented cost: the stage in flight), one video per item,
# no worker stopped by itself. It prints the time to recover and the mean claim latency (the workers'
# pipeline_claim_seconds) before, during and after the disruption. Exit status 1 when an invariant broke.
# Settings (environment): WORKERS (3), ITEMS (40), STAGE_SECONDS (0.2), LEASE (5s), SEED (random; printed),
# SCENARIOS ("1 2 3 4 5 6 7 8"). pipeline is built in release (SKIP_BUILD=1 uses the release build as it is).
# Needs: postgresql-15, ffmpeg, curl, bc, python3 (apt).
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/lib/postgres.sh
while [ $# -gt 0 ]; do
  case "$1" in
    --hold) HOLD_SECONDS=$2; shift 2 ;;
    *) echo "usage: benchmarks/chaos.sh [--hold SECONDS]" >&2; exit 2 ;;
  esac
done
WORKERS=${WORKERS:-3}
ITEMS=${ITEMS:-40}
STAGE_SECONDS=${STAGE_SECONDS:-0.2}
LEASE=${LEASE:-5s}
KILL_SECONDS=${KILL_SECONDS:-60}
KILL_MIN=${KILL_MIN:-3}
KILL_MAX=${KILL_MAX:-6}
OUTAGE=${OUTAGE:-5}
POOL_CONNECTIONS=${POOL_CONNECTIONS:-5}
POOL_PATIENCE=${POOL_PATIENCE:-120}
HOLD_SECONDS=${HOLD_SECONDS:-60}
SEED=${SEED:-$RANDOM$RANDOM}
SCENARIOS=${SCENARIOS:-1 2 3 4 5 6 7 8}
echo "chaos.sh: SEED=$SEED WORKERS=$WORKERS ITEMS=$ITEMS STAGE_SECONDS=$STAGE_SECONDS LEASE=$LEASE HOLD_SECONDS=$HOLD_SECONDS"
RANDOM=$SEED
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
command -v bc >/dev/null || $sudo apt-get install -y -qq bc >/dev/null
[ -n "${SKIP_BUILD:-}" ] || swift build -c release --product pipeline >/dev/null
# Made absolute: the scenarios run from a folder of their own.
PIPELINE=$(realpath "${PIPELINE:-.build/release/pipeline}")
work=$(mktemp -d -p /tmp pipeline-chaos.XXXXXX)
chmod 755 "$work"
pids=()
failures=0
cleanup() {
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  pg_cleanup
  rm -rf "$work"
}
trap cleanup EXIT
wait_for() { for _ in $(seq 12000); do eval "$1" && return 0; sleep 0.05; done; echo "gave up waiting for: $1" >&2; exit 1; }
now() { date +%s.%N; }
seconds_since() { echo "$(now) - $1" | bc -l; }
cd "$work"

pg_setup "$work"
psql_() { psql -h 127.0.0.1 -p "$pgport" -U pipeline -d "$db" -Atqc "$1"; }

sandbox_port=$(free_port)
"$PIPELINE" sandbox --port "$sandbox_port" --data "$work/sandbox" >/dev/null 2>&1 &
pids+=($!)
api=http://127.0.0.1:$sandbox_port
wait_for "curl -sf -o /dev/null -H 'Authorization: bearer sandbox-token' $api/me/videos"
export CHAOS_TOKEN=sandbox-token

# A scenario's batch: database chaos$1 with $2 items; the log is $db/effects.log ("start|end|fail PID ITEM STAGE
# TIME"). $3: "fail-first" makes stage a fail its first attempt for every item.
prepare() {
  db=chaos$1
  local count=$2 mode=${3:-}
  url=$(database "$db")
  rm -rf "$db" && mkdir -p "$db/in" "$db/marks"
  for i in $(seq -w 1 "$count"); do echo "$db $i" > "$db/in/$db-item-$i.txt"; done
  log=$work/$db/effects.log
  local fail=""
  [ "$mode" != fail-first ] || fail="if mkdir $work/$db/marks/\${input.name} 2>/dev/null; then echo fail \$PPID \${input.name} a \$(date +%s.%N) >> $log; exit 1; fi; "
  stage() {
    printf '{"id": "%s", "uses": "exec", "with": {"retryable": true, "command": ["sh", "-c", "%secho start $PPID ${input.name} %s $(date +%%s.%%N) >> %s; sleep %s; echo end $PPID ${input.name} %s $(date +%%s.%%N) >> %s"]}}' \
      "$1" "$2" "$1" "$log" "$STAGE_SECONDS" "$1" "$log"
  }
  cat > "$db/chaos.json" <<JSON
{"version": 1, "name": "chaos", "inputs": {"path": "in"},
 "defaults": {"retry": {"attempts": 10, "initialDelay": "100ms", "maxDelay": "1s"}},
 "stages": [
  $(stage a "$fail"),
  {"id": "ticket", "uses": "vimeo.ticket", "with": {"api": "$api", "token": "\${env.CHAOS_TOKEN}", "name": "\${input.stem}", "preflight": false}},
  $(stage b "")
 ]}
JSON
  (cd "$db" && "$PIPELINE" submit chaos.json --db "$url" >/dev/null)
  items=$count
  total=$count
  videos_before=$(videos)
  workers=()
  metrics=()
  started=$(now)
}

# Starts a worker with its metrics on a port of its own; sets $worker.
start_worker() {  # extra arguments
  local port
  port=$(free_port)
  (cd "$db" && exec "$PIPELINE" worker --db "$url" --lease "$LEASE" --poll 100ms --metrics-port "$port" "$@" \
    >>"$work/$db/worker.log" 2>&1) &
  worker=$!
  pids+=("$worker")
  workers+=("$worker")
  metrics+=("$port")
}

finished() { awk '$1 == "end" && $4 == "b" { seen[$3] = 1 } END { print length(seen) }' "$log" 2>/dev/null || echo 0; }
succeeded() { psql_ "select count(*) from items where status = 'succeeded' and queued_with is null" 2>/dev/null || echo 0; }
long_done() {
  psql_ "select count(*) from items where relative_path = 'master.mp4' and status = 'succeeded' and queued_with is null" \
    2>/dev/null || echo 0
}

# The claims of the live workers so far: "SUM COUNT" of pipeline_claim_seconds.
claims() {
  local sum=0 count=0 port
  for port in "${metrics[@]}"; do
    read -r s c < <(curl -s --max-time 2 "http://127.0.0.1:$port/metrics" 2>/dev/null | awk '
      /^pipeline_claim_seconds_sum/ { s = $2 } /^pipeline_claim_seconds_count/ { c = $2 } END { print s + 0, c + 0 }') \
      || { s=0; c=0; }
    sum=$(echo "$sum + $s" | bc -l)
    count=$(echo "$count + $c" | bc -l)
  done
  echo "$sum $count"
}
# The mean claim latency in ms between two claims() samples.
latency() {
  echo "$1 $2" | awk '{ if ($4 > $2) printf "%.1f ms (%d claims)", 1000 * ($3 - $1) / ($4 - $2), $4 - $2; else print "- (no claims)" }'
}
# The time of the first line of kind $1 (stage $2) logged after time $3, less $3.
first_after() { awk -v k="$1" -v s="$2" -v t="$3" '$1 == k && $4 == s && $5 > t { print $5 - t; exit }' "$log"; }

videos() {
  curl -s -H 'Authorization: bearer sandbox-token' "$api/me/videos?per_page=1" \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["total"])'
}

# The invariants; $1: the scenario's name, $2: stage runs that may be repeated. $total items must succeed, of which
# $items ran the logged stages.
check() {
  local name=$1 allowed=$2 problems=()
  wait_for "[ \"\$(succeeded)\" = $total ]"
  for pid in "${workers[@]}"; do kill -0 "$pid" 2>/dev/null || problems+=("worker $pid stopped by itself"); done
  local seconds
  seconds=$(seconds_since "$started")
  kill -TERM "${workers[@]}" 2>/dev/null || true
  for pid in "${workers[@]}"; do wait "$pid" 2>/dev/null || true; done
  local failed queued starts ends repeated made
  failed=$(psql_ "select count(*) from items where status = 'failed'")
  queued=$(psql_ "select count(*) from items where queued_with is not null")
  starts=$(awk '$1 == "start"' "$log" | wc -l)
  ends=$(awk '$1 == "end" { seen[$3 " " $4] = 1 } END { print length(seen) }' "$log")
  repeated=$((starts - 2 * items))
  made=$(($(videos) - videos_before))
  [ "$failed" = 0 ] || problems+=("$failed items failed")
  [ "$queued" = 0 ] || problems+=("$queued items still queued")
  [ "$ends" = $((2 * items)) ] || problems+=("$ends of $((2 * items)) stages ended")
  [ "$repeated" -ge 0 ] && [ "$repeated" -le "$allowed" ] || problems+=("$repeated stage runs repeated (at most $allowed)")
  [ "$made" = "$items" ] || problems+=("$made videos for $items items")
  printf '  %s: %d items done in %.1f s, %d stage runs repeated (allowed %d), %d videos' \
    "$name" "$total" "$seconds" "$repeated" "$allowed" "$made"
  if [ ${#problems[@]} -eq 0 ]; then echo ", invariants hold"; else
    echo; printf '  FAILED: %s\n' "${problems[@]}"; failures=$((failures + 1)); fi
}
# A worker killed with -9 is no live worker any more: leave it out of the checks and the metrics.
forget_worker() {
  local i
  for i in "${!workers[@]}"; do
    if [ "${workers[$i]}" = "$1" ]; then unset 'workers[i]' 'metrics[i]'; fi
  done
  workers=("${workers[@]}")
  metrics=("${metrics[@]}")
}
# The item worker $1 is in the middle of (a start without an end), if any.
mid_stage_item() {
  awk -v w="$1" '$2 == w && $1 == "start" { open[$3 " " $4] = 1 } $2 == w && $1 == "end" { delete open[$3 " " $4] }
    END { for (k in open) { split(k, f, " "); print f[1]; exit } }' "$log"
}

scenario_1() {
  echo "== 1. Crash recovery: kill -9 of a worker mid-stage (lease $LEASE)"
  prepare 1 "$ITEMS"
  for _ in $(seq "$WORKERS"); do start_worker; done
  local victim=${workers[0]} item
  wait_for "[ \$(finished) -ge $((ITEMS / 4)) ] && [ -n \"\$(mid_stage_item $victim)\" ]"
  item=$(mid_stage_item "$victim")
  local before killed
  before=$(claims)
  killed=$(now)
  kill -9 "$victim"
  forget_worker "$victim"
  wait_for "awk -v i=$item -v w=$victim '\$1 == \"start\" && \$3 == i && \$2 != w' $log | grep -q ."
  local takeover during
  takeover=$(seconds_since "$killed")
  during=$(claims)
  wait_for "[ \"\$(succeeded)\" = $items ]"
  printf '  %s taken over %.2f s after the kill; claim latency before %s, until the takeover %s, after %s\n' \
    "$item" "$takeover" "$(latency "0 0" "$before")" "$(latency "$before" "$during")" "$(latency "$during" "$(claims)")"
  check "crash recovery" 1
}

scenario_2() {
  local rate items_needed
  # Enough items to keep the workers busy for the whole minute and a little after.
  items_needed=$(echo "($KILL_SECONDS + 20) * $WORKERS / (2 * $STAGE_SECONDS + 0.15)" | bc)
  echo "== 2. Repeated kills: a worker killed every $KILL_MIN-$KILL_MAX s for $KILL_SECONDS s ($items_needed items)"
  prepare 2 "$items_needed"
  for _ in $(seq "$WORKERS"); do start_worker; done
  wait_for "[ \$(finished) -ge 5 ]"
  local before kills=0 moments=() end takeovers=()
  before=$(claims)
  end=$(echo "$(now) + $KILL_SECONDS" | bc -l)
  while [ "$(echo "$(now) < $end" | bc)" = 1 ]; do
    local pause=$((KILL_MIN + RANDOM % (KILL_MAX - KILL_MIN + 1)))
    sleep "$pause"
    local index=$((RANDOM % ${#workers[@]}))
    local victim=${workers[$index]} item killed
    item=$(mid_stage_item "$victim")
    killed=$(now)
    kill -9 "$victim"
    forget_worker "$victim"
    kills=$((kills + 1))
    moments+=("$(printf '%.1f' "$(seconds_since "$started")")")
    start_worker
    if [ -n "$item" ]; then
      (wait_for "awk -v i=$item -v w=$victim '\$1 == \"start\" && \$3 == i && \$2 != w' $log | grep -q ." \
        && seconds_since "$killed" >> "$work/$db/takeovers") &
      takeovers+=($!)
    fi
  done
  local during
  during=$(claims)
  for pid in "${takeovers[@]}"; do wait "$pid" || true; done
  wait_for "[ \"\$(succeeded)\" = $items ]"
  echo "  $kills kills at ${moments[*]} s (seed $SEED)"
  [ ! -s "$work/$db/takeovers" ] || sort -n "$work/$db/takeovers" | awk '{ t[NR] = $1 } END {
    printf "  takeover after a kill: median %.2f s, longest %.2f s (%d items cut off)\n", t[int((NR + 1) / 2)], t[NR], NR }'
  printf '  claim latency before %s, during the kills %s (the killed workers'"'"' claims are not counted)\n' \
    "$(latency "0 0" "$before")" "$(latency "$before" "$during")"
  check "repeated kills" "$kills"
}

scenario_3() {
  echo "== 3. PostgreSQL restart: stop -m immediate mid-batch, started again $OUTAGE s later"
  prepare 3 "$ITEMS"
  for _ in $(seq "$WORKERS"); do start_worker; done
  wait_for "[ \$(finished) -ge $((ITEMS / 4)) ]"
  local before stopped restarted resumed
  before=$(claims)
  stopped=$(now)
  pg_stop immediate
  sleep "$OUTAGE"
  pg_start
  restarted=$(now)
  wait_for "[ -n \"\$(first_after end b $restarted)\" ]"
  resumed=$(first_after end b "$restarted")
  local during
  during=$(claims)
  wait_for "[ \"\$(succeeded)\" = $items ]"
  printf '  down %.1f s; the first item finished %.2f s after the server was back\n' \
    "$(echo "$restarted - $stopped" | bc -l)" "$resumed"
  printf '  claim latency before %s, from the stop to the first item after %s, after %s\n' \
    "$(latency "0 0" "$before")" "$(latency "$before" "$during")" "$(latency "$during" "$(claims)")"
  check "PostgreSQL restart" "$WORKERS"
}

scenario_4() {
  echo "== 4. Backend kill: pg_terminate_backend of every session of the workers, three times"
  prepare 4 "$ITEMS"
  for _ in $(seq "$WORKERS"); do start_worker --jobs 2; done
  local before round ended killed recovered=()
  wait_for "[ \$(finished) -ge 3 ]"
  before=$(claims)
  for round in 1 2 3; do
    wait_for "[ \$(finished) -ge $((round * ITEMS / 5)) ]"
    killed=$(now)
    ended=$(psql_ "select count(*) filter (where pg_terminate_backend(pid)) from pg_stat_activity
      where datname = '$db' and pid <> pg_backend_pid()")
    wait_for "[ -n \"\$(first_after end b $killed)\" ]"
    recovered+=("$(printf '%.2f' "$(first_after end b "$killed")")")
    echo "  round $round: $ended sessions ended"
  done
  local during
  during=$(claims)
  wait_for "[ \"\$(succeeded)\" = $items ]"
  echo "  the first item finished ${recovered[*]} s after each kill"
  printf '  claim latency before %s, during %s, after %s\n' \
    "$(latency "0 0" "$before")" "$(latency "$before" "$during")" "$(latency "$during" "$(claims)")"
  check "backend kill" $((3 * WORKERS * 2))
}

scenario_5() {
  echo "== 5. Pool exhaustion: max_connections=$POOL_CONNECTIONS, $WORKERS workers of 2 jobs (each opens up to 8)"
  prepare 5 "$ITEMS"
  pg_stop fast
  pg_start "-c max_connections=$POOL_CONNECTIONS"
  local refused_before peak=0 n samples=0 own=0 deadline first=""
  refused_before=$(grep -c 'too many clients' "$work/pg/server.log" || true)
  started=$(now)
  for _ in $(seq "$WORKERS"); do start_worker --jobs 2; done
  deadline=$(echo "$started + $POOL_PATIENCE" | bc -l)
  # Progress is read from the log, not the server: the script's own sessions would take the workers' slots.
  while [ "$(finished)" != "$items" ] && [ "$(echo "$(now) < $deadline" | bc)" = 1 ]; do
    [ -n "$first" ] || [ "$(finished)" = 0 ] || first=$(seconds_since "$started")
    samples=$((samples + 1))
    if n=$(psql_ "select count(*) from pg_stat_activity where datname = '$db' and backend_type = 'client backend'" \
      2>/dev/null); then [ "$n" -le "$peak" ] || peak=$n; else own=$((own + 1)); fi
    sleep 1
  done
  local refused per_worker
  refused=$(($(grep -c 'too many clients' "$work/pg/server.log" || true) - refused_before - own))
  per_worker=$(awk '$1 == "end" && $4 == "b" { n[$2]++ } END { for (w in n) printf " %d", n[w] }' "$log")
  printf '  the first item done %.2f s after the workers started, all %d after %.1f s; items per worker:%s\n' \
    "${first:-0}" "$items" "$(seconds_since "$started")" "$per_worker"
  printf '  up to %d sessions seen at once (%d of the script'"'"'s %d samples refused: the server was full); %d connections of the workers refused ("too many clients"); claim latency %s\n' \
    "$peak" "$own" "$samples" "$refused" "$(latency "0 0" "$(claims)")"
  if [ "$(finished)" != "$items" ]; then
    echo "  FAILED: pool exhaustion: $(finished) of $items items done after $POOL_PATIENCE s: the workers stalled"
    failures=$((failures + 1))
    kill -9 "${workers[@]}" 2>/dev/null || true
  else
    check "pool exhaustion" $((WORKERS * 2))
  fi
  pg_stop fast
  pg_start
}

scenario_6() {
  echo "== 6. Retry storm: every item's first stage fails once, then succeeds on its retry"
  prepare 6 "$ITEMS" fail-first
  for _ in $(seq "$WORKERS"); do start_worker --jobs 2; done
  wait_for "[ \"\$(succeeded)\" = $items ]"
  printf '  %d failures retried; claim latency %s\n' "$(awk '$1 == "fail"' "$log" | wc -l)" \
    "$(latency "0 0" "$(claims)")"
  check "retry storm" 0
}

scenario_7() {
  echo "== 7. Priority and starvation: a 120 s source in 5 s segment units beside $ITEMS short items"
  prepare 7 "$ITEMS"
  mkdir -p "$db/long" "$db/segments"
  ffmpeg -v error -f lavfi -i testsrc2=size=320x180:rate=25:duration=120 -f lavfi -i sine=frequency=440:duration=120 \
    -c:v libx264 -preset ultrafast -g 25 -c:a aac "$db/long/master.mp4"
  cat > "$db/long.json" <<'JSON'
{"version": 1, "name": "long", "inputs": {"path": "long"}, "stages": [
  {"id": "export", "uses": "ffmpeg.transcode", "with": {"output": "OUT/${input.stem}.mp4", "video": {"preset": "veryfast", "crf": 30}, "threads": 1, "segmentSeconds": 5}}
]}
JSON
  # A shared batch's outputs are absolute: every worker resolves a relative one from its own working folder.
  sed -i "s|OUT/|$work/$db/out/|" "$db/long.json"
  (cd "$db" && "$PIPELINE" submit long.json --db "$url" >/dev/null)
  started=$(now)
  for _ in $(seq "$WORKERS"); do start_worker --segments "$work/$db/segments"; done
  total=$((items + 1))
  wait_for "[ \"\$(long_done)\" = 1 ]"
  local long_seconds first_short last_short
  long_seconds=$(seconds_since "$started")
  wait_for "[ \"\$(succeeded)\" = $total ]"
  first_short=$(awk -v t="$started" '$1 == "end" && $4 == "b" { print $5 - t; exit }' "$log")
  last_short=$(awk -v t="$started" '$1 == "end" && $4 == "b" { last = $5 - t } END { print last }' "$log")
  printf '  long source done after %.1f s; short items: the first done after %.1f s, the last after %.1f s; claim latency %s\n' \
    "$long_seconds" "$first_short" "$last_short" "$(latency "0 0" "$(claims)")"
  check "priority and starvation" 0
}

scenario_8() {
  local count
  count=$(echo "($HOLD_SECONDS + 30) * $WORKERS * 2 / (2 * $STAGE_SECONDS + 0.15)" | bc)
  echo "== 8. A long-held transaction: idle in transaction for $HOLD_SECONDS s ($count items)"
  prepare 8 "$count"
  for _ in $(seq "$WORKERS"); do start_worker --jobs 2; done
  sleep 10
  local before bloat_before size_before during fifo
  before=$(claims)
  bloat_before=$(psql_ "select n_dead_tup from pg_stat_user_tables where relname = 'items'")
  size_before=$(psql_ "select pg_total_relation_size('items')")
  local done_before
  done_before=$(finished)
  fifo=$work/$db/hold
  mkfifo "$fifo"
  psql -h 127.0.0.1 -p "$pgport" -U pipeline -d "$db" -Atq < "$fifo" >/dev/null &
  local holder=$!
  pids+=("$holder")
  exec 7>"$fifo"
  echo "begin; select txid_current();" >&7
  sleep "$HOLD_SECONDS"
  during=$(claims)
  local done_during bloat_during size_during
  done_during=$(finished)
  bloat_during=$(psql_ "select n_dead_tup from pg_stat_user_tables where relname = 'items'")
  size_during=$(psql_ "select pg_total_relation_size('items')")
  echo "rollback;" >&7
  exec 7>&-
  wait "$holder" 2>/dev/null || true
  sleep 10
  printf '  items/s before %.1f, while held %.1f; dead rows in items %s before, %s at the end of the hold; items table %s before, %s after (bytes)\n' \
    "$(echo "$done_before / 10" | bc -l)" "$(echo "($done_during - $done_before) / $HOLD_SECONDS" | bc -l)" \
    "$bloat_before" "$bloat_during" "$size_before" "$size_during"
  printf '  claim latency before %s, while held %s, after %s\n' \
    "$(latency "0 0" "$before")" "$(latency "$before" "$during")" "$(latency "$during" "$(claims)")"
  check "long-held transaction" 0
}

for scenario in $SCENARIOS; do "scenario_$scenario"; done
if [ "$failures" -gt 0 ]; then echo "chaos.sh: $failures scenario(s) broke an invariant (SEED=$SEED)"; exit 1; fi
echo "chaos.sh: every invariant held (SEED=$SEED)"
