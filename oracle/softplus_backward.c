/* SoftplusBackward oracle (ops.md §5):
 *
 *   P = f64 when any tensor is f64, else f32 (the compute precision)
 *   beta, threshold: the scalars converted (one rounding) from their dtype to P, used exactly
 *   z = beta·self  (self: the stored value; an integer/bool self converted to P first, one
 *                   rounding to nearest — the value from the exact integer is accepted as alt)
 *   gradInput = z > threshold ? gradOutput : gradOutput·σ(z),   σ(z) = 1/(1 + e^{−z})
 *   m = |r|·(1 + |z|·(1 − σ(z))) in the σ branch, |r| otherwise
 *
 * Branch (numerics.md §5): z > threshold is decided exactly — in double when |fl(z) − threshold|
 * is clearly larger than fl(z)'s error, otherwise with MPFR (exact product at 128 bits).  A kernel
 * decides on fl_P(beta·fl_P(self)); where that differs from the exact decision, alt holds the
 * other branch's value.  At exact equality both agree (no alt): the σ branch.  Profile cann-kernel
 * (f64 computed in f32): for f64 cases the kernel decision uses beta, threshold, self and the
 * product rounded to f32; the exact values are those of the spec.
 * Special values: NaN z (beta = 0 with self = ±Inf, NaN inputs) fails the comparison -> NaN;
 * z = −Inf -> gradOutput·0 (NaN for ±Inf); for finite z, σ(z) > 0, so gradOutput = ±Inf gives ±Inf
 * however small σ is (§5a, evaluated as gradOutput·e^{z} with gsl_sf_exp_mult_e in the far tail).
 *
 * f64 outputs (gradInput f64) are scored against more than double (numerics.md §2): this file then
 * evaluates the σ branch with MPFR at 128 bits (the product beta·self, ≤ 53 + 64 bits, is exact)
 * and returns r (high part, rounded to nearest) and r_lo (the rounded remainder), with
 * err = |R − r − r_lo| + |R|·2^−122, R the 128-bit value (three correctly rounded MPFR steps:
 * ≤ 3·2^−128 relative; margin 2^4).  The f64 grid ends at 2^−1074: below 2^−1021, where f64 numbers
 * are 2^−1074 apart and that bound is below half of it, r + r_lo is provably the exact value
 * rounded to the grid and err = 0, so subnormal and underflowing results are scored (a bound
 * ≥ 2^−1074 exceeds ulp_f64(m)/64 there; issue 16).  Above 2^−1021 the bound is kept (issue 58:
 * r + r_lo could sit on a midpoint of the coarser grid).
 * Measured (test_oracle_mpfr_cert): |r + r_lo − exact| ≤ 2.8e−17 ulp_f64.
 * Cost ≈ 4 µs per element (128 bits; 160 bits took 7 µs).
 * Other outputs: double with GSL (gsl_sf_exp_e / gsl_sf_exp_mult_e); z = fl(beta·self) has
 * relative error ≤ 2u (ints beyond 2^53 included), which moves σ by σ(1−σ)·|Δz| — carried in err. */
#include <float.h>
#include <math.h>
#include <stdint.h> /* before mpfr.h: enables mpfr_set_sj */
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_sf_exp.h>
#include <mpfr.h>

#include "internal.h"

typedef struct {
    bool is_int; /* the exact integer value iv is meant (only for the alt of ops.md §5) */
    int64_t iv;  /* exact integer value of an integer/bool self */
    double v;    /* value as double: exact for floats; for integers converted to the compute
                  * precision (one rounding to nearest), the self of the spec's r */
} sp_self;

/* Integer self converted to the compute precision (ops.md §5), one rounding to nearest: int64 to
 * float/double conversions round in the current (default: nearest-even) mode. */
static double int_to(int64_t v, bool p64) { return p64 ? (double)v : (double)(float)v; }

/* Whether that conversion was inexact (then the exact integer gives the alt). */
static bool int_conversion_inexact(int64_t v, double c)
{
    if (c >= 0x1p63) return true; /* INT64_MAX rounded up: (int64_t)c would be undefined */
    return (int64_t)c != v;
}

