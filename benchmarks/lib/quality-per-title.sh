#!/usr/bin/env bash
# The per-title part of benchmarks/quality.sh: `quality.target` (the CRF search) over a corpus of very different
# clips against one fixed CRF, chosen so that the worst clip meets the same target (the lowest CRF the search chose
# for any clip: at it, that clip's export meets the target, as its report shows). Prints per clip the chosen CRF,
# the samples' score at it (the search's estimate), the export's VMAF as its report measures it, its size, and the
# search's CPU against the CPU of the final encode alone, all timed by /usr/bin/time: the search's is the export's
# with the target less the same export at the chosen CRF (whole, as video.crf takes) measured with quality alone;
# the final encode's is that export without quality. Then the totals: per-title size / fixed-CRF size
# (goal <= 0.85) and search CPU / final encode CPU (goal <= 30 %).
# CONFIG=debug uses the debug build (its C, libvmaf's too, is unoptimised: the search's share comes out higher).
#   TITLE_SECONDS=180 TARGET=93 SIZE=320x180 CONFIG=release benchmarks/quality.sh per-title
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${TITLE_SECONDS:-180}
target=${TARGET:-93}
size=${SIZE:-320x180}
config=${CONFIG:-release}
swift build -c "$config" --product pipeline >/dev/null
pipeline=$PWD/.build/$config/pipeline
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
independent=$(python3 -c "import imageio_ffmpeg; print(imageio_ffmpeg.get_ffmpeg_exe())" 2>/dev/null || true)

corpus=(
  "still:smptebars=size=$size:rate=24:duration=$seconds"
  "testsrc2:testsrc2=size=$size:rate=24:duration=$seconds"
  "mandelbrot:mandelbrot=size=$size:rate=24,trim=duration=$seconds"
  "life:life=size=$size:rate=24:mold=10:ratio=0.5,trim=duration=$seconds"
  "cellauto:cellauto=size=$size:rate=24:rule=110,trim=duration=$seconds"
  "noise-light:testsrc2=size=$size:rate=24:duration=$seconds,noise=alls=8:allf=t"
  "noise-strong:testsrc2=size=$size:rate=24:duration=$seconds,noise=alls=40:allf=t"
)
[ -n "$independent" ] && corpus+=("zoneplate:zoneplate=size=$size:rate=24:kt2=30:kx2=200:ky2=200,trim=duration=$seconds")

export_clip() {  # name with-json tag: exports in-<name>/<name>.mp4 in <tag>-<name>/; prints its CPU seconds, keeps its log
  local name=$1 with=$2 tag=$3
  mkdir -p "$work/$tag-$name"
  cat >"$work/$tag-$name/wf.json" <<JSON
{"version": 1, "name": "$tag-$name", "inputs": {"path": "$work/in-$name"},
 "stages": [{"id": "export", "uses": "ffmpeg.transcode",
   "with": {"output": "$work/$tag-$name/out.mp4", "threads": 2, $with}}]}
JSON
  (cd "$work/$tag-$name" && /usr/bin/time -f "%U %S" -o time.txt "$pipeline" run wf.json >log.txt 2>&1)
  awk '{ printf "%.2f\n", $1 + $2 }' "$work/$tag-$name/time.txt"
}

printf "%-13s %6s %8s %8s %11s %11s %11s\n" clip CRF samples VMAF size search-CPU encode-CPU
declare -A chosen
search_total=0
encode_total=0
title_total=0
for entry in "${corpus[@]}"; do
  name=${entry%%:*}
  source=${entry#*:}
  mkdir -p "$work/in-$name"
  tool=ffmpeg
  [ "$name" = zoneplate ] && tool=$independent
  "$tool" -nostdin -v error -f lavfi -i "$source" -c:v libx264 -preset ultrafast -qp 0 -pix_fmt yuv420p \
    "$work/in-$name/$name.mp4"
  title=$(export_clip "$name" "\"quality\": {\"metric\": \"vmaf\", \"target\": $target}" title)
  log=$work/title-$name/log.txt
  crf=$(grep -o 'crf search: encoding at CRF [0-9.]*' "$log" | grep -o '[0-9.]*$')
  whole=${crf%.*}
  sampled=$(sed -n "s/.*crf search: CRF $crf scores VMAF \([0-9.]*\) .*/\1/p" "$log" | tail -1)
  vmaf=$(sed -n 's/.*quality: VMAF \([0-9.]*\) .*/\1/p' "$log" | tail -1)
  bytes=$(stat -c %s "$work/title-$name/out.mp4")
  measured=$(export_clip "$name" "\"video\": {\"crf\": $whole}, \"quality\": {\"metric\": \"vmaf\"}" measured)
  search=$(awk -v a="$title" -v b="$measured" 'BEGIN { printf "%.2f", a - b }')
  encode=$(export_clip "$name" "\"video\": {\"crf\": $whole}" alone)
  chosen[$name]=$whole
  search_total=$(awk -v a="$search_total" -v b="$search" 'BEGIN { print a + b }')
  encode_total=$(awk -v a="$encode_total" -v b="$encode" 'BEGIN { print a + b }')
  title_total=$((title_total + bytes))
  printf "%-13s %6s %8s %8s %11s %9ss %9ss\n" "$name" "$crf" "$sampled" "$vmaf" "$bytes" "$search" "$encode"
done

fixed=$(printf "%s\n" "${chosen[@]}" | sort -n | head -1)
fixed_total=0
for name in "${!chosen[@]}"; do
  export_clip "$name" "\"video\": {\"crf\": $fixed}" fixed >/dev/null
  fixed_total=$((fixed_total + $(stat -c %s "$work/fixed-$name/out.mp4")))
done
echo "$seconds s $size 24 fps clips, x264 default preset, 2 threads, target VMAF $target (mean), $config build"
echo "per-title total $title_total bytes; fixed CRF $fixed (the worst clip's) total $fixed_total bytes"
awk -v t="$title_total" -v f="$fixed_total" 'BEGIN { printf "size per title / fixed CRF: %.3f (goal <= 0.85)\n", t / f }'
awk -v s="$search_total" -v e="$encode_total" \
  'BEGIN { printf "search CPU / final encode CPU: %.1f %% (%.1f s / %.1f s; goal <= 30 %%)\n", 100 * s / e, s, e }'
