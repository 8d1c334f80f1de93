/* The oracle: a double-precision reference for the five operators (spec numerics.md §2), built on
 * GSL special functions (their _e forms, whose .err is carried into `err`) and compensated
 * summation, with MPFR for f64 outputs.  Written from the math of ops.md; shares no formula,
 * validation or summation code with impl/.  Depends only on common/dtype.h (dtype ids).
 *
 * Inputs are the *stored* tensors: any dtype of the suite, any view (shape, strides and offset in
 * elements into `data`).  Each evaluator fills, for every element of its output view in row-major
 * order, the caller-allocated arrays of an orc_out:
 *   r     the exact result rounded to double (for f64 outputs: the high part)
 *   r_lo  optional (may be NULL): low part, exact ≈ r + r_lo; filled (0 elsewhere) for f64 outputs
 *   m     the conditioning magnitude of ops.md "Conditioning" (0 where r is not finite)
 *   err   a bound on |r (+ r_lo) − exact|, from gsl_sf_result.err and the summation bounds;
 *         for f64 outputs, 0 also where r + r_lo is provably the exact value rounded to the f64
 *         grid (2^−1074 apart: subnormal and underflowing results, which no double can hold
 *         closer and which a bound ≥ 2^−1074 would leave unscored)
 *   alt   the other branch's value where a comparison lies within rounding of its boundary
 *         (numerics.md §5); equal to r (bitwise) everywhere else
 * Every evaluator assumes a *valid* case (the status checks are the harness's business) and
 * returns ORC_OK, or ORC_EINVAL when an argument is outside what it can evaluate (never aborts;
 * GSL's error handler is turned off by the library). */
#ifndef ACLCONFORM_ORACLE_H
#define ACLCONFORM_ORACLE_H

#include <stdint.h>

#include "dtype.h"

/* ORC_ENUMERIC (additive): a special function (GSL/MPFR) reported a status the oracle does not
 * handle for that input; the outputs are then incomplete.  It signals a bug of the oracle, never a
 * property of the case. */
enum { ORC_OK = 0, ORC_EINVAL = 1, ORC_ENOMEM = 2, ORC_ENUMERIC = 3 };

typedef enum { ORC_PROFILE_SPEC = 0, ORC_PROFILE_CANN_KERNEL = 1 } orc_profile;

typedef struct {
    cf_dtype dtype;
    int ndim;
    const int64_t *shape;
    const int64_t *strides; /* elements */
    int64_t offset;         /* elements */
    const void *data;       /* storage, little endian; f16/bf16 as raw 16-bit patterns */
} orc_tensor;

typedef struct {
    cf_dtype dtype;
    uint64_t bits; /* bit pattern of the scalar, zero-extended */
} orc_scalar;

typedef struct {
    double *r, *r_lo, *m, *err, *alt;
} orc_out;

/* out[b,n,i,j]: shape of gradOutput; masked positions give r = +0, m = 0, err = 0.
 * `scale` is the attribute as passed (rounded to f32 inside, as ops.md §0.6 says). */
int orc_scaled_masked_softmax_backward(const orc_tensor *gradOutput, const orc_tensor *y,
                                       const orc_tensor *mask, double scale, cf_dtype out_dtype,
                                       orc_profile profile, orc_out *out);

/* out: shape of x.  `eps` as passed (rounded to f32 inside). */
int orc_logit_grad(const orc_tensor *x, const orc_tensor *dy, double eps, cf_dtype out_dtype,
                   orc_profile profile, orc_out *out);

/* inputGrad: shape of input [T,N,D]; weightGrad: shape of weight [l,N].  actSeqLen == NULL means
 * one batch of length T (nActSeqLen ignored). */
int orc_nsa_compress_grad(const orc_tensor *outputGrad, const orc_tensor *input,
                          const orc_tensor *weight, const int64_t *actSeqLen, int64_t nActSeqLen,
                          int64_t compressBlockSize, int64_t compressStride, cf_dtype out_dtype,
                          orc_profile profile, orc_out *inputGrad, orc_out *weightGrad);

/* gradInput: the broadcast shape of gradOutput and self; approximate is "none" or "tanh". */
int orc_gelu_backward_v2(const orc_tensor *gradOutput, const orc_tensor *self,
                         const char *approximate, cf_dtype out_dtype, orc_profile profile,
                         orc_out *out);

/* gradInput: shape of self.  beta/threshold are converted to the compute precision (f64 when any
 * tensor is f64, else f32) exactly as ops.md §5 says; alt covers beta*x rounded to it. */
int orc_softplus_backward(const orc_tensor *gradOutput, const orc_tensor *self, orc_scalar beta,
                          orc_scalar threshold, cf_dtype out_dtype, orc_profile profile,
                          orc_out *out);

/* Release the calling thread's MPFR caches (constants, e.g. for the f64 Softplus path).  Call it
 * before a thread that used the oracle exits; otherwise those caches leak with the thread. */
void orc_thread_release(void);

#endif
