/* What an AVX-512 instruction costs this CPU's multiply/FMA pipes (issue 14: "where a row cannot
 * reach its figure, show the measurement that proves the limit").
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
 * The loops are register-only (no memory traffic); each timed block is the best of 5 runs of
 * 10^7 iterations.  The clock is not read from the system: it is estimated as the FMA issue rate
 * (one 512-bit FMA per cycle), which is printed so that a reader can check it against the
 * nominal clock. */
#include <immintrin.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define T512 __attribute__((target("avx512f,avx512dq,avx512vl,fma"), noinline))
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

typedef double (*mix_fn)(void);

static double best_ns(mix_fn f, double *sink)
{
    double b = 1e30;
    for (int r = 0; r < 5; r++) {
        double t0 = now();
        *sink += f();
        double t = now() - t0;
        b = t < b ? t : b;
    }
    return b * 1e9 / (double)ITERS; /* ns per block */
}

int main(int argc, char **argv)
{
    int tsv = argc == 2 && !strcmp(argv[1], "--tsv");
    const char *tsv_file = argc == 3 && !strcmp(argv[1], "--tsv-file") ? argv[2] : NULL;
    if (argc > 1 && !tsv && !tsv_file) {
        fprintf(stderr, "usage: bench_ports [--tsv | --tsv-file FILE]\n");
        return 2;
    }
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512dq") ||
        !__builtin_cpu_supports("avx512vl")) {
        fprintf(stderr, "bench_ports: this CPU has no AVX-512 F/DQ/VL: nothing to measure\n");
        return 0;
    }
    static const struct {
        const char *name, *insn, *used_for;
        mix_fn f;
        int n, fmas; /* instructions of the class, and FMAs, per timed block */
    } rows[] = {
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
    /* the TSV goes to a temporary file renamed over FILE at the end: never half-written */
    char tmp_name[4096];
    FILE *tf = NULL;
    if (tsv_file) {
        if (snprintf(tmp_name, sizeof tmp_name, "%s.tmp", tsv_file) >= (int)sizeof tmp_name ||
            !(tf = fopen(tmp_name, "w"))) {
            fprintf(stderr, "bench_ports: --tsv-file %s: cannot write\n", tsv_file);
            return 2;
        }
        fprintf(tf, "class\tinsn\tfma_eq\n");
    }
    double sink = 0;
    double t_none = best_ns(mix_none, &sink);       /* 5 FMAs */
    double t_fma10 = best_ns(mix_fma, &sink);       /* 10 FMAs */
    double slot = t_fma10 / 10.0;                    /* ns per FMA issue slot */
    if (tsv) printf("class\tinsn\tfma_eq\n");
    else {
        printf("# one 512-bit FMA issue slot: %.4f ns (%.2f GHz if one FMA issues per cycle); 5 FMAs "
               "alone: %.2f slots\n",
               slot, 1.0 / slot, t_none / slot);
        printf("%-9s %-34s %7s  %s\n", "class", "instruction", "fma_eq", "used for");
    }
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        double t = rows[i].f == mix_fma ? t_fma10 : best_ns(rows[i].f, &sink);
        /* extra slots per instruction beside the FMAs */
        double eq = (t - rows[i].fmas * slot) / rows[i].n / slot;
        if (tsv) printf("%s\t%s\t%.2f\n", rows[i].name, rows[i].insn, eq);
        else printf("%-9s %-34s %7.2f  %s\n", rows[i].name, rows[i].insn, eq, rows[i].used_for);
        if (tf) fprintf(tf, "%s\t%s\t%.2f\n", rows[i].name, rows[i].insn, eq);
    }
    if (!tsv) printf("# (checksum %g)\n", sink);
    if (tf && (fclose(tf) != 0 || rename(tmp_name, tsv_file) != 0)) {
        fprintf(stderr, "bench_ports: --tsv-file %s: cannot write\n", tsv_file);
        remove(tmp_name);
        return 2;
    }
    return 0;
}
