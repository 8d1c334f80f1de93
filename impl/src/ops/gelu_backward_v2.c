/* aclnnGeluBackwardV2 (ops.md §4): gradInput = gradOutput · g(x), g the GELU derivative.
 *
 * For an f32 x the derivative and the product are evaluated in double and rounded once to f32
 * (then, for a 16-bit output, once more by the store).  A 16-bit x reads g from a table instead
 * (see gelu_lut below).  Double is what makes the tails
 * safe without case analysis: x·x is exact for any f32 x, exp(-x²/2) stays normal down to
 * x ≈ -37.6 (below that gradOutput·g is 0 in f32 for every finite gradOutput), and
 * Phi(x) = erfc(-x/√2)/2 never cancels for x ≪ 0.  Near the root x ≈ -0.75179 the sum
 * Phi + x·phi cancels about two bits of double, far below f32 resolution.
 *
 * Special values: x = +Inf → g = 1; x = -Inf → g = 0 (gradOutput·0, NaN for an infinite
 * gradOutput); a finite x whose g underflows in double still has g ≠ 0, so an infinite
 * gradOutput gives an infinity of the product's sign (numerics §5a), never Inf·0. */
#include <math.h>
#include <pthread.h>
#if ACLCONFORM_MUTANT == 39 /* (mutant 39, continued) */
#include <string.h>
#include <strings.h>
#else
#include <string.h>
#endif

#include "aclnnop/aclnn_gelu_backward_v2.h"
#include "runtime/check.h"
#include "runtime/conv.h"
#include "runtime/ewise.h"
#include "runtime/simd256.h"
#include "runtime/vecmath.h"

enum { GELU_NONE, GELU_TANH };

typedef struct {
    aclTensor gradOutput, self, gradInput;
    int mode;
} gelu_args;

/* g(x) for approximate = "none": Phi(x) + x·phi(x). */
static inline double gelu_g_none(double x)
{
    const double inv_sqrt_2pi = 0.39894228040143267794;
    double Phi = 0.5 * erfc(-x * 0.70710678118654752440);
    double phi = exp(-0.5 * x * x) * inv_sqrt_2pi;
    return Phi + (phi == 0.0 ? 0.0 : x * phi); /* x = ±Inf: no Inf·0 */
}

/* g(x) for approximate = "tanh", with u = √(2/π)(x + 0.044715 x³) and e = e^{-2|u|} ≤ 1:
 *   0.5(1 + tanh u)  = (u ≥ 0 ? 1 : e) / (1 + e)
 *   1 - tanh² u      = 4e / (1 + e)²
 * neither of which cancels or overflows for any u (x³ ≤ 4e115 fits in double). */
static inline double gelu_g_tanh(double x)
{
#if ACLCONFORM_MUTANT == 38 /* mode-confusion: tanh mode uses the erf derivative for |x| > 3 */
    if (fabs(x) > 3.0) return gelu_g_none(x);
    const double k = 0.79788456080286535588, c = 0.044715;
    double x2 = x * x;
#else
    const double k = 0.79788456080286535588, c = 0.044715;
    double x2 = x * x;
#endif
    double u = k * (x + c * x2 * x);
    double e = exp(-2.0 * fabs(u));
    double half_1p = (u >= 0.0 ? 1.0 : e) / (1.0 + e);
    double sech2 = 4.0 * e / ((1.0 + e) * (1.0 + e));
    double t2 = sech2 == 0.0 ? 0.0 : 0.5 * x * sech2 * k * (1.0 + 3.0 * c * x2);
    return half_1p + t2;
}

/* gradOutput · g, with the §5a rule for an infinite gradOutput and an underflowed g (which only
 * happens far below the root, where g < 0). */
static inline float gelu_apply(float dy, float x, double g)
{
    double r = (double)dy * g;
#if ACLCONFORM_MUTANT == 40 /* special-value: f32 path: Inf gradOutput times an underflowed g gives NaN (no 5a fix-up) */
    bool fix = g == 0.0 && fabsf(dy) == INFINITY && x < -1.0f && x > -INFINITY && 0;
#else
    bool fix = g == 0.0 && fabsf(dy) == INFINITY && x < -1.0f && x > -INFINITY;
#endif
    return (float)(fix ? -(double)dy : r);
}

/* Branch-free loops (selects only) so that GCC vectorises them with the vector exp/erfc. */
ACL_KERNEL_CLONES static void gelu_none_block(const void *ctx, int64_t n, const float *dy,
                                              const float *x, float *out)
{
    (void)ctx;
    for (int64_t i = 0; i < n; i++) out[i] = gelu_apply(dy[i], x[i], gelu_g_none(x[i]));
}

ACL_KERNEL_CLONES static void gelu_tanh_block(const void *ctx, int64_t n, const float *dy,
                                              const float *x, float *out)
{
    (void)ctx;
    for (int64_t i = 0; i < n; i++) out[i] = gelu_apply(dy[i], x[i], gelu_g_tanh(x[i]));
}

#ifdef ACL_HAVE_AVX512_KERNELS
/* Near its root r (x ≈ -0.75) g is the difference of two terms of ~0.2 that cancel, so an
 * evaluation with absolute error ε has relative error ε/|g|, unbounded at the f32 x closest to r.
 * In the window |x - r| < 1/32 the tanh kernel uses instead the Taylor polynomial of g at r (degree 10,
 * coefficients from a 200-bit evaluation: truncation < 3e-19 relative on the window) in
 * d = (x - R_HI) - R_LO (x - R_HI exact by Sterbenz, one rounding for R_LO): g = d·P(d) is within
 * ~2 double ULP relative of g (measured, 2000 random points) however close x is to r.  (The none
 * kernel has the root as an explicit factor instead: gelu_none_g8.)
 * The window is tested on the f32 x, before widening: x > hi - 2^-5 is x > wlo with wlo that bound
 * rounded down to f32, and x < hi + 2^-5 is x < whi, rounded up (neither bound is an f32), so the
 * lanes are the same as a double compare's.  An 8-lane f32 compare costs this CPU half of a
 * double one (measured with bench/bench_ports.c): see gelu_none_step. */
typedef struct {
    double hi, lo, c[10];
    float wlo, whi;
} gelu_root;

static const gelu_root ROOT_TANH = {-0x1.81429f9e97e4dp-1, 0x1.4f523ed77dbdcp-55,
    {0x1.b8bacd2c96b91p-2, 0x1.8cd1a2b2fff33p-2, -0x1.029615edb077ap-6, -0x1.d2b77346470abp-4,
     -0x1.104a83edc0ddcp-6, 0x1.427996dc249cep-6, 0x1.58c9ed713486cp-8, -0x1.3d8d64170bb72p-9,
     -0x1.e63f294331885p-11, 0x1.14bf895a69517p-12},
    -0x1.9142ap-1f /* RD(hi - 2^-5) */, -0x1.71429ep-1f /* RU(hi + 2^-5) */};

/* the lanes of x (xf as f32, xd widened) in the window of root rt, and there g = d·P(d) (other
 * lanes of g kept) */
ACL_AVX512_TARGET static inline __m512d gelu_near_root(const gelu_root *rt, __m256 xf, __m512d xd, __m512d g)
{
    __mmask8 w = _mm256_cmp_ps_mask(xf, _mm256_set1_ps(rt->wlo), _CMP_GT_OQ);
#if ACLCONFORM_MUTANT == 59 /* precision-branch: Gelu tanh f32: the root window's upper bound tested as x > whi (every x above the window takes the Taylor polynomial of the root) */
    w = _mm256_mask_cmp_ps_mask(w, xf, _mm256_set1_ps(rt->whi), _CMP_GT_OQ);
#else
    w = _mm256_mask_cmp_ps_mask(w, xf, _mm256_set1_ps(rt->whi), _CMP_LT_OQ);
#endif
    if (!w) return g;
    __m512d d = _mm512_sub_pd(_mm512_sub_pd(xd, _mm512_set1_pd(rt->hi)), _mm512_set1_pd(rt->lo));
    __m512d p = _mm512_set1_pd(rt->c[9]);
    for (int j = 8; j >= 0; j--) p = _mm512_fmadd_pd(p, d, _mm512_set1_pd(rt->c[j]));
    return _mm512_mask_mul_pd(g, w, d, p);
}

/* dy·g of 8 lanes rounded to f32 (Gelu tanh).  No §5a fix-up: the kernel's g is never 0 for a
 * finite x (its e is at least e^-708, see gelu_tanh_steps), so an infinite dy gives an infinity of
 * the product's sign by itself; g is 0 only for x = -Inf, where dy·0 is the rule. */
