/* libvmaf's config.h, written by hand for this package (meson generates it upstream): no assembly (so no ARCH_*,
 * HAVE_ASM or HAVE_AVX512: the C paths run), no CUDA, no float feature extractors, the built-in models on (only
 * vmaf_v0.6.1 is vendored, scripts/vendor-libvmaf.sh). */
#define VMAF_FLOAT_FEATURES 0
#define VMAF_BUILT_IN_MODELS 1
