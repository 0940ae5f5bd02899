#!/usr/bin/env bash
# The dashboard (`pipeline serve`) over a ledger of ITEMS items (default 100,000; every 50th failed):
#  - time to first byte of the page (style and script inline), and the time until headless Chromium shows the
#    overview's counts and then its running and failed lists (from navigation start, as the page marks them);
#  - the latency of the API the page reads: /api/status, /api/items?status=failed, one item's page, and filtered
#    pages of 100 items (a name search, an error kind, a stage, a page deep into the list sorted by name);
#  - serve's resident memory over MINUTES minutes (default 10) with TABS pages open (default 5), each kept up to
#    date by its server-sent events (MINUTES=0 leaves it out);
#  - a run of WATCHED new files (default 10,000) with and without the dashboard open in a browser that polls it,
#    in alternating rounds (the median of the per-round ratios).
# The server and the browser of the page measurements run at the highest priority when the script runs as root
# (nice -n -20), so that other work on the host (builds, tests) does not time them.
# Needs python3 and chromium (scripts/install-deps.sh installs both).
set -euo pipefail
cd "$(dirname "$0")/.."
ITEMS=${ITEMS:-100000}
WATCHED=${WATCHED:-10000}
ROUNDS=${ROUNDS:-3}
MINUTES=${MINUTES:-10}
TABS=${TABS:-5}
# PIPELINE=path runs that binary instead of the release build.
if [ -z "${PIPELINE:-}" ]; then
  swift build -c release --product pipeline >/dev/null
  PIPELINE=$PWD/.build/release/pipeline
fi
BROWSER=$PWD/Tests/EndToEndTests/Fixtures/browser.py
work=$(mktemp -d)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
cd "$work"

files() {  # files FOLDER COUNT PREFIX: every 50th file is longer (the one the workflow below fails)
  python3 - "$@" <<'PY'
import os, sys
folder, count, prefix = sys.argv[1], int(sys.argv[2]), sys.argv[3]
for start in range(0, count, 1000):
    os.makedirs(f"{folder}/d{start // 1000:03d}", exist_ok=True)
for index in range(count):
    with open(f"{folder}/d{index // 1000:03d}/{prefix}{index:06d}.txt", "w") as f:
        f.write(f"{prefix} {index}\n" + ("damaged " * 20 if index % 50 == 0 else ""))
PY
}

echo "== a ledger of $ITEMS items"
files in "$ITEMS" f
# Every 50th item fails, so that the failures list has 2,000 entries to page through.
cat > wf.json <<'JSON'
{"version": 1, "name": "bench-dashboard", "inputs": {"path": "in", "recursive": true},
 "stages": [
  {"id": "first", "uses": "set", "with": {"name": "${input.stem}", "url": "https://video.example/${input.stem}"}},
  {"id": "check", "uses": "exec", "if": "input.size > 100",
   "with": {"command": ["sh", "-c", "echo \"checksum mismatch in $0\" >&2; exit 3", "${input.name}"]}}
 ]}
