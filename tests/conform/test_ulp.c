/* ctest-labels: unit
 * ULP and the pass rule (numerics.md §3–§5) on the values that break naive counters: ±0, the
 * smallest subnormal, the subnormal/normal boundary, the largest finite, the overflow threshold,
 * NaN payloads, Inf vs finite, one ULP either side of a power of two, alt branches, oracle-
 * uncertain elements, masked positions. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "ulp.h"

static cf_fmt F16, BF16, F32, F64;
static const cf_tol TOL = {4, 2, false};

static cf_elem_score sc(const cf_fmt *f, double got, double r, double m)
{
    cf_expect x = {r, 0, m, 0, r, false};
    return cf_score_element(f, got, 0, &x, &TOL);
}

static void ulp_of_special_points(void **state)
{
    (void)state;
    assert_true(cf_fmt_of(CF_F16, &F16) && cf_fmt_of(CF_BF16, &BF16) && cf_fmt_of(CF_F32, &F32) && cf_fmt_of(CF_F64, &F64));
    assert_true(cf_ulp(&F32, 0.0) == 0x1p-149);
    assert_true(cf_ulp(&F32, -0.0) == 0x1p-149);
    assert_true(cf_ulp(&F32, 0x1p-149) == 0x1p-149);        /* smallest subnormal */
    assert_true(cf_ulp(&F32, 0x1.fffffcp-127) == 0x1p-149); /* largest subnormal */
    assert_true(cf_ulp(&F32, 0x1p-126) == 0x1p-149);        /* smallest normal: same ulp */
    assert_true(cf_ulp(&F32, 1.0) == 0x1p-23);
    assert_true(cf_ulp(&F32, 0x1.fffffep-1) == 0x1p-24);    /* just below 1 */
    assert_true(cf_ulp(&F32, 0x1.fffffep127) == 0x1p104);   /* largest finite */
    assert_true(cf_ulp(&F32, 1e39) == 0x1p104);             /* above: ulp of the largest finite */
    assert_true(cf_ulp(&F16, 0.0) == 0x1p-24 && cf_ulp(&F16, 65504) == 32 && cf_ulp(&F16, 1) == 0x1p-10);
    assert_true(cf_ulp(&BF16, 1) == 0x1p-7 && cf_ulp(&BF16, 0) == 0x1p-133);
    assert_true(cf_ulp(&F64, 1) == 0x1p-52 && cf_ulp(&F64, 0) == 0x1p-1074);
}

static void one_ulp_either_side_of_a_power_of_two(void **state)
{
    (void)state;
    /* below 2 the spacing is half of that above: got = 2 − 2^−23 against r = 2 is 1 ULP of 2 (2^−22)?
     * No: ulp_err is measured in ulp(r) = ulp(2) = 2^−22, and |got − r| = 2^−23: 0.5 ULP. */
    cf_elem_score s = sc(&F32, 2.0 - 0x1p-23, 2.0, 2.0);
    assert_true(s.ulp == 0.5);
    s = sc(&F32, 2.0, 2.0 - 0x1p-23, 2.0);
    assert_true(s.ulp == 1.0); /* measured in ulp(r) = 2^−23 */
    s = sc(&F32, 2.0 + 0x1p-22, 2.0, 2.0);
    assert_true(s.ulp == 1.0);
}

