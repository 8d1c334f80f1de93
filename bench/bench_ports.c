/* What an AVX-512 instruction costs this CPU's multiply/FMA pipes (issue 14: "where a row cannot
 * reach its figure, show the measurement that proves the limit"); on a CPU without AVX-512 (Zen 3),
 * what an AVX2 instruction costs its 256-bit FMA pipes (the AVX2 table below).
 *
 * The f32 Gelu and Softplus kernels compute in double, 8 lanes per 512-bit vector, and are bound
 * by the pipes that execute vector multiplies and FMAs: measured here, one 512-bit FMA issues per
 * cycle, and several other instructions the kernels need (division, the two-table permute, the
 * conversions, double compares into a mask) take some of the same slots.  For each instruction
 * class this program times 5 of them interleaved with 5 independent FMA chains and reports the
 * extra time in FMA slots ("fma_eq": 0 = runs beside the FMAs for free, 1 = costs as much as one
 * more FMA).  scripts/kernel_mix.py multiplies the instruction counts of a kernel's inner loop by
 * these costs: the FMA-pipe floor of that kernel, in cycles per element.
 *
 *   bench_ports [--tsv | --tsv-file FILE]   (one core; a benchmark, not a test: nothing fails on
 *                                           timings)
 * --tsv prints the table as class<TAB>insn<TAB>fma_eq instead; --tsv-file prints the readable table
 * and writes that TSV to FILE, from the same measurement (scripts/bench.sh hands it to
 * kernel_mix.py, so the costs it prints are the costs it uses).
 *
 * The loops are register-only (no memory traffic); each timed block is the best of 7 runs of
 * 10^7 iterations.  The clock is not read from the system: it is estimated as the FMA issue rate
 * (one 512-bit FMA per cycle), which is printed so that a reader can check it against the
 * nominal clock.
 *
 * AVX2 (round 29; the CPU has AVX2 and FMA but not AVX-512, or --avx2): the same method on 256-bit
 * vectors, eight FMA chains (two FMA pipes of latency 4 on Zen 3 keep eight in flight) and four
 * registers taking the measured instruction, 16 ymm registers in all.  fma_eq is in 256-bit FMA
 * issue slots; the issue rate per cycle is measured against the latency of one dependent FMA
 * chain, taken as 4 cycles (Zen 3 and 4, Intel since Skylake; Zen 2 takes 5, where the clock
 * would read 20 % low and the issue rate 25 % high), and the TSV ends with two rows
 * for kernel_mix.py: slots_per_cycle and ghz (that clock). */
#include <immintrin.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define T512 __attribute__((target("avx512f,avx512dq,avx512vl,fma"), noinline))
#define T256 __attribute__((target("avx2,fma"), noinline))
#define ITERS 10000000L

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Ten vector registers: a0, a2, ..., a8 carry five independent FMA chains (latency 4, so five
 * chains can issue one FMA per cycle); a1, a3, ..., a9 take the measured instruction, reading
 * the neighbouring FMA chain (never its own output: throughput, not latency, is measured). */
#define DECL                                                                                        \
    __m512d a0 = _mm512_set1_pd(1.0), a1 = _mm512_set1_pd(1.1), a2 = _mm512_set1_pd(1.2),          \
            a3 = _mm512_set1_pd(1.3), a4 = _mm512_set1_pd(1.4), a5 = _mm512_set1_pd(1.5),           \
            a6 = _mm512_set1_pd(1.6), a7 = _mm512_set1_pd(1.7), a8 = _mm512_set1_pd(1.8),           \
            a9 = _mm512_set1_pd(1.9);                                                               \
    const __m512d m = _mm512_set1_pd(0.9999999), c = _mm512_set1_pd(1e-10);                         \
    const __m512i ix = _mm512_set1_epi64(3);
/* keeps every register live and in a register, without an instruction */
#define BAR                                                                                         \
    __asm__ volatile("" : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(a4), "+v"(a5), "+v"(a6),      \
                     "+v"(a7), "+v"(a8), "+v"(a9))
#define SUM                                                                                         \
    {                                                                                               \
        double o[8];                                                                                \
        __m512d s_ = _mm512_add_pd(_mm512_add_pd(_mm512_add_pd(a0, a1), _mm512_add_pd(a2, a3)),     \
                                   _mm512_add_pd(_mm512_add_pd(a4, a5),                              \
                                                 _mm512_add_pd(_mm512_add_pd(a6, a7),               \
                                                               _mm512_add_pd(a8, a9))));            \
        _mm512_storeu_pd(o, s_);                                                                    \
        return o[0];                                                                                \
    }
