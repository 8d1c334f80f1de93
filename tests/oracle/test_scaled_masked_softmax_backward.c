/* ctest-labels: unit
 * ScaledMaskedSoftmaxBackward oracle: a 3×4 block with masked positions (exact +0 even in a NaN
 * row), hand-computed dyadic values, a row whose g·y − s·y cancels, f32 rounding of scale, mask
 * broadcast over the leading dims, and bf16/f16 inputs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "oracle_test_util.h"

static void block_3x4_with_masked_positions(void **state)
{
    (void)state;
    float g[12] = {1, 2, 3, 4, NAN, 1, 1, 1, 1, 1.0f + 0x1p-20f, 1, 1};
    float y[12] = {0.125f, 0.25f, 0.5f, 0.125f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f};
    uint8_t mk[12] = {0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0};
    int64_t sh[4] = {1, 1, 3, 4};
    tt_tensor tg, ty, tm;
    tt_out o;
    orc_out *out = tt_out_alloc(&o, 12);
    assert_int_equal(orc_scaled_masked_softmax_backward(tt_make(&tg, CF_F32, 4, sh, g), tt_make(&ty, CF_F32, 4, sh, y),
                                                        tt_make(&tm, CF_BOOL, 4, sh, mk), 2.0, CF_F32,
                                                        ORC_PROFILE_SPEC, out),
                     ORC_OK);
    /* row 0: s = 2.625; r = 2·y·(g − s) */
    double e0[4] = {-0.40625, 0.0, 0.375, 0.34375};
    for (int j = 0; j < 4; j++) assert_true(out->r[j] == e0[j]);
    assert_true(out->r[1] == 0.0 && !signbit(out->r[1]) && out->m[1] == 0.0 && out->err[1] == 0.0);
    /* m = |scale|·(|g·y| + |y|·Σ|g·y|) */
    assert_true(out->m[0] == 2.0 * (0.125 + 0.125 * 2.625));
    assert_true(out->err[0] <= 0x1p-50 * out->m[0]);
    /* row 1: NaN product -> NaN everywhere unmasked, masked exactly +0 */
    for (int j = 4; j < 8; j++) {
        if (j == 6) assert_true(out->r[j] == 0.0 && !signbit(out->r[j]));
        else assert_true(isnan(out->r[j]) && out->m[j] == 0.0);
    }
    /* row 2: s = 1 + 2^-22, the cancelling subtraction is exact: −2^-23, 3·2^-23, −2^-23, −2^-23 */
    double e2[4] = {-0x1p-23, 3 * 0x1p-23, -0x1p-23, -0x1p-23};
    for (int j = 0; j < 4; j++) {
        assert_true(fabs(out->r[8 + j] - e2[j]) <= out->err[8 + j]);
        assert_true(out->err[8 + j] <= 0x1p-45 * out->m[8 + j]);
        assert_true(out->m[8 + j] > 0.99);
    }
    for (int i = 0; i < 12; i++) assert_true(memcmp(&out->alt[i], &out->r[i], 8) == 0);
    tt_out_free(&o);
}

static void scale_is_rounded_to_f32_and_mask_broadcasts(void **state)
{
    (void)state;
    /* B = 2, N = 1; mask [1,1,1,2] broadcast over B; bf16 inputs given as bits */
    uint16_t g[4], y[4];
    float gv[4] = {1, 3, -2, 5}, yv[4] = {0.5f, 0.5f, 0.25f, 0.75f};
    for (int i = 0; i < 4; i++) g[i] = tt_bf16_bits(gv[i]), y[i] = tt_bf16_bits(yv[i]);
    uint8_t mk[2] = {0, 1};
    int64_t sh[4] = {2, 1, 1, 2}, msh[4] = {1, 1, 1, 2};
    tt_tensor tg, ty, tm;
    tt_out o;
    orc_out *out = tt_out_alloc(&o, 4);
    assert_int_equal(orc_scaled_masked_softmax_backward(tt_make(&tg, CF_BF16, 4, sh, g), tt_make(&ty, CF_BF16, 4, sh, y),
                                                        tt_make(&tm, CF_BOOL, 4, msh, mk), 0.1, CF_BF16,
                                                        ORC_PROFILE_SPEC, out),
                     ORC_OK);
    double sc = (double)0.1f;
    /* batch 0: s = 0.5 + 1.5 = 2; r0 = sc·0.5·(1 − 2) */
    assert_true(fabs(out->r[0] - sc * -0.5) <= out->err[0]);
    assert_true(out->r[0] != 0.1 * -0.5);
    assert_true(out->r[1] == 0.0 && !signbit(out->r[1]));
    /* batch 1: s = −0.5 + 3.75 = 3.25; r0 = sc·0.25·(−2 − 3.25) */
    assert_true(fabs(out->r[2] - sc * 0.25 * -5.25) <= out->err[2]);
    assert_true(out->r[3] == 0.0);
    tt_out_free(&o);
}

