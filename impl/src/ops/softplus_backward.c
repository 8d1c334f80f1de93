/* aclnnSoftplusBackward (ops.md §5):
 *   z = beta·self;  gradInput = z > threshold ? gradOutput : gradOutput · sigmoid(z)
 *
 * Compute precision P is f64 when any tensor is f64, else f32: self (integer and bool too),
 * beta and threshold are converted to P, z is rounded to P and compared in P (numerics §5).
 * The sigmoid branch is evaluated in double; for f32 compute precision the result is rounded
 * once to f32 from a value accurate to a few double ULP (f64: see softplus_sigmoid_times_f64):
 *   z ≥ 0:            dy / (1 + e^{-z})
 *   -700 < z < 0:     dy · e^{z} / (1 + e^{z})          (no overflow of e^{-z})
 *   z ≤ -700:         (dy · e^{z/2}) · e^{z/2}           (a huge dy times a tiny sigmoid keeps
 *                                                      its digits instead of a subnormal factor)
 * An infinite dy with finite z is an infinity (numerics §5a); z = -Inf gives dy·0 (NaN for an
 * infinite dy); NaN anywhere gives NaN (the comparison is false for NaN). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aclnnop/aclnn_softplus_backward.h"
#include "runtime/check.h"
#include "runtime/conv.h"
#include "runtime/ewise.h"
#include "runtime/simd512.h"
#include "runtime/vecmath.h"

typedef struct {
    aclTensor gradOutput, self, gradInput;
    aclScalar beta, threshold;
} softplus_args;

typedef struct {
    float beta32, thr32;
    double beta64, thr64;
} softplus_ctx;

/* Scalar exp, never vectorised: the f64 path keeps libm's accuracy (≤ 2 ULP target). */
static __attribute__((noinline)) double exp_scalar(double x) { return exp(x); }

/* dy · sigmoid(z) for the non-linear branch (z ≤ threshold or NaN), scalar reference form. */
static inline double softplus_sigmoid_times(double dy, double z)
{
    if (z >= 0.0) return dy / (1.0 + exp_scalar(-z));
    if (z > -700.0) {
        double e = exp_scalar(z);
        return dy * e / (1.0 + e);
    }
    double h = exp_scalar(0.5 * z);
    if (h == 0.0 && isinf(dy) && z > -INFINITY) return dy; /* sigmoid(z) > 0: no Inf·0 */
    return (dy * h) * h;
}

/* f32 compute precision.  The main loop is branch-free (e = e^{-|z|}, sigmoid = (z ≥ 0 ? 1 : e)
 * / (1 + e), all in double) so it vectorises; it is exact enough everywhere except z ≤ -700,
 * where e loses digits or underflows (only an infinite dy can notice: dy·sigmoid rounds to ±0 in
 * f32 otherwise) — those elements are redone by the scalar form in a second pass. */
ACL_KERNEL_CLONES static void softplus_block_f32(const void *p, int64_t n, const float *dy,
                                                 const float *x, float *out)
{
    const softplus_ctx *c = p;
    /* The branch is decided on z rounded to f32 (numerics §5); the value uses the exact product
     * (exact in double for f32 operands), so a beta·self that overflows f32 is still a finite z
     * whose sigmoid is tiny but not 0: an infinite dy stays infinite (§5a). */
    for (int64_t i = 0; i < n; i++) {
        float z = c->beta32 * x[i];
        double zd = (double)c->beta32 * x[i], e = exp(-fabs(zd));
        double r = (double)dy[i] * ((zd >= 0.0 ? 1.0 : e) / (1.0 + e));
#if ACLCONFORM_MUTANT == 22 /* branch-boundary: f32 path: threshold compare z >= threshold instead of z > threshold */
        out[i] = z >= c->thr32 ? dy[i] : (float)r;
#else
        out[i] = z > c->thr32 ? dy[i] : (float)r;
#endif
    }
    for (int64_t i = 0; i < n; i++) {
        float z = c->beta32 * x[i];
#if ACLCONFORM_MUTANT == 25 /* precision-branch: f32 path: the z <= -700 rescue pass skipped (Inf dy x underflowed sigmoid gives 0/NaN) */
        if (z <= -700.0f && !(z > c->thr32) && 0)
#else
        if (z <= -700.0f && !(z > c->thr32))
#endif
            out[i] = (float)softplus_sigmoid_times(dy[i], (double)c->beta32 * x[i]);
    }
}