ACL_AVX512_TARGET static inline __m256 gelu_product8(__m512d g0, __m512d g)
{
    /* g0 as the first source: when both are NaN (a NaN gradient, a NaN x) the result is g0's
     * NaN in every inlined copy of the step (gelu_tanh_steps has several) */
    return _mm512_cvtpd_ps(acl_mul_first_pd(g0, g));
}

/* gelu_none_block with AVX-512 doubles, 8 elements per step.  With t = min(|x|, 8⁻), D(t) = M(t) - t
 * (M(t) = (1 - Phi(t))/phi(t), the Mills ratio) and t0 = 0.75179... its root (the root of g at
 * x = -t0):
 *   x < 0:   g = Phi(x) + x·phi(x) = phi(t)·D(t)           = phi(t)·(t0 - t)·E(t)
 *   x ≥ 0:   g = 1 - Phi(-x) + x·phi(x) = 1 - phi(t)·D(t)  = 1 - phi(t)·(t0 - t)·E(t)
 * with E = D/(t0 - t), smooth and within [1, 1.67] on [0, 8].  Writing the root as an explicit
 * factor keeps g's relative accuracy however close x is to it.  With t0 = T0_HI + T0_LO and
 * d = T0_HI - t (exact where it matters, by Sterbenz), (t0 - t)·P = (d + T0_LO)·P(d) is the
 * Horner sum of P with one more step, fma(·, d, T0_LO·P0): the other coefficients of that degree-6
 * polynomial round to P's own (checked in 40 digits), and the last FMA rounds once however small
 * d + T0_LO is.  (Without T0_LO the f32 x next to the root is off by 2^-29.6; P and Q themselves
 * may take d for d + T0_LO: they are far from 0.)
 *   E(t)/√(2π) = GN_P(d)/GN_Q(d), d = t0 - t: a (5, 5) rational fit on [0, 8] to a 40-digit
 *          mpmath evaluation of E (linearised least squares in u = t/4 - 1 with Lawson
 *          reweighting), relative error 2^-35.6, then rewritten in d and scaled by 1/√(2π) in
 *          40 digits and rounded to double (each coefficient once; the sums of |terms| are within
 *          7× of |P| and |Q| on the interval).
 *   e^{-t²/2} by acl_exp8_fast_nhalf (t² exact, < 64: relative 2^-37; since round 23 its
 *          polynomial in Knuth's adapted form, two FMAs and three adds: g within 2^-48 relative of
 *          round 22's on every f32 x in [-8, 8], the same 2^-35.29 from a long double g on every
 *          1024th; in L1, 1 thread, 3.20 -> 3.12 cycles per element).
 * Measured against the previous kernel (degree-12 Mills-ratio polynomials and a Taylor window at
 * the root, within 2^-40 relative) on every f32 x in [-8, 8]: g within 2^-35.3 relative, so the
 * single rounding of dy·g to f32 is off by < 0.5 + 2^-11 ULP.  x ≥ 8 is exact enough through the
 * clamp (g = 1 - phi·D off by < 2^-44); x ≤ -8 (and -Inf) is evaluated per lane by gelu_g_none
 * and gelu_apply, with the §5a fix-up (the only lanes whose g can underflow), and so is NaN x
 * (the clamp, one VRANGEPS, turns it into 8⁻). */
static const double GN_P[6] = {-0x1.3bce4f61f6b69p+8, 0x1.67c34f845520fp+8, -0x1.648b517964dbdp+7,
                               0x1.793cd4c969588p+5, -0x1.a8f576b8b0db2p+2, 0x1.98840e493b1cdp-2};
static const double GN_Q[5] = {-0x1.13dbb46504746p+9, 0x1.6319f2486a095p+9, -0x1.7d580e73f8339p+8,
                               0x1.ad03f2f178a49p+6, -0x1.fc8bd3b32de29p+3}; /* and 1·d^5 */
static const double GN_N0 = 0x1.545bf49ea6267p-48; /* T0_LO·GN_P[0] */

ACL_AVX512_TARGET static inline __m512d gelu_none_g8(__m256 xf, __mmask8 pos)
{
    const __m512d one = _mm512_set1_pd(1.0);
    /* t = min(|x|, 8⁻) in one VRANGEPS on the f32 x (the smaller magnitude, sign cleared), then
     * widened; it turns a quiet NaN into 8⁻, so NaN lanes take the scalar form with x ≤ -8
     * (gelu_none_far_lanes).  8⁻ is the f32 below 8 since round 24 (the double below 8 before,
     * by VRANGEPD on the widened x): it is reached only by x ≥ 8, where both give g = 1 - phi·D
     * within 2^-44 of 1, so dy·g rounds to dy; every f32 x ≥ -8 gives round 23's bits with
     * gradients 1, 1.7, -3e38, Inf and 0.  The narrower operation: L1, 1 thread, 3.12 -> 3.09
     * cycles per element. */
    __m512d t = _mm512_cvtps_pd(_mm256_range_ps(xf, _mm256_set1_ps(0x1.fffffep+2f), 0xA));
    __m512d d = _mm512_sub_pd(_mm512_set1_pd(0x1.80ead197f00b4p-1), t); /* T0_HI - t */
    __m512d p = _mm512_set1_pd(GN_P[5]), q = _mm512_add_pd(d, _mm512_set1_pd(GN_Q[4]));
    for (int k = 4; k >= 0; k--) p = _mm512_fmadd_pd(p, d, _mm512_set1_pd(GN_P[k]));
    for (int k = 3; k >= 0; k--) q = _mm512_fmadd_pd(q, d, _mm512_set1_pd(GN_Q[k]));
    p = _mm512_fmadd_pd(p, d, _mm512_set1_pd(GN_N0)); /* (d + T0_LO)·P(d) */
    __m512d phi = acl_exp8_fast_nhalf(_mm512_mul_pd(t, t));
    __m512d P = _mm512_mul_pd(phi, _mm512_div_pd(p, q));
    return _mm512_mask_sub_pd(P, pos, one, P);
}

/* The lanes `far` of 8 (x ≤ -8 or NaN) by the scalar form.  Out of line and cold: inlined (with
 * libm calls that may clobber every vector register) it cost the hot loop 0.2 cycles per element
 * in L1, 1 thread (3.63 -> 3.42 moved out), though no lane took it; at 16 Mi elements on 2
 * threads the difference was within noise. */
ACL_AVX512_TARGET __attribute__((noinline, cold)) static __m256 gelu_none_far(const float *dy, const float *x, __m256 o,
                                                                          __mmask8 far)
{
    float ol[8];
    _mm256_storeu_ps(ol, o);
    for (int l = 0; l < 8; l++)
        if (far >> l & 1) ol[l] = gelu_apply(dy[l], x[l], gelu_g_none(x[l]));
    return _mm256_loadu_ps(ol);
}

/* the lanes of x (under m) that gelu_none_g8 leaves to the scalar form: x ≤ -8 or NaN */
ACL_AVX512_TARGET static inline __mmask8 gelu_none_far_lanes(__m256 xf, __mmask8 m)
{
#if ACLCONFORM_MUTANT == 57 /* precision-branch: Gelu none f32: NaN lanes not redone by the scalar form (the VRANGEPS clamp made them 8: a finite result) */
    return _mm256_mask_cmp_ps_mask(m, xf, _mm256_set1_ps(-8.0f), _CMP_LE_OQ);
#else
    return _mm256_mask_cmp_ps_mask(m, xf, _mm256_set1_ps(-8.0f), _CMP_NGT_UQ);
#endif
}

/* GN_K steps of 8 elements of gelu_none_block_avx512 under mask m (whole steps: 0xff), written
 * stage by stage across the vectors, as gelu_tanh_steps.  The lane tests are on the f32 x, before
 * widening: same lanes, half the cost of a double compare on this CPU (bench/bench_ports.c; 3.43
 * -> 3.27 cycles per element in L1, 1 thread).  Four steps, not one (round 18): 3.32 -> 3.27
 * cycles per element in L1, 1 thread (one process, alternating; 6 steps the same, 8 slower). */
