#!/usr/bin/env bash
# Whether two builds of pipeline encode the same bytes: run with one pipeline binary it prints the SHA-256 of what
# each export below writes from one synthetic clip; with two, it runs both and fails when any output differs.
#   scripts/encode-identity.sh PIPELINE                 digests, one line per output file (exit 1 when one is unsettled)
#   scripts/encode-identity.sh BEFORE_PIPELINE AFTER    both, compared (exit 1 on a difference or an unsettled file)
# The exports cover every encoder setting that reaches the shim: x264 presets (ultrafast, which turns off x264's
# adaptive quantization and with it a segment's first-frame boost, and others), x265 with pinned and automatic
# threads, SVT-AV1's mapped presets and logical processors, segmented exports, a profile, and packages whose HEVC
# renditions close their GOPs. Compare builds on one machine: automatic threads depend on its cores.
# Not every encode repeats its bytes, even from one build: libx264 0.164 with 2 threads gave another stream now and
# then (3 outputs in 16 runs of the ffmpeg CLI with -threads 2; 16 of 16 alike with 1 thread; valgrind shows it
# reading 4 bytes past the end of one of its own buffers, so what lies there can change its output), and two
# SVT-AV1 encoders running at once in one process (a package of two AV1 renditions) differed from run to run. So
# x264 runs with 1 thread here (each export in a process of its own), a package has one AV1 rendition at most, and
# each binary runs ROUNDS times (default 3): a file's digest is the one more than half of its rounds gave ("3/3" says
# how many did), and the builds are compared by it. A file without such a digest (3 rounds all different, 1 of 2)
# is "unsettled": the script says so and exits 1 rather than compare a digest chosen at random (raise ROUNDS).
# Run it under cpu-lock. Needs the ffmpeg CLI (lavfi). IDENTITY_KEEP=1 keeps the temporary folder.
set -euo pipefail
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: $0 PIPELINE [OTHER_PIPELINE]" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/encode-identity.XXXXXX")
if [ "${IDENTITY_KEEP:-0}" = 1 ]; then echo "outputs in $work" >&2; else trap 'rm -rf "$work"' EXIT; fi

ffmpeg -nostdin -v error -f lavfi -i testsrc2=size=320x240:rate=25:duration=2 -f lavfi -i sine=frequency=440:duration=2 \
  -c:v libx264 -preset ultrafast -crf 18 -c:a aac -shortest "$work/clip.mp4"

# name, then the options of one ffmpeg.transcode (or, for package-*, of one ffmpeg.package).
exports=(
  'h264-veryfast|"threads": 1, "video": {"preset": "veryfast", "crf": 23}'
  'h264-default|"threads": 1'
  'h264-ultrafast-segmented|"threads": 1, "segmentSeconds": 0.8, "video": {"preset": "ultrafast"}'
  'h264-medium-segmented|"threads": 1, "segmentSeconds": 0.8, "video": {"preset": "medium", "crf": 20}'
  'hevc-veryfast|"threads": 2, "video": {"codec": "hevc", "preset": "veryfast", "crf": 26}'
  'hevc-automatic-threads|"video": {"codec": "hevc", "preset": "ultrafast"}'
  'hevc-segmented|"threads": 1, "segmentSeconds": 0.8, "video": {"codec": "hevc", "preset": "fast"}'
  'av1-fast|"threads": 2, "video": {"codec": "av1", "preset": "fast", "crf": 35}'
  'av1-default|"threads": 1, "video": {"codec": "av1"}'
  'av1-ultrafast|"video": {"codec": "av1", "preset": "ultrafast"}'
  'profile-archive-hevc|"threads": 2, "profile": "archive-hevc"'
  'profile-web-720p|"threads": 1, "profile": "web-720p"'
  'package-hevc|"threads": 1, "segmentSeconds": 1, "preset": "superfast", "codec": "hevc", "renditions": [{"height": 240, "bitrate": "400k"}, {"height": 120, "bitrate": "150k"}]'
  'package-mixed|"threads": 1, "segmentSeconds": 1, "codec": "av1", "renditions": [{"height": 240, "bitrate": "400k"}, {"height": 180, "bitrate": "250k", "codec": "hevc"}, {"height": 120, "bitrate": "150k", "codec": "h264"}]'
)

