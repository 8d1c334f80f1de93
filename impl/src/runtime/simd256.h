/* Hand-written AVX2 + FMA + F16C kernels' helpers, for x86-64 CPUs without AVX-512 (issue 14,
 * round 28: the machine kind now also comes as an AMD EPYC 7003 (Zen 3), where every AVX-512
 * kernel falls back to the portable loops: Softplus 16-bit ran at 0.08-0.14x PyTorch there).
 *
 * The double-precision math below is simd512.h's, four lanes at a time, operation for operation:
 * the same roundings in the same order, so an AVX2 kernel built from it gives its AVX-512 twin's
 * bits (the AVX-512 instructions without an AVX2 counterpart are replaced by exact sequences:
 * a table permute by VPERMD pairs, VSCALEFPD by exact power-of-two products).  Results therefore
 * do not depend on which of the two vector paths the CPU takes, and tests compare the two paths
 * bit for bit where the CPU has both (acl_simd_set_cap).
 *
 * Functions here carry ACL_AVX2_TARGET and are inlined into kernels with the same attribute;
 * callers take them when acl_have_avx2() and not acl_have_avx512(). */
#ifndef ACL_SIMD256_H
#define ACL_SIMD256_H

#include "simd512.h"

#ifdef ACL_HAVE_AVX512_KERNELS
#define ACL_HAVE_AVX2_KERNELS 1

#define ACL_AVX2_TARGET __attribute__((target("avx2,fma,f16c,bmi,bmi2")))

/* AVX2, FMA, F16C and BMI1/2, decided once; false when the environment variable
 * ACLCONFORM_NO_AVX2 is set or acl_simd_set_cap(0) was called (the portable kernels). */
bool acl_have_avx2(void);

/* For tests: the widest kernels the operators may take, 2 = AVX-512 (when the CPU has it),
 * 1 = AVX2 (when the CPU has it), 0 = the portable loops.  Default 2.  Not for concurrent use
 * with running operators. */
void acl_simd_set_cap(int level);
int acl_simd_cap(void);

/* ---- lanes and tails ---- */

/* the mask of the first `left` of 8 32-bit lanes (all for left ≥ 8, none for left ≤ 0), for
 * _mm256_maskload_ps / _mm256_maskstore_ps */
ACL_AVX2_TARGET static inline __m256i acl_mask8x32(int64_t left)
{
    int32_t l = left >= 8 ? 8 : left > 0 ? (int32_t)left : 0;
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(l), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* the same for 4 64-bit lanes (_mm256_maskload_pd / _mm256_maskstore_pd) */
ACL_AVX2_TARGET static inline __m256i acl_mask4x64(int64_t left)
{
    int64_t l = left >= 4 ? 4 : left > 0 ? left : 0;
    return _mm256_cmpgt_epi64(_mm256_set1_epi64x(l), _mm256_setr_epi64x(0, 1, 2, 3));
}

/* the first `left` of w (8 or 4) lanes as bits (a MOVMSK result's lanes still to do), as
 * acl_mask8 gives them on AVX-512 */
static inline unsigned acl_lanes(int64_t left, int w)
{
    return left >= w ? (1u << w) - 1u : left > 0 ? (1u << left) - 1u : 0u;
}

/* 8 floats, the first `left` of them (others 0): a plain load for a whole vector */
ACL_AVX2_TARGET static inline __m256 acl_load8_ps_left(const float *p, int64_t left)
{
    return left >= 8 ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, acl_mask8x32(left));
}
ACL_AVX2_TARGET static inline void acl_store8_ps_left(float *p, int64_t left, __m256 v)
{
    if (left >= 8) _mm256_storeu_ps(p, v);
    else _mm256_maskstore_ps(p, acl_mask8x32(left), v);
}
ACL_AVX2_TARGET static inline __m256d acl_load4_pd_left(const double *p, int64_t left)
{
    return left >= 4 ? _mm256_loadu_pd(p) : _mm256_maskload_pd(p, acl_mask4x64(left));
}
ACL_AVX2_TARGET static inline void acl_store4_pd_left(double *p, int64_t left, __m256d v)
{
    if (left >= 4) _mm256_storeu_pd(p, v);
    else _mm256_maskstore_pd(p, acl_mask4x64(left), v);
}

