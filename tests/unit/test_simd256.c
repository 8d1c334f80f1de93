/* ctest-labels: unit
 * The AVX2 exp helpers of impl/src/runtime/simd256.h (round 28, CPUs without AVX-512): each is
 * simd512.h's function on vectors of four lanes (the fast exps two at a time, as the kernels
 * call them) with the same operations, so
 *   - on every CPU with AVX2 they meet the bounds test_simd512.c holds the 8-lane forms to:
 *     acl_expneg4x2_fast and acl_logistic4x2_fast within 2^-37 relative over [-708, 708],
 *     acl_exp4x2_fast_nhalf within 2^-37 over [0, 1400], their results normal; acl_exp4_dd's
 *     hi + lo within 0.18·2^-53 relative while normal (its comment's bound), and hi down into
 *     the subnormal results (x to -745) within 0.5 ULP plus its own 1.18·2^-53 relative error
 *     before the scaling, which just below DBL_MIN is 0.54 subnormal ULP (0.70 ULP measured
 *     here; simd512.h's "< 0.61 ULP", from a coarser grid, understates it; SoftplusBackward f64
 *     sends x < -700 to its scalar form, so no kernel uses these results), overflow to +Inf, NaN kept;
 *   - on a CPU with AVX-512 too, every result has the 8-lane function's bits.
 * The table read by permutes (acl_exp2_16th_tb4x2) against plain lookups.
 * acl_scalef4 (VSCALEFPD by two exact products) is checked through acl_exp4_dd's subnormal and
 * overflowing results and, with AVX-512, against VSCALEFPD itself.
 * Round 29: acl_pack8_16_avx2's bf16 rounding (NaN-free vectors take the rounding alone) against
 * acl_f32_to_bf16 lane by lane, on vectors with and without NaN lanes; acl_table8_ps against
 * plain lookups, whole vectors and every tail.
 * Round 30: the even / odd forms of 16 bf16 elements: acl_load16_bf16_eo against acl_bf16_to_f32
 * element by element, acl_pack16_bf16_eo (with and without a NaN among the lanes, and with the
 * caller's nan_free) against acl_f32_to_bf16, acl_table16_eo_ps against plain lookups. */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "runtime/conv.h"
#include "runtime/simd256.h"

#ifdef ACL_HAVE_AVX2_KERNELS
enum { EXPNEG, LOGISTIC, NHALF, DD_HI, DD_LO, SCALEF };

/* r[0..7] = f(y[0..7]) (SCALEF: y[l]·2^floor(y2[l])): the fast exps as the kernels call them, on two
 * vectors at once; the others a vector at a time */
ACL_AVX2_TARGET static void apply8x(int f, const double *y, const double *y2, double *r)
{
    __m256d v[2] = {_mm256_loadu_pd(y), _mm256_loadu_pd(y + 4)}, o[2], sc[2], lo;
    const __m256d all = _mm256_castsi256_pd(_mm256_set1_epi64x(-1));
    switch (f) {
    case EXPNEG:
        acl_expneg4x2_fast(v, o, sc);
        for (int h = 0; h < 2; h++) o[h] = _mm256_mul_pd(sc[h], o[h]);
        break;
    case LOGISTIC: acl_logistic4x2_fast(v, o); break;
    case NHALF: acl_exp4x2_fast_nhalf(v, o); break;
    default:
        for (int h = 0; h < 2; h++) {
            if (f == DD_HI) o[h] = acl_exp4_dd(v[h], &lo, all);
            else if (f == DD_LO) acl_exp4_dd(v[h], &o[h], all);
            else o[h] = acl_scalef4(v[h], _mm256_loadu_pd(y2 + 4 * h));
        }
        break;
    }
    _mm256_storeu_pd(r, o[0]);
    _mm256_storeu_pd(r + 4, o[1]);
}

