/* Bit patterns of dtype values.  f16/bf16 are produced by our own round-to-nearest-even from a
 * double (spec numerics.md §1: overflow to ±Inf, subnormals kept, NaN quiet), so generated
 * values are exactly representable and impl/ is never included. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "constraints.h"
#include "fpformat.h"

typedef cf_fpformat fmt;
static bool fmt_of(cf_dtype dt, fmt *f) { return cf_fpformat_of(dt, f); }

static uint64_t encode_small(const fmt *f, double v)
{
    uint64_t sign = signbit(v) ? 1ull << (f->width - 1) : 0;
    uint64_t expmask = ((1ull << f->ebits) - 1) << (f->p - 1);
    if (isnan(v)) return expmask | (1ull << (f->p - 2)); /* quiet NaN, sign dropped */
    double a = fabs(v);
    double maxf = ldexp(2.0 - ldexp(1.0, 1 - f->p), f->emax);
    double thr = maxf + ldexp(1.0, f->emax - f->p); /* largest finite + ulp/2: ties to even = Inf */
    if (a >= thr) return sign | expmask;
    if (a == 0) return sign;
    int ex;
    (void)frexp(a, &ex);
    int e = ex - 1;
    if (e < f->emin) e = f->emin;
    double n = rint(ldexp(a, f->p - 1 - e)); /* RNE in the default rounding mode */
    if (n >= ldexp(1.0, f->p)) {
        n /= 2;
        e++;
    }
    uint64_t m = (uint64_t)n;
    if (m < (1ull << (f->p - 1))) return sign | m; /* subnormal (e == emin) */
    uint64_t ef = (uint64_t)(e + f->emax);
    return sign | (ef << (f->p - 1)) | (m - (1ull << (f->p - 1)));
}

static double decode_small(const fmt *f, uint64_t b)
{
    bool neg = (b >> (f->width - 1)) & 1;
    uint64_t ef = (b >> (f->p - 1)) & ((1ull << f->ebits) - 1);
    uint64_t m = b & ((1ull << (f->p - 1)) - 1);
    double v;
    if (ef == (1ull << f->ebits) - 1)
        v = m ? NAN : INFINITY;
    else if (ef == 0)
        v = ldexp((double)m, f->emin - f->p + 1);
    else
        v = ldexp((double)(m | (1ull << (f->p - 1))), (int)ef - f->emax - f->p + 1);
    return neg ? -v : v;
}

static double sat(double v, double lo, double hi)
{
    if (isnan(v)) return 0;
    v = rint(v);
    return v < lo ? lo : v > hi ? hi : v;
}

uint64_t fz_bits_from_double(cf_dtype dt, double v)
{
    fmt f;
    switch (dt) {
    case CF_F32: {
        float x = (float)v;
        uint32_t u;
        memcpy(&u, &x, 4);
        return u;
    }
    case CF_F64: {
        uint64_t u;
        memcpy(&u, &v, 8);
        return u;
    }
    case CF_I8: return (uint64_t)(uint8_t)(int8_t)sat(v, -128, 127);
    case CF_I16: return (uint64_t)(uint16_t)(int16_t)sat(v, -32768, 32767);
    case CF_I32: return (uint64_t)(uint32_t)(int32_t)sat(v, -2147483648.0, 2147483647.0);
    case CF_I64: {
        /* 2^63 is not an int64: saturate below it */
        double s = sat(v, -9223372036854775808.0, 9223372036854774784.0);
        return (uint64_t)(int64_t)s;
    }
    case CF_U8: return (uint64_t)(uint8_t)sat(v, 0, 255);
    case CF_BOOL: return (isnan(v) || v != 0) ? 1 : 0;
    default:
        if (fmt_of(dt, &f)) return encode_small(&f, v);
        return 0;
    }
}

double fz_double_from_bits(cf_dtype dt, uint64_t b)
{
    fmt f;
    switch (dt) {
    case CF_F32: {
        uint32_t u = (uint32_t)b;
        float x;
        memcpy(&x, &u, 4);
        return x;
    }
    case CF_F64: {
        double x;
        memcpy(&x, &b, 8);
        return x;
    }
    case CF_I8: return (int8_t)(uint8_t)b;
    case CF_I16: return (int16_t)(uint16_t)b;
    case CF_I32: return (int32_t)(uint32_t)b;
    case CF_I64: return (double)(int64_t)b;
    case CF_U8: return (uint8_t)b;
    case CF_BOOL: return b ? 1 : 0;
    default:
        if (fmt_of(dt, &f)) return decode_small(&f, b);
        return 0;
    }
}

