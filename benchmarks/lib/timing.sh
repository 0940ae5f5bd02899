# Timing of commands for the media benchmarks; sourced. Uses the sourcing script's `$work` (a scratch folder),
# `$rounds` (how many times each command runs) and `$seconds` (the length of the clip the commands process).
# `measure COMMAND...` prints "wall cpu" of one run in seconds (its output goes to $work/out.txt);
# `median_per_minute LABEL COMMAND...` prints the median of `$rounds` runs, scaled to a minute of video.

measure() {
  local start=$EPOCHREALTIME
  /usr/bin/time -f "%U %S" -o "$work/time.txt" "$@" >"$work/out.txt" 2>/dev/null
  local end=$EPOCHREALTIME
  awk -v s="$start" -v e="$end" '{ printf "%.3f %.2f\n", e - s, $1 + $2 }' "$work/time.txt"
}

median_per_minute() {
  local label=$1
  shift
  for _ in $(seq "$rounds"); do measure "$@"; done | sort -n | awk -v n="$rounds" -v s="$seconds" -v l="$label" \
    'NR == int((n + 1) / 2) { printf "  %-36s %7.2f s wall %7.2f s CPU per minute\n", l, $1 * 60 / s, $2 * 60 / s }'
}