ACL_AVX512_TARGET static void apply8(int f, const double *y, const double *y2, double *r)
{
    __m512d v = _mm512_loadu_pd(y), sc, lo;
    switch (f) {
    case EXPNEG: v = acl_expneg8_fast(v, &sc); v = _mm512_mul_pd(sc, v); break;
    case LOGISTIC: v = acl_logistic8_fast(v); break;
    case NHALF: v = acl_exp8_fast_nhalf(v); break;
    case DD_HI: v = acl_exp8_dd(v, &lo); break;
    case DD_LO: acl_exp8_dd(v, &lo); v = lo; break;
    default: v = _mm512_scalef_pd(v, _mm512_loadu_pd(y2)); break;
    }
    _mm512_storeu_pd(r, v);
}

static long double exact(int f, long double y)
{
    switch (f) {
    case EXPNEG: return expl(-y);
    case LOGISTIC: return 1.0L / (1.0L + expl(-y));
    case NHALF: return expl(-y / 2);
    default: return expl(y);
    }
}

/* f at n evenly spaced points from y0 to y1 (n a multiple of 8): the largest relative error
 * against long double, the smallest result, and (with AVX-512) the count of results whose bits
 * differ from the 8-lane function's */
static double worst(int f, double y0, double y1, int n, double *smallest, int *differ)
{
    double w = 0.0;
    for (int i = 0; i < n; i += 8) {
        double y[8], r[8], r8[8];
        for (int l = 0; l < 8; l++) y[l] = fmin(y1, y0 + (y1 - y0) * (i + l) / (n - 1));
        apply8x(f, y, y, r);
        for (int l = 0; l < 8; l++) {
            long double e = exact(f, y[l]);
            double rel = (double)fabsl(((long double)r[l] - e) / e);
            if (!(rel <= w)) w = rel; /* NaN counts as the worst */
            if (r[l] < *smallest) *smallest = r[l];
        }
        if (acl_have_avx512()) {
            apply8(f, y, y, r8);
            *differ += memcmp(r, r8, sizeof r) != 0;
        }
    }
    return w;
}

/* acl_exp2_16th_tb4x2 (the 16-entry tables read for 8 lanes by VPERMD pairs and a blend) against
 * the plain lookup tb[j] + (nm's bits << 48), j = nm's low 4 bits, for both tables, every j in
 * every lane and n of either sign */
ACL_AVX2_TARGET static int table_read_differs(const uint64_t *tb, const double *nm)
{
    __m256d s[2];
    acl_exp2_16th_tb4x2(tb, _mm256_loadu_pd(nm), _mm256_loadu_pd(nm + 4), &s[0], &s[1]);
    uint64_t got[8], want[8];
    memcpy(got, s, sizeof got);
    for (int l = 0; l < 8; l++) {
        uint64_t b;
        memcpy(&b, &nm[l], sizeof b);
        want[l] = tb[b & 15] + (b << 48);
    }
    return memcmp(got, want, sizeof got) != 0;
}

static void table_read_by_permutes(void **state)
{
    (void)state;
    if (!acl_have_avx2()) skip();
    const uint64_t *tabs[2] = {acl_exp2_16th_bits, acl_expnh_bits};
    int differ = 0;
    for (int t = 0; t < 2; t++)
        for (int i = 0; i < 4096; i++) {
            double nm[8];
            for (int l = 0; l < 8; l++) nm[l] = 0x1.8p52 + (double)((i * 8 + l * 5) % 3001 - 1500);
            differ += table_read_differs(tabs[t], nm);
        }
    assert_int_equal(differ, 0);
}

static void fast_exps_within_their_bounds(void **state)
{
    (void)state;
    if (!acl_have_avx2()) skip();
    int differ = 0;
    double small = INFINITY;
    assert_true(worst(EXPNEG, -708.0, 708.0, 400000, &small, &differ) < 0x1p-37);
    assert_true(small >= DBL_MIN);
    small = INFINITY;
    assert_true(worst(LOGISTIC, -7.999, 7.999, 200000, &small, &differ) < 0x1p-37);
    assert_true(worst(LOGISTIC, -708.0, 708.0, 200000, &small, &differ) < 0x1p-37);
    assert_true(small >= DBL_MIN);
    small = INFINITY;
    assert_true(worst(NHALF, 0.0, 63.9999, 200000, &small, &differ) < 0x1p-37);
    assert_true(worst(NHALF, 0.0, 1400.0, 200000, &small, &differ) < 0x1p-37);
    assert_true(small >= DBL_MIN);
    assert_int_equal(differ, 0);
}

