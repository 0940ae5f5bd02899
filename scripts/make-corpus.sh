#!/bin/bash
# Makes the export corpus: tiny files (half a second, 160×96 or so) with the oddities real libraries hold,
# each made by the ffmpeg CLI's own encoders, so `mode: auto` can be tried on every one with every profile
# (Tests/MediaStagesTests/ExportCorpusTests.swift).
#   scripts/make-corpus.sh FOLDER
# Writes FOLDER/<name>.<ext> and FOLDER/corpus.tsv (name, file, what it is); prints nothing on success.
# Needs the ffmpeg CLI from Debian 12 (libx264, libx265, libsvtav1, libvpx, prores_ks, dnxhd, mpeg2video).
set -euo pipefail
out=${1:?usage: make-corpus.sh FOLDER}
mkdir -p "$out"
cd "$out"
: > corpus.tsv

# The picture and the sound most files are made of.
V="testsrc2=size=160x96:rate=24:duration=0.5"
A="sine=frequency=440:sample_rate=48000:duration=0.5"
ff() { ffmpeg -nostdin -hide_banner -loglevel error -y "$@"; }
add() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >> corpus.tsv; }
x264=(-c:v libx264 -preset ultrafast)

# Pixel formats, bit depths, ranges.
ff -f lavfi -i "$V" -f lavfi -i "$A" "${x264[@]}" -pix_fmt yuv444p -c:a aac h264-444.mp4
add h264-444 h264-444.mp4 "H.264 High 4:4:4 Predictive"
ff -f lavfi -i "$V" -f lavfi -i "$A" "${x264[@]}" -pix_fmt yuv420p10le -c:a aac h264-high10.mp4
add h264-high10 h264-high10.mp4 "H.264 High 10 (10-bit)"
ff -f lavfi -i "$V" -f lavfi -i "$A" "${x264[@]}" -pix_fmt yuv422p -c:a aac h264-422.mkv
add h264-422 h264-422.mkv "H.264 High 4:2:2 in Matroska"
ff -f lavfi -i "$V" -f lavfi -i "$A" "${x264[@]}" -pix_fmt yuvj420p -c:a aac h264-full-range.mp4
add h264-full-range h264-full-range.mp4 "H.264 with full-range (pc) samples"
ff -f lavfi -i "$V" -f lavfi -i "$A" -c:v libx264 -preset ultrafast -level 5.1 -c:a aac h264-level-51.mp4
add h264-level-51 h264-level-51.mp4 "H.264 that says level 5.1"
ff -f lavfi -i "$V" -f lavfi -i "$A" -c:v libx264 -profile:v main -pix_fmt yuv420p -c:a aac fits-web.mp4
add fits-web fits-web.mp4 "H.264 Main + AAC LC 48 kHz stereo: fits the H.264 profiles"

# Interlacing, aspect ratio, size, frame rate, rotation.
ff -f lavfi -i "$V" -f lavfi -i "$A" "${x264[@]}" -flags +ildct+ilme -x264opts tff=1 -field_order tt \
    -c:a aac -f mpegts h264-interlaced.ts
add h264-interlaced h264-interlaced.ts "interlaced H.264 (top field first) in MPEG-TS"
ff -f lavfi -i "testsrc2=size=176x144:rate=25:duration=0.5" -f lavfi -i "$A" -c:v mpeg2video -flags +ildct+ilme \
    -top 1 -b:v 1M -c:a mp2 -f vob mpeg2-interlaced.mpg
add mpeg2-interlaced mpeg2-interlaced.mpg "interlaced MPEG-2 + MP2 in a program stream"
ff -f lavfi -i "testsrc2=size=176x144:rate=25:duration=0.5,setsar=16/11" -f lavfi -i "$A" "${x264[@]}" -c:a aac \
    anamorphic.mkv
add anamorphic anamorphic.mkv "non-square pixels (SAR 16:11, PAL widescreen)"
ff -f lavfi -i "testsrc2=size=161x91:rate=24:duration=0.5" -f lavfi -i "$A" -c:v ffv1 -c:a flac odd-size.mkv
add odd-size odd-size.mkv "161×91: odd dimensions (FFV1 + FLAC)"
ff -f lavfi -i "testsrc2=size=160x96:rate=60:duration=0.5" -f lavfi -i "$A" "${x264[@]}" -c:a aac fps-60.mp4
add fps-60 fps-60.mp4 "60 frames per second"
ff -f lavfi -i "testsrc2=size=160x96:rate=120:duration=0.5" -f lavfi -i "$A" "${x264[@]}" -c:a aac fps-120.mp4
add fps-120 fps-120.mp4 "120 frames per second"
ff -f lavfi -i "testsrc2=size=160x96:rate=30:duration=0.5,select='not(between(n\,4\,9))'" -f lavfi -i "$A" \
    "${x264[@]}" -fps_mode vfr -c:a aac vfr.mkv
