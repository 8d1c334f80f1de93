/* aclnnScaledMaskedSoftmaxBackward (ops.md §1), per row (b, n, i) of length S2:
 *   s   = Σ_j gradOutput_j · y_j                       (all j, masked or not)
 *   out = mask ? +0.0 : scale · (gradOutput·y − s·y)
 *
 * Rows are independent and run in parallel; a row is always computed the same way by one
 * thread, so the bits do not depend on the thread count.  The products of two floats are exact
 * in double and the row sum is accumulated in double (32 interleaved partial sums in a fixed
 * order, so the loop pipelines): its error, ≤ S2·2^-53·Σ|g·y|, is invisible after rounding to
 * f32.  The output formula is evaluated in double with scale rounded to f32 (ops.md §0.6) and
 * rounded once to f32; a 16-bit row evaluates it in f32 from s split into two floats (within
 * 2^-22 relative before the rounding to 16 bits, sms_out16) and hands the lanes whose (g − s)·y is
 * not a normal float to the double formula.  NaN/Inf products reach s and every unmasked output of
 * the row by IEEE evaluation (such a row takes the double formula); masked outputs are +0.0
 * regardless.
 *
 * Streaming stores (issue 14, round 27): an f32 output of ACL_NT_MIN_BYTES or more whose rows all
 * start on 32 bytes is written with them (full vectors; one SFENCE per range of rows), as
 * LogitGrad f32's is (runtime/ewise.c).  16 Mi elements, S2 = 1024, 2 threads, side by side in one
 * process, best of 9, three rounds: f32 5.70-5.85 -> 5.29-5.39 ms.  The 16-bit rows keep plain
 * stores: f16 a draw in seven rounds (2.70-3.25 against 2.74-2.96), bf16 slower in six of seven
 * (2.87-3.41 -> 3.09-3.48). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aclnnop/aclnn_scaled_masked_softmax_backward.h"
#include "runtime/check.h"
#include "runtime/ewise.h"
#include "runtime/simd256.h"
#include "runtime/simd512.h"
#include "runtime/vecmath.h"

#define SMS_MAX_S2 4096

typedef struct {
    aclTensor gradOutput, y, mask, out;
    double scale;
} sms_args;

typedef struct {
    acl_view g, y, m, o;
    int64_t s2;
    double scale;
    bool nt; /* f32 output written with streaming stores (top of this file; sms_kernel) */
    bool nt16; /* the same for a 16-bit output on AVX2 (sms_rows_avx2) */
} sms_job;

/* A 16-bit row's output pass runs in f32 (sms_out16 below, and sms_row's f32 branch: the same
 * operations, the same bits) when scale is finite and the row sum s splits exactly into two floats
 * s_hi + s_lo with s_hi finite. */
static bool sms_f32_ok(double s, double scale)
{
    return isfinite(scale) && fabs(s) <= FLT_MAX && (double)(float)s + (float)(s - (float)s) == s;
}

/* scale·(g·y − s·y) rounded to f32: the double formula (g·y is exact in double, so the difference
 * rounds once; sms_out8 is its vector form). */
static inline float sms_out1(float g, float y, double s, double scale)
{
    return (float)(scale * ((double)g * y - s * y));
}

/* One row: g, y, m loaded, o written (half: the row is f16 or bf16). */
ACL_KERNEL_CLONES static void sms_row(int64_t n, const float *g, const float *y, const float *m, double scale,
                    float *o, bool half)
{
    double acc[32] = {0};
    int64_t j = 0;
    for (; j + 32 <= n; j += 32)
#if ACLCONFORM_MUTANT == 33 /* masked-select: row sum skips masked positions (spec: all j) */
        for (int k = 0; k < 32; k++) acc[k] += m[j + k] != 0.0f ? 0.0 : (double)g[j + k] * (double)y[j + k];
#else
        for (int k = 0; k < 32; k++) acc[k] += (double)g[j + k] * (double)y[j + k];
#endif
#if ACLCONFORM_MUTANT == 34 /* simd-tail: row dot: the tail after the wide loop drops the last element */
    for (; j + 1 < n; j++) acc[j & 31] += (double)g[j] * (double)y[j];
#else
    for (; j < n; j++) acc[j & 31] += (double)g[j] * (double)y[j];
#endif
    double s = acl_sum_tree32(acc); /* four chains, see vecmath.h */
    if (half && sms_f32_ok(s, scale)) {
        float shi = (float)s, slo = (float)(s - shi), sc = (float)scale;
        for (j = 0; j < n; j++) {
            float t = (g[j] - shi - slo) * y[j];
            float v = fpclassify(t) == FP_NORMAL ? t * sc : sms_out1(g[j], y[j], s, scale);
#if ACLCONFORM_MUTANT == 32 /* masked-select: masked positions get v*0 (-0 or NaN) instead of +0.0 */
            o[j] = m[j] != 0.0f ? v * 0.0f : v;
#else
            o[j] = m[j] != 0.0f ? 0.0f : v;
#endif
        }
        return;
    }
    for (j = 0; j < n; j++) {
        float v = sms_out1(g[j], y[j], s, scale);
#if ACLCONFORM_MUTANT == 32 /* masked-select: masked positions get v*0 (-0 or NaN) instead of +0.0 */
        o[j] = m[j] != 0.0f ? v * 0.0f : v;
#else
        o[j] = m[j] != 0.0f ? 0.0f : v;
#endif
    }
}

#ifdef ACL_HAVE_AVX512_KERNELS
/* sms_row with AVX-512, 8 elements a step, reading gradOutput and y and writing out in their
 * own dtype (f32, or f16 / bf16 converted in registers) and the mask bytes of the row directly:
 * no staging.  The same sums in the same order (lane k of a0..a3 holds acc[k], acc[8 + k], …; the
 * products are exact, so the FMA is sms_row's add; tail lanes load +0, and acc + 0·0 = acc since
 * no partial sum is ever −0), the same tree, the same double output formula, rounded to f32 and
 * then (16-bit) as acl_cvt_f32_to_* does. */
ACL_AVX512_TARGET static inline __m512d sms_load8(const void *p, int64_t j, __mmask8 m, int kind)
{
    if (kind == 0) return _mm512_cvtps_pd(acl_loadu8_ps((const float *)p + j, m));
    return _mm512_cvtps_pd(acl_load8_16((const uint16_t *)p + j, m, kind == 2));
}

/* acc + g[j..j+7]·y[j..j+7] (lanes past n load +0) */
ACL_AVX512_TARGET static inline __m512d sms_dot8(__m512d acc, const void *g, const void *y,
                                                 const uint8_t *mk, int64_t j, int64_t n, int kind)
{
    __mmask8 m = acl_mask8(n - j);
#if ACLCONFORM_MUTANT == 34 /* simd-tail: row dot: the tail after the wide loop drops the last element */
    if (n - j < 8) m >>= 1;
#endif
#if ACLCONFORM_MUTANT == 33 /* masked-select: row sum skips masked positions (spec: all j) */
    __m128i mb = _mm_maskz_loadu_epi8(m, mk + j);
    m &= (__mmask8)~_mm_test_epi8_mask(mb, mb);
#endif
    (void)mk;
    return _mm512_fmadd_pd(sms_load8(g, j, m, kind), sms_load8(y, j, m, kind), acc);
}

/* scale·(g·y − s·y) of elements j..j+7 (mask m) rounded to f32.  g·y is exact in double, so
 * fmsub(g, y, s·y) rounds exactly once, as sms_row's g·y − s·y does. */
ACL_AVX512_TARGET static inline __m256 sms_out8(const void *g, const void *y, int64_t j, __mmask8 m, __m512d s,
                                                __m512d sc, int kind)
{
    __m512d gd = sms_load8(g, j, m, kind), yd = sms_load8(y, j, m, kind);
    return _mm512_cvtpd_ps(_mm512_mul_pd(sc, _mm512_fmsub_pd(gd, yd, _mm512_mul_pd(s, yd))));
}

