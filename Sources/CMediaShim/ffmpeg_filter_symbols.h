// The libavfilter functions the shim calls, as MS_FFMPEG_FILTER(function) lines: libavfilter (and zimg, and the
// rest it pulls in) is loaded apart from the other libraries, the first time a source needs a filter graph (HDR
// tone mapping, an SSIM or PSNR measurement), into the `ffl` table.
MS_FFMPEG_FILTER(av_buffersink_get_frame)
MS_FFMPEG_FILTER(av_buffersrc_add_frame_flags)
MS_FFMPEG_FILTER(avfilter_get_by_name)
MS_FFMPEG_FILTER(avfilter_get_class)
MS_FFMPEG_FILTER(avfilter_graph_alloc)
MS_FFMPEG_FILTER(avfilter_graph_config)
MS_FFMPEG_FILTER(avfilter_graph_create_filter)
MS_FFMPEG_FILTER(avfilter_graph_free)
MS_FFMPEG_FILTER(avfilter_graph_parse_ptr)
MS_FFMPEG_FILTER(avfilter_inout_alloc)
MS_FFMPEG_FILTER(avfilter_inout_free)