#define GN_K 4
ACL_AVX512_TARGET static inline __attribute__((always_inline)) void
gelu_none_steps(int K, const float *dy, const float *x, float *out, __mmask8 m)
{
    __m256 xf[GN_K], o[GN_K];
    __m512d g[GN_K];
    __mmask8 far[GN_K], any = 0;
    for (int k = 0; k < K; k++) {
        xf[k] = acl_loadu8_ps(x + 8 * k, m);
        __mmask8 pos = _mm256_cmp_ps_mask(xf[k], _mm256_setzero_ps(), _CMP_GE_OQ);
        g[k] = gelu_none_g8(xf[k], pos);
    }
    for (int k = 0; k < K; k++) {
        o[k] = _mm512_cvtpd_ps(_mm512_mul_pd(_mm512_cvtps_pd(acl_loadu8_ps(dy + 8 * k, m)), g[k]));
        far[k] = gelu_none_far_lanes(xf[k], m);
        any |= far[k];
    }
    if (__builtin_expect(any != 0, 0))
        for (int k = 0; k < K; k++)
            if (far[k]) o[k] = gelu_none_far(dy + 8 * k, x + 8 * k, o[k], far[k]);
    for (int k = 0; k < K; k++) _mm256_mask_storeu_ps(out + 8 * k, m, o[k]);
}

/* the tail: one step under mask m */
ACL_AVX512_TARGET static inline void gelu_none_step(const void *ctx, const float *dy, const float *x,
                                                   float *out, __mmask8 m)
{
    (void)ctx;
    gelu_none_steps(1, dy, x, out, m);
}

ACL_AVX512_TARGET static void gelu_none_block_avx512(const void *ctx, int64_t n, const float *dy,
                                                     const float *x, float *out)
{
    _Static_assert(GN_K == 4, "acl_passes32_f32_pf runs passes of four vectors");
    acl_passes32_f32_pf(ctx, n, dy, x, out, gelu_none_steps, gelu_none_step);
}

/* gelu_tanh_block with AVX-512 doubles: K (1 or GELU_TANH_K) steps of 8 elements under mask m,
 * written stage by stage across the K vectors (the tail: one step under a mask, the same
 * instructions for every element).  Its chain of dependent operations (exp, division, root
 * window, product) is long, and steps in program order overlap where one after the other did
 * not: two steps, 16 Mi elements, 2 threads, 11.44-11.53 ms against 12.28-12.37 for one step at a
 * time, the same bits (in L1, 1 thread, without the NaN rule below: 4.34 against 4.82 cycles per
 * element).  Round 18, with today's exp, in L1, 1 thread, one process alternating: two steps
 * 3.73, three 3.55, four 3.44, five 3.42-3.45 cycles per element; four it is.
 * NaN rule: with several copies of the step, a NaN result must not depend on which copy an element
 * meets (the block grid follows the output's address): a NaN x makes g x's quiet NaN, and the
 * product takes the gradient's NaN first (gelu_product8).  NaN lanes are found with the ±Inf ones
 * by one class test per vector, and the fix-ups of those lanes run only in a pass that has one.
 * Same quantities as gelu_g_tanh, in the logistic form of 1 + t = 2σ(2u) (round 21):
 *   v = 2u = x·(2k + 2kc·x²), x clamped to [-21, 21] (|v| ≤ 694.3),
 *   q = 1/(1 + e^{-v})         (= (1 + t)/2; 1 - q = (1 - t)/2) by acl_logistic8_fast: e^{-v}
 *                              within 2^-37 relative, as s/(s + P) with one correctly rounded
 *                              division,
 *   w = x·(2k + 6kc·x²)        (= 0.5·x·k·(1 + 3c·x²)·4)
 *   g = q·(1 + w·(1 - q))      = half_1p + t2 of gelu_g_tanh.
 * It replaces the form on e^{-|v|} of rounds 17-20, g = q'·((u ≥ 0 ? 1 : e) + w·e·q'), which needed
 * the sign select, its compare and the product w·e: L1, 1 thread, 3.34 -> 3.12 cycles per element;
 * 16 Mi elements, 2 threads, beside the old library in one process, 8.61-8.64 -> 7.83-7.86 ms; the
 * same f32 results for every 13th f32 x in [-12, 12] and every 97th of all f32 (212 M x, with
 * gradients in [1, 2)).  The logistic as s/(s + P) instead of 1/(1 + 2^(n/16)·P): 3.12 -> 3.07
 * cycles per element, 7.85-7.98 -> 7.76-7.88 ms, the same results on the same 212 M x.
 * Errors (round 24: the degree-4 exp, 2^-37, where rounds 21-23 had a degree-5 one, 2^-47): a
 * relative error ε of e^{-v} moves q by (1 - q)·ε and 1 - q by q·ε, relative, both within ~2^-37;
 * for x ≥ 0, 1 - q is exact given q (Sterbenz).  So 1 + w·(1 - q), and g, are within ~2^-36
 * relative away from the root; where 1 and w·(1 - q) cancel (x < 0) the error grows by at most
 * 17× outside the root window (its edges, |v| < 8): 2^-32, so dy·g, rounded once to f32, is within
 * 0.5 + 2^-8 ULP; in the window, gelu_near_root, as before.  Measured (2^32 / 7 f32 x outside the
 * window with a gradient of 1.37, against a long double g): max 0.500196 ULP, 425 of 313 M
 * results over 0.5 (none with the degree-5 exp); see round 24 in docs/speed-rounds.md.  The
 * same 2^-37 exp as Gelu none f32's (whose sweep maximum is 0.50027 scaled ULP) for one FMA less:
 * L1, 1 thread, 3.04 -> 2.91 cycles per element.
 * The clamp of x to ±21 (one VRANGEPS on the f32 x, where rounds 21-23 clamped v to ±708 by a
 * max and a min of doubles; L1 3.09 -> 3.04, the same bits for every f32 x with gradients 1,
 * 1.7, -3e38, ±Inf and 0) keeps s, s + P and q normal and changes no result: for x > 21, q is 1
 * and so is g (q rounds to 1 from x = 5.9 on, and then 1 - q = 0); for x < -21, g = q·(1 + w·(1 - q))
 * at x = -21 is about -2^-990, and the exact g is negative and below 2^-990 in magnitude as well,
 * so dy·g rounds to ∓0 in f32 (and an infinite dy gives ∓Inf) as the exact product does.  g is
 * never 0 for a finite x (|1 + w·(1 - q)| > 0.52 for x < -1), so the §5a rule for an infinite dy
 * needs no fix-up.  For x = +Inf the clamp gives g = 1, the rule's; for x = -Inf the pass sets
 * g to 0 (the generic steps give x = -21's tiny negative g).
 * The lane tests are on the f32 x (the sign of u is the sign of x), like gelu_none_steps'. */
#define GELU_TANH_K 4
ACL_AVX512_TARGET static inline __attribute__((always_inline)) void
gelu_tanh_steps(int K, const float *dy, const float *x, float *out, __mmask8 m)
{
    const __m512d K2 = _mm512_set1_pd(2.0 * 0.79788456080286535588);
    const __m512d CK2 = _mm512_set1_pd(2.0 * 0.79788456080286535588 * 0.044715);
    const __m512d CK6 = _mm512_set1_pd(6.0 * 0.79788456080286535588 * 0.044715);
    const __m512d one = _mm512_set1_pd(1.0);
    __m256 xf[GELU_TANH_K];
    __m512d xd[GELU_TANH_K], g0[GELU_TANH_K], w[GELU_TANH_K], v[GELU_TANH_K], q[GELU_TANH_K];
    __mmask8 special = 0;
    for (int k = 0; k < K; k++) {
        xf[k] = acl_loadu8_ps(x + 8 * k, m);
#if ACLCONFORM_MUTANT == 61 /* special-value: Gelu tanh f32: x not clamped to ±21 (the fast exp's exponent wraps for |x| > 21.14) */
        xd[k] = _mm512_cvtps_pd(xf[k]);
#else
        xd[k] = _mm512_cvtps_pd(_mm256_range_ps(xf[k], _mm256_set1_ps(21.0f), 0x2)); /* sign of x, min(|x|, 21) */
#endif
        g0[k] = _mm512_cvtps_pd(acl_loadu8_ps(dy + 8 * k, m));
        __m512d x2 = _mm512_mul_pd(xd[k], xd[k]);
        w[k] = _mm512_mul_pd(xd[k], _mm512_fmadd_pd(CK6, x2, K2));
        v[k] = _mm512_mul_pd(xd[k], _mm512_fmadd_pd(CK2, x2, K2));
    }
    for (int k = 0; k < K; k++) {
        special |= _mm256_fpclass_ps_mask(xf[k], 0x99); /* ±Inf or NaN */
        q[k] = acl_logistic8_fast(v[k]);
    }
    for (int k = 0; k < K; k++) {
        __m512d g = _mm512_mul_pd(q[k], _mm512_fmadd_pd(w[k], _mm512_sub_pd(one, q[k]), one));
        g = gelu_near_root(&ROOT_TANH, xf[k], xd[k], g);
        if (__builtin_expect(special != 0, 0)) {
            __mmask8 ninf = _mm256_fpclass_ps_mask(xf[k], 0x10);
#if ACLCONFORM_MUTANT == 58 /* special-value: Gelu tanh f32: x = -Inf keeps the generic steps' g (that of x = -21: a tiny negative g, so -0 for a positive gradient and ±Inf for an infinite one, where the rule's g = 0 gives +0 and NaN) */
            ninf = 0;
#endif
            g = _mm512_mask_mov_pd(g, ninf, _mm512_setzero_pd());
            /* a NaN x: g is x's (quiet) NaN itself (widened from xf: the clamp turns a quiet NaN
             * into ±21); the exp's integer steps make other NaNs of it, which commutative
             * operations would pass on in an order that depends on the copy */
            g = _mm512_mask_mov_pd(g, _mm256_cmp_ps_mask(xf[k], xf[k], _CMP_UNORD_Q), _mm512_cvtps_pd(xf[k]));
        }
#if ACLCONFORM_MUTANT == 38 /* mode-confusion: tanh mode uses the erf derivative for |x| > 3 */
        {
            double gl[8], xl[8];
            _mm512_storeu_pd(gl, g);
            _mm512_storeu_pd(xl, xd[k]);
            for (int l = 0; l < 8; l++)
                if (fabs(xl[l]) > 3.0) gl[l] = gelu_g_none(xl[l]);
            g = _mm512_loadu_pd(gl);
        }
#endif
        _mm256_mask_storeu_ps(out + 8 * k, m, gelu_product8(g0[k], g));
    }
}

