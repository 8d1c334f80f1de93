/* AVX-512 in software, for the tests only (ACL_EMULATE_AVX512; the build's aclnn_impl_emu512).
 *
 * The AVX2 kernels promise the AVX-512 kernels' bits (the same double operations in the same
 * order), but a CPU without AVX-512, such as the Zen 3 the project is measured on, cannot run the
 * AVX-512 side of that comparison.  This header lets the same AVX-512 source run there: simd512.h
 * includes it in place of the hardware target, so every _mm512_* / AVX-512VL intrinsic of the
 * kernels becomes SIMDe's portable C (Debian libsimde-dev, its native-alias macros for the
 * AVX-512 extensions only; the AVX2 intrinsics stay native) or, where SIMDe lacks an intrinsic or
 * its portable form departs from the instruction, one of the lane-by-lane forms below, written
 * from the instruction's definition in Intel's SDM.  acl_have_avx512() then answers yes on any
 * AVX2 CPU, and the tests built against this library compare the two kernel families bit for bit.
 *
 * What such a comparison proves: the AVX2 twins compute what the AVX-512 source computes,
 * operation for operation, for the instructions emulated here as the SDM defines them.  The
 * instructions whose special cases the emulation had to model (VRANGEPD/PS's NaN rule, VSCALEFPD,
 * VFPCLASS, VRCP14PS's estimate) are as right as the model; arithmetic (IEEE add, mul, div, FMA,
 * conversions), permutes, masks, loads and stores are exact by construction.  VRCP14PS is
 * emulated by an estimate of its documented accuracy (relative error below 2^-14), not by the
 * hardware's table: the kernels that use it prove their results independent of the estimate
 * (logit_grad.c), which the comparison then checks.  The bf16 instructions (AVX512-BF16) are not
 * emulated: acl_bf16_hw stays false here, and they abort if reached. */
#ifndef ACL_SIMD512_EMU_H
#define ACL_SIMD512_EMU_H

#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SIMDE_X86_AVX512F_ENABLE_NATIVE_ALIASES
#define SIMDE_X86_AVX512DQ_ENABLE_NATIVE_ALIASES
#define SIMDE_X86_AVX512BW_ENABLE_NATIVE_ALIASES
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wsign-conversion"
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wcast-qual"
#pragma GCC diagnostic ignored "-Wcast-align"
#pragma GCC diagnostic ignored "-Wdouble-promotion"
#pragma GCC diagnostic ignored "-Wfloat-equal"
#pragma GCC diagnostic ignored "-Wunused-function"
#include <simde/x86/avx512.h>
#pragma GCC diagnostic pop
/* 512-bit vectors pass through functions compiled for AVX2 (all inlined into the kernels) */
#pragma GCC diagnostic ignored "-Wpsabi"

/* the kernels' target: the AVX2 level the emulation runs on */
#define ACL_EMU_TARGET __attribute__((target("avx2,fma,f16c,bmi,bmi2")))

/* ---- lane access ---- */
#define ACL_EMU_LANES(T, v, E, n) E T##_l[n]; memcpy(T##_l, &(v), sizeof T##_l)

/* ---- arithmetic, min/max and compares on the two 256-bit halves, by the AVX2/FMA instructions
 * themselves: SIMDe's portable FMA is a product and a sum rounded twice, and its compares and
 * min/max are C expressions, not the instructions' NaN rules ---- */
#define ACL_EMU_HALVES2(NAME, VT, HT, OP)                                                           \
    ACL_EMU_TARGET static inline VT NAME(VT a, VT b)                                                \
    {                                                                                               \
        HT x[2], y[2];                                                                              \
        memcpy(x, &a, sizeof x);                                                                    \
        memcpy(y, &b, sizeof y);                                                                    \
        x[0] = OP(x[0], y[0]);                                                                      \
        x[1] = OP(x[1], y[1]);                                                                      \
        memcpy(&a, x, sizeof a);                                                                    \
        return a;                                                                                   \
    }
#define ACL_EMU_HALVES3(NAME, VT, HT, OP)                                                           \
    ACL_EMU_TARGET static inline VT NAME(VT a, VT b, VT c)                                          \
    {                                                                                               \
        HT x[2], y[2], z[2];                                                                        \
        memcpy(x, &a, sizeof x);                                                                    \
        memcpy(y, &b, sizeof y);                                                                    \
        memcpy(z, &c, sizeof z);                                                                    \
        x[0] = OP(x[0], y[0], z[0]);                                                                \
        x[1] = OP(x[1], y[1], z[1]);                                                                \
        memcpy(&a, x, sizeof a);                                                                    \
        return a;                                                                                   \
    }