#ifdef ACL_HAVE_AVX512_KERNELS
/* softplus_block_f32 with AVX-512 doubles, 8 elements per step (the tail under a mask: the same
 * instructions for every element).  The same quantities: z = beta·self rounded to f32 decides
 * the branch, e = e^{-|zd|} by acl_exp8_fast on max(-|zd|, -708) (< 2^-37 relative),
 * dy·sigmoid = (zd < 0 ? dy·e : dy)/(1 + e) (one product, one correctly rounded division), rounded
 * once to f32: e's error reaches the quotient scaled by ≤ 1, so the value is within 2^-36 relative
 * before that rounding (< 2^-12 ULP of f32).  The z ≤ -700 elements (the only ones the clamp
 * changes, and whose e may be subnormal) are redone by the scalar form, as in the portable
 * kernel, only in the steps that have one. */
ACL_AVX512_TARGET static inline void softplus_step_f32(const void *p, const float *dy, const float *x,
                                                     float *out, __mmask8 m)
{
    const softplus_ctx *c = p;
    const __m512d one = _mm512_set1_pd(1.0);
    __m256 xf = acl_loadu8_ps(x, m), dyf = acl_loadu8_ps(dy, m);
    __m256 z = _mm256_mul_ps(_mm256_set1_ps(c->beta32), xf);
#if ACLCONFORM_MUTANT == 22 /* branch-boundary: f32 path: threshold compare z >= threshold instead of z > threshold */
    __mmask8 lin = _mm256_cmp_ps_mask(z, _mm256_set1_ps(c->thr32), _CMP_GE_OQ);
#else
    __mmask8 lin = _mm256_cmp_ps_mask(z, _mm256_set1_ps(c->thr32), _CMP_GT_OQ);
#endif
    __m512d zd = _mm512_mul_pd(_mm512_set1_pd((double)c->beta32), _mm512_cvtps_pd(xf));
    __m512d e = acl_exp8_fast(_mm512_max_pd(_mm512_set1_pd(-708.0), _mm512_or_pd(zd, _mm512_set1_pd(-0.0)))); /* NaN stays */
    __m512d dyd = _mm512_cvtps_pd(dyf);
    __m512d num = _mm512_mask_mul_pd(dyd, _mm512_cmp_pd_mask(zd, _mm512_setzero_pd(), _CMP_LT_OQ), dyd, e);
    __m512d r = _mm512_div_pd(num, _mm512_add_pd(one, e));
    __m256 o = _mm256_mask_mov_ps(_mm512_cvtpd_ps(r), lin, dyf);
    __mmask8 low = _mm256_cmp_ps_mask(z, _mm256_set1_ps(-700.0f), _CMP_LE_OQ) & (__mmask8)~lin & m;
#if ACLCONFORM_MUTANT == 25 /* precision-branch: f32 path: the z <= -700 rescue pass skipped (Inf dy x underflowed sigmoid gives 0/NaN) */
    low = 0;
#endif
    _mm256_mask_storeu_ps(out, m, o);
    for (int l = 0; low; l++, low >>= 1)
        if (low & 1) out[l] = (float)softplus_sigmoid_times(dy[l], (double)c->beta32 * x[l]);
}

ACL_AVX512_TARGET static void softplus_block_f32_avx512(const void *p, int64_t n, const float *dy,
                                                        const float *x, float *out)
{
    acl_steps8_f32(p, n, dy, x, out, softplus_step_f32);
}
#endif

