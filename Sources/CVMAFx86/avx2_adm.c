/* libvmaf's AVX2 code of integer ADM (feature/x86/adm_avx2.c, upstream's, unchanged) for AVX2 only: avx2_target.h. */
#include "avx2_target.h"

#if CVMAFX86_AVX2
#include <stdbool.h>
#include "feature/barten_csf_tools.h"
#include "feature/integer_adm.h"
#include <immintrin.h>

CVMAFX86_AVX2_BEGIN
#include "feature/x86/adm_avx2.c"
CVMAFX86_AVX2_END
#endif