static void infinite_product_propagates_by_ieee(void **state)
{
    (void)state;
    float g[3] = {INFINITY, 1, 2}, y[3] = {0.5f, 0.25f, 0.0f};
    uint8_t mk[3] = {0, 0, 0};
    int64_t sh[4] = {1, 1, 1, 3};
    tt_tensor tg, ty, tm;
    tt_out o;
    orc_out *out = tt_out_alloc(&o, 3);
    assert_int_equal(orc_scaled_masked_softmax_backward(tt_make(&tg, CF_F32, 4, sh, g), tt_make(&ty, CF_F32, 4, sh, y),
                                                        tt_make(&tm, CF_BOOL, 4, sh, mk), 1.0, CF_F32,
                                                        ORC_PROFILE_SPEC, out),
                     ORC_OK);
    /* s = +Inf: j=0 Inf − Inf = NaN; j=1 0.25 − Inf = −Inf; j=2 0 − Inf·0 = NaN */
    assert_true(isnan(out->r[0]));
    assert_true(out->r[1] == -INFINITY);
    assert_true(isnan(out->r[2]));
    tt_out_free(&o);
}

/* issue 16: scale 1e300 rounds to +Inf in f32.  The exact value scale·y·(g − s) is ±Inf where
 * y·(g − s) ≠ 0 (NaN only where it is exactly 0), even when g − s rounds to 0 in double: row 0 has
 * s = 1 + 2^-80, so every g − s = −2^-80.  Inputs as bits. */
static void infinite_scale_takes_the_exact_sign(void **state)
{
    (void)state;
    const uint32_t ONE = 0x3f800000u, HALF = 0x3f000000u, QUARTER = 0x3e800000u, TINY = 0x17800000u; /* 2^-80 */
    uint32_t g[12] = {ONE, ONE, ONE, ONE, ONE, ONE, 0x40400000u /* 3 */, ONE, ONE, ONE, ONE, ONE};
    uint32_t y[12] = {HALF, HALF, TINY, HALF, HALF, 0, QUARTER, HALF, TINY, HALF, HALF, TINY};
    uint8_t mk[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0};
    int64_t sh[4] = {1, 1, 4, 3};
    tt_tensor tg, ty, tm;
    tt_out o;
    orc_out *out = tt_out_alloc(&o, 12);
    uint64_t sc_b = 0x7e37e43c8800759cu; /* 1e300 */
    double sc;
    memcpy(&sc, &sc_b, 8);
    assert_int_equal(orc_scaled_masked_softmax_backward(tt_make(&tg, CF_F32, 4, sh, g), tt_make(&ty, CF_F32, 4, sh, y),
                                                        tt_make(&tm, CF_BOOL, 4, sh, mk), sc, CF_F32,
                                                        ORC_PROFILE_SPEC, out),
                     ORC_OK);
    /* row 0: s = 1 + 2^-80, y·(g − s) = −y·2^-80 < 0 */
    for (int j = 0; j < 3; j++) assert_true(out->r[j] == -INFINITY);
    /* row 1: s = 1 exactly: g − s = 0 -> Inf·0 = NaN */
    for (int j = 3; j < 6; j++) assert_true(isnan(out->r[j]));
    /* row 2: s = 0.75 + 0.5 + 2^-80: 3 − s > 0, 1 − s < 0 */
    assert_true(out->r[6] == INFINITY);
    assert_true(out->r[7] == -INFINITY && out->r[8] == -INFINITY);
    /* row 3: masked position stays +0 */
    assert_true(out->r[9] == -INFINITY && out->r[11] == -INFINITY);
    assert_true(out->r[10] == 0.0 && !signbit(out->r[10]));
    for (int i = 0; i < 12; i++) assert_true(out->m[i] == 0.0 && out->err[i] == 0.0);
    /* scale −1e300 -> −Inf: the signs flip */
    sc = -sc;
    assert_int_equal(orc_scaled_masked_softmax_backward(tt_make(&tg, CF_F32, 4, sh, g), tt_make(&ty, CF_F32, 4, sh, y),
                                                        tt_make(&tm, CF_BOOL, 4, sh, mk), sc, CF_F32,
                                                        ORC_PROFILE_SPEC, out),
                     ORC_OK);
    for (int j = 0; j < 3; j++) assert_true(out->r[j] == INFINITY);
    assert_true(out->r[6] == -INFINITY && out->r[7] == INFINITY);
    tt_out_free(&o);
}

