/* ctest-labels: unit
 * SoftplusBackward oracle: the threshold comparison (equality takes the σ branch, no alt; a tie
 * that only f32 rounding of beta·x creates gives alt), scalar conversion to the compute precision,
 * special values, the f64 high/low result, and the spec example (i32 self, bf16 gradients). */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <mpfr.h>

#include "oracle_test_util.h"

static orc_scalar f32s(float v)
{
    uint32_t b;
    memcpy(&b, &v, 4);
    return (orc_scalar){CF_F32, b};
}
static orc_scalar f64s(double v)
{
    uint64_t b;
    memcpy(&b, &v, 8);
    return (orc_scalar){CF_F64, b};
}

typedef struct {
    double r, r_lo, m, err, alt;
} sv;

static sv one_t(cf_dtype gdt, const void *dy, cf_dtype xdt, const void *x, orc_scalar beta, orc_scalar thr,
                cf_dtype odt)
{
    tt_tensor tx, td;
    int64_t sh[1] = {1};
    tt_out o;
    orc_out *out = tt_out_alloc(&o, 1);
    int st = orc_softplus_backward(tt_make(&td, gdt, 1, sh, dy), tt_make(&tx, xdt, 1, sh, x), beta, thr, odt,
                                   ORC_PROFILE_SPEC, out);
    assert_int_equal(st, ORC_OK);
    sv r = {out->r[0], out->r_lo[0], out->m[0], out->err[0], out->alt[0]};
    tt_out_free(&o);
    return r;
}

static sv one(float x, float dy, float beta, float thr)
{
    return one_t(CF_F32, &dy, CF_F32, &x, f32s(beta), f32s(thr), CF_F32);
}

static double sigmoid(double z) { return 1.0 / (1.0 + exp(-z)); }

static void threshold_equality_takes_the_sigmoid_branch(void **state)
{
    (void)state;
    sv a = one(20.0f, 2.0f, 1.0f, 20.0f); /* z == threshold: not greater */
    assert_true(fabs(a.r - 2.0 * sigmoid(20.0)) <= 1e-15 * a.r);
    assert_true(a.r < 2.0 && memcmp(&a.alt, &a.r, 8) == 0);
    /* m = |r|·(1 + |z|·(1 − σ(z))) */
    assert_true(fabs(a.m - a.r * (1 + 20.0 * sigmoid(-20.0))) <= 1e-14 * a.m);
    sv b = one(nextafterf(20.0f, 30.0f), 2.0f, 1.0f, 20.0f);
    assert_true(b.r == 2.0 && b.m == 2.0 && b.err == 0.0 && b.alt == 2.0);
    sv c = one(0.5f, 3.0f, 1.0f, 20.0f);
    assert_true(fabs(c.r - 3.0 * sigmoid(0.5)) <= c.err + 1e-16 && c.err <= 1e-14);
}

static void rounding_of_beta_x_gives_alt(void **state)
{
    (void)state;
    /* beta = x = 1 + 2^-23: z = 1 + 2^-22 + 2^-46 > t = 1 + 2^-22 exactly, but fl32(z) == t */
    float v = 1.0f + 0x1p-23f, t = 1.0f + 0x1p-22f;
    sv a = one(v, 1.0f, v, t);
    assert_true(a.r == 1.0);
    double z = (double)v * v;
    assert_true(fabs(a.alt - sigmoid(z)) <= 1e-15);
    /* in f64 compute precision the product is exact enough: no alt */
    double vd = v, td = t, one_d = 1.0;
    sv b = one_t(CF_F64, &one_d, CF_F64, &vd, f64s(vd), f64s(td), CF_F64);
    assert_true(b.r == 1.0 && b.alt == 1.0);
    /* f64 compute: beta = x = 1 + 2^-52, t = 1 + 2^-51: exact z = t + 2^-104 > t, fl64(z) == t */
    double w = 1.0 + 0x1p-52, tw = 1.0 + 0x1p-51, dyw = 3.0;
    sv c = one_t(CF_F64, &dyw, CF_F64, &w, f64s(w), f64s(tw), CF_F64);
    assert_true(c.r == 3.0 && c.r_lo == 0.0 && c.err == 0.0);
    assert_true(fabs(c.alt - 3.0 * sigmoid(w * w)) <= 1e-15);
}

