/* How CVMAFx86 compiles libvmaf's AVX2 code without compiler flags (SwiftPM refuses a package with unsafe flags
 * when another package depends on it by version): each avx2_*.c first includes the headers its upstream file
 * includes, outside any region, then includes that file between CVMAFX86_AVX2_BEGIN and CVMAFX86_AVX2_END. Only the
 * functions the upstream file itself defines get target("avx,avx2,fma"), the flags upstream's meson gives its
 * x86_avx2 library; nothing else in the package is built for AVX2, so libvmaf's CPU check stays plain. clang
 * (SwiftPM) reads `#pragma clang attribute`, gcc (scripts/shim-check.sh, benchmarks/quality.sh) `#pragma GCC target`.
 * immintrin.h declares every intrinsic with its own target attribute, so AVX2 intrinsics compile inside these
 * functions. On another architecture the files compile to nothing. */
#ifndef CVMAFX86_AVX2_TARGET_H
#define CVMAFX86_AVX2_TARGET_H

#if defined(__x86_64__) && defined(__clang__)
#define CVMAFX86_AVX2 1
#define CVMAFX86_AVX2_BEGIN \
    _Pragma("clang attribute push(__attribute__((target(\"avx,avx2,fma\"))), apply_to = function)")
#define CVMAFX86_AVX2_END _Pragma("clang attribute pop")
#elif defined(__x86_64__) && defined(__GNUC__)
#define CVMAFX86_AVX2 1
#define CVMAFX86_AVX2_BEGIN _Pragma("GCC push_options") _Pragma("GCC target(\"avx,avx2,fma\")")
#define CVMAFX86_AVX2_END _Pragma("GCC pop_options")
#endif

#endif