#define F(a) a = _mm512_fmadd_pd(a, m, c)
/* one block: 5 FMAs and 5 of X; X(dst, src) */
#define MIX(NAME, X)                                                                                \
    T512 static double NAME(void)                                                                   \
    {                                                                                               \
        DECL for (long k = 0; k < ITERS; k++)                                                       \
        {                                                                                           \
            F(a0); X(a1, a0); F(a2); X(a3, a2); F(a4); X(a5, a4); F(a6); X(a7, a6); F(a8); X(a9, a8); \
            BAR;                                                                                    \
        }                                                                                           \
        (void)ix;                                                                                   \
        SUM                                                                                         \
    }

#define X_NONE(a, b) (void)0
#define X_FMA(a, b) a = _mm512_fmadd_pd(b, m, c)
#define X_MUL(a, b) a = _mm512_mul_pd(b, m)
#define X_ADD(a, b) a = _mm512_add_pd(b, c)
#define X_DIV(a, b) a = _mm512_div_pd(b, m)
#define X_RCP(a, b) a = _mm512_rcp14_pd(b)
#define X_RANGE(a, b) a = _mm512_range_pd(b, m, 0xA)
#define X_SHIFT(a, b) a = _mm512_castsi512_pd(_mm512_slli_epi64(_mm512_castpd_si512(b), 1))
#define X_PADDQ(a, b) a = _mm512_castsi512_pd(_mm512_add_epi64(_mm512_castpd_si512(b), ix))
#define X_PERM(a, b) a = _mm512_permutexvar_pd(ix, b)
#define X_PERM2(a, b) a = _mm512_permutex2var_pd(b, ix, m)
#define X_CVTPS2PD(a, b) a = _mm512_cvtps_pd(_mm512_castps512_ps256(_mm512_castpd_ps(b)))
#define X_CVTPD2PS(a, b) a = _mm512_castps_pd(_mm512_castps256_ps512(_mm512_cvtpd_ps(b)))
#define X_MASKSUB(a, b) a = _mm512_mask_sub_pd(b, 0x55, m, b)
#define X_SCALEF(a, b) a = _mm512_scalef_pd(b, m)
#define X_MAX(a, b) a = _mm512_max_pd(b, m)
#define X_LOGIC(a, b) a = _mm512_or_pd(b, m)
#define X_BLEND(a, b) a = _mm512_mask_blend_pd(0x55, b, m)

/* compares into a mask: ten FMA chains, the five odd ones masked by a compare of the even chain
 * beside them (no dependency cycle: a masked FMA costs what an FMA costs), so the block is 10 FMAs
 * and the 5 compares */
#define CMPMIX(NAME, K)                                                                             \
    T512 static double NAME(void)                                                                   \
    {                                                                                               \
        DECL for (long i = 0; i < ITERS; i++)                                                       \
        {                                                                                           \
            F(a0); a1 = _mm512_mask_fmadd_pd(a1, K(a0), m, c);                                      \
            F(a2); a3 = _mm512_mask_fmadd_pd(a3, K(a2), m, c);                                      \
            F(a4); a5 = _mm512_mask_fmadd_pd(a5, K(a4), m, c);                                      \
            F(a6); a7 = _mm512_mask_fmadd_pd(a7, K(a6), m, c);                                      \
            F(a8); a9 = _mm512_mask_fmadd_pd(a9, K(a8), m, c);                                      \
            BAR;                                                                                    \
        }                                                                                           \
        (void)ix;                                                                                   \
        SUM                                                                                         \
    }
