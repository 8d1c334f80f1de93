/* aclnnSoftplusBackward (ops.md §5):
 *   z = beta·self;  gradInput = z > threshold ? gradOutput : gradOutput · sigmoid(z)
 *
 * Compute precision P is f64 when any tensor is f64, else f32: self (integer and bool too),
 * beta and threshold are converted to P, z is rounded to P and compared in P (numerics §5).
 * A 16-bit gradInput is evaluated in f32 throughout (softplus16_value below: within 0.5008 ULP
 * of f16 after the rounding to 16 bits).  Otherwise the sigmoid branch is evaluated in double;
 * for an f32 gradInput the result is rounded once to f32 from a value accurate to a few double
 * ULP (f64: see softplus_sigmoid_times_f64):
 *   z ≥ 0:            dy / (1 + e^{-z})
 *   -700 < z < 0:     dy · e^{z} / (1 + e^{z})          (no overflow of e^{-z})
 *   z ≤ -700:         (dy · e^{z/2}) · e^{z/2}           (a huge dy times a tiny sigmoid keeps
 *                                                      its digits instead of a subnormal factor)
 * An infinite dy with finite z is an infinity (numerics §5a); z = -Inf gives dy·0 (NaN for an
 * infinite dy); NaN anywhere gives NaN (the comparison is false for NaN). */
#include <float.h>
#include <math.h>
#include <string.h>

#include "aclnnop/aclnn_softplus_backward.h"
#include "runtime/check.h"
#include "runtime/conv.h"
#include "runtime/ewise.h"
#include "runtime/simd256.h"
#include "runtime/simd512.h"
#include "runtime/vecmath.h"
#include "softplus_backward.h"

typedef struct {
    aclTensor gradOutput, self, gradInput;
    aclScalar beta, threshold;
} softplus_args;

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
/* softplus_block_f32 with AVX-512 doubles (issue 14: 17 vector operations per 8 elements, down
 * from 21): z = beta·self rounded to f32 decides the branch; the value is
 *   dy · sigmoid(z) = dy / (1 + E),  E = e^{-zd} by acl_expneg8_fast on zd clamped to [-708, 708]
 * with zd the exact product in double: one form for both signs of z (no |z|, no select between
 * dy·e and dy), one correctly rounded division, rounded once to f32.  E's relative error (< 2^-37)
 * reaches the quotient scaled by E/(1 + E) < 1, so the value is within 2^-36 relative before that
 * rounding (< 2^-12 ULP of f32).  The clamp is one VRANGEPD (the smaller magnitude, with zd's
 * sign); it maps NaN to ±708, so NaN lanes are redone by the scalar form together with the
 * z ≤ -700 lanes (the only ones the clamp changes on the negative side: E would overflow; for
 * z ≥ 708, E = e^{-708} leaves 1 + E = 1, the exact quotient's rounding).  32 elements per step as
 * four vectors of 8 doubles that go through each operation together (four dependency chains in
 * flight), the tail under masks: the same instructions for every element.  Four chains, not two
 * (round 18): the chain (exp, division) is long enough that two of them left the FMA pipes idle;
 * in L1, 1 thread, in one process alternating: 2.37 -> 2.17 cycles per element (six, 2.29). */
#define SPF_V 2 /* 16-lane f32 vectors per step (2·SPF_V vectors of 8 doubles) */
/* softplus_step_f32's lanes `low` by the scalar form, out of line and cold (as softplus_f64_slow) */
static __attribute__((noinline, cold)) void softplus_f32_low(const softplus_ctx *c, const float *dy, const float *x,
                                                             float *out, __mmask16 low)
{
    for (; low; low &= (__mmask16)(low - 1)) {
        int l = __builtin_ctz(low);
        out[l] = (float)softplus_sigmoid_times(dy[l], (double)c->beta32 * x[l]);
    }
}

ACL_AVX512_TARGET static inline __attribute__((always_inline)) void
softplus_step_f32(const softplus_ctx *c, const float *dy, const float *x, float *out, int64_t left)
{
    __mmask16 m[SPF_V], lin[SPF_V], low[SPF_V], any = 0;
    __m512 xf[SPF_V], dyf[SPF_V], z[SPF_V];
    __m512d zd[2 * SPF_V], r[2 * SPF_V], t[2 * SPF_V];
    for (int j = 0; j < SPF_V; j++) {
        m[j] = acl_mask16(left - 16 * j);
        xf[j] = acl_loadu16_ps(x + 16 * j, m[j]);
        dyf[j] = acl_loadu16_ps(dy + 16 * j, m[j]);
        z[j] = _mm512_mul_ps(_mm512_set1_ps(c->beta32), xf[j]);
#if ACLCONFORM_MUTANT == 22 /* branch-boundary: f32 path: threshold compare z >= threshold instead of z > threshold */
        lin[j] = _mm512_cmp_ps_mask(z[j], _mm512_set1_ps(c->thr32), _CMP_GE_OQ);
#else
        lin[j] = _mm512_cmp_ps_mask(z[j], _mm512_set1_ps(c->thr32), _CMP_GT_OQ);
#endif
        zd[2 * j] = _mm512_cvtps_pd(_mm512_castps512_ps256(xf[j]));
        zd[2 * j + 1] = _mm512_cvtps_pd(_mm512_extractf32x8_ps(xf[j], 1));
        r[2 * j] = _mm512_cvtps_pd(_mm512_castps512_ps256(dyf[j]));
        r[2 * j + 1] = _mm512_cvtps_pd(_mm512_extractf32x8_ps(dyf[j], 1));
    }
    for (int k = 0; k < 2 * SPF_V; k++)
        zd[k] = _mm512_range_pd(_mm512_mul_pd(_mm512_set1_pd((double)c->beta32), zd[k]), _mm512_set1_pd(708.0), 0x2);
    for (int k = 0; k < 2 * SPF_V; k++) zd[k] = acl_expneg8_fast(zd[k], &t[k]);
    for (int k = 0; k < 2 * SPF_V; k++) r[k] = _mm512_div_pd(r[k], _mm512_fmadd_pd(t[k], zd[k], _mm512_set1_pd(1.0)));
    for (int j = 0; j < SPF_V; j++) {
        __m512 o = _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(r[2 * j])), _mm512_cvtpd_ps(r[2 * j + 1]), 1);
        o = _mm512_mask_mov_ps(o, lin[j], dyf[j]);
        /* redone: not (z > -700), that is z ≤ -700 or NaN, outside the linear branch */
#if ACLCONFORM_MUTANT == 55 /* precision-branch: f32 path: NaN lanes not redone by the scalar form (the clamp made them ±708: a finite result) */
        low[j] = _mm512_mask_cmp_ps_mask((__mmask16)~lin[j] & m[j], z[j], _mm512_set1_ps(-700.0f), _CMP_LE_OQ);
#else
        low[j] = _mm512_mask_cmp_ps_mask((__mmask16)~lin[j] & m[j], z[j], _mm512_set1_ps(-700.0f), _CMP_NGT_UQ);
#endif
#if ACLCONFORM_MUTANT == 25 /* precision-branch: f32 path: the z <= -700 rescue pass skipped (Inf dy x underflowed sigmoid gives 0/NaN) */
        low[j] = 0;
#endif
        _mm512_mask_storeu_ps(out + 16 * j, m[j], o);
        any |= low[j];
    }
    if (__builtin_expect(any != 0, 0))
        for (int j = 0; j < SPF_V; j++)
            if (low[j]) softplus_f32_low(c, dy + 16 * j, x + 16 * j, out + 16 * j, low[j]);
}

