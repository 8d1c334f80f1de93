/* Hand-written AVX-512 double-precision math for the f32 elementwise kernels (issue 14).
 *
 * The f32 kernels evaluate their formula in double and round once to f32, so the double math
 * needs only ~2^-45 relative accuracy, not libm's 2^-53: the result before the final rounding is
 * then within 2^-45·2^24 = 2^-21 ULP of f32 of the exact value, invisible in every f32/f16/bf16
 * result except in the rare half-way cases the old libmvec form (≤ 4 double ULP) had as well.
 *
 * Functions here carry ACL_AVX512_TARGET and are inlined into kernels with the same attribute;
 * callers choose them at run time with acl_have_avx512() and keep the portable loop as the
 * fallback.  They are the same code for every element and every thread count (tails run the same
 * instructions under a mask), so results never depend on the partition. */
#ifndef ACL_SIMD512_H
#define ACL_SIMD512_H

#if defined(__x86_64__) && defined(__GNUC__)
#define ACL_HAVE_AVX512_KERNELS 1
#include <immintrin.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ewise.h"

/* avx512bf16 is in the target so that the f32 -> bf16 stores below can use VCVTNEPS2BF16; they
 * execute it only when acl_bf16_hw is set (the CPU has it): GCC emits that extension's
 * instructions only for its intrinsics, never on its own. */
#ifdef ACL_EMULATE_AVX512 /* the tests' software AVX-512 (simd512_emu.h) */
#include "simd512_emu.h"
#define ACL_AVX512_TARGET ACL_EMU_TARGET
#else
#define ACL_AVX512_TARGET __attribute__((target("avx512f,avx512dq,avx512vl,avx512bw,avx512bf16,fma,f16c,bmi")))
#endif

/* AVX-512 F/DQ/VL/BW with FMA and F16C, decided once (same answer on every thread); false when
 * the environment variable ACLCONFORM_NO_AVX512 is set (the AVX2 or portable kernels, for
 * testing) or acl_simd_set_cap (simd256.h) capped the kernels below AVX-512. */
bool acl_have_avx512(void);

/* The CPU has AVX512-BF16 too, and the environment variable ACLCONFORM_NO_AVX512BF16 is not set
 * (the software bf16 stores, for testing): set once at load time, read by every bf16 store. */
extern bool acl_bf16_hw;

/* 2^(j/8), j = 0..7, in lane j. */
ACL_AVX512_TARGET static inline __m512d acl_exp8_table(void)
{
    return _mm512_set_pd(0x1.d5818dcfba487p+0, 0x1.ae89f995ad3adp+0, 0x1.8ace5422aa0dbp+0, 0x1.6a09e667f3bcdp+0,
                         0x1.4bfdad5362a27p+0, 0x1.306fe0a31b715p+0, 0x1.172b83c7d517bp+0, 0x1.0000000000000p+0);
}

/* The reduction of acl_exp8_dd: x clamped to [-1100, 1100], k = round(8x/ln2)
 * (*k, and in the low mantissa bits of *ks, round to nearest even), r = x - k·ln2/8 in two FMAs
 * (ln2/8 - C_HI - C_LO < 2^-100).  The clamp keeps NaN. */
ACL_AVX512_TARGET static inline __m512d acl_exp8_reduce(__m512d x, __m512d *ks, __m512d *k)
{
    const __m512d C_HI = _mm512_set1_pd(0x1.62e42fefa3800p-4), C_LO = _mm512_set1_pd(0x1.ef35793c76730p-48);
    const __m512d SHIFT = _mm512_set1_pd(0x1.8p52);
    x = _mm512_max_pd(_mm512_set1_pd(-1100.0), x);
    x = _mm512_min_pd(_mm512_set1_pd(1100.0), x);
    *ks = _mm512_fmadd_pd(x, _mm512_set1_pd(0x1.71547652b82fep+3), SHIFT);
    *k = _mm512_sub_pd(*ks, SHIFT);
    __m512d r = _mm512_fnmadd_pd(*k, C_HI, x);
    return _mm512_fnmadd_pd(*k, C_LO, r);
}

/* 8 lanes with AVX-512 (a possibly partial last vector): the mask of the left lanes still to do;
 * 0 when none is left (left ≤ 0: a step's later vectors past the end of a tail). */
ACL_AVX512_TARGET static inline __mmask8 acl_mask8(int64_t left)
{
    return left >= 8 ? 0xff : left > 0 ? (__mmask8)((1u << left) - 1u) : 0;
}
ACL_AVX512_TARGET static inline __mmask16 acl_mask16(int64_t left)
{
    return left >= 16 ? 0xffff : left > 0 ? (__mmask16)((1u << left) - 1u) : 0;
}