JSON
start=$(date +%s.%N)
"$PIPELINE" run wf.json --jobs 8 >/dev/null 2>&1 || true
echo "  ledger written in $(awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN {printf "%.1f", a - b}') s"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
prio=()
[ "$(id -u)" -ne 0 ] || prio=(nice -n -20)
# nice execs serve, so $! is serve itself: the cleanup stops it, and its memory is read from it.
"${prio[@]}" "$PIPELINE" serve --port "$port" >/dev/null 2>&1 &
serve_pid=$!
pids+=("$serve_pid")
until curl -s -o /dev/null "http://127.0.0.1:$port/"; do sleep 0.05; done
base="http://127.0.0.1:$port"
failed_id=$(curl -s "$base/api/items?status=failed&limit=1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["items"][0]["id"])')

median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
timed() {  # timed WHAT URL: the median of 21 requests' time to first byte and total time, in ms
  local ttfb=() total=()
  for _ in $(seq 21); do
    read -r first all < <(curl -s -o /dev/null -w "%{time_starttransfer} %{time_total}\n" "$2")
    ttfb+=("$first"); total+=("$all")
  done
  printf "  %-34s first byte %7.2f ms   total %7.2f ms\n" "$1" \
    "$(printf '%s\n' "${ttfb[@]}" | median | awk '{print $1*1000}')" \
    "$(printf '%s\n' "${total[@]}" | median | awk '{print $1*1000}')"
}
timed "GET / (the page)" "$base/"
timed "GET /api/status" "$base/api/status"
timed "GET /api/items?status=failed" "$base/api/items?status=failed&limit=200"
timed "GET /api/items?status=running" "$base/api/items?status=running&limit=200"
timed "GET /api/items/ID" "$base/api/items/$failed_id"
timed "GET /api/items?q=f0123 (search)" "$base/api/items?q=f0123&limit=100"
timed "GET /api/items?error=command-failed" "$base/api/items?error=command-failed&limit=100"
timed "GET /api/items?stage=check" "$base/api/items?stage=check&limit=100"
timed "GET /api/items?sort=name&offset=50000" "$base/api/items?sort=name&offset=50000&limit=100"

# The page marks when it first drew the counts (readyAt) and the running and failed lists (listedAt), in ms since
# navigation start.
shown=$(for _ in $(seq 7); do
  printf '%s\n' "{\"navigate\": \"$base/?$RANDOM\"}" '{"waitFor": "document.body.dataset.listed"}' \
    '{"eval": "document.body.dataset.readyAt + \" \" + document.body.dataset.listedAt"}'
done | "${prio[@]}" python3 "$BROWSER" | python3 -c '
import json, sys
answers = [json.loads(line) for line in sys.stdin]
print("\n".join(a["value"] for a in answers[2::3]))')
for column in 1 2; do
  what=$([ "$column" = 1 ] && echo "counts shown in Chromium" || echo "lists shown in Chromium")
  values=$(awk -v c="$column" '{print $c}' <<<"$shown")
  printf "  %-34s %s ms (median of 7: %s)\n" "$what" "$(median <<<"$values")" "$(tr '\n' ' ' <<<"$values")"
done

if [ "$MINUTES" != 0 ]; then
  echo "== serve's memory over $MINUTES minutes with $TABS pages open"
  rss() { awk '/^VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$1/status"; }
  tab_fds=()
  for tab in $(seq "$TABS"); do
    mkfifo "tab-$tab"
    python3 "$BROWSER" <"tab-$tab" >/dev/null &
    pids+=($!)
    exec {fd}>"tab-$tab"
    tab_fds+=("$fd")
    echo "{\"navigate\": \"$base/\"}" >&"$fd"
  done
  samples=()
  for minute in $(seq 0 "$MINUTES"); do
    [ "$minute" = 0 ] || sleep 60
    samples+=("$(rss "$serve_pid")")
    printf "  minute %2d: serve %s MiB resident\n" "$minute" "${samples[-1]}"
  done
  for fd in "${tab_fds[@]}"; do exec {fd}>&-; done
  printf "  growth from minute 1 to %d: %s MiB\n" "$MINUTES" \
    "$(awk -v a="${samples[-1]}" -v b="${samples[1]}" 'BEGIN {printf "%.1f", a - b}')"
fi

echo "== a run of $WATCHED new files, with and without the dashboard polled by a browser ($ROUNDS rounds)"
files watched "$WATCHED" w
cat > watched.json <<'JSON'
{"version": 1, "name": "bench-watched", "inputs": {"path": "watched", "recursive": true},
 "stages": [{"id": "first", "uses": "set", "with": {"name": "${input.stem}"}},
            {"id": "second", "uses": "set", "with": {"label": "${first.name}"}}]}
JSON
run_once() {  # seconds of one fresh run
  local start; start=$(date +%s.%N)
  "$PIPELINE" run watched.json --state watched-state --fresh --jobs 8 >/dev/null 2>&1
  awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN {print a - b}'
}
"$PIPELINE" serve --state watched-state --port 0 >serve.txt 2>&1 &
pids+=($!)
until grep -q "http://" serve.txt; do sleep 0.05; done
watched_url=$(grep -o "http://[0-9.:]*/" serve.txt)
ratios=()
for round in $(seq "$ROUNDS"); do
  alone=$(run_once)
  mkfifo "browser-$round"
  python3 "$BROWSER" <"browser-$round" >/dev/null &
  browser=$!
  exec 9>"browser-$round"
  echo "{\"navigate\": \"$watched_url\"}" >&9
  watched=$(run_once)
  exec 9>&-
  wait "$browser" || true
  ratio=$(awk -v a="$watched" -v b="$alone" 'BEGIN {print a / b}')
  ratios+=("$ratio")
  printf "  round %d: alone %6.2f s, watched %6.2f s, ratio %.3f\n" "$round" "$alone" "$watched" "$ratio"
done
printf "  median ratio watched/alone: %.3f\n" "$(printf '%s\n' "${ratios[@]}" | median)"