uint64_t fz_load_bits(cf_dtype dt, const void *data, int64_t i)
{
    const unsigned char *p = (const unsigned char *)data;
    size_t s = cf_dtype_size(dt);
    uint64_t b = 0;
    for (size_t k = 0; k < s && k < 8; k++) b |= (uint64_t)p[(size_t)i * s + k] << (8 * k);
    return b;
}

void fz_store_bits(cf_dtype dt, void *data, int64_t i, uint64_t bits)
{
    unsigned char *p = (unsigned char *)data;
    size_t s = cf_dtype_size(dt);
    for (size_t k = 0; k < s; k++) p[(size_t)i * s + k] = k < 8 ? (unsigned char)(bits >> (8 * k)) : 0; /* c128: low 8 bytes */
}

double fz_class_value(cf_dtype dt, cz_cls cls)
{
    fmt f;
    if (!fmt_of(dt, &f)) {
        switch (dt) {
        case CF_I8: return cls == CZ_CLS_MAX_FINITE ? 127 : NAN;
        case CF_I16: return cls == CZ_CLS_MAX_FINITE ? 32767 : NAN;
        case CF_I32: return cls == CZ_CLS_MAX_FINITE ? 2147483647.0 : NAN;
        case CF_I64: return cls == CZ_CLS_MAX_FINITE ? 9223372036854774784.0 : NAN;
        case CF_U8: return cls == CZ_CLS_MAX_FINITE ? 255 : NAN;
        default: return NAN;
        }
    }
    switch (cls) {
    case CZ_CLS_MIN_SUB: return ldexp(1.0, f.emin - f.p + 1);
    case CZ_CLS_MAX_SUB: return ldexp(ldexp(1.0, f.p - 1) - 1, f.emin - f.p + 1);
    case CZ_CLS_MIN_NORMAL: return ldexp(1.0, f.emin);
    case CZ_CLS_MAX_FINITE: return ldexp(2.0 - ldexp(1.0, 1 - f.p), f.emax);
    }
    return NAN;
}

uint64_t fz_bits_step(cf_dtype dt, uint64_t bits, int dir)
{
    fmt f;
    if (!fmt_of(dt, &f)) return bits;
    uint64_t signbitv = 1ull << (f.width - 1);
    uint64_t mag = bits & (signbitv - 1);
    uint64_t inf = ((1ull << f.ebits) - 1) << (f.p - 1);
    if (mag > inf) return bits; /* NaN */
    /* monotonic key: negative values below zero */
    int64_t key = (bits & signbitv) ? -(int64_t)mag : (int64_t)mag;
    if ((bits & signbitv) && mag == 0) key = 0; /* -0 steps like +0 */
    key += dir;
    if (key > (int64_t)inf) key = (int64_t)inf;
    if (key < -(int64_t)inf) key = -(int64_t)inf;
    return key < 0 ? signbitv | (uint64_t)(-key) : (uint64_t)key;
}

/* Portable exp and log for the generator: built from IEEE basic operations, frexp, ldexp and
 * rint only (all exact or correctly rounded), so a seed gives the same values with any C
 * library.  Relative error ~1e-16, which is all sampling needs. */
static const double LN2_HI = 6.93147180369123816490e-01, LN2_LO = 1.90821492927058770002e-10;

double fz_log(double x)
{
    if (isnan(x) || x < 0) return NAN;
    if (x == 0) return -INFINITY;
    if (isinf(x)) return x;
    int e;
    double m = frexp(x, &e);
    if (m < 0.70710678118654752440) {
        m *= 2;
        e--;
    }
    /* atanh series in Horner form, 1/k as constants (no division per term: the generator
     * draws millions of values); |t| <= 0.1716, so 13 terms reach double precision */
    static const double inv_odd[13] = {1.0,      1.0 / 3,  1.0 / 5,  1.0 / 7,  1.0 / 9,  1.0 / 11, 1.0 / 13,
                                       1.0 / 15, 1.0 / 17, 1.0 / 19, 1.0 / 21, 1.0 / 23, 1.0 / 25};
    double t = (m - 1) / (m + 1), t2 = t * t, sum = 0;
    for (int k = 12; k >= 0; k--) sum = sum * t2 + inv_odd[k];
    sum *= t;
    return e * LN2_HI + (2 * sum + e * LN2_LO);
}

double fz_exp(double x)
{
    if (isnan(x)) return x;
    if (x > 709.79) return INFINITY;
    if (x < -745.2) return 0;
    double k = rint(x / (LN2_HI + LN2_LO));
    double r = (x - k * LN2_HI) - k * LN2_LO, term = 1, sum = 1;
    for (int i = 1; i <= 18; i++) {
        term *= r / i;
        sum += term;
    }
    return ldexp(sum, (int)k);
}