static void beta_zero_and_infinities(void **state)
{
    (void)state;
    assert_true(isnan(one(INFINITY, 1.0f, 0.0f, 20.0f).r));      /* 0·Inf */
    assert_true(isnan(one(-INFINITY, 1.0f, 0.0f, 20.0f).r));
    assert_true(one(5.0f, 3.0f, 0.0f, 0.0f).r == 1.5);             /* σ(0) */
    assert_true(one(5.0f, 3.0f, 0.0f, -1.0f).r == 3.0);            /* 0 > −1 */
    sv z = one(-INFINITY, 3.0f, 1.0f, 20.0f);                      /* z = −Inf: dy·0 */
    assert_true(z.r == 0.0);
    assert_true(isnan(one(-INFINITY, INFINITY, 1.0f, 20.0f).r));
    assert_true(one(-1000.0f, INFINITY, 1.0f, 20.0f).r == INFINITY); /* §5a */
    assert_true(one(-1000.0f, -INFINITY, 1.0f, 20.0f).r == -INFINITY);
    assert_true(one(INFINITY, 3.0f, 1.0f, INFINITY).r == 3.0);     /* Inf > Inf false: σ(Inf) = 1 */
    assert_true(isnan(one(1.0f, NAN, 1.0f, 20.0f).r));
    assert_true(isnan(one(NAN, 1.0f, 1.0f, 20.0f).r));
    assert_true(isnan(one(1.0f, 1.0f, NAN, 20.0f).r));
    sv nt = one(30.0f, 1.0f, 1.0f, NAN);                            /* comparison false */
    assert_true(fabs(nt.r - sigmoid(30.0)) <= 1e-16);
    sv tail = one(-800.0f, 1.0f, 1.0f, 20.0f);                       /* e^{-800}: tiny, positive */
    assert_true(tail.r >= 0.0 && tail.r < 1e-300 && tail.err < 1e-300);
}

static void scalars_are_converted_to_the_compute_precision(void **state)
{
    (void)state;
    /* f64 threshold 1 + 2^-30 rounds to 1.0f in f32 compute: x = beta = 1 gives z == 1 == t
     * (σ branch); in f64 compute it stays 1 + 2^-30 > 1. */
    float x = 1.0f, dy = 1.0f;
    sv a = one_t(CF_F32, &dy, CF_F32, &x, f32s(1.0f), f64s(1.0 + 0x1p-30), CF_F32);
    assert_true(fabs(a.r - sigmoid(1.0)) <= 1e-16);
    /* an integer self beyond 2^24 with f32 compute: i32 16777217 converts to 16777216.0f, so with
     * beta 1, t 16777216: z == t, the σ branch (σ(2^24) = 1.0 in double); the exact integer's
     * z > t gives dy = 1.0 as alt */
    int32_t xi = 16777217;
    sv b = one_t(CF_F32, &dy, CF_I32, &xi, f32s(1.0f), f32s(16777216.0f), CF_F32);
    assert_true(b.r == 1.0 && b.alt == 1.0 * sigmoid(16777217.0));
    /* an i64 beta scalar is converted with one rounding */
    int64_t bi = 3;
    orc_scalar bs = {CF_I64, (uint64_t)bi};
    sv c = one_t(CF_F32, &dy, CF_F32, &x, bs, f32s(20.0f), CF_F32);
    assert_true(fabs(c.r - sigmoid(3.0)) <= 1e-16);
}

static void f64_output_carries_a_low_part(void **state)
{
    (void)state;
    double x = 0.5, dy = 1.0;
    sv a = one_t(CF_F64, &dy, CF_F64, &x, f64s(1.0), f64s(20.0), CF_F64);
    /* σ(0.5) = 0.622459331201854564638900565745508478753279365308... */
    assert_true(a.r == 0.6224593312018546);
    assert_true(fabs(a.r_lo) <= 0x1p-54 && a.r_lo != 0.0);
    assert_true(a.err <= 0x1p-100);
    /* r + r_lo beats double: compare with long double where it is wider */
    long double s = 1.0L / (1.0L + expl(-0.5L));
    if (sizeof(long double) > 8) assert_true(fabsl(((long double)a.r + a.r_lo) - s) <= 1e-19L);
}