/* The output pass of a 16-bit row in f32, 16 lanes a step (issue 14: the double formula with its
 * conversions took 1.35 cycles per element, four times the dot pass).  Used when scale is finite
 * and the row sum s splits exactly into two floats, s = s_hi + s_lo (s_hi = f32(s) finite, s_lo =
 * f32(s − s_hi)); then every gradOutput and y of the row is finite too (an infinite or NaN input
 * makes its product, hence s, infinite or NaN), and
 *   d = (g − s_hi) − s_lo,   t = d·y,   v = t·scale
 * Error: g − s_hi is exact when g and s_hi are within a factor 2 of each other (Sterbenz; then
 * d = g − s rounded once), otherwise |g − s_hi| > |s_hi|/2 ≥ 2^23·|s_lo|: d is within 2^-23
 * relative of g − s.  The two products add one rounding each while t is normal, so v is within
 * 2^-22 relative of scale·y·(g − s) (a subnormal v loses < 2^-150 absolute, 2^-17 ULP of the
 * smallest bf16), ≤ 2^-11 ULP of f16 before the rounding to 16 bits: ≤ 0.5005 ULP (the double
 * formula: 0.5 + 2^-29).  An overflowing v means |scale·y·(g − s)| > FLT_MAX·(1 − 2^-22), above
 * every finite f16 and bf16: ±Inf either way.
 * Lanes whose t is not normal are redone by the double formula (sms_out8): t = 0 (d = 0 or y = ±0,
 * where the double formula's signed zero is wanted; or an underflow), t subnormal or infinite (bf16
 * only: an f16 t is 0 or within [2^-72, 2^60]).  A row that fails the condition takes the double
 * formula at every lane.  Masked lanes are +0.0.
 * bf16 with the hardware conversion and |scale| ≤ 1 (round 24, "fold"): the test is on v instead
 * of t, and the lanes that pass it are stored by VCVTNEPS2BF16 without acl_bf16_pack16's check for
 * subnormals (that instruction flushes them).  v = t·scale is not normal wherever t is not (t = ±0
 * gives ±0; ±Inf or NaN gives ±Inf or NaN; a subnormal t gives |v| ≤ |t|), so the lanes redone
 * are t's and those where t·scale underflows below 2^-126, which the double formula now computes
 * (before: v in f32, within 2^-150 absolute, then the checked store).  Every other v is normal, so
 * the unchecked conversion rounds it as acl_cvt_f32_to_bf16 does.  One class test per 16 lanes
 * instead of two: 16 Mi elements, 2 threads, side by side, 3.09-3.16 -> 2.82-3.02 ms; in L1,
 * 1 thread, 262144 elements, 0.097 -> 0.090 ms (without any subnormal check, 0.089). */
ACL_AVX512_TARGET static inline void sms_out16(int64_t n, const void *g, const void *y, const uint8_t *mk,
                                               double sd, double scale, void *o, int kind)
{
    const bool f32 = sms_f32_ok(sd, scale);
    const float shi = f32 ? (float)sd : 0.0f;
    const __m512 vhi = _mm512_set1_ps(shi), vlo = _mm512_set1_ps(f32 ? (float)(sd - shi) : 0.0f),
                 sc = _mm512_set1_ps((float)scale), zero = _mm512_setzero_ps();
    const __m512d s = _mm512_set1_pd(sd), scd = _mm512_set1_pd(scale);
    const bool fold = f32 && kind == 2 && acl_bf16_hw && fabs(scale) <= 1.0;
    for (int64_t j = 0; j < n; j += 16) {
        __mmask16 m = acl_mask16(n - j);
        __m128i mb = m == 0xffff ? _mm_loadu_si128((const __m128i *)(mk + j)) : _mm_maskz_loadu_epi8(m, mk + j);
        __mmask16 masked = _mm_test_epi8_mask(mb, mb), redo = m;
        __m512 v = zero;
        if (f32) {
            __m512 gv = acl_load16_16((const uint16_t *)g + j, m, kind == 2), yv = acl_load16_16((const uint16_t *)y + j, m, kind == 2);
            __m512 t = _mm512_mul_ps(_mm512_sub_ps(_mm512_sub_ps(gv, vhi), vlo), yv);
            v = _mm512_mul_ps(t, sc);
            /* t not normal: QNaN, ±0, ±Inf, subnormal, SNaN (fold: v not normal, see above) */
#if ACLCONFORM_MUTANT == 62 /* conversion-subnormal: bf16 softmax with |scale| <= 1: t's class tested instead of v's, so a subnormal v = t·scale goes to the unchecked hardware store (flushed to 0) */
            redo = _mm512_mask_fpclass_ps_mask((__mmask16)(~masked & m), t, 0xbf);
#else
            redo = _mm512_mask_fpclass_ps_mask((__mmask16)(~masked & m), fold ? v : t, 0xbf);
#endif
#if ACLCONFORM_MUTANT == 56 /* precision-branch: 16-bit softmax f32 pass: lanes with a zero, subnormal or infinite t kept (wrong signed zeros, bf16 overflow and underflow) */
            redo = 0;
#endif
        }
        if (__builtin_expect(redo != 0, 0)) {
            __m256 lo = sms_out8(g, y, j, (__mmask8)m, s, scd, kind), hi = sms_out8(g, y, j + 8, (__mmask8)(m >> 8), s, scd, kind);
            v = _mm512_mask_mov_ps(v, redo, _mm512_insertf32x8(_mm512_castps256_ps512(lo), hi, 1));
        }
#if ACLCONFORM_MUTANT == 32 /* masked-select: masked positions get v*0 (-0 or NaN) instead of +0.0 */
        v = _mm512_mask_mul_ps(v, masked, v, zero);
#else
        v = _mm512_mask_mov_ps(v, masked, zero);
#endif
        if (fold && !redo && m == 0xffff)
            _mm256_storeu_si256((__m256i *)((uint16_t *)o + j), (__m256i)_mm512_cvtneps_pbh(v));
        else
            acl_store16_16((uint16_t *)o + j, m, v, kind == 2);
    }
}

ACL_AVX512_TARGET static inline void sms_row_avx512(int64_t n, const void *g, const void *y,
                                                    const uint8_t *mk, double scale, void *o,
                                                    int kind, bool nt)
{
    __m512d a0 = _mm512_setzero_pd(), a1 = a0, a2 = a0, a3 = a0;
    int64_t j = 0;
    for (; j + 32 <= n; j += 32) {
        a0 = sms_dot8(a0, g, y, mk, j, n, kind);
        a1 = sms_dot8(a1, g, y, mk, j + 8, n, kind);
        a2 = sms_dot8(a2, g, y, mk, j + 16, n, kind);
        a3 = sms_dot8(a3, g, y, mk, j + 24, n, kind);
    }
    if (j < n) a0 = sms_dot8(a0, g, y, mk, j, n, kind);
    if (j + 8 < n) a1 = sms_dot8(a1, g, y, mk, j + 8, n, kind);
    if (j + 16 < n) a2 = sms_dot8(a2, g, y, mk, j + 16, n, kind);
    if (j + 24 < n) a3 = sms_dot8(a3, g, y, mk, j + 24, n, kind);
    double a[32];
    _mm512_storeu_pd(a, a0);
    _mm512_storeu_pd(a + 8, a1);
    _mm512_storeu_pd(a + 16, a2);
    _mm512_storeu_pd(a + 24, a3);
    double sd = acl_sum_tree32(a);
    if (kind != 0) {
        sms_out16(n, g, y, mk, sd, scale, o, kind);
        return;
    }
    const __m512d s = _mm512_set1_pd(sd), sc = _mm512_set1_pd(scale);
    for (j = 0; j < n; j += 8) {
        __mmask8 m = acl_mask8(n - j);
        __m256 vf = sms_out8(g, y, j, m, s, sc, 0);
        __m128i mb = m == 0xff ? _mm_loadl_epi64((const __m128i *)(mk + j)) : _mm_maskz_loadu_epi8(m, mk + j);
        __mmask8 masked = (__mmask8)_mm_test_epi8_mask(mb, mb);
#if ACLCONFORM_MUTANT == 32 /* masked-select: masked positions get v*0 (-0 or NaN) instead of +0.0 */
        vf = _mm256_mask_mul_ps(vf, masked, vf, _mm256_setzero_ps());
#else
        vf = _mm256_mask_mov_ps(vf, masked, _mm256_setzero_ps());
#endif
        if (m == 0xff && nt) _mm256_stream_ps((float *)o + j, vf);
        else if (m == 0xff) _mm256_storeu_ps((float *)o + j, vf);
        else _mm256_mask_storeu_ps((float *)o + j, m, vf);
    }
}