/* f64 compute precision: dy · sigmoid(z) to ≤ 2 ULP by analysis (ops.md §5 tolerance 2).
 *
 * The value comes from the exact product beta·self (ops.md §5), carried as zh + zl (zh the
 * rounded z that decides the branch, zl = fma(beta, self, -zh) exact, |zl| ≤ ulp(zh)/2).  The old
 * form dy·e/(1+e) with e = e^{zh} dropped zl and rounded four times (exp, product, sum, quotient):
 * 2.069 ULP in issue 12 (dy = DBL_MAX, z ≈ -0.669; zl alone was worth 0.2 ULP there).
 * Now, for zh > -700:
 *   E = exp(-zh)                        glibc's exp, < 0.52 ULP: relative error ≤ 1.04·2^-53
 *   s + t = 1 + E·(1 - zl)              Fast2Sum of 1 + E (larger operand first) plus -E·zl;
 *                                       e^{-zl} = 1 - zl + O(2^-86), |E·zl| < ulp(s) so t is small
 *   q = dy·(1/s), r = fma(-q, s, dy)    q is within 2 ULP of dy/s; r = dy - q·s to ≤ 2^-53
 *                                       relative (exact when q is faithful)
 *   result = q + (r - q·t)·(1/s)        the correction is ≤ 2 ULP of q and carries ≤ 2^-51
 *                                       relative error: dy/(s + t) to ~2^-50 ULP before the
 *                                       last rounding, with one division per element
 * E's error reaches the quotient scaled by E/(1+E) < 1, so the value before the final rounding is
 * within 1.04·2^-53 (+2^-85) relative of dy·sigmoid(z): at most 1.04 ULP of the result's binade,
 * plus the final 0.5 ULP = 1.54 ULP ≤ 2.
 * For zh ≤ -700 (where E would overflow) sigmoid(z) = e^z/(1+e^z) with e^z < 2^-1009, so
 * 1/(1+e^z) is 1 to far below any precision carried: the result is dy·e^{zh}·(1 + zl), evaluated
 * in x87 extended precision (64-bit significand, range to 2^-16382: e^z and dy·e^z never
 * underflow there) and rounded once to double, ≤ 0.5 ULP + 2^-61 relative (also to a subnormal).
 * That branch is rare and runs per element. */
static double softplus_sigmoid_times_f64(double dy, double zh, double zl)
{
    if (zh > -700.0) {
        double E = exp_scalar(-zh);
        double s = 1.0 + E;
        double big = E > 1.0 ? E : 1.0, small = E > 1.0 ? 1.0 : E; /* selects, no branch */
        double t = ((big - s) + small) - E * zl;
        double inv = 1.0 / s, q = dy * inv;
        if (!isfinite(q) || q == 0.0 || !isfinite(s)) return dy / s; /* Inf/NaN dy, or ±0 */
        double r = fma(-q, s, dy);
        return q + (r - q * t) * inv;
    }
    if (isnan(zh)) return zh;
    long double e = expl((long double)zh);
    if (e == 0.0L && isinf(dy) && zh > -INFINITY) return dy; /* sigmoid(z) > 0: no Inf·0 */
    return (double)((long double)dy * (e * (1.0L + (long double)zl)));
}

/* Clones for the hardware fma (the baseline calls libm's, same exact result); the loop stays
 * scalar: exp_scalar is libm's exp, never a vector variant. */
