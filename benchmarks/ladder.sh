#!/usr/bin/env bash
# An adaptive streaming ladder of 3 renditions (720p 2.8 Mb/s, 480p 1.4 Mb/s, 360p 800 kb/s, x264 veryfast, keyframes
# every SEGMENT seconds) plus a 128 kb/s AAC rendition, HLS in fMP4 segments, from one 1080p30 clip, made three ways:
#   package  ffmpeg.package (one pass: one decode feeding the three encoders, each on a thread of its own, and the
#            audio; then a stream copy of each rendition into segments)
#   separate three ffmpeg CLI transcodes, one per rendition, each straight into HLS, and one for the audio
#   onepass  the ffmpeg CLI's one-command ladder: one decode split into three scalers and encoders (-var_stream_map)
# All three make the same renditions with the same x264 settings, forced keyframes and THREADS pinned per decoder and
# encoder (default 2; the stage's `threads`, the CLI's -threads). Rounds alternate the three (the hosts drift within
# minutes); prints per way the median wall time, CPU time and peak RSS, and the median of the per-round wall ratios
# against the one-command ladder (goal ≤ 1.0).
# Short setting for a smoke run: CLIP_SECONDS=4 ROUNDS=1. PIPELINE=path skips the release build.
set -euo pipefail
cd "$(dirname "$0")/.."
. benchmarks/measure.sh
ROUNDS=${ROUNDS:-3}
THREADS=${THREADS:-2}
CLIP_SECONDS=${CLIP_SECONDS:-30}
SEGMENT=${SEGMENT:-4}
set_up_bench

ffmpeg -v error -y -f lavfi -i "testsrc2=size=1920x1080:rate=30:duration=$CLIP_SECONDS" \
  -f lavfi -i "sine=frequency=440:duration=$CLIP_SECONDS" -c:v libx264 -preset ultrafast -crf 18 -c:a aac -shortest clip.mp4


cat > package.json <<JSON
{"version": 1, "name": "bench-ladder", "stages": [{"id": "package", "uses": "ffmpeg.package",
  "with": {"output": "out/package", "segmentSeconds": $SEGMENT, "preset": "veryfast", "threads": $THREADS, "renditions": [
    {"height": 720, "bitrate": "2800k"}, {"height": 480, "bitrate": "1400k"}, {"height": 360, "bitrate": "800k"}]}}]}
JSON
keys="expr:gte(t,n_forced*$SEGMENT)"
hls=(-f hls -hls_time "$SEGMENT" -hls_playlist_type vod -hls_segment_type fmp4 -hls_flags independent_segments)

separate() {
  rm -rf out/separate && mkdir -p out/separate/{720p,480p,360p,audio}
  for rung in "720p 1280 720 2800k" "480p 854 480 1400k" "360p 640 360 800k"; do
    read -r name width height rate <<<"$rung"
    ffmpeg -v error -y -threads "$THREADS" -i clip.mp4 -an \
      -vf "scale=w=$width:h=$height:force_original_aspect_ratio=decrease:force_divisible_by=2" \
      -c:v libx264 -preset veryfast -b:v "$rate" -threads "$THREADS" -force_key_frames "$keys" \
      "${hls[@]}" -hls_segment_filename "out/separate/$name/seg_%05d.m4s" "out/separate/$name/index.m3u8"
  done
  ffmpeg -v error -y -i clip.mp4 -vn -c:a aac -b:a 128k \
    "${hls[@]}" -hls_segment_filename "out/separate/audio/seg_%05d.m4s" out/separate/audio/index.m3u8
}
onepass() {
  rm -rf out/onepass && mkdir -p out/onepass
  local fit=force_original_aspect_ratio=decrease:force_divisible_by=2  # 852x480 from 16:9, as the other two ways
  ffmpeg -v error -y -threads "$THREADS" -i clip.mp4 \
    -filter_complex "[0:v]split=3[a][b][c];[a]scale=$fit:w=1280:h=720[v0];[b]scale=$fit:w=854:h=480[v1];[c]scale=$fit:w=640:h=360[v2]" \
    -map "[v0]" -map "[v1]" -map "[v2]" -map 0:a \
    -c:v libx264 -preset veryfast -threads "$THREADS" -force_key_frames "$keys" \
    -b:v:0 2800k -b:v:1 1400k -b:v:2 800k -c:a aac -b:a 128k \
    "${hls[@]}" -master_pl_name master.m3u8 \
    -var_stream_map "v:0,agroup:aud v:1,agroup:aud v:2,agroup:aud a:0,agroup:aud" \
    -hls_segment_filename "out/onepass/%v/seg_%05d.m4s" "out/onepass/%v/index.m3u8"
}
export THREADS keys  # the two CLI ways run in a child bash (measured by /usr/bin/time) with their functions

: > package.txt; : > separate.txt; : > onepass.txt; : > package-ratio.txt; : > separate-ratio.txt
for round in $(seq "$ROUNDS"); do
  p=$(measure "$PIPELINE" run package.json --input clip.mp4 --state "state-$round" --fresh)
  s=$(measure bash -c "$(declare -p hls); $(declare -f separate); separate")
  o=$(measure bash -c "$(declare -p hls); $(declare -f onepass); onepass")
  echo "$p" >> package.txt
  echo "$s" >> separate.txt
  echo "$o" >> onepass.txt
  awk -v p="${p%% *}" -v o="${o%% *}" 'BEGIN { print p / o }' >> package-ratio.txt
  awk -v s="${s%% *}" -v o="${o%% *}" 'BEGIN { print s / o }' >> separate-ratio.txt
done
[ -f out/package/master.m3u8 ] || { echo "ffmpeg.package wrote no master playlist" >&2; exit 1; }
for way in package separate onepass; do
  ratio=1
  [ "$way" = onepass ] || ratio=$(median < "$way-ratio.txt")
  printf 'ladder %ds %-8s %7.2f s wall %7.2f s CPU %7.1f MiB | wall ratio to onepass %.2f\n' "$CLIP_SECONDS" "$way" \
    "$(cut -d' ' -f1 "$way.txt" | median)" "$(cut -d' ' -f2 "$way.txt" | median)" \
    "$(cut -d' ' -f3 "$way.txt" | median | awk '{ print $1 / 1024 }')" "$ratio"
done
