/* Oracle-internal helpers shared by the five evaluators (not part of the public API).
 *
 *  - exact widening of stored values (f16, bf16, f32, f64, ints, bool) to double, written from the
 *    format definitions (numerics.md §1);  i64 values beyond 2^53 are rounded (callers that need
 *    exactness use orc_load_i64 / the MPFR paths);
 *  - strided, broadcasting element access over an output shape in row-major order;
 *  - GSL initialisation (error handler off), done once, thread-safely;
 *  - compensated (Neumaier) summation carrying a rigorous error bound;
 *  - the unit roundoff and small helpers used in error bounds.
 *
 * Error-bound conventions: ORC_U = 2^-53 is the unit roundoff of double.  Every bound is an
 * upper bound on |computed - exact| for the value it accompanies; it may be loose by a small
 * factor, never small. */
#ifndef ACLCONFORM_ORACLE_INTERNAL_H
#define ACLCONFORM_ORACLE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <mpfr.h>

#include "oracle.h"

#define ORC_MAX_RANK 32 /* aclCreateTensor's limit; the cann-kernel Gelu accepts rank > 8 */
#define ORC_U 0x1p-53           /* unit roundoff of double */
#define ORC_TINY 0x1p-1074      /* smallest subnormal double: absolute underflow allowance */

/* Once per process: gsl_set_error_handler_off().  Every public entry point calls it. */
void orc_init(void);

/* Value of a stored element of dtype dt at `p` (no alignment assumed), widened exactly to double
 * (i64/u... beyond 2^53 are rounded to nearest). */
double orc_widen(cf_dtype dt, const void *p);
/* Element size in bytes of a dtype (0 for an unknown id). */
int orc_dtype_size(cf_dtype dt);
/* Exact integer value of an integer/bool element (dt must be an integer or bool dtype). */
int64_t orc_load_int(cf_dtype dt, const void *p);
bool orc_dtype_is_int(cf_dtype dt);

/* Bit pattern (width of dt, zero-extended) of a scalar, decoded exactly to double (ints beyond
 * 2^53 rounded; see orc_load_int for the exact value). */
double orc_scalar_widen(orc_scalar s);

/* Row-major walk over an output shape with one broadcasting input offset per tensor.
 * Inputs are aligned to the right of the output shape; a dim of size 1 is broadcast. */
typedef struct {
    int ndim;
    int64_t shape[ORC_MAX_RANK];
    int64_t count;                       /* product of shape */
    int ntens;
    int64_t idx[ORC_MAX_RANK];
    int64_t strides[4][ORC_MAX_RANK];     /* per tensor, aligned to the output dims (0 = broadcast) */
    int64_t off[4];                       /* current element offset per tensor */
} orc_iter;

/* Checks that each tensor broadcasts to `shape` (rank ≤ 8, non-negative dims) and sets up the walk
 * at element 0.  Returns ORC_OK or ORC_EINVAL. */
int orc_iter_init(orc_iter *it, int ndim, const int64_t *shape, int ntens, const orc_tensor *const *t);
/* numpy broadcast shape of a and b (right-aligned); ORC_EINVAL when they do not broadcast. */
int orc_broadcast_shape(const orc_tensor *a, const orc_tensor *b, int *ndim, int64_t *shape);
/* Advance to the next element in row-major order. */
void orc_iter_next(orc_iter *it);

/* Checks a tensor descriptor for basic sanity (known dtype, rank 0..8, non-negative dims, data
 * non-NULL when non-empty).  ORC_OK or ORC_EINVAL. */
int orc_check_tensor(const orc_tensor *t);
/* Number of elements (product of shape). */
int64_t orc_numel(const orc_tensor *t);
/* Element of t at multi-index idx (all dims of t, no broadcasting). */
double orc_at(const orc_tensor *t, const int64_t *idx);