static void special_values_give_mismatch_kinds(void **state)
{
    (void)state;
    double qnan = NAN, nnan = -NAN;
    assert_int_equal(sc(&F32, nnan, qnan, 0).verdict, CF_EL_PASS);          /* any NaN payload/sign */
    assert_int_equal(sc(&F32, 1.0, qnan, 0).kind, CF_MM_nan_expected);
    assert_int_equal(sc(&F32, INFINITY, qnan, 0).kind, CF_MM_nan_expected);
    assert_int_equal(sc(&F32, INFINITY, INFINITY, 0).verdict, CF_EL_PASS);
    assert_int_equal(sc(&F32, -INFINITY, INFINITY, 0).kind, CF_MM_inf_expected);
    assert_int_equal(sc(&F32, 3e38, INFINITY, 0).kind, CF_MM_inf_expected);
    assert_int_equal(sc(&F32, qnan, INFINITY, 0).kind, CF_MM_unexpected_nan);
    assert_int_equal(sc(&F32, qnan, 1.0, 1.0).kind, CF_MM_unexpected_nan);
    assert_int_equal(sc(&F32, INFINITY, 1.0, 1.0).kind, CF_MM_unexpected_inf);
    /* at and above the overflow threshold (max + ulp/2) the exact value counts as Inf */
    assert_int_equal(sc(&F16, INFINITY, 65520.0, 65520.0).verdict, CF_EL_PASS);
    assert_int_equal(sc(&F16, 65504.0, 65520.0, 65520.0).kind, CF_MM_inf_expected);
    assert_int_equal(sc(&F16, 65504.0, 65519.99, 65519.99).verdict, CF_EL_PASS);
    assert_int_equal(sc(&F16, INFINITY, 65519.99, 65519.99).kind, CF_MM_unexpected_inf);
    /* ±0 against ∓0 matches, counted; --strict-zero fails it */
    cf_elem_score z = sc(&F32, -0.0, 0.0, 0);
    assert_int_equal(z.verdict, CF_EL_PASS);
    assert_true(z.signed_zero);
    cf_tol strict = TOL;
    strict.strict_zero = true;
    cf_expect x = {0.0, 0, 0, 0, 0.0, false};
    assert_int_equal(cf_score_element(&F32, -0.0, 0x80000000u, &x, &strict).kind, CF_MM_signed_zero);
}

static void subnormal_results_are_measured_in_subnormal_ulps(void **state)
{
    (void)state;
    /* a flushed subnormal (got 0 for r = 3·2^−149) is 3 ULP off; for f16 r = 2^−24 flushed is 1 ULP */
    assert_true(sc(&F32, 0.0, 3 * 0x1p-149, 3 * 0x1p-149).ulp == 3.0);
    assert_true(sc(&F16, 0.0, 0x1p-24, 0x1p-24).ulp == 1.0);
    assert_true(sc(&BF16, 0x1p-126, 0x1p-126 + 0x1p-133, 0x1p-126).ulp == 1.0);
}

static void pass_rule_takes_either_bound_and_alt(void **state)
{
    (void)state;
    /* ulp_err 10 fails max_ulp 4, but a large m makes scaled_err small: passes */
    cf_elem_score s = sc(&F32, 1.0 + 10 * 0x1p-23, 1.0, 1024.0);
    assert_int_equal(s.verdict, CF_EL_PASS);
    s = sc(&F32, 1.0 + 10 * 0x1p-23, 1.0, 1.0);
    assert_int_equal(s.kind, CF_MM_over_tolerance);
    /* the other branch's value is accepted where the oracle gives one */
    cf_expect x = {0.0, 0, 1.0, 0, 5.0, false};
    assert_int_equal(cf_score_element(&F32, 5.0, 0, &x, &TOL).verdict, CF_EL_PASS);
    x.alt = 0.0;
    assert_int_equal(cf_score_element(&F32, 5.0, 0, &x, &TOL).verdict, CF_EL_FAIL);
    /* f64 with a low part: exact = r + lo */
    cf_expect d = {1.0, 0x1p-60, 1.0, 0, 1.0, false};
    assert_true(cf_score_element(&F64, 1.0, 0, &d, &TOL).ulp == 0x1p-8);
}

/* numerics.md §2: an element whose err exceeds ulp_T(m)/64 gets no verdict, but only after every
 * rule the interval r ± err decides has been applied (issue 58) */
static void uncertain_oracle_gets_no_verdict(void **state)
{
    (void)state;
    /* TOL: max_ulp 4; err = 2^-23 (one f32 ULP of 1.0), m = 1: 8 ULP from r is at least 7 from
     * exact (fails), 1 ULP at most 2 (passes), 4.5 ULP undecided */
    cf_expect x = {1.0, 0, 1.0, 0x1p-23, 1.0, false};
    assert_int_equal(cf_score_element(&F32, 1.0 + 8 * 0x1p-23, 0, &x, &TOL).verdict, CF_EL_FAIL);
    assert_int_equal(cf_score_element(&F32, 1.0 + 8 * 0x1p-23, 0, &x, &TOL).kind, CF_MM_over_tolerance);
    assert_int_equal(cf_score_element(&F32, 1.0 + 0x1p-23, 0, &x, &TOL).verdict, CF_EL_PASS);
    assert_int_equal(cf_score_element(&F32, 1.0 + 4.5 * 0x1p-23, 0, &x, &TOL).verdict, CF_EL_UNCERTAIN);
    /* a NaN or an infinity where the whole interval is finite is a mismatch */
    assert_int_equal(cf_score_element(&F32, NAN, 0, &x, &TOL).kind, CF_MM_unexpected_nan);
    assert_int_equal(cf_score_element(&F32, -INFINITY, 0, &x, &TOL).kind, CF_MM_unexpected_inf);
    /* with err below ulp(m)/64, the plain rule */
    x.err = 0x1p-23 / 128;
    assert_int_equal(cf_score_element(&F32, 7.0, 0, &x, &TOL).verdict, CF_EL_FAIL);
    assert_int_equal(cf_score_element(&F32, 1.0 + 4.5 * 0x1p-23, 0, &x, &TOL).verdict, CF_EL_FAIL);
}

