/* ScaledMaskedSoftmaxBackward oracle (ops.md §1), per row (b, n, i):
 *
 *   s          = Σ_j g_j·y_j                      (all j, masked or not)
 *   out_j      = mask ? +0 : scale·(g_j·y_j − s·y_j)      scale rounded to f32 first
 *   m_j        = |scale|·(|g_j·y_j| + |y_j|·Σ_j |g_j·y_j|)   (0 at masked positions)
 *
 * Products of f16/bf16/f32 values are exact in double (≤ 48 significant bits, exponents within
 * range), so s is a sum of exact terms: compensated summation (internal.h) gives s with
 * |ŝ − s| ≤ e_s = u·|s| + γ_n²·Σ|g·y|.  The subtraction that cancels, g·y − s·y, is evaluated as
 * y·(g − ŝ): g − ŝ is one rounding away from g − s plus e_s, so
 *   err = (|scale·y|·(e_s + 2u·|g − ŝ|) + 2u·|r|)·(1 + 4u)  ≤  about u·m + 3u·|r|,
 * a fraction ~2^−29 of ulp_f32(m).
 * Non-finite rows (a NaN/Inf product, or scale32 not finite): the formula is evaluated literally
 * in IEEE double, scale·(g·y − s·y), with s the plain sum, so NaN/Inf propagate by IEEE rules —
 * except a row with finite products and scale32 = ±Inf: there the sign of y·(g − s) decides
 * (±Inf, NaN where it is exactly 0) and is taken from an exact MPFR sum, since g − ŝ in double
 * can round to 0 (NaN) or flip where the exact value is non-zero.
 * Masked positions are exactly +0 whatever the row holds.
 * Where g − ŝ cancels enough that err is a visible share of the output's ULP, the element is
 * recomputed from the exact row sum (smx_mpfr, refine.c). */
#include <math.h>

#include <mpfr.h>

#include "internal.h"

/* Bits that hold any sum of ≤ 2^20 products of two doubles exactly (their exponents lie in
 * [−2148, 2048]: 4197 bits plus the carries). */
#define SMX_EXACT_PREC 4400

/* Row with an infinite f32 scale and finite products: out_j = scale·y_j·(g_j − s) is ±Inf with
 * the sign of scale·y_j·(g_j − s), NaN where y_j·(g_j − s) is exactly 0.  Double cannot decide
 * that sign (g − ŝ rounds to 0 or flips when s cancels against g), so s is summed exactly in
 * MPFR and compared with each g exactly. */
static double inf_scale_value(double sc, double g, double yv, mpfr_srcptr S)
{
    int c = -mpfr_cmp_d(S, g); /* sign of g − s */
    if (yv == 0 || c == 0) return NAN;
    bool pos = (yv > 0) == (c > 0);
    return pos == (sc > 0) ? INFINITY : -INFINITY;
}

/* The refinement (refine.c) of an element of a finite row: R = scale·y·(g − S) with S the row's
 * exact sum (SMX_EXACT_PREC bits, summed once per row when an element first needs it): g − S,
 * ·y and ·scale each rounded to nearest at P, E = 2·3·2^−P·|R| (0 when no step rounded). */
typedef struct {
    double sc, g, y;
    mpfr_srcptr S;
} smx_ctx;

static int smx_mpfr(const void *ctx, mpfr_prec_t P, mpfr_ptr R, mpfr_ptr E)
{
    const smx_ctx *c = ctx;
    int inexact = mpfr_d_sub(R, c->g, c->S, MPFR_RNDN) != 0;
    inexact |= mpfr_mul_d(R, R, c->y, MPFR_RNDN) != 0;
    inexact |= mpfr_mul_d(R, R, c->sc, MPFR_RNDN) != 0;
    mpfr_set_zero(E, 1);
    if (inexact) orc_err_add(E, R, 6.0, P);
    return ORC_OK;
}

static int64_t off4(const orc_tensor *t, int64_t b, int64_t n, int64_t i, int64_t j)
{
    int64_t bb = t->shape[0] == 1 ? 0 : b, nn = t->shape[1] == 1 ? 0 : n;
    return t->offset + bb * t->strides[0] + nn * t->strides[1] + i * t->strides[2] + j * t->strides[3];
}

static double load(const orc_tensor *t, int64_t off)
{
    return orc_widen(t->dtype, (const unsigned char *)t->data + off * orc_dtype_size(t->dtype));
}