/* hi + lo against expl: 0.18·2^-53 relative while the result is normal, hi alone within
 * 0.5 ULP + 1.18·2^-53·e below that, +Inf past the overflow threshold, NaN for NaN */
static void exp_dd_within_its_bound(void **state)
{
    (void)state;
    if (!acl_have_avx2()) skip();
    int differ = 0, bad = 0;
    double w = 0.0;
    for (int i = 0; i < 400000; i += 8) {
        double y[8], hi[8], lo[8], h8[8], l8[8];
        for (int l = 0; l < 8; l++) y[l] = -745.0 + (709.7 + 745.0) * (i + l) / 399999.0;
        apply8x(DD_HI, y, y, hi);
        apply8x(DD_LO, y, y, lo);
        for (int l = 0; l < 8; l++) {
            long double e = expl((long double)y[l]);
            if (e >= DBL_MIN * 0x1p60L) {
                double rel = (double)fabsl(((long double)hi[l] + lo[l] - e) / e);
                if (!(rel <= w)) w = rel;
            } else { /* hi alone, in ULP of the (possibly subnormal) double near e */
                long double ulp = e >= DBL_MIN ? ldexpl(1.0L, ilogbl(e) - 52) : 0x1p-1074L;
                if (!(fabsl(hi[l] - e) <= 0.5L * ulp + 1.18L * 0x1p-53L * e) && bad++ < 5)
                    fprintf(stderr, "exp4_dd(%a) = %a, expl %La\n", y[l], hi[l], e);
            }
        }
        if (acl_have_avx512()) {
            apply8(DD_HI, y, y, h8);
            apply8(DD_LO, y, y, l8);
            differ += memcmp(h8, hi, sizeof h8) != 0 || memcmp(l8, lo, sizeof l8) != 0;
        }
    }
    assert_true(w < 0.18 * 0x1p-53);
    assert_int_equal(bad, 0);
    double sp[8] = {710.0, 1e300, NAN, -INFINITY, 0.0, 1.0, -1.0, 2.0}, r[8];
    apply8x(DD_HI, sp, sp, r);
    assert_true(r[0] == INFINITY && r[1] == INFINITY && isnan(r[2]) && r[3] == 0.0);
    assert_int_equal(differ, 0);
}

