/* aclnnSoftplusBackward's f64 compute precision on AVX2 (+ FMA), apart from softplus_backward.c
 * so that it alone is compiled with GCC's pressure-aware scheduling before register allocation
 * (impl/CMakeLists.txt, issue 14 round 34): with it this kernel takes 0.93-0.95 of the time, while
 * the f32 kernel of softplus_backward.c took 1.05 of its time with the same flags.  The operations
 * are those of softplus_backward.c's scalar and AVX-512 f64 forms (see there for the bound). */
#include <float.h>
#include <math.h>
#include <stdbool.h>

#include "runtime/ewise.h"
#include "runtime/simd256.h"
#include "runtime/simd512.h"
#include "softplus_backward.h"

#ifdef ACL_HAVE_AVX2_KERNELS
/* f64 compute precision: softplus_steps_f64 on SPD2_K vectors of 4 doubles, acl_exp4_dd for
 * acl_exp8_dd.  The class tests are compares (fpclass 0x99: not |z| < Inf; 0x9f: not |q| < Inf
 * or q = 0), the masked moves blends, the masked division a blend of the division. */
#define SPD2_K 4
ACL_AVX2_TARGET static inline __attribute__((always_inline)) void
softplus_steps_f64_avx2_k(const softplus_ctx *c, const double *dy, const double *x, double *out, int64_t left,
                          bool plain)
{
    const __m256d beta = _mm256_set1_pd(c->beta64), thr = _mm256_set1_pd(c->thr64);
    const __m256d one = _mm256_set1_pd(1.0), zero = _mm256_setzero_pd();
    const __m256d inf = _mm256_set1_pd(INFINITY), dmax = _mm256_set1_pd(DBL_MAX);
    const __m256d m700 = _mm256_set1_pd(-700.0), sign = _mm256_set1_pd(-0.0);
    const bool beta_finite = isfinite(c->beta64);
    __m256d xv[SPD2_K], g[SPD2_K], z[SPD2_K], zh[SPD2_K], zl[SPD2_K], E[SPD2_K], El[SPD2_K], sm[SPD2_K], res[SPD2_K];
    __m256d lin[SPD2_K], nonfin[SPD2_K], fast[SPD2_K], odd[SPD2_K];
    unsigned anyfin = 0, anyodd = 0, anyslow = 0, slow[SPD2_K];
    for (int k = 0; k < SPD2_K; k++) {
        xv[k] = acl_load4_pd_left(x + 4 * k, left - 4 * k);
        g[k] = acl_load4_pd_left(dy + 4 * k, left - 4 * k);
        z[k] = _mm256_mul_pd(beta, xv[k]);
#if ACLCONFORM_MUTANT == 23 /* branch-boundary: f64 path: threshold compare z >= threshold instead of z > threshold */
        lin[k] = _mm256_cmp_pd(z[k], thr, _CMP_GE_OQ);
#else
        lin[k] = _mm256_cmp_pd(z[k], thr, _CMP_GT_OQ);
#endif
#if ACLCONFORM_MUTANT == 27 /* f64-precision: f64 path drops the low part zl of beta*self (the pre-issue-12 rounding) */
        zh[k] = z[k], zl[k] = _mm256_mul_pd(zero, _mm256_fmsub_pd(beta, xv[k], z[k]));
#else
        zh[k] = z[k], zl[k] = _mm256_fmsub_pd(beta, xv[k], z[k]);
#endif
        /* rare: z NaN or ±Inf */
        if (!plain) {
            nonfin[k] = _mm256_cmp_pd(_mm256_andnot_pd(sign, z[k]), inf, _CMP_NLT_UQ);
            anyfin |= (unsigned)_mm256_movemask_pd(nonfin[k]);
        }
    }
    if (!plain && __builtin_expect(anyfin != 0, 0))
        for (int k = 0; k < SPD2_K; k++) {
            __m256d ovf = beta_finite ? _mm256_and_pd(_mm256_and_pd(nonfin[k], _mm256_cmp_pd(_mm256_andnot_pd(sign, z[k]), inf, _CMP_EQ_OQ)),
                                                      _mm256_cmp_pd(_mm256_andnot_pd(sign, xv[k]), inf, _CMP_LT_OQ))
                                      : zero;
            zh[k] = _mm256_blendv_pd(z[k], _mm256_or_pd(_mm256_and_pd(z[k], sign), dmax), ovf);
            zl[k] = _mm256_andnot_pd(nonfin[k], zl[k]);
        }
    for (int k = 0; k < SPD2_K; k++) {
        fast[k] = _mm256_and_pd(_mm256_andnot_pd(lin[k], _mm256_cmp_pd(zh[k], m700, _CMP_GT_OQ)),
                                _mm256_castsi256_pd(acl_mask4x64(left - 4 * k)));
        E[k] = acl_exp4_dd_k(_mm256_sub_pd(zero, zh[k]), &El[k], fast[k], plain);
    }
    for (int k = 0; k < SPD2_K; k++) {
        sm[k] = _mm256_add_pd(one, E[k]);
        /* Fast2Sum's larger and smaller operand (E is not NaN in the fast lanes) */
        __m256d big = _mm256_max_pd(E[k], one), small = _mm256_min_pd(E[k], one);
        __m256d t = _mm256_sub_pd(_mm256_add_pd(_mm256_add_pd(_mm256_sub_pd(big, sm[k]), small), El[k]),
                                  _mm256_mul_pd(E[k], zl[k]));
        __m256d inv = _mm256_div_pd(one, sm[k]);
        __m256d q = _mm256_mul_pd(g[k], inv);
        __m256d r = _mm256_fnmadd_pd(q, sm[k], g[k]);
        res[k] = _mm256_add_pd(q, _mm256_mul_pd(_mm256_sub_pd(r, _mm256_mul_pd(q, t)), inv));
        /* rare: !isfinite(q) || q == 0 gives dy / s */
        odd[k] = _mm256_and_pd(fast[k], _mm256_or_pd(_mm256_cmp_pd(_mm256_andnot_pd(sign, q), inf, _CMP_NLT_UQ),
                                                     _mm256_cmp_pd(q, zero, _CMP_EQ_OQ)));
        anyodd |= (unsigned)_mm256_movemask_pd(odd[k]);
    }
    if (__builtin_expect(anyodd != 0, 0))
        for (int k = 0; k < SPD2_K; k++) res[k] = _mm256_blendv_pd(res[k], _mm256_div_pd(g[k], sm[k]), odd[k]);
    for (int k = 0; k < SPD2_K; k++) {
        acl_store4_pd_left(out + 4 * k, left - 4 * k, _mm256_blendv_pd(res[k], g[k], lin[k]));
        slow[k] = ~(unsigned)_mm256_movemask_pd(_mm256_or_pd(fast[k], lin[k])) & acl_lanes(left - 4 * k, 4);
        anyslow |= slow[k];
    }
    if (__builtin_expect(anyslow != 0, 0))
        for (int k = 0; k < SPD2_K; k++)
            if (slow[k]) softplus_f64_slow(c, 4 * k, dy, x, out, (__mmask8)slow[k]);
}

