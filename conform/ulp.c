#include "ulp.h"

#include <math.h>
#include <string.h>

#include "fpformat.h"

/* From the shared format table (common/fpformat.h): the largest finite is (2 − 2^(1−p))·2^emax,
 * the overflow threshold (2 − 2^−p)·2^emax (for f64 that is not a double: it rounds to +Inf,
 * which is what a threshold beyond every double means). */
bool cf_fmt_of(cf_dtype dt, cf_fmt *f)
{
    cf_fpformat t;
    if (!cf_fpformat_of(dt, &t)) return false;
    *f = (cf_fmt){t.p, t.emin, ldexp(2.0 - ldexp(1.0, 1 - t.p), t.emax), ldexp(2.0 - ldexp(1.0, -t.p), t.emax)};
    return true;
}

double cf_ulp(const cf_fmt *f, double v)
{
    double a = fabs(v);
    if (isnan(a)) return NAN;
    if (a > f->maxfin) a = f->maxfin;
    int e = a == 0 ? f->emin : ilogb(a);
    if (e < f->emin) e = f->emin;
    return ldexp(1.0, e - f->p + 1);
}

double cf_decode(cf_dtype dt, const void *p)
{
    uint16_t h;
    uint32_t u;
    float fl;
    double d;
    switch (dt) {
    case CF_F16: {
        memcpy(&h, p, 2);
        int s = h >> 15, e = (h >> 10) & 0x1f, m = h & 0x3ff;
        double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
        return s ? -v : v;
    }
    case CF_BF16:
        memcpy(&h, p, 2);
        u = (uint32_t)h << 16;
        memcpy(&fl, &u, 4);
        return fl;
    case CF_F32: memcpy(&fl, p, 4); return fl;
    case CF_F64: memcpy(&d, p, 8); return d;
    default: return NAN;
    }
}

static const char *const MM_NAMES[] = {
#define X(k) #k,
    CF_MISMATCH_KINDS(X)
#undef X
};

const char *cf_mismatch_name(cf_mismatch k) { return (unsigned)k < CF_MM_COUNT ? MM_NAMES[k] : "?"; }

/* Score against one candidate exact value v (r or alt). */
static cf_elem_score score_one(const cf_fmt *f, double got, double v, double v_lo, const cf_expect *x,
                               const cf_tol *tol)
{
    cf_elem_score s = {CF_EL_PASS, CF_MM_COUNT, false, false, 0, 0, 0};
    if (isnan(v)) {
        s.special = true;
        if (!isnan(got)) s.verdict = CF_EL_FAIL, s.kind = CF_MM_nan_expected, s.ulp = s.scaled = INFINITY;
        return s;
    }
    if (isinf(v) || fabs(v) >= f->ovf) {
        s.special = true;
        if (isinf(got) && signbit(got) == signbit(v)) return s;
        s.verdict = CF_EL_FAIL;
        s.kind = isnan(got) ? CF_MM_unexpected_nan : CF_MM_inf_expected;
        s.ulp = s.scaled = INFINITY;
        return s;
    }
    if (isnan(got) || isinf(got)) {
        s.special = true;
        s.verdict = CF_EL_FAIL;
        s.kind = isnan(got) ? CF_MM_unexpected_nan : CF_MM_unexpected_inf;
        s.ulp = s.scaled = INFINITY;
        return s;
    }
    if (v == 0 && v_lo == 0 && got == 0) {
        s.special = true;
        if (signbit(got) != signbit(v)) {
            s.signed_zero = true;
            if (tol->strict_zero) s.verdict = CF_EL_FAIL, s.kind = CF_MM_signed_zero;
        }
        return s;
    }
    double diff = fabs((got - v) - v_lo); /* got − v is exact when they are close (Sterbenz) */
    s.ulp = diff / cf_ulp(f, v);
    s.scaled = diff / cf_ulp(f, x->m);
    s.rel = diff / fmax(fabs(v), 0x1p-126);
    if (!(s.ulp <= tol->max_ulp || s.scaled <= tol->max_scaled_ulp))
        s.verdict = CF_EL_FAIL, s.kind = CF_MM_over_tolerance;
    return s;
}