ACL_AVX512_TARGET static void softplus_block_f32_avx512(const void *p, int64_t n, const float *dy,
                                                        const float *x, float *out)
{
    _Static_assert(16 * SPF_V == 32, "ACL_STEPS32_PF steps 32 elements");
    ACL_STEPS32_PF(acl_prefetch_pass_f32, softplus_step_f32, p, n, dy, x, out);
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
/* softplus_block_f64_avx512's lanes `slow` of the 8 at i (zh ≤ -700 or NaN) by the scalar form.
 * Out of line and cold: inlined, its libm calls (which may clobber every vector register) kept
 * the loop's constants out of registers, 0.3-0.9 cycles per element in L1 though no lane took it
 * (as gelu_none_far). */
__attribute__((noinline, cold)) void softplus_f64_slow(const softplus_ctx *c, int64_t i, const double *dy, const double *x,
                                                       double *out, __mmask8 slow)
{
    const bool beta_finite = isfinite(c->beta64);
    for (; slow; slow &= (__mmask8)(slow - 1)) {
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

/* softplus_block_f64 with AVX-512, 8 elements per vector (SPD_K vectors per pass): the same
 * operations in the same order (z, zh/zl, the threshold branch, softplus_sigmoid_times_f64's
 * zh > -700 branch), with E from acl_exp8_dd as E + El (< 0.18·2^-53 relative, simd512.h)
 * instead of glibc's exp (< 1.04·2^-53), El joining the Fast2Sum remainder:
 * s + t = 1 + (E + El)·(1 - zl).  The bound above then reads 0.18 ULP of the result's binade
 * before the final rounding, ≤ 0.68 ULP + 2^-50 in all (≤ 2).
 * Lanes with zh ≤ -700 or NaN take the scalar forms; lanes whose q is not finite or 0, or s not
 * finite, give dy / s as the scalar form does.  The rare cases (a non-finite z, an odd q) are
 * tested by one fpclass each and handled under a branch (issue 14: 1.46x faster in cache, the
 * same bits on 500,000 mixed inputs with specials and eight betas). */
/* SPD_K vectors per pass, stage by stage (the rare branches once per pass, for every vector
 * at once): the chain (exp, division, correction) is long, and vectors in program order keep
 * the FMA pipes busy where one after the other did not.  Round 18, L1, 1 thread, one process
 * alternating: 5.17 cycles per element one vector at a time, 4.88 two, 4.63 three, 4.42 four,
 * 4.34-4.38 five, 4.36-4.77 six.  The same operations per element, so the same bits. */
#define SPD_K 4
ACL_AVX512_TARGET static inline __attribute__((always_inline)) void
softplus_steps_f64(const softplus_ctx *c, const double *dy, const double *x, double *out, int64_t left)
{
    const __m512d beta = _mm512_set1_pd(c->beta64), thr = _mm512_set1_pd(c->thr64);
    const __m512d one = _mm512_set1_pd(1.0), zero = _mm512_setzero_pd();
    const __m512d inf = _mm512_set1_pd(INFINITY), dmax = _mm512_set1_pd(DBL_MAX);
    const __m512d m700 = _mm512_set1_pd(-700.0), sign = _mm512_set1_pd(-0.0);
    const bool beta_finite = isfinite(c->beta64);
    __mmask8 m[SPD_K], lin[SPD_K], nonfin[SPD_K], fast[SPD_K], odd[SPD_K], slow[SPD_K], anyfin = 0, anyodd = 0, anyslow = 0;
    __m512d xv[SPD_K], g[SPD_K], z[SPD_K], zh[SPD_K], zl[SPD_K], E[SPD_K], El[SPD_K], sm[SPD_K], q[SPD_K], res[SPD_K];
    for (int k = 0; k < SPD_K; k++) {
        m[k] = acl_mask8(left - 8 * k);
        xv[k] = acl_loadu8_pd(x + 8 * k, m[k]);
        g[k] = acl_loadu8_pd(dy + 8 * k, m[k]);
        z[k] = _mm512_mul_pd(beta, xv[k]);
#if ACLCONFORM_MUTANT == 23 /* branch-boundary: f64 path: threshold compare z >= threshold instead of z > threshold */
        lin[k] = _mm512_cmp_pd_mask(z[k], thr, _CMP_GE_OQ);
#else
        lin[k] = _mm512_cmp_pd_mask(z[k], thr, _CMP_GT_OQ);
#endif
#if ACLCONFORM_MUTANT == 27 /* f64-precision: f64 path drops the low part zl of beta*self (the pre-issue-12 rounding) */
        zh[k] = z[k], zl[k] = _mm512_mul_pd(zero, _mm512_fmsub_pd(beta, xv[k], z[k]));
#else
        zh[k] = z[k], zl[k] = _mm512_fmsub_pd(beta, xv[k], z[k]);
#endif
        /* rare: z NaN or ±Inf (fpclass QNaN, +Inf, -Inf, SNaN); then zl = 0, and an overflowed
         * product of finite operands is zh = ±DBL_MAX */
        nonfin[k] = _mm512_fpclass_pd_mask(z[k], 0x99);
        anyfin |= nonfin[k];
    }
    if (__builtin_expect(anyfin != 0, 0))
        for (int k = 0; k < SPD_K; k++) {
            __mmask8 ovf = beta_finite ? _mm512_mask_cmp_pd_mask(nonfin[k], _mm512_abs_pd(z[k]), inf, _CMP_EQ_OQ) &
                                             _mm512_cmp_pd_mask(_mm512_abs_pd(xv[k]), inf, _CMP_LT_OQ)
                                       : 0;
            zh[k] = _mm512_mask_mov_pd(z[k], ovf, _mm512_or_pd(_mm512_and_pd(z[k], sign), dmax));
            zl[k] = _mm512_mask_mov_pd(zl[k], nonfin[k], zero);
        }
    for (int k = 0; k < SPD_K; k++) {
        fast[k] = _mm512_cmp_pd_mask(zh[k], m700, _CMP_GT_OQ) & (__mmask8)~lin[k] & m[k];
        E[k] = acl_exp8_dd(_mm512_sub_pd(zero, zh[k]), &El[k]);
    }
    for (int k = 0; k < SPD_K; k++) {
        sm[k] = _mm512_add_pd(one, E[k]);
        /* Fast2Sum's larger and smaller operand (E is not NaN in the fast lanes) */
        __m512d big = _mm512_max_pd(E[k], one), small = _mm512_min_pd(E[k], one);
        __m512d t = _mm512_sub_pd(_mm512_add_pd(_mm512_add_pd(_mm512_sub_pd(big, sm[k]), small), El[k]),
                                  _mm512_mul_pd(E[k], zl[k]));
        __m512d inv = _mm512_div_pd(one, sm[k]);
        q[k] = _mm512_mul_pd(g[k], inv);
        __m512d r = _mm512_fnmadd_pd(q[k], sm[k], g[k]);
        res[k] = _mm512_add_pd(q[k], _mm512_mul_pd(_mm512_sub_pd(r, _mm512_mul_pd(q[k], t)), inv));
        /* rare: !isfinite(q) || q == 0 (fpclass NaN, ±Inf, ±0) gives dy / s (s is finite in the
         * fast lanes; the others are redone below) */
        odd[k] = _mm512_mask_fpclass_pd_mask(fast[k], q[k], 0x9f);
        anyodd |= odd[k];
    }
    if (__builtin_expect(anyodd != 0, 0))
        for (int k = 0; k < SPD_K; k++) res[k] = _mm512_mask_div_pd(res[k], odd[k], g[k], sm[k]);
    for (int k = 0; k < SPD_K; k++) {
        res[k] = _mm512_mask_mov_pd(res[k], lin[k], g[k]);
        _mm512_mask_storeu_pd(out + 8 * k, m[k], res[k]);
        slow[k] = (__mmask8)(~fast[k] & ~lin[k] & m[k]);
        anyslow |= slow[k];
    }
    if (__builtin_expect(anyslow != 0, 0))
        for (int k = 0; k < SPD_K; k++)
            if (slow[k]) softplus_f64_slow(c, 8 * k, dy, x, out, slow[k]);
}

ACL_AVX512_TARGET static void softplus_block_f64_avx512(const void *p, int64_t n, const double *dy,
                                                        const double *x, double *out)
{
    ACL_STEPS_LEFT(8 * SPD_K, softplus_steps_f64, (const softplus_ctx *)p, n, dy, x, out);
}
#endif

/* 16-bit gradInput (f16 or bf16; then gradOutput and self are 16-bit or integer, all exact in
 * f32): the whole evaluation in f32, 16 lanes per AVX-512 vector, one correctly rounded division
 * per element (issue 14: the former 65536-entry table of double factors was bound by its table
 * loads at 52–57 % of the triad).  With u = -|z|:
 *   z > threshold      dy
 *   u ≥ -86            dy / (1 + E),  E = e^{-z}               (|z| ≤ 86: both signs, one form)
 *   u < -86            (z < 0 ? dy·e : dy) / (1 + e),  e = e^u  (scalar form only)
 * Evaluation (every step an IEEE f32 operation, so the scalar form softplus16_value and the
 * vector form give the same bits; results do not depend on the path, the block or the thread):
 *   z = beta·self rounded (decides the branch), zl = fma(beta, self, -z) exact;
 *   the exponent w with its low part wl, w + wl exact:  u ≥ -86: w = -z, wl = -zl (the vector
 *   form's fma(-beta, self, z), the same bits);  u < -86: w = u, wl = zl with the sign that makes
 *   u + wl = -|beta·self|
 *   t = fma(w, log2 e, 1.5·2^23), n = t - 1.5·2^23 = rint(w·log2 e)
 *   r = fma(-n, ln2lo, fma(-n, ln2hi, w)) + wl   (the inner fma is exact: w and n·ln2hi are
 *                                                multiples of ulp(r) or finer and |r| < 0.36)
 *   p = P(r), P = 1 + r + C2 r² + .. + C5 r⁵, C2..C5 a relative minimax fit to e^r on
 *   [-0.347, 0.347] rounded to f32 (scripts/fit_softplus16.py: |P/e^r - 1| < 2^-23.17, its f32
 *   Horner evaluation < 2^-22.55 measured; P(0) = 1 exactly).  Round 12: degree 5 instead of 6
 *   (-4..6 % time), the bound below moves from 0.5 + 2^-10.3 to 0.5 + 2^-10.1 ULP of f16.
 *   u ≥ -86:  E = p·2^n (normal, |n| ≤ 124: the vector form adds n to p's exponent field),
 *             dy / (1 + E)
 *   u < -86:  (e^u < 2^-124; scalar form only: the vector form hands these lanes over)
 *             |z| > 190 (also ±Inf) first clamps u to -190 and wl to 0; h = p/2,
 *             e = scalef(h, n + 1), num = z < 0 ? scalef(dy·h, n + 1) : dy (halving h keeps
 *             dy·h finite for dy up to the bf16 maximum; scalef rounds once, also into
 *             subnormals), num / (1 + e)
 * Round 21: |z| ≤ 86 in the one form on e^{-z}, which rounds the same quotient once less than
 * (z < 0 ? dy·e : dy)/(1 + e) and needs no sign compare, masked product or sign fix of the low
 * part: L1, 1 thread, f16 1.374 -> 1.252 cycles per element, bf16 1.347 -> 1.280; every f16 and
 * bf16 x with 97 gradients each (beta 1, threshold 20) against a long double evaluation: max
 * 0.500230 -> 0.500231 ULP of f16 (132 of 4.9 M results change), 0.500012 -> 0.500018 of bf16
 * (13 of 4.8 M).
 * Error: r is within 2^-24.5 absolute of w + wl - n·ln2 (two roundings of |r| < 0.36), P adds
 * 2^-23.17 and Horner ≤ 2 ULP, so E (e) is within 2^-21.8 relative of e^{-beta·self} (e^u) while
 * normal; its weight in the result is ≤ 1 (d ln(result)/d ln(E) is -E/(1+E); for e, 1/(1+e) or
 * e/(1+e)), and 1 + E and the quotient add one rounding each (u < -86: dy·e or dy·h, 1 + e and the
 * quotient): the f32 result is within 2^-21.4 relative (2^-21.1), and after the rounding to 16
 * bits within 0.5 + 2^-10.1 ULP of f16 (≤ 0.5009), 0.5 + 2^-13.1 of bf16, while the 16-bit result
 * is normal (a subnormal result has a coarser ULP: less).  A rounded z instead of the exact product
 * would have cost |z|·2^-24 relative (0.003 ULP of bf16 at z = -182).
 * Clamp: for z ≤ -190 every finite dy gives |dy|·e^z < 2^128·2^-274, below half the smallest
 * bf16 subnormal, and the clamped value (≤ 2^-145) rounds to the same ±0; an infinite dy gives
 * ±Inf (§5a) unless z = -Inf comes from an infinite operand (Inf·0 = NaN).  z ≥ 190 gives e = 0
 * and dy exactly.  NaN in z or dy propagates.  The vector form hands over to the scalar form
 * every lane outside the linear branch with u < -86 or u NaN. */
#define SP16_TINY (-86.0f)
#define SP16_CLAMP (-190.0f)
#define SP16_MAGIC 0x1.8p23f
#define SP16_LOG2E 0x1.715476p+0f
#define SP16_LN2HI 0x1.62e430p-1f
#define SP16_LN2LO (-0x1.05c610p-29f)
/* P: 1, 1 exactly, then C2..C5 (scripts/fit_softplus16.py prints them) */
#define SP16_C2 0x1.fffdfap-2f
#define SP16_C3 0x1.5557b2p-3f
#define SP16_C4 0x1.572b1p-5f
#define SP16_C5 0x1.106206p-7f

/* dy·sigmoid(beta·self) for a 16-bit gradInput, scalar form (portable kernel, handed-over lanes). */
static float softplus16_value(const softplus_ctx *c, float g, float x)
{
    float z = c->beta32 * x;
#if ACLCONFORM_MUTANT == 24 /* branch-boundary: 16-bit path: z >= threshold instead of z > threshold */
    if (z >= c->thr32) return g;
#else
    if (z > c->thr32) return g;
#endif
    if (z != z) return z;
    if (z == -INFINITY && (isinf(x) || isinf(c->beta32))) return g * 0.0f; /* sigmoid(-Inf) = 0 */
    float zl = fmaf(c->beta32, x, -z);
    float u = -fabsf(z), w, wl;
    if (u >= SP16_TINY) w = -z, wl = -zl;
    else w = u, wl = signbit(z) ? zl : -zl;
#if ACLCONFORM_MUTANT == 53 /* precision-branch: 16-bit path: |z| > 190 clamps u but keeps the low part ul (huge for a huge z: NaN or garbage) */
    if (w < SP16_CLAMP) w = SP16_CLAMP;
#else
    if (w < SP16_CLAMP) w = SP16_CLAMP, wl = 0.0f;
#endif
    float n = fmaf(w, SP16_LOG2E, SP16_MAGIC) - SP16_MAGIC;
    float r = fmaf(-n, SP16_LN2LO, fmaf(-n, SP16_LN2HI, w)) + wl;
    float p = fmaf(fmaf(fmaf(fmaf(fmaf(SP16_C5, r, SP16_C4), r, SP16_C3), r, SP16_C2), r, 1.0f), r, 1.0f);
    float e, num = g;
    if (u >= SP16_TINY) {
        e = ldexpf(p, (int)n);
    } else {
        float h = p * 0.5f;
        e = ldexpf(h, (int)n + 1);
        if (z < 0.0f) num = ldexpf(g * h, (int)n + 1);
    }
    return num / (1.0f + e);
}

/* softplus16_value on f16 (bf = false) or bf16 dy and self, rounded to the dtype: the lanes the
 * all-16-bit vector kernels hand over */
static inline uint16_t softplus16_value16(const softplus_ctx *c, uint16_t dy, uint16_t x, bool bf)
{
    return bf ? acl_f32_to_bf16(softplus16_value(c, acl_bf16_to_f32(dy), acl_bf16_to_f32(x)))
              : acl_f32_to_f16(softplus16_value(c, acl_f16_to_f32(dy), acl_f16_to_f32(x)));
}

static void softplus16_block(const void *p, int64_t n, const float *dy, const float *x, float *out)
{
    for (int64_t i = 0; i < n; i++) out[i] = softplus16_value(p, dy[i], x[i]);
}

#ifdef ACL_HAVE_AVX512_KERNELS
/* softplus16_value's u ≥ -86 branch on SP16_K vectors of 16 lanes: the same operations in the
 * same order (ldexpf is the exponent-field add, exact for these normal results).  The K vectors
 * go through each operation together (the loops over k unroll into interleaved instructions, two
 * independent dependency chains in flight).  res gets the results, redo the lanes handed over to
 * the scalar form (outside the linear branch: u < -86 or NaN). */
#define SP16_K 2
#define SP16_EACH _Pragma("GCC unroll 4") for (int k = 0; k < SP16_K; k++)
ACL_AVX512_TARGET static inline __attribute__((always_inline)) void
softplus16_vec(const softplus_ctx *c, const __m512 *g, const __m512 *x, __m512 *res, __mmask16 *redo)
{
    const __m512 beta = _mm512_set1_ps(c->beta32), sign = _mm512_set1_ps(-0.0f);
    __m512 z[SP16_K], u[SP16_K], wl[SP16_K], t[SP16_K], n[SP16_K], r[SP16_K], p[SP16_K];
    __mmask16 lin[SP16_K];
    SP16_EACH z[k] = _mm512_mul_ps(beta, x[k]);
#if ACLCONFORM_MUTANT == 24 /* branch-boundary: 16-bit path: z >= threshold instead of z > threshold */
    SP16_EACH lin[k] = _mm512_cmp_ps_mask(z[k], _mm512_set1_ps(c->thr32), _CMP_GE_OQ);
#else
    SP16_EACH lin[k] = _mm512_cmp_ps_mask(z[k], _mm512_set1_ps(c->thr32), _CMP_GT_OQ);
#endif
    SP16_EACH u[k] = _mm512_or_ps(z[k], sign);
    SP16_EACH wl[k] = _mm512_fnmadd_ps(beta, x[k], z[k]); /* -zl */
    /* handed over: not (u ≥ -86), also NaN (an infinite dy needs nothing: e > 0 keeps it infinite) */
#if ACLCONFORM_MUTANT == 54 /* precision-branch: 16-bit path: lanes down to u = -126 kept in the vector form (e = p*2^n by the exponent add leaves the normal range) */
    SP16_EACH redo[k] = _mm512_mask_cmp_ps_mask((__mmask16)~lin[k], u[k], _mm512_set1_ps(-126.0f), _CMP_NGE_UQ);
#else
    SP16_EACH redo[k] = _mm512_mask_cmp_ps_mask((__mmask16)~lin[k], u[k], _mm512_set1_ps(SP16_TINY), _CMP_NGE_UQ);
#endif
    /* w = -z: its negation folded into the constant and into r's FMA (-(n·ln2hi) - z) */
    SP16_EACH t[k] = _mm512_fmadd_ps(z[k], _mm512_set1_ps(-SP16_LOG2E), _mm512_set1_ps(SP16_MAGIC));
    SP16_EACH n[k] = _mm512_sub_ps(t[k], _mm512_set1_ps(SP16_MAGIC));
    SP16_EACH r[k] = _mm512_fnmsub_ps(n[k], _mm512_set1_ps(SP16_LN2HI), z[k]);
    SP16_EACH r[k] = _mm512_fnmadd_ps(n[k], _mm512_set1_ps(SP16_LN2LO), r[k]);
    SP16_EACH r[k] = _mm512_add_ps(r[k], wl[k]);
    SP16_EACH p[k] = _mm512_fmadd_ps(_mm512_set1_ps(SP16_C5), r[k], _mm512_set1_ps(SP16_C4));
    SP16_EACH p[k] = _mm512_fmadd_ps(p[k], r[k], _mm512_set1_ps(SP16_C3));
    SP16_EACH p[k] = _mm512_fmadd_ps(p[k], r[k], _mm512_set1_ps(SP16_C2));
    SP16_EACH p[k] = _mm512_fmadd_ps(p[k], r[k], _mm512_set1_ps(1.0f));
    SP16_EACH p[k] = _mm512_fmadd_ps(p[k], r[k], _mm512_set1_ps(1.0f));
    /* e = p·2^n: t's low mantissa bits hold n + 2^22, so t << 23 is n << 23 (mod 2^32) */
    SP16_EACH p[k] = _mm512_castsi512_ps(_mm512_add_epi32(_mm512_castps_si512(p[k]),
                                                         _mm512_slli_epi32(_mm512_castps_si512(t[k]), 23)));
    SP16_EACH res[k] = _mm512_div_ps(g[k], _mm512_add_ps(_mm512_set1_ps(1.0f), p[k]));
    SP16_EACH res[k] = _mm512_mask_mov_ps(res[k], lin[k], g[k]);
}

/* f32 arrays (the staged path: mixed-dtype views, or views run in tiles) */
ACL_AVX512_TARGET static void softplus16_block_avx512(const void *p, int64_t n, const float *dy,
                                                      const float *x, float *out)
{
    for (int64_t i = 0; i < n; i += 16 * SP16_K) {
        __mmask16 m[SP16_K], redo[SP16_K];
        __m512 g[SP16_K], xv[SP16_K], res[SP16_K];
        SP16_EACH {
            m[k] = acl_mask16(n - i - 16 * k);
            g[k] = _mm512_maskz_loadu_ps(m[k], dy + i + 16 * k);
            xv[k] = _mm512_maskz_loadu_ps(m[k], x + i + 16 * k);
        }
        softplus16_vec(p, g, xv, res, redo);
        SP16_EACH {
            _mm512_mask_storeu_ps(out + i + 16 * k, m[k], res[k]);
            for (redo[k] &= m[k]; redo[k]; redo[k] &= (__mmask16)(redo[k] - 1)) {
                int64_t j = i + 16 * k + __builtin_ctz(redo[k]);
                out[j] = softplus16_value(p, dy[j], x[j]);
            }
        }
    }
}

/* f16 dy, self and gradInput, contiguous: converted in registers; the rounding to f16 is
 * acl_store16_16's, the bits of the staged path's conversion.  Whole steps of 16·SP16_K elements
 * under constant masks, the tail under its masks. */
ACL_AVX512_TARGET static inline __attribute__((always_inline)) void
softplus16_step_f16(const softplus_ctx *c, const uint16_t *dy, const uint16_t *x, uint16_t *out, int64_t left)
{
    __mmask16 m[SP16_K], redo[SP16_K], any = 0;
    __m512 g[SP16_K], xv[SP16_K], res[SP16_K];
    SP16_EACH {
        m[k] = acl_mask16(left - 16 * k);
        g[k] = acl_load16_16(dy + 16 * k, m[k], false);
        xv[k] = acl_load16_16(x + 16 * k, m[k], false);
    }
    softplus16_vec(c, g, xv, res, redo);
    SP16_EACH {
        acl_store16_16(out + 16 * k, m[k], res[k], false);
        any |= redo[k] &= m[k];
    }
    if (__builtin_expect(any != 0, 0))
        SP16_EACH for (; redo[k]; redo[k] &= (__mmask16)(redo[k] - 1)) {
            int j = 16 * k + __builtin_ctz(redo[k]);
            out[j] = softplus16_value16(c, dy[j], x[j], false);
        }
}

ACL_AVX512_TARGET static void softplus16_f16(const void *p, int64_t n, const uint16_t *dy,
                                             const uint16_t *x, uint16_t *out)
{
    ACL_STEPS_LEFT(16 * SP16_K, softplus16_step_f16, p, n, dy, x, out);
}

/* bf16 in pairs (acl_bf16_widen_pairs / acl_bf16_pack_pairs): the two vectors of a step hold
 * elements 0, 2, .., 30 and 1, 3, .., 31 (the math is per lane: the same bits as any order); two
 * instructions fewer per 16 elements to load and one to store than acl_load16_16's widening. */
_Static_assert(SP16_K == 2, "the bf16 kernel's two vectors are the even and the odd elements");
ACL_AVX512_TARGET static inline __attribute__((always_inline)) void
softplus16_step_bf16(const softplus_ctx *c, const uint16_t *dy, const uint16_t *x, uint16_t *out, int64_t left)
{
    __mmask32 m = left >= 32 ? 0xffffffffu : (__mmask32)((1u << left) - 1u);
    __m512 g[2], xv[2], res[2];
    __mmask16 redo[2];
    acl_bf16_widen_pairs(m == 0xffffffffu ? _mm512_loadu_si512(dy) : _mm512_maskz_loadu_epi16(m, dy), &g[0], &g[1]);
    acl_bf16_widen_pairs(m == 0xffffffffu ? _mm512_loadu_si512(x) : _mm512_maskz_loadu_epi16(m, x), &xv[0], &xv[1]);
    softplus16_vec(c, g, xv, res, redo);
    __m512i o = acl_bf16_pack_pairs(res[0], res[1]);
    if (m == 0xffffffffu) _mm512_storeu_si512(out, o);
    else _mm512_mask_storeu_epi16(out, m, o);
    if (__builtin_expect((redo[0] | redo[1]) != 0, 0))
        for (int k = 0; k < 2; k++)
            for (__mmask16 r = redo[k]; r; r &= (__mmask16)(r - 1)) {
                int j = 2 * __builtin_ctz(r) + k;
                if (j < left) out[j] = softplus16_value16(c, dy[j], x[j], true);
            }
}

ACL_AVX512_TARGET static void softplus16_bf16(const void *p, int64_t n, const uint16_t *dy,
                                              const uint16_t *x, uint16_t *out)
{
    ACL_STEPS_LEFT(32, softplus16_step_bf16, p, n, dy, x, out);
}
#endif

#ifdef ACL_HAVE_AVX2_KERNELS
/* ---- AVX2 + FMA + F16C twins of the AVX-512 kernels above (issue 14, round 28: CPUs without
 * AVX-512, such as Zen 3, ran the portable loops: 16-bit 0.05-0.1x PyTorch).  Each twin performs
 * its AVX-512 kernel's IEEE operations in the same order on 8 f32 / 4 double lanes, so it gives
 * the same bits (tests compare the paths with acl_simd_set_cap); the AVX-512 instructions without
 * an AVX2 counterpart are replaced by exact equivalents, named where they occur.  Masks are
 * vectors (all-ones lanes) and the lanes handed to the scalar forms a bit mask from MOVMSK. */

#define SP16A_K 2
#define SP16A_EACH _Pragma("GCC unroll 4") for (int k = 0; k < SP16A_K; k++)
/* softplus16_vec's operations up to the divisor, on SP16A_K vectors of 8 lanes, in the same order
 * (the exponent-field add for ldexpf): den gets 1 + E (softplus16_value's u ≥ -86 branch), lin
 * the linear-branch lanes, redo the lanes handed over to softplus16_value (outside the linear
 * branch with u < -86 or NaN) */
ACL_AVX2_TARGET static inline __attribute__((always_inline)) void
softplus16_den_avx2(const softplus_ctx *c, const __m256 *x, __m256 *den, __m256 *lin, __m256 *redo)
{
    const __m256 beta = _mm256_set1_ps(c->beta32), sign = _mm256_set1_ps(-0.0f);
    __m256 z[SP16A_K], u[SP16A_K], wl[SP16A_K], t[SP16A_K], n[SP16A_K], r[SP16A_K], p[SP16A_K];
    SP16A_EACH z[k] = _mm256_mul_ps(beta, x[k]);
#if ACLCONFORM_MUTANT == 24 /* branch-boundary: 16-bit path: z >= threshold instead of z > threshold */
    SP16A_EACH lin[k] = _mm256_cmp_ps(z[k], _mm256_set1_ps(c->thr32), _CMP_GE_OQ);
#else
    SP16A_EACH lin[k] = _mm256_cmp_ps(z[k], _mm256_set1_ps(c->thr32), _CMP_GT_OQ);
#endif
    SP16A_EACH u[k] = _mm256_or_ps(z[k], sign);
    SP16A_EACH wl[k] = _mm256_fnmadd_ps(beta, x[k], z[k]); /* -zl */
#if ACLCONFORM_MUTANT == 54 /* precision-branch: 16-bit path: lanes down to u = -126 kept in the vector form (e = p*2^n by the exponent add leaves the normal range) */
    SP16A_EACH redo[k] = _mm256_andnot_ps(lin[k], _mm256_cmp_ps(u[k], _mm256_set1_ps(-126.0f), _CMP_NGE_UQ));
#else
    SP16A_EACH redo[k] = _mm256_andnot_ps(lin[k], _mm256_cmp_ps(u[k], _mm256_set1_ps(SP16_TINY), _CMP_NGE_UQ));
#endif
    SP16A_EACH t[k] = _mm256_fmadd_ps(z[k], _mm256_set1_ps(-SP16_LOG2E), _mm256_set1_ps(SP16_MAGIC));
    SP16A_EACH n[k] = _mm256_sub_ps(t[k], _mm256_set1_ps(SP16_MAGIC));
    SP16A_EACH r[k] = _mm256_fnmsub_ps(n[k], _mm256_set1_ps(SP16_LN2HI), z[k]);
    SP16A_EACH r[k] = _mm256_fnmadd_ps(n[k], _mm256_set1_ps(SP16_LN2LO), r[k]);
    SP16A_EACH r[k] = _mm256_add_ps(r[k], wl[k]);
    SP16A_EACH p[k] = _mm256_fmadd_ps(_mm256_set1_ps(SP16_C5), r[k], _mm256_set1_ps(SP16_C4));
    SP16A_EACH p[k] = _mm256_fmadd_ps(p[k], r[k], _mm256_set1_ps(SP16_C3));
    SP16A_EACH p[k] = _mm256_fmadd_ps(p[k], r[k], _mm256_set1_ps(SP16_C2));
    SP16A_EACH p[k] = _mm256_fmadd_ps(p[k], r[k], _mm256_set1_ps(1.0f));
    SP16A_EACH p[k] = _mm256_fmadd_ps(p[k], r[k], _mm256_set1_ps(1.0f));
    /* e = p·2^n: t's low mantissa bits hold n + 2^22, so t << 23 is n << 23 (mod 2^32) */
    SP16A_EACH p[k] = _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(p[k]),
                                                           _mm256_slli_epi32(_mm256_castps_si256(t[k]), 23)));
    SP16A_EACH den[k] = _mm256_add_ps(_mm256_set1_ps(1.0f), p[k]);
}

/* softplus16_vec on SP16A_K vectors of 8 lanes; redo[k] gets the bits of the handed-over lanes,
 * not yet limited to the tail. */
ACL_AVX2_TARGET static inline __attribute__((always_inline)) void
softplus16_vec_avx2(const softplus_ctx *c, const __m256 *g, const __m256 *x, __m256 *res, unsigned *redo)
{
    __m256 den[SP16A_K], lin[SP16A_K], hand[SP16A_K];
    softplus16_den_avx2(c, x, den, lin, hand);
    SP16A_EACH redo[k] = (unsigned)_mm256_movemask_ps(hand[k]);
    SP16A_EACH res[k] = _mm256_div_ps(g[k], den[k]);
    SP16A_EACH res[k] = _mm256_blendv_ps(res[k], g[k], lin[k]);
}

/* the lanes redo (bits) of an all-16-bit step by the scalar form, lane l at element st·l (1: a
 * plain 8-lane vector, 2: a half of the even / odd split); cold, out of the loops */
ACL_AVX2_TARGET static __attribute__((noinline, cold)) void
softplus16_redo(const softplus_ctx *c, const uint16_t *dy, const uint16_t *x, uint16_t *out, int st, unsigned redo,
                bool bf)
{
    for (; redo; redo &= redo - 1) {
        int j = st * __builtin_ctz(redo);
        out[j] = softplus16_value16(c, dy[j], x[j], bf);
    }
}

/* f32 arrays (acl_ewise2_f32: the driver widens and rounds the 16-bit values) */
ACL_AVX2_TARGET static inline __attribute__((always_inline)) void
softplus16_step_f32_avx2(const softplus_ctx *c, const float *dy, const float *x, float *out, int64_t left)
{
    __m256 g[SP16A_K], xv[SP16A_K], res[SP16A_K];
    unsigned redo[SP16A_K], any = 0;
    SP16A_EACH {
        g[k] = acl_load8_ps_left(dy + 8 * k, left - 8 * k);
        xv[k] = acl_load8_ps_left(x + 8 * k, left - 8 * k);
    }
    softplus16_vec_avx2(c, g, xv, res, redo);
    SP16A_EACH {
        acl_store8_ps_left(out + 8 * k, left - 8 * k, res[k]);
        any |= redo[k] &= acl_lanes(left - 8 * k, 8);
    }
    if (__builtin_expect(any != 0, 0))
        SP16A_EACH for (; redo[k]; redo[k] &= redo[k] - 1) {
            int j = 8 * k + __builtin_ctz(redo[k]);
            out[j] = softplus16_value(c, dy[j], x[j]);
        }
}

ACL_AVX2_TARGET static void softplus16_block_avx2(const void *p, int64_t n, const float *dy, const float *x,
                                                  float *out)
{
    ACL_STEPS_LEFT(8 * SP16A_K, softplus16_step_f32_avx2, (const softplus_ctx *)p, n, dy, x, out);
}

/* f16 dy, self and gradInput, contiguous (acl_ewise2_u16): converted in registers by F16C, the
 * bits of the staged path's conversions; the handed-over lanes by softplus16_value on the
 * widened values, rounded by acl_f32_to_f16 (VCVTPS2PH's rounding). */
ACL_AVX2_TARGET static inline __attribute__((always_inline)) void
softplus16_step_f16_avx2(const softplus_ctx *c, const uint16_t *dy, const uint16_t *x, uint16_t *out, int64_t left)
{
    __m256 g[SP16A_K], xv[SP16A_K], res[SP16A_K];
    unsigned redo[SP16A_K], any = 0;
    SP16A_EACH {
        g[k] = acl_load8_16_left(dy + 8 * k, left - 8 * k, false);
        xv[k] = acl_load8_16_left(x + 8 * k, left - 8 * k, false);
    }
    softplus16_vec_avx2(c, g, xv, res, redo);
    SP16A_EACH {
        acl_store8_16_left(out + 8 * k, left - 8 * k, res[k], false);
        any |= redo[k] &= acl_lanes(left - 8 * k, 8);
    }
    if (__builtin_expect(any != 0, 0))
        SP16A_EACH if (redo[k]) softplus16_redo(c, dy + 8 * k, x + 8 * k, out + 8 * k, 1, redo[k], false);
}

ACL_AVX2_TARGET static void softplus16_f16_avx2(const void *p, int64_t n, const uint16_t *dy, const uint16_t *x,
                                                uint16_t *out)
{
    ACL_STEPS_LEFT(8 * SP16A_K, softplus16_step_f16_avx2, (const softplus_ctx *)p, n, dy, x, out);
}

/* bf16 in pairs, as softplus16_step_bf16: one 32-byte load of 16 values gives the even-indexed
 * ones by a shift and the odd ones by a mask (acl_load16_bf16_eo); the results' bf16 bits (the
 * bits of acl_cvt_f32_to_bf16) are interleaved back by a word blend (acl_pack16_bf16_eo, the
 * rounding alone when no lane is NaN: round 30). */
_Static_assert(SP16A_K == 2, "the AVX2 bf16 kernel's two vectors are the even and the odd elements");
ACL_AVX2_TARGET static inline __attribute__((always_inline)) void
softplus16_step_bf16_avx2(const softplus_ctx *c, const uint16_t *dy, const uint16_t *x, uint16_t *out, int64_t left)
{
    uint16_t tg[16] = {0}, tx[16] = {0}; /* the tail, zero-padded */
    if (left < 16) {
        memcpy(tg, dy, (size_t)left * sizeof *dy);
        memcpy(tx, x, (size_t)left * sizeof *x);
    }
    __m256 g[2], xv[2], res[2];
    acl_load16_bf16_eo(left >= 16 ? dy : tg, &g[0], &g[1]);
    acl_load16_bf16_eo(left >= 16 ? x : tx, &xv[0], &xv[1]);
    unsigned redo[2];
    softplus16_vec_avx2(c, g, xv, res, redo);
    __m256i o = acl_pack16_bf16_eo(res[0], res[1], false);
    if (left >= 16) {
        _mm256_storeu_si256((__m256i *)(void *)out, o);
    } else {
        uint16_t to[16];
        _mm256_storeu_si256((__m256i *)(void *)to, o);
        memcpy(out, to, (size_t)left * sizeof *out);
    }
    if (__builtin_expect((redo[0] | redo[1]) != 0, 0))
        for (int k = 0; k < 2; k++) {
            unsigned r = redo[k] & acl_lanes((left - k + 1) / 2, 8); /* elements 2l + k < left */
            if (r) softplus16_redo(c, dy + k, x + k, out + k, 2, r, true);
        }
}

ACL_AVX2_TARGET static void softplus16_bf16_avx2(const void *p, int64_t n, const uint16_t *dy, const uint16_t *x,
                                                 uint16_t *out)
{
    ACL_STEPS_LEFT(16, softplus16_step_bf16_avx2, (const softplus_ctx *)p, n, dy, x, out);
}


/* The 16-bit table kernels (round 29, AVX2 only): for a call of at least SP16_LUT_MIN elements,
 * all 16-bit and contiguous, the divisor of every one of the 65536 self patterns is tabulated
 * first by softplus16_den_avx2, the direct kernel's operations, so the same f32 value: 1 + E, 1 in
 * the linear branch, NaN for the lanes handed over to softplus16_value.  Each element is then
 * dy / T[self], the direct kernel's division of the same operands (in the linear branch dy / 1,
 * which is dy: a NaN dy is quiet by then, F16C's widening or the bf16 rounding quiets it either
 * way), and softplus16_value where T is NaN: the direct kernel's bits, checked for every self
 * pattern by test_softplus_backward's avx2_16bit_bits_equal_portable.  Per 8 lanes the table read
 * (8 scalar loads) replaces ~20 f32 operations, on a machine where the direct kernel computes at
 * 8 lanes an instruction: 16 Mi elements, 2 threads, the direct kernel and this one alternating
 * in one process (bench_torch.py --ours, best of 9), Zen 3: f16 5.48 -> 5.36 ms, bf16 6.73 ->
 * 4.85 ms.  The table costs a 256 KiB allocation and 4096 vector steps per call, ~25 µs, hence
 * the minimum size: the same way, 1 / 2 threads, best of 30, 2^18 elements 0.144 -> 0.154 /
 * 0.080 -> 0.105 ms (slower), 2^20 0.603 -> 0.550 / 0.334 -> 0.318 ms.  AVX-512 keeps its
 * direct kernels (16 lanes an instruction; the former 65536-entry table of double factors lost
 * there: the header above). */
typedef struct {
    const softplus_ctx *c;
    const float *tab;
} softplus16_lut;

/* T[h] for every 16-bit pattern h of the dtype */
ACL_AVX2_TARGET static void softplus16_lut_build(const softplus_ctx *c, bool bf, float *tab)
{
    for (uint32_t h = 0; h < 65536; h += 8 * SP16A_K) {
        __m256 x[SP16A_K], den[SP16A_K], lin[SP16A_K], hand[SP16A_K];
        SP16A_EACH {
            __m128i b = _mm_add_epi16(_mm_set1_epi16((short)(h + 8 * (uint32_t)k)), _mm_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7));
            x[k] = acl_widen8_16(b, bf);
        }
        softplus16_den_avx2(c, x, den, lin, hand);
        SP16A_EACH {
            __m256 v = _mm256_blendv_ps(den[k], _mm256_set1_ps(1.0f), lin[k]);
            _mm256_storeu_ps(tab + h + 8 * (uint32_t)k, _mm256_blendv_ps(v, _mm256_set1_ps(NAN), hand[k]));
        }
    }
}