/* the 8 f32 lanes of v widened to two vectors of 4 doubles (lanes 0-3, 4-7) and back */
ACL_AVX2_TARGET static inline __m256d acl_lo4_pd(__m256 v) { return _mm256_cvtps_pd(_mm256_castps256_ps128(v)); }
ACL_AVX2_TARGET static inline __m256d acl_hi4_pd(__m256 v) { return _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)); }
ACL_AVX2_TARGET static inline __m256 acl_join4_ps(__m256d lo, __m256d hi)
{
    return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm256_cvtpd_ps(lo)), _mm256_cvtpd_ps(hi), 1);
}

/* 8 floats from p, the first `left` (others 0), widened to d[0] (elements 0-3) and d[1] (4-7):
 * a whole vector by two 16-byte loads widened in place, no VEXTRACTF128 (round 29) */
ACL_AVX2_TARGET static inline void acl_load8_pd2_left(const float *p, int64_t left, __m256d d[2])
{
    if (left >= 8) {
        d[0] = _mm256_cvtps_pd(_mm_loadu_ps(p));
        d[1] = _mm256_cvtps_pd(_mm_loadu_ps(p + 4));
        return;
    }
    __m256 v = acl_load8_ps_left(p, left);
    d[0] = acl_lo4_pd(v);
    d[1] = acl_hi4_pd(v);
}

/* lo (elements 0-3) and hi (4-7) rounded to f32 and stored, the first `left`: a whole vector by
 * two 16-byte stores, no VINSERTF128 (round 29) */
ACL_AVX2_TARGET static inline void acl_store8_pd2_left(float *p, int64_t left, __m256d lo, __m256d hi)
{
    if (left >= 8) {
        _mm_storeu_ps(p, _mm256_cvtpd_ps(lo));
        _mm_storeu_ps(p + 4, _mm256_cvtpd_ps(hi));
        return;
    }
    acl_store8_ps_left(p, left, acl_join4_ps(lo, hi));
}

/* acl_mul_first_pd / _ps on 4 / 8 lanes: a·b with a as the first source operand, so where both
 * are NaN the result is a's (see simd512.h: a product written in C may swap them per copy) */
ACL_AVX2_TARGET static inline __m256d acl_mul_first4_pd(__m256d a, __m256d b)
{
    __m256d r;
    __asm__("vmulpd {%2, %1, %0|%0, %1, %2}" : "=x"(r) : "x"(a), "x"(b));
    return r;
}
ACL_AVX2_TARGET static inline __m256 acl_mul_first8_ps(__m256 a, __m256 b)
{
    __m256 r;
    __asm__("vmulps {%2, %1, %0|%0, %1, %2}" : "=x"(r) : "x"(a), "x"(b));
    return r;
}

/* ---- f16 / bf16 ---- */

/* 8 f16 (bf = false) or bf16 values, the first `left` (others 0), exactly widened to f32 */
ACL_AVX2_TARGET static inline __m256 acl_load8_16_left(const uint16_t *p, int64_t left, bool bf)
{
    __m128i h;
    if (left >= 8) {
        h = _mm_loadu_si128((const __m128i *)(const void *)p);
    } else {
        uint16_t t[8] = {0};
        if (left > 0) memcpy(t, p, (size_t)left * sizeof *p);
        h = _mm_loadu_si128((const __m128i *)(void *)t);
    }
    return acl_widen8_16(h, bf);
}

/* The range in which products of two bf16 values are exact in f32 (softmax's bf16 rows, round 30;
 * NsaCompressGrad's bf16 inputGrad sums, round 31): ±0, or a magnitude in [2^-63, 2^64), so a
 * product is ±0 or a normal float in [2^-126, 2^128) with at most 16 significant bits.  Kept over
 * vectors of 8 bf16 from *mx = 0, *mn = 0xffff: *mx the largest |bits|, *mn the smallest |bits| − 1
 * (a zero wraps to 0xffff). */
ACL_AVX2_TARGET static inline void acl_bf16_range_track8(__m128i b, __m128i *mx, __m128i *mn)
{
    __m128i a = _mm_and_si128(b, _mm_set1_epi16(0x7fff));
    *mx = _mm_max_epu16(*mx, a);
    *mn = _mm_min_epu16(*mn, _mm_sub_epi16(a, _mm_set1_epi16(1)));
}

/* every value tracked in that range: the largest |bits| < 2^64 (bf16 0x5f80) and the smallest
 * nonzero ≥ 2^-63 (0x2000), that is the smallest |bits| − 1 ≥ 0x1fff */
