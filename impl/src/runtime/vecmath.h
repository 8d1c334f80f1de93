/* Vectorisable math for the elementwise kernels.
 *
 * With ACL_USE_LIBMVEC (glibc x86-64, see impl/CMakeLists.txt) exp and erfc are declared `simd`,
 * so GCC vectorises loops that call them, using glibc's libmvec vector variants (≤ 4 double ULP,
 * IEEE special values); the kernels compute in double and round to f32 once, so the vector
 * functions' error is invisible in f32/f16/bf16 results.  f64 outputs (SoftplusBackward) must
 * not use them: their loops call the scalar forms through ACL_NOVEC_* wrappers.
 *
 * ACL_KERNEL_CLONES marks a block kernel for function multi-versioning: an AVX2+FMA clone chosen
 * at load time on CPUs that have it, and the baseline x86-64 version otherwise. */
#ifndef ACL_VECMATH_H
#define ACL_VECMATH_H

#include <math.h>

#if defined(ACL_USE_LIBMVEC) && defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
__attribute__((simd("notinbranch"))) double exp(double);
__attribute__((simd("notinbranch"))) double erfc(double);
#define ACL_KERNEL_CLONES __attribute__((target_clones("avx2,fma", "default")))
#else
#define ACL_KERNEL_CLONES
#endif

#endif