/* Scalar converted to the compute precision (one rounding). */
static double scalar_to(orc_scalar s, bool p64)
{
    if (orc_dtype_is_int(s.dtype)) {
        unsigned char b[8];
        for (int i = 0; i < 8; i++) b[i] = (unsigned char)(s.bits >> (8 * i));
        int64_t v = orc_load_int(s.dtype, b);
        return p64 ? (double)v : (double)(float)v;
    }
    double d = orc_scalar_widen(s); /* exact */
    return p64 ? d : orc_round_f32(d);
}

/* Exact z > t with MPFR (product of a 53-bit and a ≤64-bit significand is exact at 128 bits). */
static bool greater_mpfr(double beta, const sp_self *x, double t)
{
    mpfr_t z, mt;
    mpfr_inits2(128, z, mt, (mpfr_ptr)0);
    if (x->is_int) mpfr_set_sj(z, x->iv, MPFR_RNDN);
    else mpfr_set_d(z, x->v, MPFR_RNDN);
    mpfr_mul_d(z, z, beta, MPFR_RNDN);
    mpfr_set_d(mt, t, MPFR_RNDN);
    bool g = mpfr_greater_p(z, mt) != 0;
    mpfr_clears(z, mt, (mpfr_ptr)0);
    return g;
}

/* The exact decision beta·self > t. */
static bool greater_exact(double beta, const sp_self *x, double t)
{
    double p = beta * x->v;
    if (isnan(p) || isnan(t)) return false;
    if (isinf(beta) || isinf(x->v)) return p > t; /* z is exactly ±Inf */
    if (isfinite(p) && isfinite(t)) {
        double slack = 4.0 * ORC_U * fabs(p) + 0x1p-1060;
        if (p - t > slack) return true;
        if (t - p > slack) return false;
    } else if (isfinite(p)) {
        return p > t; /* t = ±Inf, z finite */
    }
    return greater_mpfr(beta, x, t);
}

/* The decision of a kernel: fl_P(beta · fl_P(self)) > t.  x holds the stored self: an integer
 * is converted once from its exact value (never through a rounded double). */
static bool greater_rounded(double beta, const sp_self *x, double t, bool p64)
{
    if (p64) {
        double s = x->is_int ? (double)x->iv : x->v;
        return beta * s > t;
    }
    float s = x->is_int ? (float)x->iv : (float)orc_round_f32(x->v);
    float z = (float)beta * s;
    return (double)z > t;
}

typedef struct {
    double r, r_lo, m, err;
    int status;
} sp_val;

/* σ branch in double (outputs f16/bf16/f32; |dy| ≤ 2^128). */
static sp_val sigmoid_double(double dy, double z)
{
    sp_val v = {0, 0, 0, 0, ORC_OK};
    if (isnan(z) || isnan(dy)) { v.r = NAN; return v; }
    if (z == -INFINITY) { v.r = dy * 0.0; return v; }
    if (z == INFINITY) { v.r = dy; v.m = fabs(dy); return v; }
    double ez = 2.0 * ORC_U * fabs(z) + 0x1p-1070;  /* |fl(z) − z| */
    if (z > 700.0) {                               /* 1 − σ < e^{−700} */
        v.r = dy;
        v.m = fabs(dy);
        v.err = fabs(dy) * 0x1p-1000;
        return v;
    }
    if (z < -700.0) {                              /* σ = e^{z}·(1 − O(e^{z})) */
        if (isinf(dy)) { v.r = dy; return v; }
        double val, verr;
        int st = orc_exp_mult(z, fabs(dy), &val, &verr);
        if (st != ORC_OK) { v.status = st; return v; }
        v.r = copysign(val, dy);
        v.err = 2.0 * (verr + val * (ez + 4.0 * ORC_U)) + ORC_TINY;
        v.m = fabs(v.r) * (1.0 + fabs(z));
        return v;
    }
    gsl_sf_result ex;
    int st = gsl_sf_exp_e(-fabs(z), &ex);
    if (st != GSL_SUCCESS) { v.status = orc_gsl_status(st); return v; }
    double E = ex.val, opE = 1.0 + E;
    double sig = z >= 0 ? 1.0 / opE : E / opE;
    double one_minus = z >= 0 ? E / opE : 1.0 / opE; /* 1 − σ(z) = σ(−z) */
    /* dσ/dE is ≤ 1 in magnitude for both forms; dσ/dz = σ(1 − σ) */
    double esig = ex.err + sig * one_minus * ez + 3.0 * ORC_U * sig;
    v.r = dy * sig;
    v.err = 2.0 * (fabs(dy) * esig + ORC_U * fabs(v.r)) + ORC_TINY;
    v.m = fabs(v.r) * (1.0 + fabs(z) * one_minus);
    return v;
}

