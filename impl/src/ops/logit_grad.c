/* aclnnLogitGrad (ops.md §2), eps rounded to f32 first, lo = eps ≥ 0 ? eps : 0, hi = 1 − lo:
 *   x, dy or eps NaN     → NaN
 *   lo ≤ x ≤ hi          → dy / (x·(1 − x))
 *   otherwise            → eps ≥ 0 ? 0 : NaN
 *
 * Evaluated in double: x·(1 − x) and the quotient carry ~3 double roundings, so the f32 result is
 * one rounding of an almost exact value (16-bit outputs: ≤ 0.5 + 2^-13 ULP).  x = ±0 and 1 give
 * ±Inf by IEEE division (x = −0: −0·1 = −0, so −Inf·sign(dy)); dy = 0 there gives 0/0 = NaN.
 *
 * The range test is exact.  For lo ≥ 2^-30, 1 − lo is exact in double (lo's last bit is
 * ≥ 2^-53).  For 0 < lo < 2^-30 the exact hi lies strictly between 1 − 2^-24 (the largest float
 * below 1) and 1, so for every float x "x ≤ hi" is "x < 1", which hi = 1 − 2^-53 decides.
 *
 * 16-bit x, dy and out (any layout not run in tiles, AVX-512): logit16 below evaluates in f32 on 16 lanes and
 * rounds once to the 16-bit dtype; its error bound is there.  Every other layout and dtype on
 * AVX-512: logit_block_avx512 evaluates in f32 with a per-lane proof of correct rounding and
 * redoes the lanes it cannot prove by logit_block (the same bits as logit_block; see there).
 * On AVX2 without AVX-512 (round 28): logit16_avx2 (logit16 on 8 lanes) and logit_step8d
 * (logit_block's double formula on 8 lanes, faster there than the f32 proof), the same bits. */
#include <math.h>
#include <string.h>

#include "aclnnop/aclnn_logit_grad.h"
#include "runtime/check.h"
#include "runtime/ewise.h"
#include "runtime/simd256.h"
#include "runtime/vecmath.h"

typedef struct {
    aclTensor x, dy, out;
    double eps;
} logit_args;

typedef struct {
    double lo, hi, outside; /* outside: 0 for eps ≥ 0, NaN for eps < 0; lo = NaN for eps NaN */
    float lo32, hi32;       /* the same range for f32-representable x: lo (an f32: eps or 0) and
                               the largest f32 ≤ hi; NaN with lo */
    bool nt;                /* f32 output written with streaming stores (acl_nt_min_bytes) */
} logit_ctx;

/* Selects only, so the loop vectorises.  A NaN eps makes lo NaN: every range test fails and the
 * outside value is NaN. */
ACL_KERNEL_CLONES static void logit_block(const void *p, int64_t n, const float *x,
                                          const float *dy, float *out)
{
    const logit_ctx *c = p;
    const double lo = c->lo, hi = c->hi, outside = c->outside;
    for (int64_t i = 0; i < n; i++) {
        double xd = x[i], g = dy[i];
        double q = g / (xd * (1.0 - xd));
#if ACLCONFORM_MUTANT == 28 /* eps-range-edge: lower bound exclusive: x == eps falls outside */
        double r = ((lo < xd) & (xd <= hi)) ? q : outside;
#else
        double r = ((lo <= xd) & (xd <= hi)) ? q : outside;
#endif
        out[i] = (float)(((xd != xd) | (g != g)) ? NAN : r);
    }
}

#ifdef ACL_HAVE_AVX512_KERNELS
/* The rules on 16 lanes of f32 x and dy: q where lo ≤ x ≤ hi, the outside value elsewhere, NAN
 * where x or dy is NaN (x ≥ lo32 and x ≤ hi32 decide lo ≤ x ≤ hi exactly for an f32 x, see
 * logit16); *valid (when not NULL) gets the lanes that keep q.  c should be a local copy in a loop
 * that stores through a pointer the compiler may think aliases it. */