ACL_AVX2_TARGET static inline __attribute__((always_inline)) void
softplus16_lut_step(const softplus16_lut *L, const uint16_t *dy, const uint16_t *x, uint16_t *out, int64_t left, bool bf)
{
    __m256 den = acl_table8_ps(L->tab, x, left), g = acl_load8_16_left(dy, left, bf);
    acl_store8_16_left(out, left, _mm256_div_ps(g, den), bf);
    unsigned redo = (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(den, den, _CMP_UNORD_Q)) & acl_lanes(left, 8);
    if (__builtin_expect(redo != 0, 0)) softplus16_redo(L->c, dy, x, out, 1, redo, bf);
}

ACL_U16_KERNEL8_F16(softplus16_lut, softplus16_lut_step)

/* softplus16_lut_step on a whole bf16 step of 16 in the even / odd split: lane l of half h is
 * element 2l + h.  No lane is redone here: the result is the lanes whose divisor is NaN (in
 * either half), for softplus16_lut_bf16 to redo at the end of its block. */
ACL_AVX2_TARGET static inline __attribute__((always_inline)) __m256
softplus16_lut_step_eo(const softplus16_lut *L, const uint16_t *dy, const uint16_t *x, uint16_t *out)
{
    __m256 den[2], g[2];
    acl_table16_eo_ps(L->tab, x, &den[0], &den[1]);
    acl_load16_bf16_eo(dy, &g[0], &g[1]);
    _mm256_storeu_si256((__m256i *)(void *)out,
                        acl_pack16_bf16_eo(_mm256_div_ps(g[0], den[0]), _mm256_div_ps(g[1], den[1]), false));
    return _mm256_cmp_ps(den[0], den[1], _CMP_UNORD_Q);
}

