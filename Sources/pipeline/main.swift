import CMalloc
import PipelineCLI

// How this process allocates the large buffers that carry file data, a choice for the program rather than for
// the libraries it links. An upload's request body reads into buffers of its own, allocated on one thread and
// freed on whichever drops them last, often the event loop's. glibc serves blocks above its mmap threshold with
// mmap and returns them at once, but raises that threshold after such frees, so later buffers come from
// per-thread arenas, which keep freed space: the resident size of a long upload in many requests then wandered
// between 60 and 72 MiB instead of staying near 40. A fixed threshold keeps every buffer in its own mapping.
#if os(Linux)
    _ = mallopt(M_MMAP_THRESHOLD, 256 << 10)
#endif

await PipelineCommand.main(registering: [])