#define K_PD(b) _mm512_cmp_pd_mask(b, _mm512_set1_pd(2.0), _CMP_LT_OQ)
#define K_PS8(b) _mm256_cmp_ps_mask(_mm512_castps512_ps256(_mm512_castpd_ps(b)), _mm256_set1_ps(2.0f), _CMP_NEQ_UQ)
#define K_FPC8(b) _mm256_fpclass_ps_mask(_mm512_castps512_ps256(_mm512_castpd_ps(b)), 0x18)
#define K_PS16(b) (__mmask8)_mm512_cmp_ps_mask(_mm512_castpd_ps(b), _mm512_set1_ps(2.0f), _CMP_NEQ_UQ)
CMPMIX(mix_cmppd, K_PD)
CMPMIX(mix_cmpps8, K_PS8)
CMPMIX(mix_cmpps16, K_PS16)
#define K_MOVD2M8(b) _mm256_movepi32_mask(_mm256_castpd_si256(_mm512_castpd512_pd256(b)))
#define K_PCMPD8(b) _mm256_cmpgt_epu32_mask(_mm256_castpd_si256(_mm512_castpd512_pd256(b)), _mm256_set1_epi32(0x3f000000))
CMPMIX(mix_fpclass8, K_FPC8)
CMPMIX(mix_movd2m8, K_MOVD2M8)
CMPMIX(mix_pcmpd8, K_PCMPD8)

/* one division among 9 FMA chains: the divider is a separate unit, busy for several cycles per
 * 512-bit division (the saturated rate is printed too), so a kernel with one division per vector
 * pays what this row shows, not the saturated rate */
T512 static double mix_div1(void)
{
    DECL for (long k = 0; k < ITERS; k++)
    {
        F(a0); X_DIV(a1, a0); F(a2); F(a3); F(a4); F(a5); F(a6); F(a7); F(a8); F(a9);
        BAR;
    }
    (void)ix;
    SUM
}

MIX(mix_none, X_NONE)
MIX(mix_fma, X_FMA)
MIX(mix_mul, X_MUL)
MIX(mix_add, X_ADD)
MIX(mix_div, X_DIV)
MIX(mix_rcp, X_RCP)
MIX(mix_range, X_RANGE)
MIX(mix_shift, X_SHIFT)
MIX(mix_paddq, X_PADDQ)
MIX(mix_perm, X_PERM)
MIX(mix_perm2, X_PERM2)
MIX(mix_cvtps2pd, X_CVTPS2PD)
MIX(mix_cvtpd2ps, X_CVTPD2PS)
MIX(mix_masksub, X_MASKSUB)
MIX(mix_scalef, X_SCALEF)
MIX(mix_max, X_MAX)
MIX(mix_logic, X_LOGIC)
MIX(mix_blend, X_BLEND)


/* ---- AVX2: eight FMA chains a0..a7, the measured instruction into b0..b3 from a0, a2, a4, a6 */
#define DECL2                                                                                       \
    __m256d a0 = _mm256_set1_pd(1.0), a1 = _mm256_set1_pd(1.1), a2 = _mm256_set1_pd(1.2),          \
            a3 = _mm256_set1_pd(1.3), a4 = _mm256_set1_pd(1.4), a5 = _mm256_set1_pd(1.5),           \
            a6 = _mm256_set1_pd(1.6), a7 = _mm256_set1_pd(1.7), b0 = _mm256_set1_pd(1.8),           \
            b1 = _mm256_set1_pd(1.9), b2 = _mm256_set1_pd(2.0), b3 = _mm256_set1_pd(2.1);           \
    __m256d m = _mm256_set1_pd(0.9999999), c = _mm256_set1_pd(1e-10);                               \
    const __m256i ix = _mm256_set1_epi64x(3);
#define BAR2                                                                                        \
    __asm__ volatile("" : "+x"(a0), "+x"(a1), "+x"(a2), "+x"(a3), "+x"(a4), "+x"(a5), "+x"(a6),      \
                     "+x"(a7), "+x"(b0), "+x"(b1), "+x"(b2), "+x"(b3))
#define SUM2                                                                                        \
    {                                                                                               \
        double o[4];                                                                                \
        __m256d s_ = _mm256_add_pd(_mm256_add_pd(_mm256_add_pd(a0, a1), _mm256_add_pd(a2, a3)),     \
                                   _mm256_add_pd(_mm256_add_pd(a4, a5), _mm256_add_pd(a6, a7)));   \
        s_ = _mm256_add_pd(s_, _mm256_add_pd(_mm256_add_pd(b0, b1), _mm256_add_pd(b2, b3)));        \
        _mm256_storeu_pd(o, s_);                                                                    \
        return o[0];                                                                                \
    }
#define F2(a) a = _mm256_fmadd_pd(a, m, c)
/* the f32 classes' chains: FMAs of 8 floats (the same pipes and latency), whose lanes stay normal
 * floats (a denormal or NaN operand would time something else) */