ACL_AVX512_TARGET static void sms_rows_avx512(const sms_job *jb, int64_t begin, int64_t end)
{
    int kind = jb->g.dtype == ACL_FLOAT ? 0 : jb->g.dtype == ACL_FLOAT16 ? 1 : 2;
    int64_t es = (int64_t)jb->g.esize, n = jb->s2;
    const char *g = jb->g.data + jb->g.offset * es, *y = jb->y.data + jb->y.offset * es;
    char *o = jb->o.data + jb->o.offset * es;
    for (int64_t r = begin; r < end; r++) {
        int64_t s = r * n;
        const uint8_t *mk = acl_view_ptr(&jb->m, s);
        if (kind == 0) sms_row_avx512(n, g + s * 4, y + s * 4, mk, jb->scale, o + s * 4, 0, jb->nt);
        else if (kind == 1) sms_row_avx512(n, g + s * 2, y + s * 2, mk, jb->scale, o + s * 2, 1, false);
        else sms_row_avx512(n, g + s * 2, y + s * 2, mk, jb->scale, o + s * 2, 2, false);
    }
    if (jb->nt) acl_nt_fence();
}
#endif

#ifdef ACL_HAVE_AVX2_KERNELS
/* The AVX-512 row kernel on AVX2 (CPUs without AVX-512, round 28): its operations in the same
 * order on 8-lane f32 / 4-lane double vectors, so the same bits.  acc[k] of the 32 partial sums
 * is lane k % 4 of a[k / 4] (two __m256d per __m512d of sms_row_avx512, the same FMAs in the same
 * order), stored in index order for the same acl_sum_tree32; the output formulas are sms_out8's
 * (f32 rows, and every redone lane) and sms_out16's f32 pass (16-bit rows) lane for lane, rounded
 * to 16 bits by acl_pack8_16_avx2 (acl_store8_16's bits).  Masks are 32-bit lanes of all ones;
 * lanes past the row load +0 as the AVX-512 masked loads do.
 * Streaming stores: f32 rows as on AVX-512 (jb->nt); 16-bit rows too here (jb->nt16: a large
 * output whose rows all start on 16 bytes, full vectors), unlike AVX-512 (Zen 4: a draw for f16,
 * slower for bf16).  Zen 3, 16 Mi elements, S2 = 1024, on the shared machine, alternating
 * libraries, best of 8 rounds: 2 threads f16 18.1 -> 15.9 ms, bf16 16.0 -> 14.6; 1 thread (CPU
 * time) 9.17 -> 9.06 and 12.24 -> 11.46. */

/* elements j..j+7 of a row (f32, f16, bf16 by kind), the first `left` (others +0), widened
 * exactly to two vectors of 4 doubles (elements j..j+3 and j+4..j+7) */
ACL_AVX2_TARGET static inline void sms_load8_pd(const void *p, int64_t j, int64_t left, int kind, __m256d *lo,
                                                __m256d *hi)
{
    if (kind == 0) {
        __m256d d[2];
        acl_load8_pd2_left((const float *)p + j, left, d);
        *lo = d[0], *hi = d[1];
        return;
    }
    __m256 v = acl_load8_16_left((const uint16_t *)p + j, left, kind == 2);
    *lo = acl_lo4_pd(v);
    *hi = acl_hi4_pd(v);
}

/* the mask bytes j..j+7 of the row, the first `left`: all ones in the 32-bit lanes of the row
 * that are NOT masked (AVX-512: ~masked & m) */
ACL_AVX2_TARGET static inline __m256i sms_kept8(const uint8_t *mk, int64_t j, int64_t left)
{
    uint64_t w = 0;
    if (left >= 8) memcpy(&w, mk + j, 8);
    else if (left > 0) memcpy(&w, mk + j, (size_t)left);
    __m256i k = _mm256_cmpeq_epi32(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128((long long)w)), _mm256_setzero_si256());
    return left >= 8 ? k : _mm256_and_si256(k, acl_mask8x32(left));
}

/* The row kernels' dot passes prefetch into L2 (PREFETCHT1) the line of gradOutput and of y that
 * lies ACL_PREFETCH_L2_BYTES past byte `at` of the rows (4 rows ahead for 16-bit rows of 1024, 2
 * for f32), a line of each per 64 bytes read (round 30).  Zen 3, 16 Mi elements, S2 = 1024, 2
 * threads, alternating with the library without it in one process, best of 9, three rounds: f32
 * 6.29-6.38 -> 5.25-5.66 ms, f16 3.92-4.12 -> 3.64-3.79, bf16 4.88-4.96 -> 4.76-4.88; 4096 and
 * 16384 bytes ahead measured no better. */
static inline void sms_prefetch(const void *g, const void *y, int64_t at)
{
    __builtin_prefetch((const char *)(uintptr_t)((uintptr_t)g + (uintptr_t)at + ACL_PREFETCH_L2_BYTES), 0, 2);
    __builtin_prefetch((const char *)(uintptr_t)((uintptr_t)y + (uintptr_t)at + ACL_PREFETCH_L2_BYTES), 0, 2);
}

/* sms_dot8: acc + g·y of elements j..j+7 (the first `left`), acc's lanes k in *lo, 4 + k in *hi.
 * f16: the product of two f16 values is exact in f32 (22 significant bits, |g·y| between 2^-48
 * and 2^32, or ±0, ±Inf, NaN), so acc + (double)(g·y) rounds once, as the FMA of the doubles
 * does: the same sums, two conversions to double per 8 elements instead of four.  (bf16 products
 * can overflow or underflow f32: the doubles.) */
ACL_AVX2_TARGET static inline void sms_dot8_avx2(__m256d *lo, __m256d *hi, const void *g, const void *y,
                                                 const uint8_t *mk, int64_t j, int64_t left, int kind)
{
#if ACLCONFORM_MUTANT == 34 /* simd-tail: row dot: the tail after the wide loop drops the last element */
    if (left < 8) left--;
#endif
    (void)mk;
    if (kind == 1) {
        __m256 gv = acl_load8_16_left((const uint16_t *)g + j, left, false);
        __m256 yv = acl_load8_16_left((const uint16_t *)y + j, left, false);
#if ACLCONFORM_MUTANT == 33 /* masked-select: row sum skips masked positions (spec: all j) */
        gv = _mm256_and_ps(gv, _mm256_castsi256_ps(sms_kept8(mk, j, left)));
#endif
        __m256 p = _mm256_mul_ps(gv, yv);
        *lo = _mm256_add_pd(*lo, acl_lo4_pd(p));
        *hi = _mm256_add_pd(*hi, acl_hi4_pd(p));
        return;
    }
    __m256d glo, ghi, ylo, yhi;
    sms_load8_pd(g, j, left, kind, &glo, &ghi);
    sms_load8_pd(y, j, left, kind, &ylo, &yhi);
#if ACLCONFORM_MUTANT == 33 /* masked-select: row sum skips masked positions (spec: all j) */
    __m256i keep = sms_kept8(mk, j, left);
    __m256d klo = _mm256_castsi256_pd(_mm256_cvtepi32_epi64(_mm256_castsi256_si128(keep)));
    __m256d khi = _mm256_castsi256_pd(_mm256_cvtepi32_epi64(_mm256_extracti128_si256(keep, 1)));
    glo = _mm256_and_pd(glo, klo), ylo = _mm256_and_pd(ylo, klo);
    ghi = _mm256_and_pd(ghi, khi), yhi = _mm256_and_pd(yhi, khi);
#endif
    *lo = _mm256_fmadd_pd(glo, ylo, *lo);
    *hi = _mm256_fmadd_pd(ghi, yhi, *hi);
}