/* R = dy / (1 + e^{−z}) at R's precision (s: scratch of the same precision).  Returns whether
 * any step rounded (MPFR ternary values); e^{−z} outside MPFR's range is ±0 / Inf: σ = 1 / 0. */
static bool sig_eval(mpfr_ptr R, mpfr_ptr s, mpfr_srcptr z, double dy)
{
    mpfr_neg(s, z, MPFR_RNDN); /* exact: prec(s) ≥ prec(z) */
    bool inexact = mpfr_exp(s, s, MPFR_RNDN) != 0;
    inexact |= mpfr_add_ui(s, s, 1, MPFR_RNDN) != 0;
    inexact |= mpfr_d_div(R, dy, s, MPFR_RNDN) != 0;
    return inexact;
}

/* r and r_lo on the double grid, subnormals included (MPFR's exponent range is far wider than
 * double's, so nothing underflows before this rounding), and their error bound.  R has P bits
 * with |R − exact| ≤ |R|·2^−rel when `inexact` (three correctly rounded steps: ≤ 3·2^−P relative,
 * rel = P − 6 leaves a margin 2^4), exactly R otherwise.  q = R − r − r_lo is exact in q's
 * P + 128 bits (r and r_lo cut R from the top).  Where |R| < 2^−1021 (the f64 grid there is
 * 2^−1074 apart) and |q| + |R|·2^−rel < 2^−1075, r + r_lo is provably the exact value rounded to
 * the f64 grid: err = 0 (oracle.h).  An exact
 * R (z = 0: dy/2) may sit on a midpoint, |q| = 2^−1075: r + r_lo is then its round-to-nearest-
 * even, which is the rounding to the grid, so err = 0 as well.  R = 0 from an overflowed e^{−z}
 * (|z| > 2^30·ln 2) is exact ±0 on that grid too.  Otherwise err is that sum, rounded up. */
static double sig_split(mpfr_srcptr R, bool inexact, int rel, mpfr_ptr q, mpfr_ptr t, double *r, double *r_lo)
{
    *r = mpfr_get_d(R, MPFR_RNDN);
    mpfr_sub_d(q, R, *r, MPFR_RNDN);
    *r_lo = mpfr_get_d(q, MPFR_RNDN);
    mpfr_sub_d(q, q, *r_lo, MPFR_RNDN);
    mpfr_abs(q, q, MPFR_RNDN);
    if (inexact) {
        mpfr_mul_2si(t, R, -rel, MPFR_RNDU);
        mpfr_abs(t, t, MPFR_RNDU);
        mpfr_add(q, q, t, MPFR_RNDU);
    }
    int c = mpfr_cmp_ui_2exp(q, 1, -1075);
    /* the grid is 2^−1074 apart only below 2^−1021 (ulp_f64 of the first normal binade is
     * 2^−1074 too); above, f64 numbers lie 2^−1073 or more apart and r + r_lo, on the finer
     * 2^−1074 grid, can sit on their midpoint while R does not (issue 58): the bound stays */
    bool grid = mpfr_zero_p(R) || mpfr_get_exp(R) <= -1021; /* |R| < 2^−1021 */
    return grid && (c < 0 || (c == 0 && !inexact)) ? 0.0 : mpfr_get_d(q, MPFR_RNDU);
}

/* ulp of an f64 value as numerics.md §3 defines it (emin −1022, p 53). */
static double ulp64(double v)
{
    if (v == 0 || !isfinite(v)) return 0x1p-1074;
    int e = ilogb(v);
    return ldexp(1.0, (e < -1022 ? -1022 : e) - 52);
}

