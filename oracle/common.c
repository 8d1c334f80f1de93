/* Oracle-internal helpers: exact widening from the format definitions, broadcasting strided walks,
 * once-only GSL set-up, compensated summation with its error bound.  See internal.h. */
#include <mpfr.h>

#include "internal.h"

#include <math.h>
#include <string.h>
#include <threads.h>

#include <float.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_sf_exp.h>

static once_flag orc_once = ONCE_FLAG_INIT;

static void orc_init_once(void)
{
    /* GSL's default handler aborts; the oracle turns every status into a value instead. */
    gsl_set_error_handler_off();
}

void orc_init(void) { call_once(&orc_once, orc_init_once); }

/* ---- widening, from the format definitions of numerics.md §1 ---------------------------------- */

static uint64_t load_le(const void *p, int n)
{
    const unsigned char *b = p;
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = (v << 8) | b[i];
    return v;
}

/* IEEE binary format with `ebits` exponent bits and `fbits` stored fraction bits:
 * value = (-1)^s · 2^(e − bias) · 1.f  (normal), (-1)^s · 2^(1 − bias) · 0.f (e = 0), Inf/NaN (e max). */
static double decode_ieee(uint64_t bits, int ebits, int fbits)
{
    int bias = (1 << (ebits - 1)) - 1;
    uint64_t f = bits & ((UINT64_C(1) << fbits) - 1);
    int e = (int)((bits >> fbits) & ((1u << ebits) - 1));
    int neg = (int)((bits >> (ebits + fbits)) & 1);
    double v;
    if (e == (1 << ebits) - 1)
        v = f ? NAN : INFINITY;
    else if (e == 0)
        v = ldexp((double)f, 1 - bias - fbits);
    else
        v = ldexp((double)(f | (UINT64_C(1) << fbits)), e - bias - fbits);
    return neg ? -v : v;
}

int orc_dtype_size(cf_dtype dt)
{
    switch (dt) {
    case CF_F16: case CF_BF16: case CF_I16: return 2;
    case CF_F32: case CF_I32: return 4;
    case CF_F64: case CF_I64: return 8;
    case CF_I8: case CF_U8: case CF_BOOL: return 1;
    default: return 0;
    }
}

bool orc_dtype_is_int(cf_dtype dt)
{
    return dt == CF_I8 || dt == CF_I16 || dt == CF_I32 || dt == CF_I64 || dt == CF_U8 || dt == CF_BOOL;
}

int64_t orc_load_int(cf_dtype dt, const void *p)
{
    uint64_t v = load_le(p, orc_dtype_size(dt));
    switch (dt) {
    case CF_I8: return (int8_t)(uint8_t)v;
    case CF_I16: return (int16_t)(uint16_t)v;
    case CF_I32: return (int32_t)(uint32_t)v;
    case CF_I64: return (int64_t)v;
    case CF_U8: return (int64_t)v;
    case CF_BOOL: return v != 0;
    default: return 0;
    }
}

static double widen_bits(cf_dtype dt, uint64_t v)
{
    switch (dt) {
    case CF_F16: return decode_ieee(v, 5, 10);
    case CF_BF16: return decode_ieee(v << 16, 8, 23); /* bf16 = top half of an f32 */
    case CF_F32: return decode_ieee(v, 8, 23);
    case CF_F64: { double d; memcpy(&d, &v, sizeof d); return d; }
    case CF_I8: return (double)(int8_t)(uint8_t)v;
    case CF_I16: return (double)(int16_t)(uint16_t)v;
    case CF_I32: return (double)(int32_t)(uint32_t)v;
    case CF_I64: return (double)(int64_t)v;
    case CF_U8: return (double)(uint8_t)v;
    case CF_BOOL: return v != 0 ? 1.0 : 0.0;
    default: return NAN;
    }
}

double orc_widen(cf_dtype dt, const void *p) { return widen_bits(dt, load_le(p, orc_dtype_size(dt))); }

double orc_scalar_widen(orc_scalar s)
{
    int n = orc_dtype_size(s.dtype);
    uint64_t v = n >= 8 ? s.bits : s.bits & ((UINT64_C(1) << (8 * n)) - 1);
    return widen_bits(s.dtype, v);
}

double orc_round_f32(double x)
{
    /* Out-of-range conversion is undefined in C11 outside Annex F: decide overflow here.  Values
     * with |x| ≥ FLT_MAX + ulp/2 = 2^128 − 2^103 round to ±Inf (the tie goes to the even Inf). */
    if (isfinite(x) && fabs(x) >= 0x1.ffffffp127) return copysign(INFINITY, x);
    return (double)(float)x;
}

/* ---- tensors and walks ------------------------------------------------------------------------ */

int orc_check_tensor(const orc_tensor *t)
{
    if (!t || orc_dtype_size(t->dtype) == 0 || t->ndim < 0 || t->ndim > ORC_MAX_RANK) return ORC_EINVAL;
    if (t->ndim > 0 && (!t->shape || !t->strides)) return ORC_EINVAL;
    if (t->offset < 0) return ORC_EINVAL;
    for (int k = 0; k < t->ndim; k++)
        if (t->shape[k] < 0 || t->strides[k] < 0) return ORC_EINVAL;
    if (orc_numel(t) > 0 && !t->data) return ORC_EINVAL;
    return ORC_OK;
}

int64_t orc_numel(const orc_tensor *t)
{
    int64_t n = 1;
    for (int k = 0; k < t->ndim; k++) n *= t->shape[k];
    return n;
}

double orc_at(const orc_tensor *t, const int64_t *idx)
{
    int64_t off = t->offset;
    for (int k = 0; k < t->ndim; k++) off += idx[k] * t->strides[k];
    return orc_widen(t->dtype, (const unsigned char *)t->data + off * orc_dtype_size(t->dtype));
}