/* c·2^(n/16) = c·2^(j/16)·2^(n>>4) for n in the low mantissa bits of nm, from tb[j] = the bits of
 * c·2^(j/16) minus j<<48 (64-byte aligned): one two-table permute and an integer add of nm's
 * bits << 48 (see acl_expneg8_fast).  c·2^(n/16) must be normal. */
ACL_AVX512_TARGET static inline __m512d acl_exp2_16th_tb(const uint64_t *tb, __m512d nm)
{
    __m512i nb = _mm512_castpd_si512(nm);
    return _mm512_castsi512_pd(_mm512_add_epi64(
        _mm512_permutex2var_epi64(_mm512_load_si512(tb), nb, _mm512_load_si512(tb + 8)), _mm512_slli_epi64(nb, 48)));
}

/* 2^(n/16) (c = 1) */
static const uint64_t acl_exp2_16th_bits[16] __attribute__((aligned(64), unused)) = {
    0x3ff0000000000000u, 0x3fefb5586cf9890fu, 0x3fef72b83c7d517bu, 0x3fef387a6e756238u,
    0x3fef06fe0a31b715u, 0x3feedea64c123422u, 0x3feebfdad5362a27u, 0x3feeab07dd485429u,
    0x3feea09e667f3bcdu, 0x3feea11473eb0187u, 0x3feeace5422aa0dbu, 0x3feec49182a3f090u,
    0x3feee89f995ad3adu, 0x3fef199bdd85529cu, 0x3fef5818dcfba487u, 0x3fefa4afa2a490dau};
ACL_AVX512_TARGET static inline __m512d acl_exp2_16th(__m512d nm)
{
    return acl_exp2_16th_tb(acl_exp2_16th_bits, nm);
}

/* e^r ≈ 1 + r + ACL_EXP16_C2·r² + ACL_EXP16_C3·r³ + ACL_EXP16_C4·r⁴ on |r| ≤ ln2/32
 * (scripts/fit_gelu_none.py prints them) */
#define ACL_EXP16_C2 0x1.00000006d9aaap-1
#define ACL_EXP16_C3 0x1.55571d834a8f6p-3
#define ACL_EXP16_C4 0x1.5552101b791cep-5

/* the reduction of acl_expneg8_fast and acl_logistic8_fast: n = round(-16y/ln2) in the low
 * mantissa bits of nm (acl_exp16_nm), then r = -y - n·ln2/16 (acl_exp16_r) */
ACL_AVX512_TARGET static inline __m512d acl_exp16_nm(__m512d y)
{
    return _mm512_fmadd_pd(y, _mm512_set1_pd(-0x1.71547652b82fep+4), _mm512_set1_pd(0x1.8p52));
}
ACL_AVX512_TARGET static inline __m512d acl_exp16_r(__m512d y, __m512d nm)
{
    return _mm512_fnmsub_pd(_mm512_sub_pd(nm, _mm512_set1_pd(0x1.8p52)), _mm512_set1_pd(0x1.62e42fefa39efp-5), y);
}

/* e^r by the degree-4 polynomial (Horner, four FMAs) */
ACL_AVX512_TARGET static inline __m512d acl_exp16_poly(__m512d r)
{
    const __m512d one = _mm512_set1_pd(1.0);
    __m512d p = _mm512_fmadd_pd(_mm512_set1_pd(ACL_EXP16_C4), r, _mm512_set1_pd(ACL_EXP16_C3));
    p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(ACL_EXP16_C2));
    return _mm512_fmadd_pd(_mm512_fmadd_pd(p, r, one), r, one);
}

/* r, and 2^(n/16) in *scale */
ACL_AVX512_TARGET static inline __m512d acl_expneg8_reduce16(__m512d y, __m512d *scale)
{
    __m512d nm = acl_exp16_nm(y);
    *scale = acl_exp2_16th(nm);
    return acl_exp16_r(y, nm);
}

