/* Bulk dtype conversion.  The portable loops vectorise at -O3; on x86-64 CPUs with F16C the
 * f16 paths use the hardware conversion (chosen at run time, never by -march). */
#include <stdatomic.h>
#include "conv.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define ACL_HAVE_F16C_PATH 1

__attribute__((target("avx,f16c"))) static void f16_to_f32_f16c(const uint16_t *src, float *dst,
                                                                 size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i h = _mm_loadu_si128((const __m128i *)(const void *)(src + i));
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
    }
#if ACLCONFORM_MUTANT == 20 /* simd-tail: F16C f16->f32: scalar tail after the 8-wide loop skips its last element */
    for (; i + 1 < n; i++) dst[i] = acl_f16_to_f32(src[i]);
#else
    for (; i < n; i++) dst[i] = acl_f16_to_f32(src[i]);
#endif
}

__attribute__((target("avx,f16c"))) static void f32_to_f16_f16c(const float *src, uint16_t *dst,
                                                                 size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
#if ACLCONFORM_MUTANT == 15 /* conversion-rounding: F16C bulk f32->f16 truncates instead of round-to-nearest-even */
        __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_ZERO);
#else
        __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);
#endif
        _mm_storeu_si128((__m128i *)(void *)(dst + i), h);
    }
    for (; i < n; i++) dst[i] = acl_f32_to_f16(src[i]);
}

static int have_f16c(void)
{
    /* every thread computes the same value; atomic so that the first calls from several threads
     * are not a data race (ThreadSanitizer reported the plain int) */
    static _Atomic int cached = -1;
    int v = atomic_load_explicit(&cached, memory_order_relaxed);
    if (v < 0) {
        __builtin_cpu_init();
        v = __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c");
        atomic_store_explicit(&cached, v, memory_order_relaxed);
    }
    return v;
}
#endif

void acl_cvt_f16_to_f32(const uint16_t *src, float *dst, size_t n)
{
#ifdef ACL_HAVE_F16C_PATH
    if (have_f16c()) {
        f16_to_f32_f16c(src, dst, n);
        return;
    }
#endif
    for (size_t i = 0; i < n; i++) dst[i] = acl_f16_to_f32(src[i]);
}

void acl_cvt_f32_to_f16(const float *src, uint16_t *dst, size_t n)
{
#ifdef ACL_HAVE_F16C_PATH
    if (have_f16c()) {
        f32_to_f16_f16c(src, dst, n);
        return;
    }
#endif
    for (size_t i = 0; i < n; i++) dst[i] = acl_f32_to_f16(src[i]);
}

/* bf16: plain integer loops, written with selects so that they vectorise; the clones give them
 * AVX2 / AVX-512 on CPUs that have them.  (AVX512_BF16's vcvtneps2bf16 is not used: it flushes
 * subnormal inputs to zero.)  Not under ThreadSanitizer: a clone's resolver runs while the
 * dynamic linker relocates, before TSan's runtime is set up, and crashed every test at load
 * (scripts/tsan.sh; the plain builds keep the clones). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define ACL_CONV_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define ACL_CONV_CLONES
#endif

ACL_CONV_CLONES void acl_cvt_bf16_to_f32(const uint16_t *src, float *dst, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t u = (uint32_t)src[i] << 16;
        memcpy(dst + i, &u, 4);
    }
}

ACL_CONV_CLONES void acl_cvt_f32_to_bf16(const float *src, uint16_t *dst, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, src + i, 4);
#if ACLCONFORM_MUTANT == 17 /* conversion-rounding: bulk f32->bf16 truncates instead of RNE */
        uint32_t nan = (u >> 16) | 0x40u, rne = u >> 16;
#else
        uint32_t nan = (u >> 16) | 0x40u, rne = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
#endif
#if ACLCONFORM_MUTANT == 21 /* conversion-nan: bulk f32->bf16 does not quiet NaN (a low-payload sNaN becomes Inf) */
        dst[i] = (uint16_t)((u & 0x7fffffffu) > 0x7f800000u ? (nan & ~0x40u) : rne);
#else
        dst[i] = (uint16_t)((u & 0x7fffffffu) > 0x7f800000u ? nan : rne);
#endif
    }
}
