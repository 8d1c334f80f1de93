/* Blocked, parallel elementwise driver (see ewise.h).  Contiguous tensors of the compute type
 * (f32, or f64 for the f64 driver) skip the staging copy (the kernel reads and writes them in
 * place); every other view goes through the block buffers.  Either way an element's value depends only on its inputs.
 *
 * Prefetch (issue 14): the kernels are long chains of dependent floating-point operations, so the
 * out-of-order window holds few iterations and the loads of inputs read in place reach memory
 * late.  A block of in-place inputs is therefore handed to the kernel in sub-blocks of
 * ACL_EWISE_SUB_BYTES, each preceded by software prefetches of the same span ACL_PREFETCH_BYTES
 * ahead in every in-place input.  Measured in one process, 2 threads, 16 Mi elements, alternating
 * with and without: SoftplusBackward f32 -11 %, f64 -10..14 %, GeluBackwardV2 f32 -3..5 %; a
 * prefetch for writing the output (or 4 KiB distance) was no better.  Outputs below
 * ACL_PREFETCH_MIN_BYTES (twice a core's L2 here) skip it: in cache the sub-blocks only cost
 * (LogitGrad f32 +3-5 % at 1 MiB).  Only timing changes: the kernel sees the same elements, and
 * sub-blocks never change what an element computes.
 *
 * Alignment (issue 14, round 13): the block grid is shifted so that every block but the first
 * starts on a 64-byte line of the output (of the first input when the output is not contiguous
 * and that input is): block k covers [k·B − shift, (k+1)·B − shift) ∩ [0, numel).  glibc's malloc puts large
 * arrays 16 bytes past a page, so without the shift every 64-byte vector of an f32 or f64 kernel
 * straddles two lines; measured on 16 Mi elements, 2 threads, the same library on malloc'ed and
 * on 64-byte-aligned buffers alternating in one process: SoftplusBackward f32 7.96 against 6.67
 * ms, bf16 4.03 against 3.43, GeluBackwardV2 none bf16 5.69 against 5.19.  The kernels run their
 * tails under masks with the same instructions, so where the blocks start never changes a bit.
 *
 * L2 prefetch (issue 14, round 14): acl_ewise2_u16_l2 prefetches the two inputs into L2 only
 * (PREFETCHT1) ACL_PREFETCH_L2_BYTES ahead, for GeluBackwardV2 f16, whose f32 table is read at
 * random over ~30 KiB for x in [-6, 6] (bf16: ~3 KiB): there the hardware's own stream fills of
 * L1 evict table lines.  Measured on 16 Mi elements, 2 threads, alternating in one process: Gelu
 * none f16 3.56-3.67 ms against 4.12-4.39 without, tanh f16 3.45-3.65 against 4.19-4.31 (NTA
 * hints the same; T0 hints, the f32 driver's, no gain); Gelu bf16, SoftplusBackward and LogitGrad f16/bf16 gained nothing or lost 3-10 %, so
 * they keep acl_ewise2_u16. */
#include "ewise.h"

typedef struct {
    const acl_view *a, *b, *out;
    acl_ewise_f32_fn f32;
    acl_ewise_f64_fn f64;
    acl_ewise_f32_u16_fn u16;
    acl_ewise_u16_fn raw;
    const void *ctx;
    bool prefetch; /* sub-blocks with prefetch: f32/f64 a large output, into L1; u16 into L2 (see the top of this file) */
    int64_t shift; /* the block grid's offset, in elements (see the top of this file) */
} ewise_job;

/* Block blk of job j: its first element and its length. */
static int64_t block_range(const ewise_job *j, int64_t blk, int64_t *len)
{
    int64_t lo = blk * ACL_EWISE_BLOCK - j->shift, hi = lo + ACL_EWISE_BLOCK, total = j->out->numel;
    if (lo < 0) lo = 0;
    if (hi > total) hi = total;
#if ACLCONFORM_MUTANT == 3 /* simd-tail: f32 driver: a partial block runs only its full 8-lane groups */
    if (hi - lo < ACL_EWISE_BLOCK && j->f32) hi = lo + ((hi - lo) & ~(int64_t)7);
#elif ACLCONFORM_MUTANT == 5 /* simd-tail: f64 driver: the last partial block loses its final element */
    if (hi - lo < ACL_EWISE_BLOCK && hi == total && j->f64) hi--;
#endif
    *len = hi - lo;
    return lo;
}

/* The grid offset that puts the view's element at every block start but the first on a 64-byte
 * line (0 for a staged view, or a base that is not a whole number of elements from a line). */
static int64_t line_shift(const acl_view *v)
{
    if (!v->contiguous) return 0;
    size_t es = acl_dtype_size(v->dtype);
    uintptr_t p = (uintptr_t)(v->data + (size_t)v->offset * es);
    return p % es ? 0 : (int64_t)(p % 64 / es);
}

