/* bench_ab: two builds of a CANN-ABI library in one process, alternated call by call (round 33).
 *
 *     bench_ab A.so B.so --op OP [--dtype D] [--variant V] [--n N] [--reps R] [--threads T]
 *
 * Both libraries are dlopen'ed (RTLD_LOCAL: each keeps its own symbols and state; give two files,
 * a copy for A against itself), each builds its own aclTensor views of the same input buffers, and
 * the calls alternate A B, B A, A B, .. so that neither always runs first.  Printed: each
 * library's best and median time, and B/A of the bests and the median of the per-pair ratios
 * (below 1: B is faster); then whether the two outputs are the same bits (a refactor's check).
 * Exit 0 when both ran and the bits are the same, 1 when they differ, 2 on bad use or a failed
 * call.
 *
 * Why: bench_torch.py and scripts/ab.sh time through Python at 1 Mi and 16 Mi elements, where the
 * shared machine moves a row by 5-20 % between rounds; in this process, in cache (the default
 * 256 Ki elements, 1 thread), best of 200, the same library against a copy of itself reads within
 * 1 %.  The in-cache time is the compute cost the memory-bound rows are capped by (bench_speed's
 * cache_ms); --n 16777216 --threads 2 gives the bench table's rows.  A 16-bit Softplus row
 * defaults to 1 Mi elements (in L3), the size from which its AVX2 table kernel runs.
 *
 * The rows are bench_speed's: Gelu and Softplus inputs in [-3, 3] and [-6, 6] (beta 1, threshold
 * 20), LogitGrad x in [0, 1] and dy in [-3, 3] (eps 1e-6), ScaledMaskedSoftmaxBackward
 * [1, 8, rows/8, 1024] with the mask broadcast over the 8 heads (scale 0.125), NsaCompressGrad TND
 * N 4, D 128, l 32, d 16 (T = n / (N·D)); --nsa N,D sets other heads and head sizes for the same
 * elements (round 33's per-(token, head) cost: D 128 to 1024 at N 1). */
#include <dlfcn.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aclnn/acl_meta.h"
#include "ops/softplus_backward.h" /* SP16_LUT_MIN */
#include "runtime/conv.h" /* the scalar conversions only: static inline, nothing linked */

typedef aclTensor *(*create_fn)(const int64_t *, uint64_t, aclDataType, const int64_t *, int64_t, aclFormat,
                                const int64_t *, uint64_t, void *);
typedef aclnnStatus (*destroy_fn)(const aclTensor *);
typedef aclScalar *(*scalar_fn)(void *, aclDataType);
typedef aclnnStatus (*dscalar_fn)(const aclScalar *);
typedef aclnnStatus (*exec_fn)(void *, uint64_t, aclOpExecutor *, void *);
typedef void (*threads_fn)(int);

typedef struct {
    void *h;
    create_fn create;
    destroy_fn destroy;
    scalar_fn scalar;
    dscalar_fn dscalar;
    void *ws, *run; /* the operator's GetWorkspaceSize and execute */
} lib;

enum { MAXT = 5 };
typedef struct {
    const char *op, *variant;
    aclDataType dt;
    int nt, nout;              /* tensors, the last nout of them outputs */
    int nd[MAXT];
    aclDataType tdt[MAXT];
    int64_t dims[MAXT][4];
    size_t bytes[MAXT];
    void *mem[MAXT], *outb[MAXT]; /* outputs: A's run copied to outb before B's */
} bcase;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static size_t dt_size(aclDataType dt)
{
    return dt == ACL_DOUBLE ? 8 : dt == ACL_FLOAT ? 4 : dt == ACL_BOOL ? 1 : 2;
}

