/* libvmaf's AVX2 code of integer VIF (feature/x86/vif_avx2.c, upstream's, unchanged) for AVX2 only: avx2_target.h. */
#include "avx2_target.h"

#if CVMAFX86_AVX2
#include "stdio.h"
#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <assert.h>
#include "feature/integer_vif.h"
#include "feature/common/macros.h"

CVMAFX86_AVX2_BEGIN
#include "feature/x86/vif_avx2.c"
CVMAFX86_AVX2_END
#endif