static void softplus_block_f64(const void *p, int64_t n, const double *dy,
                                                 const double *x, double *out)
{
    const softplus_ctx *c = p;
    const double beta = c->beta64;
    for (int64_t i = 0; i < n; i++) {
        double z = beta * x[i];
#if ACLCONFORM_MUTANT == 23 /* branch-boundary: f64 path: threshold compare z >= threshold instead of z > threshold */
        if (z >= c->thr64) {
#else
        if (z > c->thr64) {
#endif
            out[i] = dy[i];
            continue;
        }
        /* an overflowed product of finite operands is a finite z beyond ±DBL_MAX: its sigmoid is
         * not 0, so an infinite dy stays infinite (§5a) */
        double zh = z, zl = 0.0;
        if (isinf(z) && isfinite(beta) && isfinite(x[i])) zh = copysign(DBL_MAX, z);
#if ACLCONFORM_MUTANT == 27 /* f64-precision: f64 path drops the low part zl of beta*self (the pre-issue-12 rounding) */
        else if (isfinite(z)) zl = 0.0 * fma(beta, x[i], -z);
#else
        else if (isfinite(z)) zl = fma(beta, x[i], -z);
#endif
        out[i] = softplus_sigmoid_times_f64(dy[i], zh, zl);
    }
}

#ifdef ACL_HAVE_AVX512_KERNELS
/* softplus_block_f64 with AVX-512, 8 elements per step: the same operations in the same order
 * (z, zh/zl, the threshold branch, softplus_sigmoid_times_f64's zh > -700 branch), with E from
 * acl_exp8_dd as E + El (< 0.18·2^-53 relative, simd512.h) instead of glibc's exp (< 1.04·2^-53),
 * El joining the Fast2Sum remainder: s + t = 1 + (E + El)·(1 - zl).  The bound above then reads
 * 0.18 ULP of the result's binade before the final rounding, ≤ 0.68 ULP + 2^-50 in all (≤ 2).
 * Lanes with zh ≤ -700 or NaN take the scalar forms; lanes whose q is not finite or 0, or s not
 * finite, give dy / s as the scalar form does.  The rare cases (a non-finite z, an odd q) are
 * tested by one fpclass each and handled under a branch (issue 14: 1.46x faster in cache, the
 * same bits on 500,000 mixed inputs with specials and eight betas). */
ACL_AVX512_TARGET static void softplus_block_f64_avx512(const void *p, int64_t n, const double *dy,
                                                        const double *x, double *out)
{
    const softplus_ctx *c = p;
    const __m512d beta = _mm512_set1_pd(c->beta64), thr = _mm512_set1_pd(c->thr64);
    const __m512d one = _mm512_set1_pd(1.0), zero = _mm512_setzero_pd();
    const __m512d inf = _mm512_set1_pd(INFINITY), dmax = _mm512_set1_pd(DBL_MAX);
    const __m512d m700 = _mm512_set1_pd(-700.0), sign = _mm512_set1_pd(-0.0);
    const bool beta_finite = isfinite(c->beta64);
    for (int64_t i = 0; i < n; i += 8) {
        __mmask8 m = acl_mask8(n - i);
        __m512d xv = acl_loadu8_pd(x + i, m), g = acl_loadu8_pd(dy + i, m);
        __m512d z = _mm512_mul_pd(beta, xv);
#if ACLCONFORM_MUTANT == 23 /* branch-boundary: f64 path: threshold compare z >= threshold instead of z > threshold */
        __mmask8 lin = _mm512_cmp_pd_mask(z, thr, _CMP_GE_OQ);
#else
        __mmask8 lin = _mm512_cmp_pd_mask(z, thr, _CMP_GT_OQ);
#endif
#if ACLCONFORM_MUTANT == 27 /* f64-precision: f64 path drops the low part zl of beta*self (the pre-issue-12 rounding) */
        __m512d zh = z, zl = _mm512_mul_pd(zero, _mm512_fmsub_pd(beta, xv, z));
#else
        __m512d zh = z, zl = _mm512_fmsub_pd(beta, xv, z);
#endif
        /* rare: z NaN or ±Inf (fpclass QNaN, +Inf, -Inf, SNaN); then zl = 0, and an overflowed
         * product of finite operands is zh = ±DBL_MAX */
        __mmask8 nonfin = _mm512_fpclass_pd_mask(z, 0x99);
        if (__builtin_expect(nonfin != 0, 0)) {
            __mmask8 ovf = beta_finite ? _mm512_mask_cmp_pd_mask(nonfin, _mm512_abs_pd(z), inf, _CMP_EQ_OQ) &
                                             _mm512_cmp_pd_mask(_mm512_abs_pd(xv), inf, _CMP_LT_OQ)
                                       : 0;
            zh = _mm512_mask_mov_pd(z, ovf, _mm512_or_pd(_mm512_and_pd(z, sign), dmax));
            zl = _mm512_mask_mov_pd(zl, nonfin, zero);
        }
        __mmask8 fast = _mm512_cmp_pd_mask(zh, m700, _CMP_GT_OQ) & (__mmask8)~lin & m;
        __m512d El;
        __m512d E = acl_exp8_dd(_mm512_sub_pd(zero, zh), &El);
        __m512d sm = _mm512_add_pd(one, E);
        /* Fast2Sum's larger and smaller operand (E is not NaN in the fast lanes) */
        __m512d big = _mm512_max_pd(E, one), small = _mm512_min_pd(E, one);
        __m512d t = _mm512_sub_pd(_mm512_add_pd(_mm512_add_pd(_mm512_sub_pd(big, sm), small), El),
                                  _mm512_mul_pd(E, zl));
        __m512d inv = _mm512_div_pd(one, sm), q = _mm512_mul_pd(g, inv);
        __m512d r = _mm512_fnmadd_pd(q, sm, g);
        __m512d res = _mm512_add_pd(q, _mm512_mul_pd(_mm512_sub_pd(r, _mm512_mul_pd(q, t)), inv));
        /* rare: !isfinite(q) || q == 0 (fpclass NaN, ±Inf, ±0) gives dy / s (s is finite in the
         * fast lanes; the others are redone below) */
        __mmask8 odd = _mm512_mask_fpclass_pd_mask(fast, q, 0x9f);
        if (__builtin_expect(odd != 0, 0)) res = _mm512_mask_div_pd(res, odd, g, sm);
        res = _mm512_mask_mov_pd(res, lin, g);
        _mm512_mask_storeu_pd(out + i, m, res);
        for (__mmask8 slow = (__mmask8)(~fast & ~lin & m); slow; slow &= (__mmask8)(slow - 1)) {
            int l = __builtin_ctz(slow);
            double zs = c->beta64 * x[i + l], zls = 0.0, zhs = zs;
            if (isinf(zs) && beta_finite && isfinite(x[i + l])) zhs = copysign(DBL_MAX, zs);
#if ACLCONFORM_MUTANT == 27 /* (mutant 27, continued) */
            else if (isfinite(zs)) zls = 0.0 * fma(c->beta64, x[i + l], -zs);
#else
            else if (isfinite(zs)) zls = fma(c->beta64, x[i + l], -zs);
#endif
            out[i + l] = softplus_sigmoid_times_f64(dy[i + l], zhs, zls);
        }
    }
}
#endif

/* 16-bit self, f32 compute precision, large tensors: the factor that multiplies dy depends on
 * self alone (beta and threshold are fixed per call), so it is tabulated for all 65536 patterns
 * once per call, by the same double evaluation as softplus_block_f32 (fill below), and the
 * kernel is a table load and one double product per element:
 *   z > threshold          factor 1.0 (dy·1.0 = dy exactly)
 *   z ≤ -700 (f32 z)       any finite dy gives ±0 in f32 (|dy|·sigmoid < 2^128·2^-1009), so
 *                          the factor only has to keep the sign rule: DBL_TRUE_MIN for a finite
 *                          z (an infinite dy stays infinite, §5a), 0 for z = -Inf (Inf·0 = NaN)
 *   otherwise              (z ≥ 0 ? 1 : e)/(1 + e), e = e^{-|z|}, z the exact double product
 * The table costs 65536 exp evaluations, so it is used from SP_TABLE_MIN elements up. */
#define SP_TABLE_MIN (1 << 18)

typedef struct {
    const double *f;
} softplus_table_ctx;

ACL_KERNEL_CLONES static void softplus_fill(const softplus_ctx *c, const float *x, double *f, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        float z = c->beta32 * x[i];
        double zd = (double)c->beta32 * x[i], e = exp(-fabs(zd));
        double s = (zd >= 0.0 ? 1.0 : e) / (1.0 + e);
        double tail = zd == -INFINITY ? 0.0 : zd != zd ? zd : DBL_TRUE_MIN;
#if ACLCONFORM_MUTANT == 24 /* branch-boundary: 16-bit table path (>= 2^18 elements): z >= threshold in the table fill */
        f[i] = z >= c->thr32 ? 1.0 : z <= -700.0f ? tail : s;
#else
        f[i] = z > c->thr32 ? 1.0 : z <= -700.0f ? tail : s;
#endif
    }
}

