/* Vectorisable math for the elementwise kernels.
 *
 * With ACL_USE_LIBMVEC (glibc x86-64, see impl/CMakeLists.txt) exp and erfc are declared `simd`,
 * so GCC vectorises loops that call them, using glibc's libmvec vector variants (≤ 4 double ULP,
 * IEEE special values); the kernels compute in double and round to f32 once, so the vector
 * functions' error is invisible in f32/f16/bf16 results.  f64 outputs (SoftplusBackward) must
 * not use them: their loops call the scalar forms through ACL_NOVEC_* wrappers.
 *
 * ACL_KERNEL_CLONES marks a block kernel for function multi-versioning, chosen at load time:
 * x86-64-v4 (AVX-512: 8 doubles per vector, libmvec's _ZGVeN8v_* variants), x86-64-v3
 * (AVX2+FMA) and the baseline x86-64.  (Each string of target_clones is one clone: the former
 * "avx2,fma" made two clones, neither with both.)  The kernels are compiled as ISO C
 * (-ffp-contract=off), so a clone never fuses a multiply-add that the baseline rounds twice. */
#ifndef ACL_VECMATH_H
#define ACL_VECMATH_H

#include <math.h>

/* (Not under ThreadSanitizer: see ACL_CONV_CLONES in conv.c.) */
#if defined(ACL_USE_LIBMVEC) && defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && \
    !defined(__SANITIZE_THREAD__)
__attribute__((simd("notinbranch"))) double exp(double);
__attribute__((simd("notinbranch"))) double erfc(double);
#define ACL_KERNEL_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define ACL_KERNEL_CLONES
#endif

/* The fixed combination of 16 interleaved partial sums (element j of a dot product went into
 * acc[j & 15], j ascending): lane-wise acc[k] + acc[k+8], then a balanced 8-lane tree.  One
 * order for the AVX-512 kernels (two zmm accumulators) and their portable twins alike. */
static inline double acl_sum_tree16(const double acc[16])
{
    double t[8];
    for (int k = 0; k < 8; k++) t[k] = acc[k] + acc[k + 8];
    return ((t[0] + t[1]) + (t[2] + t[3])) + ((t[4] + t[5]) + (t[6] + t[7]));
}

/* The same for 32 partial sums (acc[j & 31]; four zmm accumulators: four independent FMA chains,
 * not one latency-bound chain): lane-wise (acc[k] + acc[k+8]) + (acc[k+16] + acc[k+24]), then
 * the same 8-lane tree, i.e. acl_sum_tree16 of the 16 pair sums. */
static inline double acl_sum_tree32(const double acc[32])
{
    double t[16];
    for (int k = 0; k < 8; k++) t[k] = acc[k] + acc[k + 8], t[k + 8] = acc[k + 16] + acc[k + 24];
    return acl_sum_tree16(t);
}

#endif