static void malformed_arguments_are_einval_not_crashes(void **state)
{
    (void)state;
    float g[4] = {0}, y[4] = {0};
    uint8_t mk[4] = {0};
    int64_t sh[4] = {1, 1, 2, 2}, sh3[3] = {1, 2, 2}, bad[4] = {1, 1, 2, 3}, mb[4] = {1, 1, 1, 2};
    tt_tensor tg, ty, tm;
    tt_out o;
    orc_out *out = tt_out_alloc(&o, 4);
    tt_make(&tg, CF_F32, 4, sh, g), tt_make(&ty, CF_F32, 4, sh, y);
    assert_int_equal(orc_scaled_masked_softmax_backward(&tg.t, &ty.t, NULL, 1.0, CF_F32, ORC_PROFILE_SPEC, out), ORC_EINVAL);
    assert_int_equal(orc_scaled_masked_softmax_backward(&tg.t, &ty.t, tt_make(&tm, CF_BOOL, 3, sh3, mk), 1.0, CF_F32,
                                                        ORC_PROFILE_SPEC, out), ORC_EINVAL);
    assert_int_equal(orc_scaled_masked_softmax_backward(&tg.t, &ty.t, tt_make(&tm, CF_BOOL, 4, bad, mk), 1.0, CF_F32,
                                                        ORC_PROFILE_SPEC, out), ORC_EINVAL);
    /* the mask broadcasts on B and N only, not on S1 */
    assert_int_equal(orc_scaled_masked_softmax_backward(&tg.t, &ty.t, tt_make(&tm, CF_BOOL, 4, mb, mk), 1.0, CF_F32,
                                                        ORC_PROFILE_SPEC, out), ORC_EINVAL);
    orc_out none = {NULL, NULL, NULL, NULL, NULL};
    assert_int_equal(orc_scaled_masked_softmax_backward(&tg.t, &ty.t, tt_make(&tm, CF_BOOL, 4, sh, mk), 1.0, CF_F32,
                                                        ORC_PROFILE_SPEC, &none), ORC_EINVAL);
    /* only r is required: the other arrays may be NULL */
    orc_out only_r = {out->r, NULL, NULL, NULL, NULL};
    assert_int_equal(orc_scaled_masked_softmax_backward(&tg.t, &ty.t, &tm.t, 1.0, CF_F32, ORC_PROFILE_SPEC, &only_r), ORC_OK);
    tt_out_free(&o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(block_3x4_with_masked_positions),
        cmocka_unit_test(scale_is_rounded_to_f32_and_mask_broadcasts),
        cmocka_unit_test(infinite_product_propagates_by_ieee),
        cmocka_unit_test(infinite_scale_takes_the_exact_sign),
        cmocka_unit_test(malformed_arguments_are_einval_not_crashes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