/* sms_dot8_avx2 for bf16 rows whose values all lie in [2^-63, 2^64) in magnitude or are ±0: then
 * every product g·y is ±0 or a 16-bit significand within [2^-126, 2^128), exact in f32, and
 * acc + (double)(g·y) is the FMA of the doubles, as for f16.  The row's magnitudes are gathered
 * on the way (*mx: the largest |bits|, *mn: the smallest |bits| − 1, zeros wrapping to 0xffff) and
 * checked at the end of the row (acl_bf16_range_ok); a row outside the range (or with Inf / NaN)
 * is summed again by sms_dot8_avx2 (the doubles). */
ACL_AVX2_TARGET static inline void sms_dot8_bf16(__m256d *lo, __m256d *hi, const void *g, const void *y,
                                                 const uint8_t *mk, int64_t j, int64_t left, __m128i *mx, __m128i *mn)
{
#if ACLCONFORM_MUTANT == 34 /* simd-tail: row dot: the tail after the wide loop drops the last element */
    if (left < 8) left--;
#endif
    (void)mk;
    __m128i gb, yb;
    if (left >= 8) {
        gb = _mm_loadu_si128((const __m128i *)(const void *)((const uint16_t *)g + j));
        yb = _mm_loadu_si128((const __m128i *)(const void *)((const uint16_t *)y + j));
    } else {
        uint16_t tg[8] = {0}, ty[8] = {0};
        if (left > 0) memcpy(tg, (const uint16_t *)g + j, (size_t)left * 2), memcpy(ty, (const uint16_t *)y + j, (size_t)left * 2);
        gb = _mm_loadu_si128((const __m128i *)(void *)tg);
        yb = _mm_loadu_si128((const __m128i *)(void *)ty);
    }
    acl_bf16_range_track8(gb, mx, mn);
    acl_bf16_range_track8(yb, mx, mn);
    __m256 gv = acl_widen8_16(gb, true), yv = acl_widen8_16(yb, true);
#if ACLCONFORM_MUTANT == 33 /* masked-select: row sum skips masked positions (spec: all j) */
    gv = _mm256_and_ps(gv, _mm256_castsi256_ps(sms_kept8(mk, j, left)));
#endif
    __m256 p = _mm256_mul_ps(gv, yv);
    *lo = _mm256_add_pd(*lo, acl_lo4_pd(p));
    *hi = _mm256_add_pd(*hi, acl_hi4_pd(p));
}

/* sms_dot8_bf16 for the 16 elements j..j+15 of a 32-element block (j at offset 0 or 16 of it),
 * split into even and odd elements as sms_step16x2_bf16 splits them (acl_split16_bf16_eo: a shift
 * and a mask, no shuffle): the products of elements 0, 2, .., 14 in pE and 1, 3, .., 15 in pO, so a[0] holds the
 * partial sums acc[0, 2, 4, 6] of the 16, a[1] acc[8, 10, 12, 14], a[2] acc[1, 3, 5, 7], a[3]
 * acc[9, .., 15]: each acc[k] the same elements as sms_dot8_bf16 gives it, in another lane
 * (sms_dot_unsplit puts them back).  The magnitudes gathered on 16 lanes (*mx, *mn). */
ACL_AVX2_TARGET static inline __attribute__((always_inline)) void
sms_dot16_bf16(__m256d *a, const void *g, const void *y, const uint8_t *mk, int64_t j, __m256i *mx, __m256i *mn)
{
    __m256i gw = _mm256_loadu_si256((const __m256i *)(const void *)((const uint16_t *)g + j));
    __m256i yw = _mm256_loadu_si256((const __m256i *)(const void *)((const uint16_t *)y + j));
    const __m256i abs = _mm256_set1_epi16(0x7fff), one = _mm256_set1_epi16(1);
    __m256i ga = _mm256_and_si256(gw, abs), ya = _mm256_and_si256(yw, abs);
    *mx = _mm256_max_epu16(*mx, _mm256_max_epu16(ga, ya));
    *mn = _mm256_min_epu16(*mn, _mm256_min_epu16(_mm256_sub_epi16(ga, one), _mm256_sub_epi16(ya, one)));
#if ACLCONFORM_MUTANT == 33 /* masked-select: row sum skips masked positions (spec: all j) */
    __m256i mw = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(mk + j)));
    gw = _mm256_andnot_si256(_mm256_cmpgt_epi16(mw, _mm256_setzero_si256()), gw);
#endif
    (void)mk;
    __m256 gE, gO, yE, yO;
    acl_split16_bf16_eo(gw, &gE, &gO);
    acl_split16_bf16_eo(yw, &yE, &yO);
    __m256 pE = _mm256_mul_ps(gE, yE), pO = _mm256_mul_ps(gO, yO);
    a[0] = _mm256_add_pd(a[0], acl_lo4_pd(pE));
    a[1] = _mm256_add_pd(a[1], acl_hi4_pd(pE));
    a[2] = _mm256_add_pd(a[2], acl_lo4_pd(pO));
    a[3] = _mm256_add_pd(a[3], acl_hi4_pd(pO));
}

/* sms_dot16_bf16's four accumulators of 16 elements back in element order (a[0]: acc 0-3, a[1]:
 * 4-7, a[2]: 8-11, a[3]: 12-15): the values moved, none summed */
ACL_AVX2_TARGET static inline void sms_dot_unsplit(__m256d *a)
{
    __m256d e0 = a[0], e8 = a[1], o1 = a[2], o9 = a[3];
    __m256d l0 = _mm256_unpacklo_pd(e0, o1), h0 = _mm256_unpackhi_pd(e0, o1); /* 0 1 4 5, 2 3 6 7 */
    __m256d l8 = _mm256_unpacklo_pd(e8, o9), h8 = _mm256_unpackhi_pd(e8, o9);
    a[0] = _mm256_permute2f128_pd(l0, h0, 0x20);
    a[1] = _mm256_permute2f128_pd(l0, h0, 0x31);
    a[2] = _mm256_permute2f128_pd(l8, h8, 0x20);
    a[3] = _mm256_permute2f128_pd(l8, h8, 0x31);
}

/* sms_out8 on 4 lanes: scale·(g·y − s·y) in double */
ACL_AVX2_TARGET static inline __m256d sms_out4(__m256d gd, __m256d yd, __m256d s, __m256d sc)
{
    return _mm256_mul_pd(sc, _mm256_fmsub_pd(gd, yd, _mm256_mul_pd(s, yd)));
}

/* sms_out8: elements j..j+7 (the first `left`) by the double formula, rounded to f32 */
ACL_AVX2_TARGET static inline __m256 sms_out8_avx2(const void *g, const void *y, int64_t j, int64_t left, __m256d s,
                                                   __m256d sc, int kind)
{
    __m256d glo, ghi, ylo, yhi;
    sms_load8_pd(g, j, left, kind, &glo, &ghi);
    sms_load8_pd(y, j, left, kind, &ylo, &yhi);
    return acl_join4_ps(sms_out4(glo, ylo, s, sc), sms_out4(ghi, yhi, s, sc));
}

/* the lanes of v that are normal floats (not ±0, subnormal, ±Inf, NaN), as a vector of 32-bit
 * all-ones lanes: |v|'s bits + 0x7f800000 wraps the normal range [0x00800000, 0x7f800000) onto
 * [INT32_MIN, -0x01000000), ±0 and subnormals above it (0x7f800000 up), ±Inf and NaN onto
 * [-0x01000000, -0x00800001]: one signed compare, written "c > x" (GCC turns "x > c" into a min
 * and an equality) */
ACL_AVX2_TARGET static inline __m256i sms_normal8(__m256 v)
{
    __m256i a = _mm256_and_si256(_mm256_castps_si256(v), _mm256_set1_epi32(0x7fffffff));
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(-0x01000000), _mm256_add_epi32(a, _mm256_set1_epi32(0x7f800000)));
}

