/* f16 / bf16 <-> f32 conversion, round-to-nearest-even, subnormals kept, overflow to ±Inf,
 * NaN kept NaN (quiet; the top payload bits are kept).  Scalar forms are branch-light so that
 * loops over them vectorise; the bulk forms use F16C when the CPU has it (runtime dispatch). */
#ifndef ACL_CONV_H
#define ACL_CONV_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint32_t acl_f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float acl_bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

static inline float acl_f16_to_f32(uint16_t h)
{
    /* Shift exponent+mantissa into place and rebias; Inf/NaN get the extra rebias to 255;
     * subnormals are renormalised by one exact float subtraction. */
    uint32_t o = (uint32_t)(h & 0x7fffu) << 13;
    uint32_t exp = o & 0x0f800000u;
    o += (uint32_t)(127 - 15) << 23;
    if (exp == 0x0f800000u) {
        o += (uint32_t)(128 - 16) << 23;
    } else if (exp == 0) {
#if ACLCONFORM_MUTANT == 18 /* subnormal-flush: scalar f16->f32 flushes subnormal inputs to signed zero */
        o = 0;
#else
        o += 1u << 23;
        o = acl_f32_bits(acl_bits_f32(o) - acl_bits_f32(113u << 23));
#endif
    }
    return acl_bits_f32(o | ((uint32_t)(h & 0x8000u) << 16));
}

static inline uint16_t acl_f32_to_f16(float f)
{
    uint32_t u = acl_f32_bits(f);
    uint32_t sign = (u >> 16) & 0x8000u;
    u &= 0x7fffffffu;
    uint16_t o;
    if (u >= (uint32_t)(127 + 16) << 23) { /* ≥ 65536, Inf or NaN */
        o = u > 0x7f800000u ? (uint16_t)(0x7e00u | ((u >> 13) & 0x3ffu)) : 0x7c00u;
    } else if (u < 113u << 23) { /* result subnormal or zero: let an exact-scale float add round */
        const float magic = acl_bits_f32(((127 - 15) + (23 - 10) + 1) << 23); /* 0.5 */
#if ACLCONFORM_MUTANT == 19 /* subnormal-flush: scalar f32->f16 flushes subnormal results to signed zero */
        o = (uint16_t)(0u * (acl_f32_bits(acl_bits_f32(u) + magic) - acl_f32_bits(magic)));
#else
        o = (uint16_t)(acl_f32_bits(acl_bits_f32(u) + magic) - acl_f32_bits(magic));
#endif
    } else { /* normal: rebias and round the 13 dropped bits to nearest even */
        uint32_t odd = (u >> 13) & 1u;
#if ACLCONFORM_MUTANT == 16 /* conversion-rounding: scalar f32->f16 rounds ties away from zero instead of to even */
        u += ((uint32_t)(15 - 127) << 23) + 0x1000u + 0u * odd;
#else
        u += ((uint32_t)(15 - 127) << 23) + 0xfffu + odd;
#endif
        o = (uint16_t)(u >> 13); /* a carry out of the top exponent gives 0x7c00 = Inf */
    }
    return (uint16_t)(o | sign);
}

static inline float acl_bf16_to_f32(uint16_t h) { return acl_bits_f32((uint32_t)h << 16); }

static inline uint16_t acl_f32_to_bf16(float f)
{
    uint32_t u = acl_f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u); /* quiet NaN */
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

void acl_cvt_f16_to_f32(const uint16_t *src, float *dst, size_t n);
void acl_cvt_f32_to_f16(const float *src, uint16_t *dst, size_t n);
void acl_cvt_bf16_to_f32(const uint16_t *src, float *dst, size_t n);
void acl_cvt_f32_to_bf16(const float *src, uint16_t *dst, size_t n);

#endif
