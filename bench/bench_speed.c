/* Speed table of the built-in operators against a STREAM triad measured in the same process.
 *
 * For every row (operator × variant × dtype) the bytes the operator must move are counted (every
 * input element read once, every output element written once), and a float triad
 * a[i] = b[i] + s·c[i] moving the same number of bytes (2 reads, 1 write) is timed with the same
 * thread count.  Op and triad runs alternate; each is the best of --reps runs after one warm-up
 * (STREAM's convention: on a shared machine the fastest run is the one least disturbed; --median
 * reports medians instead).  GB/s = counted bytes / time; "triad%" = triad time / op time:
 * 100 % means the operator moves its bytes as fast as the triad (the memory wall).  Absolute
 * times move with the machine's load; the ratio, measured in the same process a few ms apart, is
 * the number to compare.
 *
 * cache_ms: the same row run on a working set that stays in cache (256 Ki elements per thread:
 * L2 + L3, a fraction of the 32 MiB L3 here; same thread count, repeated and scaled to --n
 * elements): the operator's compute time with memory traffic almost free (smaller runs were
 * dominated by the parallel-for's fixed cost; at this size the 16-bit Gelu table kernel
 * applies; 16-bit Softplus rows take at least SP16_LUT_MIN = 1 Mi elements, where its AVX2 table
 * kernel starts).  cap% = triad_ms / max(cache_ms, triad_ms): the triad% this kernel would reach if its arithmetic overlapped its memory traffic
 * perfectly.  A row whose cap% is below its target is bound by the instructions it executes per
 * element, not by bandwidth.
 *
 *   usage: bench_speed [--n ELEMENTS] [--reps R] [--threads T] [--op NAME] [--dtype D] [--median]
 *                      [--tsv] [--peer FILE] [--offset B] [--no-layouts]
 *   defaults: --n 16777216 (16 Mi) --reps 5 --threads 2
 * After the main table come the layout rows (layout_rows: the elementwise rows on strided,
 * transposed and broadcast input views, timed against the same rows on contiguous inputs);
 * --no-layouts leaves them out.
 * --offset B puts every operator array B bytes (0..4095) past the start of a page instead of where
 * malloc puts it (glibc: 16 bytes past a page for large arrays); the triad's arrays stay malloc's.
 * --offset 0 against the default shows what alignment is worth to a row (round 13).
 * --tsv prints tab-separated rows (op, variant, dtype, n, op_ms, triad_ms, bytes[, the three peer
 * columns], cache_ms) for scripts.
 * --peer FILE adds the columns torch_ms, same_ms and xtorch from the lines "op variant dtype n ms
 * note [ours_ms]" (tab-separated) that bench/bench_torch.py printed for the same --n and --threads
 * (scripts/bench.sh runs both).  With ours_ms (bench_torch.py --ours: this library timed in the
 * Python process, alternating with PyTorch rep by rep) same_ms is it and xtorch = torch_ms /
 * same_ms, a ratio of two times taken side by side; without it xtorch = torch_ms / op_ms, across
 * two processes (marked '~': on a shared machine the two may see different memory bandwidths).
 * Above 1 the built-in implementation is faster. */
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
#include "runtime/ewise.h"
#include "runtime/runtime.h"
#include "ops/softplus_backward.h" /* SP16_LUT_MIN */
#include "runtime/simd256.h"

void aclconformSetNumThreads(int n);

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

typedef struct { aclTensor *t; void *mem, *base; size_t bytes; } btensor;

static long g_offset = -1; /* --offset: bytes past a page, or -1: where malloc puts it */

/* A view of nd dims with these element strides into a storage of storage_n elements, every
 * storage element drawn from [lo, hi) */