ACL_AVX2_TARGET static inline __attribute__((always_inline)) void
softplus_steps_f64_avx2(const softplus_ctx *c, const double *dy, const double *x, double *out, int64_t left)
{
    softplus_steps_f64_avx2_k(c, dy, x, out, left, false);
}

/* A finite threshold ≤ 700 (the default 20 and every usual one): a z that is ±Inf or NaN is then
 * never a fast lane (+Inf takes the threshold branch; -Inf and NaN fail zh > -700), and every fast
 * lane has -zh in [-700, 700), so the kernel leaves out the overflow fix-up of zh, zl and
 * acl_exp4_dd's clamp and scaling test: the same bits in every lane it writes. */
ACL_AVX2_TARGET static inline __attribute__((always_inline)) void
softplus_steps_f64_avx2_plain(const softplus_ctx *c, const double *dy, const double *x, double *out, int64_t left)
{
    softplus_steps_f64_avx2_k(c, dy, x, out, left, true);
}

static inline bool softplus_f64_plain(const softplus_ctx *c) { return isfinite(c->thr64) && c->thr64 <= 700.0; }

/* The plain form's passes of 16 doubles each prefetch their 128 bytes of each input 2 KiB ahead
 * (acl_prefetch_pass_f64; round 31; AVX-512's f64 kernel has none since round 17, on Zen 4): 16
 * Mi elements, 2 threads, best of 9, both orders (scripts/ab.sh, 8 ratios): 0.946 of the time
 * without; 1 Mi, 1 thread, a draw. */
ACL_AVX2_TARGET void softplus_block_f64_avx2(const void *p, int64_t n, const double *dy, const double *x, double *out)
{
    _Static_assert(4 * SPD2_K == 16, "a pass of 16 doubles: the 128 bytes acl_prefetch_pass_f64 prefetches");
    if (softplus_f64_plain(p))
        ACL_STEPS_PF(4 * SPD2_K, acl_prefetch_pass_f64, softplus_steps_f64_avx2_plain, (const softplus_ctx *)p, n, dy, x,
                     out);
    else
        ACL_STEPS_LEFT(4 * SPD2_K, softplus_steps_f64_avx2, (const softplus_ctx *)p, n, dy, x, out);
}
#endif
