/* ctest-labels: unit
 * The bulk 16-bit conversions (runtime/conv.c: F16C, and the cloned AVX2 / AVX-512 bf16 loops)
 * agree bit for bit with the scalar conversions over whole vectors, not only the scalar tail:
 * every 16-bit pattern widened in one call, and a spread of all 2^32 f32 patterns (every 61st,
 * plus every pattern in the subnormal, overflow and NaN boundaries) narrowed in 4099-element
 * calls at every alignment.  tests/unit/test_conv.c checks the scalar forms against a reference.
 * NaN only has to stay NaN through F16C (which quiets a signalling NaN; the scalar form keeps
 * it); the bf16 loops match the scalar bits for NaN too. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "runtime/conv.h"

static void widen_every_pattern(void **state)
{
    (void)state;
    static uint16_t in[65536];
    static float out[65536];
    for (uint32_t i = 0; i < 65536; i++) in[i] = (uint16_t)i;
    for (int bf = 0; bf <= 1; bf++) {
        if (bf) acl_cvt_bf16_to_f32(in, out, 65536);
        else acl_cvt_f16_to_f32(in, out, 65536);
        for (uint32_t i = 0; i < 65536; i++) {
            float want = bf ? acl_bf16_to_f32((uint16_t)i) : acl_f16_to_f32((uint16_t)i);
            if (want != want ? out[i] == out[i] : acl_f32_bits(out[i]) != acl_f32_bits(want))
                fail_msg("%s bulk widen 0x%04x = 0x%08x, scalar 0x%08x", bf ? "bf16" : "f16", i,
                         acl_f32_bits(out[i]), acl_f32_bits(want));
        }
    }
}

enum { CHUNK = 4099 };

static void narrow_chunk(const float *src, size_t n)
{
    uint16_t b16[CHUNK], f16[CHUNK];
    acl_cvt_f32_to_bf16(src, b16, n);
    acl_cvt_f32_to_f16(src, f16, n);
    for (size_t i = 0; i < n; i++) {
        if (b16[i] != acl_f32_to_bf16(src[i])) /* NaN included */
            fail_msg("bf16 bulk(0x%08x) = 0x%04x, scalar 0x%04x", acl_f32_bits(src[i]), b16[i],
                     acl_f32_to_bf16(src[i]));
        uint16_t f = acl_f32_to_f16(src[i]);
        if (src[i] != src[i] ? (f16[i] & 0x7fffu) <= 0x7c00u : f16[i] != f)
            fail_msg("f16 bulk(0x%08x) = 0x%04x, scalar 0x%04x", acl_f32_bits(src[i]), f16[i],
                     f);
    }
}

static void narrow_spread_of_all_patterns(void **state)
{
    (void)state;
    float buf[CHUNK + 16];
    size_t fill = 0, shift = 0;
    for (uint64_t u = 0; u <= 0xffffffffu; u += 61) {
        buf[shift + fill++] = acl_bits_f32((uint32_t)u);
        if (fill == CHUNK) {
            narrow_chunk(buf + shift, fill);
            fill = 0;
            shift = (shift + 1) % 16; /* every start alignment */
        }
    }
    narrow_chunk(buf + shift, fill);
    /* dense boundaries: subnormals, the f16 normal / overflow edges, Inf and NaN, both signs */
    const uint32_t starts[] = {0x00000000u, 0x33000000u - 2048, 0x387fc000u - 2048,
                               0x477fe000u - 2048, 0x7f7f0000u - 2048, 0x7f800000u - 2048};
    for (int sgn = 0; sgn <= 1; sgn++)
        for (size_t k = 0; k < sizeof starts / sizeof starts[0]; k++) {
            for (size_t i = 0; i < CHUNK; i++) buf[i] = acl_bits_f32((starts[k] + (uint32_t)i) | (uint32_t)sgn << 31);
            narrow_chunk(buf, CHUNK);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(widen_every_pattern),
        cmocka_unit_test(narrow_spread_of_all_patterns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