/* tensor i: nd dims, values uniform in [lo, hi) (a bool tensor: true with probability lo) */
static void add_tensor(bcase *c, int i, aclDataType dt, int nd, const int64_t *dims, double lo, double hi,
                       uint64_t *s)
{
    size_t n = 1;
    c->nd[i] = nd;
    c->tdt[i] = dt;
    for (int k = 0; k < nd; k++) c->dims[i][k] = dims[k], n *= (size_t)dims[k];
    c->bytes[i] = n * dt_size(dt);
    c->mem[i] = malloc(c->bytes[i]);
    if (!c->mem[i]) { fprintf(stderr, "bench_ab: out of memory\n"); exit(2); }
    for (size_t e = 0; e < n; e++) {
        *s = *s * 6364136223846793005ull + 1442695040888963407ull;
        double u = (double)(*s >> 11) * 0x1p-53, v = lo + (hi - lo) * u;
        switch (dt) {
        case ACL_DOUBLE: ((double *)c->mem[i])[e] = v; break;
        case ACL_FLOAT: ((float *)c->mem[i])[e] = (float)v; break;
        case ACL_FLOAT16: ((uint16_t *)c->mem[i])[e] = acl_f32_to_f16((float)v); break;
        case ACL_BF16: ((uint16_t *)c->mem[i])[e] = acl_f32_to_bf16((float)v); break;
        default: ((uint8_t *)c->mem[i])[e] = u < lo; break;
        }
    }
}

static aclTensor *view(const lib *L, const bcase *c, int i)
{
    int64_t st[4];
    st[c->nd[i] - 1] = 1;
    for (int k = c->nd[i] - 2; k >= 0; k--) st[k] = st[k + 1] * c->dims[i][k + 1];
    return L->create(c->dims[i], (uint64_t)c->nd[i], c->tdt[i], st, 0, ACL_FORMAT_ND, c->dims[i],
                     (uint64_t)c->nd[i], c->mem[i]);
}

static bool setup(bcase *c, int64_t n, int64_t nsa_n, int64_t nsa_d)
{
    uint64_t s = 0x5eedull;
    const char *op = c->op;
    bool gelu_like = !strcmp(op, "gelu_backward_v2") || !strcmp(op, "softplus_backward");
    if (gelu_like || !strcmp(op, "logit_grad")) {
        int64_t d1[1] = {n};
        add_tensor(c, 0, c->dt, 1, d1, gelu_like ? -3 : 0, gelu_like ? 3 : 1, &s);
        add_tensor(c, 1, c->dt, 1, d1, gelu_like ? -6 : -3, gelu_like ? 6 : 3, &s);
        add_tensor(c, 2, c->dt, 1, d1, 0, 0, &s);
        c->nt = 3, c->nout = 1;
    } else if (!strcmp(op, "scaled_masked_softmax_backward")) {
        int64_t rows = n / 1024;
        if (rows < 8) return false;
        int64_t d4[4] = {1, 8, rows / 8, 1024}, m4[4] = {1, 1, rows / 8, 1024};
        add_tensor(c, 0, c->dt, 4, d4, -1, 1, &s);
        add_tensor(c, 1, c->dt, 4, d4, 0, 2.0 / 1024, &s);
        add_tensor(c, 2, ACL_BOOL, 4, m4, 0.2, 0, &s);
        add_tensor(c, 3, c->dt, 4, d4, 0, 0, &s);
        c->nt = 4, c->nout = 1;
    } else if (!strcmp(op, "nsa_compress_grad")) {
        int64_t T = n / (nsa_n * nsa_d), C = (T - 32) / 16 + 1;
        if (T < 32) return false;
        int64_t din[3] = {T, nsa_n, nsa_d}, dog[3] = {C, nsa_n, nsa_d}, dw[2] = {32, nsa_n};
        add_tensor(c, 0, c->dt, 3, dog, -1, 1, &s);
        add_tensor(c, 1, c->dt, 3, din, -1, 1, &s);
        add_tensor(c, 2, c->dt, 2, dw, -1, 1, &s);
        add_tensor(c, 3, c->dt, 3, din, 0, 0, &s);
        add_tensor(c, 4, c->dt, 2, dw, 0, 0, &s);
        c->nt = 5, c->nout = 2;
    } else
        return false;
    for (int i = c->nt - c->nout; i < c->nt; i++)
        if (!(c->outb[i] = malloc(c->bytes[i]))) return false;
    return true;
}