ACL_KERNEL_CLONES static void softplus_table_block(const void *p, int64_t n, const float *dy,
                                                   const uint16_t *xb, float *out)
{
    const double *f = ((const softplus_table_ctx *)p)->f;
    for (int64_t i = 0; i < n; i++) out[i] = (float)((double)dy[i] * f[xb[i]]);
}

#ifdef ACL_HAVE_AVX512_KERNELS
/* softplus_table_block for 16-bit gradOutput and gradInput of self's dtype, converting in
 * registers: the same factor, the same double product, rounded to f32 and then to the 16-bit
 * dtype exactly as the staged path (acl_store8_16 = acl_cvt_f32_to_*). */
ACL_AVX512_TARGET static inline __attribute__((always_inline)) void
softplus_table16_step(const void *p, const uint16_t *dy, const uint16_t *xb, uint16_t *out, __mmask8 m, bool bf)
{
    __m512d dyd = _mm512_cvtps_pd(acl_load8_16(dy, m, bf));
    __m512d fv = acl_table8(((const softplus_table_ctx *)p)->f, xb, m);
    acl_store8_16(out, m, _mm512_cvtpd_ps(_mm512_mul_pd(dyd, fv)), bf);
}

ACL_AVX512_TARGET static inline void softplus_table16_step_f16(const void *p, const uint16_t *dy,
                                                               const uint16_t *xb, uint16_t *out, __mmask8 m)
{
    softplus_table16_step(p, dy, xb, out, m, false);
}

