// FFmpeg, loaded on first use. FFmpeg's libraries pull in about 150 others (codecs, TLS, SVG,
// GLib...): linked at build time, every start of the process would map and relocate them, which
// costs some 40 ms and over 20 MiB of resident memory even in runs that only upload. So the shim
// opens them with dlopen when a media function is first called, by the sonames of the headers it
// was compiled against, and resolves the functions listed in ffmpeg_symbols.h.
#include "ms_internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

ms_ffmpeg ff;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int load_status;
static char load_failure[512];

/// The libraries by the names MS_FFMPEG lines use, in dependency order.
static struct {
    void *avutil, *swresample, *swscale, *avcodec, *avformat;
} handles;

#define MS_SONAME(name, major) "lib" #name ".so." AV_STRINGIFY(major)

static int open_library(void **handle, const char *soname) {
    *handle = dlopen(soname, RTLD_LAZY | RTLD_LOCAL);
    if (*handle) return 0;
    snprintf(load_failure, sizeof load_failure,
             "cannot load FFmpeg: %s (install FFmpeg's libraries, e.g. apt-get install libavformat%d libavcodec%d "
             "libswscale%d libswresample%d)",
             dlerror(), LIBAVFORMAT_VERSION_MAJOR, LIBAVCODEC_VERSION_MAJOR, LIBSWSCALE_VERSION_MAJOR,
             LIBSWRESAMPLE_VERSION_MAJOR);
    return MS_ERROR_FFMPEG_UNAVAILABLE;
}

static int resolve(void *handle, const char *library, const char *function, void **slot) {
    *slot = dlsym(handle, function);
    if (*slot) return 0;
    snprintf(load_failure, sizeof load_failure, "cannot load FFmpeg: lib%s has no function %s (the shim was built for %s)",
             library, function, MS_SONAME(avformat, LIBAVFORMAT_VERSION_MAJOR));
    return MS_ERROR_FFMPEG_UNAVAILABLE;
}

/// SVT-AV1 prints its banner and settings straight to stderr, past FFmpeg's log callback; its own variable keeps
/// it to errors unless the user set it. Once set, setenv with overwrite 0 writes nothing, so the call in load()
/// races no reader when the process prepared itself first.
void ms_prepare_process(void) { setenv("SVT_LOG", "1", 0); }

static void load(void) {
    ms_prepare_process();  // for a library user that did not
    int ret = open_library(&handles.avutil, MS_SONAME(avutil, LIBAVUTIL_VERSION_MAJOR));
    if (!ret) ret = open_library(&handles.swresample, MS_SONAME(swresample, LIBSWRESAMPLE_VERSION_MAJOR));
    if (!ret) ret = open_library(&handles.swscale, MS_SONAME(swscale, LIBSWSCALE_VERSION_MAJOR));
    if (!ret) ret = open_library(&handles.avcodec, MS_SONAME(avcodec, LIBAVCODEC_VERSION_MAJOR));
    if (!ret) ret = open_library(&handles.avformat, MS_SONAME(avformat, LIBAVFORMAT_VERSION_MAJOR));
#define MS_FFMPEG(library, function) \
    if (!ret) ret = resolve(handles.library, #library, #function, (void **)&ff.function);
#include "ffmpeg_symbols.h"
#undef MS_FFMPEG
    if (!ret) ms_log_install();
    load_status = ret;
}

static pthread_once_t filters_once = PTHREAD_ONCE_INIT;
static int filters_status;
static char filters_failure[512];
ms_ffmpeg_filters ffl;

/// libavfilter brings zimg, libass, OpenCL's loader and more: only a source that needs a filter graph loads it.
static void load_filters(void) {
    void *avfilter = dlopen(MS_SONAME(avfilter, LIBAVFILTER_VERSION_MAJOR), RTLD_LAZY | RTLD_LOCAL);
    if (!avfilter) {
        snprintf(filters_failure, sizeof filters_failure,
                 "cannot load FFmpeg's filters (HDR tone mapping, SSIM, PSNR): %s (install libavfilter%d)", dlerror(),
                 LIBAVFILTER_VERSION_MAJOR);
        filters_status = MS_ERROR_FFMPEG_UNAVAILABLE;
        return;
    }
#define MS_FFMPEG_FILTER(function)                                                                               \
    if (!filters_status && !(ffl.function = (__typeof__(ffl.function))dlsym(avfilter, #function))) {             \
        snprintf(filters_failure, sizeof filters_failure, "cannot load FFmpeg's filters: libavfilter has no %s", \
                 #function);                                                                                     \
        filters_status = MS_ERROR_FFMPEG_UNAVAILABLE;                                                            \
    }
#include "ffmpeg_filter_symbols.h"
#undef MS_FFMPEG_FILTER
    if (!filters_status) ms_log_install_filters();
}

int ms_ffmpeg_load_filters(char *errbuf, size_t errlen) {
    pthread_once(&filters_once, load_filters);
    if (filters_status < 0) return ms_fail(errbuf, errlen, filters_status, filters_status, "%s", filters_failure);
    return 0;
}

int ms_ffmpeg_load(char *errbuf, size_t errlen) {
    pthread_once(&load_once, load);
    if (load_status < 0 && errbuf && errlen) snprintf(errbuf, errlen, "%s", load_failure);
    return load_status;
}

static void *load_in_background(void *unused) {
    (void)unused;
    ms_ffmpeg_load(NULL, 0);
    return NULL;
}

void ms_preload(void) {
    pthread_attr_t attr;
    pthread_t thread;
    if (pthread_attr_init(&attr) != 0) return;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&thread, &attr, load_in_background, NULL) != 0) ms_ffmpeg_load(NULL, 0);  // then here
    pthread_attr_destroy(&attr);
}