static const char *sym_base(const char *op)
{
    return !strcmp(op, "gelu_backward_v2")                 ? "aclnnGeluBackwardV2"
           : !strcmp(op, "softplus_backward")              ? "aclnnSoftplusBackward"
           : !strcmp(op, "logit_grad")                     ? "aclnnLogitGrad"
           : !strcmp(op, "scaled_masked_softmax_backward") ? "aclnnScaledMaskedSoftmaxBackward"
                                                           : "aclnnNsaCompressGrad";
}

static bool open_lib(lib *L, const char *path, const char *op, int threads)
{
    char name[96];
    L->h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!L->h) { fprintf(stderr, "bench_ab: %s\n", dlerror()); return false; }
    L->create = (create_fn)dlsym(L->h, "aclCreateTensor");
    L->destroy = (destroy_fn)dlsym(L->h, "aclDestroyTensor");
    L->scalar = (scalar_fn)dlsym(L->h, "aclCreateScalar");
    L->dscalar = (dscalar_fn)dlsym(L->h, "aclDestroyScalar");
    snprintf(name, sizeof name, "%sGetWorkspaceSize", sym_base(op));
    L->ws = dlsym(L->h, name);
    L->run = dlsym(L->h, sym_base(op));
    if (!L->create || !L->destroy || !L->scalar || !L->dscalar || !L->ws || !L->run) {
        fprintf(stderr, "bench_ab: %s: missing symbols for %s\n", path, op);
        return false;
    }
    threads_fn set = (threads_fn)dlsym(L->h, "aclconformSetNumThreads");
    if (set) set(threads);
    else if (threads > 0) fprintf(stderr, "bench_ab: %s has no aclconformSetNumThreads: its own thread count\n", path);
    return true;
}

