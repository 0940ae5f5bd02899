# Sourced by the benchmarks that compare pipeline with a reference tool in paired rounds (codecs.sh, hdr.sh,
# ladder.sh), from the repository's root.

set_up_bench() {  # PIPELINE: the release build (made first) unless it names a binary; then a work folder
  # of its own, removed on exit, becomes the current one
  if [ -z "${PIPELINE:-}" ]; then
    swift build -c release --product pipeline >/dev/null
    PIPELINE=$PWD/.build/release/pipeline
  fi
  PIPELINE=$(realpath "$PIPELINE")
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  cd "$work"
}

measure() {  # runs a command; prints "wall cpu peak-KiB"; fails when the command fails
  local start=$EPOCHREALTIME times
  times=$(mktemp -p .)  # its own file: two measurements may run at once
  /usr/bin/time -f "%U %S %M" -o "$times" "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; rm -f "$times"; return 1; }
  local end=$EPOCHREALTIME
  awk -v wall="$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.3f", e - s }')" '{ printf "%s %.2f %s\n", wall, $1 + $2, $3 }' "$times"
  rm -f "$times"
}

median() {  # a column of numbers: the median
  sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

spread() {  # a column of per-round ratios: "median (95 % interval lo-hi, N rounds)", the interval a seeded bootstrap
  # of the median (10,000 resamples, seed 1): how far the median could move on another run of as many rounds
  python3 -c '
import random, statistics, sys
values = [float(line) for line in sys.stdin if line.strip()]
rng = random.Random(1)
medians = sorted(statistics.median(rng.choices(values, k=len(values))) for _ in range(10000))
print(f"{statistics.median(values):.3f} (95 % interval {medians[250]:.3f}-{medians[9749]:.3f}, {len(values)} rounds)")'
}
