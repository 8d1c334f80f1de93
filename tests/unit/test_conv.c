/* ctest-labels: unit
 * f16/bf16 <-> f32 conversion: exhaustive over all 65,536 16-bit patterns in both directions,
 * every rounding boundary (midpoints and their f32 neighbours), overflow, subnormals, NaN; the
 * scalar, bulk (F16C when present) and compiler (_Float16) conversions must agree bit for bit. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "runtime/conv.h"

/* Independent decode: the value of an f16 pattern from its fields. */
static double ref_f16_value(uint16_t h)
{
    int s = h >> 15, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e == 0 ? ldexp(m, -24) : ldexp(1024 + m, e - 25);
    if (e == 31) v = m ? NAN : INFINITY;
    return s ? -v : v;
}

static double ref_bf16_value(uint16_t h)
{
    int s = h >> 15, e = (h >> 7) & 0xff, m = h & 0x7f;
    double v = e == 0 ? ldexp(m, -133) : ldexp(128 + m, e - 134);
    if (e == 255) v = m ? NAN : INFINITY;
    return s ? -v : v;
}

/* Independent encode by round-to-nearest-even on the real line: p = 11 (f16) or 8 (bf16). */
static double ref_round(double x, int p, int emin, double maxfin)
{
    if (isnan(x) || isinf(x) || x == 0) return x;
    double a = fabs(x);
    int e = ilogb(a);
    if (e < emin) e = emin;
    double q = ldexp(a, p - 1 - e);
    double r = nearbyint(q); /* default rounding mode: to nearest, ties to even */
    double v = ldexp(r, e - (p - 1));
    double half_ulp_top = ldexp(1.0, ilogb(maxfin) - p); /* overflow threshold = max + ulp/2 */
    if (a >= maxfin + half_ulp_top) v = INFINITY;
    return copysign(v, x);
}

static void f16_to_f32_matches_field_decoding_for_all_patterns(void **state)
{
    (void)state;
    static uint16_t in[65536];
    static float bulk[65536];
    for (uint32_t i = 0; i < 65536; i++) in[i] = (uint16_t)i;
    acl_cvt_f16_to_f32(in, bulk, 65536);
    for (uint32_t i = 0; i < 65536; i++) {
        float got = acl_f16_to_f32((uint16_t)i);
        double want = ref_f16_value((uint16_t)i);
        if (isnan(want)) {
            if (!isnan(got) || !isnan(bulk[i])) fail_msg("f16 0x%04x: NaN lost", i);
            /* quiet-NaN payload: the top mantissa bits survive */
            if (((acl_f32_bits(got) >> 13) & 0x1ff) != (i & 0x1ff))
                fail_msg("f16 0x%04x: NaN payload 0x%08x", i, acl_f32_bits(got));
            continue;
        }
        if ((double)got != want || !signbit(got) != !signbit(want))
            fail_msg("f16 0x%04x: got %a want %a", i, (double)got, want);
        if (acl_f32_bits(bulk[i]) != acl_f32_bits(got))
            fail_msg("f16 0x%04x: bulk 0x%08x scalar 0x%08x", i, acl_f32_bits(bulk[i]),
                     acl_f32_bits(got));
#ifdef __FLT16_MAX__
        _Float16 hf;
        uint16_t bits = (uint16_t)i;
        memcpy(&hf, &bits, 2);
        if (acl_f32_bits((float)hf) != acl_f32_bits(got)) fail_msg("f16 0x%04x: _Float16 disagrees", i);
#endif
    }
}

static void bf16_to_f32_matches_field_decoding_for_all_patterns(void **state)
{
    (void)state;
    static uint16_t in[65536];
    static float bulk[65536];
    for (uint32_t i = 0; i < 65536; i++) in[i] = (uint16_t)i;
    acl_cvt_bf16_to_f32(in, bulk, 65536);
    for (uint32_t i = 0; i < 65536; i++) {
        float got = acl_bf16_to_f32((uint16_t)i);
        double want = ref_bf16_value((uint16_t)i);
        if (isnan(want)) {
            if (!isnan(got)) fail_msg("bf16 0x%04x: NaN lost", i);
            continue;
        }
        if ((double)got != want || !signbit(got) != !signbit(want))
            fail_msg("bf16 0x%04x: got %a want %a", i, (double)got, want);
        if (acl_f32_bits(bulk[i]) != acl_f32_bits(got)) fail_msg("bf16 0x%04x: bulk differs", i);
    }
}

/* Check one f32 input against the reference rounding, scalar and bulk. */
static void check_to16(float x, int is_bf16)
{
    uint16_t got = is_bf16 ? acl_f32_to_bf16(x) : acl_f32_to_f16(x);
    uint16_t bulk;
    if (is_bf16) acl_cvt_f32_to_bf16(&x, &bulk, 1);
    else acl_cvt_f32_to_f16(&x, &bulk, 1);
    double back = is_bf16 ? ref_bf16_value(got) : ref_f16_value(got);
    double want = is_bf16 ? ref_round(x, 8, -126, 0x1.fep127) : ref_round(x, 11, -14, 65504.0);
    if (isnan(x)) {
        if (!isnan(back)) fail_msg("%s(0x%08x NaN) = 0x%04x not NaN", is_bf16 ? "bf16" : "f16",
                                   acl_f32_bits(x), got);
        if (!isnan(is_bf16 ? ref_bf16_value(bulk) : ref_f16_value(bulk)))
            fail_msg("bulk NaN lost for 0x%08x", acl_f32_bits(x));
        return;
    }
    if (back != want || !signbit(back) != !signbit(want))
        fail_msg("%s(0x%08x = %a) = 0x%04x (%a), want %a", is_bf16 ? "bf16" : "f16",
                 acl_f32_bits(x), (double)x, got, back, want);
    if (bulk != got)
        fail_msg("%s bulk(0x%08x) = 0x%04x, scalar 0x%04x", is_bf16 ? "bf16" : "f16",
                 acl_f32_bits(x), bulk, got);
#ifdef __FLT16_MAX__
    if (!is_bf16) {
        _Float16 hf = (_Float16)x;
        uint16_t cb;
        memcpy(&cb, &hf, 2);
        if (cb != got) fail_msg("f16(0x%08x): _Float16 gives 0x%04x, ours 0x%04x", acl_f32_bits(x), cb, got);
    }
#endif
}