/* Contiguous f32 view: its elements can be handed to the kernel in place. */
static float *direct_f32(const acl_view *v)
{
    return v->contiguous && v->dtype == ACL_FLOAT ? (float *)(void *)v->data + v->offset : NULL;
}

#define ACL_EWISE_SUB_BYTES 512
#define ACL_PREFETCH_BYTES 2048
#define ACL_PREFETCH_MIN_BYTES ((int64_t)2 << 20)

#define ACL_PREFETCH_L2_BYTES 8192

/* into L1 (l2 false) or L2 only (PREFETCHT1) */
static void prefetch_span(const char *p, size_t bytes, bool l2)
{
    for (size_t o = 0; o < bytes; o += 64)
        if (l2) __builtin_prefetch(p + o, 0, 2);
        else __builtin_prefetch(p + o, 0, 3);
}

/* The in-place inputs ia, ib (NULL: staged, not prefetched) of elements [s, s + n) of a total of
 * `total`: prefetch the span ahead of sub-block [s + k, s + k + m), ACL_PREFETCH_BYTES into L1,
 * or (l2) ACL_PREFETCH_L2_BYTES into L2 only. */
static void prefetch_ahead(const char *ia, const char *ib, size_t esize, int64_t s, int64_t k, int64_t m,
                           int64_t total, bool l2)
{
    int64_t ahead = (l2 ? ACL_PREFETCH_L2_BYTES : ACL_PREFETCH_BYTES) / (int64_t)esize;
    if (s + k + ahead + m > total) return;
    if (ia) prefetch_span(ia + (size_t)(s + k + ahead) * esize, (size_t)m * esize, l2);
    if (ib) prefetch_span(ib + (size_t)(s + k + ahead) * esize, (size_t)m * esize, l2);
}

static void run_f32(void *p, int64_t begin, int64_t end)
{
    const ewise_job *j = p;
#if ACLCONFORM_MUTANT == 7 /* thread-race: f32 staging buffers static: shared by all threads of the parallel-for */
    static float a[ACL_EWISE_BLOCK], b[ACL_EWISE_BLOCK], o[ACL_EWISE_BLOCK];
    float *da = direct_f32(j->a), *db = direct_f32(j->b), *dout = direct_f32(j->out);
#else
    float a[ACL_EWISE_BLOCK], b[ACL_EWISE_BLOCK], o[ACL_EWISE_BLOCK];
    float *da = direct_f32(j->a), *db = direct_f32(j->b), *dout = direct_f32(j->out);
#endif
    int64_t total = j->out->numel;
    for (int64_t blk = begin; blk < end; blk++) {
        int64_t n, s = block_range(j, blk, &n);
        const float *pa = da ? da + s : a, *pb = db ? db + s : b;
        float *po = dout ? dout + s : o;
        if (!da) acl_view_load_f32(j->a, s, n, a);
        if (!db) acl_view_load_f32(j->b, s, n, b);
        int64_t sub = j->prefetch ? ACL_EWISE_SUB_BYTES / (int64_t)sizeof(float) : n;
        for (int64_t k = 0; k < n; k += sub) {
            int64_t m = n - k < sub ? n - k : sub;
            if (j->prefetch) prefetch_ahead((const char *)da, (const char *)db, sizeof(float), s, k, m, total, false);
            j->f32(j->ctx, m, pa + k, pb + k, po + k);
        }
        if (!dout) acl_view_store_f32(j->out, s, n, o);
    }
}

static void run_f32_u16(void *p, int64_t begin, int64_t end)
{
    const ewise_job *j = p;
    float a[ACL_EWISE_BLOCK], o[ACL_EWISE_BLOCK];
    float *da = direct_f32(j->a), *dout = direct_f32(j->out);
#if ACLCONFORM_MUTANT == 6 /* view-offset: raw 16-bit driver ignores the view offset of b */
    const uint16_t *b = (const uint16_t *)(const void *)j->b->data;
#else
    const uint16_t *b = (const uint16_t *)(const void *)j->b->data + j->b->offset;
#endif
    for (int64_t blk = begin; blk < end; blk++) {
        int64_t n, s = block_range(j, blk, &n);
        const float *pa = da ? da + s : a;
        float *po = dout ? dout + s : o;
        if (!da) acl_view_load_f32(j->a, s, n, a);
        j->u16(j->ctx, n, pa, b + s, po);
        if (!dout) acl_view_store_f32(j->out, s, n, o);
    }
}