add vfr vfr.mkv "variable frame rate (a gap of 6 frames)"
# FFmpeg 5.1 writes a display matrix from the `rotate` tag only when copying the stream.
ff -f lavfi -i "$V" -f lavfi -i "$A" "${x264[@]}" -c:a aac upright.mp4
ff -i upright.mp4 -c copy -metadata:s:v:0 rotate=90 rotated-90.mp4
rm upright.mp4
add rotated-90 rotated-90.mp4 "display matrix: turned 90°"

# Codecs and containers.
ff -f lavfi -i "$V" -f lavfi -i "$A" -c:v libx265 -preset ultrafast -x265-params log-level=error -c:a aac hevc.mp4
add hevc hevc.mp4 "HEVC Main (tagged hev1) + AAC"
ff -f lavfi -i "$V" -f lavfi -i "$A" -c:v libx265 -preset ultrafast -x265-params log-level=error \
    -pix_fmt yuv420p10le -c:a libopus hevc-main10.mkv
add hevc-main10 hevc-main10.mkv "HEVC Main 10 + Opus in Matroska"
# HDR: 10-bit HEVC tagged BT.2020 with the PQ (HDR10) or HLG transfer; every profile tone-maps it to SDR.
for transfer in smpte2084:pq arib-std-b67:hlg; do
    ff -f lavfi -i "$V" -f lavfi -i "$A" -c:v libx265 -preset ultrafast -x265-params log-level=error \
        -pix_fmt yuv420p10le -color_primaries bt2020 -color_trc "${transfer%:*}" -colorspace bt2020nc -c:a aac \
        "hevc-${transfer#*:}.mp4"
done
add hevc-pq hevc-pq.mp4 "HDR: HEVC Main 10 with the PQ transfer (HDR10), BT.2020"
add hevc-hlg hevc-hlg.mp4 "HDR: HEVC Main 10 with the HLG transfer, BT.2020"
ff -f lavfi -i "$V" -f lavfi -i "$A" -c:v libvpx-vp9 -deadline realtime -cpu-used 8 -c:a libopus vp9.webm
add vp9 vp9.webm "VP9 + Opus in WebM"
SVT_LOG=1 ff -f lavfi -i "$V" -f lavfi -i "$A" -c:v libsvtav1 -preset 12 -c:a libopus av1.mkv
add av1 av1.mkv "AV1 + Opus in Matroska"
ff -f lavfi -i "$V" -f lavfi -i "$A" -c:v prores_ks -profile:v 3 -c:a pcm_s24le prores.mov
add prores prores.mov "ProRes 422 HQ (10-bit 4:2:2) + 24-bit PCM in QuickTime"
ff -f lavfi -i "testsrc2=size=256x144:rate=25:duration=0.5" -f lavfi -i "$A" -c:v dnxhd -profile:v dnxhr_lb \
    -pix_fmt yuv422p -c:a pcm_s16le dnxhr.mxf
add dnxhr dnxhr.mxf "DNxHR LB + PCM in MXF"
ff -f lavfi -i "$V" -f lavfi -i "$A" -c:v mjpeg -pix_fmt yuvj422p -c:a pcm_s16le mjpeg.avi
add mjpeg mjpeg.avi "Motion JPEG (full-range 4:2:2) + PCM in AVI"
ff -f lavfi -i "$V" -f lavfi -i "$A" -c:v mpeg4 -c:a libmp3lame mpeg4.avi
add mpeg4 mpeg4.avi "MPEG-4 Part 2 + MP3 in AVI"
ff -f lavfi -i "$V" -f lavfi -i "$A" -c:v wmv2 -c:a wmav2 wmv.asf
add wmv wmv.asf "WMV 8 + WMA in ASF"

# Audio layouts and tracks.
ff -f lavfi -i "$V" -f lavfi -i "sine=frequency=440:sample_rate=8000:duration=0.5" "${x264[@]}" -c:a aac -ac 1 \
    mono-8k.mp4
add mono-8k mono-8k.mp4 "mono AAC at 8 kHz"
ff -f lavfi -i "$V" -f lavfi -i "$A" "${x264[@]}" -c:a aac -profile:a aac_main aac-main.mp4
add aac-main aac-main.mp4 "AAC Main profile (not LC)"
ff -f lavfi -i "$V" -f lavfi -i "$A" "${x264[@]}" -af "pan=7.1|c0=c0|c1=c0|c2=c0|c3=c0|c4=c0|c5=c0|c6=c0|c7=c0" \
    -c:a aac surround-71.mkv
add surround-71 surround-71.mkv "7.1 AAC"
ff -f lavfi -i "$V" -f lavfi -i "$A" -f lavfi -i "sine=frequency=880:duration=0.5" -map 0 -map 1 -map 2 \
    "${x264[@]}" -c:a aac two-audio.mp4
