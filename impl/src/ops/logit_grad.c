/* aclnnLogitGrad (ops.md §2), eps rounded to f32 first, lo = eps ≥ 0 ? eps : 0, hi = 1 − lo:
 *   x, dy or eps NaN     → NaN
 *   lo ≤ x ≤ hi          → dy / (x·(1 − x))
 *   otherwise            → eps ≥ 0 ? 0 : NaN
 *
 * Evaluated in double: x·(1 − x) and the quotient carry ~3 double roundings, so the f32 result is
 * one rounding of an almost exact value (16-bit outputs: ≤ 0.5 + 2^-13 ULP).  x = ±0 and 1 give
 * ±Inf by IEEE division (x = −0: −0·1 = −0, so −Inf·sign(dy)); dy = 0 there gives 0/0 = NaN.
 *
 * The range test is exact.  For lo ≥ 2^-30, 1 − lo is exact in double (lo's last bit is
 * ≥ 2^-53).  For 0 < lo < 2^-30 the exact hi lies strictly between 1 − 2^-24 (the largest float
 * below 1) and 1, so for every float x "x ≤ hi" is "x < 1", which hi = 1 − 2^-53 decides. */
#include <math.h>
#include <string.h>

#include "aclnnop/aclnn_logit_grad.h"
#include "runtime/check.h"
#include "runtime/ewise.h"
#include "runtime/vecmath.h"

typedef struct {
    aclTensor x, dy, out;
    double eps;
} logit_args;

typedef struct {
    double lo, hi, outside; /* outside: 0 for eps ≥ 0, NaN for eps < 0; lo = NaN for eps NaN */
} logit_ctx;

/* Selects only, so the loop vectorises.  A NaN eps makes lo NaN: every range test fails and the
 * outside value is NaN. */
ACL_KERNEL_CLONES static void logit_block(const void *p, int64_t n, const float *x,
                                          const float *dy, float *out)
{
    const logit_ctx *c = p;
    const double lo = c->lo, hi = c->hi, outside = c->outside;
    for (int64_t i = 0; i < n; i++) {
        double xd = x[i], g = dy[i];
        double q = g / (xd * (1.0 - xd));
#if ACLCONFORM_MUTANT == 28 /* eps-range-edge: lower bound exclusive: x == eps falls outside */
        double r = ((lo < xd) & (xd <= hi)) ? q : outside;
#else
        double r = ((lo <= xd) & (xd <= hi)) ? q : outside;
#endif
        out[i] = (float)(((xd != xd) | (g != g)) ? NAN : r);
    }
}

static aclnnStatus logit_kernel(void *p, void *ws, uint64_t ws_size)
{
    (void)ws; (void)ws_size;
    logit_args *a = p;
    if (a->out.numel == 0) return ACLNN_SUCCESS;
    float eps = (float)a->eps;
    logit_ctx c;
    c.lo = isnan(eps) ? NAN : eps >= 0.0f ? eps : 0.0;
    if (c.lo == 0.0) c.hi = 1.0;
#if ACLCONFORM_MUTANT == 29 /* eps-range-edge: tiny eps (< 2^-30): hi = 1 - eps in double, which is 1 for eps < 2^-54 (x = 1 inside) */
    else if (c.lo < 0x1p-30) c.hi = 1.0 - c.lo;
#else
    else if (c.lo < 0x1p-30) c.hi = 1.0 - 0x1p-53;
#endif
    else c.hi = 1.0 - c.lo;
#if ACLCONFORM_MUTANT == 30 /* eps-range-edge: eps == 0 treated as negative: outside value NaN instead of 0 */
    c.outside = eps > 0.0f ? 0.0 : NAN;
#else
    c.outside = eps >= 0.0f ? 0.0 : NAN; /* NaN eps: NaN */
#endif
    acl_view vx, vdy, vo;
    acl_view_init(&vx, &a->x);
    acl_view_init(&vdy, &a->dy);
    acl_view_init(&vo, &a->out);
    acl_ewise2_f32(&vx, &vdy, &vo, logit_block, &c);
    return ACLNN_SUCCESS;
}

static aclnnStatus logit_validate(const aclTensor *x, const aclTensor *dy, const aclTensor *out)
{
    if (!x || !dy || !out) return ACLNN_ERR_PARAM_NULLPTR;
#if ACLCONFORM_MUTANT == 31 /* validation: dy dtype not checked against x (mixed dtypes accepted) */
    if (!acl_dtype_is_half_or_f32(x->dtype) || !acl_dtype_is_half_or_f32(dy->dtype) || out->dtype != x->dtype)
#else
    if (!acl_dtype_is_half_or_f32(x->dtype) || dy->dtype != x->dtype || out->dtype != x->dtype)
#endif
        return ACLNN_ERR_PARAM_INVALID;
    if (!acl_rank_ok(x) || !acl_same_shape(x, dy) || !acl_same_shape(x, out))
        return ACLNN_ERR_PARAM_INVALID;
    if (!acl_format_ok(x) || !acl_format_ok(dy) || !acl_format_ok(out) || !acl_output_ok(out))
        return ACLNN_ERR_PARAM_INVALID;
    if (!acl_data_ok(x) || !acl_data_ok(dy) || !acl_data_ok(out)) return ACLNN_ERR_PARAM_NULLPTR;
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnLogitGradGetWorkspaceSize(const aclTensor *x, const aclTensor *dy, double eps,
                                           const aclTensor *out, uint64_t *workspaceSize,
                                           aclOpExecutor **executor)
{
    if (!executor) return ACLNN_ERR_PARAM_NULLPTR;
    *executor = NULL;
    if (!workspaceSize) return ACLNN_ERR_PARAM_NULLPTR;
    aclnnStatus st = logit_validate(x, dy, out);
    if (st != ACLNN_SUCCESS) return st;
    logit_args a;
    memset(&a, 0, sizeof a);
    a.x = *x;
    a.dy = *dy;
    a.out = *out;
    a.eps = eps;
    return acl_executor_create(logit_kernel, &a, sizeof a, 0, workspaceSize, executor);
}

aclnnStatus aclnnLogitGrad(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                           aclrtStream stream)
{
    (void)stream;
    return acl_executor_run(workspace, workspaceSize, executor);
}