ACL_AVX512_TARGET static inline __m512 logit_rules16(const logit_ctx *c, __m512 xv, __m512 g, __m512 q,
                                                     __mmask16 *valid)
{
#if ACLCONFORM_MUTANT == 28 /* eps-range-edge: lower bound exclusive: x == eps falls outside */
    __mmask16 in = _mm512_cmp_ps_mask(xv, _mm512_set1_ps(c->lo32), _CMP_GT_OQ) &
                   _mm512_cmp_ps_mask(xv, _mm512_set1_ps(c->hi32), _CMP_LE_OQ);
#else
    __mmask16 in = _mm512_cmp_ps_mask(xv, _mm512_set1_ps(c->lo32), _CMP_GE_OQ) &
                   _mm512_cmp_ps_mask(xv, _mm512_set1_ps(c->hi32), _CMP_LE_OQ);
#endif
    __mmask16 nan = _mm512_cmp_ps_mask(xv, g, _CMP_UNORD_Q);
    if (valid) *valid = in & (__mmask16)~nan;
    return _mm512_mask_mov_ps(_mm512_mask_mov_ps(_mm512_set1_ps((float)c->outside), in, q), nan, _mm512_set1_ps(NAN));
}

/* logit_block for f32 on AVX-512, in f32 on 16 lanes with a proof of correct rounding per lane
 * (issue 14, round 25).  logit_block widens to double and divides: one VDIVPD per 8 elements
 * (9.3 cycles each on Zen 4) plus the conversions, ~1.4 cycles per element in cache, which made
 * LogitGrad f32 0.92-0.96x PyTorch when memory runs in its fast mode.  Here, with d = x·(1 − x)
 * exact and Q = dy/d:
 *   y = fl(1 − x), yl = −x − (y − 1)       Fast2Sum: y + yl = 1 − x exactly
 *   dh = fl(x·y), dl = fl((x·y − dh) + x·yl)  x·y − dh exact (an FMA); |dh + dl − d| ≤ 2^-47 d
 *   r = rcp14(dh), one Newton step          |r·dh − 1| ≤ 2^-23.9
 *   q0 = fl(dy·r)                           q0 = (dy/dh)(1 + η), |η| ≤ 2^-22.9
 *   res = fl(fl(dy − q0·dh) − q0·dl)        two FMAs: (dh + dl)(dy/(dh + dl) − q0) to 2^-45.4 |dy|
 *   V = q0 + res·r                          within 2^-44.1 |Q| of Q (the correction carries r's and
 *                                           dl/dh's relative error, 2^-22.4, on a term ≤ 2^-22.9 |Q|)
 * and q± = fl(q0 + fl(res·r ± p)) with p = q0·2^-42: the inner rounding moves the sum by ≤ 2^-46.8
 * |Q|, so Q lies between the two arguments, and where q+ = q− that float is the correctly rounded
 * Q (rounding is monotonic).  Lanes where they differ (|Q| within ~2^-42 relative of a midpoint
 * between floats: about 1 in 2^17), and the lanes outside the analysis, 0 < |dy| < 2^-100 (q0
 * and res must not underflow), are redone by logit_block's double formula (logit_lanes_f64).
 * x = ±0 or 1 (dh = 0) and an infinite or NaN dy make q± NaN, so they are redone too.  dy = ±0
 * needs no redo: q0 = ±0 is the quotient, and q+ keeps its sign (see the subtraction).  Tiny x
 * needs no test: for x ≤ 2^-25, y = 1, x·y − dh = 0 and dl = fl(−x²) is off by ≤ min(x², 2^-150)
 * ≤ 2^-75 d; a subnormal dh whose reciprocal overflows gives NaN.  So every lane is either
 * correctly rounded or logit_block's own value, one f32 rounding of a value within ~2^-52
 * relative, which differs from the correctly rounded float only where Q lies that close to a
 * midpoint (none among the 2.0·10^10 pairs compared in round 25: the same bits throughout).
 * NaN x or dy gives NAN and x outside [lo, hi] the outside value, by masks as in logit16 (the
 * f32 range test is exact, see there).  The redo reads x and dy after the store, like the other
 * kernels' out-of-line lanes: an output that aliases an input is undefined (ops.md). */