/* e^-y for double y in [-708, 708] or NaN (callers clamp), to 2^-37 relative: enough for the f32
 * kernels whose result is rounded once from double (< 2^-13 ULP of f32 before that rounding),
 * not for f64 results (acl_exp8_dd).  Four operations fewer than a 2^-50 exp (degree 7):
 *   n = round(-16y/ln2) in the low mantissa bits of nm (the magic 1.5·2^52, whose low 16 bits are
 *   0), r = -y - n·ln2/16 in one FMA (|n| < 2^14: the error of the double ln2/16 times n is
 *   < 2^-43.5), |r| ≤ ln2/32 + 2^-43;  e^r by a degree-4 minimax polynomial (relative 2^-37.5 on
 *   that interval, a Lawson-weighted fit to mpmath);  2^(n/16) = 2^(j/16)·2^(n>>4), j = n mod 16,
 *   by one two-table permute (indexed by nm's low 4 bits) of the bits of 2^(j/16) minus j<<48 and
 *   one integer add of nm's bits << 48 (= n<<48 = ((n>>4)<<52) + (j<<48), modulo 2^64 for a
 *   negative n): the exponent field gets n>>4 exactly, the result stays normal and finite for
 *   |y| ≤ 708.  The negation is folded into the constants and into r's FMA (-(n·ln2/16) - y): no
 *   operation, and the same bits as the same steps on x = -y.  NaN stays NaN (through r).
 * Returned as two factors, e^-y = *scale · P: a caller that adds to e^-y does it in the same FMA
 * (SoftplusBackward's 1 + e^-y, one operation and one rounding less). */
ACL_AVX512_TARGET static inline __m512d acl_expneg8_fast(__m512d y, __m512d *scale)
{
    return acl_exp16_poly(acl_expneg8_reduce16(y, scale));
}

/* The logistic 1/(1 + e^-y) for double y in [-708, 708] (callers clamp).  With acl_expneg8_fast's
 * reduction and polynomial, e^-y = 2^(n/16)·P(r), P of degree 4 (relative 2^-37.5 on
 * |r| ≤ ln2/32); the reduction's error, |n| times that of the double ln2/16 (2^-59.3), is at most
 * 2^-45.3 (y = 708).  Then 1/(1 + e^-y) = s/(s + P) with s = 2^(-n/16), read from the same table
 * for -n (nm' = 3·2^52 - nm = 1.5·2^52 - n, exact: one add-pipe operation): an add and the
 * division, where 1/(1 + 2^(n/16)·P) takes an FMA and the division (round 21, Gelu tanh f32, L1,
 * 1 thread: 3.12 -> 3.07 cycles per element, the same f32 results).  The result is within 2^-37
 * relative of the logistic (tests/unit/test_simd512.c measures it), and s and the result stay
 * normal for |y| ≤ 708 (s ≥ 2^-1021.5).  Rounds 21-23 used a degree-5 P (2^-47 relative, one
 * FMA more): round 24 took the degree-4 one for Gelu tanh f32, whose g then carries the same
 * 2^-37 exp as Gelu none f32's (why that is enough: gelu_tanh_steps). */
ACL_AVX512_TARGET static inline __m512d acl_logistic8_fast(__m512d y)
{
    __m512d nm = acl_exp16_nm(y);
    __m512d s = acl_exp2_16th(_mm512_sub_pd(_mm512_set1_pd(0x1.8p53), nm));
    __m512d p = acl_exp16_poly(acl_exp16_r(y, nm));
    return _mm512_div_pd(s, _mm512_add_pd(s, p));
}

/* acl_expneg8_fast(y/2) for y in [0, 1400] (Gelu's t², at most 64), one multiply less: with
 * n = round(-8y/ln2) and s = y + n·ln2/8 = -2r, e^r is the same polynomial in s with the coefficient
 * of s^k multiplied by (-1/2)^k (exact): c·(s⁴ + a3·s³ + a2·s² + a1·s + a0), c = ACL_EXP16_C4/16.
 * Round 23: the monic quartic in Knuth's adapted form (TAOCP vol. 2, 4.6.4), y = (s + A0)·s + A1,
 * u = (y + s + A2)·y + A3: two FMAs and three adds where Horner takes four FMAs, and c folded into
 * the table (c·2^(j/16) rounded once, minus j<<48, as acl_exp2_16th's; scripts/fit_gelu_none.py
 * prints both from ACL_EXP16_C2..C4).  The adds run on this CPU's add pipes, beside the FMA pipes:
 * Gelu none f32 in L1, 1 thread, 3.20 -> 3.12 cycles per element.  u is ~384 and its largest
 * term ~4093 (A3), so the adapted form's rounding is ~11 double ULP of u, 2^-49.5: within the
 * polynomial's own 2^-37.5 (tests/unit/test_simd512.c measures the function against expl).
 * The table's values c·2^(j/16) ≥ 2^-8.6 keep c·2^(n/16) normal for y ≤ 1400. */