/* The bf16 table kernel: passes of two whole steps of 16 (each pass after acl_prefetch_pass_u16),
 * their NaN tests gathered by an OR and looked at once for the block; when one fired, the block's
 * steps read their divisors again and redo the NaN lanes by the scalar form (the lanes and the
 * bits of a test per step); then the tail by the 8-lane step.  Round 32, scripts/ab.sh against one
 * test per 16 elements (4dace03): 16 Mi, 2 threads 0.936, 0.931 (a first build), 0.982, 0.917;
 * 1 Mi, 1 thread 0.939, 0.928 (and that per-pair test against one per half: 0.954, 0.933, 0.966).
 * test_large_paths' softplus16_lone_redo_lanes puts one such lane alone in a block at each
 * offset of the passes.  The same for Gelu's zero test was slower (1.05-1.14). */
ACL_AVX2_TARGET static void softplus16_lut_bf16(const void *ctx, int64_t n, const uint16_t *dy, const uint16_t *x,
                                                uint16_t *out)
{
    const softplus16_lut *L = ctx;
    __m256 nan = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        acl_prefetch_pass_u16(dy + i, x + i);
        nan = _mm256_or_ps(nan, softplus16_lut_step_eo(L, dy + i, x + i, out + i));
        nan = _mm256_or_ps(nan, softplus16_lut_step_eo(L, dy + i + 16, x + i + 16, out + i + 16));
    }
    if (__builtin_expect(_mm256_movemask_ps(nan) != 0, 0))
        for (int64_t k = 0; k < i; k += 16) {
            __m256 den[2];
            acl_table16_eo_ps(L->tab, x + k, &den[0], &den[1]);
            for (int h = 0; h < 2; h++) {
                unsigned redo = (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(den[h], den[h], _CMP_UNORD_Q));
                if (redo) softplus16_redo(L->c, dy + k + h, x + k + h, out + k + h, 2, redo, true);
            }
        }
    if (i < n) softplus16_lut_step32(ctx, dy + i, x + i, out + i, n - i, true);
}