#define F2F(a) a = _mm256_castps_pd(_mm256_fmadd_ps(_mm256_castpd_ps(a), _mm256_castpd_ps(m), _mm256_castpd_ps(c)))
/* one block: 8 FMAs (FMA: F2 or F2F) and 4 of X; f32: the constants as floats */
#define MIX2G(NAME, X, FMA, f32)                                                                    \
    T256 static double NAME(void)                                                                   \
    {                                                                                               \
        DECL2 if (f32) {                                                                            \
            m = _mm256_castps_pd(_mm256_set1_ps(0.9999999f));                                       \
            c = _mm256_castps_pd(_mm256_set1_ps(1e-10f));                                           \
            a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = _mm256_castps_pd(_mm256_set1_ps(1.5f));         \
        }                                                                                           \
        for (long k = 0; k < ITERS; k++) {                                                          \
            FMA(a0); X(b0, a0); FMA(a1); FMA(a2); X(b1, a2); FMA(a3);                               \
            FMA(a4); X(b2, a4); FMA(a5); FMA(a6); X(b3, a6); FMA(a7);                               \
            BAR2;                                                                                   \
        }                                                                                           \
        (void)ix;                                                                                   \
        SUM2                                                                                        \
    }
#define MIX2(NAME, X) MIX2G(NAME, X, F2, 0)
#define MIX2F(NAME, X) MIX2G(NAME, X, F2F, 1)
#define Y_NONE(a, b) (void)0
#define Y_FMA(a, b) a = _mm256_fmadd_pd(b, m, c)
#define Y_MUL(a, b) a = _mm256_mul_pd(b, m)
#define Y_ADD(a, b) a = _mm256_add_pd(b, c)
#define Y_DIV(a, b) a = _mm256_div_pd(b, m)
#define Y_DIVPS(a, b) a = _mm256_castps_pd(_mm256_div_ps(_mm256_castpd_ps(m), _mm256_castpd_ps(b)))
#define Y_SHIFT(a, b) a = _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_castpd_si256(b), 1))
#define Y_PADDQ(a, b) a = _mm256_castsi256_pd(_mm256_add_epi64(_mm256_castpd_si256(b), ix))
#define Y_PERMD(a, b) a = _mm256_castsi256_pd(_mm256_permutevar8x32_epi32(_mm256_castpd_si256(b), ix))
#define Y_SHUF(a, b) a = _mm256_castps_pd(_mm256_shuffle_ps(_mm256_castpd_ps(b), _mm256_castpd_ps(m), 0x88))
#define Y_BLENDV(a, b) a = _mm256_blendv_pd(b, m, b)
#define Y_CVTPS2PD(a, b) a = _mm256_cvtps_pd(_mm256_castps256_ps128(_mm256_castpd_ps(b)))
#define Y_CVTPD2PS(a, b) a = _mm256_castps_pd(_mm256_castps128_ps256(_mm256_cvtpd_ps(b)))
#define Y_EXTRACT(a, b) a = _mm256_castps_pd(_mm256_castps128_ps256(_mm256_extractf128_ps(_mm256_castpd_ps(b), 1)))
#define Y_INSERT(a, b) a = _mm256_insertf128_pd(b, _mm256_castpd256_pd128(m), 1)
#define Y_PMOVSX(a, b) a = _mm256_castsi256_pd(_mm256_cvtepi32_epi64(_mm256_castsi256_si128(_mm256_castpd_si256(b))))
#define Y_CMPPD(a, b) a = _mm256_cmp_pd(b, m, _CMP_LT_OQ)
#define Y_CMPPS(a, b) a = _mm256_castps_pd(_mm256_cmp_ps(_mm256_castpd_ps(b), _mm256_castpd_ps(m), _CMP_NGT_UQ))
#define Y_MAX(a, b) a = _mm256_max_pd(b, m)
#define Y_LOGIC(a, b) a = _mm256_or_pd(b, m)
#define Y_ROUND(a, b) a = _mm256_round_pd(b, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC)
MIX2(mix2_none, Y_NONE)
MIX2(mix2_fma, Y_FMA)
MIX2(mix2_mul, Y_MUL)
MIX2(mix2_add, Y_ADD)
MIX2(mix2_div, Y_DIV)
MIX2F(mix2_divps, Y_DIVPS)
MIX2(mix2_shift, Y_SHIFT)
MIX2(mix2_paddq, Y_PADDQ)
MIX2(mix2_permd, Y_PERMD)
MIX2(mix2_shuf, Y_SHUF)
MIX2(mix2_blendv, Y_BLENDV)
MIX2F(mix2_cvtps2pd, Y_CVTPS2PD)
MIX2(mix2_cvtpd2ps, Y_CVTPD2PS)
MIX2(mix2_extract, Y_EXTRACT)
MIX2(mix2_insert, Y_INSERT)
MIX2(mix2_pmovsx, Y_PMOVSX)
MIX2(mix2_cmppd, Y_CMPPD)
MIX2F(mix2_cmpps, Y_CMPPS)
MIX2(mix2_max, Y_MAX)
MIX2(mix2_logic, Y_LOGIC)
MIX2(mix2_round, Y_ROUND)