ACL_AVX512_TARGET static inline void softplus_table16_step_bf16(const void *p, const uint16_t *dy,
                                                                const uint16_t *xb, uint16_t *out, __mmask8 m)
{
    softplus_table16_step(p, dy, xb, out, m, true);
}

/* softplus_fill with AVX-512: the same selects, e by acl_exp8 (< 2^-50 relative; the factor is
 * then within 2^-49 of sigmoid, as the libmvec form, and the product is rounded once to f32). */
ACL_AVX512_TARGET static void softplus_fill_avx512(const softplus_ctx *c, uint32_t h0, bool bf, double *f, int64_t n)
{
    const __m256 beta = _mm256_set1_ps(c->beta32), thr = _mm256_set1_ps(c->thr32);
    const __m256 lo = _mm256_set1_ps(-700.0f);
    const __m512d betad = _mm512_set1_pd((double)c->beta32), one = _mm512_set1_pd(1.0);
    const __m512d zero = _mm512_setzero_pd(), sign = _mm512_set1_pd(-0.0);
    const __m512d tiny = _mm512_set1_pd(DBL_TRUE_MIN), ninf = _mm512_set1_pd(-INFINITY);
    for (int64_t i = 0; i < n; i += 8) {
        /* x of the 8 patterns h0 + i .. h0 + i + 7, widened exactly */
        __m128i h = _mm_add_epi16(_mm_set1_epi16((short)(h0 + (uint32_t)i)), _mm_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7));
        __m256 xf = acl_widen8_16(h, bf), z = _mm256_mul_ps(beta, xf);
        __m512d zd = _mm512_mul_pd(betad, _mm512_cvtps_pd(xf));
        __m512d e = acl_exp8(_mm512_or_pd(zd, sign));
        __m512d num = _mm512_mask_mov_pd(e, _mm512_cmp_pd_mask(zd, zero, _CMP_GE_OQ), one);
        __m512d sg = _mm512_div_pd(num, _mm512_add_pd(one, e));
        /* tail: 0 for z = -Inf, NaN for NaN, else DBL_TRUE_MIN */
        __m512d tail = _mm512_mask_mov_pd(tiny, _mm512_cmp_pd_mask(zd, ninf, _CMP_EQ_OQ), zero);
        tail = _mm512_mask_mov_pd(tail, _mm512_cmp_pd_mask(zd, zd, _CMP_UNORD_Q), zd);
#if ACLCONFORM_MUTANT == 24 /* branch-boundary: 16-bit table path (>= 2^18 elements): z >= threshold in the table fill */
        __mmask8 lin = _mm256_cmp_ps_mask(z, thr, _CMP_GE_OQ);
#else
        __mmask8 lin = _mm256_cmp_ps_mask(z, thr, _CMP_GT_OQ);
#endif
        __mmask8 low = _mm256_cmp_ps_mask(z, lo, _CMP_LE_OQ);
        __m512d v = _mm512_mask_mov_pd(_mm512_mask_mov_pd(sg, low, tail), lin, one);
        _mm512_storeu_pd(f + i, v);
    }
}