ACL_AVX2_TARGET static inline bool acl_bf16_range_ok(__m128i mx, __m128i mn)
{
    /* PHMINPOSUW: the smallest unsigned 16-bit lane in bits 0-15 (the largest of mx: of ~mx) */
    int big = 0xffff - (_mm_cvtsi128_si32(_mm_minpos_epu16(_mm_xor_si128(mx, _mm_set1_epi16(-1)))) & 0xffff);
    int small = _mm_cvtsi128_si32(_mm_minpos_epu16(mn)) & 0xffff;
    return big < 0x5f80 && small >= 0x1fff;
}

/* f32 -> bf16 bits in the low half of each 32-bit lane, rounded to nearest even: the bits of
 * acl_bf16_bits8_avx2 for every v that is not NaN (callers that know there is none skip its test) */
ACL_AVX2_TARGET static inline __m256i acl_bf16_rne8_avx2(__m256 v)
{
    __m256i u = _mm256_castps_si256(v);
    return ACL_BF16_RNE(256, u, _mm256_srli_epi32(u, 16));
}

/* ... and for every v: acl_bf16_bits8's rounding (RNE, NaN keeps its high half with the quiet
 * bit set), with a signed compare (both sides are ≥ 0) */
ACL_AVX2_TARGET static inline __m256i acl_bf16_bits8_avx2(__m256 v)
{
    __m256i u = _mm256_castps_si256(v), hi = _mm256_srli_epi32(u, 16);
    __m256i isnan = _mm256_cmpgt_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff)),
                                       _mm256_set1_epi32(0x7f800000));
    return _mm256_blendv_epi8(acl_bf16_rne8_avx2(v), ACL_BF16_QNAN(256, hi), isnan);
}

/* Whole steps of 16 bf16 elements for kernels whose lanes are independent (round 30): the 16
 * split into the even elements (0, 2, .., 14: the low halves of the 32-bit words, shifted up)
 * and the odd ones (the high halves, the low ones cleared), each already its f32 — a shift and a
 * mask where acl_load8_16_left widens each 8 by a lane-crossing VPMOVZXWD and a shift */
ACL_AVX2_TARGET static inline void acl_split16_bf16_eo(__m256i w, __m256 *e, __m256 *o)
{
    *e = _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
    *o = _mm256_castsi256_ps(_mm256_and_si256(w, _mm256_set1_epi32((int)0xffff0000u)));
}

/* ... loaded from p */
ACL_AVX2_TARGET static inline void acl_load16_bf16_eo(const uint16_t *p, __m256 *e, __m256 *o)
{
    acl_split16_bf16_eo(_mm256_loadu_si256((const __m256i *)(const void *)p), e, o);
}

/* ... and back: the even elements' f32 (e) and the odd ones' (o) rounded to bf16 (the bits of
 * acl_pack8_16_avx2) and merged into the 16 words in element order by one word blend, where
 * two 8-lane packs take a VPACKUSDW and a VEXTRACTI128 each.  nan_free: the caller knows no lane
 * is NaN (then the rounding alone, acl_bf16_rne8_avx2's); else tested here. */
ACL_AVX2_TARGET static inline __m256i acl_pack16_bf16_eo(__m256 e, __m256 o, bool nan_free)
{
    if (!nan_free)
        nan_free = _mm256_movemask_ps(_mm256_or_ps(_mm256_cmp_ps(e, e, _CMP_UNORD_Q), _mm256_cmp_ps(o, o, _CMP_UNORD_Q))) == 0;
    if (__builtin_expect(nan_free, 1)) {
        __m256i ue = _mm256_castps_si256(e), uo = _mm256_castps_si256(o);
        return _mm256_blend_epi16(_mm256_srli_epi32(ACL_BF16_RNE_HI(256, ue, _mm256_srli_epi32(ue, 16)), 16),
                                  ACL_BF16_RNE_HI(256, uo, _mm256_srli_epi32(uo, 16)), 0xaa);
    }
    return _mm256_blend_epi16(acl_bf16_bits8_avx2(e), _mm256_slli_epi32(acl_bf16_bits8_avx2(o), 16), 0xaa);
}

/* 8 f32 rounded to f16 / bf16 as acl_cvt_f32_to_* round (the bits of acl_store8_16) */
ACL_AVX2_TARGET static inline __m128i acl_pack8_16_avx2(__m256 v, bool bf)
{
    if (!bf) return _mm256_cvtps_ph(v, ACL_F16_ROUND);
    /* without a NaN among them, the rounding alone (acl_bf16_rne8_avx2: the same bits) */
    __m256i b = __builtin_expect(_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)) == 0, 1) ? acl_bf16_rne8_avx2(v)
                                                                                          : acl_bf16_bits8_avx2(v);
    return _mm_packus_epi32(_mm256_castsi256_si128(b), _mm256_extracti128_si256(b, 1));
}