/* one call of the operator through library L; its time in *ms */
static aclnnStatus run_once(const lib *L, const bcase *c, double *ms)
{
    aclTensor *t[MAXT] = {0};
    for (int i = 0; i < c->nt; i++) t[i] = view(L, c, i);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    aclnnStatus st;
    void *wsp = NULL;
    double t0 = now();
    if (!strcmp(c->op, "gelu_backward_v2")) {
        st = ((aclnnStatus(*)(const aclTensor *, const aclTensor *, char *, aclTensor *, uint64_t *,
                              aclOpExecutor **))L->ws)(t[0], t[1], (char *)c->variant, t[2], &ws, &ex);
    } else if (!strcmp(c->op, "softplus_backward")) {
        float b = 1.0f, th = 20.0f;
        aclScalar *beta = L->scalar(&b, ACL_FLOAT), *thr = L->scalar(&th, ACL_FLOAT);
        st = ((aclnnStatus(*)(const aclTensor *, const aclTensor *, const aclScalar *, const aclScalar *, aclTensor *,
                              uint64_t *, aclOpExecutor **))L->ws)(t[0], t[1], beta, thr, t[2], &ws, &ex);
        L->dscalar(beta);
        L->dscalar(thr);
    } else if (!strcmp(c->op, "logit_grad")) {
        st = ((aclnnStatus(*)(const aclTensor *, const aclTensor *, double, aclTensor *, uint64_t *,
                              aclOpExecutor **))L->ws)(t[0], t[1], 1e-6, t[2], &ws, &ex);
    } else if (!strcmp(c->op, "scaled_masked_softmax_backward")) {
        st = ((aclnnStatus(*)(const aclTensor *, const aclTensor *, const aclTensor *, double, bool, aclTensor *,
                              uint64_t *, aclOpExecutor **))L->ws)(t[0], t[1], t[2], 0.125, false, t[3], &ws, &ex);
    } else {
        st = ((aclnnStatus(*)(const aclTensor *, const aclTensor *, const aclTensor *, const aclIntArray *, int64_t,
                              int64_t, int64_t, char *, const aclTensor *, const aclTensor *, uint64_t *,
                              aclOpExecutor **))L->ws)(t[0], t[1], t[2], NULL, 32, 16, 0, "TND", t[3], t[4], &ws, &ex);
    }
    if (st == ACLNN_SUCCESS && ws) wsp = malloc(ws);
    if (st == ACLNN_SUCCESS) st = ((exec_fn)L->run)(wsp, ws, ex, NULL);
    *ms = (now() - t0) * 1e3;
    free(wsp);
    for (int i = 0; i < c->nt; i++) L->destroy(t[i]);
    return st;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static aclDataType parse_dt(const char *s)
{
    return !strcmp(s, "f32") ? ACL_FLOAT : !strcmp(s, "f16") ? ACL_FLOAT16 : !strcmp(s, "bf16") ? ACL_BF16
         : !strcmp(s, "f64") ? ACL_DOUBLE : ACL_DT_UNDEFINED;
}

int main(int argc, char **argv)
{
    const char *usage = "usage: bench_ab A.so B.so --op OP [--dtype f32|f16|bf16|f64] [--variant none|tanh] "
                        "[--n N] [--reps R] [--threads T] [--nsa HEADS,D]\n";
    if (argc < 3 || argv[1][0] == '-' || argv[2][0] == '-') { fputs(usage, stderr); return 2; }
    bcase c = {.op = NULL, .variant = "none", .dt = ACL_FLOAT16};
    long long n = 262144, reps = 200, threads = 1, nsa_n = 4, nsa_d = 128;
    bool n_given = false;
    for (int i = 3; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        if (!v) { fprintf(stderr, "bench_ab: %s needs a value\n%s", a, usage); return 2; }
        if (!strcmp(a, "--op")) c.op = v;
        else if (!strcmp(a, "--variant")) c.variant = v;
        else if (!strcmp(a, "--nsa")) {
            if (sscanf(v, "%lld,%lld", &nsa_n, &nsa_d) != 2 || nsa_n < 1 || nsa_n > 4096 || nsa_d < 16 || nsa_d > 65536 ||
                nsa_d % 16) {
                fprintf(stderr, "bench_ab: --nsa %s: HEADS,D with D a multiple of 16\n", v);
                return 2;
            }
        }
        else if (!strcmp(a, "--dtype")) {
            if ((c.dt = parse_dt(v)) == ACL_DT_UNDEFINED) { fprintf(stderr, "bench_ab: --dtype %s: f32, f16, bf16 or f64\n", v); return 2; }
        } else if (!strcmp(a, "--n") || !strcmp(a, "--reps") || !strcmp(a, "--threads")) {
            long long x = strtoll(v, &end, 0);
            if (*end || x < 1 || (a[2] == 'n' && (x < 4096 || x > (1ll << 31))) || (a[2] == 'r' && x > 100000) ||
                (a[2] == 't' && x > 256)) {
                fprintf(stderr, "bench_ab: %s %s: out of range\n", a, v);
                return 2;
            }
            *(a[2] == 'n' ? &n : a[2] == 'r' ? &reps : &threads) = x;
            n_given = n_given || a[2] == 'n';
        } else { fprintf(stderr, "bench_ab: unknown option %s\n%s", a, usage); return 2; }
        i++;
    }
    if (!c.op) { fprintf(stderr, "bench_ab: --op is required\n%s", usage); return 2; }
    if (!strcmp(c.op, "gelu_backward_v2") && strcmp(c.variant, "none") && strcmp(c.variant, "tanh")) {
        fprintf(stderr, "bench_ab: --variant %s: none or tanh\n", c.variant);
        return 2;
    }
    /* a 16-bit Softplus row without --n: SP16_LUT_MIN elements, where the AVX2 table kernel the
     * bench table's rows run starts; at 256 Ki the direct kernel would be timed instead (round 34) */
    if (!n_given && !strcmp(c.op, "softplus_backward") && (c.dt == ACL_FLOAT16 || c.dt == ACL_BF16)) {
        n = SP16_LUT_MIN;
        printf("bench_ab: --n %lld (a 16-bit Softplus row: the AVX2 table kernel runs from that size)\n", n);
    }
    if (!setup(&c, (int64_t)n, nsa_n, nsa_d)) { fprintf(stderr, "bench_ab: --op %s: unknown, or --n too small for it\n", c.op); return 2; }
    lib L[2];
    for (int k = 0; k < 2; k++)
        if (!open_lib(&L[k], argv[1 + k], c.op, (int)threads)) return 2;
    double *t[2] = {malloc((size_t)reps * sizeof(double)), malloc((size_t)reps * sizeof(double))};
    double *ratio = malloc((size_t)reps * sizeof(double));
    if (!t[0] || !t[1] || !ratio) { fprintf(stderr, "bench_ab: out of memory\n"); return 2; }
    bool same = true;
    size_t differ = 0;
    for (long long r = -1; r < reps; r++) { /* r = -1: a warm-up pair, and the bits compared */
        for (int k = 0; k < 2; k++) {
            int which = r % 2 == 0 ? 1 - k : k; /* A B, then B A, .. */
            double ms;
            aclnnStatus st = run_once(&L[which], &c, &ms);
            if (st != ACLNN_SUCCESS) { fprintf(stderr, "bench_ab: %s returned %d\n", argv[1 + which], (int)st); return 2; }
            if (r >= 0) t[which][r] = ms;
            if (r < 0 && which == 0)
                for (int i = c.nt - c.nout; i < c.nt; i++) memcpy(c.outb[i], c.mem[i], c.bytes[i]);
        }
        if (r < 0) /* the warm-up ran A then B: B's outputs against A's */
            for (int i = c.nt - c.nout; i < c.nt; i++)
                for (size_t e = 0; e < c.bytes[i]; e++)
                    if (((uint8_t *)c.outb[i])[e] != ((uint8_t *)c.mem[i])[e]) same = false, differ++;
        if (r >= 0) ratio[r] = t[1][r] / t[0][r];
    }
    double best[2], med[2];
    for (int k = 0; k < 2; k++) {
        best[k] = t[k][0];
        for (long long r = 1; r < reps; r++) best[k] = fmin(best[k], t[k][r]);
        med[k] = median(t[k], (int)reps);
    }
    printf("%s%s%s %s n %lld threads %lld reps %lld", c.op, strcmp(c.op, "gelu_backward_v2") ? "" : " ",
           strcmp(c.op, "gelu_backward_v2") ? "" : c.variant,
           c.dt == ACL_FLOAT ? "f32" : c.dt == ACL_FLOAT16 ? "f16" : c.dt == ACL_BF16 ? "bf16" : "f64", n, threads, reps);
    if (!strcmp(c.op, "nsa_compress_grad")) printf(" heads %lld D %lld", nsa_n, nsa_d);
    printf("\n");
    printf("  A %s: best %.4f ms, median %.4f ms\n  B %s: best %.4f ms, median %.4f ms\n", argv[1], best[0], med[0],
           argv[2], best[1], med[1]);
    printf("  B/A: best %.3f, median of pairs %.3f\n", best[1] / best[0], median(ratio, (int)reps));
    if (same) printf("  outputs: the same bits\n");
    else printf("  outputs: differ in %zu bytes\n", differ);
    free(t[0]);
    free(t[1]);
    free(ratio);
    for (int i = 0; i < c.nt; i++) free(c.mem[i]), free(c.outb[i]);
    return same ? 0 : 1;
}