#define LOGIT_V 2 /* 16-lane f32 vectors per step */
/* lane l of x and dy at x[st·l], dy[st·l] */
static __attribute__((noinline, cold)) void logit_lanes_f64(const logit_ctx *c, const float *x, const float *dy,
                                                            float *out, __mmask16 redo, int st)
{
    for (; redo; redo &= (__mmask16)(redo - 1)) {
        int l = __builtin_ctz(redo);
        logit_block(c, 1, x + st * l, dy + st * l, out + l);
    }
}

/* 32 elements (left ≥ 32) or the last left; x and dy hold them every st-th float (1, or 2 for
 * x[::2] views read in place) */
ACL_AVX512_TARGET static inline __attribute__((always_inline)) void
logit_step(const logit_ctx *c, const float *x, const float *dy, float *out, int64_t left, int st, bool nt)
{
    const __m512 one = _mm512_set1_ps(1.0f);
    __mmask16 redo[LOGIT_V], any = 0;
    for (int j = 0; j < LOGIT_V; j++) {
        __mmask16 m = acl_mask16(left - 16 * j);
        __m512 xv = st == 1 ? acl_loadu16_ps(x + 16 * j, m) : acl_loadu16_even_ps(x + 32 * j, m);
        __m512 g = st == 1 ? acl_loadu16_ps(dy + 16 * j, m) : acl_loadu16_even_ps(dy + 32 * j, m);
        __m512 y = _mm512_sub_ps(one, xv);
        __m512 nyl = _mm512_add_ps(xv, _mm512_sub_ps(y, one)); /* −yl */
        __m512 dh = _mm512_mul_ps(xv, y);
        __m512 dl = _mm512_fnmadd_ps(xv, nyl, _mm512_fmsub_ps(xv, y, dh));
        __m512 r = _mm512_rcp14_ps(dh);
        r = _mm512_fmadd_ps(r, _mm512_fnmadd_ps(dh, r, one), r);
        __m512 q0 = _mm512_mul_ps(g, r);
        __m512 res = _mm512_fnmadd_ps(q0, dl, _mm512_fnmadd_ps(q0, dh, g));
        __m512 p = _mm512_mul_ps(q0, _mm512_set1_ps(0x1p-42f));
        /* q0 − (−res·r ∓ p), the values of q0 + (res·r ± p), but for dy = ±0 (q0 = ±0, res = +0)
           −0 − (+0) keeps q0's sign where −0 + (+0) would not */
        __m512 qp = _mm512_sub_ps(q0, _mm512_fnmsub_ps(res, r, p));
        __m512 qm = _mm512_sub_ps(q0, _mm512_fnmadd_ps(res, r, p));
        __mmask16 valid;
        __m512 o = logit_rules16(c, xv, g, qp, &valid);
        /* 0 < |dy| < 2^-100: the bits of |dy| minus 1, below those of 2^-100 minus 1 (unsigned) */
        __m512i gbits = _mm512_and_si512(_mm512_castps_si512(g), _mm512_set1_epi32(0x7fffffff));
        __mmask16 tiny = _mm512_cmp_epu32_mask(_mm512_sub_epi32(gbits, _mm512_set1_epi32(1)),
                                               _mm512_set1_epi32(0x0d800000 - 1 /* 2^-100 */), _MM_CMPINT_LT);
#if ACLCONFORM_MUTANT == 63 /* precision-branch: LogitGrad f32: lanes whose rounding is not proven (finite q+ != q-) not redone */
        __mmask16 hard = _mm512_cmp_ps_mask(qp, qm, _CMP_UNORD_Q) | tiny;
#elif ACLCONFORM_MUTANT == 64 /* precision-branch: LogitGrad f32: 0 < |dy| < 2^-100 kept in the f32 evaluation (q0, res underflow) */
        __mmask16 hard = _mm512_cmp_ps_mask(qp, qm, _CMP_NEQ_UQ);
        (void)tiny;
#else
        __mmask16 hard = _mm512_cmp_ps_mask(qp, qm, _CMP_NEQ_UQ) | tiny;
#endif
        redo[j] = hard & valid & m;
        any |= redo[j];
        if (nt && m == 0xffff) _mm512_stream_ps(out + 16 * j, o);
        else _mm512_mask_storeu_ps(out + 16 * j, m, o);
    }
    if (__builtin_expect(any != 0, 0))
        for (int j = 0; j < LOGIT_V; j++)
            if (redo[j]) logit_lanes_f64(c, x + 16 * st * j, dy + 16 * st * j, out + 16 * j, redo[j], st);
}