int orc_iter_init(orc_iter *it, int ndim, const int64_t *shape, int ntens, const orc_tensor *const *t)
{
    memset(it, 0, sizeof *it);
    if (ndim < 0 || ndim > ORC_MAX_RANK || ntens < 0 || ntens > 4) return ORC_EINVAL;
    it->ndim = ndim;
    it->ntens = ntens;
    it->count = 1;
    for (int k = 0; k < ndim; k++) {
        if (shape[k] < 0) return ORC_EINVAL;
        it->shape[k] = shape[k];
        it->count *= shape[k];
    }
    for (int i = 0; i < ntens; i++) {
        if (orc_check_tensor(t[i]) != ORC_OK || t[i]->ndim > ndim) return ORC_EINVAL;
        int lead = ndim - t[i]->ndim;
        for (int k = 0; k < t[i]->ndim; k++) {
            int64_t d = t[i]->shape[k];
            if (d == shape[lead + k])
                it->strides[i][lead + k] = d == 1 ? 0 : t[i]->strides[k];
            else if (d == 1)
                it->strides[i][lead + k] = 0;
            else
                return ORC_EINVAL;
        }
        it->off[i] = t[i]->offset;
    }
    return ORC_OK;
}

int orc_broadcast_shape(const orc_tensor *a, const orc_tensor *b, int *ndim, int64_t *shape)
{
    if (orc_check_tensor(a) != ORC_OK || orc_check_tensor(b) != ORC_OK) return ORC_EINVAL;
    int nd = a->ndim > b->ndim ? a->ndim : b->ndim;
    for (int k = 0; k < nd; k++) {
        int ka = k - (nd - a->ndim), kb = k - (nd - b->ndim);
        int64_t da = ka >= 0 ? a->shape[ka] : 1, db = kb >= 0 ? b->shape[kb] : 1;
        if (da == db || db == 1)
            shape[k] = da;
        else if (da == 1)
            shape[k] = db;
        else
            return ORC_EINVAL;
    }
    *ndim = nd;
    return ORC_OK;
}

int orc_gsl_status(int gsl_status) { return gsl_status == GSL_SUCCESS ? ORC_OK : ORC_ENUMERIC; }

int orc_exp_mult(double x, double y, double *val, double *err)
{
    gsl_sf_result res;
    int st = gsl_sf_exp_mult_e(x, y, &res);
    if (st == GSL_EUNDRFLW || (st == GSL_SUCCESS && res.val == 0.0 && y != 0.0)) {
        *val = 0.0;
        *err = DBL_MIN;
        return ORC_OK;
    }
    if (st != GSL_SUCCESS) return ORC_ENUMERIC;
    double ly = y > 0 ? fabs(log(y)) : 0.0;
    double own = 4.0 * DBL_EPSILON * (fabs(x) + ly + 2.0) * fabs(res.val);
    *val = res.val;
    *err = fmax(fabs(res.err), own) + ORC_TINY;
    return ORC_OK;
}

void orc_iter_next(orc_iter *it)
{
    for (int k = it->ndim - 1; k >= 0; k--) {
        if (++it->idx[k] < it->shape[k]) {
            for (int i = 0; i < it->ntens; i++) it->off[i] += it->strides[i][k];
            return;
        }
        it->idx[k] = 0;
        for (int i = 0; i < it->ntens; i++) it->off[i] -= (it->shape[k] - 1) * it->strides[i][k];
    }
}

/* ---- compensated summation -------------------------------------------------------------------- */

void orc_sum_init(orc_sum *a) { memset(a, 0, sizeof *a); }

void orc_sum_add(orc_sum *a, double x)
{
    a->plain += x;
    a->n++;
    if (!isfinite(x)) a->nonfinite = true;
    if (a->nonfinite) return;
    /* Neumaier's branch form of FastTwoSum: q is the exact rounding error of s + x, so this
     * computes exactly the same (s, c) as Ogita–Rump–Oishi Sum2 with TwoSum. */
    double t = a->s + x;
    double q = fabs(a->s) >= fabs(x) ? (a->s - t) + x : (x - t) + a->s;
    a->s = t;
    a->c += q;
    a->abs += fabs(x);
}

double orc_sum_result(const orc_sum *a, double *err, double *abs_out)
{
    if (a->nonfinite || !isfinite(a->s + a->c)) {
        if (err) *err = INFINITY;
        if (abs_out) *abs_out = INFINITY;
        return a->nonfinite ? a->plain : a->s + a->c;
    }
    double res = a->s + a->c;
    double n = (double)a->n;
    double g = n * ORC_U / (1.0 - n * ORC_U);      /* γ_n ≥ γ_{n−1} */
    double A = a->abs * (1.0 + g);                  /* Σ|x| rounded: relative error ≤ γ_{n−1} */
    if (err) *err = (ORC_U * fabs(res) + g * g * A) * (1.0 + 4.0 * ORC_U) + ORC_TINY;
    if (abs_out) *abs_out = a->abs;
    return res;
}

/* ---- output ----------------------------------------------------------------------------------- */

void orc_put_alt(orc_out *out, int64_t i, double r, double m, double err, double alt)
{
    out->r[i] = r;
    if (out->r_lo) out->r_lo[i] = 0.0;
    /* A non-finite r is decided by the special-value rules: no magnitude, no error. */
    if (out->m) out->m[i] = isfinite(r) ? m : 0.0;
    if (out->err) out->err[i] = isfinite(r) ? err : 0.0;
    if (out->alt) out->alt[i] = alt;
}

void orc_put(orc_out *out, int64_t i, double r, double m, double err) { orc_put_alt(out, i, r, m, err, r); }

void orc_thread_release(void) { mpfr_free_cache(); }
