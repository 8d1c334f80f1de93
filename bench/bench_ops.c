/* Throughput of the five operators against a plain memory copy of the same bytes.
 *
 * For each operator × dtype × size × thread count (1, 2) it prints the best time of a few runs,
 * the bytes moved (every input and output element read or written once: the minimum traffic),
 * the resulting GB/s, and the ratio to memcpy moving the same number of bytes (half read, half
 * written) with the same number of threads, measured in the same run just before.
 *
 *   usage: bench_ops [--quick] [--op NAME]
 *   --quick   1M elements only, one repetition */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aclnnop/aclnn_gelu_backward_v2.h"
#include "aclnnop/aclnn_logit_grad.h"
#include "aclnnop/aclnn_nsa_compress_grad.h"
#include "aclnnop/aclnn_scaled_masked_softmax_backward.h"
#include "aclnnop/aclnn_softplus_backward.h"
#include "runtime/conv.h"
#include "runtime/runtime.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t g_seed = 12345;
static float frand(float lo, float hi)
{
    g_seed = g_seed * 6364136223846793005ull + 1442695040888963407ull;
    return lo + (hi - lo) * (float)(g_seed >> 40) * 0x1p-24f;
}

/* Contiguous tensor with values uniform in [lo, hi) (bool: true with probability lo). */
typedef struct { aclTensor *t; void *mem; size_t bytes; } btensor;

static btensor mk(aclDataType dt, int nd, const int64_t *dims, float lo, float hi)
{
    btensor b;
    int64_t n = 1;
    for (int k = 0; k < nd; k++) n *= dims[k];
    size_t es = acl_dtype_size(dt);
    b.bytes = (size_t)n * es;
    b.mem = malloc(b.bytes ? b.bytes : 1);
    for (int64_t i = 0; i < n; i++) {
        float f = frand(lo, hi);
        char *p = (char *)b.mem + (size_t)i * es;
        switch (dt) {
        case ACL_FLOAT: memcpy(p, &f, 4); break;
        case ACL_DOUBLE: { double d = f; memcpy(p, &d, 8); break; }
        case ACL_FLOAT16: { uint16_t h = acl_f32_to_f16(f); memcpy(p, &h, 2); break; }
        case ACL_BF16: { uint16_t h = acl_f32_to_bf16(f); memcpy(p, &h, 2); break; }
        case ACL_BOOL: *p = frand(0, 1) < lo; break;
        default: break;
        }
    }
    int64_t st = n;
    b.t = aclCreateTensor(dims, (uint64_t)nd, dt, NULL, 0, ACL_FORMAT_ND, &st, 1, b.mem);
    return b;
}

static void bfree(btensor *b)
{
    aclDestroyTensor(b->t);
    free(b->mem);
}

/* ---- memcpy baseline with the same thread count ---- */
typedef struct { char *dst; const char *src; size_t n; } cp_job;
static void cp_range(void *p, int64_t b, int64_t e)
{
    cp_job *j = p;
    size_t lo = (size_t)b << 20, hi = (size_t)e << 20;
    if (hi > j->n) hi = j->n;
    memcpy(j->dst + lo, j->src + lo, hi - lo);
}

static double best_copy(size_t bytes, int reps)
{
    char *src = malloc(bytes), *dst = malloc(bytes);
    memset(src, 1, bytes);
    memset(dst, 2, bytes);
    cp_job j = {dst, src, bytes};
    double best = 1e30;
    for (int r = 0; r < reps + 1; r++) {
        double t0 = now();
        acl_parallel_for((int64_t)((bytes + (1 << 20) - 1) >> 20), 1, cp_range, &j);
        double t = now() - t0;
        if (r > 0 && t < best) best = t;
    }
    free(src);
    free(dst);
    return best;
}

/* ---- operator runs ---- */
typedef struct {
    const char *op, *variant;
    aclDataType dt;
    int64_t n;     /* elements of the main tensor */
    int64_t s2;    /* softmax row length */
    btensor t[6];
    int nt;
    size_t bytes;  /* moved */
} bcase;

static aclnnStatus run_case(bcase *c)
{
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    aclnnStatus st;
    if (!strcmp(c->op, "gelu_backward_v2")) {
        st = aclnnGeluBackwardV2GetWorkspaceSize(c->t[0].t, c->t[1].t, (char *)c->variant, c->t[2].t, &ws, &ex);
        if (st == 0) st = aclnnGeluBackwardV2(NULL, ws, ex, NULL);
    } else if (!strcmp(c->op, "softplus_backward")) {
        float b = 1.0f, th = 20.0f;
        aclScalar *beta = aclCreateScalar(&b, ACL_FLOAT), *thr = aclCreateScalar(&th, ACL_FLOAT);
        st = aclnnSoftplusBackwardGetWorkspaceSize(c->t[0].t, c->t[1].t, beta, thr, c->t[2].t, &ws, &ex);
        if (st == 0) st = aclnnSoftplusBackward(NULL, ws, ex, NULL);
        aclDestroyScalar(beta);
        aclDestroyScalar(thr);
    } else if (!strcmp(c->op, "logit_grad")) {
        st = aclnnLogitGradGetWorkspaceSize(c->t[0].t, c->t[1].t, 1e-6, c->t[2].t, &ws, &ex);
        if (st == 0) st = aclnnLogitGrad(NULL, ws, ex, NULL);
    } else if (!strcmp(c->op, "scaled_masked_softmax_backward")) {
        st = aclnnScaledMaskedSoftmaxBackwardGetWorkspaceSize(c->t[0].t, c->t[1].t, c->t[2].t, 0.125, false,
                                                              c->t[3].t, &ws, &ex);
        if (st == 0) st = aclnnScaledMaskedSoftmaxBackward(NULL, ws, ex, NULL);
    } else {
        st = aclnnNsaCompressGradGetWorkspaceSize(c->t[0].t, c->t[1].t, c->t[2].t, NULL, 32, 16, 0, "TND",
                                                  c->t[3].t, c->t[4].t, &ws, &ex);
        if (st == 0) st = aclnnNsaCompressGrad(NULL, ws, ex, NULL);
    }
    return st;
}