static void spec_example_matches(void **state)
{
    (void)state;
    int64_t n = 0;
    uint16_t *dy = tt_example("softplus_backward/5fe457886ceada4b/gradOutput.npy", &n);
    int32_t *x = tt_example("softplus_backward/5fe457886ceada4b/self.npy", &n);
    double *ex = tt_example("softplus_backward/5fe457886ceada4b/expected.gradInput.npy", &n);
    double *mg = tt_example("softplus_backward/5fe457886ceada4b/magnitude.gradInput.npy", &n);
    assert_non_null(dy);
    assert_non_null(x);
    assert_non_null(ex);
    assert_non_null(mg);
    assert_int_equal(n, 12);
    tt_tensor td, tx;
    int64_t sh[1] = {12};
    tt_out o;
    orc_out *out = tt_out_alloc(&o, 12);
    orc_scalar beta = {CF_I64, 1}, thr = {CF_F16, 0x4d00};
    assert_int_equal(orc_softplus_backward(tt_make(&td, CF_BF16, 1, sh, dy), tt_make(&tx, CF_I32, 1, sh, x), beta,
                                           thr, CF_BF16, ORC_PROFILE_SPEC, out),
                     ORC_OK);
    for (int i = 0; i < 12; i++) {
        if (!isfinite(ex[i])) {
            assert_true(isnan(ex[i]) ? isnan(out->r[i]) : out->r[i] == ex[i]);
            continue;
        }
        assert_true(fabs(out->r[i] - ex[i]) <= out->err[i] + 1e-300);
        assert_true(fabs(out->m[i] - mg[i]) <= 1e-12 * mg[i] + 1e-300);
    }
    tt_out_free(&o);
    free(dy), free(x), free(ex), free(mg);
}

/* ---- issue 16: inputs as bit patterns --------------------------------------------------------- */

static double d_of(uint64_t b) { double d; memcpy(&d, &b, 8); return d; }
static uint64_t bits_of(double d) { uint64_t b; memcpy(&b, &d, 8); return b; }

/* ulp_f64 of numerics.md §3 (emin −1022, p 53) and the oracle-uncertain threshold ulp(m)/64 */
static double ulp64(double v)
{
    if (v == 0 || !isfinite(v)) return 0x1p-1074;
    int e = ilogb(v);
    return ldexp(1.0, (e < -1022 ? -1022 : e) - 52);
}
static bool scored64(sv a) { return a.err <= ulp64(a.m) / 64; }

/* ops.md §5: an integer self is converted to the compute precision (round to nearest) and r uses
 * that value; the value from the exact integer is only an alt. */
static void integer_self_is_converted_before_the_product(void **state)
{
    (void)state;
    /* f64: self i64 2^53 + 1 -> 2^53 (ties to even), beta = -1.25·2^-47: z = -80 exactly.  The
     * exact integer gives z = -80 - 1.25·2^-47, 60 f64 ULP away in σ. */
    uint64_t dy_b = 0x3ff0000000000000u, beta_b = 0xbd04000000000000u;
    int64_t xi = ((int64_t)1 << 53) + 1;
    sv a = one_t(CF_F64, &dy_b, CF_I64, &xi, (orc_scalar){CF_F64, beta_b}, (orc_scalar){CF_F32, 0x41a00000u},
                 CF_F64);
    assert_true(bits_of(a.r) == 0x38b7fd974d372e45u);          /* σ(-80), correctly rounded */
    assert_true(fabs(a.r_lo - d_of(0xb55e423729d4c8bbu)) <= 0x1p-170); /* σ(-80) - r */
    assert_true(a.err <= 0x1p-200);
    assert_true(bits_of(a.alt) == 0x38b7fd974d372e09u);        /* σ(-80 - 1.25·2^-47): the exact integer */
    /* f32: self i32 16777217 -> 16777216.0f, beta 2^-20, threshold 16: z = 16 is not > 16, so the
     * σ branch; the exact integer (z = 16 + 2^-20) takes the other one, which is the alt. */
    uint32_t one_b = 0x3f800000u;
    int32_t xj = 16777217;
    sv b = one_t(CF_F32, &one_b, CF_I32, &xj, (orc_scalar){CF_F32, 0x35800000u}, (orc_scalar){CF_F32, 0x41800000u},
                 CF_F32);
    assert_true(fabs(b.r - 1.0 / (1.0 + exp(-16.0))) <= 1e-16 && b.r < 1.0);
    assert_true(b.alt == 1.0);
    /* an exactly convertible integer gives no alt */
    int32_t xk = 16777216;
    sv c = one_t(CF_F32, &one_b, CF_I32, &xk, (orc_scalar){CF_F32, 0x35800000u}, (orc_scalar){CF_F32, 0x41800000u},
                 CF_F32);
    assert_true(c.r == b.r && memcmp(&c.alt, &c.r, 8) == 0);
}