/* f32 compute precision: softplus_step_f32's operations on SPF2_V vectors of 8 f32 (2·SPF2_V
 * chains of 4 doubles) a step, in two stages: A, up to the divisor 1 + t·P (the exp), and B, the
 * division, the rounding to f32 and the store; a pass of 32 elements runs the A stages of all its
 * steps before their B stages (softplus_pass_f32_avx2).  VRANGEPD(zd, 708, 0x2) (the smaller
 * magnitude, zd's sign) is min then max against ±708: the same value for every zd but NaN, whose
 * lanes are redone by the scalar form.  The exp table of two vectors read at once by
 * acl_expneg4x2_fast's permutes (Gelu f32's form), not a gather per vector: 16 Mi elements, 2
 * threads, three alternating rounds on a quiet machine, in cache 13.3-14.9 -> 12.1-13.1 ms, the
 * same bits (a per-vector permute form, acl_exp4_dd's way, had measured slower on the loaded
 * machine).
 * Round 28 on Zen 3, one stage per step, 16 Mi elements in cache, 1 thread, alternating builds:
 * SPF2_V 2 24.6-26 ms (1: 26-37, 4: 26-27).  Round 30, the two stages: the loop's FMA-pipe work
 * (bench_ports' costs) was 71 % of its time, the rest the exp's and the division's latency
 * chains, which a step's 144 instructions left the out-of-order window little room to overlap;
 * with the four exps of a pass issued first: 1 Mi elements, 1 thread, alternating, six rounds,
 * SPF2_V 1: 1.34-1.68 -> 1.17-1.52 ms (SPF2_V 2 staged: 1.34-1.62, a draw); 16 Mi, 2 threads,
 * three rounds: 10.88 / 10.99 / 13.68 -> 9.44 / 9.50 / 12.41 ms (PyTorch 9.83 / 10.07 / 11.96). */