/* n elements, element i at x[st·i] and dy[st·i] (st = 1, or 2 for x[::2] inputs read in place),
 * in steps of 32 and the tail once */
ACL_AVX512_TARGET static inline __attribute__((always_inline)) void
logit_steps(const logit_ctx *c, int64_t n, const float *x, const float *dy, float *out, int st, bool nt)
{
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) logit_step(c, x + st * i, dy + st * i, out + i, 32, st, nt);
    if (i < n) logit_step(c, x + st * i, dy + st * i, out + i, n - i, st, nt);
}

/* Streaming stores for a large output (c->nt) whose piece here starts on a 64-byte line (every
 * block but maybe the first, ewise.c): the driver fences at the end of its range.  st and nt are
 * constants in each of the four loops. */
ACL_AVX512_TARGET static inline __attribute__((always_inline)) void
logit_block_st(const void *p, int64_t n, const float *x, const float *dy, float *out, int st)
{
    const logit_ctx c = *(const logit_ctx *)p; /* a local: the stores to out cannot change it, so its
                                                  constants stay in registers */
    if (c.nt && ((uintptr_t)out & 63) == 0) logit_steps(&c, n, x, dy, out, st, true);
    else logit_steps(&c, n, x, dy, out, st, false);
}

ACL_AVX512_TARGET static void logit_block_avx512(const void *p, int64_t n, const float *x, const float *dy,
                                                 float *out)
{
    logit_block_st(p, n, x, dy, out, 1);
}

/* logit_block_avx512 for x[::2] inputs read in place (acl_ewise2_f32_pairs): element i at x[2i],
 * dy[2i].  The same arithmetic on the same values, so the same bits. */
ACL_AVX512_TARGET static void logit_pairs_avx512(const void *p, int64_t n, const float *x, const float *dy,
                                                 float *out)
{
    logit_block_st(p, n, x, dy, out, 2);
}

/* logit_block for 16-bit x, dy and out of one dtype, in f32 on 16 lanes (issue 14: the double
 * path converted through staging buffers and was slower than PyTorch's bf16 kernel).
 *
 * Error: x is exact in f32; in the range 0 ≤ x ≤ 1, 1 − x is exact for every f16 x (a multiple of
 * 2^-24 below 1) and rounds by ≤ 2^-25 relative for a bf16 x below 2^-24; x·(1 − x) and
 * dy/(x·(1 − x)) round once each
 * (≤ 2^-24 relative while normal; a subnormal f32 quotient is below every 16-bit dtype's
 * resolution at that size).  So the f32 quotient is within 3·2^-24 relative of the exact value,
 * and the final rounding to the 16-bit dtype gives ≤ 0.5 + 2·3·2^-24/2^-11 < 0.5008 ULP of f16
 * (bf16: < 0.5001), inside the 0.51 of ops.md.  Overflow: |dy|/|x(1 − x)| ≤ 65504·2^24 for f16;
 * for bf16 a quotient past FLT_MAX is +-Inf here and in the double path alike (both round to f32
 * first).  The range test is exact: x ≥ lo32 and x ≤ hi32 (x is an f32) is lo ≤ x ≤ hi.
 * Special values as logit_block: NaN x or dy gives the same NAN, x = ±0 or 1 the IEEE infinity
 * (or the default NaN for dy = 0, as the double division gives). */