/* The exact row sum S = Σ g_j·y_j into S (initialised here, SMX_EXACT_PREC bits). */
static void exact_row_sum(mpfr_ptr S, const orc_tensor *gradOutput, const orc_tensor *y, int64_t b, int64_t n,
                          int64_t i, int64_t S2)
{
    mpfr_t P;
    mpfr_init2(S, SMX_EXACT_PREC);
    mpfr_init2(P, 128);
    mpfr_set_zero(S, 1);
    for (int64_t j = 0; j < S2; j++) {
        mpfr_set_d(P, load(gradOutput, off4(gradOutput, b, n, i, j)), MPFR_RNDN);
        mpfr_mul_d(P, P, load(y, off4(y, b, n, i, j)), MPFR_RNDN); /* exact: 106 bits */
        mpfr_add(S, S, P, MPFR_RNDN);                                  /* exact */
    }
    mpfr_clear(P);
}

int orc_scaled_masked_softmax_backward(const orc_tensor *gradOutput, const orc_tensor *y,
                                       const orc_tensor *mask, double scale, cf_dtype out_dtype,
                                       orc_profile profile, orc_out *out)
{
    orc_init();
    (void)profile; /* cann-kernel changes only the accepted out dtype, not the values */
    if (!gradOutput || !y || !mask || !out || !out->r) return ORC_EINVAL;
    if (orc_check_tensor(gradOutput) || orc_check_tensor(y) || orc_check_tensor(mask)) return ORC_EINVAL;
    if (gradOutput->ndim != 4 || y->ndim != 4 || mask->ndim != 4) return ORC_EINVAL;
    const int64_t *sh = gradOutput->shape;
    for (int k = 0; k < 4; k++) {
        if (y->shape[k] != sh[k]) return ORC_EINVAL;
        if (mask->shape[k] != sh[k] && !(k < 2 && mask->shape[k] == 1)) return ORC_EINVAL;
    }
    double sc = orc_round_f32(scale);
    int64_t B = sh[0], N = sh[1], S1 = sh[2], S2 = sh[3];
    int64_t o = 0;
    for (int64_t b = 0; b < B; b++)
        for (int64_t n = 0; n < N; n++)
            for (int64_t i = 0; i < S1; i++, o += S2) {
                orc_sum acc;
                orc_sum_init(&acc);
                for (int64_t j = 0; j < S2; j++)
                    orc_sum_add(&acc, load(gradOutput, off4(gradOutput, b, n, i, j)) *
                                          load(y, off4(y, b, n, i, j)));
                double es, A;
                double s = orc_sum_result(&acc, &es, &A);
                bool finite_row = isfinite(s) && isfinite(sc) && !acc.nonfinite;
                bool exact_sign = !acc.nonfinite && isinf(sc) && S2 > 0;
                mpfr_t S;
                bool have_S = exact_sign;
                if (exact_sign) exact_row_sum(S, gradOutput, y, b, n, i, S2);
                for (int64_t j = 0; j < S2; j++) {
                    int64_t e = o + j;
                    if (load(mask, off4(mask, b, n, i, j)) != 0.0) {
                        orc_put(out, e, 0.0, 0.0, 0.0);
                        continue;
                    }
                    double g = load(gradOutput, off4(gradOutput, b, n, i, j));
                    double yv = load(y, off4(y, b, n, i, j));
                    if (exact_sign) {
                        orc_put(out, e, inf_scale_value(sc, g, yv, S), 0.0, 0.0);
                        continue;
                    }
                    if (!finite_row) {
                        orc_put(out, e, sc * (g * yv - s * yv), 0.0, 0.0);
                        continue;
                    }
                    double d = g - s;
                    double r = sc * (yv * d);
                    double err = (fabs(sc * yv) * (es + 2.0 * ORC_U * fabs(d)) + 2.0 * ORC_U * fabs(r)) *
                                     (1.0 + 4.0 * ORC_U) + ORC_TINY;
                    double m = fabs(sc) * (fabs(g * yv) + fabs(yv) * A);
                    orc_put(out, e, r, m, err);
                    if (orc_refine_wanted(out_dtype, r, err)) {
                        if (!have_S) exact_row_sum(S, gradOutput, y, b, n, i, S2), have_S = true;
                        smx_ctx c = {sc, g, yv, S};
                        orc_refine_put(out, e, out_dtype, smx_mpfr, &c);
                    }
                }
                if (have_S) mpfr_clear(S);
            }
    return ORC_OK;
}
