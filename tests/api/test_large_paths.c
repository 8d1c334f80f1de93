/* ctest-labels: api
 * Large calls take paths that the sweep's small cases rarely reach (issue 14): the elementwise
 * driver prefetches ahead in 512-byte sub-blocks once an output passes 2 MiB, and 16-bit
 * LogitGrad runs 16 lanes with a masked tail.  Those paths may only change timing: a call on
 * N = 2^20 + 37 elements (specials sprinkled in) must give, for 1, 2 and 3 threads, exactly the
 * bits of the same elements computed by calls of 4096 elements (below every threshold).  16-bit
 * SoftplusBackward converts in registers when all three tensors are contiguous and goes through
 * f32 staging buffers otherwise: the same call on strided views (every other element of buffers
 * twice as long) must give the same bits too.  So must calls whose tensors start at other places
 * within a 64-byte line (the driver starts its blocks on the output's lines). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aclnn/acl_meta.h"
#include "aclnnop/aclnn_gelu_backward_v2.h"
#include "aclnnop/aclnn_logit_grad.h"
#include "aclnnop/aclnn_softplus_backward.h"
#include "runtime/conv.h"

void aclconformSetNumThreads(int n);

enum { N = (1 << 20) + 37, CHUNK = 4096 };

typedef enum { GELU_NONE, GELU_TANH, SOFTPLUS, LOGIT } which;

static uint32_t lcg(uint32_t *s) { return *s = *s * 1664525u + 1013904223u; }

/* element i of input k (0: the gradient, 1: x) as a double, with specials every 997th element
 * in each input alone and, every 997th element too, in both at once, over all pairs of specials
 * (a NaN gradient with a NaN x: which NaN comes out must not depend on where the element sits) */
static double value(which op, int k, int64_t i, uint32_t *s)
{
    static const double special[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1e30, -1e30, 1.0, -0.75179, 20.0, -NAN};
    double u = (double)(lcg(s) >> 8) * 0x1p-24;
    if (i % 997 == (k ? 11 : 500)) return special[(i / 997) % 11];
    if (i % 997 == 700) return special[(i / 997 + (k ? i / 10967 : 0)) % 11];
    if (k == 0) return u * 6 - 3;
    /* SoftplusBackward (beta 1.5): z from -195 to 45, through every branch of the 16-bit path */
    return op == LOGIT ? u * 1.2 - 0.1 : op == SOFTPLUS ? u * 160 - 130 : u * 24 - 12;
}

static void store(aclDataType dt, void *p, int64_t i, double v)
{
    switch (dt) {
    case ACL_FLOAT: ((float *)p)[i] = (float)v; break;
    case ACL_DOUBLE: ((double *)p)[i] = v; break;
    case ACL_FLOAT16: ((uint16_t *)p)[i] = acl_f32_to_f16((float)v); break;
    default: ((uint16_t *)p)[i] = acl_f32_to_bf16((float)v); break;
    }
}

/* n elements, stride st elements apart */
static aclTensor *tensor1(aclDataType dt, int64_t n, int64_t st, void *data)
{
    int64_t storage = (n - 1) * st + 1;
    return aclCreateTensor(&n, 1, dt, &st, 0, ACL_FORMAT_ND, &storage, 1, data);
}

/* out[0, stride, .., (n-1)·stride] = op(g, x) at the same positions, through the ABI */
static void call_strided(which op, aclDataType dt, int64_t n, int64_t stride, const void *g, const void *x, void *out)
{
    aclTensor *tg = tensor1(dt, n, stride, (void *)g), *tx = tensor1(dt, n, stride, (void *)x), *to = tensor1(dt, n, stride, out);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    aclnnStatus st;
    if (op == SOFTPLUS) {
        float beta = 1.5f, thr = 20.0f;
        aclScalar *b = aclCreateScalar(&beta, ACL_FLOAT), *t = aclCreateScalar(&thr, ACL_FLOAT);
        st = aclnnSoftplusBackwardGetWorkspaceSize(tg, tx, b, t, to, &ws, &ex);
        assert_int_equal(st, ACLNN_SUCCESS);
        assert_int_equal(aclnnSoftplusBackward(NULL, ws, ex, NULL), ACLNN_SUCCESS);
        aclDestroyScalar(b);
        aclDestroyScalar(t);
    } else if (op == LOGIT) {
        st = aclnnLogitGradGetWorkspaceSize(tx, tg, 1e-3, to, &ws, &ex);
        assert_int_equal(st, ACLNN_SUCCESS);
        assert_int_equal(aclnnLogitGrad(NULL, ws, ex, NULL), ACLNN_SUCCESS);
    } else {
        st = aclnnGeluBackwardV2GetWorkspaceSize(tg, tx, op == GELU_NONE ? "none" : "tanh", to, &ws, &ex);
        assert_int_equal(st, ACLNN_SUCCESS);
        assert_int_equal(aclnnGeluBackwardV2(NULL, ws, ex, NULL), ACLNN_SUCCESS);
    }
    aclDestroyTensor(tg);
    aclDestroyTensor(tx);
    aclDestroyTensor(to);
}