/* the tail: one step under mask m */
ACL_AVX512_TARGET static inline void gelu_tanh_step(const void *ctx, const float *dy, const float *x,
                                                   float *out, __mmask8 m)
{
    (void)ctx;
    gelu_tanh_steps(1, dy, x, out, m);
}

ACL_AVX512_TARGET static void gelu_tanh_block_avx512(const void *ctx, int64_t n, const float *dy,
                                                     const float *x, float *out)
{
    _Static_assert(GELU_TANH_K == 4, "acl_passes32_f32_pf runs passes of four vectors");
    acl_passes32_f32_pf(ctx, n, dy, x, out, gelu_tanh_steps, gelu_tanh_step);
}
#endif

#ifdef ACL_HAVE_AVX2_KERNELS
/* ---- AVX2 twins (round 28: CPUs without AVX-512, such as the Zen 3 EPYC) ----
 * The kernels above, 8 f32 lanes a step as two vectors of 4 doubles (lanes 0-3, 4-7), with the
 * same double operations in the same order, so they give the AVX-512 kernels' bits (tests compare
 * the two paths where the CPU has both).  The AVX-512-only instructions are replaced by exact
 * sequences: VRANGEPS by an abs, a MINPS (which, like VRANGEPS, returns its second operand for a
 * quiet NaN first operand) and the sign of x where the mode keeps it; mask registers by compares
 * and BLENDVPD (an 8-lane f32 mask widened to two 4-lane double masks by sign extension); the
 * class tests by compares; the exp functions are simd256.h's four-lane ports, operation for
 * operation, except that the table of both halves of 8 lanes is read by permutes at once
 * (acl_tab16x2_epi64, simd256.h) instead of a gather per half.  Measured on the Zen 3 against the portable loops
 * (2 threads, 16 Mi elements, bench_speed, the least disturbed of three alternating runs on a
 * shared machine): none f32 48.0 -> 19.1 ms (triad% 17 -> 34), tanh 35.7 -> 26.4 ms (in cache
 * 16.7 ms; triad% 19 -> 37); 1 thread, none 115 -> 41 ms, tanh 80 -> 37 ms. */


/* lanes 4h..4h+3 of an 8-lane f32 compare result as a 4-lane double mask */
ACL_AVX2_TARGET static inline __m256d gelu_mask4_pd(__m256 m, int h)
{
    __m256i mi = _mm256_castps_si256(m);
    return _mm256_castsi256_pd(_mm256_cvtepi32_epi64(h ? _mm256_extracti128_si256(mi, 1) : _mm256_castsi256_si128(mi)));
}

/* |x| (sign bit cleared) */
ACL_AVX2_TARGET static inline __m256 gelu_abs8(__m256 x)
{
    return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
}

/* gelu_near_root for the two halves g[0], g[1] of 8 lanes */
ACL_AVX2_TARGET static inline void gelu_near_root_avx2(const gelu_root *rt, __m256 xf, const __m256d xd[2], __m256d g[2])
{
    __m256 w = _mm256_cmp_ps(xf, _mm256_set1_ps(rt->wlo), _CMP_GT_OQ);
#if ACLCONFORM_MUTANT == 59 /* (mutant 59, the AVX2 twin) */
    w = _mm256_and_ps(w, _mm256_cmp_ps(xf, _mm256_set1_ps(rt->whi), _CMP_GT_OQ));
#else
    w = _mm256_and_ps(w, _mm256_cmp_ps(xf, _mm256_set1_ps(rt->whi), _CMP_LT_OQ));
#endif
    if (_mm256_testz_ps(w, w)) return;
    _Pragma("GCC unroll 2") for (int h = 0; h < 2; h++) {
        __m256d d = _mm256_sub_pd(_mm256_sub_pd(xd[h], _mm256_set1_pd(rt->hi)), _mm256_set1_pd(rt->lo));
        __m256d p = _mm256_set1_pd(rt->c[9]);
        for (int j = 8; j >= 0; j--) p = _mm256_fmadd_pd(p, d, _mm256_set1_pd(rt->c[j]));
        g[h] = _mm256_blendv_pd(g[h], _mm256_mul_pd(d, p), gelu_mask4_pd(w, h));
    }
}


#if ACLCONFORM_GELU_NONE_LEAN
/* The speed-accuracy frontier of this kernel (round 36; scripts/frontier.sh): experiment builds
 * only, never the library's.  ACLCONFORM_GELU_NONE_LEAN = L makes the AVX2 kernel's g cheaper and
 * leaves its AVX-512 twin alone, so such a build breaks the twins' same-bits rule by design.  Only
 * the exp and the rational's degrees change (the rest is the library's gelu_none_g8_avx2 below):
 * the exp e^(-y/2) = 2^k·c(r), k = round(-y/(2 ln2)), r = y + 2k·ln2 in [-ln2, ln2] (one FMA: r is
 * off by < 2^-47 for the y = t² < 64 here), c a minimax polynomial without a table; for L 2 and 3
 * the rational in d as GN_P/GN_Q, of lower degrees.  Relative errors (scripts/fit_gelu_none.py
 * --lean, the fits checked in double Horner on a dense grid):
 *   L  exp              rational          g (sum)    dy·g rounded to f32: bound in ULP
 *   0  table, 2^-37     (5, 5) 2^-35.6    2^-35.3    0.5 + 2^-11   (the library)
 *   1  degree 8 2^-40.2 (5, 5) 2^-35.6    2^-35.5    0.5 + 2^-11
 *   2  degree 7 2^-34.3 (5, 4) 2^-30.6    2^-30.5    0.5 + 2^-6.5
 *   3  degree 6 2^-28.9 (4, 4) 2^-28.7    2^-27.8    0.5 + 2^-3.8 */
#if ACLCONFORM_GELU_NONE_LEAN == 1
#define GNL_ED 8
static const double GNL_E[9] = {0x1.0000000000000p+0, -0x1.ffffffffdabedp-2, 0x1.0000000064ce8p-3, -0x1.5555559c58801p-6,
                                0x1.555554307f68fp-9, -0x1.1110866235154p-12, 0x1.6c188ab604346p-16, -0x1.a1a4213e29e50p-20,
                                0x1.9ef3497e912a0p-24};
#elif ACLCONFORM_GELU_NONE_LEAN == 2
#define GNL_ED 7
static const double GNL_E[8] = {0x1.0000000000000p+0, -0x1.00000000e58c3p-1, 0x1.000000424f266p-3, -0x1.555553509f209p-6,
                                0x1.555481a865d66p-9, -0x1.11130b2917c38p-12, 0x1.6d9569de0c340p-16, -0x1.9e8ec7765e2b0p-20};
#define GNL_PD 5
#define GNL_QD 4
static const double GNL_P[6] = {0x1.23b5ab500d28dp+6, -0x1.157c0b8532011p+6, 0x1.b7c7c3a11b906p+4, -0x1.4da48561d1899p+2,
                                0x1.9891666c4878dp-2, 0x1.6f9e3454342b2p-20};
