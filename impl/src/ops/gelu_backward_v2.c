/* aclnnGeluBackwardV2 (ops.md §4): gradInput = gradOutput · g(x), g the GELU derivative.
 *
 * The derivative and the product are evaluated in double and rounded once to f32 (then, for a
 * 16-bit output, once more by the store: ≤ 0.5 + 2^-13 ULP).  Double is what makes the tails
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
#include "runtime/simd512.h"
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
 * In the window |x - r| < 1/32 the kernels use instead the Taylor polynomial of g at r (degree 10,
 * coefficients from a 200-bit evaluation: truncation < 3e-19 relative on the window) in
 * d = (x - R_HI) - R_LO (x - R_HI exact by Sterbenz, one rounding for R_LO): g = d·P(d) is within
 * ~2 double ULP relative of g (measured, 2000 random points per root) however close x is to r. */
typedef struct {
    double hi, lo, c[10];
} gelu_root;

static const gelu_root ROOT_TANH = {-0x1.81429f9e97e4dp-1, 0x1.4f523ed77dbdcp-55,
    {0x1.b8bacd2c96b91p-2, 0x1.8cd1a2b2fff33p-2, -0x1.029615edb077ap-6, -0x1.d2b77346470abp-4,
     -0x1.104a83edc0ddcp-6, 0x1.427996dc249cep-6, 0x1.58c9ed713486cp-8, -0x1.3d8d64170bb72p-9,
     -0x1.e63f294331885p-11, 0x1.14bf895a69517p-12}};

/* the lanes of xd in the window of root rt, and there g = d·P(d) (other lanes of g kept) */
ACL_AVX512_TARGET static inline __m512d gelu_near_root(const gelu_root *rt, __m512d xd, __m512d g)
{
    __mmask8 w = _mm512_cmp_pd_mask(xd, _mm512_set1_pd(rt->hi - 0x1p-5), _CMP_GT_OQ);
    w = _mm512_mask_cmp_pd_mask(w, xd, _mm512_set1_pd(rt->hi + 0x1p-5), _CMP_LT_OQ);
    if (!w) return g;
    __m512d d = _mm512_sub_pd(_mm512_sub_pd(xd, _mm512_set1_pd(rt->hi)), _mm512_set1_pd(rt->lo));
    __m512d p = _mm512_set1_pd(rt->c[9]);
    for (int j = 8; j >= 0; j--) p = _mm512_fmadd_pd(p, d, _mm512_set1_pd(rt->c[j]));
    return _mm512_mask_mul_pd(g, w, d, p);
}

static const gelu_root ROOT_NONE = {-0x1.80ead197f00b4p-1, 0x1.13e74c58cada8p-56,
    {0x1.b9d98fa5a3215p-2, 0x1.8d9a941de3ac5p-2, -0x1.2a2ef9bb865aep-6, -0x1.d2fa4c17c7e84p-4,
     -0x1.e4088244f901dp-7, 0x1.3e346def42057p-6, 0x1.297b9d6ffaacdp-8, -0x1.258a6d85633afp-9,
     -0x1.8680f74e6b6bap-11, 0x1.86c863b66083cp-13}};

/* D(t) = M(t) - t on [0, 8), M(t) = (1 - Phi(t))/phi(t) the Mills ratio, as 8 polynomials of
 * degree 12 in s = t - (j + 1/2) on [j, j + 1) (Chebyshev fits of a 150-bit evaluation; GN_D[k][j]
 * is the coefficient of s^k on interval j).  Absolute error, fit and double evaluation: 4.4e-14
 * on [0, 1), 1.8e-15 on [1, 2), < 9e-16 beyond (D is -0.34 to 1.25 on [0, 1), and |D| > 0.04
 * outside the root window). */
