/* ctest-labels: unit
 * The AVX-512 exp helpers of impl/src/runtime/simd512.h against long double, at the bounds their
 * comments state: acl_logistic8_fast (Gelu tanh f32's q = 1/(1 + e^-v), read as s/(s + P) with s
 * from the exp table for -n) within 2^-37 relative for |y| < 8 and up to |y| = 708 (measured
 * here: 2^-37.48 and 2^-37.47), its result normal over the whole clamped range; acl_expneg8_fast (SoftplusBackward f32's e^-y)
 * within 2^-37; acl_exp8_fast_nhalf (Gelu none f32's e^{-t²/2}, its polynomial in Knuth's adapted form
 * with the constant in the table) within 2^-37 for y in [0, 64] (t ≤ 8) and normal up to y = 1400.
 * On a CPU without AVX-512 the kernels are never called and each test skips; a build without the
 * AVX-512 kernels has one skipped test. */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "runtime/simd512.h"

#ifdef ACL_HAVE_AVX512_KERNELS
typedef __m512d (*vec_fn)(__m512d);

ACL_AVX512_TARGET static __m512d expneg(__m512d y)
{
    __m512d sc, p = acl_expneg8_fast(y, &sc);
    return _mm512_mul_pd(sc, p);
}
static long double expneg_exact(long double y) { return expl(-y); }

ACL_AVX512_TARGET static __m512d logistic(__m512d y) { return acl_logistic8_fast(y); }
static long double logistic_exact(long double y) { return 1.0L / (1.0L + expl(-y)); }

ACL_AVX512_TARGET static __m512d expnhalf(__m512d y) { return acl_exp8_fast_nhalf(y); }
static long double expnhalf_exact(long double y) { return expl(-y / 2); }

/* r[0..7] = f(y[0..7]) */
ACL_AVX512_TARGET static void apply8(vec_fn f, const double *y, double *r)
{
    _mm512_storeu_pd(r, f(_mm512_loadu_pd(y)));
}

/* the largest relative error of f against its long double twin over n evenly spaced points from
 * y0 to y1, both included (n a multiple of 8: 8 lanes a call), and the smallest result seen */
static double worst(vec_fn f, long double (*exact)(long double), double y0, double y1, int n, double *smallest)
{
    double w = 0.0;
    for (int i = 0; i < n; i += 8) {
        double y[8], r[8];
        for (int l = 0; l < 8; l++) y[l] = fmin(y1, y0 + (y1 - y0) * (i + l) / (n - 1));
        apply8(f, y, r);
        for (int l = 0; l < 8; l++) {
            long double e = exact(y[l]);
            double rel = (double)fabsl(((long double)r[l] - e) / e);
            if (!(rel <= w)) w = rel; /* NaN counts as the worst */
            if (r[l] < *smallest) *smallest = r[l];
        }
    }
    return w;
}

static void logistic_within_its_bound_and_normal(void **state)
{
    (void)state;
    if (!acl_have_avx512()) skip();
    double small = INFINITY;
    /* the root's neighbourhood (|v| < 8), a step that is not a multiple of ln2/16 */
    double near = worst(logistic, logistic_exact, -7.999, 7.999, 400000, &small);
    assert_true(near < 0x1p-37);
    /* the whole clamped range, both ends included */
    double far = worst(logistic, logistic_exact, -708.0, 708.0, 400000, &small);
    assert_true(far < 0x1p-37);
    assert_true(small >= DBL_MIN);
    double ends[8] = {-708.0, 708.0, -707.99, 707.99, 0.0, -0.0, -1e-300, 1e-300}, r[8];
    apply8(logistic, ends, r);
    assert_true(r[0] >= DBL_MIN && r[0] < 0x1p-1020);
    assert_true(r[1] == 1.0);
    assert_true(r[4] == 0.5 && r[5] == 0.5);
}

static void expneg_within_its_bound(void **state)
{
    (void)state;
    if (!acl_have_avx512()) skip();
    double small = INFINITY;
    assert_true(worst(expneg, expneg_exact, -708.0, 708.0, 400000, &small) < 0x1p-37);
    assert_true(small >= DBL_MIN);
}

static void exp_nhalf_within_its_bound_and_normal(void **state)
{
    (void)state;
    if (!acl_have_avx512()) skip();
    double small = INFINITY;
    /* Gelu's t² for t < 8, a step that is not a multiple of ln2/8 */
    double near = worst(expnhalf, expnhalf_exact, 0.0, 63.9999, 400000, &small);
    assert_true(near < 0x1p-37);
    double far = worst(expnhalf, expnhalf_exact, 0.0, 1400.0, 400000, &small);
    assert_true(far < 0x1p-37);
    assert_true(small >= DBL_MIN);
    double ends[8] = {0.0, 1400.0, 64.0, 1e-300, 2 * 0x1.62e42fefa39efp-1, 1.0, 2.0, 8.0}, r[8];
    apply8(expnhalf, ends, r);
    for (int l = 0; l < 8; l++) {
        long double e = expnhalf_exact(ends[l]);
        assert_true(fabsl((r[l] - e) / e) < 0x1p-37);
    }
}

#else
/* no AVX-512 kernels in this build: nothing to test */
static void no_avx512_kernels(void **state)
{
    (void)state;
    skip();
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
#ifdef ACL_HAVE_AVX512_KERNELS
        cmocka_unit_test(logistic_within_its_bound_and_normal),
        cmocka_unit_test(expneg_within_its_bound),
        cmocka_unit_test(exp_nhalf_within_its_bound_and_normal),
#else
        cmocka_unit_test(no_avx512_kernels),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