/* ... stored, the first `left` of them */
ACL_AVX2_TARGET static inline void acl_store8_16_left(uint16_t *p, int64_t left, __m256 v, bool bf)
{
    __m128i h = acl_pack8_16_avx2(v, bf);
    if (left >= 8) {
        _mm_storeu_si128((__m128i *)(void *)p, h);
    } else if (left > 0) {
        uint16_t t[8];
        _mm_storeu_si128((__m128i *)(void *)t, h);
        memcpy(p, t, (size_t)left * sizeof *p);
    }
}

/* tab[xb[l]] for the first `left` (≤ 8: others 0) of 8 16-bit indices: scalar loads, the indices cut
 * from two 8-byte loads (as acl_table16); the 16-bit table kernels of Gelu and Softplus */
ACL_AVX2_TARGET static inline __m256 acl_table8_ps(const float *tab, const uint16_t *xb, int64_t left)
{
    if (left < 8) {
        float t[8] = {0};
        for (int64_t l = 0; l < left; l++) t[l] = tab[xb[l]];
        return _mm256_loadu_ps(t);
    }
    uint64_t w0, w1;
    memcpy(&w0, xb, sizeof w0);
    memcpy(&w1, xb + 4, sizeof w1);
    __m128 lo = _mm_insert_ps(_mm_load_ss(tab + (uint16_t)w0), _mm_load_ss(tab + _bextr_u64(w0, 16, 16)), 0x10);
    lo = _mm_insert_ps(lo, _mm_load_ss(tab + _bextr_u64(w0, 32, 16)), 0x20);
    lo = _mm_insert_ps(lo, _mm_load_ss(tab + (w0 >> 48)), 0x30);
    __m128 hi = _mm_insert_ps(_mm_load_ss(tab + (uint16_t)w1), _mm_load_ss(tab + _bextr_u64(w1, 16, 16)), 0x10);
    hi = _mm_insert_ps(hi, _mm_load_ss(tab + _bextr_u64(w1, 32, 16)), 0x20);
    hi = _mm_insert_ps(hi, _mm_load_ss(tab + (w1 >> 48)), 0x30);
    return _mm256_set_m128(hi, lo);
}

/* acl_table8_ps for a whole step of 16 indices, in acl_load16_bf16_eo's order: *e the entries of
 * the even elements (0, 2, .., 14), *o of the odd ones; the same 16 scalar loads */
ACL_AVX2_TARGET static inline void acl_table16_eo_ps(const float *tab, const uint16_t *xb, __m256 *e, __m256 *o)
{
    __m128 q[4]; /* e lo, o lo, e hi, o hi */
    for (int h = 0; h < 2; h++) {
        uint64_t w0, w1;
        memcpy(&w0, xb + 8 * h, sizeof w0);
        memcpy(&w1, xb + 8 * h + 4, sizeof w1);
        __m128 ev = _mm_insert_ps(_mm_load_ss(tab + (uint16_t)w0), _mm_load_ss(tab + _bextr_u64(w0, 32, 16)), 0x10);
        ev = _mm_insert_ps(ev, _mm_load_ss(tab + (uint16_t)w1), 0x20);
        q[2 * h] = _mm_insert_ps(ev, _mm_load_ss(tab + _bextr_u64(w1, 32, 16)), 0x30);
        __m128 od = _mm_insert_ps(_mm_load_ss(tab + _bextr_u64(w0, 16, 16)), _mm_load_ss(tab + (w0 >> 48)), 0x10);
        od = _mm_insert_ps(od, _mm_load_ss(tab + _bextr_u64(w1, 16, 16)), 0x20);
        q[2 * h + 1] = _mm_insert_ps(od, _mm_load_ss(tab + (w1 >> 48)), 0x30);
    }
    *e = _mm256_set_m128(q[2], q[0]);
    *o = _mm256_set_m128(q[3], q[1]);
}

/* The two all-16-bit kernels (acl_ewise2_u16) name_f16 and name_bf16 of an 8-lane step
 * step(ctx, dy, x, out, left, bf) (left ≥ 8: a whole step, else the tail's first `left`): passes
 * of four steps, each after acl_prefetch_pass_u16 (ewise.h) of its 32 elements, then the tail
 * (ACL_STEPS32_PF); the dtype a constant in each.  bf16 passes take two whole steps of 16
 * elements, step16(ctx, dy, x, out), in acl_load16_bf16_eo's even / odd split (round 30); the tail
 * the 8-lane step.  Gelu's and Softplus's 16-bit table kernels (ACL_U16_KERNEL8_F16 alone: name_f16
 * and name_step32, for a kernel with a bf16 loop of its own). */