/* xorshift64 */
static uint64_t xs64(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* acl_scalef4 against x·2^floor(n) in long double (exact: one rounding to double by the
 * conversion, subnormals included), and with AVX-512 against VSCALEFPD */
static void scalef_rounds_once(void **state)
{
    (void)state;
    if (!acl_have_avx2()) skip();
    int bad = 0, differ = 0;
    uint64_t s = 0x853c49e6748fea9bull;
    for (int i = 0; i < 200000; i += 8) {
        double x[8], n[8], r[8], r8[8];
        for (int l = 0; l < 8; l++) {
            xs64(&s);
            x[l] = ldexp(1.0 + (double)(s & 0xfffffffffffffull) * 0x1p-52, (int)((s >> 52) % 200) - 198) *
                   (s >> 63 ? -1.0 : 1.0);
            n[l] = (double)((int)((s >> 20) % 3177) - 1588) + (double)((s >> 40) % 8) / 8.0;
        }
        apply8x(SCALEF, x, n, r);
        for (int l = 0; l < 8; l++) {
            double want = (double)ldexpl((long double)x[l], (int)floor(n[l]));
            if (memcmp(&want, &r[l], sizeof want) != 0 && bad++ < 5)
                fprintf(stderr, "scalef4(%a, %g) = %a, want %a\n", x[l], n[l], r[l], want);
        }
        if (acl_have_avx512()) {
            apply8(SCALEF, x, n, r8);
            differ += memcmp(r, r8, sizeof r) != 0;
        }
    }
    assert_int_equal(bad, 0);
    assert_int_equal(differ, 0);
}

/* the AVX2 helpers under test, on arrays */
ACL_AVX2_TARGET static void pack8_bf16(const float *f, uint16_t *out)
{
    _mm_storeu_si128((__m128i *)(void *)out, acl_pack8_16_avx2(_mm256_loadu_ps(f), true));
}

ACL_AVX2_TARGET static void table8(const float *tab, const uint16_t *xb, int64_t left, float *out)
{
    _mm256_storeu_ps(out, acl_table8_ps(tab, xb, left));
}

ACL_AVX2_TARGET static void load16_eo(const uint16_t *p, float *e, float *o)
{
    __m256 ve, vo;
    acl_load16_bf16_eo(p, &ve, &vo);
    _mm256_storeu_ps(e, ve);
    _mm256_storeu_ps(o, vo);
}

ACL_AVX2_TARGET static void pack16_eo(const float *e, const float *o, bool nan_free, uint16_t *out)
{
    _mm256_storeu_si256((__m256i *)(void *)out, acl_pack16_bf16_eo(_mm256_loadu_ps(e), _mm256_loadu_ps(o), nan_free));
}

ACL_AVX2_TARGET static void table16_eo(const float *tab, const uint16_t *xb, float *e, float *o)
{
    __m256 ve, vo;
    acl_table16_eo_ps(tab, xb, &ve, &vo);
    _mm256_storeu_ps(e, ve);
    _mm256_storeu_ps(o, vo);
}

/* random f32 bits of every class (zeros, subnormals, normals, ±Inf) but NaN */
static uint32_t rand_f32_bits(uint64_t *s, int i)
{
    uint32_t u = (uint32_t)xs64(s);
    if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x7fffffu)) u &= ~0x00800000u;
    if (i % 7 == 3) u &= 0x807fffffu;
    if (i % 11 == 5 && (u & 3) == 0) u = 0x7f800000u | (u & 0x80000000u);
    return u;
}

/* the even / odd forms: element 2l is lane l of the even vector, 2l + 1 lane l of the odd one */
static void bf16_even_odd_forms(void **state)
{
    (void)state;
    if (!acl_have_avx2()) skip();
    uint64_t s = 0x6a09e667f3bcc909ull;
    static float tab[65536];
    for (int h = 0; h < 65536; h++) tab[h] = (float)h * 0.25f - 3.0f;
    int bad = 0;
    for (int i = 0; i < 100000; i++) {
        uint16_t w[16], got16[16];
        float e[8], o[8];
        for (int k = 0; k < 16; k++) w[k] = (uint16_t)xs64(&s);
        load16_eo(w, e, o);
        for (int k = 0; k < 16; k++) {
            float want = acl_bf16_to_f32(w[k]), g = k & 1 ? o[k / 2] : e[k / 2];
            if (memcmp(&g, &want, sizeof g) != 0 && bad++ < 5)
                fprintf(stderr, "load16_eo element %d of %04x: %a, want %a\n", k, w[k], g, want);
        }
        table16_eo(tab, w, e, o);
        for (int k = 0; k < 16; k++)
            if ((k & 1 ? o[k / 2] : e[k / 2]) != tab[w[k]] && bad++ < 5)
                fprintf(stderr, "table16_eo element %d: %g, want %g\n", k, k & 1 ? o[k / 2] : e[k / 2], tab[w[k]]);
        uint32_t u[16];
        for (int k = 0; k < 16; k++) u[k] = rand_f32_bits(&s, i);
        bool nan = i & 1; /* half the vectors with one NaN lane, quiet or signalling, any payload */
        if (nan) u[xs64(&s) % 16] = 0x7f800000u | (uint32_t)(xs64(&s) % 0x7fffffu + 1) | (uint32_t)(i & 2) << 30;
        float f[16];
        memcpy(f, u, sizeof f);
        for (int l = 0; l < 8; l++) e[l] = f[2 * l], o[l] = f[2 * l + 1];
        pack16_eo(e, o, !nan && i % 4 == 0, got16); /* NaN-free vectors tested both ways */
        for (int k = 0; k < 16; k++)
            if (got16[k] != acl_f32_to_bf16(f[k]) && bad++ < 5)
                fprintf(stderr, "pack16_eo element %d of %08x: %04x, want %04x\n", k, u[k], got16[k], acl_f32_to_bf16(f[k]));
    }
    assert_int_equal(bad, 0);
}