#define ACL_EXPNH_A0 -0x1.2003ca172888ap+2
#define ACL_EXPNH_A1 -0x1.76ffefb98855bp+5
#define ACL_EXPNH_A2 0x1.f7ffe1a48f641p+6
#define ACL_EXPNH_A3 0x1.ff9fc111d0eb3p+11
static const uint64_t acl_expnh_bits[16] __attribute__((aligned(64), unused)) = {
    0x3f65552101b791ceu, 0x3f6546e9ec9bda3cu, 0x3f65436740a12c14u, 0x3f654b1251d5f800u,
    0x3f655e69d36e1aaeu, 0x3f657df214a4e40cu, 0x3f65aa3540512bedu, 0x3f65e3c39f4a0137u,
    0x3f662b33ddbbdafeu, 0x3f668123538f9c83u, 0x3f66731b28031b5fu, 0x3f662d8c34569e23u,
    0x3f65f03e65e92c3bu, 0x3f65bb8f4b4ea427u, 0x3f658fe0977cda92u, 0x3f656d9850be12d2u};
ACL_AVX512_TARGET static inline __m512d acl_exp8_fast_nhalf(__m512d y)
{
    const uint64_t *tb = acl_expnh_bits;
    const __m512d magic = _mm512_set1_pd(0x1.8p52);
    __m512d nm = _mm512_fmadd_pd(y, _mm512_set1_pd(-0x1.71547652b82fep+3), magic);
    __m512d s = _mm512_fmadd_pd(_mm512_sub_pd(nm, magic), _mm512_set1_pd(0x1.62e42fefa39efp-4), y);
    __m512d c2n = acl_exp2_16th_tb(tb, nm);
    __m512d u = _mm512_fmadd_pd(_mm512_add_pd(s, _mm512_set1_pd(ACL_EXPNH_A0)), s, _mm512_set1_pd(ACL_EXPNH_A1));
    u = _mm512_fmadd_pd(_mm512_add_pd(u, _mm512_add_pd(s, _mm512_set1_pd(ACL_EXPNH_A2))), u, _mm512_set1_pd(ACL_EXPNH_A3));
    return _mm512_mul_pd(c2n, u);
}

/* Loads of 8 lanes under mask m (others 0): a plain load when all 8 are wanted, the masked load
 * only for a partial last vector.  On this CPU (Zen 4) a masked load costs more than a plain one:
 * Gelu none f32 took 8 % less time in cache with the plain load in its main loop (one process,
 * alternating builds).  The values are the same either way. */
ACL_AVX512_TARGET static inline __m256 acl_loadu8_ps(const float *p, __mmask8 m)
{
    return m == 0xff ? _mm256_loadu_ps(p) : _mm256_maskz_loadu_ps(m, p);
}

ACL_AVX512_TARGET static inline __m512d acl_loadu8_pd(const double *p, __mmask8 m)
{
    return m == 0xff ? _mm512_loadu_pd(p) : _mm512_maskz_loadu_pd(m, p);
}

/* a·b in every lane with a as the first source operand: where both are NaN the result is a's
 * (quiet) NaN.  A commutative product written in C may be emitted with its operands in either
 * order, and differently in each inlined copy of a kernel's step (whole steps, the tail, several
 * vectors per pass); which copy an element meets depends on the block grid, that is on the
 * output's address, so a NaN result would too (round 18: the ASan build's Gelu f16 tail did it). */
#ifndef ACL_EMULATE_AVX512
ACL_AVX512_TARGET static inline __m512d acl_mul_first_pd(__m512d a, __m512d b)
{
    __m512d r;
    __asm__("vmulpd {%2, %1, %0|%0, %1, %2}" : "=v"(r) : "v"(a), "v"(b));
    return r;
}

ACL_AVX512_TARGET static inline __m512 acl_mul_first_ps(__m512 a, __m512 b)
{
    __m512 r;
    __asm__("vmulps {%2, %1, %0|%0, %1, %2}" : "=v"(r) : "v"(a), "v"(b));
    return r;
}
#else /* the same instruction on the two 256-bit halves */
ACL_EMU_HALVES2(acl_mul_first_pd, __m512d, __m256d, acl_emu_mul_first_pd4)
ACL_EMU_HALVES2(acl_mul_first_ps, __m512, __m256, acl_emu_mul_first_ps8)
#endif

ACL_AVX512_TARGET static inline __m512 acl_loadu16_ps(const float *p, __mmask16 m)
{
    return m == 0xffff ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(m, p);
}

/* The 8 low bits of m spread to the even bits of a 16-bit mask (bit k to bit 2k). */
static inline __mmask16 acl_mask_even16(unsigned m)
{
    m &= 0xff;
    m = (m | m << 4) & 0x0f0f;
    m = (m | m << 2) & 0x3333;
    return (__mmask16)((m | m << 1) & 0x5555);
}