add two-audio two-audio.mp4 "two audio tracks"
ff -f lavfi -i "$V" "${x264[@]}" no-audio.mp4
add no-audio no-audio.mp4 "no audio"

# Extra streams.
printf '1\n00:00:00,000 --> 00:00:00,400\nhello\n' > subtitles.srt
ff -f lavfi -i "$V" -f lavfi -i "$A" -i subtitles.srt "${x264[@]}" -c:a aac -c:s srt subtitles.mkv
add subtitles subtitles.mkv "a SubRip subtitle track"
ff -f lavfi -i "$V" -f lavfi -i "$A" -i subtitles.srt "${x264[@]}" -c:a aac -c:s mov_text subtitles.mp4
add subtitles-mov-text subtitles.mp4 "a mov_text subtitle track in MP4"
rm subtitles.srt
# A Blu-ray (PGS) subtitle, which the ffmpeg CLI cannot make from text: one display set shows an 8×2 white
# bitmap from 0.1 s, the next clears it at 0.4 s. Each segment: "PG", PTS and DTS (90 kHz), type, size, payload.
pgs() { printf "PG$1\\x00\\x00\\x00\\x00$2"; }
{
    show='\x00\x00\x23\x28' clear='\x00\x00\x8c\xa0' window='\x17\x00\x0a\x01\x00\x00\x10\x00\x10\x00\x08\x00\x02'
    pgs "$show" '\x16\x00\x13\x00\xa0\x00\x60\x10\x00\x00\x80\x00\x00\x01\x00\x00\x00\x00\x00\x10\x00\x10'
    pgs "$show" "$window"
    pgs "$show" '\x14\x00\x07\x00\x00\x01\xeb\x80\x80\xff'
    pgs "$show" '\x15\x00\x15\x00\x00\x00\xc0\x00\x00\x0e\x00\x08\x00\x02\x00\x88\x01\x00\x00\x00\x88\x01\x00\x00'
    pgs "$show" '\x80\x00\x00'
    pgs "$clear" '\x16\x00\x0b\x00\xa0\x00\x60\x10\x00\x01\x00\x00\x00\x00'
    pgs "$clear" "$window"
    pgs "$clear" '\x80\x00\x00'
} > subtitles.sup
ff -f lavfi -i "$V" -f lavfi -i "$A" -i subtitles.sup -map 0 -map 1 -map 2 "${x264[@]}" -c:a aac -c:s copy \
    subtitles-pgs.mkv
add subtitles-pgs subtitles-pgs.mkv "a Blu-ray (PGS) bitmap subtitle track"
rm subtitles.sup
ff -f lavfi -i "$V" -f lavfi -i "$A" "${x264[@]}" -c:a aac -timecode 01:00:00:00 timecode.mov
add timecode timecode.mov "a timecode (tmcd) track"
ff -f lavfi -i "testsrc2=size=64x64:rate=1:duration=0.5" -frames:v 1 cover.png
ff -f lavfi -i "$V" -f lavfi -i "$A" -i cover.png -map 0 -map 1 -map 2 "${x264[@]}" -c:a aac -c:v:1 png \
    -disposition:v:1 attached_pic cover-art.mp4
add cover-art cover-art.mp4 "an attached cover picture beside the video"

# Timing: start offsets, stream lengths, one frame.
ff -f lavfi -i "$V" -f lavfi -i "$A" "${x264[@]}" -c:a aac -output_ts_offset 10 -f mpegts late-start.ts
add late-start late-start.ts "timestamps starting at 10 s"
ff -f lavfi -i "$V" -itsoffset 0.3 -f lavfi -i "$A" "${x264[@]}" -c:a aac audio-late.mkv
add audio-late audio-late.mkv "audio starting 0.3 s after the video"
ff -itsoffset 0.3 -f lavfi -i "$V" -f lavfi -i "$A" "${x264[@]}" -c:a aac video-late.mkv
add video-late video-late.mkv "video starting 0.3 s after the audio"
ff -f lavfi -i "$V" -f lavfi -i "sine=frequency=440:sample_rate=48000:duration=1" "${x264[@]}" -c:a aac \
    audio-longer.mp4
add audio-longer audio-longer.mp4 "audio twice as long as the video"
ff -f lavfi -i "$V" -f lavfi -i "$A" -frames:v 1 "${x264[@]}" -c:a aac one-frame.mp4
add one-frame one-frame.mp4 "one video frame"

# Not videos.
ff -f lavfi -i "$A" -i cover.png -map 0 -map 1 -c:a aac -c:v png -disposition:v attached_pic audio-only.m4a
add audio-only audio-only.m4a "audio with a cover picture, no video"
mv cover.png still.png
add still-image still.png "a still picture (PNG)"
