/* Run-time choice of the hand-written AVX-512 kernels (simd512.h). */
#include "simd256.h"

#ifdef ACL_HAVE_AVX512_KERNELS
#include <stdatomic.h>
#include <stdlib.h>

/* the CPU features the AVX2 kernels use (simd256.h's target) */
static bool cpu_runs_avx2_kernels(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c") &&
           __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2");
}

bool acl_have_avx512(void)
{
    /* every thread computes the same value; atomic so that first calls from several threads are
     * not a data race */
    static _Atomic int cached = -1;
    int v = atomic_load_explicit(&cached, memory_order_relaxed);
    if (v < 0) {
        __builtin_cpu_init();
        /* ACLCONFORM_NO_AVX512 (any value) turns the AVX-512 kernels off, so that a sweep can
         * check the AVX2 ones on an AVX-512 machine (with ACLCONFORM_NO_AVX2 too: the portable
         * ones) */
#ifdef ACL_EMULATE_AVX512 /* the tests' software AVX-512: any CPU that runs the AVX2 kernels */
        v = !getenv("ACLCONFORM_NO_AVX512") && cpu_runs_avx2_kernels();
#else
        v = !getenv("ACLCONFORM_NO_AVX512") && __builtin_cpu_supports("avx512f") &&
            __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
            __builtin_cpu_supports("avx512bw") &&
            __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c") && __builtin_cpu_supports("bmi");
#endif
        atomic_store_explicit(&cached, v, memory_order_relaxed);
    }
    return v && acl_simd_cap() >= 2;
}

static _Atomic int simd_cap = 2;

void acl_simd_set_cap(int level) { atomic_store_explicit(&simd_cap, level, memory_order_relaxed); }
int acl_simd_cap(void) { return atomic_load_explicit(&simd_cap, memory_order_relaxed); }

bool acl_have_avx2(void)
{
    static _Atomic int cached = -1;
    int v = atomic_load_explicit(&cached, memory_order_relaxed);
    if (v < 0) {
        /* ACLCONFORM_NO_AVX2 (any value) forces the portable kernels on a CPU without AVX-512 */
        v = !getenv("ACLCONFORM_NO_AVX2") && cpu_runs_avx2_kernels();
        atomic_store_explicit(&cached, v, memory_order_relaxed);
    }
    return v && acl_simd_cap() >= 1;
}

bool acl_bf16_hw;

/* At load time (before any operator runs, so no thread reads it while it is written).  The
 * planted defects of the software bf16 conversion (mutants 17 and 21) switch the hardware form
 * off, so that a sweep of those mutants runs the converter they break. */
__attribute__((constructor)) static void acl_bf16_hw_init(void)
{
#if ACLCONFORM_MUTANT == 17 || ACLCONFORM_MUTANT == 21 || defined(ACL_EMULATE_AVX512)
    acl_bf16_hw = false;
#else
    acl_bf16_hw = acl_have_avx512() && __builtin_cpu_supports("avx512bf16") && !getenv("ACLCONFORM_NO_AVX512BF16");
#endif
}
#else
typedef int acl_simd512_unused; /* ISO C: no empty translation unit */
#endif