/* Compensated summation (Neumaier / Kahan–Babuška) of doubles, with the bound of Ogita, Rump and
 * Oishi (SIAM J. Sci. Comput. 26, 2005, Prop. 4.5 for Sum2; Neumaier's variant obeys the same bound):
 *     |res − Σx| ≤ u·|Σx| + γ_{n−1}²·Σ|x|,   γ_k = k·u / (1 − k·u).
 * Non-finite terms switch the accumulator to a plain IEEE sum (so NaN/Inf propagate by IEEE rules,
 * Inf + −Inf = NaN) and the bound becomes meaningless (the result is not finite). */
typedef struct {
    double s, c;        /* running sum and compensation */
    double abs;         /* Σ|x| (rounded upward by a factor in the bound) */
    double plain;       /* plain IEEE sum, used once a term is non-finite */
    int64_t n;
    bool nonfinite;
} orc_sum;

void orc_sum_init(orc_sum *a);
void orc_sum_add(orc_sum *a, double x);
/* Result (s + c rounded once) and its error bound; `abs_out` (may be NULL) receives Σ|x|. */
double orc_sum_result(const orc_sum *a, double *err, double *abs_out);

/* Writes r (and alt = r, r_lo = 0) and m/err into element i of out. */
void orc_put(orc_out *out, int64_t i, double r, double m, double err);
void orc_put_alt(orc_out *out, int64_t i, double r, double m, double err, double alt);

/* Maps a GSL status of a special function to the oracle's: GSL_SUCCESS -> ORC_OK, anything else
 * -> ORC_ENUMERIC (callers handle the statuses they expect, e.g. underflow, before this). */
int orc_gsl_status(int gsl_status);

/* y·e^x for y ≥ 0 finite, through gsl_sf_exp_mult_e, with two repairs: underflow (|result| <
 * DBL_MIN) is returned as val = 0, err = DBL_MIN (a true bound) with ORC_OK; and the error
 * estimate is made non-negative and not smaller than 4ε·(|x| + |ln y| + 2)·|val| — GSL 2.7.1's
 * large-argument branch adds 2ε·(M + N + 1)·|val| with M + N = ⌊x⌋ + ⌊ln y⌋, which is negative
 * for x ≪ 0 and yields a *negative* err (found by test_oracle_mpfr_cert).  Other statuses ->
 * ORC_ENUMERIC. */
int orc_exp_mult(double x, double y, double *val, double *err);

/* ---- refinement with MPFR (refine.c) ----------------------------------------------------------
 * An evaluator computes one element's exact value at precision P into R (R's precision is P) and
 * a rigorous bound E ≥ |R − exact| (E: 64 bits, rounded up); it returns ORC_OK, or another status
 * when it cannot (the double value then stays).  It runs with MPFR's widest exponent range. */
typedef int (*orc_refine_eval)(const void *ctx, mpfr_prec_t P, mpfr_ptr R, mpfr_ptr E);

/* Whether an element of output dtype T (f16, bf16, f32; f64 outputs have their own MPFR path)
 * with value r and bound err must be refined: err > 2^−16 ulp_T(r), or a rounding boundary of T
 * within r ± err.  Never for a non-finite r or an overflow the interval decides. */
bool orc_refine_wanted(cf_dtype T, double r, double err);
/* E += |v|·k·2^−P, rounded up (an evaluator's bound: k roundings of relative 2^−P on a value of
 * the size of v; computed in MPFR, where |v|·2^−P need not be a normal double) */
void orc_err_add(mpfr_ptr E, mpfr_srcptr v, double k, mpfr_prec_t P);
/* The refined r (RN_T(r) = RN_T(exact)) and its bound; ORC_OK, or the evaluator's status. */
int orc_refine(cf_dtype T, orc_refine_eval eval, const void *ctx, double *r, double *err);
/* orc_refine_wanted on element i of out, then orc_refine into it (alt follows r where it was r). */
void orc_refine_put(orc_out *out, int64_t i, cf_dtype T, orc_refine_eval eval, const void *ctx);

/* f32 rounding of a double (round to nearest even, overflow to Inf; done by the C conversion in
 * the default rounding mode). */
double orc_round_f32(double x);

#endif