/* σ branch with MPFR (f64 outputs): z exact, σ and the product at 128 bits; w[3] is 256 bits. */
static sp_val sigmoid_mpfr(double dy, double beta, const sp_self *x, mpfr_t *w)
{
    sp_val v = {0, 0, 0, 0, ORC_OK};
    mpfr_ptr z = w[0], s = w[1], r = w[2];
    if (x->is_int) mpfr_set_sj(z, x->iv, MPFR_RNDN);
    else mpfr_set_d(z, x->v, MPFR_RNDN);
    mpfr_mul_d(z, z, beta, MPFR_RNDN); /* exact: ≤ 117 significant bits */
    if (mpfr_nan_p(z) || isnan(dy)) { v.r = NAN; return v; }
    if (mpfr_inf_p(z)) {
        v.r = mpfr_sgn(z) < 0 ? dy * 0.0 : dy;
        v.m = fabs(v.r);
        return v;
    }
    if (isinf(dy)) { v.r = dy; return v; } /* σ(z) > 0 for finite z */
    double zd = mpfr_get_d(z, MPFR_RNDN);
    bool inexact = sig_eval(r, s, z, dy);
    v.err = sig_split(r, inexact, 122, w[3], s, &v.r, &v.r_lo);
    if (v.err > ulp64(v.r) / 64) {
        /* Ziv: the rounding to the grid is undecided at 128 bits (R within 2^−122·|R| of a
         * midpoint: z ≠ 0 so tiny that dy·σ(z) ≈ dy/2 with subnormal dy).  A non-zero z is at
         * least 2^−2148 in magnitude (a product of two doubles), so 2400 bits decide it. */
        mpfr_t R2, s2, q2;
        mpfr_inits2(2400, R2, s2, (mpfr_ptr)0);
        mpfr_init2(q2, 2600);
        bool in2 = sig_eval(R2, s2, z, dy);
        v.err = sig_split(R2, in2, 2394, q2, s2, &v.r, &v.r_lo);
        mpfr_clears(R2, s2, q2, (mpfr_ptr)0);
    }
    /* 1 − σ(z) = σ(−z) = 1/(1 + e^{z}), in double (only m needs it).  |z| beyond DBL_MAX (zd
     * infinite): z > 0 gives |z|·σ(−z) = 0 to any precision; z < 0 gives r = 0 (σ < e^{−DBL_MAX}),
     * so m = |r| either way — never Inf·0 = NaN. */
    double one_minus = zd > 700 ? exp(-zd) : (zd < -700 ? 1.0 : 1.0 / (1.0 + exp(zd)));
    double zs = isinf(zd) ? 0.0 : fabs(zd) * one_minus;
    v.m = fabs(v.r) * (1.0 + zs);
    return v;
}

/* The refinement (refine.c) of the σ branch for 16/32-bit outputs: z = beta·self exact (128
 * bits), R = dy/(1 + e^{−z}) at P (three roundings, sig_eval): E = 2·4·2^−P·|R|.  An e^{−z}
 * beyond even MPFR's widest range is left to the double path. */
typedef struct {
    double dy, beta;
    const sp_self *x;
} sp_ctx;

static int sp_mpfr(const void *ctx, mpfr_prec_t P, mpfr_ptr R, mpfr_ptr E)
{
    const sp_ctx *c = ctx;
    mpfr_t z, s;
    mpfr_init2(z, 128);
    mpfr_init2(s, P);
    if (c->x->is_int) mpfr_set_sj(z, c->x->iv, MPFR_RNDN);
    else mpfr_set_d(z, c->x->v, MPFR_RNDN);
    mpfr_mul_d(z, z, c->beta, MPFR_RNDN); /* exact */
    int st = ORC_EINVAL;
    if (mpfr_number_p(z) && isfinite(c->dy)) {
        bool inexact = sig_eval(R, s, z, c->dy);
        mpfr_set_zero(E, 1);
        if (inexact) orc_err_add(E, R, 8.0, P);
        st = mpfr_number_p(s) && !mpfr_zero_p(s) ? ORC_OK : ORC_EINVAL; /* 1 + e^{−z} in range */
    }
    mpfr_clears(z, s, (mpfr_ptr)0);
    return st;
}