static void setup(bcase *c)
{
    int64_t d1[1] = {c->n};
    c->nt = 0;
    if (!strcmp(c->op, "gelu_backward_v2") || !strcmp(c->op, "softplus_backward")) {
        c->t[0] = mk(c->dt, 1, d1, -3, 3);
        c->t[1] = mk(c->dt, 1, d1, -6, 6);
        c->t[2] = mk(c->dt, 1, d1, 0, 0);
        c->nt = 3;
    } else if (!strcmp(c->op, "logit_grad")) {
        c->t[0] = mk(c->dt, 1, d1, 0, 1);
        c->t[1] = mk(c->dt, 1, d1, -3, 3);
        c->t[2] = mk(c->dt, 1, d1, 0, 0);
        c->nt = 3;
    } else if (!strcmp(c->op, "scaled_masked_softmax_backward")) {
        int64_t rows = c->n / c->s2, d4[4] = {1, 8, rows / 8, c->s2}, m4[4] = {1, 1, rows / 8, c->s2};
        c->t[0] = mk(c->dt, 4, d4, -1, 1);
        c->t[1] = mk(c->dt, 4, d4, 0, 2.0f / (float)c->s2);
        c->t[2] = mk(ACL_BOOL, 4, m4, 0.2f, 0);
        c->t[3] = mk(c->dt, 4, d4, 0, 0);
        c->nt = 4;
    } else { /* NSA: N = 4, D = 128, l = 32, d = 16, T = n / 512 */
        int64_t T = c->n / 512, C = (T - 32) / 16 + 1;
        int64_t din[3] = {T, 4, 128}, dog[3] = {C, 4, 128}, dw[2] = {32, 4};
        c->t[0] = mk(c->dt, 3, dog, -1, 1);
        c->t[1] = mk(c->dt, 3, din, -1, 1);
        c->t[2] = mk(c->dt, 2, dw, -1, 1);
        c->t[3] = mk(c->dt, 3, din, 0, 0);
        c->t[4] = mk(c->dt, 2, dw, 0, 0);
        c->nt = 5;
    }
    c->bytes = 0;
    for (int i = 0; i < c->nt; i++) c->bytes += c->t[i].bytes;
}

static const char *dtn(aclDataType dt)
{
    return dt == ACL_FLOAT ? "f32" : dt == ACL_FLOAT16 ? "f16" : dt == ACL_BF16 ? "bf16" : "f64";
}

int main(int argc, char **argv)
{
    int quick = 0;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) quick = 1;
        else if (!strcmp(argv[i], "--op") && i + 1 < argc) only = argv[++i];
    }
    struct { const char *op, *variant; aclDataType dts[4]; int ndt; } ops[] = {
        {"gelu_backward_v2", "none", {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}, 3},
        {"gelu_backward_v2", "tanh", {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}, 3},
        {"softplus_backward", "", {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE}, 4},
        {"logit_grad", "", {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}, 3},
        {"scaled_masked_softmax_backward", "", {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}, 3},
        {"nsa_compress_grad", "", {ACL_FLOAT16, ACL_BF16}, 2},
    };
    const int64_t sizes[2] = {1 << 20, 1 << 24};
    printf("%-31s %-5s %-5s %9s %6s %3s %10s %8s %8s %6s\n", "operator", "var", "dtype", "elements", "row",
           "thr", "time_ms", "GB/s", "copyGB/s", "ratio");
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
        if (only && strcmp(only, ops[o].op)) continue;
        for (int d = 0; d < ops[o].ndt; d++)
            for (int si = 0; si < (quick ? 1 : 2); si++) {
                int is_sms = !strcmp(ops[o].op, "scaled_masked_softmax_backward");
                for (int rl = 0; rl < (is_sms ? 2 : 1); rl++) {
                    bcase c;
                    memset(&c, 0, sizeof c);
                    c.op = ops[o].op;
                    c.variant = ops[o].variant;
                    c.dt = ops[o].dts[d];
                    c.n = sizes[si];
                    c.s2 = is_sms ? (rl ? 4096 : 1024) : 0;
                    setup(&c);
                    int reps = quick ? 1 : si == 0 ? 10 : 3;
                    for (int threads = 1; threads <= 2; threads++) {
                        aclconformSetNumThreads(threads);
                        double copy = best_copy(c.bytes / 2, reps);
                        double best = 1e30;
                        for (int r = 0; r < reps + 1; r++) {
                            double t0 = now();
                            aclnnStatus st = run_case(&c);
                            double t = now() - t0;
                            if (st != 0) { fprintf(stderr, "%s failed: %d\n", c.op, (int)st); return 1; }
                            if (r > 0 && t < best) best = t;
                        }
                        double gbs = (double)c.bytes / best * 1e-9, cgbs = (double)c.bytes / copy * 1e-9;
                        printf("%-31s %-5s %-5s %9lld %6lld %3d %10.2f %8.2f %8.2f %5.1f%%\n", c.op, c.variant, dtn(c.dt),
                               (long long)c.n, (long long)c.s2, threads, best * 1e3, gbs, cgbs, 100 * gbs / cgbs);
                        fflush(stdout);
                    }
                    for (int i = 0; i < c.nt; i++) bfree(&c.t[i]);
                }
            }
    }
    aclconformSetNumThreads(0);
    return 0;
}
