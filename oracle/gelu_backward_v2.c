/* GeluBackwardV2 oracle (ops.md §4):  gradInput = gradOutput · g(x)
 *
 *   none:  g(x) = Φ(x) + x·φ(x),                 g'(x) = φ(x)·(2 − x²)
 *   tanh:  u = k·(x + c·x³), k = √(2/π), c = 0.044715, u' = k·(1 + 3c·x²), u'' = 6kc·x
 *          g(x) = ½(1 + tanh u) + ½·x·sech²u·u'  =  σ(2u) + 2·x·u'·E/(1+E)²,   E = e^{−2|u|}
 *          g'(x) = sech²u·(u' − x·tanh(u)·u'² + ½·x·u'')
 *   m = |gradOutput|·(|g(x)| + |x·g'(x)|)
 *
 * Evaluation.  No formula that cancels: Φ(x) is Q(−x) for x < 0 (gsl_sf_erf_Q_e) and 1 − Q(x)
 * otherwise; φ from gsl_sf_exp_e(−x²/2) (x² is exact for the f16/bf16/f32 inputs); the tanh form
 * is written with E = e^{−2|u|} ≤ 1 so 1 ± tanh never cancels.  Errors of every GSL result (.err)
 * and of each rounding are carried into err (first-order, with a factor-2 margin).
 * Far tails (φ or E below double's range): x > X+ gives g = 1 − (something < 2^−900), so r = dy;
 * x < X− gives g = −(|x| − M(|x|))·φ(x) ("none", M the Mills ratio Q/φ from its asymptotic series)
 * or g = (1 + 2·x·u')·E ("tanh"), evaluated as dy·coef·e^{arg} with gsl_sf_exp_mult_e so that an
 * underflowing factor never turns gradOutput = ±Inf into Inf·0 (numerics.md §5a): the sign is
 * known analytically (g < 0 below the root ≈ −0.75179 / −0.75246).
 * Limits: x = +Inf -> dy·1; x = −Inf -> dy·0 (NaN for dy = ±Inf); NaN x or dy -> NaN.
 * Near the roots the two terms of g cancel and err grows to a visible share of an f32 ULP: such
 * elements are recomputed in MPFR (gelu_mpfr, refine.c). */
#include <float.h>
#include <math.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_sf_erf.h>
#include <gsl/gsl_sf_exp.h>

#include "internal.h"

#define INV_SQRT_2PI 0.398942280401432677939946059934 /* 1/√(2π), rounded: relative u */
#define K_TANH 0.797884560802865355879892119869       /* √(2/π), rounded: relative u */
#define C_TANH 0.044715

typedef struct {
    double r, m, err;
    int status;
} gelu_val;

/* |dy|·coef·e^{arg} with the sign given, exactly handling dy = ±Inf (never Inf·0) and underflow. */
static gelu_val tail_product(double dy, double coef, double mcoef, double arg, int neg, double rel_err)
{
    gelu_val v = {0, 0, 0, ORC_OK};
    double ady = fabs(dy);
    int sneg = (signbit(dy) != 0) ^ neg;
    if (isinf(dy)) {
        v.r = sneg ? -INFINITY : INFINITY;
        return v;
    }
    double val, verr, mval, merr;
    int st = orc_exp_mult(arg, ady * coef, &val, &verr);
    if (st == ORC_OK) st = orc_exp_mult(arg, ady * mcoef, &mval, &merr);
    if (st != ORC_OK) {
        v.status = st;
        return v;
    }
    v.r = sneg ? -val : val;
    v.err = 2.0 * (verr + rel_err * val) + ORC_TINY;
    v.m = mval;
    return v;
}

/* Mills ratio M(t) = Q(t)/φ(t) for t ≥ 37: asymptotic series 1/t − 1/t³ + 3/t⁵ − …, truncated
 * after the t^−11 term (remainder < 10395/t^13, relative 2e−15 of M, i.e. < 1e−18 of |x| − M). */
static double mills_large(double t)
{
    double it2 = 1.0 / (t * t), s = 1.0, term = 1.0;
    for (int k = 1; k <= 5; k++) {
        term *= -(2.0 * k - 1.0) * it2;
        s += term;
    }
    return s / t;
}

