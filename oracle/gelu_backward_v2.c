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
 * Limits: x = +Inf -> dy·1; x = −Inf -> dy·0 (NaN for dy = ±Inf); NaN x or dy -> NaN. */
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

int orc_gelu_backward_v2(const orc_tensor *gradOutput, const orc_tensor *self,
                         const char *approximate, cf_dtype out_dtype, orc_profile profile,
                         orc_out *out)
{
    orc_init();
    (void)out_dtype;
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
        }
    }
    return ORC_OK;
}