ACL_AVX512_TARGET static void softplus_table16_f16(const void *p, int64_t n, const uint16_t *dy,
                                                   const uint16_t *xb, uint16_t *out)
{
    acl_steps8_u16(p, n, dy, xb, out, softplus_table16_step_f16);
}

ACL_AVX512_TARGET static void softplus_table16_bf16(const void *p, int64_t n, const uint16_t *dy,
                                                    const uint16_t *xb, uint16_t *out)
{
    acl_steps8_u16(p, n, dy, xb, out, softplus_table16_step_bf16);
}
#endif

/* The table is filled in parallel, SP_FILL_GRAIN patterns a task (each entry the same
 * evaluation whichever thread computes it): at 2^18 elements the fill was half the call. */
#define SP_FILL_GRAIN 4096

typedef struct {
    const softplus_ctx *c;
    double *f;
    bool bf;
} softplus_fill_job;

static void softplus_fill_range(void *p, int64_t begin, int64_t end)
{
    const softplus_fill_job *j = p;
    for (int64_t t = begin; t < end; t++) {
        int64_t h0 = t * SP_FILL_GRAIN;
#ifdef ACL_HAVE_AVX512_KERNELS
        if (acl_have_avx512()) {
            softplus_fill_avx512(j->c, (uint32_t)h0, j->bf, j->f + h0, SP_FILL_GRAIN);
            continue;
        }
#endif
        float x[SP_FILL_GRAIN];
        for (int64_t h = 0; h < SP_FILL_GRAIN; h++)
            x[h] = j->bf ? acl_bf16_to_f32((uint16_t)(h0 + h)) : acl_f16_to_f32((uint16_t)(h0 + h));
        softplus_fill(j->c, x, j->f + h0, SP_FILL_GRAIN);
    }
}

/* Returns false (nothing written) when the table path does not apply or memory is short. */
static bool softplus_by_table(const softplus_ctx *c, const acl_view *vdy, const acl_view *vx,
                              const acl_view *vo)
{
    if (vo->numel < SP_TABLE_MIN || !acl_ewise_raw16_ok(vx)) return false;
    double *f = malloc(65536 * sizeof *f);
    if (!f) return false;
    bool bf = vx->dtype == ACL_BF16;
    softplus_fill_job fj = {c, f, bf};
    acl_parallel_for(65536 / SP_FILL_GRAIN, 1, softplus_fill_range, &fj);
    softplus_table_ctx t = {f};
#ifdef ACL_HAVE_AVX512_KERNELS
    if (acl_ewise_all16_ok(vdy, vx, vo) && acl_have_avx512())
        acl_ewise2_u16(vdy, vx, vo, bf ? softplus_table16_bf16 : softplus_table16_f16, &t);
    else
#endif
        acl_ewise2_f32_u16(vdy, vx, vo, softplus_table_block, &t);
    free(f);
    return true;
}