/* acl_loadu16_ps for every other float (x[::2]): lane k under m gets p[2k].  Two loads and a
 * two-table permute; the odd floats after the last lane's are never read (the last element's
 * partner may lie past the storage), and in a tail neither are those of masked-off lanes. */
ACL_AVX512_TARGET static inline __m512 acl_loadu16_even_ps(const float *p, __mmask16 m)
{
    const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    __m512 lo = m == 0xffff ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(acl_mask_even16(m), p);
    __m512 hi = _mm512_maskz_loadu_ps(m == 0xffff ? (__mmask16)0x7fff : acl_mask_even16(m >> 8), p + 16);
    return _mm512_permutex2var_ps(lo, even, hi);
}

/* An elementwise kernel as whole 8-lane steps under the constant mask 0xff (plain loads and
 * stores once inlined) and the tail once under its mask: carrying a variable mask through every
 * step cost Gelu none f32 8 % in cache.  step is a static inline function; the driver is inlined
 * into the kernel, so the call through the pointer is a direct, inlined one.  For the f32 kernels
 * (acl_ewise2_f32); the all-16-bit kernels step 16 lanes with ACL_STEPS_LEFT. */
typedef void (*acl_step8_f32)(const void *ctx, const float *dy, const float *x, float *out, __mmask8 m);
ACL_AVX512_TARGET static inline __attribute__((always_inline)) void
acl_steps8_f32(const void *ctx, int64_t n, const float *dy, const float *x, float *out, acl_step8_f32 step)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) step(ctx, dy + i, x + i, out + i, 0xff);
    if (i < n) step(ctx, dy + i, x + i, out + i, acl_mask8(n - i));
}

/* The same driver for a step of W elements that takes the count left instead of a mask
 * (step(ctx, dy, x, out, left): a whole step when left ≥ W, so its masks are constants once
 * inlined; the tail once with left < W). */
#define ACL_STEPS_LEFT(W, step, ctx, n, dy, x, out)                                                 \
    do {                                                                                            \
        int64_t i_ = 0;                                                                             \
        for (; i_ + (W) <= (n); i_ += (W)) step(ctx, (dy) + i_, (x) + i_, (out) + i_, (W));          \
        if (i_ < (n)) step(ctx, (dy) + i_, (x) + i_, (out) + i_, (n) - i_);                          \
    } while (0)

/* ACL_STEPS_LEFT for a kernel that prefetches its inputs itself: each whole step of W elements
 * after prefetch(a, b) of its start (the prefetch covering one step's span of each input:
 * acl_prefetch_pass_f32 for 32 floats, acl_prefetch_pass_f64 for 16 doubles,
 * acl_prefetch_pass_u16 for the all-16-bit kernels; ewise.h). */
#define ACL_STEPS_PF(W, prefetch, step, ctx, n, a, b, out)                                           \
    do {                                                                                            \
        int64_t i_ = 0;                                                                             \
        for (; i_ + (W) <= (n); i_ += (W)) {                                                        \
            prefetch((a) + i_, (b) + i_);                                                           \
            step(ctx, (a) + i_, (b) + i_, (out) + i_, (W));                                         \
        }                                                                                           \
        if (i_ < (n)) step(ctx, (a) + i_, (b) + i_, (out) + i_, (n) - i_);                          \
    } while (0)
/* ... with steps of 32 elements (the f32 kernels of acl_ewise2_f32_pf, the all-16-bit ones) */
#define ACL_STEPS32_PF(prefetch, step, ctx, n, a, b, out) ACL_STEPS_PF(32, prefetch, step, ctx, n, a, b, out)

/* The same for an f32 kernel whose step takes masks: passes of four 8-lane vectors under the
 * constant mask (steps(4, ...)), each after acl_prefetch_pass_f32, then the rest by its one-vector
 * form as acl_steps8_f32 does. */
typedef void (*acl_steps8k_f32)(int K, const float *dy, const float *x, float *out, __mmask8 m);
ACL_AVX512_TARGET static inline __attribute__((always_inline)) void
acl_passes32_f32_pf(const void *ctx, int64_t n, const float *dy, const float *x, float *out, acl_steps8k_f32 steps,
                    acl_step8_f32 step)
{
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        acl_prefetch_pass_f32(dy + i, x + i);
        steps(4, dy + i, x + i, out + i, 0xff);
    }
    acl_steps8_f32(ctx, n - i, dy + i, x + i, out + i, step);
}

/* 8 f16 (bf = false) or bf16 bit patterns, exactly widened to f32.  AVX2 + F16C only, so the
 * AVX2 kernels (simd256.h) inline it too. */
