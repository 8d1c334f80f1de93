/* The binary floating-point formats of the suite's float dtypes (IEEE 754 binary16, bfloat16,
 * binary32, binary64): one table shared by the generator (fuzz/fp.c: bit patterns) and the
 * harness (conform/ulp.c: ULP and the pass rule).  impl/ and oracle/ keep their own decoders:
 * that independence is the point of the differential test. */
#ifndef ACLCONFORM_FPFORMAT_H
#define ACLCONFORM_FPFORMAT_H

#include <stdbool.h>

#include "dtype.h"

typedef struct {
    int p;     /* precision in bits, incl. the hidden bit */
    int emin;  /* minimum normal exponent */
    int emax;  /* maximum exponent */
    int ebits; /* exponent field width */
    int width; /* total bits */
} cf_fpformat;

/* The format of a float dtype; false for the others. */
static inline bool cf_fpformat_of(cf_dtype dt, cf_fpformat *f)
{
    switch (dt) {
    case CF_F16: *f = (cf_fpformat){11, -14, 15, 5, 16}; return true;
    case CF_BF16: *f = (cf_fpformat){8, -126, 127, 8, 16}; return true;
    case CF_F32: *f = (cf_fpformat){24, -126, 127, 8, 32}; return true;
    case CF_F64: *f = (cf_fpformat){53, -1022, 1023, 11, 64}; return true;
    default: return false;
    }
}

#endif