/* a row's constants for its output pass: s_hi, s_lo and scale in f32 (16-bit rows), s and scale
 * in double */
typedef struct {
    __m256 vhi, vlo, sc;
    __m256d s, scd;
} sms_c8;

/* one step of sms_out16_avx2: elements j..j+7 (the first `left`); mode 0: the double formula at
 * every lane (the row fails sms_f32_ok), 1: the f32 pass with t's class test, 2: with v's (fold) */
ACL_AVX2_TARGET static inline __attribute__((always_inline)) void
sms_step16_avx2(const sms_c8 *c, const void *g, const void *y, const uint8_t *mk, int64_t j, int64_t left, void *o,
                int kind, int mode, bool nt)
{
    const __m256 zero = _mm256_setzero_ps();
    __m256 keep = _mm256_castsi256_ps(sms_kept8(mk, j, left));
    __m256 v = zero, redo = _mm256_castsi256_ps(_mm256_set1_epi32(-1)); /* lanes past the row: not stored */
    if (mode != 0) {
        __m256 gv = acl_load8_16_left((const uint16_t *)g + j, left, kind == 2);
        __m256 yv = acl_load8_16_left((const uint16_t *)y + j, left, kind == 2);
        __m256 t = _mm256_mul_ps(_mm256_sub_ps(_mm256_sub_ps(gv, c->vhi), c->vlo), yv);
        v = _mm256_mul_ps(t, c->sc);
#if ACLCONFORM_MUTANT == 62 /* conversion-subnormal: bf16 softmax with |scale| <= 1: t's class tested instead of v's, so a subnormal v = t·scale goes to the unchecked hardware store (flushed to 0) */
        redo = _mm256_andnot_ps(_mm256_castsi256_ps(sms_normal8(t)), keep);
#else
        if (kind == 1) /* f16: t is ±0 or within [2^-72, 2^61] (sms_out16), so not normal = below FLT_MIN */
            redo = _mm256_and_ps(keep, _mm256_cmp_ps(_mm256_and_ps(t, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff))),
                                                     _mm256_set1_ps(FLT_MIN), _CMP_LT_OQ));
        else
            redo = _mm256_andnot_ps(_mm256_castsi256_ps(sms_normal8(mode == 2 ? v : t)), keep);
#endif
#if ACLCONFORM_MUTANT == 56 /* precision-branch: 16-bit softmax f32 pass: lanes with a zero, subnormal or infinite t kept (wrong signed zeros, bf16 overflow and underflow) */
        redo = zero;
#endif
    }
    bool any = _mm256_movemask_ps(redo) != 0;
    if (__builtin_expect(any, 0))
        v = _mm256_blendv_ps(v, sms_out8_avx2(g, y, j, left, c->s, c->scd, kind), redo);
#if ACLCONFORM_MUTANT == 32 /* masked-select: masked positions get v*0 (-0 or NaN) instead of +0.0 */
    v = _mm256_blendv_ps(_mm256_mul_ps(v, zero), v, keep);
#else
    v = _mm256_and_ps(v, keep);
#endif
    if (kind == 2 && !any && left >= 8) {
        /* no lane redone: every v is t·scale with t normal and scale finite, or +0: not NaN, so
         * acl_bf16_rne8_avx2 (acl_bf16_bits8_avx2 without its NaN branch: the same bits) */
        __m256i b = acl_bf16_rne8_avx2(v);
        __m128i h = _mm_packus_epi32(_mm256_castsi256_si128(b), _mm256_extracti128_si256(b, 1));
        if (nt) _mm_stream_si128((__m128i *)(void *)((uint16_t *)o + j), h);
        else _mm_storeu_si128((__m128i *)(void *)((uint16_t *)o + j), h);
        return;
    }
    if (nt && left >= 8) _mm_stream_si128((__m128i *)(void *)((uint16_t *)o + j), acl_pack8_16_avx2(v, kind == 2));
    else acl_store8_16_left((uint16_t *)o + j, left, v, kind == 2);
}

/* The f32 pass of 16 bf16 elements j..j+15 of a row (sms_step16x2_bf16 and _opt): the inputs split
 * even / odd, the mask in 16-bit lanes (keep16: all ones where kept, in element order), t and v,
 * and w, the values the redo test classifies (t, or v under "fold": mode 2) */
typedef struct {
    __m256 gE, gO, yE, yO, tE, tO, vE, vO, wE, wO;
    __m256i keep16;
} sms_bf16x16;

ACL_AVX2_TARGET static inline __attribute__((always_inline)) void
sms_bf16x16_pass(const sms_c8 *c, const void *g, const void *y, const uint8_t *mk, int64_t j, int mode, sms_bf16x16 *r)
{
    acl_load16_bf16_eo((const uint16_t *)g + j, &r->gE, &r->gO);
    acl_load16_bf16_eo((const uint16_t *)y + j, &r->yE, &r->yO);
    /* the 16 mask bytes in both halves (a load), each byte doubled into its word by one in-lane
     * shuffle (VPMOVZXBW crosses lanes: two pipes) */
    const __m256i dup = _mm256_setr_epi8(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12,
                                         13, 13, 14, 14, 15, 15);
    r->keep16 = _mm256_cmpeq_epi16(
        _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)(mk + j))), dup),
        _mm256_setzero_si256());
    r->tE = _mm256_mul_ps(_mm256_sub_ps(_mm256_sub_ps(r->gE, c->vhi), c->vlo), r->yE);
    r->tO = _mm256_mul_ps(_mm256_sub_ps(_mm256_sub_ps(r->gO, c->vhi), c->vlo), r->yO);
    r->vE = _mm256_mul_ps(r->tE, c->sc), r->vO = _mm256_mul_ps(r->tO, c->sc);
#if ACLCONFORM_MUTANT == 62 /* conversion-subnormal: bf16 softmax with |scale| <= 1: t's class tested instead of v's, so a subnormal v = t·scale goes to the unchecked hardware store (flushed to 0) */
    (void)mode;
    r->wE = r->tE, r->wO = r->tO;
#else
    r->wE = mode == 2 ? r->vE : r->tE, r->wO = mode == 2 ? r->vO : r->tO;
#endif
}

/* 16 rounded elements h stored at o + j (streamed: rows on 16 bytes, two 16-byte stores) */
ACL_AVX2_TARGET static inline __attribute__((always_inline)) void sms_store16(void *o, int64_t j, __m256i h, bool nt)
{
    uint16_t *op = (uint16_t *)o + j;
    if (nt) {
        _mm_stream_si128((__m128i *)(void *)op, _mm256_castsi256_si128(h));
        _mm_stream_si128((__m128i *)(void *)(op + 8), _mm256_extracti128_si256(h, 1));
    } else {
        _mm256_storeu_si256((__m256i *)(void *)op, h);
    }
}

/* sms_step16_avx2 for 16 bf16 elements j..j+15 of a row in the f32 pass (mode 1 or 2), with fewer
 * shuffles (the bottleneck here, round 30): each input split by a shift and a mask into its even
 * elements (E: 0, 2, .., 14, the low halves of the 32-bit words, shifted up) and its odd ones (O:
 * the high halves, the low ones cleared), each already the f32 of its bf16; the lanes are
 * independent, so the same operations per lane as sms_step16_avx2.  The mask stays in 16-bit
 * lanes in element order: it gates the redo test (the two 32-bit class masks merged by one word
 * blend) and clears the masked outputs after the two rounded halves are merged by another, so no
 * 32-bit mask is widened unless a lane is redone.  The same bits. */