__attribute__((target("avx2,f16c"))) static inline __m256 acl_widen8_16(__m128i h, bool bf)
{
    if (bf) return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    return _mm256_cvtph_ps(h);
}

/* 8 f16 (bf = false) or bf16 values under mask m (others 0), exactly widened to f32. */
ACL_AVX512_TARGET static inline __m256 acl_load8_16(const uint16_t *p, __mmask8 m, bool bf)
{
    return acl_widen8_16(m == 0xff ? _mm_loadu_si128((const __m128i *)p) : _mm_maskz_loadu_epi16(m, p), bf);
}

/* The same for 16 values under a 16-lane mask. */
ACL_AVX512_TARGET static inline __m512 acl_load16_16(const uint16_t *p, __mmask16 m, bool bf)
{
    __m256i h = m == 0xffff ? _mm256_loadu_si256((const __m256i *)p) : _mm256_maskz_loadu_epi16(m, p);
    if (bf) return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    return _mm512_cvtph_ps(h);
}

/* n (a multiple of 8) f16 / bf16 values widened exactly to double. */
ACL_AVX512_TARGET static inline void acl_row16_to_f64(const uint16_t *p, int64_t n, double *out, bool bf)
{
    for (int64_t k = 0; k < n; k += 8) _mm512_storeu_pd(out + k, _mm512_cvtps_pd(acl_load8_16(p + k, 0xff, bf)));
}

/* tab[xb[0..15]] under mask m (others 0), an f32 table indexed by 16-bit patterns.  A whole
 * vector takes sixteen scalar loads (the indices cut from four 8-byte loads by BEXTR) paired by
 * VINSERTPS; on this CPU (Zen 4) that runs at 0.80 cycles per element in cache against 0.88
 * with the indices shifted out, 0.95 for the compiler's _mm512_set_ps and 1.8 for VGATHERDPS
 * (single thread, bf16 Gelu's step around the lookup, best of 30).  The tail takes the gather. */
ACL_AVX512_TARGET static inline __m512 acl_table16(const float *tab, const uint16_t *xb, __mmask16 m)
{
    if (m != 0xffff)
        return _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, xb)),
                                        tab, 4);
    __m128 q[4];
    for (int k = 0; k < 4; k++) {
        uint64_t w;
        memcpy(&w, xb + 4 * k, sizeof w);
        __m128 lo = _mm_insert_ps(_mm_load_ss(tab + (uint16_t)w), _mm_load_ss(tab + _bextr_u64(w, 16, 16)), 0x10);
        __m128 hi = _mm_insert_ps(_mm_load_ss(tab + _bextr_u64(w, 32, 16)), _mm_load_ss(tab + (w >> 48)), 0x10);
        q[k] = _mm_movelh_ps(lo, hi);
    }
    return _mm512_insertf32x8(_mm512_castps256_ps512(_mm256_set_m128(q[1], q[0])), _mm256_set_m128(q[3], q[2]), 1);
}

/* f32 → f16 / bf16 bits (RNE, NaN quiet: the bits of acl_cvt_f32_to_f16 / _bf16), one body for
 * 8 lanes (ymm, W = 256) and 16 lanes (zmm, W = 512).  bf16: the high half of the f32 plus the
 * round-to-nearest-even bias 0x7fff + lsb; NaN keeps its high half with the quiet bit set.  The
 * conversion mutants of conv.c are planted here as well. */
#if ACLCONFORM_MUTANT == 17 /* conversion-rounding: bulk f32->bf16 truncates instead of RNE */
#define ACL_BF16_RNE_HI(W, u, hi) (u)
#else
#define ACL_BF16_RNE_HI(W, u, hi)                                                                   \
    _mm##W##_add_epi32(_mm##W##_add_epi32(u, _mm##W##_set1_epi32(0x7fff)), _mm##W##_and_si##W(hi, _mm##W##_set1_epi32(1)))
#endif
/* ACL_BF16_RNE_HI: the bits in the high half of each 32-bit lane (the low half garbage);
 * ACL_BF16_RNE: in the low half, the high half zero */