static const double GNL_Q[4] = {0x1.fd9eb97b6206ep+6, -0x1.181d366635eb1p+7, 0x1.e4eb3c6ed40eap+5, -0x1.8a2b63363190fp+3};
static const double GNL_N0 = -0x1.3a63b6f3afd3cp-50;
#elif ACLCONFORM_GELU_NONE_LEAN == 3
#define GNL_ED 6
static const double GNL_E[7] = {0x1.0000000000000p+0, -0x1.0000008a3c784p-1, 0x1.fffffc1c753cbp-4, -0x1.5554193f3fe4cp-6,
                                0x1.555822926fd02p-9, -0x1.126793c6ebf6cp-12, 0x1.6ae71cb2bdf30p-16};
#define GNL_PD 4
#define GNL_QD 4
static const double GNL_P[5] = {0x1.0007e4e5bc1c2p+6, -0x1.f6a02ff5b8a01p+5, 0x1.9a2c093a5886ap+4, -0x1.419e9f7a00c14p+2,
                                0x1.98868b16614d6p-2};
static const double GNL_Q[4] = {0x1.bf49eac101ff0p+6, -0x1.f946ce259babbp+6, 0x1.c2bfdcfdc6fdfp+5, -0x1.7b0e17fb861afp+3};
static const double GNL_N0 = -0x1.13efce5d79eaap-50;
#else
#error "ACLCONFORM_GELU_NONE_LEAN: 1, 2 or 3"
#endif
/* acl_exp4x2_fast_nhalf's contract (e^(-y/2) of two vectors) without its table */
ACL_AVX2_TARGET static inline void gelu_lean_exp4x2_nhalf(const __m256d y[2], __m256d e[2])
{
    const __m256d magic = _mm256_set1_pd(0x1.8p52);
    for (int h = 0; h < 2; h++) {
        __m256d nm = _mm256_fmadd_pd(y[h], _mm256_set1_pd(-0x1.71547652b82fep-1), magic); /* -y/(2 ln2) */
        __m256d r = _mm256_fmadd_pd(_mm256_sub_pd(nm, magic), _mm256_set1_pd(0x1.62e42fefa39efp+0), y[h]);
        __m256d c = _mm256_set1_pd(GNL_E[GNL_ED]);
        for (int k = GNL_ED - 1; k >= 0; k--) c = _mm256_fmadd_pd(c, r, _mm256_set1_pd(GNL_E[k]));
        e[h] = _mm256_castsi256_pd(_mm256_add_epi64(_mm256_castpd_si256(c), _mm256_slli_epi64(_mm256_castpd_si256(nm), 52)));
    }
}
#define GELU_NONE_EXP4X2_NHALF gelu_lean_exp4x2_nhalf
#else
#define GELU_NONE_EXP4X2_NHALF acl_exp4x2_fast_nhalf
#endif
#ifndef GNL_PD /* the library's rational (and level 1's) */
#define GNL_PD 5
#define GNL_QD 5
#define GNL_P GN_P
#define GNL_Q GN_Q
#define GNL_N0 GN_N0
#endif

/* gelu_none_g8: t = min(|x|, 8⁻) as VRANGEPS imm 0xA gives it (a quiet NaN x: 8⁻, by MINPD's
 * second operand; such lanes are redone by the scalar form), g in two halves.  Round 29: x
 * widened first and t, and the sign test that picks 1 - P, taken on the doubles (the same values:
 * the widening is exact, MINPD returns its second operand for a NaN as MINPS does, x ≥ 0 has the
 * same lanes in both widths), so the compare is a double one and no VPMOVSXDQ widens an f32 mask:
 * 8 fewer per 32 elements (1.55 FMA slots each on Zen 3, bench_ports) */
ACL_AVX2_TARGET static inline void gelu_none_g8_avx2(const __m256d xd[2], __m256d g[2])
{
    const __m256d one = _mm256_set1_pd(1.0);
    __m256d t[2], t2[2], phi[2], pq[2];
    _Pragma("GCC unroll 2") for (int h = 0; h < 2; h++)
        t[h] = _mm256_min_pd(_mm256_andnot_pd(_mm256_set1_pd(-0.0), xd[h]), _mm256_set1_pd(0x1.fffffep+2));
    _Pragma("GCC unroll 2") for (int h = 0; h < 2; h++) {
        __m256d d = _mm256_sub_pd(_mm256_set1_pd(0x1.80ead197f00b4p-1), t[h]); /* T0_HI - t */
        __m256d p = _mm256_set1_pd(GNL_P[GNL_PD]), q = _mm256_add_pd(d, _mm256_set1_pd(GNL_Q[GNL_QD - 1]));
        for (int k = GNL_PD - 1; k >= 0; k--) p = _mm256_fmadd_pd(p, d, _mm256_set1_pd(GNL_P[k]));
        for (int k = GNL_QD - 2; k >= 0; k--) q = _mm256_fmadd_pd(q, d, _mm256_set1_pd(GNL_Q[k]));
        p = _mm256_fmadd_pd(p, d, _mm256_set1_pd(GNL_N0)); /* (d + T0_LO)·P(d) */
        pq[h] = _mm256_div_pd(p, q);
        t2[h] = _mm256_mul_pd(t[h], t[h]);
    }
    GELU_NONE_EXP4X2_NHALF(t2, phi);
    _Pragma("GCC unroll 2") for (int h = 0; h < 2; h++) {
        __m256d P = _mm256_mul_pd(phi[h], pq[h]);
        g[h] = _mm256_blendv_pd(P, _mm256_sub_pd(one, P), _mm256_cmp_pd(xd[h], _mm256_setzero_pd(), _CMP_GE_OQ));
    }
}

/* gelu_none_far: the lanes `far` (bits) of 8 by the scalar form, out of line */
ACL_AVX2_TARGET __attribute__((noinline, cold)) static __m256 gelu_none_far_avx2(const float *dy, const float *x, __m256 o,
                                                                              int far)
{
    float ol[8];
    _mm256_storeu_ps(ol, o);
    for (int l = 0; l < 8; l++)
        if (far >> l & 1) ol[l] = gelu_apply(dy[l], x[l], gelu_g_none(x[l]));
    return _mm256_loadu_ps(ol);
}

/* gelu_none_far_lanes: x ≤ -8 or NaN (lanes past a tail's end hold 0: never far) */
ACL_AVX2_TARGET static inline int gelu_none_far_lanes_avx2(__m256 xf)
{
#if ACLCONFORM_MUTANT == 57 /* (mutant 57, the AVX2 twin) */
    return _mm256_movemask_ps(_mm256_cmp_ps(xf, _mm256_set1_ps(-8.0f), _CMP_LE_OQ));
#else
    return _mm256_movemask_ps(_mm256_cmp_ps(xf, _mm256_set1_ps(-8.0f), _CMP_NGT_UQ));
#endif
}

/* gelu_none_steps: K steps of 8 elements, `left` of them still to do (≥ 8K: whole steps) */
#define GN2_K 2
ACL_AVX2_TARGET static inline __attribute__((always_inline)) void
gelu_none_steps_avx2(int K, const float *dy, const float *x, float *out, int64_t left)
{
    __m256 xf[GN2_K];
    __m256d g[GN2_K][2], o[GN2_K][2];
    int far[GN2_K], any = 0;
    _Pragma("GCC unroll 2") for (int k = 0; k < K; k++) {
        __m256d xd[2];
        xf[k] = acl_load8_ps_left(x + 8 * k, left - 8 * k); /* the lane tests */
        acl_load8_pd2_left(x + 8 * k, left - 8 * k, xd);
        gelu_none_g8_avx2(xd, g[k]);
    }
    _Pragma("GCC unroll 2") for (int k = 0; k < K; k++) {
        __m256d d[2];
        acl_load8_pd2_left(dy + 8 * k, left - 8 * k, d);
        o[k][0] = _mm256_mul_pd(d[0], g[k][0]);
        o[k][1] = _mm256_mul_pd(d[1], g[k][1]);
        far[k] = gelu_none_far_lanes_avx2(xf[k]);
        any |= far[k];
    }
    if (__builtin_expect(any != 0, 0))
        _Pragma("GCC unroll 2") for (int k = 0; k < K; k++) {
            __m256 ok = acl_join4_ps(o[k][0], o[k][1]);
            if (far[k]) ok = gelu_none_far_avx2(dy + 8 * k, x + 8 * k, ok, far[k]);
            acl_store8_ps_left(out + 8 * k, left - 8 * k, ok);
        }
    else
        _Pragma("GCC unroll 2") for (int k = 0; k < K; k++)
            acl_store8_pd2_left(out + 8 * k, left - 8 * k, o[k][0], o[k][1]);
}