/* one division among 11 FMA chains (b1..b3 chains too) */
T256 static double mix2_div1(void)
{
    DECL2 for (long k = 0; k < ITERS; k++)
    {
        F2(a0); Y_DIV(b0, a0); F2(a1); F2(a2); F2(a3); F2(a4); F2(a5); F2(a6); F2(a7);
        F2(b1); F2(b2); F2(b3);
        BAR2;
    }
    (void)ix;
    SUM2
}

/* one dependent FMA chain: its latency per FMA */
T256 static double chain2(void)
{
    __m256d a = _mm256_set1_pd(1.0);
    const __m256d m = _mm256_set1_pd(0.9999999), c = _mm256_set1_pd(1e-10);
    for (long k = 0; k < ITERS; k++) {
        a = _mm256_fmadd_pd(a, m, c);
        a = _mm256_fmadd_pd(a, m, c);
        a = _mm256_fmadd_pd(a, m, c);
        a = _mm256_fmadd_pd(a, m, c);
        __asm__ volatile("" : "+x"(a));
    }
    double o[4];
    _mm256_storeu_pd(o, a);
    return o[0];
}

typedef double (*mix_fn)(void);

static double best_ns(mix_fn f, double *sink)
{
    double b = 1e30;
    for (int r = 0; r < 7; r++) {
        double t0 = now();
        *sink += f();
        double t = now() - t0;
        b = t < b ? t : b;
    }
    return b * 1e9 / (double)ITERS; /* ns per block */
}

/* one row of the table */
typedef struct {
    const char *name, *insn, *used_for;
    mix_fn f;
    int n, fmas; /* instructions of the class, and FMAs, per timed block */
} port_row;

/* the AVX-512 table (see the top): rows512[0] is the FMA row (5 chains and 5 more FMAs) */
static const port_row rows512[] = {
    {"fma", "vfmadd*pd zmm", "polynomials (Horner steps)", mix_fma, 5, 5},
    {"mul", "vmulpd zmm", "products", mix_mul, 5, 5},
    {"add", "vaddpd/vsubpd zmm", "reductions, 1 - P", mix_add, 5, 5},
    {"div", "vdivpd zmm (1 per 9 FMAs)", "P/Q of a rational, 1/(1 + e)", mix_div1, 1, 9},
    {"div_sat", "vdivpd zmm (saturated divider)", "(the divider's own rate)", mix_div, 5, 5},
    {"rcp14", "vrcp14pd zmm", "(a division's alternative)", mix_rcp, 5, 5},
    {"range", "vrangepd zmm", "clamps min(|x|, c)", mix_range, 5, 5},
    {"shift", "vpsllq zmm", "exponent bits 2^n", mix_shift, 5, 5},
    {"paddq", "vpaddq zmm", "exponent add", mix_paddq, 5, 5},
    {"perm", "vpermpd zmm (1 table)", "8-entry table", mix_perm, 5, 5},
    {"perm2", "vpermt2pd/vpermi2q zmm (2 tables)", "16-entry table", mix_perm2, 5, 5},
    {"cvtps2pd", "vcvtps2pd ymm->zmm", "f32 inputs widened", mix_cvtps2pd, 5, 5},
    {"cvtpd2ps", "vcvtpd2ps zmm->ymm", "f32 output rounded", mix_cvtpd2ps, 5, 5},
    {"cmppd", "vcmppd zmm->k", "lane tests on 8 doubles", mix_cmppd, 5, 10},
    {"cmpps8", "vcmpps ymm->k", "the same test on the 8 f32 inputs", mix_cmpps8, 5, 10},
    {"cmpps16", "vcmpps zmm->k", "a test of 16 f32 lanes", mix_cmpps16, 5, 10},
    {"fpclass8", "vfpclassps ymm->k", "Inf/NaN lanes of 8 f32 inputs", mix_fpclass8, 5, 10},
    {"movd2m8", "vpmovd2m ymm->k", "sign bits of 8 f32 inputs", mix_movd2m8, 5, 10},
    {"pcmpud8", "vpcmpud ymm->k", "an integer test of 8 f32 inputs' bits", mix_pcmpd8, 5, 10},
    {"masksub", "vsubpd zmm{k}", "select 1 - P under a mask", mix_masksub, 5, 5},
    {"scalef", "vscalefpd zmm", "x·2^k", mix_scalef, 5, 5},
    {"max", "vmaxpd/vminpd zmm", "clamps", mix_max, 5, 5},
    {"logic", "vorpd/vandpd/vxorpd zmm", "sign bits", mix_logic, 5, 5},
    {"blend", "vblendmpd zmm", "selects", mix_blend, 5, 5},
};