static aclnnStatus softplus_kernel(void *p, void *ws, uint64_t ws_size)
{
    (void)ws; (void)ws_size;
    softplus_args *a = p;
    const aclTensor *o = &a->gradInput;
    if (o->numel == 0) return ACLNN_SUCCESS;
    softplus_ctx c = {acl_scalar_to_f32(&a->beta), acl_scalar_to_f32(&a->threshold),
                      acl_scalar_to_f64(&a->beta), acl_scalar_to_f64(&a->threshold)};
    acl_view vdy, vx, vo;
    acl_view_init(&vo, o);
    acl_view_init(&vdy, &a->gradOutput);
    acl_view_init(&vx, &a->self);
    if (o->dtype == ACL_DOUBLE)
        acl_ewise2_f64(&vdy, &vx, &vo,
#ifdef ACL_HAVE_AVX512_KERNELS
                       acl_have_avx512() ? softplus_block_f64_avx512 :
#endif
                       softplus_block_f64, &c);
    else if (!softplus_by_table(&c, &vdy, &vx, &vo))
        acl_ewise2_f32(&vdy, &vx, &vo,
#ifdef ACL_HAVE_AVX512_KERNELS
                       acl_have_avx512() ? softplus_block_f32_avx512 :
#endif
                       softplus_block_f32, &c);
    return ACLNN_SUCCESS;
}

static bool softplus_self_dtype_ok(aclDataType dt)
{
    switch (dt) {
    case ACL_INT8: case ACL_INT16: case ACL_INT32: case ACL_INT64: case ACL_UINT8: case ACL_BOOL:
    case ACL_FLOAT16: case ACL_BF16: case ACL_FLOAT: case ACL_DOUBLE: return true;
    default: return false;
    }
}

static aclnnStatus softplus_validate(const aclTensor *dy, const aclTensor *x, const aclScalar *beta,
                                     const aclScalar *thr, const aclTensor *out)
{
    if (!dy || !x || !beta || !thr || !out) return ACLNN_ERR_PARAM_NULLPTR;
    /* dtypes (the scalars accept the same set as self) */
    if (!acl_dtype_is_float(dy->dtype) || !softplus_self_dtype_ok(x->dtype) ||
        out->dtype != acl_promote(dy->dtype, x->dtype) || !softplus_self_dtype_ok(beta->dtype) ||
        !softplus_self_dtype_ok(thr->dtype))
        return ACLNN_ERR_PARAM_INVALID;
    /* shapes and ranks: identical, no broadcasting */
    if (!acl_rank_ok(dy) || !acl_rank_ok(x) || !acl_rank_ok(out) || !acl_same_shape(dy, x) ||
        !acl_same_shape(dy, out))
        return ACLNN_ERR_PARAM_INVALID;
    if (!acl_format_ok(dy) || !acl_format_ok(x) || !acl_format_ok(out) || !acl_output_ok(out))
        return ACLNN_ERR_PARAM_INVALID;
#if ACLCONFORM_MUTANT == 26 /* status-code: a NULL data pointer reported as 161002 instead of 161001 */
    if (!acl_data_ok(dy) || !acl_data_ok(x) || !acl_data_ok(out)) return ACLNN_ERR_PARAM_INVALID;
#else
    if (!acl_data_ok(dy) || !acl_data_ok(x) || !acl_data_ok(out)) return ACLNN_ERR_PARAM_NULLPTR;
#endif
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnSoftplusBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *self,
    const aclScalar *beta, const aclScalar *threshold, aclTensor *gradInput,
    uint64_t *workspaceSize, aclOpExecutor **executor)
{
    if (!executor) return ACLNN_ERR_PARAM_NULLPTR;
    *executor = NULL;
    if (!workspaceSize) return ACLNN_ERR_PARAM_NULLPTR;
    aclnnStatus st = softplus_validate(gradOutput, self, beta, threshold, gradInput);
    if (st != ACLNN_SUCCESS) return st;
    softplus_args a;
    memset(&a, 0, sizeof a);
    a.gradOutput = *gradOutput;
    a.self = *self;
    a.gradInput = *gradInput;
    a.beta = *beta;
    a.threshold = *threshold;
    return acl_executor_create(softplus_kernel, &a, sizeof a, 0, workspaceSize, executor);
}

aclnnStatus aclnnSoftplusBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                  aclrtStream stream)
{
    (void)stream;
    return acl_executor_run(workspace, workspaceSize, executor);
}