static void call(which op, aclDataType dt, int64_t n, const void *g, const void *x, void *out)
{
    call_strided(op, dt, n, 1, g, x, out);
}

/* The first of n elements of es bytes where got and want differ, or -1. */
static int64_t first_difference(const char *got, const char *want, size_t es, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (memcmp(got + i * (int64_t)es, want + i * (int64_t)es, es)) return i;
    return -1;
}

static void check(which op, aclDataType dt, size_t es)
{
    char *g = malloc(N * es), *x = malloc(N * es), *ref = malloc(N * es), *out = malloc(N * es);
    assert_non_null(g);
    assert_non_null(x);
    assert_non_null(ref);
    assert_non_null(out);
    uint32_t s = 12345u + (uint32_t)op * 77u + (uint32_t)dt;
    for (int64_t i = 0; i < N; i++) {
        store(dt, g, i, value(op, 0, i, &s));
        store(dt, x, i, value(op, 1, i, &s));
    }
    aclconformSetNumThreads(1);
    for (int64_t i = 0; i < N; i += CHUNK) {
        int64_t n = N - i < CHUNK ? N - i : CHUNK;
        call(op, dt, n, g + i * (int64_t)es, x + i * (int64_t)es, ref + i * (int64_t)es);
    }
    for (int t = 1; t <= 3; t++) {
        aclconformSetNumThreads(t);
        memset(out, 0x5a, N * es);
        call(op, dt, N, g, x, out);
        int64_t first = first_difference(out, ref, es, N);
        if (first >= 0) print_error("op %d dtype %d threads %d: element %lld differs from the chunked call\n",
                                    (int)op, (int)dt, t, (long long)first);
        assert_int_equal(first, -1);
    }
    /* The same call on copies displaced from a 64-byte line, the inputs by other amounts than the
     * output: the driver starts its blocks on the output's lines (round 13), so the blocks now
     * begin at other elements, and no bit may change. */
    aclconformSetNumThreads(2);
    int64_t line = 64 / (int64_t)es;
    size_t bytes = ((size_t)(N + line) * es + 63) / 64 * 64;
    char *g2 = aligned_alloc(64, bytes), *x2 = aligned_alloc(64, bytes), *out2 = aligned_alloc(64, bytes);
    assert_true(g2 && x2 && out2);
    for (int64_t d = 1; d < line; d += 3) {
        int64_t dg = d * 5 % line, dx = d * 7 % line;
        memcpy(g2 + dg * (int64_t)es, g, N * es);
        memcpy(x2 + dx * (int64_t)es, x, N * es);
        memset(out2, 0x5a, bytes);
        call(op, dt, N, g2 + dg * (int64_t)es, x2 + dx * (int64_t)es, out2 + d * (int64_t)es);
        int64_t first = first_difference(out2 + d * (int64_t)es, ref, es, N);
        if (first >= 0) print_error("op %d dtype %d: output %lld elements past a line: element %lld differs\n",
                                    (int)op, (int)dt, (long long)d, (long long)first);
        assert_int_equal(first, -1);
    }
    aclconformSetNumThreads(0);
    free(g);
    free(x);
    free(ref);
    free(out);
    free(g2);
    free(x2);
    free(out2);
}

/* Every element a pair of specials (a NaN of either sign, ±Inf, ±0, huge, a root, ...) in a
 * short call placed at every element offset within a 64-byte line, inputs and output displaced
 * differently: the block grid follows the output's address, so each element runs in other
 * positions of the kernels' steps (whole vectors, tails, paired steps), and which NaN comes out
 * of a NaN gradient times a NaN x must not depend on that. */
