// The FFmpeg libraries as one system module. Only the CMediaShim C target includes FFmpeg headers;
// Swift code uses CMediaShim's small API instead. This target exists so that SwiftPM runs
// `pkg-config libavformat libavcodec libavutil libswscale libswresample` and passes the include
// and link flags to the targets that depend on it.
#ifndef CFFMPEG_SHIM_H
#define CFFMPEG_SHIM_H

#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libswscale/swscale.h>
#include <libswresample/swresample.h>

#endif