/* acl_pack8_16_avx2(v, bf16) lane by lane against acl_f32_to_bf16: random bit patterns (every
 * class: zeros, subnormals, normals, ±Inf), half the vectors with one NaN lane (quiet or
 * signalling payloads) and half with none, so both of its branches */
static void bf16_stores_round_as_the_scalar_form(void **state)
{
    (void)state;
    if (!acl_have_avx2()) skip();
    uint64_t s = 0x9e3779b97f4a7c15ull;
    int bad = 0;
    for (int i = 0; i < 200000; i++) {
        uint32_t u[8];
        for (int l = 0; l < 8; l++) {
            u[l] = (uint32_t)xs64(&s);
            if ((u[l] & 0x7f800000u) == 0x7f800000u && (u[l] & 0x7fffffu)) u[l] &= ~0x00800000u; /* no NaN yet */
            if (i % 7 == 3) u[l] &= 0x807fffffu; /* zeros and subnormals */
        }
        if (i & 1) u[xs64(&s) % 8] = 0x7f800000u | (uint32_t)(xs64(&s) % 0x7fffffu + 1) | (uint32_t)(i & 2) << 30;
        if (i % 11 == 5) u[i % 8] = 0x7f800000u | (i & 4 ? 0x80000000u : 0u); /* ±Inf */
        float f[8];
        memcpy(f, u, sizeof f);
        uint16_t got[8];
        pack8_bf16(f, got);
        for (int l = 0; l < 8; l++)
            if (got[l] != acl_f32_to_bf16(f[l]) && bad++ < 5)
                fprintf(stderr, "bf16 store of %08x: %04x, want %04x\n", u[l], got[l], acl_f32_to_bf16(f[l]));
    }
    assert_int_equal(bad, 0);
}

/* acl_table8_ps: tab[xb[l]] for the first `left` lanes, 0 in the others */
static void table8_reads_the_entries(void **state)
{
    (void)state;
    if (!acl_have_avx2()) skip();
    static float tab[65536];
    for (int h = 0; h < 65536; h++) tab[h] = (float)h * 0.5f - 7.0f;
    uint64_t s = 0x2545f4914f6cdd1dull;
    int bad = 0;
    for (int i = 0; i < 20000; i++) {
        uint16_t xb[8];
        for (int l = 0; l < 8; l++) xb[l] = (uint16_t)xs64(&s);
        int64_t left = i % 10; /* 0..9: tails and whole vectors */
        float got[8];
        table8(tab, xb, left, got);
        for (int l = 0; l < 8; l++) {
            float want = l < left ? tab[xb[l]] : 0.0f;
            if (memcmp(&got[l], &want, sizeof want) != 0 && bad++ < 5)
                fprintf(stderr, "table8 left %lld lane %d: %g, want %g\n", (long long)left, l, got[l], want);
        }
    }
    assert_int_equal(bad, 0);
}

#else
static void no_avx2_kernels(void **state)
{
    (void)state;
    skip();
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
#ifdef ACL_HAVE_AVX2_KERNELS
        cmocka_unit_test(fast_exps_within_their_bounds),
        cmocka_unit_test(table_read_by_permutes),
        cmocka_unit_test(exp_dd_within_its_bound),
        cmocka_unit_test(scalef_rounds_once),
        cmocka_unit_test(bf16_stores_round_as_the_scalar_form),
        cmocka_unit_test(table8_reads_the_entries),
        cmocka_unit_test(bf16_even_odd_forms),
#else
        cmocka_unit_test(no_avx2_kernels),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