static void specials_do_not_depend_on_placement(void **state)
{
    (void)state;
    static const double sp[] = {NAN, -NAN, INFINITY, -INFINITY, 0.0, -0.0, 1e30, -1e30, -0.75179, 0.5, -50.0, 2.0};
    enum { M = 3001, NS = sizeof sp / sizeof sp[0] };
    const struct { which op; aclDataType dt; size_t es; } cases[] = {
        {GELU_NONE, ACL_FLOAT, 4}, {GELU_TANH, ACL_FLOAT, 4}, {SOFTPLUS, ACL_FLOAT, 4}, {SOFTPLUS, ACL_DOUBLE, 8},
        {LOGIT, ACL_FLOAT, 4}, {GELU_NONE, ACL_BF16, 2}, {GELU_TANH, ACL_FLOAT16, 2}, {SOFTPLUS, ACL_FLOAT16, 2},
        {LOGIT, ACL_BF16, 2}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        size_t es = cases[c].es, bytes = ((M + 64) * es + 63) / 64 * 64; /* aligned_alloc: a multiple of 64 */
        char *g = aligned_alloc(64, bytes), *x = aligned_alloc(64, bytes), *o = aligned_alloc(64, bytes),
             *ref = malloc(M * es);
        assert_true(g && x && o && ref);
        int64_t line = 64 / (int64_t)es;
        for (int64_t d = 0; d < line; d++) {
            int64_t dg = d * 5 % line, dx = d * 7 % line;
            for (int64_t i = 0; i < M; i++) {
                store(cases[c].dt, g + (dg + i) * (int64_t)es, 0, sp[i % NS]);
                store(cases[c].dt, x + (dx + i) * (int64_t)es, 0, sp[i / NS % NS]);
            }
            call(cases[c].op, cases[c].dt, M, g + dg * (int64_t)es, x + dx * (int64_t)es, o + d * (int64_t)es);
            if (d == 0) {
                memcpy(ref, o, M * es);
                continue;
            }
            int64_t i = first_difference(o + d * (int64_t)es, ref, es, M);
            if (i >= 0)
                fail_msg("op %d dtype %d: output %lld elements past a line: element %lld (gradient %g, x %g) differs",
                         (int)cases[c].op, (int)cases[c].dt, (long long)d, (long long)i, sp[i % NS], sp[i / NS % NS]);
        }
        free(g);
        free(x);
        free(o);
        free(ref);
    }
}

static void gelu_f32_large_equals_chunked(void **state)
{
    (void)state;
    check(GELU_NONE, ACL_FLOAT, 4);
    check(GELU_TANH, ACL_FLOAT, 4);
}

/* the 16-bit Gelu table path (all-16-bit driver) */
static void gelu16_large_equals_chunked(void **state)
{
    (void)state;
    check(GELU_NONE, ACL_BF16, 2);
    check(GELU_TANH, ACL_FLOAT16, 2);
}

static void softplus_large_equals_chunked(void **state)
{
    (void)state;
    check(SOFTPLUS, ACL_FLOAT, 4);
    check(SOFTPLUS, ACL_DOUBLE, 8);
    check(SOFTPLUS, ACL_FLOAT16, 2);
    check(SOFTPLUS, ACL_BF16, 2);
}

/* 16-bit SoftplusBackward on views of stride 2 (staged path) against the contiguous call
 * (in-register path), element by element, bit for bit */
static void softplus16_strided_equals_contiguous(void **state)
{
    (void)state;
    enum { M = (1 << 16) + 21 };
    const aclDataType dts[2] = {ACL_FLOAT16, ACL_BF16};
    for (int d = 0; d < 2; d++) {
        uint16_t *g = malloc(M * 2), *x = malloc(M * 2), *out = malloc(M * 2);
        uint16_t *g2 = malloc(M * 4), *x2 = malloc(M * 4), *out2 = malloc(M * 4);
        assert_true(g && x && out && g2 && x2 && out2);
        uint32_t s = 777u + (uint32_t)d;
        for (int64_t i = 0; i < M; i++) {
            store(dts[d], g, i, value(SOFTPLUS, 0, i, &s));
            store(dts[d], x, i, value(SOFTPLUS, 1, i, &s));
            g2[2 * i] = g[i];
            x2[2 * i] = x[i];
            g2[2 * i + 1] = x2[2 * i + 1] = 0x7e00; /* gaps: a NaN that must not leak in */
        }
        memset(out2, 0x5a, M * 4);
        call(SOFTPLUS, dts[d], M, g, x, out);
        call_strided(SOFTPLUS, dts[d], M, 2, g2, x2, out2);
        int64_t first = -1;
        for (int64_t i = 0; i < M && first < 0; i++)
            if (out2[2 * i] != out[i] || (i + 1 < M && out2[2 * i + 1] != 0x5a5a)) first = i;
        if (first >= 0) print_error("dtype %d: element %lld differs between the strided and the contiguous call\n",
                                    (int)dts[d], (long long)first);
        assert_int_equal(first, -1);
        free(g); free(x); free(out); free(g2); free(x2); free(out2);
    }
}

static void logit_large_equals_chunked(void **state)
{
    (void)state;
    check(LOGIT, ACL_FLOAT, 4);
    check(LOGIT, ACL_FLOAT16, 2);
    check(LOGIT, ACL_BF16, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gelu_f32_large_equals_chunked),
        cmocka_unit_test(specials_do_not_depend_on_placement),
        cmocka_unit_test(gelu16_large_equals_chunked),
        cmocka_unit_test(softplus_large_equals_chunked),
        cmocka_unit_test(softplus16_strided_equals_contiguous),
        cmocka_unit_test(logit_large_equals_chunked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