static btensor mk_view(aclDataType dt, int nd, const int64_t *dims, const int64_t *st, int64_t storage_n, float lo,
                       float hi)
{
    btensor b;
    size_t es = acl_dtype_size(dt);
    b.bytes = (size_t)storage_n * es;
    if (g_offset < 0) b.base = b.mem = malloc(b.bytes ? b.bytes : 1);
    else {
        b.base = aligned_alloc(4096, (b.bytes + (size_t)g_offset + 4096) / 4096 * 4096);
        b.mem = b.base ? (char *)b.base + g_offset : NULL;
    }
    if (!b.mem) { fprintf(stderr, "bench_speed: out of memory (%zu bytes)\n", b.bytes); exit(1); }
    for (int64_t i = 0; i < storage_n; i++) {
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
    int64_t sd[1] = {storage_n};
    b.t = aclCreateTensor(dims, (uint64_t)nd, dt, st, 0, ACL_FORMAT_ND, sd, 1, b.mem);
    return b;
}

/* a contiguous tensor */
static btensor mk(aclDataType dt, int nd, const int64_t *dims, float lo, float hi)
{
    int64_t st[4], run = 1;
    for (int k = nd - 1; k >= 0; k--) { st[k] = run; run *= dims[k]; }
    return mk_view(dt, nd, dims, st, run, lo, hi);
}

/* ---- triad ---- */
typedef struct { float *a; const float *b, *c; float s; } triad_job;
static void triad_range(void *p, int64_t lo, int64_t hi)
{
    triad_job *j = p;
    float *restrict a = j->a;
    const float *restrict b = j->b, *restrict c = j->c;
    for (int64_t i = lo << 12; i < hi << 12; i++) a[i] = b[i] + j->s * c[i];
}

/* Input layouts of the layout rows (printed after the main table; the issue asks for the
 * non-contiguous and broadcast paths to be reported separately).  The output is contiguous in
 * every layout; n elements either way:
 *   strided  gradOutput and x are every other element of a storage twice as long (x[::2])
 *   transp   both are [1024, n/1024] views of a contiguous [n/1024, 1024] (x.t()): neighbours of
 *            the output are 1024 elements apart in the inputs
 *   bcast    (Gelu: the one operator whose shapes broadcast) x is [n/1024] broadcast against a
 *            [1024, n/1024] gradOutput */
enum { LAY_CONTIG, LAY_STRIDED, LAY_TRANSP, LAY_BCAST };
static const char *const LAY_NAME[] = {"", "strided", "transp", "bcast"};
enum { LAY_ROWS = 1024 };

typedef struct {
    const char *op, *variant;
    aclDataType dt;
    int64_t n, s2;
    int layout;
    btensor t[6];
    int nt;
    size_t bytes;
} bcase;

/* table_floor rows: the work no 16-bit table kernel (Gelu with f16/bf16 tensors; Softplus's on
 * AVX2 since round 29, of divisors) can avoid, on the Gelu rows' inputs: per element the 16-bit loads of
 * gradOutput and x, one 4-byte load of table[x] (65536 f32 entries, a random-access working set
 * of ~25 KiB for x in [-6, 6]), an f32 product rounded to the 16-bit dtype and the store, by the
 * same AVX-512 helpers the kernels use (and, for f16, the kernel's L2 prefetch), or on a CPU
 * without AVX-512 the AVX2 ones; no fix-ups.  Its triad% is the ceiling of the table method here. */
static float g_floor_tab[65536];

typedef struct {
    const uint16_t *dy, *x;
    uint16_t *o;
    int64_t n;
    bool bf;
} floor_job;

#ifdef ACL_HAVE_AVX512_KERNELS
ACL_AVX512_TARGET static inline __attribute__((always_inline)) void
floor_step(const floor_job *j, int64_t i, int64_t left, bool bf)
{
    __mmask16 m = acl_mask16(left);
    __m512 v = _mm512_mul_ps(acl_load16_16(j->dy + i, m, bf), acl_table16(g_floor_tab, j->x + i, m));
    acl_store16_16(j->o + i, m, v, bf);
}

/* whole 16-lane steps under the constant mask, as the kernels' ACL_STEPS32_PF: both inputs
 * prefetched into L2, a line of each per 32 elements (acl_prefetch_pass_u16), as Gelu's 16-bit
 * kernels since round 19; bf a constant once inlined */
ACL_AVX512_TARGET static inline __attribute__((always_inline)) void
floor_span(const floor_job *j, int64_t lo, int64_t hi, bool bf)
{
    int64_t i = lo;
    for (; i + 32 <= hi; i += 32) {
        acl_prefetch_pass_u16(j->dy + i, j->x + i);
        floor_step(j, i, 16, bf);
        floor_step(j, i + 16, 16, bf);
    }
    for (; i + 16 <= hi; i += 16) floor_step(j, i, 16, bf);
    if (i < hi) floor_step(j, i, hi - i, bf);
}

ACL_AVX512_TARGET static void floor_avx512(const floor_job *j, int64_t lo, int64_t hi)
{
    if (j->bf) floor_span(j, lo, hi, true);
    else floor_span(j, lo, hi, false);
}
#endif

#ifdef ACL_HAVE_AVX2_KERNELS
/* The same floor on AVX2 (CPUs without AVX-512, such as Zen 3; round 32): the 16-bit table
 * kernels' own AVX2 helpers and drivers (ACL_U16_KERNELS8: passes of 32 elements after
 * acl_prefetch_pass_u16; f16 in 8-lane steps, acl_table8_ps's eight scalar loads; bf16 in the
 * even / odd split of 16, acl_table16_eo_ps), with the step cut down to the table read, the f32
 * product and the rounding to 16 bits: Gelu's 16-bit step without its zero test, Softplus's
 * with a product for its division. */
ACL_AVX2_TARGET static inline __attribute__((always_inline)) void
floor8_step(const void *ctx, const uint16_t *dy, const uint16_t *x, uint16_t *out, int64_t left, bool bf)
{
    __m256 g = acl_table8_ps(ctx, x, left), d = acl_load8_16_left(dy, left, bf);
    acl_store8_16_left(out, left, _mm256_mul_ps(d, g), bf);
}

ACL_AVX2_TARGET static inline __attribute__((always_inline)) void
floor16_step_eo(const void *ctx, const uint16_t *dy, const uint16_t *x, uint16_t *out)
{
    __m256 g[2], d[2];
    acl_table16_eo_ps(ctx, x, &g[0], &g[1]);
    acl_load16_bf16_eo(dy, &d[0], &d[1]);
    _mm256_storeu_si256((__m256i *)(void *)out,
                        acl_pack16_bf16_eo(_mm256_mul_ps(d[0], g[0]), _mm256_mul_ps(d[1], g[1]), false));
}

ACL_U16_KERNELS8(floor8, floor8_step, floor16_step_eo)
#endif

static void floor_range(void *p, int64_t b, int64_t e)
{
    const floor_job *j = p;
    int64_t lo = b * 1024, hi = e * 1024 < j->n ? e * 1024 : j->n;
#ifdef ACL_HAVE_AVX512_KERNELS
    if (acl_have_avx512()) {
        floor_avx512(j, lo, hi);
        return;
    }
#endif
    for (int64_t i = lo; i < hi; i++) {
        float d = j->bf ? acl_bf16_to_f32(j->dy[i]) : acl_f16_to_f32(j->dy[i]);
        float v = d * g_floor_tab[j->x[i]];
        j->o[i] = j->bf ? acl_f32_to_bf16(v) : acl_f32_to_f16(v);
    }
}

static void run_floor(const bcase *c)
{
    if (g_floor_tab[0] == 0.0f)
        for (int h = 0; h < 65536; h++) g_floor_tab[h] = 1.0f + (float)h * 0x1p-17f;
#ifdef ACL_HAVE_AVX2_KERNELS
    if (!acl_have_avx512() && acl_have_avx2()) { /* the kernels' own driver, as Gelu's AVX2 call */
        acl_view vdy, vx, vo;
        acl_view_init(&vdy, c->t[0].t);
        acl_view_init(&vx, c->t[1].t);
        acl_view_init(&vo, c->t[2].t);
        acl_ewise2_u16(&vdy, &vx, &vo, c->dt == ACL_BF16 ? floor8_bf16 : floor8_f16, g_floor_tab, false);
        return;
    }
#endif
    floor_job j = {c->t[0].mem, c->t[1].mem, c->t[2].mem, c->n, c->dt == ACL_BF16};
    acl_parallel_for((c->n + 1023) / 1024, 16, floor_range, &j);
}

static aclnnStatus run_case(bcase *c)
{
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    aclnnStatus st;
    void *wsp = NULL;
    if (!strcmp(c->op, "table_floor")) {
        run_floor(c);
        st = ACLNN_SUCCESS;
    } else if (!strcmp(c->op, "gelu_backward_v2")) {
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
        if (st == 0 && ws) wsp = malloc(ws);
        if (st == 0) st = aclnnNsaCompressGrad(wsp, ws, ex, NULL);
        free(wsp);
    }
    return st;
}

static void setup(bcase *c)
{
    int64_t d1[1] = {c->n};
    c->nt = 0;
    bool gelu_like = !strcmp(c->op, "gelu_backward_v2") || !strcmp(c->op, "softplus_backward") ||
                     !strcmp(c->op, "table_floor");
    if (gelu_like || !strcmp(c->op, "logit_grad")) {
        /* the two inputs' value ranges (LogitGrad's first input is x) */
        float lo0 = gelu_like ? -3 : 0, hi0 = gelu_like ? 3 : 1, lo1 = gelu_like ? -6 : -3, hi1 = gelu_like ? 6 : 3;
        int64_t C = c->n / LAY_ROWS, d2[2] = {LAY_ROWS, C}, s1[1] = {2}, sT[2] = {1, LAY_ROWS};
        switch (c->layout) {
        case LAY_STRIDED:
            c->t[0] = mk_view(c->dt, 1, d1, s1, 2 * c->n - 1, lo0, hi0);
            c->t[1] = mk_view(c->dt, 1, d1, s1, 2 * c->n - 1, lo1, hi1);
            c->t[2] = mk(c->dt, 1, d1, 0, 0);
            break;
        case LAY_TRANSP:
            c->t[0] = mk_view(c->dt, 2, d2, sT, c->n, lo0, hi0);
            c->t[1] = mk_view(c->dt, 2, d2, sT, c->n, lo1, hi1);
            c->t[2] = mk(c->dt, 2, d2, 0, 0);
            break;
        case LAY_BCAST: /* x (t[1]) is one row, broadcast over the 1024 rows of gradOutput */
            c->t[0] = mk(c->dt, 2, d2, lo0, hi0);
            c->t[1] = mk(c->dt, 1, &C, lo1, hi1);
            c->t[2] = mk(c->dt, 2, d2, 0, 0);
            break;
        default:
            c->t[0] = mk(c->dt, 1, d1, lo0, hi0);
            c->t[1] = mk(c->dt, 1, d1, lo1, hi1);
            c->t[2] = mk(c->dt, 1, d1, 0, 0);
        }
        c->nt = 3;
    } else if (!strcmp(c->op, "scaled_masked_softmax_backward")) {
        /* [1, 8, rows/8, S2] with a [1, 1, rows/8, S2] mask broadcast over the 8 heads */
        int64_t rows = c->n / c->s2, d4[4] = {1, 8, rows / 8, c->s2}, m4[4] = {1, 1, rows / 8, c->s2};
        c->t[0] = mk(c->dt, 4, d4, -1, 1);
        c->t[1] = mk(c->dt, 4, d4, 0, 2.0f / (float)c->s2);
        c->t[2] = mk(ACL_BOOL, 4, m4, 0.2f, 0);
        c->t[3] = mk(c->dt, 4, d4, 0, 0);
        c->nt = 4;
    } else { /* NSA: TND, N = 4, D = 128, l = 32, d = 16, T = n / 512 */
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

static void teardown(bcase *c)
{
    for (int i = 0; i < c->nt; i++) {
        aclDestroyTensor(c->t[i].t);
        free(c->t[i].base);
    }
}

static const char *dtn(aclDataType dt)
{
    return dt == ACL_FLOAT ? "f32" : dt == ACL_FLOAT16 ? "f16" : dt == ACL_BF16 ? "bf16" : "f64";
}

/* --peer: PyTorch's time per row (bench/bench_torch.py) */
typedef struct { char op[40], variant[24], dtype[8]; long long n; double ms, ours_ms; } peer_row;
static peer_row g_peer[128];
static int g_npeer;

static void load_peer(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) { fprintf(stderr, "bench_speed: cannot read %s\n", path); exit(2); }
    char line[512];
    while (g_npeer < (int)(sizeof g_peer / sizeof g_peer[0]) && fgets(line, sizeof line, f)) {
        peer_row *r = &g_peer[g_npeer];
        r->ours_ms = -1;
        if (sscanf(line, "%39[^\t]\t%23[^\t]\t%7[^\t]\t%lld\t%lf", r->op, r->variant, r->dtype, &r->n, &r->ms) == 5) {
            /* the optional 7th field (after the note) */
            const char *t = line;
            for (int k = 0; k < 6 && t; k++) {
                t = strchr(t, '\t');
                if (t) t++;
            }
            if (t) r->ours_ms = strtod(t, NULL);
            g_npeer++;
        }
    }
    fclose(f);
}

static const peer_row *peer_find(const char *op, const char *variant, const char *dtype, long long n)
{
    for (int i = 0; i < g_npeer; i++)
        if (!strcmp(g_peer[i].op, op) && !strcmp(g_peer[i].variant, variant) &&
            !strcmp(g_peer[i].dtype, dtype) && g_peer[i].n == n)
            return &g_peer[i];
    return NULL;
}

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof v[0], cmpd);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double best(const double *v, int n)
{
    double b = v[0];
    for (int i = 1; i < n; i++) b = v[i] < b ? v[i] : b;
    return b;
}

/* reps times in seconds -> the row's figure in ms: their best, or (--median) their median */
static double summary_ms(double *v, int reps, int use_median)
{
    return (use_median ? median(v, reps) : best(v, reps)) * 1e3;
}

/* The peer columns of a row (empty without --peer): torch_ms, same_ms and xtorch from pr, or
 * with no same_ms xtorch across the two processes against op_ms ('~'), or dashes without pr. */
static void peer_cols(char *buf, size_t size, const peer_row *pr, int tsv, double op_ms)
{
    buf[0] = 0;
    if (pr && pr->ours_ms > 0)
        snprintf(buf, size, tsv ? "\t%.3f\t%.3f\t%.3f" : " %9.2f %8.2f %6.2fx", pr->ms, pr->ours_ms, pr->ms / pr->ours_ms);
    else if (pr && pr->ms > 0 && tsv)
        snprintf(buf, size, "\t%.3f\t-\t%.3f", pr->ms, pr->ms / op_ms);
    else if (pr && pr->ms > 0)
        snprintf(buf, size, " %9.2f %8s ~%5.2fx", pr->ms, "-", pr->ms / op_ms);
    else if (g_npeer)
        snprintf(buf, size, tsv ? "\t-\t-\t-" : " %9s %8s %7s", "-", "-", "-");
}

/* The rows: operator × variant × dtypes.  The first four are the elementwise operators, which
 * the layout rows take too. */
typedef struct { const char *op, *variant; aclDataType dts[4]; int ndt; } row_spec;
static const row_spec ROWS[] = {
    {"gelu_backward_v2", "none", {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}, 3},
    {"gelu_backward_v2", "tanh", {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}, 3},
    {"softplus_backward", "-", {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE}, 4},
    {"logit_grad", "-", {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}, 3},
    {"scaled_masked_softmax_backward", "S2=1024", {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}, 3},
    {"nsa_compress_grad", "TND", {ACL_FLOAT16, ACL_BF16}, 2},
    {"table_floor", "-", {ACL_FLOAT16, ACL_BF16}, 2}, /* a reference row, not an operator */
};
enum { ROWS_ELEMENTWISE = 4 };

/* the bcase of row r in dtype dt, n elements, set up in this layout */
static bcase row_case(const row_spec *r, aclDataType dt, int64_t n, int layout)
{
    bcase c;
    memset(&c, 0, sizeof c);
    c.op = r->op;
    c.variant = !strcmp(r->variant, "-") ? "" : r->variant;
    c.dt = dt;
    c.n = n;
    c.s2 = !strcmp(c.op, "scaled_masked_softmax_backward") ? 1024 : 0;
    c.layout = layout;
    setup(&c);
    return c;
}

/* The layout rows: each elementwise row with its inputs as views (LAY_NAME), timed alternating
 * with the same row on contiguous inputs in this process; xcontig = contiguous time / layout
 * time (below 1: the layout is that much slower).  The peer columns match bench_torch.py's rows
 * of the same views; their variant is the layout (",layout" after a variant). */
static void layout_rows(int64_t n, int reps, int use_median, int tsv, const char *only, const char *only_dt)
{
    if (n % LAY_ROWS) {
        fprintf(stderr, "bench_speed: the layout rows need --n a multiple of %d (skipped)\n", LAY_ROWS);
        return;
    }
    bool header = false;
    for (const row_spec *rs = ROWS; rs < ROWS + ROWS_ELEMENTWISE; rs++) {
        if (only && strcmp(only, rs->op)) continue;
        for (int d = 0; d < rs->ndt; d++) {
            if (only_dt && strcmp(only_dt, dtn(rs->dts[d]))) continue;
            for (int lay = LAY_STRIDED; lay <= LAY_BCAST; lay++) {
                if (lay == LAY_BCAST && strcmp(rs->op, "gelu_backward_v2")) continue;
                if (!header && !tsv)
                    printf("\n# layout rows: the inputs as views (%s), the output contiguous; contig_ms: the same row "
                           "on contiguous inputs, alternating\n%-31s %-14s %-5s %9s %8s %9s %8s%s\n",
                           "strided: x[::2]; transp: x.t() of [n/1024, 1024]; bcast: x [n/1024] against [1024, n/1024]",
                           "operator", "variant", "dtype", "elements", "op_ms", "contig_ms", "xcontig",
                           g_npeer ? "  torch_ms  same_ms  xtorch" : "");
                header = true;
                bcase c = row_case(rs, rs->dts[d], n, lay), c0 = row_case(rs, rs->dts[d], n, LAY_CONTIG);
                double tl[100], tc[100];
                for (int r = 0; r <= reps; r++) {
                    double t0 = now();
                    aclnnStatus st = run_case(&c);
                    double t1 = now();
                    if (st == 0) st = run_case(&c0);
                    double t2 = now();
                    if (st != 0) { fprintf(stderr, "%s %s %s failed: %d\n", c.op, dtn(c.dt), LAY_NAME[lay], (int)st); exit(1); }
                    if (r > 0) { tl[r - 1] = t1 - t0; tc[r - 1] = t2 - t1; }
                }
                double ml = summary_ms(tl, reps, use_median), mc = summary_ms(tc, reps, use_median);
                char var[32];
                if (!strcmp(rs->variant, "-")) snprintf(var, sizeof var, "%s", LAY_NAME[lay]);
                else snprintf(var, sizeof var, "%s,%s", rs->variant, LAY_NAME[lay]);
                char peer[96];
                peer_cols(peer, sizeof peer, peer_find(c.op, var, dtn(c.dt), (long long)n), tsv, ml);
                if (tsv)
                    printf("%s\t%s\t%s\t%lld\t%.3f\t%.3f\tlayout%s\n", c.op, var, dtn(c.dt), (long long)n, ml, mc, peer);
                else
                    printf("%-31s %-14s %-5s %9lld %8.2f %9.2f %7.2fx%s\n", c.op, var, dtn(c.dt), (long long)n, ml, mc,
                           mc / ml, peer);
                fflush(stdout);
                teardown(&c);
                teardown(&c0);
            }
        }
    }
}

int main(int argc, char **argv)
{
    int64_t n = 1 << 24;
    int reps = 5, threads = 2, tsv = 0, use_median = 0, layouts = 1;
    const char *only = NULL, *only_dt = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--n") && i + 1 < argc) n = strtoll(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--op") && i + 1 < argc) only = argv[++i];
        else if (!strcmp(argv[i], "--dtype") && i + 1 < argc) only_dt = argv[++i];
        else if (!strcmp(argv[i], "--tsv")) tsv = 1;
        else if (!strcmp(argv[i], "--median")) use_median = 1;
        else if (!strcmp(argv[i], "--no-layouts")) layouts = 0;
        else if (!strcmp(argv[i], "--peer") && i + 1 < argc) load_peer(argv[++i]);
        else if (!strcmp(argv[i], "--offset") && i + 1 < argc) {
            char *end;
            g_offset = strtol(argv[++i], &end, 0);
            if (*end || g_offset < 0 || g_offset > 4095) { fprintf(stderr, "bench_speed: --offset wants 0..4095 bytes\n"); return 2; }
        }
        else { fprintf(stderr, "usage: bench_speed [--n N] [--reps R] [--threads T] [--op NAME] [--dtype D] [--median] [--tsv] [--peer FILE] [--offset B] [--no-layouts]\n"); return 2; }
    }
    if (reps < 1 || reps > 99 || n < 4096) { fprintf(stderr, "bench_speed: bad --reps or --n\n"); return 2; }
    aclconformSetNumThreads(threads);
    if (!tsv)
        printf("%-31s %-8s %-5s %9s %8s %8s %8s %8s %7s %8s %5s%s\n", "operator", "variant", "dtype", "elements",
               "MB", "op_ms", "op_GB/s", "triad_ms", "triad%", "cache_ms", "cap%",
               g_npeer ? "  torch_ms  same_ms  xtorch" : "");
    for (const row_spec *rs = ROWS; rs < ROWS + sizeof ROWS / sizeof ROWS[0]; rs++) {
        if (only && strcmp(only, rs->op)) continue;
        for (int d = 0; d < rs->ndt; d++) {
            if (only_dt && strcmp(only_dt, dtn(rs->dts[d]))) continue;
            bcase c = row_case(rs, rs->dts[d], n, LAY_CONTIG);
            int64_t tn = (int64_t)(c.bytes / 12 + 4095) / 4096 * 4096;
            float *ta = malloc((size_t)tn * 4), *tb = malloc((size_t)tn * 4), *tc = malloc((size_t)tn * 4);
            for (int64_t i = 0; i < tn; i++) { ta[i] = 0; tb[i] = (float)i; tc[i] = 1.0f; }
            triad_job tj = {ta, tb, tc, 3.0f};
            double top[100], ttr[100];
            for (int r = 0; r <= reps; r++) {
                double t0 = now();
                acl_parallel_for(tn >> 12, 1, triad_range, &tj);
                double t1 = now();
                aclnnStatus st = run_case(&c);
                double t2 = now();
                if (st != 0) { fprintf(stderr, "%s %s failed: %d\n", c.op, dtn(c.dt), (int)st); return 1; }
                if (r > 0) { ttr[r - 1] = t1 - t0; top[r - 1] = t2 - t1; }
            }
            /* the same row in cache: 256 Ki elements per thread, ~4 ms of repeated runs per rep;
             * at least SP16_LUT_MIN for a 16-bit Softplus row, so that the AVX2 table kernel the
             * full row runs is the one timed (in L3), not the direct kernel (round 34) */
            bcase cc = c;
            cc.n = (int64_t)262144 * threads;
            if (!strcmp(c.op, "softplus_backward") && (c.dt == ACL_FLOAT16 || c.dt == ACL_BF16) && cc.n < SP16_LUT_MIN)
                cc.n = SP16_LUT_MIN;
            setup(&cc);
            int inner = 1;
            double tcache[100];
            for (int r = 0; r <= reps; r++) {
                double t0 = now();
                for (int k = 0; k < inner; k++)
                    if (run_case(&cc) != 0) { fprintf(stderr, "%s %s (in cache) failed\n", c.op, dtn(c.dt)); return 1; }
                double t1 = now();
                if (r == 0) inner = (int)(4e-3 / (t1 - t0 > 1e-7 ? t1 - t0 : 1e-7)) + 1;
                else tcache[r - 1] = (t1 - t0) / inner;
            }
            double mca = summary_ms(tcache, reps, use_median) * (double)n / (double)cc.n;
            teardown(&cc);
            double mop = summary_ms(top, reps, use_median), mtr = summary_ms(ttr, reps, use_median);
            char peer[96];
            peer_cols(peer, sizeof peer, peer_find(c.op, rs->variant, dtn(c.dt), (long long)n), tsv, mop);
            if (tsv)
                printf("%s\t%s\t%s\t%lld\t%.3f\t%.3f\t%zu%s\t%.3f\n", c.op, rs->variant, dtn(c.dt), (long long)n,
                       mop, mtr, c.bytes, peer, mca);
            else
                printf("%-31s %-8s %-5s %9lld %8.1f %8.2f %8.1f %8.2f %6.0f%% %8.2f %4.0f%%%s\n", c.op, rs->variant,
                       dtn(c.dt), (long long)n, (double)c.bytes * 1e-6, mop, (double)c.bytes * 1e-6 / mop,
                       mtr, 100.0 * mtr / mop, mca, 100.0 * mtr / (mca > mtr ? mca : mtr), peer);
            fflush(stdout);
            free(ta); free(tb); free(tc);
            teardown(&c);
        }
    }
    if (layouts) layout_rows(n, reps, use_median, tsv, only, only_dt);
    aclconformSetNumThreads(0);
    return 0;
}
