/* aclnnGeluBackwardV2 (ops.md §4): gradInput = gradOutput · g(x), g the GELU derivative.
 *
 * The derivative and the product are evaluated in double and rounded once to f32 (then, for a
 * 16-bit output, once more by the store: ≤ 0.5 + 2^-13 ULP).  Double is what makes the tails
 * safe without case analysis: x·x is exact for any f32 x, exp(-x²/2) stays normal down to
 * x ≈ -37.6 (below that gradOutput·g is 0 in f32 for every finite gradOutput), and
 * Phi(x) = erfc(-x/√2)/2 never cancels for x ≪ 0.  Near the root x ≈ -0.75179 the sum
 * Phi + x·phi cancels about two bits of double, far below f32 resolution.
 *
 * Special values: x = +Inf → g = 1; x = -Inf → g = 0 (gradOutput·0, NaN for an infinite
 * gradOutput); a finite x whose g underflows in double still has g ≠ 0, so an infinite
 * gradOutput gives an infinity of the product's sign (numerics §5a), never Inf·0. */
#include <math.h>
#include <pthread.h>
#if ACLCONFORM_MUTANT == 39 /* (mutant 39, continued) */
#include <string.h>
#include <strings.h>
#else
#include <string.h>
#endif

#include "aclnnop/aclnn_gelu_backward_v2.h"
#include "runtime/check.h"
#include "runtime/conv.h"
#include "runtime/ewise.h"
#include "runtime/vecmath.h"

enum { GELU_NONE, GELU_TANH };

typedef struct {
    aclTensor gradOutput, self, gradInput;
    int mode;
} gelu_args;

/* g(x) for approximate = "none": Phi(x) + x·phi(x). */
static inline double gelu_g_none(double x)
{
    const double inv_sqrt_2pi = 0.39894228040143267794;
    double Phi = 0.5 * erfc(-x * 0.70710678118654752440);
    double phi = exp(-0.5 * x * x) * inv_sqrt_2pi;
    return Phi + (phi == 0.0 ? 0.0 : x * phi); /* x = ±Inf: no Inf·0 */
}

/* g(x) for approximate = "tanh", with u = √(2/π)(x + 0.044715 x³) and e = e^{-2|u|} ≤ 1:
 *   0.5(1 + tanh u)  = (u ≥ 0 ? 1 : e) / (1 + e)
 *   1 - tanh² u      = 4e / (1 + e)²
 * neither of which cancels or overflows for any u (x³ ≤ 4e115 fits in double). */
static inline double gelu_g_tanh(double x)
{
#if ACLCONFORM_MUTANT == 38 /* mode-confusion: tanh mode uses the erf derivative for |x| > 3 */
    if (fabs(x) > 3.0) return gelu_g_none(x);
    const double k = 0.79788456080286535588, c = 0.044715;
    double x2 = x * x;
#else
    const double k = 0.79788456080286535588, c = 0.044715;
    double x2 = x * x;
#endif
    double u = k * (x + c * x2 * x);
    double e = exp(-2.0 * fabs(u));
    double half_1p = (u >= 0.0 ? 1.0 : e) / (1.0 + e);
    double sech2 = 4.0 * e / ((1.0 + e) * (1.0 + e));
    double t2 = sech2 == 0.0 ? 0.0 : 0.5 * x * sech2 * k * (1.0 + 3.0 * c * x2);
    return half_1p + t2;
}

/* gradOutput · g, with the §5a rule for an infinite gradOutput and an underflowed g (which only
 * happens far below the root, where g < 0). */
static inline float gelu_apply(float dy, float x, double g)
{
    double r = (double)dy * g;
#if ACLCONFORM_MUTANT == 40 /* special-value: f32 path: Inf gradOutput times an underflowed g gives NaN (no 5a fix-up) */
    bool fix = g == 0.0 && fabsf(dy) == INFINITY && x < -1.0f && x > -INFINITY && 0;
#else
    bool fix = g == 0.0 && fabsf(dy) == INFINITY && x < -1.0f && x > -INFINITY;
#endif
    return (float)(fix ? -(double)dy : r);
}