#define ACL_U16_KERNEL8_F16(name, step)                                                             \
    ACL_AVX2_TARGET static inline __attribute__((always_inline)) void name##_step32(                  \
        const void *ctx, const uint16_t *dy, const uint16_t *x, uint16_t *out, int64_t left, bool bf) \
    {                                                                                               \
        for (int k_ = 0; k_ < 4 && left > 8 * k_; k_++)                                             \
            step(ctx, dy + 8 * k_, x + 8 * k_, out + 8 * k_, left - 8 * k_, bf);                     \
    }                                                                                               \
    ACL_AVX2_TARGET static inline void name##_step_f16(const void *ctx, const uint16_t *dy, const uint16_t *x, \
                                                       uint16_t *out, int64_t left)                 \
    {                                                                                               \
        name##_step32(ctx, dy, x, out, left, false);                                                \
    }                                                                                               \
    ACL_AVX2_TARGET static void name##_f16(const void *ctx, int64_t n, const uint16_t *dy, const uint16_t *x, \
                                           uint16_t *out)                                           \
    {                                                                                               \
        ACL_STEPS32_PF(acl_prefetch_pass_u16, name##_step_f16, ctx, n, dy, x, out);                 \
    }
#define ACL_U16_KERNELS8(name, step, step16)                                                        \
    ACL_U16_KERNEL8_F16(name, step)                                                                 \
    ACL_AVX2_TARGET static void name##_bf16(const void *ctx, int64_t n, const uint16_t *dy, const uint16_t *x, \
                                            uint16_t *out)                                          \
    {                                                                                               \
        int64_t i_ = 0;                                                                             \
        for (; i_ + 32 <= n; i_ += 32) {                                                            \
            acl_prefetch_pass_u16(dy + i_, x + i_);                                                 \
            step16(ctx, dy + i_, x + i_, out + i_);                                                 \
            step16(ctx, dy + i_ + 16, x + i_ + 16, out + i_ + 16);                                  \
        }                                                                                           \
        if (i_ < n) name##_step32(ctx, dy + i_, x + i_, out + i_, n - i_, true);                    \
    }

/* ---- double-precision exp, four lanes (simd512.h's functions, the same bits) ---- */

ACL_AVX2_TARGET static inline __m256d acl_exp16_nm4(__m256d y)
{
    return _mm256_fmadd_pd(y, _mm256_set1_pd(-0x1.71547652b82fep+4), _mm256_set1_pd(0x1.8p52));
}
ACL_AVX2_TARGET static inline __m256d acl_exp16_r4(__m256d y, __m256d nm)
{
    return _mm256_fnmsub_pd(_mm256_sub_pd(nm, _mm256_set1_pd(0x1.8p52)), _mm256_set1_pd(0x1.62e42fefa39efp-5), y);
}
ACL_AVX2_TARGET static inline __m256d acl_exp16_poly4(__m256d r)
{
    const __m256d one = _mm256_set1_pd(1.0);
    __m256d p = _mm256_fmadd_pd(_mm256_set1_pd(ACL_EXP16_C4), r, _mm256_set1_pd(ACL_EXP16_C3));
    p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(ACL_EXP16_C2));
    return _mm256_fmadd_pd(_mm256_fmadd_pd(p, r, one), r, one);
}

/* tb[j] for the 8 lanes of two vectors (j = the low 4 bits of nm0's and nm1's bits), by permutes
 * instead of two gathers: the table's low and high 32-bit halves as two 8-entry vectors each
 * (loop-invariant), VPERMD by the low 3 bits of j, a blend by its bit 3, the halves interleaved
 * back: the words simd512.h's permute reads.  Faster than a VPGATHERQQ per vector on Zen 3
 * (GeluBackwardV2 f32, round 28: none 2.67-2.76 -> 2.35-2.39 ns per element in cache, tanh
 * 2.42-2.51 -> 2.06-2.20; SoftplusBackward f32 13.3-14.9 -> 12.1-13.1 ms at 16 Mi). */
