/* ctest-labels: unit */
/* fuzz/'s own float helpers: f16/bf16 RNE encoding (generated values must be exactly the
 * stored bits), decoding, ULP steps, and the portable exp/log used for sampling. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <math.h>
#include <stdio.h>

#include <cmocka.h>

#include "constraints.h" /* internal helpers of fuzz/ */

static void f16_encoding_rounds_to_nearest_even(void **state)
{
    (void)state;
    static const struct { double v; uint16_t bits; } t[] = {
        {1.0, 0x3c00}, {-2.0, 0xc000}, {65504.0, 0x7bff}, {65519.99, 0x7bff}, {65520.0, 0x7c00},
        {1e10, 0x7c00}, {-INFINITY, 0xfc00}, {0x1p-24, 0x0001}, {0x1p-25, 0x0000}, {0x1.8p-25, 0x0001},
        {0x1.8p-24, 0x0002}, {-0.0, 0x8000}, {0x1p-14, 0x0400}, {1.0 + 0x1p-11, 0x3c00}, {1.0 + 0x1.8p-11, 0x3c01}, {1.0 + 0x1.8p-10, 0x3c02},
        {0.1, 0x2e66}, {-0.7517915246, 0xba04},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        uint64_t b = fz_bits_from_double(CF_F16, t[i].v);
        if (b != t[i].bits) fail_msg("f16(%a) = 0x%04llx, expected 0x%04x", t[i].v, (unsigned long long)b, t[i].bits);
    }
    assert_true(isnan(fz_double_from_bits(CF_F16, fz_bits_from_double(CF_F16, NAN))));
}

static void bf16_encoding_matches_the_f32_bit_rule(void **state)
{
    (void)state;
    uint32_t x = 0x12345678u;
    for (int i = 0; i < 200000; i++) {
        x = x * 1664525u + 1013904223u;
        float f;
        memcpy(&f, &x, 4);
        if (isnan(f)) continue;
        uint32_t ref = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16; /* RNE on the f32 bits */
        uint64_t got = fz_bits_from_double(CF_BF16, (double)f);
        if (got != ref) fail_msg("bf16 of 0x%08x: got 0x%04llx, expected 0x%04x", x, (unsigned long long)got, ref);
    }
}

static void every_16_bit_pattern_round_trips(void **state)
{
    (void)state;
    cf_dtype dts[2] = {CF_F16, CF_BF16};
    for (int k = 0; k < 2; k++)
        for (uint32_t b = 0; b < 65536; b++) {
            double v = fz_double_from_bits(dts[k], b);
            uint64_t back = fz_bits_from_double(dts[k], v);
            if (isnan(v)) assert_true(isnan(fz_double_from_bits(dts[k], back)));
            else if (back != b) fail_msg("%s 0x%04x -> %a -> 0x%04llx", cf_dtype_name(dts[k]), b, v, (unsigned long long)back);
            uint64_t up = fz_bits_step(dts[k], b, 1);
            if (!isnan(v) && !isinf(v)) assert_true(fz_double_from_bits(dts[k], up) > v || (v == 0 && up == 1));
        }
    assert_true(fz_class_value(CF_F16, CZ_CLS_MAX_FINITE) == 65504.0);
    assert_true(fz_class_value(CF_BF16, CZ_CLS_MIN_SUB) == 0x1p-133);
    assert_true(fz_class_value(CF_F32, CZ_CLS_MAX_SUB) == 0x1.fffffcp-127);
    assert_int_equal(fz_bits_from_double(CF_U8, -3), 0);
    assert_int_equal(fz_bits_from_double(CF_I8, 300), 127);
    assert_int_equal(fz_bits_from_double(CF_BOOL, -0.5), 1);
}

static void portable_exp_and_log_are_accurate(void **state)
{
    (void)state;
    double worst = 0;
    for (double x = -740; x < 709; x += 0.37) {
        double r = fabs(fz_exp(x) - exp(x)) / exp(x);
        if (r > worst) worst = r;
    }
    for (double x = 1e-300; x < 1e300; x *= 1.7) {
        double r = fabs(fz_log(x) - log(x)) / fabs(log(x) ? log(x) : 1);
        if (r > worst) worst = r;
    }
    printf("  fz_exp/fz_log max relative difference from libm: %.3g\n", worst);
    assert_true(worst < 1e-14);
    assert_true(fz_exp(-800) == 0 && isinf(fz_exp(800)) && fz_log(1) == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(f16_encoding_rounds_to_nearest_even),
        cmocka_unit_test(bf16_encoding_matches_the_f32_bit_rule),
        cmocka_unit_test(every_16_bit_pattern_round_trips),
        cmocka_unit_test(portable_exp_and_log_are_accurate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