/* VMULPD / VMULPS with a as the first source operand (NaN a's payload wins; simd512.h's
 * acl_mul_first_* over the halves) */
ACL_EMU_TARGET static inline __m256d acl_emu_mul_first_pd4(__m256d a, __m256d b)
{
    __asm__("vmulpd {%2, %1, %0|%0, %1, %2}" : "=x"(a) : "x"(a), "x"(b));
    return a;
}
ACL_EMU_TARGET static inline __m256 acl_emu_mul_first_ps8(__m256 a, __m256 b)
{
    __asm__("vmulps {%2, %1, %0|%0, %1, %2}" : "=x"(a) : "x"(a), "x"(b));
    return a;
}
#define ACL_EMU_ARITH(S, VT, HT)                                                                    \
    ACL_EMU_HALVES2(acl_emu_add_##S, VT, HT, _mm256_add_##S)                                        \
    ACL_EMU_HALVES2(acl_emu_sub_##S, VT, HT, _mm256_sub_##S)                                        \
    ACL_EMU_HALVES2(acl_emu_mul_##S, VT, HT, _mm256_mul_##S)                                        \
    ACL_EMU_HALVES2(acl_emu_div_##S, VT, HT, _mm256_div_##S)                                        \
    ACL_EMU_HALVES2(acl_emu_min_##S, VT, HT, _mm256_min_##S)                                        \
    ACL_EMU_HALVES2(acl_emu_max_##S, VT, HT, _mm256_max_##S)                                        \
    ACL_EMU_HALVES3(acl_emu_fmadd_##S, VT, HT, _mm256_fmadd_##S)                                    \
    ACL_EMU_HALVES3(acl_emu_fmsub_##S, VT, HT, _mm256_fmsub_##S)                                    \
    ACL_EMU_HALVES3(acl_emu_fnmadd_##S, VT, HT, _mm256_fnmadd_##S)                                  \
    ACL_EMU_HALVES3(acl_emu_fnmsub_##S, VT, HT, _mm256_fnmsub_##S)
ACL_EMU_ARITH(pd, __m512d, __m256d)
ACL_EMU_ARITH(ps, __m512, __m256)
#undef _mm512_add_pd
#undef _mm512_sub_pd
#undef _mm512_mul_pd
#undef _mm512_div_pd
#undef _mm512_min_pd
#undef _mm512_max_pd
#undef _mm512_fmadd_pd
#undef _mm512_fmsub_pd
#undef _mm512_fnmadd_pd
#undef _mm512_fnmsub_pd
#undef _mm512_add_ps
#undef _mm512_sub_ps
#undef _mm512_mul_ps
#undef _mm512_div_ps
#undef _mm512_min_ps
#undef _mm512_max_ps
#undef _mm512_fmadd_ps
#undef _mm512_fmsub_ps
#undef _mm512_fnmadd_ps
#undef _mm512_fnmsub_ps
#define _mm512_add_pd(a, b) acl_emu_add_pd((a), (b))
#define _mm512_sub_pd(a, b) acl_emu_sub_pd((a), (b))
#define _mm512_mul_pd(a, b) acl_emu_mul_pd((a), (b))
#define _mm512_div_pd(a, b) acl_emu_div_pd((a), (b))
#define _mm512_min_pd(a, b) acl_emu_min_pd((a), (b))
#define _mm512_max_pd(a, b) acl_emu_max_pd((a), (b))
#define _mm512_fmadd_pd(a, b, c) acl_emu_fmadd_pd((a), (b), (c))
#define _mm512_fmsub_pd(a, b, c) acl_emu_fmsub_pd((a), (b), (c))
#define _mm512_fnmadd_pd(a, b, c) acl_emu_fnmadd_pd((a), (b), (c))
#define _mm512_fnmsub_pd(a, b, c) acl_emu_fnmsub_pd((a), (b), (c))
#define _mm512_add_ps(a, b) acl_emu_add_ps((a), (b))
#define _mm512_sub_ps(a, b) acl_emu_sub_ps((a), (b))
#define _mm512_mul_ps(a, b) acl_emu_mul_ps((a), (b))
#define _mm512_div_ps(a, b) acl_emu_div_ps((a), (b))
#define _mm512_min_ps(a, b) acl_emu_min_ps((a), (b))
#define _mm512_max_ps(a, b) acl_emu_max_ps((a), (b))
#define _mm512_fmadd_ps(a, b, c) acl_emu_fmadd_ps((a), (b), (c))
#define _mm512_fmsub_ps(a, b, c) acl_emu_fmsub_ps((a), (b), (c))
#define _mm512_fnmadd_ps(a, b, c) acl_emu_fnmadd_ps((a), (b), (c))
#define _mm512_fnmsub_ps(a, b, c) acl_emu_fnmsub_ps((a), (b), (c))
#undef _mm512_mask_sub_pd
#undef _mm512_mask_mul_pd
#undef _mm512_mask_div_pd
#undef _mm512_mask_mul_ps
#define _mm512_mask_sub_pd(src, k, a, b) _mm512_mask_mov_pd((src), (k), acl_emu_sub_pd((a), (b)))
#define _mm512_mask_mul_pd(src, k, a, b) _mm512_mask_mov_pd((src), (k), acl_emu_mul_pd((a), (b)))
#define _mm512_mask_div_pd(src, k, a, b) _mm512_mask_mov_pd((src), (k), acl_emu_div_pd((a), (b)))
#define _mm512_mask_mul_ps(src, k, a, b) _mm512_mask_mov_ps((src), (k), acl_emu_mul_ps((a), (b)))
/* compares: the predicate is an immediate, so macros over the halves */
#define ACL_EMU_CMP512(VT, HT, S, a, b, p)                                                          \
    __extension__({                                                                                 \
        HT x_[2], y_[2];                                                                            \
        VT a_ = (a), b_ = (b);                                                                      \
        memcpy(x_, &a_, sizeof x_);                                                                 \
        memcpy(y_, &b_, sizeof y_);                                                                 \
        (unsigned)_mm256_movemask_##S(_mm256_cmp_##S(x_[0], y_[0], (p))) |                          \
            (unsigned)_mm256_movemask_##S(_mm256_cmp_##S(x_[1], y_[1], (p))) << (sizeof(HT) / sizeof(x_[0][0])); \
    })
#undef _mm512_cmp_pd_mask
#undef _mm512_cmp_ps_mask
#define _mm512_cmp_pd_mask(a, b, p) ((__mmask8)ACL_EMU_CMP512(__m512d, __m256d, pd, a, b, p))
#define _mm512_cmp_ps_mask(a, b, p) ((__mmask16)ACL_EMU_CMP512(__m512, __m256, ps, a, b, p))

/* ---- AVX-512VL's 256- and 128-bit forms, on AVX2 (masks as bits) ---- */
ACL_EMU_TARGET static inline __m256i acl_emu_bits_to_mask32(unsigned k)
{
    const __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    return _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32((int)k), bit), bit);
}
#define _mm256_cmp_ps_mask(a, b, p) ((__mmask8)_mm256_movemask_ps(_mm256_cmp_ps((a), (b), (p))))
#define _mm256_mask_mov_ps(src, k, a) _mm256_blendv_ps((src), (a), _mm256_castsi256_ps(acl_emu_bits_to_mask32(k)))
#define _mm256_mask_mov_epi32(src, k, a) _mm256_blendv_epi8((src), (a), acl_emu_bits_to_mask32(k))
#define _mm256_mask_mul_ps(src, k, a, b) _mm256_mask_mov_ps((src), (k), _mm256_mul_ps((a), (b)))
/* unsigned a > b: signed compare of both with the sign bit flipped */
#define _mm256_cmpgt_epu32_mask(a, b)                                                               \
    ((__mmask8)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(                           \
        _mm256_xor_si256((a), _mm256_set1_epi32(INT32_MIN)), _mm256_xor_si256((b), _mm256_set1_epi32(INT32_MIN))))))
#define _mm512_cmpgt_epu32_mask(a, b) _mm512_cmp_epu32_mask((a), (b), 6)
/* VPTESTMW: bit i set where a & b is nonzero in 16-bit lane i */
#define ACL_EMU_TEST16(NAME, VT, MT, N)                                                             \
    ACL_EMU_TARGET static inline MT NAME(VT a, VT b)                                                \
    {                                                                                               \
        ACL_EMU_LANES(x, a, uint16_t, N);                                                           \
        ACL_EMU_LANES(y, b, uint16_t, N);                                                           \
        unsigned m = 0;                                                                             \
        for (int i = 0; i < (N); i++) m |= (unsigned)((x_l[i] & y_l[i]) != 0) << i;                 \
        return (MT)m;                                                                               \
    }
ACL_EMU_TEST16(acl_emu_test_epi16_256, __m256i, __mmask16, 16)
ACL_EMU_TEST16(acl_emu_test_epi16_128, __m128i, __mmask8, 8)
ACL_EMU_TARGET static inline __mmask16 acl_emu_test_epi8_128(__m128i a, __m128i b)
{
    return (__mmask16)(~_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_and_si128(a, b), _mm_setzero_si128())) & 0xffff);
}
#define _mm256_test_epi16_mask(a, b) acl_emu_test_epi16_256((a), (b))
#define _mm_test_epi16_mask(a, b) acl_emu_test_epi16_128((a), (b))
#define _mm_test_epi8_mask(a, b) acl_emu_test_epi8_128((a), (b))

/* ---- masked loads and stores: lane by lane, masked-off lanes neither read nor written ---- */
#define ACL_EMU_MASKZ_LOAD(NAME, VT, E, N)                                                          \
    ACL_EMU_TARGET static inline VT NAME(uint64_t m, const void *p)                                  \
    {                                                                                               \
        E l[N];                                                                                     \
        VT v;                                                                                       \
        for (int i = 0; i < (N); i++) {                                                             \
            l[i] = 0;                                                                               \
            if (m >> i & 1) memcpy(&l[i], (const char *)p + (size_t)i * sizeof(E), sizeof(E));       \
        }                                                                                           \
        memcpy(&v, l, sizeof v);                                                                    \
        return v;                                                                                   \
    }
#define ACL_EMU_MASK_STORE(NAME, VT, E, N)                                                          \
    ACL_EMU_TARGET static inline void NAME(void *p, uint64_t m, VT v)                               \
    {                                                                                               \
        E l[N];                                                                                     \
        memcpy(l, &v, sizeof l);                                                                    \
        for (int i = 0; i < (N); i++)                                                               \
            if (m >> i & 1) memcpy((char *)p + (size_t)i * sizeof(E), &l[i], sizeof(E));             \
    }
ACL_EMU_MASKZ_LOAD(acl_emu_maskz_loadu_ps512, __m512, float, 16)
ACL_EMU_MASKZ_LOAD(acl_emu_maskz_loadu_pd512, __m512d, double, 8)
ACL_EMU_MASKZ_LOAD(acl_emu_maskz_loadu_epi16_512, __m512i, uint16_t, 32)
ACL_EMU_MASKZ_LOAD(acl_emu_maskz_loadu_ps256, __m256, float, 8)
ACL_EMU_MASKZ_LOAD(acl_emu_maskz_loadu_epi16_256, __m256i, uint16_t, 16)
ACL_EMU_MASKZ_LOAD(acl_emu_maskz_loadu_epi16_128, __m128i, uint16_t, 8)
ACL_EMU_MASKZ_LOAD(acl_emu_maskz_loadu_epi8_128, __m128i, uint8_t, 16)
ACL_EMU_MASK_STORE(acl_emu_mask_storeu_ps512, __m512, float, 16)
ACL_EMU_MASK_STORE(acl_emu_mask_storeu_pd512, __m512d, double, 8)
ACL_EMU_MASK_STORE(acl_emu_mask_storeu_epi16_512, __m512i, uint16_t, 32)
ACL_EMU_MASK_STORE(acl_emu_mask_storeu_ps256, __m256, float, 8)
ACL_EMU_MASK_STORE(acl_emu_mask_storeu_epi16_256, __m256i, uint16_t, 16)
ACL_EMU_MASK_STORE(acl_emu_mask_storeu_epi16_128, __m128i, uint16_t, 8)
#undef _mm512_maskz_loadu_ps
#undef _mm512_maskz_loadu_pd
#undef _mm512_maskz_loadu_epi16
#undef _mm256_maskz_loadu_ps
#undef _mm256_maskz_loadu_epi16
#undef _mm_maskz_loadu_epi16
#undef _mm_maskz_loadu_epi8
#undef _mm512_mask_storeu_ps
#undef _mm512_mask_storeu_pd
#undef _mm512_mask_storeu_epi16
#undef _mm256_mask_storeu_ps
#undef _mm256_mask_storeu_epi16
#undef _mm_mask_storeu_epi16
#define _mm512_maskz_loadu_ps(m, p) acl_emu_maskz_loadu_ps512((m), (p))
#define _mm512_maskz_loadu_pd(m, p) acl_emu_maskz_loadu_pd512((m), (p))
#define _mm512_maskz_loadu_epi16(m, p) acl_emu_maskz_loadu_epi16_512((m), (p))
#define _mm256_maskz_loadu_ps(m, p) acl_emu_maskz_loadu_ps256((m), (p))
#define _mm256_maskz_loadu_epi16(m, p) acl_emu_maskz_loadu_epi16_256((m), (p))
#define _mm_maskz_loadu_epi16(m, p) acl_emu_maskz_loadu_epi16_128((m), (p))
#define _mm_maskz_loadu_epi8(m, p) acl_emu_maskz_loadu_epi8_128((m), (p))
#define _mm512_mask_storeu_ps(p, m, v) acl_emu_mask_storeu_ps512((p), (m), (v))
#define _mm512_mask_storeu_pd(p, m, v) acl_emu_mask_storeu_pd512((p), (m), (v))
#define _mm512_mask_storeu_epi16(p, m, v) acl_emu_mask_storeu_epi16_512((p), (m), (v))
#define _mm256_mask_storeu_ps(p, m, v) acl_emu_mask_storeu_ps256((p), (m), (v))
#define _mm256_mask_storeu_epi16(p, m, v) acl_emu_mask_storeu_epi16_256((p), (m), (v))
#define _mm_mask_storeu_epi16(p, m, v) acl_emu_mask_storeu_epi16_128((p), (m), (v))

/* streaming stores: plain stores (the same bytes; only the cache behaviour differs) */
#undef _mm512_stream_ps
#undef _mm512_stream_si512
#define _mm512_stream_ps(p, v) _mm512_storeu_ps((p), (v))
#define _mm512_stream_si512(p, v) _mm512_storeu_si512((p), (v))

/* ---- conversions, by halves on the AVX / F16C instructions (each exact as the 512-bit one) ---- */
ACL_EMU_TARGET static inline __m512d acl_emu_cvtps_pd(__m256 v)
{
    __m256d h[2] = {_mm256_cvtps_pd(_mm256_castps256_ps128(v)), _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1))};
    __m512d r;
    memcpy(&r, h, sizeof r);
    return r;
}
ACL_EMU_TARGET static inline __m256 acl_emu_cvtpd_ps(__m512d v)
{
    __m256d h[2];
    memcpy(h, &v, sizeof h);
    return _mm256_set_m128(_mm256_cvtpd_ps(h[1]), _mm256_cvtpd_ps(h[0]));
}
ACL_EMU_TARGET static inline __m512 acl_emu_cvtph_ps(__m256i v)
{
    __m256 h[2] = {_mm256_cvtph_ps(_mm256_castsi256_si128(v)), _mm256_cvtph_ps(_mm256_extracti128_si256(v, 1))};
    __m512 r;
    memcpy(&r, h, sizeof r);
    return r;
}
#define acl_emu_cvtps_ph(v, rnd)                                                                    \
    __extension__({                                                                                 \
        __m256 h_[2];                                                                               \
        memcpy(h_, &(v), sizeof h_);                                                                \
        _mm256_set_m128i(_mm256_cvtps_ph(h_[1], (rnd)), _mm256_cvtps_ph(h_[0], (rnd)));             \
    })
ACL_EMU_TARGET static inline __m256 acl_emu_extractf32x8(__m512 v, int hi)
{
    __m256 h[2];
    memcpy(h, &v, sizeof h);
    return h[hi & 1];
}
/* VPMOVZXWD (zero extension) and VPMOVDW (truncation to the low 16 bits), lane by lane */
#define ACL_EMU_CVT_INT(NAME, VO, VI, EO, EI, N)                                                    \
    ACL_EMU_TARGET static inline VO NAME(VI v)                                                      \
    {                                                                                               \
        ACL_EMU_LANES(a, v, EI, N);                                                                 \
        EO r[N];                                                                                    \
        for (int i = 0; i < (N); i++) r[i] = (EO)a_l[i];                                            \
        VO o;                                                                                       \
        memcpy(&o, r, sizeof o);                                                                    \
        return o;                                                                                   \
    }
ACL_EMU_CVT_INT(acl_emu_cvtepu16_epi32, __m512i, __m256i, uint32_t, uint16_t, 16)
ACL_EMU_CVT_INT(acl_emu_cvtepi32_epi16_512, __m256i, __m512i, uint16_t, uint32_t, 16)
ACL_EMU_CVT_INT(acl_emu_cvtepi32_epi16_256, __m128i, __m256i, uint16_t, uint32_t, 8)
#undef _mm512_cvtps_pd
#undef _mm512_cvtpd_ps
#undef _mm512_cvtph_ps
#undef _mm512_cvtps_ph
#undef _mm512_extractf32x8_ps
#undef _mm512_cvtepu16_epi32
#undef _mm512_cvtepi32_epi16
#undef _mm256_cvtepi32_epi16
#define _mm512_cvtps_pd(v) acl_emu_cvtps_pd(v)
#define _mm512_cvtpd_ps(v) acl_emu_cvtpd_ps(v)
#define _mm512_cvtph_ps(v) acl_emu_cvtph_ps(v)
#define _mm512_cvtps_ph(v, rnd) acl_emu_cvtps_ph(v, rnd)
#define _mm512_extractf32x8_ps(v, hi) acl_emu_extractf32x8((v), (hi))
#define _mm512_cvtepu16_epi32(v) acl_emu_cvtepu16_epi32(v)
#define _mm512_cvtepi32_epi16(v) acl_emu_cvtepi32_epi16_512(v)
#define _mm256_cvtepi32_epi16(v) acl_emu_cvtepi32_epi16_256(v)

/* ---- compares under a mask, class tests ---- */
#undef _mm512_mask_cmp_ps_mask
#undef _mm512_mask_cmp_pd_mask
#undef _mm256_mask_cmp_ps_mask
#undef _mm512_cmp_epu32_mask
#define _mm512_mask_cmp_ps_mask(k, a, b, p) ((__mmask16)((k) & _mm512_cmp_ps_mask((a), (b), (p))))
#define _mm512_mask_cmp_pd_mask(k, a, b, p) ((__mmask8)((k) & _mm512_cmp_pd_mask((a), (b), (p))))
#define _mm256_mask_cmp_ps_mask(k, a, b, p) ((__mmask8)((k) & _mm256_cmp_ps_mask((a), (b), (p))))
ACL_EMU_TARGET static inline __mmask16 acl_emu_cmp_epu32_mask(__m512i a, __m512i b, int p)
{
    ACL_EMU_LANES(x, a, uint32_t, 16);
    ACL_EMU_LANES(y, b, uint32_t, 16);
    unsigned m = 0;
    for (int i = 0; i < 16; i++) {
        bool t;
        switch (p & 7) {
        case 0: t = x_l[i] == y_l[i]; break;
        case 1: t = x_l[i] < y_l[i]; break;
        case 2: t = x_l[i] <= y_l[i]; break;
        case 3: t = false; break;
        case 4: t = x_l[i] != y_l[i]; break;
        case 5: t = x_l[i] >= y_l[i]; break;
        case 6: t = x_l[i] > y_l[i]; break;
        default: t = true; break;
        }
        m |= (unsigned)t << i;
    }
    return (__mmask16)m;
}
#define _mm512_cmp_epu32_mask(a, b, p) acl_emu_cmp_epu32_mask((a), (b), (p))

/* VFPCLASS: imm bits 0 QNaN, 1 +0, 2 -0, 3 +Inf, 4 -Inf, 5 denormal, 6 finite negative, 7 SNaN */
static inline unsigned acl_emu_class_bits(uint64_t u, int ebits, int mbits)
{
    uint64_t sign = u >> (ebits + mbits) & 1, e = u >> mbits & ((1u << ebits) - 1u), f = u & ((1ull << mbits) - 1);
    uint64_t emax = (1u << ebits) - 1u;
    if (e == emax && f) return f >> (mbits - 1) & 1 ? 0x01u : 0x80u;
    if (e == emax) return sign ? 0x10u : 0x08u;
    if (e == 0 && f == 0) return sign ? 0x04u : 0x02u;
    return (e == 0 ? 0x20u : 0u) | (sign ? 0x40u : 0u);
}
#define ACL_EMU_FPCLASS(NAME, VT, E, UT, N, EB, MB)                                                 \
    ACL_EMU_TARGET static inline unsigned NAME(unsigned k, VT v, int imm)                            \
    {                                                                                               \
        UT l[N];                                                                                    \
        memcpy(l, &v, sizeof l);                                                                    \
        unsigned m = 0;                                                                             \
        for (int i = 0; i < (N); i++)                                                               \
            if ((k >> i & 1) && (acl_emu_class_bits(l[i], EB, MB) & (unsigned)imm)) m |= 1u << i;   \
        return m;                                                                                   \
    }
ACL_EMU_FPCLASS(acl_emu_fpclass_pd512, __m512d, double, uint64_t, 8, 11, 52)
ACL_EMU_FPCLASS(acl_emu_fpclass_ps512, __m512, float, uint32_t, 16, 8, 23)
ACL_EMU_FPCLASS(acl_emu_fpclass_ps256, __m256, float, uint32_t, 8, 8, 23)
#undef _mm512_fpclass_pd_mask
#undef _mm512_mask_fpclass_pd_mask
#undef _mm512_fpclass_ps_mask
#undef _mm512_mask_fpclass_ps_mask
#undef _mm256_fpclass_ps_mask
#define _mm512_fpclass_pd_mask(v, imm) ((__mmask8)acl_emu_fpclass_pd512(0xffu, (v), (imm)))
#define _mm512_mask_fpclass_pd_mask(k, v, imm) ((__mmask8)acl_emu_fpclass_pd512((k), (v), (imm)))
#define _mm512_fpclass_ps_mask(v, imm) ((__mmask16)acl_emu_fpclass_ps512(0xffffu, (v), (imm)))
#define _mm512_mask_fpclass_ps_mask(k, v, imm) ((__mmask16)acl_emu_fpclass_ps512((k), (v), (imm)))
#define _mm256_fpclass_ps_mask(v, imm) ((__mmask8)acl_emu_fpclass_ps256(0xffu, (v), (imm)))

/* ---- VRANGEPD / VRANGEPS (imm[1:0] min, max, min-abs, max-abs; imm[3:2] the sign: src1's, the
 * compare's, cleared, set).  SDM special cases: an SNaN operand gives it quieted (src1 first); a
 * QNaN src1 with a non-NaN src2 gives src2 with the sign control applied; a QNaN src2 gives it. */
#define ACL_EMU_RANGE(NAME, VT, E, UT, N, SIGN, QUIET)                                              \
    ACL_EMU_TARGET static inline VT NAME(VT a, VT b, int imm)                                       \
    {                                                                                               \
        E x[N], y[N];                                                                               \
        memcpy(x, &a, sizeof x);                                                                    \
        memcpy(y, &b, sizeof y);                                                                    \
        for (int i = 0; i < (N); i++) {                                                             \
            UT ux, uy, ur;                                                                          \
            memcpy(&ux, &x[i], sizeof ux);                                                          \
            memcpy(&uy, &y[i], sizeof uy);                                                          \
            bool nx = isnan(x[i]), ny = isnan(y[i]), sx = nx && !(ux & (QUIET)), sy = ny && !(uy & (QUIET)); \
            if (sx || (!sy && nx && ny)) { ur = ux | (QUIET); memcpy(&x[i], &ur, sizeof ur); continue; } \
            if (sy || ny) { ur = uy | (QUIET); memcpy(&x[i], &ur, sizeof ur); continue; }            \
            E r, ax = fabs(x[i]), ay = fabs(y[i]);                                                  \
            if (nx) r = y[i];                                                                       \
            else switch (imm & 3) {                                                                 \
                case 0: r = x[i] < y[i] || (x[i] == y[i] && signbit(x[i])) ? x[i] : y[i]; break;    \
                case 1: r = x[i] > y[i] || (x[i] == y[i] && !signbit(x[i])) ? x[i] : y[i]; break;   \
                case 2: r = ax < ay || (ax == ay && signbit(x[i])) ? x[i] : y[i]; break;                  \
                default: r = ax > ay || (ax == ay && !signbit(x[i])) ? x[i] : y[i]; break;          \
                }                                                                                   \
            UT ui, rs;                                                                              \
            memcpy(&rs, &r, sizeof rs);                                                             \
            switch (imm >> 2 & 3) {                                                                 \
            case 0: ui = (rs & ~(SIGN)) | (ux & (SIGN)); break;                                     \
            case 1: ui = rs; break;                                                                 \
            case 2: ui = rs & ~(SIGN); break;                                                       \
            default: ui = rs | (SIGN); break;                                                       \
            }                                                                                       \
            memcpy(&x[i], &ui, sizeof ui);                                                          \
        }                                                                                           \
        VT o;                                                                                       \
        memcpy(&o, x, sizeof o);                                                                    \
        return o;                                                                                   \
    }
ACL_EMU_RANGE(acl_emu_range_pd512, __m512d, double, uint64_t, 8, 0x8000000000000000ull, 0x0008000000000000ull)
ACL_EMU_RANGE(acl_emu_range_ps256, __m256, float, uint32_t, 8, 0x80000000u, 0x00400000u)
#undef _mm512_range_pd
#undef _mm256_range_ps
#define _mm512_range_pd(a, b, imm) acl_emu_range_pd512((a), (b), (imm))
#define _mm256_range_ps(a, b, imm) acl_emu_range_ps256((a), (b), (imm))

/* VSCALEFPD for finite b: a·2^floor(b) rounded once (ldexp's single rounding, subnormal results
 * included; no flush of subnormal a: MXCSR.DAZ is off); NaN operands propagate (a's first) */
ACL_EMU_TARGET static inline __m512d acl_emu_scalef_pd(__m512d a, __m512d b)
{
    ACL_EMU_LANES(x, a, double, 8);
    ACL_EMU_LANES(y, b, double, 8);
    for (int i = 0; i < 8; i++) {
        if (isnan(x_l[i]) || isnan(y_l[i])) { x_l[i] = x_l[i] + y_l[i]; continue; }
        double f = floor(y_l[i]);
        int e = f > 4000.0 ? 4000 : f < -4000.0 ? -4000 : (int)f;
        x_l[i] = ldexp(x_l[i], e);
    }
    __m512d o;
    memcpy(&o, x_l, sizeof o);
    return o;
}
#undef _mm512_scalef_pd
#define _mm512_scalef_pd(a, b) acl_emu_scalef_pd((a), (b))

/* VRCP14PS: an estimate within 2^-14 relative (here 1/x rounded to 14 fraction bits, within
 * 2^-15: a different estimate from the hardware's; see the top of this file) */
ACL_EMU_TARGET static inline __m512 acl_emu_rcp14_ps(__m512 v)
{
    ACL_EMU_LANES(x, v, float, 16);
    for (int i = 0; i < 16; i++) {
        float r = 1.0f / x_l[i];
        uint32_t u;
        memcpy(&u, &r, sizeof u);
        if (isfinite(r) && r != 0.0f && fabsf(r) >= 0x1p-126f) u = (u + 0x100u) & ~0x1ffu;
        memcpy(&x_l[i], &u, sizeof u);
    }
    __m512 o;
    memcpy(&o, x_l, sizeof o);
    return o;
}
#undef _mm512_rcp14_ps
#define _mm512_rcp14_ps(v) acl_emu_rcp14_ps(v)

/* VGATHERDPS under a mask (masked-off lanes from src, not read) */
ACL_EMU_TARGET static inline __m512 acl_emu_mask_i32gather_ps(__m512 src, __mmask16 m, __m512i idx, const void *base,
                                                              int scale)
{
    ACL_EMU_LANES(s, src, float, 16);
    ACL_EMU_LANES(j, idx, int32_t, 16);
    for (int i = 0; i < 16; i++)
        if (m >> i & 1) memcpy(&s_l[i], (const char *)base + (ptrdiff_t)j_l[i] * scale, sizeof(float));
    __m512 o;
    memcpy(&o, s_l, sizeof o);
    return o;
}
#undef _mm512_mask_i32gather_ps
#define _mm512_mask_i32gather_ps(src, m, idx, base, scale) acl_emu_mask_i32gather_ps((src), (m), (idx), (base), (scale))

/* AVX512-BF16: not emulated (acl_bf16_hw is false in this build) */
#undef _mm256_cvtneps_pbh
#undef _mm512_cvtneps_pbh
#undef _mm512_cvtne2ps_pbh
#define _mm256_cvtneps_pbh(v) ((void)(v), abort(), _mm_setzero_si128())
#define _mm512_cvtneps_pbh(v) ((void)(v), abort(), _mm256_setzero_si256())
#define _mm512_cvtne2ps_pbh(a, b) ((void)(a), (void)(b), abort(), _mm512_setzero_si512())

#endif