ACL_AVX2_TARGET static inline __attribute__((always_inline)) void
sms_step16x2_bf16(const sms_c8 *c, const void *g, const void *y, const uint8_t *mk, int64_t j, void *o, int mode,
                  bool nt)
{
    sms_bf16x16 r;
    sms_bf16x16_pass(c, g, y, mk, j, mode, &r);
    const __m256 gE = r.gE, gO = r.gO, yE = r.yE, yO = r.yO;
    __m256 vE = r.vE, vO = r.vO;
    __m256i keep16 = r.keep16, nE = sms_normal8(r.wE), nO = sms_normal8(r.wO);
    /* word 2i: element 2i normal (nE's low half), word 2i + 1: element 2i + 1 (nO's high half) */
    __m256i redo16 = _mm256_andnot_si256(_mm256_blend_epi16(nE, nO, 0xaa), keep16);
#if ACLCONFORM_MUTANT == 56 /* precision-branch: 16-bit softmax f32 pass: lanes with a zero, subnormal or infinite t kept (wrong signed zeros, bf16 overflow and underflow) */
    redo16 = _mm256_setzero_si256();
#endif
    bool any = !_mm256_testz_si256(redo16, redo16);
    if (__builtin_expect(any, 0)) {
        /* blendv reads each 32-bit lane's sign bit: element 2i + 1's word for O, 2i's shifted up for E */
        __m256 rE = _mm256_castsi256_ps(_mm256_slli_epi32(redo16, 16)), rO = _mm256_castsi256_ps(redo16);
        vE = _mm256_blendv_ps(vE, acl_join4_ps(sms_out4(acl_lo4_pd(gE), acl_lo4_pd(yE), c->s, c->scd),
                                               sms_out4(acl_hi4_pd(gE), acl_hi4_pd(yE), c->s, c->scd)), rE);
        vO = _mm256_blendv_ps(vO, acl_join4_ps(sms_out4(acl_lo4_pd(gO), acl_lo4_pd(yO), c->s, c->scd),
                                               sms_out4(acl_hi4_pd(gO), acl_hi4_pd(yO), c->s, c->scd)), rO);
    }
#if ACLCONFORM_MUTANT == 32 /* masked-select: masked positions get v*0 (-0 or NaN) instead of +0.0 */
    vE = _mm256_blendv_ps(_mm256_mul_ps(vE, _mm256_setzero_ps()), vE, _mm256_castsi256_ps(_mm256_slli_epi32(keep16, 16)));
    vO = _mm256_blendv_ps(_mm256_mul_ps(vO, _mm256_setzero_ps()), vO, _mm256_castsi256_ps(keep16));
    keep16 = _mm256_set1_epi32(-1);
#endif
    /* !any: no NaN among the kept lanes (sms_step16_avx2): the RNE bias only */
    __m256i h = acl_pack16_bf16_eo(vE, vO, !any);
    sms_store16(o, j, _mm256_and_si256(h, keep16), nt); /* masked lanes +0.0 */
}

/* sms_step16x2_bf16 with the redo test left to the end of the row (round 32): the high halves of
 * the 16 tested values (t, or v under "fold"), in element order by the word blend the pack uses,
 * keep their exponent fields; masked lanes are cleared; *acc keeps each word's largest
 * (exponent − 0x0080) mod 2^16, which is below 0x7f00 exactly when the exponent is neither 0 (±0,
 * subnormal) nor 0xff (±Inf, NaN): 6 operations where the per-step test took ten and a branch
 * (knocked out altogether: 0.855 of the time, 1 Mi, 1 thread).  No lane is redone here and the
 * rounding is the NaN-free one; sms_loop16_avx2 redoes the whole row by sms_step16x2_bf16 when a
 * kept lane failed (such as a kept y of 0, whose t is ±0: a row with one costs a second output
 * pass).  Else every kept lane passed the test, so these are that step's bits.  The same for f16
 * (its test of |t| < FLT_MIN gathered by an OR) measured a draw: 1.014, 0.953 at 1 Mi, 1 thread,
 * 0.990 at 16 Mi, 2 threads. */
ACL_AVX2_TARGET static inline __attribute__((always_inline)) void
sms_step16x2_bf16_opt(const sms_c8 *c, const void *g, const void *y, const uint8_t *mk, int64_t j, void *o, int mode,
                      bool nt, __m256i *acc)
{
    sms_bf16x16 r;
    sms_bf16x16_pass(c, g, y, mk, j, mode, &r);
    __m256i hi = _mm256_blend_epi16(_mm256_srli_epi32(_mm256_castps_si256(r.wE), 16), _mm256_castps_si256(r.wO), 0xaa);
    __m256i ex = _mm256_sub_epi16(_mm256_and_si256(hi, _mm256_set1_epi16(0x7f80)), _mm256_set1_epi16(0x0080));
    *acc = _mm256_max_epu16(*acc, _mm256_and_si256(ex, r.keep16));
    sms_store16(o, j, _mm256_and_si256(acl_pack16_bf16_eo(r.vE, r.vO, true), r.keep16), nt); /* masked lanes +0.0 */
}

/* whole steps under constant masks, then the tail once */
ACL_AVX2_TARGET static inline __attribute__((always_inline)) void
sms_loop16_avx2(const sms_c8 *c, int64_t n, const void *g, const void *y, const uint8_t *mk, void *o, int kind, int mode,
                bool nt)
{
    int64_t j = 0;
    if (kind == 2 && mode != 0) {
        __m256i acc = _mm256_setzero_si256();
        if (nt)
            for (; j + 16 <= n; j += 16) sms_step16x2_bf16_opt(c, g, y, mk, j, o, mode, true, &acc);
        else
            for (; j + 16 <= n; j += 16) sms_step16x2_bf16_opt(c, g, y, mk, j, o, mode, false, &acc);
        /* a kept lane's exponent 0 or 0xff (a word of acc ≥ 0x7f00): the row again, each step
         * testing its lanes (after SFENCE, so the streaming stores of the first go land first) */
        __m256i bad = _mm256_subs_epu16(acc, _mm256_set1_epi16(0x7eff));
        if (__builtin_expect(!_mm256_testz_si256(bad, bad), 0)) {
            if (nt) _mm_sfence();
            for (j = 0; j + 16 <= n; j += 16) sms_step16x2_bf16(c, g, y, mk, j, o, mode, nt);
        }
    }
    if (nt)
        for (; j + 8 <= n; j += 8) sms_step16_avx2(c, g, y, mk, j, 8, o, kind, mode, true);
    else
        for (; j + 8 <= n; j += 8) sms_step16_avx2(c, g, y, mk, j, 8, o, kind, mode, false);
    if (j < n) sms_step16_avx2(c, g, y, mk, j, n - j, o, kind, mode, false);
}

/* sms_out16 on 8 lanes a step: the same f32 pass (d = (g − s_hi) − s_lo, t = d·y, v = t·scale),
 * the same lanes redone by the double formula (t not normal, or v under "fold": the CPU has
 * AVX512-BF16, which this path never executes, but the lanes redone are the AVX-512 kernel's on
 * the same CPU; the store is the software rounding, the bits of VCVTNEPS2BF16 for a normal v),
 * masked lanes +0.0. */
ACL_AVX2_TARGET static inline __attribute__((always_inline)) void
sms_out16_avx2(int64_t n, const void *g, const void *y, const uint8_t *mk, double sd, double scale, void *o, int kind,
               bool nt)
{
    const bool f32 = sms_f32_ok(sd, scale);
    const float shi = f32 ? (float)sd : 0.0f;
    sms_c8 c;
    c.vhi = _mm256_set1_ps(shi);
    c.vlo = _mm256_set1_ps(f32 ? (float)(sd - shi) : 0.0f);
    c.sc = _mm256_set1_ps((float)scale);
    c.s = _mm256_set1_pd(sd);
    c.scd = _mm256_set1_pd(scale);
    const bool fold = f32 && kind == 2 && acl_bf16_hw && fabs(scale) <= 1.0;
    if (!f32) sms_loop16_avx2(&c, n, g, y, mk, o, kind, 0, nt);
    else if (fold) sms_loop16_avx2(&c, n, g, y, mk, o, kind, 2, nt);
    else sms_loop16_avx2(&c, n, g, y, mk, o, kind, 1, nt);
}

