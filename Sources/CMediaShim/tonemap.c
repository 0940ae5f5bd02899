// HDR to SDR: a PQ (SMPTE ST 2084) or HLG (ARIB STD-B67) picture tone-mapped into 8-bit BT.709, through one
// libavfilter graph. Converting such a picture's code values as they are gives a flat, washed-out image: PQ puts
// SDR's white near half its range, so highlights come out grey and shadows lifted.
#include "ms_internal.h"

#include <errno.h>
#include <stdio.h>

// The graph is the CPU recipe FFmpeg's `tonemap` documentation and the usual guides give (zscale + tonemap; the
// GPU alternatives, libplacebo and tonemap_opencl with BT.2390, need Vulkan or OpenCL): the picture to linear light
// with 100 nits as 1.0 (zimg's PQ and HLG curves), in float RGB, to BT.709 primaries; Hable's filmic curve rolls
// highlights off smoothly and keeps mid-tones near where SDR shows them (Reinhard looks flatter, clipping loses
// highlight detail, Mobius keeps more contrast but clips sooner); desat=0 keeps the highlights' colours (the
// default, 2, greys them). Then BT.709's transfer and matrix, limited range, 8-bit 4:2:0.
// A smaller output is scaled (bicubic) in linear light, by the zscale that converts the primaries: the tone curve
// and the way back then run at the output's size, and thin highlights keep their brightness (averaged in PQ's
// code values, a pattern of 1000-nit and black lines would come out at about 25 nits instead of 500).
#define MS_TONEMAP_LINEAR "zscale=t=linear:npl=100,format=gbrpf32le,zscale="
#define MS_TONEMAP_CURVE "p=bt709,tonemap=tonemap=hable:desat=0,zscale=t=bt709:m=bt709:r=tv,format=yuv420p"

int ms_hdr_transfer(int trc) { return trc == AVCOL_TRC_SMPTE2084 || trc == AVCOL_TRC_ARIB_STD_B67; }

void ms_tonemap_free(ms_tonemap *tm) {
    if (tm->graph) ffl.avfilter_graph_free(&tm->graph);
    if (tm->out) ff.av_frame_free(&tm->out);
    tm->src = tm->sink = NULL;
}

/// Builds the graph for pictures of `f`'s size and format, giving pictures of `width` × `height` (0: `f`'s size).
static int open_graph(ms_tonemap *tm, const AVFrame *f, int width, int height, char *errbuf, size_t errlen) {
    ms_tonemap_free(tm);
    AVFilterInOut *in = NULL, *out = NULL;
    char graph[256], args[160];
    if (width > 0)
        snprintf(graph, sizeof graph, MS_TONEMAP_LINEAR "w=%d:h=%d:f=bicubic:" MS_TONEMAP_CURVE, width, height);
    else
        snprintf(graph, sizeof graph, MS_TONEMAP_LINEAR MS_TONEMAP_CURVE);
    snprintf(args, sizeof args, "video_size=%dx%d:pix_fmt=%d:time_base=1/1:pixel_aspect=1/1", f->width, f->height,
             f->format);
    int ret = AVERROR(ENOMEM);
    if (!(tm->out = ff.av_frame_alloc()) || !(tm->graph = ms_new_filter_graph()) ||
        !(in = ffl.avfilter_inout_alloc()) || !(out = ffl.avfilter_inout_alloc()))
        goto done;
    tm->graph->nb_threads = tm->threads;
    ms_log_clear();
    if ((ret = ffl.avfilter_graph_create_filter(&tm->src, ffl.avfilter_get_by_name("buffer"), "in", args, NULL,
                                                tm->graph)) < 0 ||
        (ret = ffl.avfilter_graph_create_filter(&tm->sink, ffl.avfilter_get_by_name("buffersink"), "out", NULL, NULL,
                                                tm->graph)) < 0)
        goto done;
    // The graph's open ends: its input is fed by "in", its output feeds "out".
    out->name = ff.av_strdup("in");
    out->filter_ctx = tm->src;
    in->name = ff.av_strdup("out");
    in->filter_ctx = tm->sink;
    if (!out->name || !in->name) {
        ret = AVERROR(ENOMEM);
        goto done;
    }
    if ((ret = ffl.avfilter_graph_parse_ptr(tm->graph, graph, &in, &out, NULL)) < 0) goto done;
    ret = ffl.avfilter_graph_config(tm->graph, NULL);
done:
    ffl.avfilter_inout_free(&in);
    ffl.avfilter_inout_free(&out);
    if (ret < 0) return ms_fail(errbuf, errlen, ret, ret, "cannot set up HDR tone mapping (%s)", graph);
    tm->width = f->width;
    tm->height = f->height;
    tm->format = f->format;
    tm->out_width = width;
    tm->out_height = height;
    return 0;
}

void ms_tonemap_source(ms_tonemap *tm, const AVCodecParameters *par) {
    tm->trc = par->color_trc;
    tm->primaries = par->color_primaries;
    tm->space = par->color_space;
    tm->range = par->color_range;
}

int ms_tonemap_frame(ms_tonemap *tm, AVFrame *f, int width, int height, AVFrame **sdr, char *errbuf, size_t errlen) {
    int ret = ms_ffmpeg_load_filters(errbuf, errlen);
    if (ret < 0) return ret;
    // Only a smaller picture is made here; a larger one is scaled after the tone curve, which then runs at the
    // source's size rather than the output's.
    if (width <= 0 || height <= 0 || width > f->width || height > f->height ||
        (width == f->width && height == f->height))
        width = height = 0;
    if ((!tm->graph || f->width != tm->width || f->height != tm->height || f->format != tm->format ||
         width != tm->out_width || height != tm->out_height) &&
        (ret = open_graph(tm, f, width, height, errbuf, errlen)) < 0)
        return ret;
    // What the bitstream does not say, the container may: zscale reads the picture's tags.
    if (f->color_trc == AVCOL_TRC_UNSPECIFIED) f->color_trc = tm->trc;
    if (f->color_primaries == AVCOL_PRI_UNSPECIFIED) f->color_primaries = tm->primaries;
    if (f->colorspace == AVCOL_SPC_UNSPECIFIED) f->colorspace = tm->space;
    if (f->color_range == AVCOL_RANGE_UNSPECIFIED) f->color_range = tm->range;
    // A PQ or HLG picture that names its transfer alone is BT.2020 (zscale finds no way from an unknown colour
    // space), with the matrix of its format, in limited range (full for RGB), as HDR video is made.
    const AVPixFmtDescriptor *desc = ff.av_pix_fmt_desc_get(f->format);
    int rgb = desc && (desc->flags & AV_PIX_FMT_FLAG_RGB);
    if (f->color_primaries == AVCOL_PRI_UNSPECIFIED) f->color_primaries = AVCOL_PRI_BT2020;
    if (f->colorspace == AVCOL_SPC_UNSPECIFIED) f->colorspace = rgb ? AVCOL_SPC_RGB : AVCOL_SPC_BT2020_NCL;
    if (f->color_range == AVCOL_RANGE_UNSPECIFIED) f->color_range = rgb ? AVCOL_RANGE_JPEG : AVCOL_RANGE_MPEG;
    ff.av_frame_unref(tm->out);
    ms_log_clear();
    if ((ret = ffl.av_buffersrc_add_frame_flags(tm->src, f, AV_BUFFERSRC_FLAG_KEEP_REF)) < 0 ||
        (ret = ffl.av_buffersink_get_frame(tm->sink, tm->out)) < 0)
        return ms_fail(errbuf, errlen, ret, ret, "HDR tone mapping failed");
    *sdr = tm->out;
    return 0;
}
