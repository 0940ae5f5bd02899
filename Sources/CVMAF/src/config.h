/* libvmaf's config.h, written by hand for this package (meson generates it upstream): no CUDA, no float feature
 * extractors, the built-in models on (only vmaf_v0.6.1 is vendored, scripts/vendor-libvmaf.sh).
 * SIMD: on x86_64, ARCH_X86 turns on libvmaf's run-time choice of the AVX2 code of integer VIF, ADM and motion
 * (the CVMAFx86 target, whose functions alone have the AVX2 target: Sources/CVMAFx86/avx2_target.h); a CPU
 * without AVX2 runs the C paths. Not set: HAVE_AVX512 (the AVX-512 code is not vendored), ARCH_AARCH64 (NEON is
 * not vendored: arm64 runs the C paths), HAVE_ASM (nasm; x86/cpuid.c stands in for cpuid.asm). */
#if defined(__x86_64__)
#define ARCH_X86 1
#define ARCH_X86_64 1
#endif
#define VMAF_FLOAT_FEATURES 0
#define VMAF_BUILT_IN_MODELS 1
