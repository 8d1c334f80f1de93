/* aclnnSoftplusBackward's pieces shared by its two files (private to impl/; the benchmarks read
 * SP16_LUT_MIN).  The AVX2 f64 kernel
 * lives in softplus_backward_f64_avx2.c because it is compiled with other scheduling flags than
 * the rest of the operator (impl/CMakeLists.txt, issue 14 round 34); the kernel and its rare-lane
 * helper are hidden: not part of the library's exported symbols. */
#ifndef ACLCONFORM_SOFTPLUS_BACKWARD_H
#define ACLCONFORM_SOFTPLUS_BACKWARD_H

#include <stdint.h>

#include "runtime/simd256.h"
#include "runtime/simd512.h"

/* beta and threshold in both compute precisions (f32: rounded to f32; f64: as given) */
typedef struct {
    float beta32, thr32;
    double beta64, thr64;
} softplus_ctx;

/* the smallest all-16-bit call the AVX2 table kernels of softplus_backward.c take (a smaller one
 * runs the direct kernels); the benchmarks size their in-cache 16-bit Softplus runs by it */
#define SP16_LUT_MIN (1 << 20)

#ifdef ACL_HAVE_AVX512_KERNELS
/* the lanes `slow` of the 8 at i (zh ≤ -700 or NaN) by the scalar form (softplus_backward.c) */
__attribute__((visibility("hidden"))) void softplus_f64_slow(const softplus_ctx *c, int64_t i, const double *dy,
                                                             const double *x, double *out, __mmask8 slow);
#endif

#ifdef ACL_HAVE_AVX2_KERNELS
/* the f64 compute precision on AVX2 (softplus_backward_f64_avx2.c): an acl_ewise2_f64 block */
__attribute__((visibility("hidden"))) void softplus_block_f64_avx2(const void *p, int64_t n, const double *dy,
                                                                   const double *x, double *out);
#endif

#endif
