// The FFmpeg libraries as one system module. Only the CMediaShim C target includes FFmpeg headers;
// Swift code uses CMediaShim's small API instead. The module links nothing: CMediaShim opens the
// libraries at run time, on first use (see CMediaShim/ffmpeg.c), so that a process that does not
// touch media never loads FFmpeg and the ~150 libraries it depends on.
#ifndef CFFMPEG_SHIM_H
#define CFFMPEG_SHIM_H

#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libswscale/swscale.h>
#include <libswresample/swresample.h>

#endif