#define ACL_BF16_RNE(W, u, hi) _mm##W##_srli_epi32(ACL_BF16_RNE_HI(W, u, hi), 16)
#if ACLCONFORM_MUTANT == 21 /* conversion-nan: bulk f32->bf16 does not quiet NaN (a low-payload sNaN becomes Inf) */
#define ACL_BF16_QNAN(W, hi) (hi)
#else
#define ACL_BF16_QNAN(W, hi) _mm##W##_or_si##W(hi, _mm##W##_set1_epi32(0x40))
#endif
#if ACLCONFORM_MUTANT == 15 /* conversion-rounding: F16C bulk f32->f16 truncates instead of round-to-nearest-even */
#define ACL_F16_ROUND _MM_FROUND_TO_ZERO
#else
#define ACL_F16_ROUND _MM_FROUND_TO_NEAREST_INT
#endif
#define ACL_DEFINE_BF16_BITS(NAME, W, PS, SI, MASK)                                                 \
    ACL_AVX512_TARGET static inline SI NAME(PS v)                                                   \
    {                                                                                               \
        SI u = _mm##W##_castps_si##W(v), hi = _mm##W##_srli_epi32(u, 16);                           \
        MASK isnan = _mm##W##_cmpgt_epu32_mask(_mm##W##_and_si##W(u, _mm##W##_set1_epi32(0x7fffffff)), \
                                               _mm##W##_set1_epi32(0x7f800000));                    \
        return _mm##W##_mask_mov_epi32(ACL_BF16_RNE(W, u, hi), isnan, ACL_BF16_QNAN(W, hi));         \
    }
/* lane i of the result holds the bf16 bits of lane i of v in its low 16 bits */
ACL_DEFINE_BF16_BITS(acl_bf16_bits8, 256, __m256, __m256i, __mmask8)
ACL_DEFINE_BF16_BITS(acl_bf16_bits16, 512, __m512, __m512i, __mmask16)

/* f32 -> bf16 of 8 / 16 lanes: VCVTNEPS2BF16 rounds to nearest even and quiets NaN exactly as
 * acl_bf16_bits* do, but flushes subnormal inputs to ±0, so a vector with a subnormal lane takes
 * the software form.  Only a ±0 output can be such a lane, so the class test on the input runs
 * only when an output is ±0 (one integer test of the output words otherwise).  Round 24, 16-bit
 * Softplus bf16 in L1, 1 thread: 1.255-1.263 cycles per element with the class test on every
 * vector, 1.204-1.216 with it behind the output test, 1.145-1.159 with no test at all (not
 * correct; mutant 52); the output test as "no zero word" (VPTESTNMW) instead: 1.224-1.237. */
#define ACL_BF16_NONZERO(W, h, all) (_mm##W##_test_epi16_mask(h, _mm##W##_set1_epi16(0x7fff)) == (all))
#if ACLCONFORM_MUTANT == 52 /* conversion-subnormal: hardware bf16 store without the subnormal check (f32 subnormals flushed to 0) */
#define ACL_BF16_HW_OK(W, v) true
#else
#define ACL_BF16_HW_OK(W, v) (_mm##W##_fpclass_ps_mask(v, 0x20) == 0)
#endif
ACL_AVX512_TARGET static inline __m128i acl_bf16_pack8(__m256 v)
{
    if (acl_bf16_hw) {
        __m128i h = (__m128i)_mm256_cvtneps_pbh(v);
        if (ACL_BF16_NONZERO(, h, 0xff) || ACL_BF16_HW_OK(256, v)) return h;
    }
    return _mm256_cvtepi32_epi16(acl_bf16_bits8(v));
}

ACL_AVX512_TARGET static inline __m256i acl_bf16_pack16(__m512 v)
{
    if (acl_bf16_hw) {
        __m256i h = (__m256i)_mm512_cvtneps_pbh(v);
        if (ACL_BF16_NONZERO(256, h, 0xffff) || ACL_BF16_HW_OK(512, v)) return h;
    }
    return _mm512_cvtepi32_epi16(acl_bf16_bits16(v));
}

/* 32 bf16 values as two f32 vectors, in pairs: the even-indexed values (0, 2, .., 30) widened by a
 * shift, the odd ones by a mask (a bf16 is the high half of its f32); one load, one instruction
 * per 16 values.  For per-lane kernels, where the order of the lanes does not matter. */
ACL_AVX512_TARGET static inline void acl_bf16_widen_pairs(__m512i w, __m512 *even, __m512 *odd)
{
    *even = _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
    *odd = _mm512_castsi512_ps(_mm512_and_si512(w, _mm512_set1_epi32((int)0xffff0000u)));
}

/* The inverse: the bf16 bits of even and odd interleaved back into 32 values, rounded as
 * acl_bf16_pack16 rounds (VCVTNE2PS2BF16 and one word permutation, or the software bits when a
 * lane is subnormal or the CPU lacks AVX512-BF16). */
ACL_AVX512_TARGET static inline __m512i acl_bf16_pack_pairs(__m512 even, __m512 odd)
{
    if (acl_bf16_hw) {
        const __m512i inter = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8,
                                               23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
        __m512i h = (__m512i)_mm512_cvtne2ps_pbh(odd, even);
        if (ACL_BF16_NONZERO(512, h, 0xffffffffu) || (ACL_BF16_HW_OK(512, even) && ACL_BF16_HW_OK(512, odd)))
            return _mm512_permutexvar_epi16(inter, h);
    }
    return _mm512_or_si512(acl_bf16_bits16(even), _mm512_slli_epi32(acl_bf16_bits16(odd), 16));
}

