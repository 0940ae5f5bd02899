#!/usr/bin/env bash
# HEVC and AV1 exports (ffmpeg.transcode with video.codec hevc / av1) against the ffmpeg CLI with the same
# settings, on a 720p clip of CLIP_SECONDS (default 10; the fixed cost of a run, its start and its checkpoints,
# weighs less on a longer one): libx265 -preset veryfast -crf 26 with the pool of THREADS and the min(THREADS, 4)
# frame threads the shim gives x265, and libsvtav1 preset 10 (x264's "veryfast") -crf 35 with THREADS logical
# processors, as the shim's; AAC, faststart.
# Rounds pair pipeline and CLI (the hosts drift within minutes), the one that goes first swapping every round so
# that neither always meets the same moment of a drift; prints per codec the median wall time, CPU time and peak
# RSS of each, the medians of the per-round wall and CPU ratios (goal: wall ≤ 1.0) with a 95 % bootstrap interval of
# each median (how far it could move on another run of as many rounds) and the rounds' wall ratios, both output sizes and the SSIM
# of each output against the source. SIDE_BY_SIDE=1 runs each round's two at the same time instead: then both meet
# the same load, and their CPU times compare the work each does even on a busy host (the wall times then say
# little); with SHIM=1, each round then also runs pipeline beside the shim's transcode alone and compares their CPU
# times (the work pipeline does beyond the encode's). The encoders get the same settings; the CLI alone passes the
# source's chroma sample location on (x265 writes it into the stream's VUI and its options text: the files differ by 35 bytes). CODECS="hevc" (or "av1") measures
# one; PIPELINE=path skips the release build. SHIM=1 also runs, in every round, the shim's transcode alone
# (benchmarks/shim-transcode.c, built against the release build's shim) with the same options: its ratios to pipeline
# and to the CLI split a difference into the encode's own and what pipeline does around it (start, ledger, probes,
# the output's fsync).
set -euo pipefail
cd "$(dirname "$0")/.."
. benchmarks/measure.sh
ROUNDS=${ROUNDS:-3}
THREADS=${THREADS:-2}
FRAME_THREADS=$((THREADS < 4 ? THREADS : 4))  # x265's frame threads: the shim caps them at 4 (encoder_settings.c)
CLIP_SECONDS=${CLIP_SECONDS:-10}
if [ "${SHIM:-0}" = 1 ]; then
  shim_objects=$PWD/.build/release/CMediaShim.build
  shim_source=$PWD/benchmarks/shim-transcode.c
  shim_include=$PWD/Sources/CMediaShim/include
fi
set_up_bench
if [ "${SHIM:-0}" = 1 ]; then
  gcc -O2 -I"$shim_include" "$shim_source" "$shim_objects"/*.o -o shim-transcode -ldl -lpthread -lm
fi

ffmpeg -v error -y -f lavfi -i "testsrc2=size=1280x720:rate=30:duration=$CLIP_SECONDS" \
  -f lavfi -i "sine=frequency=440:duration=$CLIP_SECONDS" \
  -c:v libx264 -preset ultrafast -crf 18 -c:a aac -shortest clip.mp4


ssim() {  # output: its SSIM against the source (all frames)
  ffmpeg -v info -i "$1" -i clip.mp4 -lavfi "[0:v][1:v]ssim" -f null - 2>&1 | sed -n 's/.*All:\([0-9.]*\).*/\1/p'
}

for codec in ${CODECS:-hevc av1}; do
  case $codec in
  hevc)
    crf=26
    cli=(-c:v libx265 -preset veryfast -crf $crf -x265-params "log-level=error:pools=$THREADS:frame-threads=$FRAME_THREADS")
    shim=(hevc veryfast $crf "$THREADS")  # the shim gives x265 a pool of THREADS and min(THREADS, 4) frame threads
    ;;
  av1)
    crf=35
    cli=(-c:v libsvtav1 -preset 10 -crf $crf -svtav1-params "lp=$THREADS")
    shim=(av1 veryfast $crf "$THREADS")  # SVT-AV1 preset 10, lp=THREADS
    ;;
  esac
  cat > "$codec.json" <<JSON
{"version": 1, "name": "bench-$codec", "stages": [{"id": "export", "uses": "ffmpeg.transcode",
  "with": {"output": "out/\${input.stem}.mp4", "threads": $THREADS, "video": {"codec": "$codec", "preset": "veryfast", "crf": $crf}}}]}