/* beta·self beyond DBL_MAX in the f64 σ branch: m must stay a number. */
static void m_is_finite_when_the_product_overflows_double(void **state)
{
    (void)state;
    uint64_t dy = 0x3ff0000000000000u, xneg = 0xc024000000000000u, xpos = 0x4024000000000000u; /* 1, -10, 10 */
    orc_scalar beta = {CF_F64, 0x7fe1ccf385ebc8a0u};            /* 1e308 */
    sv a = one_t(CF_F64, &dy, CF_F64, &xneg, beta, (orc_scalar){CF_F64, 0x4034000000000000u} /* 20 */, CF_F64);
    assert_true(a.r == 0.0 && !signbit(a.r));
    assert_false(isnan(a.m));
    assert_true(a.m == 0.0);
    assert_true(a.err >= 0.0 && isfinite(a.err));
    /* z = +1e309 with threshold +Inf: σ branch, σ(z) = 1 to any precision, m = |r| */
    sv b = one_t(CF_F64, &dy, CF_F64, &xpos, beta, (orc_scalar){CF_F64, 0x7ff0000000000000u}, CF_F64);
    assert_true(b.r == 1.0);
    assert_false(isnan(b.m));
    assert_true(b.m == 1.0);
}

/* f64 results in the subnormal range and below: scored (err ≤ ulp_f64(m)/64), r the exact value on
 * the subnormal grid.  Expected values from mpmath at 400 bits. */
static void f64_subnormal_and_underflowing_results_are_scored(void **state)
{
    (void)state;
    orc_scalar one_s = {CF_F64, 0x3ff0000000000000u}, thr = {CF_F64, 0x4034000000000000u};
    /* dy = 5·2^-1074, z = 0.1: 5·σ(0.1) = 2.6249... -> 3·2^-1074 */
    uint64_t dy1 = 5, x1 = 0x3fb999999999999au;
    sv a = one_t(CF_F64, &dy1, CF_F64, &x1, one_s, thr, CF_F64);
    assert_true(bits_of(a.r) == 3 && a.r_lo == 0.0);
    assert_true(scored64(a));
    /* dy = 1, z = -800: σ ≈ 2^-1154 rounds to +0 */
    uint64_t dy2 = 0x3ff0000000000000u, x2 = 0xc089000000000000u;
    sv b = one_t(CF_F64, &dy2, CF_F64, &x2, one_s, thr, CF_F64);
    assert_true(b.r == 0.0 && !signbit(b.r) && b.r_lo == 0.0);
    assert_true(scored64(b));
    /* negative dy: -0 */
    uint64_t dy3 = 0xbff0000000000000u;
    sv c = one_t(CF_F64, &dy3, CF_F64, &x2, one_s, thr, CF_F64);
    assert_true(c.r == 0.0 && signbit(c.r) && scored64(c));
    /* dy = 2^-1018, z = 30 (threshold 40): r normal (2^-1018·(1 - 9.4e-14)), remainder below the
     * subnormal grid: f64 numbers are 2^-1071 apart there, r + r_lo only 2^-1074, so err is the
     * true bound (issue 58), not 0: at most half the finer grid */
    uint64_t dy4 = 0x0050000000000000u, x4 = 0x403e000000000000u;
    sv d = one_t(CF_F64, &dy4, CF_F64, &x4, one_s, (orc_scalar){CF_F64, 0x4044000000000000u} /* 40 */, CF_F64);
    assert_true(d.r > 0x1p-1019 && d.r < 0x1p-1018);
    assert_true(d.err > 0 && d.err <= 0x1.0001p-1075);
    /* dy = 1, z = -744: σ = e^-744 ≈ 9.88e-324 -> 2·2^-1074 */
    uint64_t x5 = 0xc087400000000000u;
    sv e = one_t(CF_F64, &dy2, CF_F64, &x5, one_s, thr, CF_F64);
    assert_true(bits_of(e.r) == 2 && scored64(e));
    /* z = 0 exactly: r = dy/2 is exact, on a midpoint of the grid for odd dy: ties to even */
    uint64_t dy6 = 1, dy7 = 3, x6 = 0;
    sv f = one_t(CF_F64, &dy6, CF_F64, &x6, one_s, thr, CF_F64);
    assert_true(f.r == 0.0 && f.r_lo == 0.0 && scored64(f));
    sv g = one_t(CF_F64, &dy7, CF_F64, &x6, one_s, thr, CF_F64);
    assert_true(bits_of(g.r) == 2 && g.r_lo == 0.0 && scored64(g));
    /* z = ∓2^-1074: dy·σ(z) = 2^-1075·(1 ∓ 2^-1075 + ...), a hair below / above the midpoint, so 0
     * and 2^-1074; 128 bits cannot tell, the oracle must decide it anyway (default sweep case) */
    uint64_t xm = 0x8000000000000001u, xp = 1;
    sv h = one_t(CF_F64, &dy6, CF_F64, &xm, one_s, thr, CF_F64);
    assert_true(h.r == 0.0 && h.r_lo == 0.0 && scored64(h));
    sv k = one_t(CF_F64, &dy6, CF_F64, &xp, one_s, thr, CF_F64);
    assert_true(bits_of(k.r) == 1 && k.r_lo == 0.0 && scored64(k));
}

