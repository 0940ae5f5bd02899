#!/usr/bin/env bash
# The no-op rerun and the plan of benchmarks/batch.sh's workflow, two builds of `pipeline` against each other,
# in pairs on one host: usage `benchmarks/batch-pairs.sh BEFORE AFTER` (two binaries).
#  - Each round runs a rerun pair, then a plan pair. The order alternates, ABBA: before first in odd rounds,
#    after first in even ones, so neither binary always takes the colder turn.
#  - A warm-up round comes first and is dropped.
#  - Then PAIRS rounds (default 6). For each, the ratio after / before of the CPU time (user + sys) and of the
#    wall time is printed, then the median ratio of all pairs, the least CPU of each binary, and each binary's
#    median wall time and largest peak memory (resident set).
# FOLDER names a folder holding in/, wf.json and the ledger of a finished first run (.pipeline/). For a
# million files, make one as benchmarks/batch.sh makes its files, and give it a ledger with
# `python3 benchmarks/batch-ledger.py 1000000 TEMPLATE .pipeline/ledger.sqlite` (TEMPLATE: the ledger of a
# real first run, e.g. of 100,000 files). Without FOLDER, FILES files (default 100,000) are made in a
# temporary folder, and AFTER runs them once first (a few minutes for 100,000 files on a 2-core host).
# Needs python3. Run it under cpu-lock on a shared host.
set -euo pipefail
source "$(dirname "$0")/lib/batch-files.sh"
[ $# -eq 2 ] || { echo "usage: $0 BEFORE AFTER (two pipeline binaries)" >&2; exit 2; }
before=$(realpath "$1")
after=$(realpath "$2")
PAIRS=${PAIRS:-6}
FILES=${FILES:-100000}
work=""
cleanup() { [ -z "$work" ] || rm -rf "$work"; }
trap cleanup EXIT
if [ -n "${FOLDER:-}" ]; then
  cd "$FOLDER"
else
  work=$(mktemp -d)
  cd "$work"
  make_batch "$FILES"
  "$after" run wf.json --jobs 8 >/dev/null 2>&1
fi
[ -f wf.json ] && [ -d .pipeline ] || { echo "$PWD holds no wf.json and .pipeline/" >&2; exit 2; }
times=$(mktemp)

one() {  # label binary what: appends "round label what wall cpu memory" to $times
  local label=$1 binary=$2 what=$3 args
  if [ "$what" = rerun ]; then args=(run wf.json --jobs 8); else args=(plan wf.json); fi
  /usr/bin/time -f "%e %U %S %M" -o time.txt "$binary" "${args[@]}" >/dev/null 2>&1 \
    || { echo "failed: $binary ${args[*]}" >&2; cat time.txt >&2; exit 1; }
  tail -1 time.txt | awk -v r="$round" -v l="$label" -v w="$what" '{ printf "%s %s %s %s %.2f %s\n", r, l, w, $1, $2 + $3, $4 }' >> "$times"
}

for round in $(seq 0 "$PAIRS"); do
  for what in rerun plan; do
    if [ $((round % 2)) -eq 1 ]; then
      one before "$before" "$what"; one after "$after" "$what"
    else
      one after "$after" "$what"; one before "$before" "$what"
    fi
  done
done
rm -f time.txt

python3 - "$times" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
for what in ["rerun", "plan"]:
    figure = {(int(r[0]), r[1]): (float(r[3]), float(r[4]), int(r[5])) for r in rows if r[2] == what}
    pairs = sorted({round for round, _ in figure if round > 0})  # round 0 is the warm-up, dropped
    cpu = [figure[(p, "after")][1] / figure[(p, "before")][1] for p in pairs]
    wall = [figure[(p, "after")][0] / figure[(p, "before")][0] for p in pairs]
    print(f"{what}: after / before CPU per pair " + " ".join(f"{r:.3f}" for r in cpu)
          + f"; median {statistics.median(cpu):.3f} CPU, {statistics.median(wall):.3f} wall")
    least = {label: min(figure[(p, label)][1] for p in pairs) for label in ["before", "after"]}
    print(f"{what}: least CPU before {least['before']:.2f} s, after {least['after']:.2f} s ({len(pairs)} pairs)")
    wall = {label: statistics.median(figure[(p, label)][0] for p in pairs) for label in ["before", "after"]}
    memory = {label: max(figure[(p, label)][2] for p in pairs) / 1024 for label in ["before", "after"]}
    print(f"{what}: median wall before {wall['before']:.2f} s, after {wall['after']:.2f} s; "
          + f"peak memory before {memory['before']:.0f} MiB, after {memory['after']:.0f} MiB")
PY
rm -f "$times"