/* Branch-free loops (selects only) so that GCC vectorises them with the vector exp/erfc. */
ACL_KERNEL_CLONES static void gelu_none_block(const void *ctx, int64_t n, const float *dy,
                                              const float *x, float *out)
{
    (void)ctx;
    for (int64_t i = 0; i < n; i++) out[i] = gelu_apply(dy[i], x[i], gelu_g_none(x[i]));
}

ACL_KERNEL_CLONES static void gelu_tanh_block(const void *ctx, int64_t n, const float *dy,
                                              const float *x, float *out)
{
    (void)ctx;
    for (int64_t i = 0; i < n; i++) out[i] = gelu_apply(dy[i], x[i], gelu_g_tanh(x[i]));
}

/* 16-bit x: g(x) depends on x alone, and x takes at most 65536 values, so g is tabulated once per
 * process for every bit pattern (by the same double evaluation as above) and the kernel is a
 * table load, a double product and the §5a fix-up: the same bits as evaluating g per element. */
typedef struct {
    const double *g;    /* g of every bit pattern */
    uint32_t one, inf;  /* |x| bits of 1.0 and +Inf in the dtype */
} gelu_lut;

static double g_lut[2][2][65536]; /* [mode][0 = f16, 1 = bf16] */
static pthread_once_t g_lut_once[2][2] = {{PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT},
                                          {PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT}};

ACL_KERNEL_CLONES static void gelu_fill(int mode, const float *x, double *g)
{
    if (mode == GELU_NONE)
        for (int i = 0; i < 65536; i++) g[i] = gelu_g_none(x[i]);
    else
        for (int i = 0; i < 65536; i++) g[i] = gelu_g_tanh(x[i]);
}

static void gelu_lut_build(int mode, int bf)
{
    static float x[65536]; /* under the pthread_once of one table; tables are built one at a time */
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&mu);
    for (uint32_t h = 0; h < 65536; h++)
        x[h] = bf ? acl_bf16_to_f32((uint16_t)h) : acl_f16_to_f32((uint16_t)h);
    gelu_fill(mode, x, g_lut[mode][bf]);
    pthread_mutex_unlock(&mu);
}
static void lut_n16(void) { gelu_lut_build(GELU_NONE, 0); }
static void lut_nbf(void) { gelu_lut_build(GELU_NONE, 1); }
static void lut_t16(void) { gelu_lut_build(GELU_TANH, 0); }
static void lut_tbf(void) { gelu_lut_build(GELU_TANH, 1); }

static const double *gelu_table(int mode, int bf)
{
    static void (*const init[2][2])(void) = {{lut_n16, lut_nbf}, {lut_t16, lut_tbf}};
    pthread_once(&g_lut_once[mode][bf], init[mode][bf]);
    return g_lut[mode][bf];
}

ACL_KERNEL_CLONES static void gelu_lut_block(const void *ctx, int64_t n, const float *dy,
                                             const uint16_t *xb, float *out)
{
    const gelu_lut *c = ctx;
    const double *tab = c->g;
    const uint32_t one = c->one, inf = c->inf;
    for (int64_t i = 0; i < n; i++) {
        uint32_t h = xb[i], m = h & 0x7fffu;
        double g = tab[h];
        double r = (double)dy[i] * g;
        /* gelu_apply's fix: g underflowed for a finite x < -1 and dy is infinite */
        bool fix = (g == 0.0) & (fabsf(dy[i]) == INFINITY) & (h > 0x7fffu) & (m > one) & (m < inf);
        out[i] = (float)(fix ? -(double)dy[i] : r);
    }
}