#define SPF2_V 1
#if ACLCONFORM_SOFTPLUS_LEAN
/* The speed-accuracy frontier of the AVX2 f32 kernel (round 36; scripts/frontier.sh --row
 * softplus): experiment builds only, as ACLCONFORM_GELU_NONE_LEAN in gelu_backward_v2.c.  Level
 * L replaces acl_expneg4x2_fast (a 16-entry table and a degree-4 polynomial, 2^-37) by
 * e^-y = 2^k·c(u), k = round(-y/ln2), u = -y - k·ln2 in [-ln2/2, ln2/2] (one FMA: u is off by
 * < 2^-45 for |y| ≤ 708), c without a table, of degree 8 (L 1: 2^-40.2), 7 (L 2: 2^-34.3) or 6
 * (L 3: 2^-28.9) (scripts/fit_gelu_none.py --lean, SPL_E).  E's relative error reaches the
 * quotient dy/(1 + E) scaled by E/(1 + E) < 1, and a relative error ε of the value is at most
 * ε·2^24 ULP of f32: the bound on the f32 output is 0.5 + 2^-16, 0.5 + 2^-10.3 and 0.5 + 2^-4.9
 * ULP (the library's: 0.5 + 2^-12).  The AVX-512 kernel is left alone. */
#if ACLCONFORM_SOFTPLUS_LEAN == 1
#define SPL_D 8
static const double SPL_E[9] = {0x1.0000000000000p+0, 0x1.ffffffffdabedp-1, 0x1.0000000064ce8p-1, 0x1.5555559c58801p-3,
                                0x1.555554307f68fp-5, 0x1.1110866235154p-7, 0x1.6c188ab604346p-10, 0x1.a1a4213e29e50p-13,
                                0x1.9ef3497e912a0p-16};