/* the AVX2 table (see the top): rows[0] is the FMA row (8 chains and 4 more FMAs) */
static const port_row rows2[] = {
    {"fma", "vfmadd*pd ymm", "polynomials (Horner steps)", mix2_fma, 4, 8},
    {"mul", "vmulpd ymm", "products", mix2_mul, 4, 8},
    {"add", "vaddpd/vsubpd ymm", "reductions, 1 - P, exp's shifts", mix2_add, 4, 8},
    {"div", "vdivpd ymm (1 per 11 FMAs)", "P/Q of a rational, dy/(1 + e)", mix2_div1, 1, 11},
    {"div_sat", "vdivpd ymm (saturated divider)", "(the divider's own rate)", mix2_div, 4, 8},
    {"divps", "vdivps ymm", "the 16-bit Softplus quotient", mix2_divps, 4, 8},
    {"shift", "vpsllq/vpsrlq/vpslld ymm", "exponent bits 2^n", mix2_shift, 4, 8},
    {"paddq", "vpaddq/vpsubq/vpaddd ymm", "exponent add", mix2_paddq, 4, 8},
    {"permd", "vpermd/vpermps ymm", "table reads (8 dwords)", mix2_permd, 4, 8},
    {"shuf", "vshufps/vunpck*/vpunpck* ymm", "table index and halves", mix2_shuf, 4, 8},
    {"blendv", "vblendvpd/vblendvps ymm", "selects under a vector mask", mix2_blendv, 4, 8},
    {"cvtps2pd", "vcvtps2pd xmm->ymm", "f32 inputs widened", mix2_cvtps2pd, 4, 8},
    {"cvtpd2ps", "vcvtpd2ps ymm->xmm", "f32 output rounded", mix2_cvtpd2ps, 4, 8},
    {"extract", "vextractf128/vextracti128", "the high half of 8 f32", mix2_extract, 4, 8},
    {"insert", "vinsertf128/vinserti128", "two halves joined", mix2_insert, 4, 8},
    {"pmovsx", "vpmovsxdq/vpmovzx* xmm->ymm", "f32 masks widened to doubles", mix2_pmovsx, 4, 8},
    {"cmppd", "vcmppd ymm", "lane tests on 4 doubles", mix2_cmppd, 4, 8},
    {"cmpps", "vcmpps ymm", "lane tests on 8 f32", mix2_cmpps, 4, 8},
    {"max", "vmaxpd/vminpd/vmaxps/vminps ymm", "clamps", mix2_max, 4, 8},
    {"logic", "vorpd/vandpd/vandnpd/vxorpd ymm", "sign bits, masks", mix2_logic, 4, 8},
    {"round", "vroundpd ymm", "floor / trunc", mix2_round, 4, 8},
};

