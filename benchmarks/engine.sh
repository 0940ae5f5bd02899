#!/usr/bin/env bash
# Engine overhead: ITEMS items × 5 no-op (`set`) stages, one item at a time, each stage's end (with its
# start) checkpointed in a synced ledger commit. Compared, in the same run, with a shell loop
# that writes as many state files the crash-safe way (temp file, fsync, rename, fsync of the folder).
set -euo pipefail
cd "$(dirname "$0")/.."
ITEMS=${ITEMS:-1000}
STAGES=5
swift build -c release --product pipeline >/dev/null
PIPELINE=$PWD/.build/release/pipeline
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/in"
for i in $(seq -w 1 "$ITEMS"); do echo "$i" > "$work/in/item$i.txt"; done

stages=""
for s in $(seq 1 $STAGES); do
  stages+="{\"id\": \"s$s\", \"uses\": \"set\", \"with\": {\"n\": $s, \"name\": \"\${input.stem}\"}},"
done
cat > "$work/wf.json" <<JSON
{"version": 1, "name": "bench", "inputs": {"path": "in"}, "stages": [${stages%,}]}
JSON

measure() {  # prints "seconds peak-KiB"
  /usr/bin/time -f "%e %M" -o "$work/time" "$@" >/dev/null 2>&1
  cat "$work/time"
}

cd "$work"
read -r run_s run_kb < <(measure "$PIPELINE" run wf.json --state state)
read -r idle_s idle_kb < <(measure "$PIPELINE" run wf.json --state state)

cat > shell.sh <<'SH'
set -e
for f in in/*; do
  item=$(basename "$f")
  mkdir -p "shell/$item/stages"
  for s in 1 2 3 4 5; do
    for status in running succeeded; do
      printf '{"stage":"s%s","status":"%s","outputs":{"n":%s,"name":"%s"}}' "$s" "$status" "$s" "$item" > "shell/$item/stages/.s$s.tmp"
      sync "shell/$item/stages/.s$s.tmp"
      mv "shell/$item/stages/.s$s.tmp" "shell/$item/stages/s$s.json"
      sync "shell/$item/stages"
    done
  done
done
SH
read -r shell_s shell_kb < <(measure bash shell.sh)

transitions=$((ITEMS * STAGES))
writes=$((transitions + ITEMS * 2 + 3))  # per item: admitted, one per stage, finished; per run: 3
awk -v items="$ITEMS" -v t="$transitions" -v w="$writes" -v rs="$run_s" -v rk="$run_kb" -v is="$idle_s" -v ik="$idle_kb" \
    -v ss="$shell_s" -v sk="$shell_kb" 'BEGIN {
  printf "engine overhead, %d items x 5 no-op stages (%d stage runs, %d synced commits)\n", items, t, w
  printf "  pipeline run (all stages run):   %7.2f s  %6.3f ms/stage  %6.3f ms/commit  peak RSS %6.1f MiB\n", rs, rs*1000/t, rs*1000/w, rk/1024
  printf "  pipeline rerun (all reused):     %7.2f s  %6.3f ms/stage                     peak RSS %6.1f MiB\n", is, is*1000/t, ik/1024
  printf "  shell loop, same writes:         %7.2f s  %6.3f ms/stage  %6.3f ms/write  peak RSS %6.1f MiB\n", ss, ss*1000/t, ss*1000/(t*2), sk/1024
  printf "  ratio pipeline/shell:            %7.2f\n", rs/ss
}'