/* 8 f32 rounded to f16 / bf16 and stored under mask m. */
ACL_AVX512_TARGET static inline void acl_store8_16(uint16_t *p, __mmask8 m, __m256 v, bool bf)
{
    __m128i h = bf ? acl_bf16_pack8(v) : _mm256_cvtps_ph(v, ACL_F16_ROUND);
    if (m == 0xff) _mm_storeu_si128((__m128i *)p, h);
    else _mm_mask_storeu_epi16(p, m, h);
}

/* 16 f32 values as 16-bit (bf16 or f16) bits, rounded as acl_cvt_f32_to_* do */
ACL_AVX512_TARGET static inline __m256i acl_pack16_16(__m512 v, bool bf)
{
    return bf ? acl_bf16_pack16(v) : _mm512_cvtps_ph(v, ACL_F16_ROUND);
}

/* The same for 16 values under a 16-lane mask. */
ACL_AVX512_TARGET static inline void acl_store16_16(uint16_t *p, __mmask16 m, __m512 v, bool bf)
{
    __m256i h = acl_pack16_16(v, bf);
    if (m == 0xffff) _mm256_storeu_si256((__m256i *)p, h);
    else _mm256_mask_storeu_epi16(p, m, h);
}

/* e^x as an unevaluated sum hi + lo, for f64 results (SoftplusBackward f64).  Same reduction as
 * acl_exp8_reduce (|r| ≤ ln2/16 + 2^-40); then e^r - 1 = r + r²·P(r) with P the degree-6 Taylor polynomial of
 * (e^r - 1 - r)/r² (truncation |r|^9/9!·e^|r| < 2^-59 relative), the table 2^(j/8) as th + tl
 * (exact to 2^-106), and
 *   u = fma(th, q, tl),  hi = th + u,  lo = (th - hi) + u   (Fast2Sum: |u| < 0.05·th, exact)
 *   q = fma(r², P, r),   both scaled by 2^(k>>3) (scalef)
 * The errors are the reduction's two roundings (≤ 2·2^-53·|r| ≤ 2^-57.5), the truncation, q's
 * rounding (≤ 2^-53·|q|, |q| < 0.0444) and u's (≤ 2^-53·0.0444): |hi + lo - e^x| < 0.18·2^-53·e^x
 * while hi + lo is normal (lo may lose bits to underflow when hi is below ~2^-969; hi alone is
 * then within 0.5 ULP plus its own 1.18·2^-53 relative error, up to 1.04 subnormal ULP just below
 * DBL_MIN: tests/unit/test_simd256.c measures 0.70 there; the earlier figure, < 0.61 ULP on 2^22
 * points, was measured on a coarser grid). */
ACL_AVX512_TARGET static inline __m512d acl_exp8_dd(__m512d x, __m512d *lo)
{
    const __m512d TL = _mm512_set_pd(0x1.2ed02d75b3707p-55, 0x1.7a1cd345dcc81p-54,
                                     0x1.6e9f156864b27p-54, -0x1.bdd3413b26456p-54,
                                     0x1.d4397afec42e2p-56, 0x1.6f46ad23182e4p-55,
                                     -0x1.19041b9d78a76p-55, 0.0);
    __m512d ks, k;
    __m512d r = acl_exp8_reduce(x, &ks, &k);
    __m512d p = _mm512_set1_pd(1.0 / 40320.0);
    p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(1.0 / 5040.0));
    p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(1.0 / 720.0));
    p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(1.0 / 120.0));
    p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(1.0 / 24.0));
    p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(1.0 / 6.0));
    p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(0.5));
    __m512d q = _mm512_fmadd_pd(_mm512_mul_pd(r, r), p, r);
    __m512i j = _mm512_castpd_si512(ks);
    __m512d th = _mm512_permutexvar_pd(j, acl_exp8_table()), tl = _mm512_permutexvar_pd(j, TL);
    __m512d u = _mm512_fmadd_pd(th, q, tl);
    __m512d hi = _mm512_add_pd(th, u);
    __m512d n = _mm512_mul_pd(k, _mm512_set1_pd(0.125));
    *lo = _mm512_scalef_pd(_mm512_add_pd(_mm512_sub_pd(th, hi), u), n);
    return _mm512_scalef_pd(hi, n);
}

#endif
#endif