int main(int argc, char **argv)
{
    int tsv = 0, avx2 = 0;
    const char *tsv_file = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--tsv")) tsv = 1;
        else if (!strcmp(argv[i], "--avx2")) avx2 = 1;
        else if (!strcmp(argv[i], "--tsv-file") && i + 1 < argc) tsv_file = argv[++i];
        else {
            fprintf(stderr, "bench_ports: unknown argument %s\nusage: bench_ports [--avx2] [--tsv | --tsv-file FILE]\n", argv[i]);
            return 2;
        }
    }
    if (tsv && tsv_file) {
        fprintf(stderr, "bench_ports: --tsv and --tsv-file exclude each other\n");
        return 2;
    }
    __builtin_cpu_init();
    int have512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
                  __builtin_cpu_supports("avx512vl");
    if (!have512) avx2 = 1;
    if (avx2 && !(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))) {
        fprintf(stderr, "bench_ports: this CPU has neither AVX-512 F/DQ/VL nor AVX2 and FMA: nothing to measure\n");
        return 0;
    }
    const port_row *rows = avx2 ? rows2 : rows512;
    size_t nrows = avx2 ? sizeof rows2 / sizeof rows2[0] : sizeof rows512 / sizeof rows512[0];
    const char *width = avx2 ? "256" : "512";
    /* the TSV goes to a temporary file renamed over FILE at the end: never half-written */
    char tmp_name[4096];
    FILE *tf = NULL;
    if (tsv_file) {
        if (snprintf(tmp_name, sizeof tmp_name, "%s.tmp", tsv_file) >= (int)sizeof tmp_name ||
            !(tf = fopen(tmp_name, "w"))) {
            fprintf(stderr, "bench_ports: --tsv-file %s: cannot write\n", tsv_file);
            return 2;
        }
    }
    FILE *to = tsv ? stdout : tf; /* where the TSV goes (--tsv, --tsv-file), or NULL */
    if (to) fprintf(to, "class\tinsn\tfma_eq\n");
    double sink = 0;
    double t_none = best_ns(avx2 ? mix2_none : mix_none, &sink); /* 5 FMAs (AVX2: 8) */
    double t_fma = best_ns(rows[0].f, &sink);                     /* 10 FMAs (AVX2: 12) */
    double slot = t_fma / (rows[0].n + rows[0].fmas);              /* ns per FMA issue slot */
    if (avx2 && t_none / 8.0 < slot) slot = t_none / 8.0;          /* the less disturbed of the two */
    double per_cycle = 1.0, ghz = 1.0 / slot;
    if (avx2) { /* the clock from a 4-cycle FMA latency */
        double lat = best_ns(chain2, &sink) / 4.0;
        ghz = 4.0 / lat;
        per_cycle = lat / 4.0 / slot;
    }
    if (!tsv) {
        if (avx2)
            printf("# AVX2: one 256-bit FMA issue slot: %.4f ns; a dependent FMA: %.4f ns (%.2f GHz if it "
                   "takes 4 cycles), so %.2f FMAs issue per cycle; 8 FMAs alone: %.2f slots\n",
                   slot, 4.0 / ghz, ghz, per_cycle, t_none / slot);
        else
            printf("# one 512-bit FMA issue slot: %.4f ns (%.2f GHz if one FMA issues per cycle); 5 FMAs "
                   "alone: %.2f slots\n",
                   slot, 1.0 / slot, t_none / slot);
        printf("%-9s %-34s %7s  %s\n", "class", "instruction", "fma_eq", "used for");
    }
    for (size_t i = 0; i < nrows; i++) {
        double t = i == 0 ? t_fma : best_ns(rows[i].f, &sink);
        /* extra slots per instruction beside the FMAs */
        double eq = (t - rows[i].fmas * slot) / rows[i].n / slot;
        if (!tsv) printf("%-9s %-34s %7.2f  %s\n", rows[i].name, rows[i].insn, eq, rows[i].used_for);
        if (to) fprintf(to, "%s\t%s\t%.2f\n", rows[i].name, rows[i].insn, eq);
    }
    /* kernel_mix.py's conversion of slots to cycles and time */
    if (to) fprintf(to, "slots_per_cycle\t%s-bit FMAs issued per cycle\t%.2f\nghz\tclock\t%.3f\n", width, per_cycle, ghz);
    if (!tsv) printf("# (checksum %g)\n", sink);
    if (tf && (fclose(tf) != 0 || rename(tmp_name, tsv_file) != 0)) {
        fprintf(stderr, "bench_ports: --tsv-file %s: cannot write\n", tsv_file);
        remove(tmp_name);
        return 2;
    }
    return 0;
}