/* acl_passes32_f32_pf for these steps: passes of 32 elements, each after acl_prefetch_pass_f32,
 * as two calls of two whole vectors (K = 2: the loops over K and the halves unrolled, where the
 * AVX-512 kernels take four vectors a call: with 16 vector registers and two halves a vector,
 * four spilled more than they overlapped; 8192 elements in cache, 1 thread, alternating in one
 * process on the loaded Zen 3: tanh 2.75-2.82 -> 2.43-2.49 ns per element, none a draw),
 * then whole 8-element steps, then the tail once */
#define GELU_PASSES32_AVX2(steps, n, dy, x, out)                                                     \
    do {                                                                                            \
        int64_t i_ = 0;                                                                             \
        for (; i_ + 32 <= (n); i_ += 32) {                                                          \
            acl_prefetch_pass_f32((dy) + i_, (x) + i_);                                             \
            steps(2, (dy) + i_, (x) + i_, (out) + i_, 32);                                          \
            steps(2, (dy) + i_ + 16, (x) + i_ + 16, (out) + i_ + 16, 16);                           \
        }                                                                                           \
        for (; i_ + 8 <= (n); i_ += 8) steps(1, (dy) + i_, (x) + i_, (out) + i_, 8);                \
        if (i_ < (n)) steps(1, (dy) + i_, (x) + i_, (out) + i_, (n) - i_);                          \
    } while (0)

ACL_AVX2_TARGET static void gelu_none_block_avx2(const void *ctx, int64_t n, const float *dy, const float *x,
                                                 float *out)
{
    (void)ctx;
    _Static_assert(GN2_K == 2, "GELU_PASSES32_AVX2 runs steps of two vectors");
    GELU_PASSES32_AVX2(gelu_none_steps_avx2, n, dy, x, out);
}

/* gelu_tanh_steps: K steps of 8 elements, `left` of them still to do.  The clamp of VRANGEPS
 * imm 0x2 (min(|x|, 21) with x's sign; a quiet NaN x gives ±21, its lanes' g is x's NaN below);
 * the class test 0x99 (±Inf or NaN) as |x| not below Inf, unordered included; 0x10 as x = -Inf. */
#define GT2_K 2
ACL_AVX2_TARGET static inline __attribute__((always_inline)) void
gelu_tanh_steps_avx2(int K, const float *dy, const float *x, float *out, int64_t left)
{
    const __m256d K2 = _mm256_set1_pd(2.0 * 0.79788456080286535588);
    const __m256d CK2 = _mm256_set1_pd(2.0 * 0.79788456080286535588 * 0.044715);
    const __m256d CK6 = _mm256_set1_pd(6.0 * 0.79788456080286535588 * 0.044715);
    const __m256d one = _mm256_set1_pd(1.0);
    __m256 xf[GT2_K];
    __m256d xd[GT2_K][2], g0[GT2_K][2], w[GT2_K][2], v[GT2_K][2], q[GT2_K][2];
    int special = 0;
    _Pragma("GCC unroll 2") for (int k = 0; k < K; k++) {
        xf[k] = acl_load8_ps_left(x + 8 * k, left - 8 * k); /* the lane tests */
        acl_load8_pd2_left(x + 8 * k, left - 8 * k, xd[k]);
        acl_load8_pd2_left(dy + 8 * k, left - 8 * k, g0[k]);
#if ACLCONFORM_MUTANT != 61 /* (mutant 61, the AVX2 twin: no clamp) */
        /* min(|x|, 21) with x's sign, on the widened x (round 29; the f32 clamp's values: the
         * widening is exact and MINPD, like MINPS, returns 21 for a NaN) */
        _Pragma("GCC unroll 2") for (int h = 0; h < 2; h++)
            xd[k][h] = _mm256_or_pd(_mm256_min_pd(_mm256_andnot_pd(_mm256_set1_pd(-0.0), xd[k][h]), _mm256_set1_pd(21.0)),
                                    _mm256_and_pd(xd[k][h], _mm256_set1_pd(-0.0)));
#endif
        _Pragma("GCC unroll 2") for (int h = 0; h < 2; h++) {
            __m256d x2 = _mm256_mul_pd(xd[k][h], xd[k][h]);
            w[k][h] = _mm256_mul_pd(xd[k][h], _mm256_fmadd_pd(CK6, x2, K2));
            v[k][h] = _mm256_mul_pd(xd[k][h], _mm256_fmadd_pd(CK2, x2, K2));
        }
    }
    _Pragma("GCC unroll 2") for (int k = 0; k < K; k++) {
        special |= _mm256_movemask_ps(_mm256_cmp_ps(gelu_abs8(xf[k]), _mm256_set1_ps(INFINITY), _CMP_NLT_UQ));
        acl_logistic4x2_fast(v[k], q[k]);
    }
    _Pragma("GCC unroll 2") for (int k = 0; k < K; k++) {
        __m256d g[2];
        _Pragma("GCC unroll 2") for (int h = 0; h < 2; h++)
            g[h] = _mm256_mul_pd(q[k][h], _mm256_fmadd_pd(w[k][h], _mm256_sub_pd(one, q[k][h]), one));
        gelu_near_root_avx2(&ROOT_TANH, xf[k], xd[k], g);
        if (__builtin_expect(special != 0, 0)) {
            __m256 ninf = _mm256_cmp_ps(xf[k], _mm256_set1_ps(-INFINITY), _CMP_EQ_OQ);
#if ACLCONFORM_MUTANT == 58 /* (mutant 58, the AVX2 twin) */
            ninf = _mm256_setzero_ps();
#endif
            __m256 nan = _mm256_cmp_ps(xf[k], xf[k], _CMP_UNORD_Q);
            _Pragma("GCC unroll 2") for (int h = 0; h < 2; h++) {
                g[h] = _mm256_blendv_pd(g[h], _mm256_setzero_pd(), gelu_mask4_pd(ninf, h));
                g[h] = _mm256_blendv_pd(g[h], h ? acl_hi4_pd(xf[k]) : acl_lo4_pd(xf[k]), gelu_mask4_pd(nan, h));
            }
        }
#if ACLCONFORM_MUTANT == 38 /* (mutant 38, the AVX2 twin) */
        _Pragma("GCC unroll 2") for (int h = 0; h < 2; h++) {
            double gl[4], xl[4];
            _mm256_storeu_pd(gl, g[h]);
            _mm256_storeu_pd(xl, xd[k][h]);
            for (int l = 0; l < 4; l++)
                if (fabs(xl[l]) > 3.0) gl[l] = gelu_g_none(xl[l]);
            g[h] = _mm256_loadu_pd(gl);
        }
#endif
        acl_store8_pd2_left(out + 8 * k, left - 8 * k, acl_mul_first4_pd(g0[k][0], g[0]), acl_mul_first4_pd(g0[k][1], g[1]));
    }
}

ACL_AVX2_TARGET static void gelu_tanh_block_avx2(const void *ctx, int64_t n, const float *dy, const float *x,
                                                 float *out)
{
    (void)ctx;
    _Static_assert(GT2_K == 2, "GELU_PASSES32_AVX2 runs steps of two vectors");
    GELU_PASSES32_AVX2(gelu_tanh_steps_avx2, n, dy, x, out);
}
#endif

/* 16-bit x: g(x) depends on x alone, and x takes at most 65536 values, so g is tabulated once per
 * process for every bit pattern (by the double evaluation above), in double and rounded to f32.
 * An f32 gradInput takes the double product and the §5a fix-up (gelu_lut_one).  A 16-bit
 * gradInput multiplies in f32, dy·g32, wherever g32 is not 0: dy has at most 11 significant bits
 * and g32 is within 2^-24 relative of g, so rounding dy·g32 to f32 and then to the dtype is
 * within 0.5 + 2^-12 ULP of dy·g (bf16: 0.5 + 2^-15), 16 lanes per AVX-512 step instead of 8
 * in double.  g32 is 0 where |g| < 2^-126 (x below about -13, x = -Inf), which f32 cannot hold
 * to full precision while dy·g can still be normal (dy up to 2^128 in bf16); those lanes, rare,
 * take the double product.  Measured, 16 Mi bf16 elements, 2 threads: 3.6-3.9 ms against
 * 4.1-4.6 ms for the double table (round 13), in cache 2.2 against 2.9 ms. */
typedef struct {
    const double *g;    /* g of every bit pattern */
    const float *g32;   /* g rounded to f32, 0 where |g| < 2^-126; NULL for an f32 gradInput */
    bool bf;            /* x is bf16 (else f16) */
} gelu_lut;

static double g_lut[2][2][65536]; /* [mode][0 = f16, 1 = bf16] */
static float g_lut32[2][2][65536];
static pthread_once_t g_lut_once[2][2] = {{PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT},
                                          {PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT}};