ACL_AVX512_TARGET static inline void logit16(const logit_ctx *c, int64_t n, const uint16_t *x,
                                             const uint16_t *dy, uint16_t *out, bool bf)
{
    const logit_ctx lc = *c; /* a local: the 16-bit stores cannot change it (logit_rules16) */
    const __m512 one = _mm512_set1_ps(1.0f);
    for (int64_t i = 0; i < n; i += 16) {
        __mmask16 m = acl_mask16(n - i);
        __m512 xv = acl_load16_16(x + i, m, bf), g = acl_load16_16(dy + i, m, bf);
        __m512 q = _mm512_div_ps(g, _mm512_mul_ps(xv, _mm512_sub_ps(one, xv)));
        acl_store16_16(out + i, m, logit_rules16(&lc, xv, g, q, NULL), bf);
    }
}

ACL_AVX512_TARGET static void logit16_f16(const void *c, int64_t n, const uint16_t *x, const uint16_t *dy,
                                          uint16_t *out)
{
    logit16(c, n, x, dy, out, false);
}

ACL_AVX512_TARGET static void logit16_bf16(const void *c, int64_t n, const uint16_t *x, const uint16_t *dy,
                                           uint16_t *out)
{
    logit16(c, n, x, dy, out, true);
}
#endif

#ifdef ACL_HAVE_AVX2_KERNELS
/* logit_rules16 on 8 lanes (AVX2: masks are vectors of all-ones lanes), without its valid lanes:
 * no AVX2 kernel redoes lanes */
ACL_AVX2_TARGET static inline __m256 logit_rules8(const logit_ctx *c, __m256 xv, __m256 g, __m256 q)
{
#if ACLCONFORM_MUTANT == 28 /* eps-range-edge: lower bound exclusive: x == eps falls outside */
    __m256 in = _mm256_and_ps(_mm256_cmp_ps(xv, _mm256_set1_ps(c->lo32), _CMP_GT_OQ),
                              _mm256_cmp_ps(xv, _mm256_set1_ps(c->hi32), _CMP_LE_OQ));
#else
    __m256 in = _mm256_and_ps(_mm256_cmp_ps(xv, _mm256_set1_ps(c->lo32), _CMP_GE_OQ),
                              _mm256_cmp_ps(xv, _mm256_set1_ps(c->hi32), _CMP_LE_OQ));
#endif
    __m256 nan = _mm256_cmp_ps(xv, g, _CMP_UNORD_Q);
    return _mm256_blendv_ps(_mm256_blendv_ps(_mm256_set1_ps((float)c->outside), q, in), _mm256_set1_ps(NAN), nan);
}

/* 8 floats every other one (x[::2]): lane k gets p[2k] for the first `left` lanes (others 0);
 * nothing past p[2·left − 2], the view's last element, is read */
ACL_AVX2_TARGET static inline __m256 logit_load8_st(const float *p, int64_t left, int st)
{
    if (st == 1) return acl_load8_ps_left(p, left);
    int64_t span = left >= 8 ? 15 : left > 0 ? 2 * left - 1 : 0; /* floats p[0 .. span - 1] */
    __m256 a = acl_load8_ps_left(p, span), b = acl_load8_ps_left(p + 8, span - 8);
    __m256 e = _mm256_shuffle_ps(a, b, 0x88); /* a0 a2 b0 b2 | a4 a6 b4 b6 */
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), 0xd8));
}