static gelu_val gelu_none(double x, double dy)
{
    gelu_val v = {0, 0, 0, ORC_OK};
    if (x > 37.0) { /* 1 − g = Q − xφ, |1 − g| < 2^−975 */
        v.r = dy;
        v.m = fabs(dy);
        v.err = fabs(dy) * 0x1p-970;
        return v;
    }
    if (x < -37.0) { /* g = −(|x| − M)·φ < 0;  x·g' = x·φ·(2 − x²) */
        double t = -x, M = mills_large(t);
        double coef = (t - M) * INV_SQRT_2PI;
        double mcoef = coef + t * fabs(2.0 - x * x) * INV_SQRT_2PI;
        return tail_product(dy, coef, mcoef, -0.5 * x * x, 1, 8.0 * ORC_U);
    }
    gsl_sf_result ex, q;
    int st = gsl_sf_exp_e(-0.5 * x * x, &ex);
    if (st != GSL_SUCCESS) { v.status = orc_gsl_status(st); return v; }
    st = gsl_sf_erf_Q_e(fabs(x), &q);
    if (st != GSL_SUCCESS) { v.status = orc_gsl_status(st); return v; }
    double phi = ex.val * INV_SQRT_2PI;
    double ephi = ex.err * INV_SQRT_2PI + 2.0 * ORC_U * phi;
    double Phi = x < 0 ? q.val : 1.0 - q.val;
    double ePhi = q.err + ORC_U * Phi;
    double t = x * phi, et = fabs(x) * ephi + ORC_U * fabs(t);
    double g = Phi + t, eg = ePhi + et + ORC_U * fabs(g);
    double gp = phi * (2.0 - x * x);
    v.r = dy * g;
    v.err = 2.0 * (fabs(dy) * eg + ORC_U * fabs(v.r)) + ORC_TINY;
    v.m = fabs(dy) * (fabs(g) + fabs(x * gp));
    return v;
}

static gelu_val gelu_tanh(double x, double dy)
{
    gelu_val v = {0, 0, 0, ORC_OK};
    double x2 = x * x;
    double u = K_TANH * (x + C_TANH * x2 * x);   /* no cancellation: x and c·x³ share the sign */
    double eu = 6.0 * ORC_U * fabs(u);          /* |computed u − exact u| */
    double up = K_TANH * (1.0 + 3.0 * C_TANH * x2), upp = 6.0 * K_TANH * C_TANH * x;
    double au = fabs(u);
    if (2.0 * au > 700.0) {
        if (u > 0) { /* 1 − g = E·(1 − 2x·u') + O(E²) < 2^−900 */
            v.r = dy;
            v.m = fabs(dy);
            v.err = fabs(dy) * 0x1p-900;
            return v;
        }
        /* g = E/(1+E) + 2x·u'·E/(1+E)² = (1 + 2x·u')·E·(1 + O(E)), negative;
         * x·g' = 4E·x·(u' + x·u'² + ½x·u'')·(1 + O(E)) (tanh u = −1 + O(E)) */
        double coef = -(1.0 + 2.0 * x * up);
        double br = fabs(x) * fabs(up + x * up * up + 0.5 * x * upp);
        double mcoef = coef + 4.0 * br;
        return tail_product(dy, coef, mcoef, -2.0 * au, 1, 2.0 * 2.0 * eu + 8.0 * ORC_U);
    }
    gsl_sf_result ex;
    int st = gsl_sf_exp_e(-2.0 * au, &ex);
    if (st != GSL_SUCCESS) { v.status = orc_gsl_status(st); return v; }
    double E = ex.val, eE = ex.err + 2.0 * eu * E; /* d/du e^{−2|u|} = ∓2E */
    double opE = 1.0 + E;
    double sig = u >= 0 ? 1.0 / opE : E / opE;     /* σ(2u) */
    double esig = eE + 2.0 * ORC_U * sig;
    double S = E / (opE * opE);                    /* sech²u / 4 */
    double eS = eE + 3.0 * ORC_U * S;
    double eup = 4.0 * ORC_U * up;
    double T = 2.0 * x * up * S;
    double eT = 2.0 * fabs(x) * (up * eS + S * eup) + 2.0 * ORC_U * fabs(T);
    double g = sig + T, eg = esig + eT + ORC_U * fabs(g);
    double th = (u >= 0 ? 1.0 : -1.0) * (1.0 - E) / opE;
    double gp = 4.0 * S * (up - x * th * up * up + 0.5 * x * upp);
    v.r = dy * g;
    v.err = 2.0 * (fabs(dy) * eg + ORC_U * fabs(v.r)) + ORC_TINY;
    v.m = fabs(dy) * (fabs(g) + fabs(x * gp));
    return v;
}

