/* LogitGrad oracle (ops.md §2).
 *
 *   eps32 = eps rounded to f32;  lo = eps32 >= 0 ? eps32 : 0;  hi = 1 − lo (exact, not rounded)
 *   any of x, dy, eps32 NaN   -> NaN
 *   lo <= x <= hi             -> dy / (x·(1 − x))        (IEEE signs at x = ±0, 1; NaN for dy = 0)
 *   otherwise                 -> eps32 >= 0 ? 0 : NaN
 *
 * Range test, exact: x <= 1 − lo is decided without forming 1 − lo (which double cannot hold
 * for tiny lo): for x <= 0.5 it holds since lo <= 0.5; for 0.5 < x <= 2, 1 − x is exact (Sterbenz)
 * and x <= 1 − lo  <=>  1 − x >= lo; for x > 2 it fails.
 * Branch rule (numerics.md §5): a kernel compares against hi rounded to f32; where that decision
 * differs from the exact one, alt holds the other branch's value.
 * Value: x, dy are f16/bf16/f32 values, so in double x·(1−x) and the quotient lose at most three
 * roundings, never under/overflow (|r| in [2^-151, 2^278]): err = 4u·|r|.  m = |r| (ops.md).
 * Refined with MPFR (refine.c) where r ± err holds a rounding boundary of the output dtype.
 * Profile cann-kernel: x NaN with eps32 >= 0 -> 0; eps NaN behaves like eps < 0. */
#include <math.h>

#include "internal.h"

/* lo <= x <= 1 − lo exactly; lo in [0, 0.5] (or −0), x finite. */
static int in_range_exact(double x, double lo)
{
    if (!(x >= lo)) return 0;
    if (x <= 0.5) return 1;
    if (x > 2.0) return 0;
    return 1.0 - x >= lo;
}

static double inside_value(double x, double dy) { return dy / (x * (1.0 - x)); }

/* dy / (x·(1 − x)) in MPFR (refine.c): x·(1 − x) exact at 256 bits (x and dy are f16/bf16/f32:
 * 1 − x holds ≤ 151 bits, the product ≤ 175), then one division rounded at P: E = 2^−P·|R|. */
typedef struct {
    double x, dy;
} logit_ctx;

static int logit_mpfr(const void *ctx, mpfr_prec_t P, mpfr_ptr R, mpfr_ptr E)
{
    const logit_ctx *c = ctx;
    mpfr_t q, w;
    mpfr_inits2(256, q, w, (mpfr_ptr)0);
    mpfr_set_d(q, c->x, MPFR_RNDN);
    mpfr_ui_sub(w, 1, q, MPFR_RNDN);
    mpfr_mul(q, q, w, MPFR_RNDN);
    if (mpfr_d_div(R, c->dy, q, MPFR_RNDN) != 0) {
        mpfr_abs(E, R, MPFR_RNDU);
        mpfr_mul_2si(E, E, 1 - (long)P, MPFR_RNDU);
    } else {
        mpfr_set_zero(E, 1);
    }
    mpfr_clears(q, w, (mpfr_ptr)0);
    return ORC_OK;
}

int orc_logit_grad(const orc_tensor *x, const orc_tensor *dy, double eps, cf_dtype out_dtype,
                   orc_profile profile, orc_out *out)
{
    orc_init();
    if (!x || !dy || !out || !out->r) return ORC_EINVAL;
    const orc_tensor *ts[2] = {x, dy};
    orc_iter it;
    if (orc_iter_init(&it, x->ndim, x->shape, 2, ts) != ORC_OK) return ORC_EINVAL;

    double e = orc_round_f32(eps);
    bool eps_nan = isnan(e);
    bool cann = profile == ORC_PROFILE_CANN_KERNEL;
    if (eps_nan && cann) e = -1.0; /* cann-kernel: a NaN eps behaves like eps < 0 */
    double lo = e >= 0 ? e : 0.0;
    bool empty = lo > 0.5;          /* lo > hi: no x is inside */
    double hi32 = (double)(1.0f - (float)lo); /* what a kernel computing hi in f32 uses */
    double outside = e >= 0 ? 0.0 : NAN;

    int xs = orc_dtype_size(x->dtype), ds = orc_dtype_size(dy->dtype);
    const unsigned char *xb = x->data, *db = dy->data;
    for (int64_t i = 0; i < it.count; i++, orc_iter_next(&it)) {
        double xv = orc_widen(x->dtype, xb + it.off[0] * xs);
        double dv = orc_widen(dy->dtype, db + it.off[1] * ds);
        if (isnan(xv) && cann && e >= 0) {
            orc_put(out, i, 0.0, 0.0, 0.0);
            continue;
        }
        if (isnan(xv) || isnan(dv) || (eps_nan && !cann)) {
            orc_put(out, i, NAN, 0.0, 0.0);
            continue;
        }
        bool in = !empty && isfinite(xv) && in_range_exact(xv, lo);
        bool in32 = isfinite(xv) && xv >= lo && xv <= hi32;
        double r = in ? inside_value(xv, dv) : outside;
        double err = in ? 4.0 * ORC_U * fabs(r) : 0.0;
        if (in == in32) {
            orc_put(out, i, r, fabs(r), err);
        } else {
            double alt = in32 ? inside_value(xv, dv) : outside;
            orc_put_alt(out, i, r, fabs(r), err, alt);
        }
        if (in) {
            logit_ctx c = {xv, dv};
            orc_refine_put(out, i, out_dtype, logit_mpfr, &c);
        }
    }
    return ORC_OK;
}