digests() {  # pipeline binary, label: prints "export/file sha256" for every output
  local pipeline=$1 label=$2 entry name with uses output
  for entry in "${exports[@]}"; do
    name=${entry%%|*}
    with=${entry#*|}
    output="$work/$label/$name"
    if [[ $name == package-* ]]; then uses=ffmpeg.package; else uses=ffmpeg.transcode; output+=.mp4; fi
    mkdir -p "$work/$label"
    printf '{"version": 1, "name": "identity-%s", "stages": [{"id": "export", "uses": "%s", "with": {"output": "%s", %s}}]}\n' \
      "$name" "$uses" "$output" "$with" > "$work/$label-$name.json"
    "$pipeline" run "$work/$label-$name.json" --input "$work/clip.mp4" --state "$work/$label-state-$name" --fresh \
      > "$work/$label-$name.log" 2>&1 || { echo "$label: $name failed:" >&2; cat "$work/$label-$name.log" >&2; return 1; }
  done
  (cd "$work/$label" && find . -type f ! -path '*/.work/*' | LC_ALL=C sort | xargs sha256sum)
}

rounds() {  # pipeline binary, label: prints "file digest agreeing/ROUNDS", the digest more than half the rounds gave,
            # or "file unsettled best/ROUNDS" when no digest did
  local round
  for round in $(seq "${ROUNDS:-3}"); do
    rm -rf "${work:?}/$2"
    digests "$1" "$2" > "$work/$2-round-$round.txt"
  done
  cat "$work/$2"-round-*.txt | awk -v rounds="${ROUNDS:-3}" '
    { seen[$2 " " $1]++ }
    END {
      for (key in seen) { split(key, part, " "); if (seen[key] > best[part[1]]) { best[part[1]] = seen[key]; digest[part[1]] = part[2] } }
      for (file in digest) print file, (2 * best[file] > rounds ? digest[file] : "unsettled"), best[file] "/" rounds
    }' | LC_ALL=C sort
}

unsettled() {  # digests file: fails (and says which) when a file of it is unsettled
  if grep -q ' unsettled ' "$1"; then
    echo "UNSETTLED: $(grep -c ' unsettled ' "$1") files have no digest that more than half of ${ROUNDS:-3} rounds gave" \
      "($(awk '$2 == "unsettled" { print $1 }' "$1" | paste -sd' ')); run more ROUNDS" >&2
    return 1
  fi
}

rounds "$1" first > "$work/first.txt"
if [ $# = 1 ]; then
  cat "$work/first.txt"
  unsettled "$work/first.txt" || exit 1
  exit 0
fi
rounds "$2" second > "$work/second.txt"
# One line per file of either build: its name, same / DIFFERENT / unsettled, and each build's agreeing rounds (a
# file only one build wrote is DIFFERENT, its digest "missing" in the other).
LC_ALL=C join -a 1 -a 2 -e missing -o 0,1.2,1.3,2.2,2.3 "$work/first.txt" "$work/second.txt" | awk '
  { print $1, ($2 == "unsettled" || $4 == "unsettled" ? "unsettled" : $2 == $4 ? "same" : "DIFFERENT"), $3, $5 }' \
  | tee "$work/compared.txt"
unsettled "$work/first.txt" || true
unsettled "$work/second.txt" || true
if grep -q ' DIFFERENT ' "$work/compared.txt"; then
  echo "DIFFERENT (first: $1, second: $2)"
  exit 1
elif grep -q ' unsettled ' "$work/compared.txt"; then
  echo "not compared: unsettled files (above)"
  exit 1
fi
echo "identical: $(wc -l < "$work/compared.txt") files, each by more than half of its rounds"