JSON
  run_pipeline() { measure "$PIPELINE" run "$codec.json" --input clip.mp4 --state "state-$codec-$1" --fresh > "${2:-p-round.txt}"; }
  run_cli() { SVT_LOG=1 measure ffmpeg -v error -y -threads "$THREADS" -i clip.mp4 "${cli[@]}" -c:a aac -movflags +faststart "cli-$codec.mp4" > c-round.txt; }
  run_shim() {  # between the two others of its round, so that it meets neither's moment of a drift more often
    if [ "${SHIM:-0}" = 1 ]; then SVT_LOG=1 measure ./shim-transcode clip.mp4 "shim-$codec.mp4" "${shim[@]}" > s-round.txt; fi
  }
  : > p.txt; : > c.txt; : > ratio.txt; : > cpu-ratio.txt; : > shim-ratio.txt; : > shim-cli-ratio.txt
  for round in $(seq "$ROUNDS"); do
    if [ "${SIDE_BY_SIDE:-0}" = 1 ]; then
      run_pipeline "$round" &
      run_cli
      wait $!
      if [ "${SHIM:-0}" = 1 ]; then
        run_pipeline "$round-beside-shim" q-round.txt &
        run_shim
        wait $!
      fi
    elif [ $((round % 2)) = 1 ]; then
      run_pipeline "$round"
      run_shim
      run_cli
    else
      run_cli
      run_shim
      run_pipeline "$round"
    fi
    read -r pw pc pm < p-round.txt
    read -r cw cc cm < c-round.txt
    if [ "${SHIM:-0}" = 1 ] && [ "${SIDE_BY_SIDE:-0}" = 1 ]; then
      read -r _ qc _ < q-round.txt
      read -r _ sc _ < s-round.txt
      awk -v q="$qc" -v s="$sc" 'BEGIN { print q / s }' >> shim-ratio.txt
    elif [ "${SHIM:-0}" = 1 ]; then
      read -r sw _ _ < s-round.txt
      awk -v p="$pw" -v s="$sw" 'BEGIN { print p / s }' >> shim-ratio.txt
      awk -v s="$sw" -v c="$cw" 'BEGIN { print s / c }' >> shim-cli-ratio.txt
    fi
    echo "$pw $pc $pm" >> p.txt
    echo "$cw $cc $cm" >> c.txt
    awk -v p="$pw" -v c="$cw" 'BEGIN { print p / c }' >> ratio.txt
    awk -v p="$pc" -v c="$cc" 'BEGIN { print p / c }' >> cpu-ratio.txt
  done
  printf '%-5s %ds pipeline %6.2f s wall %6.2f s CPU %6.1f MiB | ffmpeg CLI %6.2f s wall %6.2f s CPU %6.1f MiB\n' \
    "$codec" "$CLIP_SECONDS" "$(cut -d' ' -f1 p.txt | median)" "$(cut -d' ' -f2 p.txt | median)" "$(cut -d' ' -f3 p.txt | median | awk '{ print $1 / 1024 }')" \
    "$(cut -d' ' -f1 c.txt | median)" "$(cut -d' ' -f2 c.txt | median)" "$(cut -d' ' -f3 c.txt | median | awk '{ print $1 / 1024 }')"
  printf '      wall ratio %s, CPU ratio %s\n' "$(spread < ratio.txt)" "$(spread < cpu-ratio.txt)"
  printf '      per round (wall ratio): %s\n' "$(paste -sd' ' ratio.txt)"
  if [ "${SHIM:-0}" = 1 ] && [ "${SIDE_BY_SIDE:-0}" = 1 ]; then
    printf '      CPU beside the shim alone: pipeline / shim alone %s\n' "$(spread < shim-ratio.txt)"
  elif [ "${SHIM:-0}" = 1 ]; then
    printf '      wall: pipeline / shim alone %s, shim alone / ffmpeg CLI %s\n' "$(spread < shim-ratio.txt)" \
      "$(spread < shim-cli-ratio.txt)"
  fi
  printf '      size %d bytes, SSIM %s | ffmpeg CLI size %d bytes, SSIM %s\n' \
    "$(stat -c %s out/clip.mp4)" "$(ssim out/clip.mp4)" "$(stat -c %s "cli-$codec.mp4")" "$(ssim "cli-$codec.mp4")"
done