/* LogitGrad f32 on AVX2: logit_block's double formula on 8 lanes (two vectors of 4 doubles), the
 * same operations, so logit_block's bits (and so the AVX-512 kernel's, whose lanes are the
 * correctly rounded quotient where proven and logit_block's value elsewhere); the rules on the
 * f32 x as logit_rules8 (exact, see logit16).  Round 28, Zen 3: the AVX-512 kernel's f32 form
 * with its rounding proof (VRCPPS and two Newton steps) was slower here than this division in
 * double, VDIVPD being cheaper per element on Zen 3 than on Zen 4: 16 Mi elements, 2 threads,
 * three alternating rounds, 8.4-11.5 ms (proof) and 7.6-10.9 (the portable loop) against 6.2-7.1
 * ms; in cache 6.7-10.3 and 5.2-9.4 against 4.7-5.2. */
#define LOGIT_V8 4 /* 8-lane vectors per step */
ACL_AVX2_TARGET static inline __attribute__((always_inline)) void
logit_step8d(const logit_ctx *c, const float *x, const float *dy, float *out, int64_t left, int st, bool nt)
{
    const __m256d one = _mm256_set1_pd(1.0);
    for (int j = 0; j < LOGIT_V8; j++) {
        int64_t lj = left - 8 * j;
        if (lj <= 0) break;
        __m256 xv = logit_load8_st(x + 8 * st * j, lj, st), g = logit_load8_st(dy + 8 * st * j, lj, st);
        __m256d xd[2], gd[2];
        if (st == 1) { /* contiguous: the halves widened from 16-byte loads, no VEXTRACTF128 */
            acl_load8_pd2_left(x + 8 * j, lj, xd);
            acl_load8_pd2_left(dy + 8 * j, lj, gd);
        } else {
            xd[0] = acl_lo4_pd(xv), xd[1] = acl_hi4_pd(xv);
            gd[0] = acl_lo4_pd(g), gd[1] = acl_hi4_pd(g);
        }
        __m256d q0 = _mm256_div_pd(gd[0], _mm256_mul_pd(xd[0], _mm256_sub_pd(one, xd[0])));
        __m256d q1 = _mm256_div_pd(gd[1], _mm256_mul_pd(xd[1], _mm256_sub_pd(one, xd[1])));
        __m256 o = logit_rules8(c, xv, g, acl_join4_ps(q0, q1));
        if (nt && lj >= 8) _mm256_stream_ps(out + 8 * j, o);
        else acl_store8_ps_left(out + 8 * j, lj, o);
    }
}

ACL_AVX2_TARGET static inline __attribute__((always_inline)) void
logit_block_st8(const void *p, int64_t n, const float *x, const float *dy, float *out, int st)
{
    const logit_ctx c = *(const logit_ctx *)p; /* a local (see logit_block_st) */
    bool nt = c.nt && ((uintptr_t)out & 63) == 0;
    int64_t i = 0;
    if (nt)
        for (; i + 8 * LOGIT_V8 <= n; i += 8 * LOGIT_V8) logit_step8d(&c, x + st * i, dy + st * i, out + i, 8 * LOGIT_V8, st, true);
    else
        for (; i + 8 * LOGIT_V8 <= n; i += 8 * LOGIT_V8) logit_step8d(&c, x + st * i, dy + st * i, out + i, 8 * LOGIT_V8, st, false);
    if (i < n) logit_step8d(&c, x + st * i, dy + st * i, out + i, n - i, st, false);
}

ACL_AVX2_TARGET static void logit_block_avx2(const void *p, int64_t n, const float *x, const float *dy, float *out)
{
    logit_block_st8(p, n, x, dy, out, 1);
}

ACL_AVX2_TARGET static void logit_pairs_avx2(const void *p, int64_t n, const float *x, const float *dy, float *out)
{
    logit_block_st8(p, n, x, dy, out, 2);
}