static const double GN_D[13][8] __attribute__((aligned(64))) = {
    {0x1.8165af1f61b70p-2, -0x1.f7e7033e2d4d3p-1, -0x1.12a770da5cc43p+1, -0x1.9de11b7b0e90ep+1, -0x1.12653e5d3a392p+2, -0x1.54b71fcba8f89p+2, -0x1.965f3d8951376p+2, -0x1.d79c655568e4cp+2},
    {-0x1.8fd34a1c12ab1p+0, -0x1.39ed426ea1eeap+0, -0x1.1d453443cfd44p+0, -0x1.1127c05d65f5ep+0, -0x1.0b1e628e18042p+0, -0x1.07bcbb80855c0p+0, -0x1.05ac3ff23f9f6p+0, -0x1.0453e0024acdbp+0},
    {0x1.30df8d739bfa2p-2, 0x1.6944d5d7b2ed7p-4, 0x1.1841ba1bee30cp-5, 0x1.0654f85fc0336p-6, 0x1.1892c2eac23b3p-7, 0x1.4abcc73f51d5cp-8, 0x1.a36a341d96b2cp-9, 0x1.195a992b66937p-9},
    {-0x1.19e8ebd2e9286p-3, -0x1.009deec50010ap-5, -0x1.3aad9ef059336p-7, -0x1.df67301bae336p-9, -0x1.ac4cefc9980aap-10, -0x1.af2341c2f08cap-11, -0x1.db7984a7c8bf8p-12, -0x1.1996bf8045710p-12},
    {0x1.d4caa5038e6c4p-5, 0x1.519cc5895b0a6p-7, 0x1.4e54db17528b7p-9, 0x1.a4be9a9d529afp-11, 0x1.3d3be04af3241p-12, 0x1.12a4504a680fdp-13, 0x1.08bbc2aa1e70bp-14, 0x1.15d45a32585fbp-15},
    {-0x1.654c21309a76cp-6, -0x1.a00a0dc79f7e5p-9, -0x1.524eac8826dadp-11, -0x1.64014f5484479p-13, -0x1.c90a16172bacbp-15, -0x1.566ee24dea455p-16, -0x1.21cf687acc2dcp-17, -0x1.0e6225a6efc46p-18},
    {0x1.f9f4cbcf0022ep-8, 0x1.e442a959ed092p-11, 0x1.47b47d521e93fp-13, 0x1.234e8d9546417p-15, 0x1.40cbbf242bc32p-17, 0x1.a256321b19d78p-19, 0x1.382292e4e1b01p-20, 0x1.03ae498f60f07p-21},
    {-0x1.501125bec892bp-9, -0x1.0bef73ca61455p-12, -0x1.311ff281678e3p-15, -0x1.ce39a73dede7ep-18, -0x1.b7840dda712e2p-20, -0x1.f545bf90e91b5p-22, -0x1.4af9c48c8a085p-23, -0x1.ec7b7d049e8a1p-25},
    {0x1.a5f293c1d8054p-11, 0x1.1b4fed0acf8e3p-14, 0x1.12018b310739bp-17, 0x1.6455b6952ca08p-20, 0x1.264611071b7f9p-22, 0x1.26d91a7d01120p-24, 0x1.59bd32c319013p-26, 0x1.cd4685e1bfa63p-28},
    {-0x1.f6fbd74ed4858p-13, -0x1.1f3badc89e30ap-16, -0x1.dbc73a40e0b63p-20, -0x1.0b5df81de64a7p-22, -0x1.8191abd5194c4p-25, -0x1.54ca3f2018502p-27, -0x1.63faaf6e5fbedp-29, -0x1.aae8d39a4b501p-31},
    {0x1.1ed89382a01d5p-14, 0x1.18a30dca475c8p-18, 0x1.90ad546b08379p-22, 0x1.875cd002c4fe6p-25, 0x1.ef0525f9c4ca0p-28, 0x1.835f8f7be7857p-30, 0x1.6980a5de47af3p-32, 0x1.8695ecc9a19e7p-34},
    {-0x1.4ba6d8be7b30ap-16, -0x1.14126cc9e272cp-20, -0x1.526cd92591133p-24, -0x1.1eaa975445e93p-27, -0x1.3dae8eb71497dp-30, -0x1.b7f80b8f6f6eap-33, -0x1.6ebc195f3c39ap-35, -0x1.64f6fbf352c49p-37},
    {0x1.5bc8b9f2403eep-18, 0x1.f7181cc09b766p-23, 0x1.0d17003f78448p-26, 0x1.904a03c42287ep-30, 0x1.885e34a266769p-33, 0x1.e4600111f180dp-36, 0x1.6aa8d9313fc40p-38, 0x1.3f666a8af24f7p-40},
};

/* dy·g of 8 lanes rounded to f32, with gelu_apply's §5a fix-up: g underflowed for a finite
 * x < -1 and dy infinite gives -dy, not Inf·0 (rare: tested only when some g is 0). */
