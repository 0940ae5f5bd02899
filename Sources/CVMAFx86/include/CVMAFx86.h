// CVMAFx86: libvmaf's AVX2 code of integer VIF, ADM and motion (feature/x86/*_avx2.c, upstream's, built for AVX2 by
// avx2_*.c, see avx2_target.h).
// It exports nothing through this header: CVMAF declares the functions in its src/feature/x86/*_avx2.h and calls
// them only when libvmaf's CPU check found AVX2. SwiftPM wants a public headers folder in a C library target.
#ifndef CVMAFX86_H
#define CVMAFX86_H
#endif