/* one step of the f32 output pass (sms_row_avx512's): the double formula, masked lanes +0.0 */
ACL_AVX2_TARGET static inline __attribute__((always_inline)) void
sms_step32_avx2(const sms_c8 *c, const void *g, const void *y, const uint8_t *mk, int64_t j, int64_t left, void *o,
                bool nt)
{
    __m256 vf = sms_out8_avx2(g, y, j, left, c->s, c->scd, 0);
    __m256 keep = _mm256_castsi256_ps(sms_kept8(mk, j, left));
#if ACLCONFORM_MUTANT == 32 /* masked-select: masked positions get v*0 (-0 or NaN) instead of +0.0 */
    vf = _mm256_blendv_ps(_mm256_mul_ps(vf, _mm256_setzero_ps()), vf, keep);
#else
    vf = _mm256_and_ps(vf, keep);
#endif
    if (left >= 8 && nt) _mm256_stream_ps((float *)o + j, vf);
    else acl_store8_ps_left((float *)o + j, left, vf);
}

ACL_AVX2_TARGET static inline __attribute__((always_inline)) void
sms_out32_avx2(int64_t n, const void *g, const void *y, const uint8_t *mk, double sd, double scale, void *o, bool nt)
{
    sms_c8 c;
    c.s = _mm256_set1_pd(sd);
    c.scd = _mm256_set1_pd(scale);
    int64_t j = 0;
    if (nt)
        for (; j + 8 <= n; j += 8) sms_step32_avx2(&c, g, y, mk, j, 8, o, true);
    else
        for (; j + 8 <= n; j += 8) sms_step32_avx2(&c, g, y, mk, j, 8, o, false);
    if (j < n) sms_step32_avx2(&c, g, y, mk, j, n - j, o, false);
}

/* a 16-bit row (kind 1: f16, 2: bf16) */
ACL_AVX2_TARGET static inline __attribute__((always_inline)) void
sms_row_avx2(int64_t n, const void *g, const void *y, const uint8_t *mk, double scale, void *o, int kind, bool nt)
{
    __m256d a[8]; /* a[2i], a[2i + 1]: sms_row_avx512's a_i, lanes 0-3 and 4-7 */
    for (int i = 0; i < 8; i++) a[i] = _mm256_setzero_pd();
    int64_t j = 0;
    bool summed = false;
    if (kind == 2) { /* bf16: the f32 products when the row's range allows, else again in double */
        __m256i mx16 = _mm256_setzero_si256(), mn16 = _mm256_set1_epi16(-1);
        for (; j + 32 <= n; j += 32) {
            sms_prefetch(g, y, 2 * j);
            sms_dot16_bf16(a, g, y, mk, j, &mx16, &mn16);
            sms_dot16_bf16(a + 4, g, y, mk, j + 16, &mx16, &mn16);
        }
        sms_dot_unsplit(a);
        sms_dot_unsplit(a + 4);
        __m128i mx = _mm_max_epu16(_mm256_castsi256_si128(mx16), _mm256_extracti128_si256(mx16, 1));
        __m128i mn = _mm_min_epu16(_mm256_castsi256_si128(mn16), _mm256_extracti128_si256(mn16, 1));
        for (int i = 0; i < 4; i++)
            if (j + 8 * i < n) sms_dot8_bf16(&a[2 * i], &a[2 * i + 1], g, y, mk, j + 8 * i, n - j - 8 * i, &mx, &mn);
        summed = acl_bf16_range_ok(mx, mn);
        if (!summed)
            for (int i = 0; i < 8; i++) a[i] = _mm256_setzero_pd();
        j = 0;
    }
    if (!summed) {
        for (; j + 32 <= n; j += 32) {
            sms_prefetch(g, y, 2 * j);
            for (int i = 0; i < 4; i++) sms_dot8_avx2(&a[2 * i], &a[2 * i + 1], g, y, mk, j + 8 * i, 8, kind);
        }
        for (int i = 0; i < 4; i++)
            if (j + 8 * i < n) sms_dot8_avx2(&a[2 * i], &a[2 * i + 1], g, y, mk, j + 8 * i, n - j - 8 * i, kind);
    }
    double acc[32];
    for (int i = 0; i < 8; i++) _mm256_storeu_pd(acc + 4 * i, a[i]);
    double sd = acl_sum_tree32(acc);
    sms_out16_avx2(n, g, y, mk, sd, scale, o, kind, nt);
}

/* f32: row r's output pass (sms_out32_avx2) and row r + 1's dot pass into a[] in one loop, step by
 * step.  Apart, the dot pass waits on memory with the arithmetic units idle and the output pass
 * (its inputs in L1) the other way round; interleaved, the core overlaps them.  Each row's
 * operations are unchanged: the same bits. */
ACL_AVX2_TARGET static inline __attribute__((always_inline)) void
sms_pass32_avx2(int64_t n, const sms_c8 *c, const void *g, const void *y, const uint8_t *mk, void *o, const void *g2,
                const void *y2, const uint8_t *mk2, __m256d *a, bool nt)
{
    int64_t j = 0;
    for (; j + 32 <= n; j += 32)
        for (int i = 0; i < 4; i++) {
            if (i % 2 == 0) sms_prefetch(g2, y2, 4 * (j + 8 * i));
            sms_dot8_avx2(&a[2 * i], &a[2 * i + 1], g2, y2, mk2, j + 8 * i, 8, 0);
            sms_step32_avx2(c, g, y, mk, j + 8 * i, 8, o, nt);
        }
    for (int i = 0; i < 4; i++)
        if (j + 8 * i < n) {
            sms_dot8_avx2(&a[2 * i], &a[2 * i + 1], g2, y2, mk2, j + 8 * i, n - j - 8 * i, 0);
            sms_step32_avx2(c, g, y, mk, j + 8 * i, n - j - 8 * i, o, nt);
        }
}

ACL_AVX2_TARGET static void sms_rows32_avx2(const sms_job *jb, int64_t begin, int64_t end)
{
    const int64_t n = jb->s2;
    const char *g = jb->g.data + jb->g.offset * 4, *y = jb->y.data + jb->y.offset * 4;
    char *o = jb->o.data + jb->o.offset * 4;
    __m256d a[8]; /* a[2i], a[2i + 1]: sms_row_avx512's a_i, lanes 0-3 and 4-7 */
    for (int i = 0; i < 8; i++) a[i] = _mm256_setzero_pd();
    const uint8_t *mk = acl_view_ptr(&jb->m, begin * n);
    const char *gr = g + begin * n * 4, *yr = y + begin * n * 4;
    int64_t j = 0;
    for (; j + 32 <= n; j += 32)
        for (int i = 0; i < 4; i++) sms_dot8_avx2(&a[2 * i], &a[2 * i + 1], gr, yr, mk, j + 8 * i, 8, 0);
    for (int i = 0; i < 4; i++)
        if (j + 8 * i < n) sms_dot8_avx2(&a[2 * i], &a[2 * i + 1], gr, yr, mk, j + 8 * i, n - j - 8 * i, 0);
    for (int64_t r = begin; r < end; r++) {
        double acc[32];
        for (int i = 0; i < 8; i++) _mm256_storeu_pd(acc + 4 * i, a[i]), a[i] = _mm256_setzero_pd();
        double sd = acl_sum_tree32(acc);
        int64_t s = r * n;
        if (r + 1 == end) {
            sms_out32_avx2(n, g + s * 4, y + s * 4, mk, sd, jb->scale, o + s * 4, jb->nt);
            break;
        }
        sms_c8 c;
        c.s = _mm256_set1_pd(sd);
        c.scd = _mm256_set1_pd(jb->scale);
        const uint8_t *mk2 = acl_view_ptr(&jb->m, s + n);
        if (jb->nt)
            sms_pass32_avx2(n, &c, g + s * 4, y + s * 4, mk, o + s * 4, g + (s + n) * 4, y + (s + n) * 4, mk2, a, true);
        else
            sms_pass32_avx2(n, &c, g + s * 4, y + s * 4, mk, o + s * 4, g + (s + n) * 4, y + (s + n) * 4, mk2, a, false);
        mk = mk2;
    }
    if (jb->nt) acl_nt_fence();
}

