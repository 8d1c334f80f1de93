/* ULP error and the pass rule of spec numerics.md §3–§5, defined once for the whole suite.
 *
 *   ulp_T(v) = 2^(max(floor(log2|v|), emin) − p + 1),  ulp_T(0) = 2^(emin − p + 1),
 *              |v| above the largest finite: the ulp of the largest finite
 *   ulp_err(got, r)    = |got − r| / ulp_T(r)
 *   scaled_err(got, r) = |got − r| / ulp_T(m)
 *
 * Special values are compared before any arithmetic and give a mismatch kind, never a number. */
#ifndef ACLCONFORM_ULP_H
#define ACLCONFORM_ULP_H

#include <stdbool.h>
#include <stdint.h>

#include "dtype.h"

typedef struct {
    int p;          /* precision in bits, incl. the hidden bit */
    int emin;
    double maxfin;  /* largest finite */
    double ovf;     /* overflow threshold: largest finite + ulp/2 */
} cf_fmt;

/* Format of a floating dtype (f16, bf16, f32, f64); false for others. */
bool cf_fmt_of(cf_dtype dt, cf_fmt *f);
double cf_ulp(const cf_fmt *f, double v);

/* Decode the stored bits of a floating element to double (exact). */
double cf_decode(cf_dtype dt, const void *p);

/* Element mismatch kinds first (up to over_tolerance), then the target's conduct (guard zones,
 * thread determinism): the sweep shrinks only the former. */
#define CF_MISMATCH_KINDS(X) \
    X(nan_expected)          \
    X(inf_expected)          \
    X(unexpected_nan)        \
    X(unexpected_inf)        \
    X(signed_zero)           \
    X(mask_not_zero)         \
    X(over_tolerance)        \
    X(wrote_outside)         \
    X(modified_input)        \
    X(nondeterministic)

typedef enum {
#define X(k) CF_MM_##k,
    CF_MISMATCH_KINDS(X)
#undef X
    CF_MM_COUNT
} cf_mismatch;
const char *cf_mismatch_name(cf_mismatch k);

typedef enum {
    CF_EL_PASS,      /* within tolerance or a special-value match */
    CF_EL_FAIL,      /* mismatch (kind in .kind) */
    CF_EL_UNCERTAIN  /* the oracle's own error is too large for a verdict */
} cf_verdict;

typedef struct {
    cf_verdict verdict;
    cf_mismatch kind;   /* for CF_EL_FAIL; CF_MM_signed_zero is also set on a passing ±0 match */
    bool special;       /* decided by the special-value table (error counts as 0) */
    bool signed_zero;   /* matched ±0 against ∓0 */
    double ulp;         /* ulp_err (0 for special matches; +Inf for special mismatches) */
    double scaled;      /* scaled_err */
    double rel;         /* |got − r| / max(|r|, 2^−126) for the Ascend-style metrics */
} cf_elem_score;

typedef struct {
    double r, r_lo;     /* exact value = r + r_lo (r_lo = 0 unless known) */
    double m;           /* conditioning magnitude */
    double err;         /* oracle error bound (< 0: unknown, e.g. replay from stored values) */
    double alt;         /* other branch value (== r where not ambiguous) */
    bool masked;        /* must be exactly +0.0 (ScaledMaskedSoftmaxBackward) */
} cf_expect;

typedef struct {
    double max_ulp, max_scaled_ulp;
    bool strict_zero;
} cf_tol;

/* Score one element: `got` is the stored output value decoded to double (NaN/Inf kept);
 * got_bits its raw bits (for the mask check). */
cf_elem_score cf_score_element(const cf_fmt *f, double got, uint64_t got_bits, const cf_expect *x,
                               const cf_tol *tol);

#endif