static void run_u16(void *p, int64_t begin, int64_t end)
{
    const ewise_job *j = p;
    const uint16_t *a = (const uint16_t *)(const void *)j->a->data + j->a->offset;
#if ACLCONFORM_MUTANT == 6 /* (mutant 6, continued: the all-16-bit driver too) */
    const uint16_t *b = (const uint16_t *)(const void *)j->b->data;
#else
    const uint16_t *b = (const uint16_t *)(const void *)j->b->data + j->b->offset;
#endif
    uint16_t *o = (uint16_t *)(void *)j->out->data + j->out->offset;
    int64_t total = j->out->numel;
    for (int64_t blk = begin; blk < end; blk++) {
        int64_t n, s = block_range(j, blk, &n);
        int64_t sub = j->prefetch ? ACL_EWISE_SUB_BYTES / (int64_t)sizeof(uint16_t) : n;
        for (int64_t k = 0; k < n; k += sub) {
            int64_t m = n - k < sub ? n - k : sub;
            if (j->prefetch) prefetch_ahead((const char *)a, (const char *)b, sizeof(uint16_t), s, k, m, total, true);
            j->raw(j->ctx, m, a + s + k, b + s + k, o + s + k);
        }
    }
}

/* Contiguous f64 view: handed to the kernel in place, like direct_f32. */
static double *direct_f64(const acl_view *v)
{
    return v->contiguous && v->dtype == ACL_DOUBLE ? (double *)(void *)v->data + v->offset : NULL;
}

static void run_f64(void *p, int64_t begin, int64_t end)
{
    const ewise_job *j = p;
    double a[ACL_EWISE_BLOCK], b[ACL_EWISE_BLOCK], o[ACL_EWISE_BLOCK];
    double *da = direct_f64(j->a), *db = direct_f64(j->b), *dout = direct_f64(j->out);
    int64_t total = j->out->numel;
    for (int64_t blk = begin; blk < end; blk++) {
        int64_t n, s = block_range(j, blk, &n);
        const double *pa = da ? da + s : a, *pb = db ? db + s : b;
        double *po = dout ? dout + s : o;
        if (!da) acl_view_load_f64(j->a, s, n, a);
        if (!db) acl_view_load_f64(j->b, s, n, b);
        int64_t sub = j->prefetch ? ACL_EWISE_SUB_BYTES / (int64_t)sizeof(double) : n;
        for (int64_t k = 0; k < n; k += sub) {
            int64_t m = n - k < sub ? n - k : sub;
            if (j->prefetch) prefetch_ahead((const char *)da, (const char *)db, sizeof(double), s, k, m, total, false);
            j->f64(j->ctx, m, pa + k, pb + k, po + k);
        }
        if (!dout) acl_view_store_f64(j->out, s, n, o);
    }
}

/* Set the job's grid offset from its output (or, when only it is contiguous, the first input)
 * and run it. */
static void run_job(ewise_job *j, void (*body)(void *, int64_t, int64_t))
{
    j->shift = line_shift(j->out->contiguous || !j->a->contiguous ? j->out : j->a);
    int64_t span = j->out->numel + j->shift;
#if ACLCONFORM_MUTANT == 4 /* simd-tail: block count rounded down: a trailing partial block is never computed */
    int64_t nb = span / ACL_EWISE_BLOCK + (span < ACL_EWISE_BLOCK);
#else
    int64_t nb = (span + ACL_EWISE_BLOCK - 1) / ACL_EWISE_BLOCK;
#endif
    acl_parallel_for(nb, 16, body, j);
}

void acl_ewise2_f32(const acl_view *a, const acl_view *b, const acl_view *out,
                    acl_ewise_f32_fn fn, const void *ctx)
{
    ewise_job j = {a, b, out, fn, NULL, NULL, NULL, ctx, out->numel * (int64_t)sizeof(float) >= ACL_PREFETCH_MIN_BYTES, 0};
    run_job(&j, run_f32);
}

void acl_ewise2_f64(const acl_view *a, const acl_view *b, const acl_view *out,
                    acl_ewise_f64_fn fn, const void *ctx)
{
    ewise_job j = {a, b, out, NULL, fn, NULL, NULL, ctx, out->numel * (int64_t)sizeof(double) >= ACL_PREFETCH_MIN_BYTES, 0};
    run_job(&j, run_f64);
}

void acl_ewise2_f32_u16(const acl_view *a, const acl_view *b, const acl_view *out,
                        acl_ewise_f32_u16_fn fn, const void *ctx)
{
    ewise_job j = {a, b, out, NULL, NULL, fn, NULL, ctx, false, 0};
    run_job(&j, run_f32_u16);
}

void acl_ewise2_u16(const acl_view *a, const acl_view *b, const acl_view *out, acl_ewise_u16_fn fn,
                    const void *ctx)
{
    ewise_job j = {a, b, out, NULL, NULL, NULL, fn, ctx, false, 0};
    run_job(&j, run_u16);
}

void acl_ewise2_u16_l2(const acl_view *a, const acl_view *b, const acl_view *out, acl_ewise_u16_fn fn,
                       const void *ctx)
{
    ewise_job j = {a, b, out, NULL, NULL, NULL, fn, ctx, true, 0};
    run_job(&j, run_u16);
}