#elif ACLCONFORM_SOFTPLUS_LEAN == 2
#define SPL_D 7
static const double SPL_E[8] = {0x1.0000000000000p+0, 0x1.00000000e58c3p+0, 0x1.000000424f266p-1, 0x1.555553509f209p-3,
                                0x1.555481a865d66p-5, 0x1.11130b2917c38p-7, 0x1.6d9569de0c340p-10, 0x1.9e8ec7765e2b0p-13};
#elif ACLCONFORM_SOFTPLUS_LEAN == 3
#define SPL_D 6
static const double SPL_E[7] = {0x1.0000000000000p+0, 0x1.0000008a3c784p+0, 0x1.fffffc1c753cbp-2, 0x1.5554193f3fe4cp-3,
                                0x1.555822926fd02p-5, 0x1.126793c6ebf6cp-7, 0x1.6ae71cb2bdf30p-10};
#else
#error "ACLCONFORM_SOFTPLUS_LEAN: 1, 2 or 3"
#endif
/* acl_expneg4x2_fast's contract (e^-y = scale·p, y in [-708, 708]) without the table */
ACL_AVX2_TARGET static inline void softplus_lean_expneg4x2(const __m256d y[2], __m256d p[2], __m256d scale[2])
{
    const __m256d magic = _mm256_set1_pd(0x1.8p52);
    for (int h = 0; h < 2; h++) {
        __m256d nm = _mm256_fmadd_pd(y[h], _mm256_set1_pd(-0x1.71547652b82fep+0), magic); /* -y/ln2 */
        __m256d u = _mm256_fnmsub_pd(_mm256_sub_pd(nm, magic), _mm256_set1_pd(0x1.62e42fefa39efp-1), y[h]);
        __m256d c = _mm256_set1_pd(SPL_E[SPL_D]);
        for (int k = SPL_D - 1; k >= 0; k--) c = _mm256_fmadd_pd(c, u, _mm256_set1_pd(SPL_E[k]));
        p[h] = c;
        scale[h] = _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_add_epi64(_mm256_castpd_si256(nm), _mm256_set1_epi64x(1023)), 52));
    }
}
#define SOFTPLUS_EXPNEG4X2 softplus_lean_expneg4x2
#else
#define SOFTPLUS_EXPNEG4X2 acl_expneg4x2_fast
#endif
/* a step between its stages: the divisors, the linear-branch lanes, the lanes for the scalar form */
typedef struct {
    __m256d den[2 * SPF2_V];
    __m256 lin[SPF2_V];
    unsigned low[SPF2_V], any;
} sp2_mid;