/* The refinement (refine.c): g in MPFR at P bits, δ = 2^−P, every step rounded to nearest, and
 * its bound E from first-order error propagation, doubled for the second-order terms.
 *   none:  t = −x/√2 (rel 3δ); Φ = erfc(t)/2, whose relative error is δ plus |erfc'(t)/erfc(t)|·
 *          |Δt| ≤ 2|t|(|t| + 1)·3δ (erfc(t) ≥ e^{−t²}/(√π(t + 1)) for t ≥ 0; ≤ (2/√π)|t|·3δ for
 *          t < 0): rel_Φ ≤ (6t² + 6|t| + 2)δ; φ = e^{−x²/2}/√(2π) (x² exact; rel 4δ); xφ (rel 5δ);
 *          g = Φ + xφ (the terms cancel at the root: the bound is on the terms, not on g).
 *   tanh:  u = k(x + c·x³), k = √(2/π) (rel 3δ), c = 0.044715 exactly (rel δ), x³ exact: rel_u ≤ 7δ;
 *          u' = k(1 + 3c·x²) (rel 7δ); E = e^{−2|u|} (rel_E ≤ (14|u| + 1)δ); σ(2u) = 1/(1+E) or
 *          E/(1+E) (rel 2·rel_E + 3δ); T = 2x·u'·E/(1+E)² (rel 3·rel_E + 13δ); g = σ + T.
 *   R = dy·g: E = |dy|·E_g + |R|·δ.
 * |x| beyond 10^5 is left to the double path (its tails are not cancelling, and e^{−x²/2} or
 * e^{−2|u|} would leave even MPFR's exponent range). */
typedef struct {
    double x, dy;
    int tanh_mode;
} gelu_ctx;

static int gelu_mpfr(const void *ctx, mpfr_prec_t P, mpfr_ptr R, mpfr_ptr E)
{
    const gelu_ctx *c = ctx;
    if (!(fabs(c->x) <= 1e5) || !isfinite(c->dy)) return ORC_EINVAL;
    mpfr_t a, b, g, t2, k;
    mpfr_inits2(P, a, b, g, k, (mpfr_ptr)0);
    mpfr_init2(t2, P < 192 ? 192 : P); /* x² and x³ exact for any double x */
    mpfr_set_zero(E, 1);
    double ax = fabs(c->x);
    if (!c->tanh_mode) {
        mpfr_sqrt_ui(k, 2, MPFR_RNDN);
        mpfr_d_div(a, -c->x, k, MPFR_RNDN);      /* t */
        double t = ax / 1.4142135623730951 * (1 + 1e-15);
        mpfr_erfc(a, a, MPFR_RNDN);
        mpfr_div_2ui(a, a, 1, MPFR_RNDN);        /* Φ, exact halving */
        orc_err_add(E, a, 6.0 * t * t + 6.0 * t + 2.0, P);
        mpfr_set_d(t2, c->x, MPFR_RNDN);
        mpfr_sqr(t2, t2, MPFR_RNDN);             /* x², exact */
        mpfr_div_2ui(t2, t2, 1, MPFR_RNDN);
        mpfr_neg(t2, t2, MPFR_RNDN);
        mpfr_exp(b, t2, MPFR_RNDN);
        mpfr_const_pi(k, MPFR_RNDN);
        mpfr_mul_2ui(k, k, 1, MPFR_RNDN);
        mpfr_sqrt(k, k, MPFR_RNDN);
        mpfr_div(b, b, k, MPFR_RNDN);            /* φ */
        mpfr_mul_d(b, b, c->x, MPFR_RNDN);       /* xφ */
        orc_err_add(E, b, 5.0, P);
        mpfr_add(g, a, b, MPFR_RNDN);
    } else {
        mpfr_t cc, w, up;
        mpfr_inits2(P, cc, up, (mpfr_ptr)0);
        mpfr_init2(w, P < 192 ? 192 : P);
        mpfr_const_pi(k, MPFR_RNDN);
        mpfr_ui_div(k, 2, k, MPFR_RNDN);
        mpfr_sqrt(k, k, MPFR_RNDN);              /* √(2/π) */
        mpfr_set_str(cc, "0.044715", 10, MPFR_RNDN);
        mpfr_set_d(w, c->x, MPFR_RNDN);
        mpfr_sqr(t2, w, MPFR_RNDN);              /* x², exact */
        mpfr_mul(w, t2, w, MPFR_RNDN);           /* x³, exact */
        mpfr_mul(w, w, cc, MPFR_RNDN);
        mpfr_add_d(w, w, c->x, MPFR_RNDN);
        mpfr_mul(w, w, k, MPFR_RNDN);            /* u */
        mpfr_mul_ui(up, cc, 3, MPFR_RNDN);
        mpfr_mul(up, up, t2, MPFR_RNDN);
        mpfr_add_ui(up, up, 1, MPFR_RNDN);
        mpfr_mul(up, up, k, MPFR_RNDN);          /* u' */
        double au = fabs(mpfr_get_d(w, MPFR_RNDA)), relE = 14.0 * au + 1.0;
        mpfr_abs(a, w, MPFR_RNDN);
        mpfr_mul_2ui(a, a, 1, MPFR_RNDN);
        mpfr_neg(a, a, MPFR_RNDN);
        mpfr_exp(a, a, MPFR_RNDN);               /* E */
        mpfr_add_ui(b, a, 1, MPFR_RNDN);         /* 1 + E */
        if (mpfr_sgn(w) >= 0) mpfr_ui_div(g, 1, b, MPFR_RNDN);
        else mpfr_div(g, a, b, MPFR_RNDN);       /* σ(2u) */
        orc_err_add(E, g, 2.0 * relE + 3.0, P);
        mpfr_sqr(b, b, MPFR_RNDN);
        mpfr_div(a, a, b, MPFR_RNDN);            /* E/(1+E)² */
        mpfr_mul(a, a, up, MPFR_RNDN);
        mpfr_mul_d(a, a, c->x, MPFR_RNDN);
        mpfr_mul_2ui(a, a, 1, MPFR_RNDN);        /* T */
        orc_err_add(E, a, 3.0 * relE + 13.0, P);
        mpfr_add(g, g, a, MPFR_RNDN);
        mpfr_clears(cc, w, up, (mpfr_ptr)0);
    }
    orc_err_add(E, g, 1.0, P);                   /* the sum's rounding */
    mpfr_mul_2ui(E, E, 1, MPFR_RNDU);            /* second order */
    mpfr_mul_d(E, E, fabs(c->dy), MPFR_RNDU);
    mpfr_mul_d(R, g, c->dy, MPFR_RNDN);
    orc_err_add(E, R, 1.0, P);
    mpfr_clears(a, b, g, t2, k, (mpfr_ptr)0);
    return ORC_OK;
}