/* logit16 on 8 lanes: the same f32 operations, so the same bits */
ACL_AVX2_TARGET static inline __attribute__((always_inline)) void
logit16_avx2(const logit_ctx *c, int64_t n, const uint16_t *x, const uint16_t *dy, uint16_t *out, bool bf)
{
    const logit_ctx lc = *c;
    const __m256 one = _mm256_set1_ps(1.0f);
    int64_t i = 0;
    if (bf) /* whole steps of 16 as even and odd elements (acl_load16_bf16_eo): the lanes are independent */
        for (; i + 16 <= n; i += 16) {
            __m256 xv[2], g[2], r[2];
            acl_load16_bf16_eo(x + i, &xv[0], &xv[1]);
            acl_load16_bf16_eo(dy + i, &g[0], &g[1]);
            for (int h = 0; h < 2; h++)
                r[h] = logit_rules8(&lc, xv[h], g[h], _mm256_div_ps(g[h], _mm256_mul_ps(xv[h], _mm256_sub_ps(one, xv[h]))));
            _mm256_storeu_si256((__m256i *)(void *)(out + i), acl_pack16_bf16_eo(r[0], r[1], false));
        }
    for (; i < n; i += 8) {
        __m256 xv = acl_load8_16_left(x + i, n - i, bf), g = acl_load8_16_left(dy + i, n - i, bf);
        __m256 q = _mm256_div_ps(g, _mm256_mul_ps(xv, _mm256_sub_ps(one, xv)));
        acl_store8_16_left(out + i, n - i, logit_rules8(&lc, xv, g, q), bf);
    }
}

ACL_AVX2_TARGET static void logit16_f16_avx2(const void *c, int64_t n, const uint16_t *x, const uint16_t *dy,
                                             uint16_t *out)
{
    logit16_avx2(c, n, x, dy, out, false);
}

ACL_AVX2_TARGET static void logit16_bf16_avx2(const void *c, int64_t n, const uint16_t *x, const uint16_t *dy,
                                              uint16_t *out)
{
    logit16_avx2(c, n, x, dy, out, true);
}
#endif

static aclnnStatus logit_kernel(void *p, void *ws, uint64_t ws_size)
{
    (void)ws; (void)ws_size;
    logit_args *a = p;
    if (a->out.numel == 0) return ACLNN_SUCCESS;
    float eps = (float)a->eps;
    logit_ctx c;
    c.lo = isnan(eps) ? NAN : eps >= 0.0f ? eps : 0.0;
    if (c.lo == 0.0) c.hi = 1.0;
#if ACLCONFORM_MUTANT == 29 /* eps-range-edge: tiny eps (< 2^-30): hi = 1 - eps in double, which is 1 for eps < 2^-54 (x = 1 inside) */
    else if (c.lo < 0x1p-30) c.hi = 1.0 - c.lo;
#else
    else if (c.lo < 0x1p-30) c.hi = 1.0 - 0x1p-53;
#endif
    else c.hi = 1.0 - c.lo;
#if ACLCONFORM_MUTANT == 30 /* eps-range-edge: eps == 0 treated as negative: outside value NaN instead of 0 */
    c.outside = eps > 0.0f ? 0.0 : NAN;
#else
    c.outside = eps >= 0.0f ? 0.0 : NAN; /* NaN eps: NaN */
#endif
    acl_view vx, vdy, vo;
    acl_view_init(&vx, &a->x);
    acl_view_init(&vdy, &a->dy);
    acl_view_init(&vo, &a->out);
#ifdef ACL_HAVE_AVX512_KERNELS
    /* not in tiles: there the kernel writes a staging buffer that is read right back */
    c.nt = vo.dtype == ACL_FLOAT && acl_nt_wanted(&vo) && !acl_ewise_tiled(&vx, &vdy, &vo);
    c.lo32 = (float)c.lo; /* exact: eps rounded to f32, or 0, or NaN */
    c.hi32 = (float)c.hi;
    if ((double)c.hi32 > c.hi) c.hi32 = nextafterf(c.hi32, -INFINITY);
    if (acl_have_avx512()) {
        if (acl_ewise_all16_ok(&vx, &vdy, &vo))
            acl_ewise2_u16(&vx, &vdy, &vo, vx.dtype == ACL_BF16 ? logit16_bf16 : logit16_f16, &c, true);
        else /* x[::2] inputs with a contiguous output read in place (round 26, ewise.c); any other
                layout by the sub-block driver, not acl_ewise2_f32_pf (x[::2] inputs staged, 16 Mi
                elements, 2 threads, side by side in 5 rounds, 8.8-9.0 ms against 9.4-9.8;
                contiguous level, round 25) */
            acl_ewise2_f32_pairs(&vx, &vdy, &vo, logit_pairs_avx512, logit_block_avx512, &c);
        return ACLNN_SUCCESS;
    }
#endif
#ifdef ACL_HAVE_AVX2_KERNELS
    if (acl_have_avx2()) { /* the AVX-512 kernels' forms on 8 lanes, the same bits */
        if (acl_ewise_all16_ok(&vx, &vdy, &vo))
            acl_ewise2_u16(&vx, &vdy, &vo, vx.dtype == ACL_BF16 ? logit16_bf16_avx2 : logit16_f16_avx2, &c, false);
        else
            acl_ewise2_f32_pairs(&vx, &vdy, &vo, logit_pairs_avx2, logit_block_avx2, &c);
        return ACLNN_SUCCESS;
    }
#endif
    acl_ewise2_f32(&vx, &vdy, &vo, logit_block, &c);
    return ACLNN_SUCCESS;
}