int orc_softplus_backward(const orc_tensor *gradOutput, const orc_tensor *self, orc_scalar beta,
                          orc_scalar threshold, cf_dtype out_dtype, orc_profile profile,
                          orc_out *out)
{
    orc_init();
    /* cann-kernel computes f64 in f32: its branch decision (alt) is taken on f32 operands */
    bool cann = profile == ORC_PROFILE_CANN_KERNEL;
    if (!gradOutput || !self || !out || !out->r) return ORC_EINVAL;
    if (orc_dtype_size(beta.dtype) == 0 || orc_dtype_size(threshold.dtype) == 0) return ORC_EINVAL;
    const orc_tensor *ts[2] = {gradOutput, self};
    orc_iter it;
    if (orc_check_tensor(gradOutput) != ORC_OK || gradOutput->ndim != self->ndim) return ORC_EINVAL;
    for (int k = 0; k < self->ndim; k++)
        if (gradOutput->shape[k] != self->shape[k]) return ORC_EINVAL;
    if (orc_iter_init(&it, self->ndim, self->shape, 2, ts) != ORC_OK) return ORC_EINVAL;

    bool p64 = gradOutput->dtype == CF_F64 || self->dtype == CF_F64 || out_dtype == CF_F64;
    bool hp = out_dtype == CF_F64; /* high-precision (MPFR) values */
    double b = scalar_to(beta, p64), t = scalar_to(threshold, p64);
    bool self_int = orc_dtype_is_int(self->dtype);
    int gs = orc_dtype_size(gradOutput->dtype), xs = orc_dtype_size(self->dtype);
    const unsigned char *gb = gradOutput->data, *xb = self->data;

    mpfr_t w[4];
    if (hp) {
        for (int k = 0; k < 3; k++) mpfr_init2(w[k], 128);
        mpfr_init2(w[3], 256);
    }
    int status = ORC_OK;
    for (int64_t i = 0; i < it.count; i++, orc_iter_next(&it)) {
        double dy = orc_widen(gradOutput->dtype, gb + it.off[0] * gs);
        const unsigned char *xp = xb + it.off[1] * xs;
        /* xst: the stored self (exact integer for integer dtypes); x: the spec's self, integers
         * converted to the compute precision P (ops.md §5) — r is computed from x. */
        sp_self xst = {self_int, 0, 0};
        if (self_int) {
            xst.iv = orc_load_int(self->dtype, xp);
            xst.v = (double)xst.iv;
        } else {
            xst.v = orc_widen(self->dtype, xp);
        }
        sp_self x = {false, 0, self_int ? int_to(xst.iv, p64) : xst.v};
        bool above = greater_exact(b, &x, t);
        bool above_k = cann && p64 ? greater_rounded(orc_round_f32(b), &xst, orc_round_f32(t), false)
                                   : greater_rounded(b, &xst, t, p64);
        sp_val sv = {0, 0, 0, 0, ORC_OK};
        if (!above || !above_k) {
            sv = hp ? sigmoid_mpfr(dy, b, &x, w) : sigmoid_double(dy, b * x.v);
            if (sv.status != ORC_OK) { status = sv.status; break; }
        }
        double r, r_lo, m, err, alt;
        if (above) {
            r = dy, r_lo = 0, m = fabs(dy), err = 0;
            alt = above_k ? dy : sv.r;
        } else {
            r = sv.r, r_lo = sv.r_lo, m = sv.m, err = sv.err;
            alt = above_k ? dy : sv.r;
        }
        /* No branch ambiguity, but the integer was rounded by its conversion: the value from the
         * exact integer (its own exact decision) is the alt ops.md §5 accepts.  Where the branch is
         * ambiguous too, that alt (numerics.md §5) takes the one slot. */
        if (self_int && memcmp(&alt, &r, sizeof r) == 0 && int_conversion_inexact(xst.iv, x.v)) {
            if (greater_exact(b, &xst, t)) {
                alt = dy;
            } else {
                sp_val si = hp ? sigmoid_mpfr(dy, b, &xst, w) : sigmoid_double(dy, b * xst.v);
                if (si.status != ORC_OK) { status = si.status; break; }
                alt = si.r;
            }
        }
        orc_put_alt(out, i, r, m, err, alt);
        if (out->r_lo) out->r_lo[i] = isfinite(r) ? r_lo : 0.0;
        if (!above && !hp) {
            sp_ctx c = {dy, b, &x};
            orc_refine_put(out, i, out_dtype, sp_mpfr, &c);
        }
    }
    if (hp) {
        for (int k = 0; k < 4; k++) mpfr_clear(w[k]);
    }
    return status;
}