ACL_KERNEL_CLONES static void gelu_fill(int mode, const float *x, double *g)
{
    if (mode == GELU_NONE)
        for (int i = 0; i < 65536; i++) g[i] = gelu_g_none(x[i]);
    else
        for (int i = 0; i < 65536; i++) g[i] = gelu_g_tanh(x[i]);
}

static void gelu_lut_build(int mode, int bf)
{
    static float x[65536]; /* under the pthread_once of one table; tables are built one at a time */
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&mu);
    for (uint32_t h = 0; h < 65536; h++)
        x[h] = bf ? acl_bf16_to_f32((uint16_t)h) : acl_f16_to_f32((uint16_t)h);
    gelu_fill(mode, x, g_lut[mode][bf]);
    for (int h = 0; h < 65536; h++) {
        double g = g_lut[mode][bf][h];
        g_lut32[mode][bf][h] = isnan(g) || fabs(g) >= 0x1p-126 ? (float)g : 0.0f;
    }
    pthread_mutex_unlock(&mu);
}
static void lut_n16(void) { gelu_lut_build(GELU_NONE, 0); }
static void lut_nbf(void) { gelu_lut_build(GELU_NONE, 1); }
static void lut_t16(void) { gelu_lut_build(GELU_TANH, 0); }
static void lut_tbf(void) { gelu_lut_build(GELU_TANH, 1); }

static const double *gelu_table(int mode, int bf)
{
    static void (*const init[2][2])(void) = {{lut_n16, lut_nbf}, {lut_t16, lut_tbf}};
    pthread_once(&g_lut_once[mode][bf], init[mode][bf]);
    return g_lut[mode][bf];
}

/* gelu_apply's fix-up condition, given g = 0: dy is infinite and x (bits h) is a finite x < -1;
 * then dy·g is -dy, not NaN.  Branch-free, for the vectorised loop. */
static inline bool gelu_lut_fixes(const gelu_lut *c, uint32_t h, double dy)
{
    uint32_t m = h & 0x7fffu, one = c->bf ? 0x3f80u : 0x3c00u, inf = c->bf ? 0x7f80u : 0x7c00u; /* |x| bits */
    return (fabs(dy) == INFINITY) & (h > 0x7fffu) & (m > one) & (m < inf);
}

/* One element of the table kernels: dy·g with the §5a fix-up, the product in double rounded once
 * to f32; or, when f32 is set (a 16-bit gradInput), dy·g32 in f32 wherever g32 is not 0 (why
 * that is within 0.5 + 2^-12 ULP of the 16-bit result: above gelu_lut). */
static inline float gelu_lut_one(const gelu_lut *c, bool f32, uint32_t h, float dy)
{
    if (f32 && c->g32[h] != 0.0f) return dy * c->g32[h];
    double g = c->g[h];
    bool fix = (g == 0.0) & gelu_lut_fixes(c, h, dy);
    return (float)(fix ? -(double)dy : (double)dy * g);
}

ACL_KERNEL_CLONES static void gelu_lut_block(const void *ctx, int64_t n, const float *dy,
                                             const uint16_t *xb, float *out)
{
    const gelu_lut *c = ctx;
    if (c->g32)
        for (int64_t i = 0; i < n; i++) out[i] = gelu_lut_one(c, true, xb[i], dy[i]);
    else
        for (int64_t i = 0; i < n; i++) out[i] = gelu_lut_one(c, false, xb[i], dy[i]);
}

/* The same for an x that is not contiguous, staged as f32 by the f32 driver (a gradient or
 * gradInput of another dtype, or views run in tiles; all-16-bit views of other layouts are staged
 * as raw bits for the 16-lane kernels since round 20): its values are exactly those of the 16-bit
 * dtype, so converting back gives the bits, and every layout of a 16-bit x reads the same table. */
static void gelu_lut_staged_block(const void *ctx, int64_t n, const float *dy, const float *x, float *out)
{
    const gelu_lut *c = ctx;
    uint16_t xb[ACL_EWISE_BLOCK];
    if (c->bf) acl_cvt_f32_to_bf16(x, xb, (size_t)n);
    else acl_cvt_f32_to_f16(x, xb, (size_t)n);
    gelu_lut_block(ctx, n, dy, xb, out);
}

#ifdef ACL_HAVE_AVX512_KERNELS
/* gelu_lut_one for the lanes z of r whose g32 is 0 (|g| < 2^-126, x below about -13, or x = -Inf):
 * the double product and the fix-up.  Rare: out of the loop. */
ACL_AVX512_TARGET static __attribute__((noinline, cold)) __m512 gelu_lut16_slow(const gelu_lut *c, const uint16_t *xb,
                                                                                __m512 dy, __m512 r, __mmask16 z)
{
    float rl[16], dl[16];
    _mm512_storeu_ps(rl, r);
    _mm512_storeu_ps(dl, dy);
    for (int l = 0; l < 16; l++)
        if (z >> l & 1) rl[l] = gelu_lut_one(c, false, xb[l], dl[l]);
    return _mm512_loadu_ps(rl);
}

/* gelu_lut_block for 16-bit gradOutput and gradInput of x's dtype, converting in registers, 16
 * elements (left ≥ 16) or the tail: dy·g32 in f32, the slow lanes as gelu_lut_one, rounded to
 * the 16-bit dtype exactly as the staged path (acl_store16_16 = acl_cvt_f32_to_*). */
ACL_AVX512_TARGET static inline __attribute__((always_inline)) void
gelu_lut16_step(const void *ctx, const uint16_t *dy, const uint16_t *xb, uint16_t *out, int64_t left, bool bf)
{
    const gelu_lut *c = ctx;
    __mmask16 m = acl_mask16(left);
    __m512 g = acl_table16(c->g32, xb, m), d = acl_load16_16(dy, m, bf);
    __m512 r = acl_mul_first_ps(d, g); /* d's NaN where both are NaN, in the whole steps and the tail alike */
    __mmask16 z = _mm512_mask_cmp_ps_mask(m, g, _mm512_setzero_ps(), _CMP_EQ_OQ);
    if (z) r = gelu_lut16_slow(c, xb, d, r, z);
    acl_store16_16(out, m, r, bf);
}

/* 32 elements (left ≥ 32) or the tail: two 16-lane steps */
ACL_AVX512_TARGET static inline __attribute__((always_inline)) void
gelu_lut16_step32(const void *ctx, const uint16_t *dy, const uint16_t *xb, uint16_t *out, int64_t left, bool bf)
{
    gelu_lut16_step(ctx, dy, xb, out, left, bf);
    if (left > 16) gelu_lut16_step(ctx, dy + 16, xb + 16, out + 16, left - 16, bf);
}

ACL_AVX512_TARGET static inline void gelu_lut16_step_f16(const void *ctx, const uint16_t *dy, const uint16_t *xb,
                                                         uint16_t *out, int64_t left)
{
    gelu_lut16_step32(ctx, dy, xb, out, left, false);
}

ACL_AVX512_TARGET static inline void gelu_lut16_step_bf16(const void *ctx, const uint16_t *dy, const uint16_t *xb,
                                                          uint16_t *out, int64_t left)
{
    gelu_lut16_step32(ctx, dy, xb, out, left, true);
}

/* The inputs prefetched into L2 in the loop (round 19; see ewise.c): 16 Mi elements, 2 threads,
 * alternating in one process with the round-18 library (whose f16 driver prefetched every 256
 * elements and whose bf16 one did not), none f16 3.69-3.78 -> 3.51-3.57 ms, tanh f16 3.66-3.71
 * -> 3.34-3.39, none bf16 3.35-3.39 -> 2.91-3.05, tanh bf16 3.54 -> 3.07-3.13. */
ACL_AVX512_TARGET static void gelu_lut16_f16(const void *ctx, int64_t n, const uint16_t *dy,
                                             const uint16_t *xb, uint16_t *out)
{
    ACL_STEPS32_PF(acl_prefetch_pass_u16, gelu_lut16_step_f16, ctx, n, dy, xb, out);
}

ACL_AVX512_TARGET static void gelu_lut16_bf16(const void *ctx, int64_t n, const uint16_t *dy,
                                              const uint16_t *xb, uint16_t *out)
{
    ACL_STEPS32_PF(acl_prefetch_pass_u16, gelu_lut16_step_bf16, ctx, n, dy, xb, out);
}
#endif

#ifdef ACL_HAVE_AVX2_KERNELS
/* The 16-bit table kernels on AVX2 (CPUs without AVX-512; round 28): gelu_lut16_step on 8 lanes,
 * the same f32 product (its first operand's NaN: acl_mul_first8_ps), the same slow lanes and
 * the same rounding to 16 bits, so the same bits.  The 8 table values by acl_table8_ps. */