ACL_AVX2_TARGET static inline void acl_tab16x2_epi64(const uint64_t *tb, __m256d nm0, __m256d nm1, __m256i *r0, __m256i *r1)
{
    const __m256i fix = _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7);
    __m256 t0 = _mm256_loadu_ps((const float *)(const void *)tb), t1 = _mm256_loadu_ps((const float *)(const void *)(tb + 4));
    __m256 t2 = _mm256_loadu_ps((const float *)(const void *)(tb + 8)), t3 = _mm256_loadu_ps((const float *)(const void *)(tb + 12));
    /* entries 0-7 and 8-15, low halves (lo*) and high halves (hi*), in entry order */
    __m256i lo0 = _mm256_permutevar8x32_epi32(_mm256_castps_si256(_mm256_shuffle_ps(t0, t1, 0x88)), fix);
    __m256i hi0 = _mm256_permutevar8x32_epi32(_mm256_castps_si256(_mm256_shuffle_ps(t0, t1, 0xdd)), fix);
    __m256i lo1 = _mm256_permutevar8x32_epi32(_mm256_castps_si256(_mm256_shuffle_ps(t2, t3, 0x88)), fix);
    __m256i hi1 = _mm256_permutevar8x32_epi32(_mm256_castps_si256(_mm256_shuffle_ps(t2, t3, 0xdd)), fix);
    /* j of nm0's lanes 0, 1, nm1's 0, 1 | nm0's 2, 3, nm1's 2, 3 */
    __m256i j = _mm256_castps_si256(_mm256_shuffle_ps(_mm256_castpd_ps(nm0), _mm256_castpd_ps(nm1), 0x88));
    __m256 b3 = _mm256_castsi256_ps(_mm256_slli_epi32(j, 28));
    __m256i lo = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(_mm256_permutevar8x32_epi32(lo0, j)),
                                                      _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(lo1, j)), b3));
    __m256i hi = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(_mm256_permutevar8x32_epi32(hi0, j)),
                                                      _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(hi1, j)), b3));
    *r0 = _mm256_unpacklo_epi32(lo, hi);
    *r1 = _mm256_unpackhi_epi32(lo, hi);
}

/* acl_exp2_16th_tb (c·2^(n/16) from tb, see simd512.h) of two vectors */
ACL_AVX2_TARGET static inline void acl_exp2_16th_tb4x2(const uint64_t *tb, __m256d nm0, __m256d nm1, __m256d *s0, __m256d *s1)
{
    __m256i t0, t1;
    acl_tab16x2_epi64(tb, nm0, nm1, &t0, &t1);
    *s0 = _mm256_castsi256_pd(_mm256_add_epi64(t0, _mm256_slli_epi64(_mm256_castpd_si256(nm0), 48)));
    *s1 = _mm256_castsi256_pd(_mm256_add_epi64(t1, _mm256_slli_epi64(_mm256_castpd_si256(nm1), 48)));
}

/* The exp functions of simd512.h on two vectors of 4 doubles (8 lanes, as one of theirs), the same
 * operations, one table read for both halves. */

/* acl_expneg8_fast: e^-y = scale · p for y in [-708, 708] or NaN, to 2^-37 relative */
ACL_AVX2_TARGET static inline void acl_expneg4x2_fast(const __m256d y[2], __m256d p[2], __m256d scale[2])
{
    __m256d nm[2];
    for (int h = 0; h < 2; h++) {
        nm[h] = acl_exp16_nm4(y[h]);
        p[h] = acl_exp16_poly4(acl_exp16_r4(y[h], nm[h]));
    }
    acl_exp2_16th_tb4x2(acl_exp2_16th_bits, nm[0], nm[1], &scale[0], &scale[1]);
}

/* acl_logistic8_fast: 1/(1 + e^-y) for y in [-708, 708] */
ACL_AVX2_TARGET static inline void acl_logistic4x2_fast(const __m256d y[2], __m256d q[2])
{
    __m256d nm[2], s[2], p[2];
    for (int h = 0; h < 2; h++) {
        nm[h] = acl_exp16_nm4(y[h]);
        p[h] = acl_exp16_poly4(acl_exp16_r4(y[h], nm[h]));
    }
    acl_exp2_16th_tb4x2(acl_exp2_16th_bits, _mm256_sub_pd(_mm256_set1_pd(0x1.8p53), nm[0]),
                        _mm256_sub_pd(_mm256_set1_pd(0x1.8p53), nm[1]), &s[0], &s[1]);
    for (int h = 0; h < 2; h++) q[h] = _mm256_div_pd(s[h], _mm256_add_pd(s[h], p[h]));
}