static aclnnStatus logit_validate(const aclTensor *x, const aclTensor *dy, const aclTensor *out)
{
    if (!x || !dy || !out) return ACLNN_ERR_PARAM_NULLPTR;
#if ACLCONFORM_MUTANT == 31 /* validation: dy dtype not checked against x (mixed dtypes accepted) */
    if (!acl_dtype_is_half_or_f32(x->dtype) || !acl_dtype_is_half_or_f32(dy->dtype) || out->dtype != x->dtype)
#else
    if (!acl_dtype_is_half_or_f32(x->dtype) || dy->dtype != x->dtype || out->dtype != x->dtype)
#endif
        return ACLNN_ERR_PARAM_INVALID;
    if (!acl_rank_ok(x) || !acl_same_shape(x, dy) || !acl_same_shape(x, out))
        return ACLNN_ERR_PARAM_INVALID;
    if (!acl_format_ok(x) || !acl_format_ok(dy) || !acl_format_ok(out) || !acl_output_ok(out))
        return ACLNN_ERR_PARAM_INVALID;
    if (!acl_data_ok(x) || !acl_data_ok(dy) || !acl_data_ok(out)) return ACLNN_ERR_PARAM_NULLPTR;
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnLogitGradGetWorkspaceSize(const aclTensor *x, const aclTensor *dy, double eps,
                                           const aclTensor *out, uint64_t *workspaceSize,
                                           aclOpExecutor **executor)
{
    if (!executor) return ACLNN_ERR_PARAM_NULLPTR;
    *executor = NULL;
    if (!workspaceSize) return ACLNN_ERR_PARAM_NULLPTR;
    aclnnStatus st = logit_validate(x, dy, out);
    if (st != ACLNN_SUCCESS) return st;
    logit_args a;
    memset(&a, 0, sizeof a);
    a.x = *x;
    a.dy = *dy;
    a.out = *out;
    a.eps = eps;
    return acl_executor_create(logit_kernel, &a, sizeof a, 0, workspaceSize, executor);
}

aclnnStatus aclnnLogitGrad(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                           aclrtStream stream)
{
    (void)stream;
    return acl_executor_run(workspace, workspaceSize, executor);
}