/* The element the oracle's interval r ± err leaves undecided at the 1/64-ULP resolution of the
 * pass rule (numerics.md §2): decide what the interval does decide, else no verdict.  (The oracle
 * refines where its bound is a visible share of an ULP, so what reaches this is an overflow, an
 * f64 result in [2^−1021, 2^−1015) whose low part cannot go below 2^−1074, or a refinement that
 * could not run.)
 *   - the whole interval at or beyond T's overflow threshold: the exact result rounds to ±Inf,
 *     and the special-value rule scores it (an expected ±Inf that the target returns as 0 fails);
 *   - the whole interval below the threshold: a NaN or an infinity from the target is a
 *     mismatch (unexpected_nan / unexpected_inf), whatever the exact finite value is;
 *   - straddling the threshold: a NaN is wrong either way;
 *   - a finite got farther from every point of the interval than both tolerances allow (the
 *     smallest possible error over the largest possible ULP) fails over_tolerance, and one within
 *     a tolerance from every point of it (the largest error over the smallest ULP) passes, its
 *     statistics taken at r (off by at most err).
 * Anything else gets no verdict (uncertain).  The alt branch (§5), exact where it exists, is
 * tried before a failure is returned, as in the certain case. */
static cf_elem_score score_uncertain(const cf_fmt *f, double got, const cf_expect *x, const cf_tol *tol)
{
    cf_elem_score none = {CF_EL_UNCERTAIN, CF_MM_COUNT, false, false, 0, 0, 0};
    double mag = fabs(x->r + x->r_lo), lo = mag - x->err, hi = mag + x->err;
    cf_elem_score s;
    if (lo >= f->ovf) {
        s = score_one(f, got, copysign(INFINITY, x->r), 0.0, x, tol); /* pass or fail: decided */
    } else if ((hi < f->ovf && (isnan(got) || isinf(got))) || isnan(got)) {
        s = score_one(f, got, x->r, x->r_lo, x, tol); /* a failure whatever the exact value */
    } else if (hi < f->ovf) {
        double d = fabs((got - x->r) - x->r_lo), dmin = d - x->err, dmax = d + x->err;
        bool fails = dmin > 0 && !(dmin / cf_ulp(f, hi) <= tol->max_ulp) && !(dmin / cf_ulp(f, x->m) <= tol->max_scaled_ulp);
        bool passes = dmax / cf_ulp(f, lo > 0 ? lo : 0) <= tol->max_ulp || dmax / cf_ulp(f, x->m) <= tol->max_scaled_ulp;
        if (!fails && !passes) return none;
        s = score_one(f, got, x->r, x->r_lo, x, tol); /* fails (passes) at r too: d ≥ dmin (≤ dmax) */
    } else {
        return none;
    }
    if (s.verdict == CF_EL_FAIL && memcmp(&x->alt, &x->r, sizeof(double)) != 0) {
        cf_elem_score a = score_one(f, got, x->alt, 0.0, x, tol);
        if (a.verdict == CF_EL_PASS) return a;
    }
    return s;
}

cf_elem_score cf_score_element(const cf_fmt *f, double got, uint64_t got_bits, const cf_expect *x,
                               const cf_tol *tol)
{
    if (x->masked) {
        cf_elem_score s = {CF_EL_PASS, CF_MM_COUNT, true, false, 0, 0, 0};
        if (got_bits != 0) s.verdict = CF_EL_FAIL, s.kind = CF_MM_mask_not_zero, s.ulp = s.scaled = INFINITY;
        return s;
    }
    /* Oracle-uncertain: its own error exceeds ulp_T(m)/64 (finite results only); the rules its
     * interval decides still apply (score_uncertain) */
    if (x->err > 0 && isfinite(x->r) && x->err > cf_ulp(f, x->m) / 64) return score_uncertain(f, got, x, tol);
    cf_elem_score s = score_one(f, got, x->r, x->r_lo, x, tol);
    if (s.verdict == CF_EL_FAIL && memcmp(&x->alt, &x->r, sizeof(double)) != 0) {
        cf_elem_score a = score_one(f, got, x->alt, 0.0, x, tol);
        if (a.verdict == CF_EL_PASS) return a;
    }
    return s;
}