/* acl_exp8_fast_nhalf: e^(-y/2) for y in [0, 1400] */
ACL_AVX2_TARGET static inline void acl_exp4x2_fast_nhalf(const __m256d y[2], __m256d e[2])
{
    const __m256d magic = _mm256_set1_pd(0x1.8p52);
    __m256d nm[2], s[2], u[2], c2n[2];
    for (int h = 0; h < 2; h++) {
        nm[h] = _mm256_fmadd_pd(y[h], _mm256_set1_pd(-0x1.71547652b82fep+3), magic);
        s[h] = _mm256_fmadd_pd(_mm256_sub_pd(nm[h], magic), _mm256_set1_pd(0x1.62e42fefa39efp-4), y[h]);
    }
    acl_exp2_16th_tb4x2(acl_expnh_bits, nm[0], nm[1], &c2n[0], &c2n[1]);
    for (int h = 0; h < 2; h++) {
        u[h] = _mm256_fmadd_pd(_mm256_add_pd(s[h], _mm256_set1_pd(ACL_EXPNH_A0)), s[h], _mm256_set1_pd(ACL_EXPNH_A1));
        u[h] = _mm256_fmadd_pd(_mm256_add_pd(u[h], _mm256_add_pd(s[h], _mm256_set1_pd(ACL_EXPNH_A2))), u[h],
                               _mm256_set1_pd(ACL_EXPNH_A3));
        e[h] = _mm256_mul_pd(c2n[h], u[h]);
    }
}

/* x·2^floor(n) rounded once, as VSCALEFPD, for n in [-1588, 1588] and any x of magnitude in
 * [2^-200, 2^2) (or 0, Inf, NaN; acl_exp4_dd's hi ≥ 0.9 and |lo| ≥ 2^-115 or 0): x·2^a is exact (a = floor(n)/2 truncated, |a| ≤ 794:
 * the product stays normal), the second factor 2^(floor(n) - a) rounds once, into subnormals or
 * to Inf as VSCALEFPD does. */
ACL_AVX2_TARGET static inline __m256d acl_scalef4(__m256d x, __m256d n)
{
    const __m256d magic = _mm256_set1_pd(0x1.8p52);
    __m256d f = _mm256_round_pd(n, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    __m256d a = _mm256_round_pd(_mm256_mul_pd(f, _mm256_set1_pd(0.5)), _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    __m256d b = _mm256_sub_pd(f, a);
    /* 2^a, 2^b: (e + 1023) << 52 from the integer in the low bits of e + 1.5·2^52 */
    __m256i bias = _mm256_set1_epi64x(1023);
    __m256i ia = _mm256_sub_epi64(_mm256_castpd_si256(_mm256_add_pd(a, magic)), _mm256_castpd_si256(magic));
    __m256i ib = _mm256_sub_epi64(_mm256_castpd_si256(_mm256_add_pd(b, magic)), _mm256_castpd_si256(magic));
    __m256d pa = _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_add_epi64(ia, bias), 52));
    __m256d pb = _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_add_epi64(ib, bias), 52));
    return _mm256_mul_pd(_mm256_mul_pd(x, pa), pb);
}

/* acl_exp8_dd: e^x as hi + lo for f64 results (see simd512.h for the error analysis), the same
 * bits in the lanes `want` (all ones: every lane; others may differ and are not to be used).
 * Round 28 (SoftplusBackward f64): the table reads by two in-register permutes and a blend
 * instead of gathers, and
 * each scaling by 2^floor(n) one product with the normal power of two, exact up to its one
 * rounding (into subnormals too), that is VSCALEFPD's result, while every wanted lane has
 * floor(n) in [-1022, 1023] (SoftplusBackward: -zh ≤ 700 in every fast lane, whenever the
 * threshold is below 708); acl_scalef4 otherwise (1 thread in cache, SoftplusBackward f64: 55-59 ->
 * 52-55 ms against the gathers and two-product scalings of every lane). */
ACL_AVX2_TARGET static inline __attribute__((always_inline)) __m256d
acl_tab8_pd(__m256d lo4, __m256d hi4, __m256i idx, __m256d b2)
{
    __m256d a = _mm256_castsi256_pd(_mm256_permutevar8x32_epi32(_mm256_castpd_si256(lo4), idx));
    __m256d b = _mm256_castsi256_pd(_mm256_permutevar8x32_epi32(_mm256_castpd_si256(hi4), idx));
    return _mm256_blendv_pd(a, b, b2);
}

/* plain (a constant): the caller promises every wanted lane has x in [-700, 700] (no clamp, no
 * scaling outside the normal powers of two), so neither the clamp to ±1100 nor the test for
 * acl_scalef4 is made; lanes not wanted may then hold anything (their bits are not used). */