int orc_gelu_backward_v2(const orc_tensor *gradOutput, const orc_tensor *self,
                         const char *approximate, cf_dtype out_dtype, orc_profile profile,
                         orc_out *out)
{
    orc_init();
    (void)profile; /* cann-kernel only loosens the f32 tolerance: same exact values */
    if (!gradOutput || !self || !approximate || !out || !out->r) return ORC_EINVAL;
    int tanh_mode;
    if (strcmp(approximate, "none") == 0) tanh_mode = 0;
    else if (strcmp(approximate, "tanh") == 0) tanh_mode = 1;
    else return ORC_EINVAL;

    int nd;
    int64_t shape[ORC_MAX_RANK];
    if (orc_broadcast_shape(gradOutput, self, &nd, shape) != ORC_OK) return ORC_EINVAL;
    const orc_tensor *ts[2] = {gradOutput, self};
    orc_iter it;
    if (orc_iter_init(&it, nd, shape, 2, ts) != ORC_OK) return ORC_EINVAL;
    int gs = orc_dtype_size(gradOutput->dtype), xs = orc_dtype_size(self->dtype);
    const unsigned char *gb = gradOutput->data, *xb = self->data;

    for (int64_t i = 0; i < it.count; i++, orc_iter_next(&it)) {
        double dy = orc_widen(gradOutput->dtype, gb + it.off[0] * gs);
        double x = orc_widen(self->dtype, xb + it.off[1] * xs);
        if (isnan(x) || isnan(dy)) {
            orc_put(out, i, NAN, 0, 0);
        } else if (isinf(x)) {
            /* limits: g(+Inf) = 1, g(−Inf) = 0 exactly (Inf·0 = NaN for dy = ±Inf, §5a) */
            double r = x > 0 ? dy : dy * 0.0;
            orc_put(out, i, r, fabs(r), 0);
        } else {
            gelu_val v = tanh_mode ? gelu_tanh(x, dy) : gelu_none(x, dy);
            if (v.status != ORC_OK) return v.status;
            orc_put(out, i, v.r, v.m, v.err);
            gelu_ctx c = {x, dy, tanh_mode};
            orc_refine_put(out, i, out_dtype, gelu_mpfr, &c);
        }
    }
    return ORC_OK;
}