/* Every 16-bit value, every midpoint between neighbours (a tie: must go to even), and the f32
 * numbers one ULP either side of each midpoint; both signs; across subnormals and overflow. */
static void f32_to_16_rounds_every_boundary_to_nearest_even(void **state)
{
    (void)state;
    for (int is_bf16 = 0; is_bf16 <= 1; is_bf16++) {
        for (uint32_t i = 0; i < 0x8000; i++) {
            double a = is_bf16 ? ref_bf16_value((uint16_t)i) : ref_f16_value((uint16_t)i);
            if (isnan(a) || isinf(a)) continue;
            double b = is_bf16 ? ref_bf16_value((uint16_t)(i + 1)) : ref_f16_value((uint16_t)(i + 1));
            if (isinf(b)) b = is_bf16 ? 0x1p128 : 65536.0; /* the next "value" past the largest */
            float mid = (float)((a + b) / 2); /* exact in f32: needs p+1 ≤ 24 bits */
            assert_true((double)mid == (a + b) / 2);
            float cases[] = {(float)a, mid, nextafterf(mid, 0), nextafterf(mid, INFINITY)};
            for (int c = 0; c < 4; c++) {
                check_to16(cases[c], is_bf16);
                check_to16(-cases[c], is_bf16);
            }
        }
        check_to16(INFINITY, is_bf16);
        check_to16(-INFINITY, is_bf16);
        check_to16(NAN, is_bf16);
        check_to16(acl_bits_f32(0x7f800001u), is_bf16); /* signalling NaN with a low payload */
        check_to16(acl_bits_f32(0xffc00000u), is_bf16);
        check_to16(0x1p-149f, is_bf16);
        check_to16(3.4028235e38f, is_bf16);
    }
}

/* A spread sample of all 2^32 f32 patterns (every 251st); the `slow` test does all of them. */
static void f32_to_16_agrees_with_reference_on_sampled_patterns(void **state)
{
    (void)state;
    uint32_t step = getenv("ACLCONFORM_CONV_FULL") ? 1 : 251;
    for (uint64_t u = 0; u <= 0xffffffffu; u += step) { /* step is odd: every low-bit pattern occurs */
        float x = acl_bits_f32((uint32_t)u);
        check_to16(x, 0);
        check_to16(x, 1);
    }
}

/* Known hard values written as bits (rounding direction and overflow). */
static void f32_to_16_golden_bits(void **state)
{
    (void)state;
    struct { uint32_t in; uint16_t f16, bf16; } g[] = {
        {0x00000000u, 0x0000, 0x0000}, {0x80000000u, 0x8000, 0x8000},
        {0x3f800000u, 0x3c00, 0x3f80}, /* 1 */
        {0x477fe000u, 0x7bff, 0x4780}, /* 65504 = f16 max */
        {0x477ff000u, 0x7c00, 0x4780}, /* 65520: f16 tie to even -> Inf */
        {0x477fefffu, 0x7bff, 0x4780}, /* just below 65520 */
        {0x33800000u, 0x0001, 0x3380}, /* 2^-24 smallest f16 subnormal */
        {0x33000000u, 0x0000, 0x3300}, /* 2^-25: tie -> even (0) */
        {0x33000001u, 0x0001, 0x3300}, /* just above 2^-25 */
        {0x387fc000u, 0x03ff, 0x3880}, /* largest f16 subnormal */
        {0x3f808000u, 0x3c04, 0x3f80}, /* 1 + 2^-8: bf16 tie to even (down) */
        {0x3f818000u, 0x3c0c, 0x3f82}, /* 1 + 3*2^-8: bf16 tie to even (up) */
        {0x7f7fffffu, 0x7c00, 0x7f80}, /* f32 max -> Inf in both */
        {0x7f7f7fffu, 0x7c00, 0x7f7f}, /* below bf16 overflow threshold */
        {0x00000001u, 0x0000, 0x0000}, /* smallest f32 subnormal */
        {0x00018001u, 0x0000, 0x0002}, /* bf16 subnormal, rounds up */
    };
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++) {
        float x = acl_bits_f32(g[i].in);
        if (acl_f32_to_f16(x) != g[i].f16)
            fail_msg("f16(0x%08x) = 0x%04x want 0x%04x", g[i].in, acl_f32_to_f16(x), g[i].f16);
        if (acl_f32_to_bf16(x) != g[i].bf16)
            fail_msg("bf16(0x%08x) = 0x%04x want 0x%04x", g[i].in, acl_f32_to_bf16(x), g[i].bf16);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(f16_to_f32_matches_field_decoding_for_all_patterns),
        cmocka_unit_test(bf16_to_f32_matches_field_decoding_for_all_patterns),
        cmocka_unit_test(f32_to_16_rounds_every_boundary_to_nearest_even),
        cmocka_unit_test(f32_to_16_golden_bits),
        cmocka_unit_test(f32_to_16_agrees_with_reference_on_sampled_patterns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
