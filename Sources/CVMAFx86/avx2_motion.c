/* libvmaf's AVX2 code of integer motion (feature/x86/motion_avx2.c, upstream's, unchanged) for AVX2 only:
 * avx2_target.h. */
#include "avx2_target.h"

#if CVMAFX86_AVX2
#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include "feature/integer_motion.h"

CVMAFX86_AVX2_BEGIN
#include "feature/x86/motion_avx2.c"
CVMAFX86_AVX2_END
#endif
