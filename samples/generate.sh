#!/bin/sh
# Regenerates the sample media in this folder with the ffmpeg CLI (FFmpeg 5.1+ with libx264,
# libopus). Settings are deterministic (bitexact, one encoder thread, no timestamps in metadata),
# so running it again with the same FFmpeg build gives byte-identical files.
#
#   clip-h264-aac.mp4          H.264 + AAC, 640x360, 25 fps, 3 s, moov at the end (as cameras write)
#   clip-mpeg4.mov             MPEG-4 part 2 + PCM s16le mono 22.05 kHz in MOV, 480x270, 30 fps, 3 s
#                              (PCM cannot be stream-copied into MP4: remux must refuse it)
#   clip-portrait-rotated.mp4  H.264 + AAC stored 640x360 with a display matrix that rotates it 90°
#                              clockwise, like a phone held upright: shown as 360x640, picture upright
#   clip-no-audio.mp4          H.264 only, 426x240, 30000/1001 fps, 2 s
#   clip-two-audio.mkv         H.264 + AAC stereo (track 1, not default) + Opus mono (track 2, default)
#   truncated.mp4              first half of clip-h264-aac.mp4: the moov atom is missing, unreadable
#   truncated-faststart.mp4    first 60 % of a faststart copy of it: header intact, decodes ~half
#   not-media.mp4              a text file with a media extension
set -eu
cd "$(dirname "$0")"

ff() { ffmpeg -nostdin -hide_banner -loglevel error -y "$@"; }
# Bit-exact output: no library versions or creation times in the files, one thread per encoder.
BITEXACT="-fflags +bitexact -flags:v +bitexact -flags:a +bitexact -map_metadata -1 -threads 1"
X264="-c:v libx264 -preset veryfast -crf 30 -pix_fmt yuv420p -g 50"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# shellcheck disable=SC2086  # word splitting of the option lists is intended
ff -f lavfi -i testsrc2=s=640x360:r=25:d=3 -f lavfi -i sine=f=440:r=48000:d=3 \
   $X264 -c:a aac -b:a 64k -ac 2 $BITEXACT clip-h264-aac.mp4

ff -f lavfi -i testsrc2=s=480x270:r=30:d=3 -f lavfi -i sine=f=660:r=22050:d=3 \
   -c:v mpeg4 -q:v 12 -c:a pcm_s16le -ac 1 $BITEXACT clip-mpeg4.mov

# Stored landscape with the picture turned counter-clockwise, so that the clockwise display rotation
# shows it upright. FFmpeg 5.1 turns the `rotate` tag into a display matrix that rotates the picture
# counter-clockwise by the tag's value (ffprobe then says rotation=-90 for rotate=270), so "90°
# clockwise for display", the matrix a phone writes, is rotate=270 here.
ff -f lavfi -i testsrc2=s=360x640:r=25:d=2 -f lavfi -i sine=f=550:r=44100:d=2 \
   -vf transpose=cclock $X264 -c:a aac -b:a 48k -ac 1 $BITEXACT "$tmp/portrait.mp4"
ff -i "$tmp/portrait.mp4" -map 0 -c copy -metadata:s:v:0 rotate=270 $BITEXACT clip-portrait-rotated.mp4

ff -f lavfi -i testsrc2=s=426x240:r=30000/1001:d=2 $X264 $BITEXACT clip-no-audio.mp4

ff -f lavfi -i testsrc2=s=320x180:r=25:d=2 -f lavfi -i sine=f=440:r=48000:d=2 \
   -f lavfi -i sine=f=880:r=48000:d=2 -map 0:v -map 1:a -map 2:a \
   $X264 -c:a:0 aac -b:a:0 64k -ac:a:0 2 -c:a:1 libopus -b:a:1 32k -ac:a:1 1 \
   -metadata:s:a:0 language=eng -metadata:s:a:1 language=fra \
   -disposition:v:0 default -disposition:a:0 0 -disposition:a:1 default $BITEXACT clip-two-audio.mkv

size=$(wc -c < clip-h264-aac.mp4)
head -c $((size / 2)) clip-h264-aac.mp4 > truncated.mp4

ff -i clip-h264-aac.mp4 -map 0 -c copy -movflags +faststart $BITEXACT "$tmp/faststart.mp4"
size=$(wc -c < "$tmp/faststart.mp4")
head -c $((size * 6 / 10)) "$tmp/faststart.mp4" > truncated-faststart.mp4

printf 'This is not a video.\nIt is a text file with a media file name.\n' > not-media.mp4

ls -l clip-* truncated*.mp4 not-media.mp4