ACL_AVX2_TARGET static inline __attribute__((always_inline)) void
softplus_stage_a_avx2(const softplus_ctx *c, const float *x, int64_t left, sp2_mid *m)
{
    __m256d zd[2 * SPF2_V], t[2 * SPF2_V];
    m->any = 0;
    for (int j = 0; j < SPF2_V; j++) {
        __m256 xf = acl_load8_ps_left(x + 8 * j, left - 8 * j);
        __m256 z = _mm256_mul_ps(_mm256_set1_ps(c->beta32), xf);
#if ACLCONFORM_MUTANT == 22 /* branch-boundary: f32 path: threshold compare z >= threshold instead of z > threshold */
        m->lin[j] = _mm256_cmp_ps(z, _mm256_set1_ps(c->thr32), _CMP_GE_OQ);
#else
        m->lin[j] = _mm256_cmp_ps(z, _mm256_set1_ps(c->thr32), _CMP_GT_OQ);
#endif
        /* redone: not (z > -700), that is z ≤ -700 or NaN, outside the linear branch */
#if ACLCONFORM_MUTANT == 55 /* precision-branch: f32 path: NaN lanes not redone by the scalar form (the clamp made them ±708: a finite result) */
        __m256 nle = _mm256_cmp_ps(z, _mm256_set1_ps(-700.0f), _CMP_LE_OQ);
#else
        __m256 nle = _mm256_cmp_ps(z, _mm256_set1_ps(-700.0f), _CMP_NGT_UQ);
#endif
        m->low[j] = (unsigned)_mm256_movemask_ps(_mm256_andnot_ps(m->lin[j], nle)) & acl_lanes(left - 8 * j, 8);
#if ACLCONFORM_MUTANT == 25 /* precision-branch: f32 path: the z <= -700 rescue pass skipped (Inf dy x underflowed sigmoid gives 0/NaN) */
        m->low[j] = 0;
#endif
        m->any |= m->low[j];
        acl_load8_pd2_left(x + 8 * j, left - 8 * j, &zd[2 * j]); /* no VEXTRACTF128 (round 29) */
    }
    for (int k = 0; k < 2 * SPF2_V; k++)
        zd[k] = _mm256_max_pd(_mm256_min_pd(_mm256_mul_pd(_mm256_set1_pd((double)c->beta32), zd[k]),
                                            _mm256_set1_pd(708.0)), _mm256_set1_pd(-708.0));
    for (int k = 0; k < 2 * SPF2_V; k += 2) SOFTPLUS_EXPNEG4X2(&zd[k], &zd[k], &t[k]); /* zd: P, t: the scale */
    for (int k = 0; k < 2 * SPF2_V; k++) m->den[k] = _mm256_fmadd_pd(t[k], zd[k], _mm256_set1_pd(1.0));
}

ACL_AVX2_TARGET static inline __attribute__((always_inline)) void
softplus_stage_b_avx2(const softplus_ctx *c, const float *dy, const float *x, float *out, int64_t left, const sp2_mid *m)
{
    for (int j = 0; j < SPF2_V; j++) {
        __m256d r[2];
        acl_load8_pd2_left(dy + 8 * j, left - 8 * j, r);
        for (int k = 0; k < 2; k++) r[k] = _mm256_div_pd(r[k], m->den[2 * j + k]);
        acl_store8_ps_left(out + 8 * j, left - 8 * j,
                           _mm256_blendv_ps(acl_join4_ps(r[0], r[1]), acl_load8_ps_left(dy + 8 * j, left - 8 * j), m->lin[j]));
    }
    if (__builtin_expect(m->any != 0, 0))
        for (int j = 0; j < SPF2_V; j++)
            if (m->low[j]) softplus_f32_low(c, dy + 8 * j, x + 8 * j, out + 8 * j, (__mmask16)m->low[j]);
}

/* a pass of 32 elements (ACL_STEPS32_PF) in steps of 8·SPF2_V: every step's stage A, then every
 * step's stage B */
ACL_AVX2_TARGET static inline __attribute__((always_inline)) void
softplus_pass_f32_avx2(const softplus_ctx *c, const float *dy, const float *x, float *out, int64_t left)
{
    sp2_mid m[32 / (8 * SPF2_V)];
    for (int h = 0, q = 0; h < 32; h += 8 * SPF2_V, q++)
        if (h < left) softplus_stage_a_avx2(c, x + h, left - h, &m[q]);
    for (int h = 0, q = 0; h < 32; h += 8 * SPF2_V, q++)
        if (h < left) softplus_stage_b_avx2(c, dy + h, x + h, out + h, left - h, &m[q]);
}

ACL_AVX2_TARGET static void softplus_block_f32_avx2(const void *p, int64_t n, const float *dy, const float *x,
                                                    float *out)
{
    ACL_STEPS32_PF(acl_prefetch_pass_f32, softplus_pass_f32_avx2, (const softplus_ctx *)p, n, dy, x, out);
}

#endif

static void softplus16(const softplus_ctx *c, const acl_view *vdy, const acl_view *vx, const acl_view *vo)
{
#ifdef ACL_HAVE_AVX512_KERNELS
    if (acl_have_avx512()) {
        if (acl_ewise_all16_ok(vdy, vx, vo))
            /* plain stores: streaming ones were slower here (runtime/ewise.c, round 27) */
            acl_ewise2_u16(vdy, vx, vo, vo->dtype == ACL_BF16 ? softplus16_bf16 : softplus16_f16, c, false);
        else
            acl_ewise2_f32(vdy, vx, vo, softplus16_block_avx512, c);
        return;
    }
#endif
#ifdef ACL_HAVE_AVX2_KERNELS
    if (acl_have_avx2()) {
        if (!acl_ewise_all16_ok(vdy, vx, vo)) {
            acl_ewise2_f32(vdy, vx, vo, softplus16_block_avx2, c);
            return;
        }
        bool bf = vo->dtype == ACL_BF16;
        float *tab = vo->numel >= SP16_LUT_MIN ? aligned_alloc(64, 65536 * sizeof *tab) : NULL;
        if (tab) {
            softplus16_lut L = {c, tab};
            softplus16_lut_build(c, bf, tab);
            acl_ewise2_u16(vdy, vx, vo, bf ? softplus16_lut_bf16 : softplus16_lut_f16, &L, false);
            free(tab);
        } else {
            acl_ewise2_u16(vdy, vx, vo, bf ? softplus16_bf16_avx2 : softplus16_f16_avx2, c, false);
        }
        return;
    }
#endif
    acl_ewise2_f32(vdy, vx, vo, softplus16_block, c);
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
#ifdef ACL_HAVE_AVX2_KERNELS
                       acl_have_avx2() ? softplus_block_f64_avx2 :
#endif
                       softplus_block_f64, &c);
    else if (acl_dtype_is16(o->dtype))
        softplus16(&c, &vdy, &vx, &vo);
    else
#ifdef ACL_HAVE_AVX512_KERNELS
        if (acl_have_avx512()) acl_ewise2_f32_pf(&vdy, &vx, &vo, softplus_block_f32_avx512, &c);
        else
#endif
#ifdef ACL_HAVE_AVX2_KERNELS
        if (acl_have_avx2()) acl_ewise2_f32_pf(&vdy, &vx, &vo, softplus_block_f32_avx2, &c);
        else
#endif
            acl_ewise2_f32(&vdy, &vx, &vo, softplus_block_f32, &c);
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