ACL_AVX512_TARGET static inline __m256 gelu_product8(__m512d g0, __m512d g, __m512d xd)
{
    const __m512d zero = _mm512_setzero_pd();
    __m512d r = _mm512_mul_pd(g0, g);
    __mmask8 fix = _mm512_cmp_pd_mask(g, zero, _CMP_EQ_OQ);
    if (fix) {
        fix &= _mm512_cmp_pd_mask(_mm512_abs_pd(g0), _mm512_set1_pd(INFINITY), _CMP_EQ_OQ) &
               _mm512_cmp_pd_mask(xd, _mm512_set1_pd(-1.0), _CMP_LT_OQ) &
               _mm512_cmp_pd_mask(xd, _mm512_set1_pd(-INFINITY), _CMP_GT_OQ);
#if ACLCONFORM_MUTANT == 40 /* special-value: f32 path: Inf gradOutput times an underflowed g gives NaN (no 5a fix-up) */
        fix = 0;
#endif
        r = _mm512_mask_sub_pd(r, fix, zero, g0);
    }
    return _mm512_cvtpd_ps(r);
}

/* gelu_none_block with AVX-512 doubles, 8 elements per step.  With t = |x|, phi = e^{-x²/2}/√(2π)
 * (x² and x²/2 exact; acl_exp8, < 2^-50 relative):
 *   x < 0:   g = Phi(x) + x·phi(x) = phi·(M(t) - t) = phi·D(t)
 *   x ≥ 0:   g = 1 - Phi(-x) + x·phi(x) = 1 - phi·D(t)
 * D from GN_D (selected per lane by a permute of each coefficient vector).  x ≥ 0 uses
 * t = min(|x|, 8⁻): beyond 8 the clamped D is off by < |x| while phi < 5.1e-15·e^{-8(|x|-8)}, so
 * g = 1 - phi·D is off by < 2^-50.  x ≤ -8 (phi·D then needs relative accuracy that the
 * clamp loses; -Inf too) is evaluated per lane by gelu_g_none, and the root window by
 * gelu_near_root.  Elsewhere g is within ~2^-40 relative of its value (worst next to the
 * window, from D's 4.4e-14 on [0, 1)): < 2^-16 ULP of f32 before the single rounding. */