/* The sweep's LogitGrad f32 element of issue 58, as bits: x = 0x00800000 (2^-126), dy =
 * 0x71800000 (2^100), eps = 0 give r = m = 2^226 with err = 2^175, and ulp_f32(m) is capped at
 * ulp(FLT_MAX) = 2^104, so err > ulp/64.  The whole interval lies beyond f32's overflow threshold:
 * the exact result is +Inf, and a target that returns 0, NaN or any finite value fails. */
static void an_overflow_the_interval_decides_is_scored(void **state)
{
    (void)state;
    cf_expect x = {0x1p226, 0, 0x1p226, 0x1p175, 0x1p226, false};
    assert_int_equal(cf_score_element(&F32, INFINITY, 0x7f800000u, &x, &TOL).verdict, CF_EL_PASS);
    assert_int_equal(cf_score_element(&F32, 0.0, 0, &x, &TOL).kind, CF_MM_inf_expected);
    assert_int_equal(cf_score_element(&F32, 0x1.fffffep127, 0x7f7fffffu, &x, &TOL).kind, CF_MM_inf_expected);
    assert_int_equal(cf_score_element(&F32, NAN, 0x7fc00000u, &x, &TOL).kind, CF_MM_unexpected_nan);
    assert_int_equal(cf_score_element(&F32, -INFINITY, 0xff800000u, &x, &TOL).kind, CF_MM_inf_expected);
    /* an interval that straddles the threshold decides only against a NaN */
    cf_expect y = {0x1.fffffep127, 0, 0x1.fffffep127, 0x1p110, 0x1.fffffep127, false};
    assert_int_equal(cf_score_element(&F32, NAN, 0x7fc00000u, &y, &TOL).kind, CF_MM_unexpected_nan);
    assert_int_equal(cf_score_element(&F32, INFINITY, 0x7f800000u, &y, &TOL).verdict, CF_EL_UNCERTAIN);
}

static void masked_positions_must_be_positive_zero_bits(void **state)
{
    (void)state;
    cf_expect x = {0.0, 0, 0, 0, 0.0, true};
    assert_int_equal(cf_score_element(&F32, 0.0, 0, &x, &TOL).verdict, CF_EL_PASS);
    assert_int_equal(cf_score_element(&F32, -0.0, 0x80000000u, &x, &TOL).kind, CF_MM_mask_not_zero);
    assert_int_equal(cf_score_element(&F32, 0x1p-149, 1, &x, &TOL).kind, CF_MM_mask_not_zero);
}

static void decode_reads_stored_bits(void **state)
{
    (void)state;
    uint16_t h = 0x0001;
    assert_true(cf_decode(CF_F16, &h) == 0x1p-24);
    h = 0x7e01;
    assert_true(isnan(cf_decode(CF_F16, &h)));
    h = 0xfc00;
    assert_true(cf_decode(CF_F16, &h) == -INFINITY);
    h = 0x3f80;
    assert_true(cf_decode(CF_BF16, &h) == 1.0);
    h = 0x8000;
    assert_true(signbit(cf_decode(CF_BF16, &h)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ulp_of_special_points),
        cmocka_unit_test(one_ulp_either_side_of_a_power_of_two),
        cmocka_unit_test(special_values_give_mismatch_kinds),
        cmocka_unit_test(subnormal_results_are_measured_in_subnormal_ulps),
        cmocka_unit_test(pass_rule_takes_either_bound_and_alt),
        cmocka_unit_test(uncertain_oracle_gets_no_verdict),
        cmocka_unit_test(an_overflow_the_interval_decides_is_scored),
        cmocka_unit_test(masked_positions_must_be_positive_zero_bits),
        cmocka_unit_test(decode_reads_stored_bits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