ACL_AVX2_TARGET static void sms_rows_avx2(const sms_job *jb, int64_t begin, int64_t end)
{
    if (begin >= end) return;
    if (jb->g.dtype == ACL_FLOAT) {
        sms_rows32_avx2(jb, begin, end);
        return;
    }
    int64_t n = jb->s2;
    const char *g = jb->g.data + jb->g.offset * 2, *y = jb->y.data + jb->y.offset * 2;
    char *o = jb->o.data + jb->o.offset * 2;
    for (int64_t r = begin; r < end; r++) {
        int64_t s = r * n;
        const uint8_t *mk = acl_view_ptr(&jb->m, s);
        if (jb->g.dtype == ACL_FLOAT16) sms_row_avx2(n, g + s * 2, y + s * 2, mk, jb->scale, o + s * 2, 1, jb->nt16);
        else sms_row_avx2(n, g + s * 2, y + s * 2, mk, jb->scale, o + s * 2, 2, jb->nt16);
    }
    if (jb->nt16) acl_nt_fence();
}
#endif

/* Contiguous f32 tensors are read and written in place (no staging copy). */
static float *sms_direct(const acl_view *v)
{
    return v->contiguous && v->dtype == ACL_FLOAT ? (float *)(void *)v->data + v->offset : NULL;
}

static void sms_rows(void *p, int64_t begin, int64_t end)
{
    const sms_job *jb = p;
#ifdef ACL_HAVE_AVX512_KERNELS
    /* contiguous gradOutput, y, out and a mask whose rows are contiguous bytes, every dtype */
    if (jb->g.contiguous && jb->y.contiguous && jb->o.contiguous && jb->m.strides[3] == 1 &&
        jb->m.esize == 1 && acl_have_avx512()) {
        sms_rows_avx512(jb, begin, end);
        return;
    }
#endif
#ifdef ACL_HAVE_AVX2_KERNELS
    /* the same layouts on CPUs without AVX-512: the AVX-512 kernel's forms on 8 lanes, its bits */
    if (jb->g.contiguous && jb->y.contiguous && jb->o.contiguous && jb->m.strides[3] == 1 &&
        jb->m.esize == 1 && acl_have_avx2()) {
        sms_rows_avx2(jb, begin, end);
        return;
    }
#endif
    float g[SMS_MAX_S2], y[SMS_MAX_S2], m[SMS_MAX_S2], o[SMS_MAX_S2];
    float *dg = sms_direct(&jb->g), *dy = sms_direct(&jb->y), *dout = sms_direct(&jb->o);
    int64_t n = jb->s2;
    for (int64_t r = begin; r < end; r++) {
        int64_t s = r * n;
        if (!dg) acl_view_load_f32(&jb->g, s, n, g);
        if (!dy) acl_view_load_f32(&jb->y, s, n, y);
        acl_view_load_f32(&jb->m, s, n, m);
        sms_row(n, dg ? dg + s : g, dy ? dy + s : y, m, jb->scale, dout ? dout + s : o, jb->o.dtype != ACL_FLOAT);
        if (!dout) acl_view_store_f32(&jb->o, s, n, o);
    }
}

static aclnnStatus sms_kernel(void *p, void *ws, uint64_t ws_size)
{
    (void)ws; (void)ws_size;
    sms_args *a = p;
    const aclTensor *o = &a->out;
    if (o->numel == 0) return ACLNN_SUCCESS;
    sms_job jb;
    acl_view_init(&jb.g, &a->gradOutput);
    acl_view_init(&jb.y, &a->y);
    acl_view_init(&jb.o, o);
#if ACLCONFORM_MUTANT == 37 /* broadcast-stride: mask read without broadcasting (B or N of 1 read as full) */
    acl_view_init(&jb.m, &a->mask);
#else
    acl_view_broadcast(&jb.m, &a->mask, 4, o->dims); /* dims 0–1 may be 1 */
#endif
    jb.s2 = o->dims[3];
    jb.scale = (float)a->scale;
    /* f32 in 8-lane vectors (top of this file); 16-bit rows on AVX2 only (sms_rows_avx2) */
    jb.nt = o->dtype == ACL_FLOAT && acl_nt_wanted_rows(&jb.o, jb.s2, 32);
    jb.nt16 = o->dtype != ACL_FLOAT && acl_nt_wanted_rows(&jb.o, jb.s2, 16);
    int64_t rows = o->numel / jb.s2;
    int64_t grain = 16384 / jb.s2 > 0 ? 16384 / jb.s2 : 1;
    acl_parallel_for(rows, grain, sms_rows, &jb);
    return ACLNN_SUCCESS;
}

static aclnnStatus sms_validate(const aclTensor *g, const aclTensor *y, const aclTensor *mask,
                                bool fixTriuMask, const aclTensor *out)
{
    if (!g || !y || !mask || !out) return ACLNN_ERR_PARAM_NULLPTR;
    if (!acl_dtype_is_half_or_f32(g->dtype) || y->dtype != g->dtype || out->dtype != g->dtype ||
        mask->dtype != ACL_BOOL)
        return ACLNN_ERR_PARAM_INVALID;
    if (g->ndim != 4 || mask->ndim != 4 || !acl_same_shape(g, y) || !acl_same_shape(g, out))
        return ACLNN_ERR_PARAM_INVALID;
    if ((mask->dims[0] != g->dims[0] && mask->dims[0] != 1) ||
#if ACLCONFORM_MUTANT == 36 /* validation: mask broadcast the wrong way accepted (mask dim 2 == 1) */
        (mask->dims[1] != g->dims[1] && mask->dims[1] != 1) || (mask->dims[2] != g->dims[2] && mask->dims[2] != 1) ||
#else
        (mask->dims[1] != g->dims[1] && mask->dims[1] != 1) || mask->dims[2] != g->dims[2] ||
#endif
        mask->dims[3] != g->dims[3])
        return ACLNN_ERR_PARAM_INVALID;
#if ACLCONFORM_MUTANT == 35 /* off-by-one-limit: S2 limit exclusive: S2 = 4096 rejected */
    if (g->dims[3] >= SMS_MAX_S2) return ACLNN_ERR_PARAM_INVALID;
#else
    if (g->dims[3] > SMS_MAX_S2) return ACLNN_ERR_PARAM_INVALID;
#endif
    if (fixTriuMask) return ACLNN_ERR_PARAM_INVALID;
    if (!acl_format_ok(g) || !acl_format_ok(y) || !acl_format_ok(mask) || !acl_format_ok(out) ||
        !acl_output_ok(out))
        return ACLNN_ERR_PARAM_INVALID;
    if (!acl_data_ok(g) || !acl_data_ok(y) || !acl_data_ok(mask) || !acl_data_ok(out))
        return ACLNN_ERR_PARAM_NULLPTR;
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnScaledMaskedSoftmaxBackwardGetWorkspaceSize(const aclTensor *gradOutput,
    const aclTensor *y, const aclTensor *mask, double scale, bool fixTriuMask, aclTensor *out,
    uint64_t *workspaceSize, aclOpExecutor **executor)
{
    if (!executor) return ACLNN_ERR_PARAM_NULLPTR;
    *executor = NULL;
    if (!workspaceSize) return ACLNN_ERR_PARAM_NULLPTR;
    aclnnStatus st = sms_validate(gradOutput, y, mask, fixTriuMask, out);
    if (st != ACLNN_SUCCESS) return st;
    sms_args a;
    memset(&a, 0, sizeof a);
    a.gradOutput = *gradOutput;
    a.y = *y;
    a.mask = *mask;
    a.out = *out;
    a.scale = scale;
    return acl_executor_create(sms_kernel, &a, sizeof a, 0, workspaceSize, executor);
}

aclnnStatus aclnnScaledMaskedSoftmaxBackward(void *workspace, uint64_t workspaceSize,
                                             aclOpExecutor *executor, aclrtStream stream)
{
    (void)stream;
    return acl_executor_run(workspace, workspaceSize, executor);
}
