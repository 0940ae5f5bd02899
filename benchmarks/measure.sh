# Sourced by the benchmarks that compare pipeline with a reference tool in paired rounds (codecs.sh, hdr.sh,
# ladder.sh), from their work folder.

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