ACL_AVX2_TARGET static inline __attribute__((always_inline)) __m256d
acl_exp4_dd_k(__m256d x, __m256d *lo, __m256d want, bool plain)
{
    const __m256d THL = _mm256_setr_pd(0x1.0000000000000p+0, 0x1.172b83c7d517bp+0, 0x1.306fe0a31b715p+0, 0x1.4bfdad5362a27p+0);
    const __m256d THH = _mm256_setr_pd(0x1.6a09e667f3bcdp+0, 0x1.8ace5422aa0dbp+0, 0x1.ae89f995ad3adp+0, 0x1.d5818dcfba487p+0);
    const __m256d TLL = _mm256_setr_pd(0.0, -0x1.19041b9d78a76p-55, 0x1.6f46ad23182e4p-55, 0x1.d4397afec42e2p-56);
    const __m256d TLH = _mm256_setr_pd(-0x1.bdd3413b26456p-54, 0x1.6e9f156864b27p-54, 0x1.7a1cd345dcc81p-54, 0x1.2ed02d75b3707p-55);
    const __m256d C_HI = _mm256_set1_pd(0x1.62e42fefa3800p-4), C_LO = _mm256_set1_pd(0x1.ef35793c76730p-48);
    const __m256d SHIFT = _mm256_set1_pd(0x1.8p52);
    if (!plain) {
        x = _mm256_max_pd(_mm256_set1_pd(-1100.0), x);
        x = _mm256_min_pd(_mm256_set1_pd(1100.0), x);
    }
    __m256d ks = _mm256_fmadd_pd(x, _mm256_set1_pd(0x1.71547652b82fep+3), SHIFT);
    __m256d k = _mm256_sub_pd(ks, SHIFT);
    __m256d r = _mm256_fnmadd_pd(k, C_HI, x);
    r = _mm256_fnmadd_pd(k, C_LO, r);
    __m256d p = _mm256_set1_pd(1.0 / 40320.0);
    p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(1.0 / 5040.0));
    p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(1.0 / 720.0));
    p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(1.0 / 120.0));
    p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(1.0 / 24.0));
    p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(1.0 / 6.0));
    p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(0.5));
    __m256d q = _mm256_fmadd_pd(_mm256_mul_pd(r, r), p, r);
    /* j = ks's low 3 bits: dword indices 2(j & 3), 2(j & 3) + 1 (VPERMD reads 3 bits of each),
     * the half of the table by bit 2 (moved to the sign bit for the blend) */
    __m256i kb = _mm256_castpd_si256(ks), j2 = _mm256_slli_epi64(_mm256_and_si256(kb, _mm256_set1_epi64x(7)), 1);
    __m256i idx = _mm256_add_epi64(_mm256_or_si256(j2, _mm256_slli_epi64(j2, 32)), _mm256_set1_epi64x((int64_t)1 << 32));
    __m256d b2 = _mm256_castsi256_pd(_mm256_slli_epi64(kb, 61));
    __m256d th = acl_tab8_pd(THL, THH, idx, b2), tl = acl_tab8_pd(TLL, TLH, idx, b2);
    __m256d u = _mm256_fmadd_pd(th, q, tl);
    __m256d hi = _mm256_add_pd(th, u);
    __m256d l = _mm256_add_pd(_mm256_sub_pd(th, hi), u);
    __m256d wide = plain ? _mm256_setzero_pd() : _mm256_and_pd(want, _mm256_or_pd(_mm256_cmp_pd(k, _mm256_set1_pd(-8 * 1022), _CMP_LT_OQ),
                                                    _mm256_cmp_pd(k, _mm256_set1_pd(8 * 1023 + 7), _CMP_GT_OQ)));
    if (__builtin_expect(_mm256_movemask_pd(wide) != 0, 0)) {
        __m256d n = _mm256_mul_pd(k, _mm256_set1_pd(0.125));
        *lo = acl_scalef4(l, n);
        return acl_scalef4(hi, n);
    }
    /* 2^floor(k/8): ks's bits are 1.5·2^52's plus k, and those are a multiple of 8, so their
     * logical shift by 3 is theirs / 8 plus floor(k/8) */
    const int64_t mb8 = (int64_t)(0x4338000000000000ull >> 3);
    __m256d s = _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_add_epi64(_mm256_srli_epi64(kb, 3), _mm256_set1_epi64x(1023 - mb8)), 52));
    *lo = _mm256_mul_pd(l, s);
    return _mm256_mul_pd(hi, s);
}

ACL_AVX2_TARGET static inline __attribute__((always_inline)) __m256d
acl_exp4_dd(__m256d x, __m256d *lo, __m256d want)
{
    return acl_exp4_dd_k(x, lo, want, false);
}

#endif
#endif