/* gelu_lut16_slow on 8 lanes: the lanes z (bits) of r by gelu_lut_one, lane l's x at xb[st·l] */
ACL_AVX2_TARGET static __attribute__((noinline, cold)) __m256 gelu_lut8_slow(const gelu_lut *c, const uint16_t *xb,
                                                                             int st, __m256 dy, __m256 r, unsigned z)
{
    float rl[8], dl[8];
    _mm256_storeu_ps(rl, r);
    _mm256_storeu_ps(dl, dy);
    for (int l = 0; l < 8; l++)
        if (z >> l & 1) rl[l] = gelu_lut_one(c, false, xb[st * l], dl[l]);
    return _mm256_loadu_ps(rl);
}

ACL_AVX2_TARGET static inline __attribute__((always_inline)) void
gelu_lut8_step(const gelu_lut *c, const uint16_t *dy, const uint16_t *xb, uint16_t *out, int64_t left, bool bf)
{
    __m256 g = acl_table8_ps(c->g32, xb, left), d = acl_load8_16_left(dy, left, bf);
    __m256 r = acl_mul_first8_ps(d, g);
    unsigned z = (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(g, _mm256_setzero_ps(), _CMP_EQ_OQ)) & acl_lanes(left, 8);
    if (z) r = gelu_lut8_slow(c, xb, 1, d, r, z);
    acl_store8_16_left(out, left, r, bf);
}

/* gelu_lut8_step on a whole bf16 step of 16 in the even / odd split (ACL_U16_KERNELS8): lane l of
 * half h is element 2l + h */
ACL_AVX2_TARGET static inline __attribute__((always_inline)) void
gelu_lut16_step_eo(const gelu_lut *c, const uint16_t *dy, const uint16_t *xb, uint16_t *out)
{
    __m256 g[2], d[2], r[2];
    acl_table16_eo_ps(c->g32, xb, &g[0], &g[1]);
    acl_load16_bf16_eo(dy, &d[0], &d[1]);
    for (int h = 0; h < 2; h++) {
        r[h] = acl_mul_first8_ps(d[h], g[h]);
        unsigned z = (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(g[h], _mm256_setzero_ps(), _CMP_EQ_OQ));
        if (__builtin_expect(z != 0, 0)) r[h] = gelu_lut8_slow(c, xb + h, 2, d[h], r[h], z);
    }
    _mm256_storeu_si256((__m256i *)(void *)out, acl_pack16_bf16_eo(r[0], r[1], false));
}

ACL_U16_KERNELS8(gelu_lut8, gelu_lut8_step, gelu_lut16_step_eo)
#endif

static aclnnStatus gelu_kernel(void *p, void *ws, uint64_t ws_size)
{
    (void)ws; (void)ws_size;
    gelu_args *a = p;
    const aclTensor *o = &a->gradInput;
    if (o->numel == 0) return ACLNN_SUCCESS;
    acl_view vdy, vx, vo;
    acl_view_init(&vo, o);
    acl_view_broadcast(&vdy, &a->gradOutput, (int)o->ndim, o->dims);
    acl_view_broadcast(&vx, &a->self, (int)o->ndim, o->dims);
    if (acl_dtype_is16(vx.dtype)) {
        bool bf = vx.dtype == ACL_BF16;
        gelu_lut c = {gelu_table(a->mode, bf), vo.dtype == ACL_FLOAT ? NULL : g_lut32[a->mode][bf], bf};
#ifdef ACL_HAVE_AVX512_KERNELS
        if (acl_ewise_all16_ok(&vdy, &vx, &vo) && acl_have_avx512()) {
            acl_ewise2_u16(&vdy, &vx, &vo, bf ? gelu_lut16_bf16 : gelu_lut16_f16, &c, true);
            return ACLNN_SUCCESS;
        }
#endif
#ifdef ACL_HAVE_AVX2_KERNELS
        if (acl_ewise_all16_ok(&vdy, &vx, &vo) && acl_have_avx2()) {
            acl_ewise2_u16(&vdy, &vx, &vo, bf ? gelu_lut8_bf16 : gelu_lut8_f16, &c, false);
            return ACLNN_SUCCESS;
        }
#endif
        if (!acl_ewise_raw16_ok(&vx) || acl_ewise_tiled(&vdy, &vx, &vo)) {
            acl_ewise2_f32(&vdy, &vx, &vo, gelu_lut_staged_block, &c);
            return ACLNN_SUCCESS;
        }
        acl_ewise2_f32_u16(&vdy, &vx, &vo, gelu_lut_block, &c);
        return ACLNN_SUCCESS;
    }
#ifdef ACL_HAVE_AVX512_KERNELS
    if (acl_have_avx512()) {
        acl_ewise2_f32_pf(&vdy, &vx, &vo, a->mode == GELU_NONE ? gelu_none_block_avx512 : gelu_tanh_block_avx512,
                          NULL);
        return ACLNN_SUCCESS;
    }
#endif
#ifdef ACL_HAVE_AVX2_KERNELS
    if (acl_have_avx2()) {
        acl_ewise2_f32_pf(&vdy, &vx, &vo, a->mode == GELU_NONE ? gelu_none_block_avx2 : gelu_tanh_block_avx2, NULL);
        return ACLNN_SUCCESS;
    }
#endif
    acl_ewise2_f32(&vdy, &vx, &vo, a->mode == GELU_NONE ? gelu_none_block : gelu_tanh_block, NULL);
    return ACLNN_SUCCESS;
}

static aclnnStatus gelu_validate(const aclTensor *dy, const aclTensor *x, const char *approximate,
                                 const aclTensor *out, int *mode)
{
    if (!dy || !x || !approximate || !out) return ACLNN_ERR_PARAM_NULLPTR;
    /* dtypes */
    if (!acl_dtype_is_half_or_f32(dy->dtype) || !acl_dtype_is_half_or_f32(x->dtype) ||
        out->dtype != acl_promote(dy->dtype, x->dtype))
        return ACLNN_ERR_PARAM_INVALID;
    /* shapes and ranks */
#if ACLCONFORM_MUTANT == 41 /* off-by-one-limit: rank limit exclusive: rank 8 rejected */
    if (dy->ndim >= ACL_MAX_OP_RANK || x->ndim >= ACL_MAX_OP_RANK || out->ndim >= ACL_MAX_OP_RANK) return ACLNN_ERR_PARAM_INVALID;
#else
    if (!acl_rank_ok(dy) || !acl_rank_ok(x) || !acl_rank_ok(out)) return ACLNN_ERR_PARAM_INVALID;
#endif
    int64_t shape[ACL_MAX_DIMS];
    uint64_t nd;
    if (!acl_broadcast_shape(dy->dims, dy->ndim, x->dims, x->ndim, shape, &nd) || nd != out->ndim ||
        memcmp(shape, out->dims, nd * sizeof shape[0]) != 0)
        return ACLNN_ERR_PARAM_INVALID;
    /* attributes */
#if ACLCONFORM_MUTANT == 39 /* near-miss-string: approximate compared case-insensitively ("TANH", "None" accepted) */
    if (strcasecmp(approximate, "none") == 0) *mode = GELU_NONE;
    else if (strcasecmp(approximate, "tanh") == 0) *mode = GELU_TANH;
#else
    if (strcmp(approximate, "none") == 0) *mode = GELU_NONE;
    else if (strcmp(approximate, "tanh") == 0) *mode = GELU_TANH;
#endif
    else return ACLNN_ERR_PARAM_INVALID;
    if (!acl_format_ok(dy) || !acl_format_ok(x) || !acl_format_ok(out) || !acl_output_ok(out))
        return ACLNN_ERR_PARAM_INVALID;
    if (!acl_data_ok(dy) || !acl_data_ok(x) || !acl_data_ok(out)) return ACLNN_ERR_PARAM_NULLPTR;
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnGeluBackwardV2GetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *self,
    char *approximate, aclTensor *gradInput, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    if (!executor) return ACLNN_ERR_PARAM_NULLPTR;
    *executor = NULL;
    if (!workspaceSize) return ACLNN_ERR_PARAM_NULLPTR;
    gelu_args a;
    memset(&a, 0, sizeof a);
    aclnnStatus st = gelu_validate(gradOutput, self, approximate, gradInput, &a.mode);
    if (st != ACLNN_SUCCESS) return st;
    a.gradOutput = *gradOutput;
    a.self = *self;
    a.gradInput = *gradInput;
    return acl_executor_create(gelu_kernel, &a, sizeof a, 0, workspaceSize, executor);
}

aclnnStatus aclnnGeluBackwardV2(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                aclrtStream stream)
{
    (void)stream;
    return acl_executor_run(workspace, workspaceSize, executor);
}