/* Issue 58, item 3, as bits: gradOutput 0x3095a2cf122bec88, self 0xc080ca57eb913e70, beta 1,
 * threshold 20: r + r_lo sits on a midpoint of the f64 grid (normal, tiny) and the oracle used to
 * claim err = 0.  The bound must hold against the exact value (MPFR at 2400 bits here) and be
 * non-zero. */
static void f64_tiny_normal_results_carry_a_true_bound(void **state)
{
    (void)state;
    uint64_t dy = 0x3095a2cf122bec88u, x = 0xc080ca57eb913e70u;
    orc_scalar one_s = {CF_F64, 0x3ff0000000000000u}, thr = {CF_F64, 0x4034000000000000u};
    sv a = one_t(CF_F64, &dy, CF_F64, &x, one_s, thr, CF_F64);
    assert_true(a.r > 0 && a.r >= 0x1p-1021);
    mpfr_t z, e;
    mpfr_inits2(2400, z, e, (mpfr_ptr)0);
    mpfr_set_d(z, d_of(x), MPFR_RNDN);
    mpfr_neg(z, z, MPFR_RNDN);
    mpfr_exp(e, z, MPFR_RNDN);
    mpfr_add_ui(e, e, 1, MPFR_RNDN);
    mpfr_d_div(e, d_of(dy), e, MPFR_RNDN); /* dy·σ(x) */
    mpfr_sub_d(e, e, a.r, MPFR_RNDN);
    mpfr_sub_d(e, e, a.r_lo, MPFR_RNDN);
    double dist = fabs(mpfr_get_d(e, MPFR_RNDA));
    mpfr_clears(z, e, (mpfr_ptr)0);
    assert_true(a.err > 0);
    assert_true(dist <= a.err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(threshold_equality_takes_the_sigmoid_branch),
        cmocka_unit_test(rounding_of_beta_x_gives_alt),
        cmocka_unit_test(beta_zero_and_infinities),
        cmocka_unit_test(scalars_are_converted_to_the_compute_precision),
        cmocka_unit_test(f64_output_carries_a_low_part),
        cmocka_unit_test(spec_example_matches),
        cmocka_unit_test(integer_self_is_converted_before_the_product),
        cmocka_unit_test(m_is_finite_when_the_product_overflows_double),
        cmocka_unit_test(f64_subnormal_and_underflowing_results_are_scored),
        cmocka_unit_test(f64_tiny_normal_results_carry_a_true_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