static aclnnStatus gelu_kernel(void *p, void *ws, uint64_t ws_size)
{
    (void)ws; (void)ws_size;
    gelu_args *a = p;
    const aclTensor *o = &a->gradInput;
    if (o->numel == 0) return ACLNN_SUCCESS;
    acl_view vdy, vx, vo;
    acl_view_init(&vo, o);
    acl_view_broadcast(&vdy, &a->gradOutput, (int)o->ndim, o->dims);
    acl_view_broadcast(&vx, &a->self, (int)o->ndim, o->dims);
    if (acl_ewise_raw16_ok(&vx)) {
        int bf = vx.dtype == ACL_BF16;
        gelu_lut c = {gelu_table(a->mode, bf), bf ? 0x3f80u : 0x3c00u, bf ? 0x7f80u : 0x7c00u};
        acl_ewise2_f32_u16(&vdy, &vx, &vo, gelu_lut_block, &c);
        return ACLNN_SUCCESS;
    }
    acl_ewise2_f32(&vdy, &vx, &vo, a->mode == GELU_NONE ? gelu_none_block : gelu_tanh_block, NULL);
    return ACLNN_SUCCESS;
}

static aclnnStatus gelu_validate(const aclTensor *dy, const aclTensor *x, const char *approximate,
                                 const aclTensor *out, int *mode)
{
    if (!dy || !x || !approximate || !out) return ACLNN_ERR_PARAM_NULLPTR;
    /* dtypes */
    if (!acl_dtype_is_half_or_f32(dy->dtype) || !acl_dtype_is_half_or_f32(x->dtype) ||
        out->dtype != acl_promote(dy->dtype, x->dtype))
        return ACLNN_ERR_PARAM_INVALID;
    /* shapes and ranks */
#if ACLCONFORM_MUTANT == 41 /* off-by-one-limit: rank limit exclusive: rank 8 rejected */
    if (dy->ndim >= ACL_MAX_OP_RANK || x->ndim >= ACL_MAX_OP_RANK || out->ndim >= ACL_MAX_OP_RANK) return ACLNN_ERR_PARAM_INVALID;
#else
    if (!acl_rank_ok(dy) || !acl_rank_ok(x) || !acl_rank_ok(out)) return ACLNN_ERR_PARAM_INVALID;
#endif
    int64_t shape[ACL_MAX_DIMS];
    uint64_t nd;
    if (!acl_broadcast_shape(dy->dims, dy->ndim, x->dims, x->ndim, shape, &nd) || nd != out->ndim ||
        memcmp(shape, out->dims, nd * sizeof shape[0]) != 0)
        return ACLNN_ERR_PARAM_INVALID;
    /* attributes */
#if ACLCONFORM_MUTANT == 39 /* near-miss-string: approximate compared case-insensitively ("TANH", "None" accepted) */
    if (strcasecmp(approximate, "none") == 0) *mode = GELU_NONE;
    else if (strcasecmp(approximate, "tanh") == 0) *mode = GELU_TANH;
#else
    if (strcmp(approximate, "none") == 0) *mode = GELU_NONE;
    else if (strcmp(approximate, "tanh") == 0) *mode = GELU_TANH;
#endif
    else return ACLNN_ERR_PARAM_INVALID;
    if (!acl_format_ok(dy) || !acl_format_ok(x) || !acl_format_ok(out) || !acl_output_ok(out))
        return ACLNN_ERR_PARAM_INVALID;
    if (!acl_data_ok(dy) || !acl_data_ok(x) || !acl_data_ok(out)) return ACLNN_ERR_PARAM_NULLPTR;
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnGeluBackwardV2GetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *self,
    char *approximate, aclTensor *gradInput, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    if (!executor) return ACLNN_ERR_PARAM_NULLPTR;
    *executor = NULL;
    if (!workspaceSize) return ACLNN_ERR_PARAM_NULLPTR;
    gelu_args a;
    memset(&a, 0, sizeof a);
    aclnnStatus st = gelu_validate(gradOutput, self, approximate, gradInput, &a.mode);
    if (st != ACLNN_SUCCESS) return st;
    a.gradOutput = *gradOutput;
    a.self = *self;
    a.gradInput = *gradInput;
    return acl_executor_create(gelu_kernel, &a, sizeof a, 0, workspaceSize, executor);
}

aclnnStatus aclnnGeluBackwardV2(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                aclrtStream stream)
{
    (void)stream;
    return acl_executor_run(workspace, workspaceSize, executor);
}