ACL_AVX512_TARGET static void gelu_none_block_avx512(const void *ctx, int64_t n, const float *dy,
                                                     const float *x, float *out)
{
    (void)ctx;
    const __m512d one = _mm512_set1_pd(1.0), zero = _mm512_setzero_pd();
    const __m512d mhalf = _mm512_set1_pd(-0.5), inv_sqrt_2pi = _mm512_set1_pd(0.39894228040143267794);
    const __m512d tmax = _mm512_set1_pd(0x1.fffffffffffffp+2), half = _mm512_set1_pd(0.5);
    const __m512d m8 = _mm512_set1_pd(-8.0);
    for (int64_t i = 0; i < n; i += 8) {
        __mmask8 m = acl_mask8(n - i);
        __m512d xd = _mm512_cvtps_pd(_mm256_maskz_loadu_ps(m, x + i));
        __m512d g0 = _mm512_cvtps_pd(_mm256_maskz_loadu_ps(m, dy + i));
        __m512d t = _mm512_min_pd(tmax, _mm512_abs_pd(xd)); /* NaN stays NaN */
        __m512d jf = _mm512_roundscale_pd(t, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
        __m512i j = _mm512_cvttpd_epi64(jf); /* NaN: an index whose low 3 bits are 0 */
        __m512d s = _mm512_sub_pd(_mm512_sub_pd(t, jf), half);
        __m512d d = _mm512_permutexvar_pd(j, _mm512_load_pd(GN_D[12]));
        for (int k = 11; k >= 0; k--)
            d = _mm512_fmadd_pd(d, s, _mm512_permutexvar_pd(j, _mm512_load_pd(GN_D[k])));
        __m512d phi = _mm512_mul_pd(acl_exp8(_mm512_mul_pd(mhalf, _mm512_mul_pd(xd, xd))), inv_sqrt_2pi);
        __m512d pd = _mm512_mul_pd(phi, d);
        __m512d g = _mm512_mask_sub_pd(pd, _mm512_cmp_pd_mask(xd, zero, _CMP_GE_OQ), one, pd);
        g = gelu_near_root(&ROOT_NONE, xd, g);
        __mmask8 far = _mm512_mask_cmp_pd_mask(m, xd, m8, _CMP_LE_OQ);
        if (far) {
            double gl[8], xl[8];
            _mm512_storeu_pd(gl, g);
            _mm512_storeu_pd(xl, xd);
            for (int l = 0; l < 8; l++)
                if (far >> l & 1) gl[l] = gelu_g_none(xl[l]);
            g = _mm512_loadu_pd(gl);
        }
        _mm256_mask_storeu_ps(out + i, m, gelu_product8(g0, g, xd));
    }
}

/* gelu_tanh_block with AVX-512 doubles, 8 elements per step (the tail under a mask: the same
 * instructions for every element).  Same quantities as gelu_g_tanh, regrouped to save operations:
 *   v = 2u = x·(2k + 2kc·x²),  e = e^{-|v|} (acl_exp8, < 2^-50 relative),  q = 1/(1 + e)
 *                                                    (one correctly rounded division),
 *   w = x·(2k + 6kc·x²)        (= 0.5·x·k·(1 + 3c·x²)·4)
 *   g = q·((u ≥ 0 ? 1 : e) + w·e·q)       = half_1p + t2 of gelu_g_tanh
 * Every factor is within a few 2^-52 relative of its exact value, so g is within ~2^-49 of
 * (|half_1p| + |t2|): relative away from the root (the single rounding to f32 does not see it,
 * < 2^-20 ULP); near the root, where that absolute error would show, gelu_near_root.  w·e is forced to 0
 * where e is 0 (x = ±Inf: no Inf·0; for finite x it is 0 anyway). */
ACL_AVX512_TARGET static void gelu_tanh_block_avx512(const void *ctx, int64_t n, const float *dy,
                                                     const float *x, float *out)
{
    (void)ctx;
    const __m512d K2 = _mm512_set1_pd(2.0 * 0.79788456080286535588);
    const __m512d CK2 = _mm512_set1_pd(2.0 * 0.79788456080286535588 * 0.044715);
    const __m512d CK6 = _mm512_set1_pd(6.0 * 0.79788456080286535588 * 0.044715);
    const __m512d one = _mm512_set1_pd(1.0), zero = _mm512_setzero_pd();
    const __m512d sign = _mm512_set1_pd(-0.0);
    for (int64_t i = 0; i < n; i += 8) {
        __mmask8 m = acl_mask8(n - i);
        __m512d xd = _mm512_cvtps_pd(_mm256_maskz_loadu_ps(m, x + i));
        __m512d g0 = _mm512_cvtps_pd(_mm256_maskz_loadu_ps(m, dy + i));
        __m512d x2 = _mm512_mul_pd(xd, xd);
        __m512d v = _mm512_mul_pd(xd, _mm512_fmadd_pd(CK2, x2, K2));
        __m512d w = _mm512_mul_pd(xd, _mm512_fmadd_pd(CK6, x2, K2));
        __m512d e = acl_exp8(_mm512_or_pd(v, sign));
        __m512d q = _mm512_div_pd(one, _mm512_add_pd(one, e));
        __m512d sel = _mm512_mask_mov_pd(e, _mm512_cmp_pd_mask(v, zero, _CMP_GE_OQ), one);
        __m512d we = _mm512_maskz_mul_pd(_mm512_cmp_pd_mask(e, zero, _CMP_NEQ_UQ), w, e);
        __m512d g = gelu_near_root(&ROOT_TANH, xd, _mm512_mul_pd(q, _mm512_fmadd_pd(we, q, sel)));
#if ACLCONFORM_MUTANT == 38 /* mode-confusion: tanh mode uses the erf derivative for |x| > 3 */
        {
            double gl[8], xl[8];
            _mm512_storeu_pd(gl, g);
            _mm512_storeu_pd(xl, xd);
            for (int l = 0; l < 8; l++)
                if (fabs(xl[l]) > 3.0) gl[l] = gelu_g_none(xl[l]);
            g = _mm512_loadu_pd(gl);
        }
#endif
        _mm256_mask_storeu_ps(out + i, m, gelu_product8(g0, g, xd));
    }
}
#endif

/* 16-bit x: g(x) depends on x alone, and x takes at most 65536 values, so g is tabulated once per
 * process for every bit pattern (by the same double evaluation as above) and the kernel is a
 * table load, a double product and the §5a fix-up: the same bits as evaluating g per element. */
typedef struct {
    const double *g;    /* g of every bit pattern */
    uint32_t one, inf;  /* |x| bits of 1.0 and +Inf in the dtype */
} gelu_lut;

static double g_lut[2][2][65536]; /* [mode][0 = f16, 1 = bf16] */
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

ACL_KERNEL_CLONES static void gelu_lut_block(const void *ctx, int64_t n, const float *dy,
                                             const uint16_t *xb, float *out)
{
    const gelu_lut *c = ctx;
    const double *tab = c->g;
    const uint32_t one = c->one, inf = c->inf;
    for (int64_t i = 0; i < n; i++) {
        uint32_t h = xb[i], m = h & 0x7fffu;
        double g = tab[h];
        double r = (double)dy[i] * g;
        /* gelu_apply's fix: g underflowed for a finite x < -1 and dy is infinite */
        bool fix = (g == 0.0) & (fabsf(dy[i]) == INFINITY) & (h > 0x7fffu) & (m > one) & (m < inf);
        out[i] = (float)(fix ? -(double)dy[i] : r);
    }
}

#ifdef ACL_HAVE_AVX512_KERNELS
/* gelu_lut_block for 16-bit gradOutput and gradInput of x's dtype, converting in registers:
 * the same table value, the same double product, the same §5a fix-up, rounded to f32 and then
 * to the 16-bit dtype exactly as the staged path (acl_store8_16 = acl_cvt_f32_to_*). */
ACL_AVX512_TARGET static inline void gelu_lut16(const gelu_lut *c, int64_t n, const uint16_t *dy,
                                                const uint16_t *xb, uint16_t *out, bool bf)
{
    const double *tab = c->g;
    const __m512d zero = _mm512_setzero_pd();
    for (int64_t i = 0; i < n; i += 8) {
        __mmask8 m = acl_mask8(n - i);
        __m512d dyd = _mm512_cvtps_pd(acl_load8_16(dy + i, m, bf));
        __m512d g = acl_table8(tab, xb + i, m);
        __m512d r = _mm512_mul_pd(dyd, g);
        __mmask8 z = _mm512_cmp_pd_mask(g, zero, _CMP_EQ_OQ) & m;
        if (z) { /* g underflowed (x < -38 or so): gelu_lut_block's fix-up per lane */
            double rl[8], dl[8];
            _mm512_storeu_pd(rl, r);
            _mm512_storeu_pd(dl, dyd);
            for (int l = 0; l < 8; l++) {
                uint32_t h = xb[i + l < n ? i + l : i], mm = h & 0x7fffu;
                if ((z >> l & 1) && fabs(dl[l]) == INFINITY && h > 0x7fffu && mm > c->one && mm < c->inf)
                    rl[l] = -dl[l];
            }
            r = _mm512_loadu_pd(rl);
        }
        acl_store8_16(out + i, m, _mm512_cvtpd_ps(r), bf);
    }
}

ACL_AVX512_TARGET static void gelu_lut16_f16(const void *ctx, int64_t n, const uint16_t *dy,
                                             const uint16_t *xb, uint16_t *out)
{
    gelu_lut16(ctx, n, dy, xb, out, false);
}

ACL_AVX512_TARGET static void gelu_lut16_bf16(const void *ctx, int64_t n, const uint16_t *dy,
                                              const uint16_t *xb, uint16_t *out)
{
    gelu_lut16(ctx, n, dy, xb, out, true);
}
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
    if (acl_ewise_raw16_ok(&vx)) {
        int bf = vx.dtype == ACL_BF16;
        gelu_lut c = {gelu_table(a->mode, bf), bf ? 0x3f80u : 0x3c00u, bf ? 0x7f80u : 0x7c00u};
#ifdef ACL_HAVE_AVX512_KERNELS
        if (acl_ewise_all16_ok(&vdy, &vx, &vo) && acl_have_avx512()) {
            acl_ewise2_u16(&vdy, &vx, &vo, bf ? gelu_lut16_bf16 : gelu_lut16_f16, &c);
            return ACLNN_SUCCESS;
        }
#endif
        acl_ewise2_f32_u16(&vdy, &vx, &vo, gelu_lut_block, &c);
        return ACLNN_SUCCESS;
    }
    acl_ewise_f32_fn fn = a->mode == GELU_NONE ? gelu_none_block : gelu_tanh_block;
#ifdef ACL_HAVE_AVX512_KERNELS
    if (acl_have_avx512()) fn = a->mode == GELU_NONE ? gelu_none_block_avx512 : gelu_tanh_block_avx512;
#endif
    acl_ewise2_f32(&vdy, &vx, &vo, fn, NULL);
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
