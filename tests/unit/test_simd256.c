/* ctest-labels: unit
 * The AVX2 exp helpers of impl/src/runtime/simd256.h (round 28, CPUs without AVX-512): each is
 * simd512.h's function on four lanes with the same operations, so
 *   - on every CPU with AVX2 they meet the bounds test_simd512.c holds the 8-lane forms to:
 *     acl_expneg4_fast and acl_logistic4_fast within 2^-37 relative over [-708, 708],
 *     acl_exp4_fast_nhalf within 2^-37 over [0, 1400], their results normal; acl_exp4_dd's
 *     hi + lo within 0.18·2^-53 relative while normal (its comment's bound), and hi down into
 *     the subnormal results (x to -745) within 0.5 ULP plus its own 1.18·2^-53 relative error
 *     before the scaling, which just below DBL_MIN is 0.54 subnormal ULP (0.70 ULP measured
 *     here; simd512.h's "< 0.61 ULP", from a coarser grid, understates it; SoftplusBackward f64
 *     sends x < -700 to its scalar form, so no kernel uses these results), overflow to +Inf, NaN kept;
 *   - on a CPU with AVX-512 too, every result has the 8-lane function's bits.
 * acl_expneg4x2_fast (two vectors by one permuted table read) gives acl_expneg4_fast's factors.
 * acl_scalef4 (VSCALEFPD by two exact products) is checked through acl_exp4_dd's subnormal and
 * overflowing results and, with AVX-512, against VSCALEFPD itself. */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "runtime/simd256.h"

#ifdef ACL_HAVE_AVX2_KERNELS
enum { EXPNEG, LOGISTIC, NHALF, DD_HI, DD_LO, SCALEF };

ACL_AVX2_TARGET static void apply4(int f, const double *y, const double *y2, double *r)
{
    __m256d v = _mm256_loadu_pd(y), sc, lo;
    switch (f) {
    case EXPNEG: v = acl_expneg4_fast(v, &sc); v = _mm256_mul_pd(sc, v); break;
    case LOGISTIC: v = acl_logistic4_fast(v); break;
    case NHALF: v = acl_exp4_fast_nhalf(v); break;
    case DD_HI: v = acl_exp4_dd(v, &lo, _mm256_castsi256_pd(_mm256_set1_epi64x(-1))); break;
    case DD_LO: acl_exp4_dd(v, &lo, _mm256_castsi256_pd(_mm256_set1_epi64x(-1))); v = lo; break;
    default: v = acl_scalef4(v, _mm256_loadu_pd(y2)); break;
    }
    _mm256_storeu_pd(r, v);
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
        apply4(f, y, y, r);
        apply4(f, y + 4, y + 4, r + 4);
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

/* acl_expneg4x2_fast (two vectors, one permuted table read) gives acl_expneg4_fast's factors, bit
 * for bit, over the clamped range and at NaN */
ACL_AVX2_TARGET static int expneg_x2_differs(const double *y)
{
    __m256d v[2] = {_mm256_loadu_pd(y), _mm256_loadu_pd(y + 4)}, p2[2], s2[2], s1[2], p1[2];
    acl_expneg4x2_fast(v, p2, s2);
    for (int h = 0; h < 2; h++) p1[h] = acl_expneg4_fast(v[h], &s1[h]);
    return memcmp(p1, p2, sizeof p1) != 0 || memcmp(s1, s2, sizeof s1) != 0;
}

static void expneg_x2_equals_expneg(void **state)
{
    (void)state;
    if (!acl_have_avx2()) skip();
    int differ = 0;
    for (int i = 0; i < 400000; i += 8) {
        double y[8];
        for (int l = 0; l < 8; l++) y[l] = -708.0 + 1416.0 * (i + l) / 399999.0;
        if (i == 0) y[3] = NAN;
        differ += expneg_x2_differs(y);
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
    for (int i = 0; i < 400000; i += 4) {
        double y[4], hi[4], lo[4];
        for (int l = 0; l < 4; l++) y[l] = -745.0 + (709.7 + 745.0) * (i + l) / 399999.0;
        apply4(DD_HI, y, y, hi);
        apply4(DD_LO, y, y, lo);
        for (int l = 0; l < 4; l++) {
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
        if (acl_have_avx512() && i % 8 == 0) {
            double y8[8], h8[8], l8[8], h4[8], l4[8];
            for (int l = 0; l < 8; l++) y8[l] = -745.0 + (709.7 + 745.0) * (i + l) / 399999.0;
            apply8(DD_HI, y8, y8, h8); apply8(DD_LO, y8, y8, l8);
            apply4(DD_HI, y8, y8, h4); apply4(DD_HI, y8 + 4, y8 + 4, h4 + 4);
            apply4(DD_LO, y8, y8, l4); apply4(DD_LO, y8 + 4, y8 + 4, l4 + 4);
            differ += memcmp(h8, h4, sizeof h8) != 0 || memcmp(l8, l4, sizeof l8) != 0;
        }
    }
    assert_true(w < 0.18 * 0x1p-53);
    assert_int_equal(bad, 0);
    double sp[4] = {710.0, 1e300, NAN, -INFINITY}, r[4];
    apply4(DD_HI, sp, sp, r);
    assert_true(r[0] == INFINITY && r[1] == INFINITY && isnan(r[2]) && r[3] == 0.0);
    assert_int_equal(differ, 0);
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
            s ^= s << 13; s ^= s >> 7; s ^= s << 17;
            x[l] = ldexp(1.0 + (double)(s & 0xfffffffffffffull) * 0x1p-52, (int)((s >> 52) % 200) - 198) *
                   (s >> 63 ? -1.0 : 1.0);
            n[l] = (double)((int)((s >> 20) % 3177) - 1588) + (double)((s >> 40) % 8) / 8.0;
        }
        apply4(SCALEF, x, n, r);
        apply4(SCALEF, x + 4, n + 4, r + 4);
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
        cmocka_unit_test(expneg_x2_equals_expneg),
        cmocka_unit_test(exp_dd_within_its_bound),
        cmocka_unit_test(scalef_rounds_once),
#else
        cmocka_unit_test(no_avx2_kernels),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
