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
 * sub-blocks never change what an element computes.  The f64 driver lost it in round 17: with
 * the blocks on the output's lines (below) and today's kernel, SoftplusBackward f64 ran 13.9-14.4
 * ms without against 15.1-16.7 ms with (16 Mi, 2 threads, six alternating pairs of `bench_speed
 * --op softplus_backward --dtype f64 --reps 9 --median`).  For the f32 rows the same test was a
 * draw (Gelu none a little better with it), so they keep it.
 * Kernels that prefetch themselves (acl_ewise2_f32_pf, round 19): a 128-element call costs a
 * kernel its entry, its constants and its tail check every 128 elements; Gelu none f32 ran 3.36-3.38
 * cycles per element in L1 in such calls against 3.20 in 4096-element ones.  Gelu (both modes) and
 * SoftplusBackward f32 prefetch the same 2 KiB ahead in their own loop, 128 bytes of each input per
 * pass of 32 elements (acl_prefetch_pass_f32), and get whole blocks: 16 Mi elements, 2 threads,
 * alternating with the sub-block form in one process, Gelu none 8.56-8.60 -> 7.99-8.17 ms, tanh
 * 8.99-9.05 -> 8.65-8.81, Softplus 5.69-6.88 -> 5.48-6.50 (a draw on 64-byte-aligned copies).
 *
 * Staging two inputs (issue 14, round 20): a block whose inputs are both staged (x[::2] views)
 * loads them alternately, ACL_STAGE_CHUNK elements of one, then of the other, instead of the
 * whole block of one and then of the other: each input's stream keeps going (the hardware
 * prefetchers follow both) instead of pausing for the other's 1024 elements.  Measured beside
 * the whole-block form in one process (16 Mi elements, 2 threads, x[::2] inputs, best of 15 per
 * round, ms): LogitGrad f32 in five runs of 3-5 rounds, 9.6-10.5 -> 9.2-9.9, PyTorch 9.0-9.8
 * beside them (0.92x -> 0.97-0.99x); GeluBackwardV2 tanh f32 16.3-16.6 -> 15.3-15.5, none f32
 * 14.6-15.1 -> 14.2-14.8 (one earlier run 14.8-15.2 -> 13.9-14.1); SoftplusBackward f32 a draw
 * (11.3-11.8 both, one earlier run 12.2-12.6 -> 11.4-11.5).  Pieces of 64 were slower than
 * none (11.5 for LogitGrad: a view walk per piece), 128 and 512 about as good as 256.  Inputs of
 * 16-bit dtypes keep whole blocks: there it was a loss (SoftplusBackward f16 11.9-12.1 ->
 * 12.7-12.8, LogitGrad bf16 10.0-10.3 -> 10.4-10.8; 512 a draw), and the f64 driver gained
 * nothing (SoftplusBackward f64 28.2 either way).  A job whose inputs are both staged gets no
 * sub-blocks (nothing to prefetch).  Which elements are loaded when never changes a value.
 *
 * x[::2] read in place (issue 14, round 26): staging x[::2] costs a scalar load and store per
 * element and input, and a staged block's loads and its kernel's work take turns instead of
 * overlapping.  The one memory-bound f32 kernel, LogitGrad's, therefore has a form that reads
 * such inputs in place, two loads and a permute per 16 lanes (acl_loadu16_even_ps), and
 * acl_ewise2_f32_pairs runs it when both inputs are f32 with element i at offset + 2i and the
 * output is contiguous f32.  16 Mi elements, x[::2] inputs, side by side with the staged form
 * and PyTorch in one process (best of 9 per round, six rounds, ms): 2 threads, staged 9.6-11.0,
 * in place 9.1-9.7, PyTorch 9.3-10.1; 1 thread, three rounds, 18.3-19.3 -> 12.6-13.7, PyTorch
 * 14.0-14.9.  The permute alone in the staging loop (view.c) was slower than the element loop;
 * what pays is not staging at all.  The kernel's arithmetic is the contiguous form's, so the bits
 * are too (tests/api/test_large_paths.c).
 *
 * Streaming stores (issue 14, round 26): an output written once and not read back need not be
 * read into the cache first.  A plain store to a line not in cache reads it from memory before
 * writing it back (16 bytes of traffic per f32 element of a 2-read, 1-write operator instead of
 * 12); a streaming store writes the line whole.  LogitGrad f32, the one f32 operator at the memory
 * wall, writes outputs of ACL_NT_MIN_BYTES or more (half this CPU's L3: a smaller output may
 * still be in cache when it is read) with them, full aligned vectors only; these drivers end
 * every range with SFENCE (acl_nt_fence), once per range: fencing in the kernel, once per
 * 128-element sub-block, was 30 % slower than none.  16 Mi elements, 2 threads, side by side in
 * one process with PyTorch (best of 9, four rounds, ms): contiguous 6.1-6.5 -> 4.8-5.3 (PyTorch
 * 6.2-6.5), x[::2] inputs 6.3-7.8 -> 5.2-5.9 (PyTorch 6.8-8.8).  Round 4 had found no gain from
 * them when every kernel was compute-bound.  NsaCompressGrad writes inputGrad the same way.
 * Round 27: the all-16-bit driver streams for the operators that ask (acl_ewise2_u16's `stream`):
 * the kernel writes a 64-byte-aligned block buffer in L1 and the driver copies it out
 * (stream_copy: whole lines streamed; the block grid already puts every block but the first on the
 * output's lines).  Generic, so no 16-bit kernel changed; the copy costs 32 loads and stores per
 * block.  16 Mi elements, 2 threads, side by side in one process with the round-26 library, best
 * of 9 per round, ms: LogitGrad f16 1.80-2.76 -> 1.60-2.36 (six rounds) and bf16 2.56-2.79 ->
 * 2.26-2.38 (three), Gelu none bf16 3.03-3.28 -> 2.80-2.86, tanh f16 3.44-3.94 -> 3.09-3.82, tanh
 * bf16 3.03-3.42 -> 2.91-3.58, none f16 3.42-3.94 -> 2.99-3.79 (three to six rounds each).
 * SoftplusBackward 16-bit does not ask: it ran 3.37-3.48 -> 3.72-3.74 (f16), 3.29-3.34 ->
 * 3.58-3.69 (bf16), and neither copying in pieces of 128 or 256 elements nor streaming from its
 * kernel's own stores mended it (docs/speed-rounds.md, round 27). The same copy in the f32 and
 * f64 drivers slowed the compute-bound kernels it would have served (Gelu none f32 7.52-7.57 ->
 * 8.31-8.33, tanh 7.48-7.67 -> 8.10-8.17, Softplus f32 5.47-5.52 -> 5.96-6.05, f64 11.4-12.2
 * -> 13.2-13.9), so those drivers have no such copy.
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
 * L2 prefetch (issue 14, round 14): GeluBackwardV2 f16 reads its f32 table at random over ~30
 * KiB for x in [-6, 6] (bf16: ~3 KiB), and the hardware's own stream fills of L1 evict table
 * lines; its inputs are prefetched into L2 only (PREFETCHT1) ACL_PREFETCH_L2_BYTES ahead.  Round
 * 14 did it here, in sub-blocks of 256 elements (Gelu none f16 3.56-3.67 ms against 4.12-4.39
 * without, 16 Mi elements, 2 threads; Gelu bf16, SoftplusBackward and LogitGrad 16-bit gained
 * nothing or lost 3-10 %).  Since round 19 the kernels do it in their own loop, a line of each
 * input per pass of 32 elements (acl_prefetch_pass_u16, ACL_STEPS32_PF), and this driver hands
 * every all-16-bit kernel whole blocks: Gelu f16 and bf16, and SoftplusBackward 16-bit (figures at
 * the kernels).
 *
 * All-16-bit views of any layout (issue 14, round 20): views of one 16-bit dtype that are not run
 * in tiles take the all-16-bit kernels, the contiguous ones in place and the others (strided,
 * broadcast) copied as raw bits through block buffers (acl_view_load_raw16).  Before, such views
 * went through the f32 driver: converted to f32 on the way in, a staged-f32 form of the kernel
 * (LogitGrad's in double, Gelu's converting x back to its bits), and converted back on the way
 * out.  Measured beside the previous library in one process (16 Mi elements, 2 threads, best of
 * 15, three rounds, ms): x[::2] inputs, LogitGrad bf16 10.04-10.16 -> 6.32-6.42, SoftplusBackward
 * f16 10.96-11.04 -> 8.11-8.13, GeluBackwardV2 none bf16 17.43-17.44 -> 9.95-9.99; Gelu tanh f16
 * with x [n/1024] broadcast against [1024, n/1024], 9.44-10.36 -> 3.47-3.69; contiguous rows
 * unchanged (Gelu none bf16 2.84-2.90 against 2.72-2.86).  Every such layout now gives the
 * contiguous call's bits, NaNs included (tests/api/test_large_paths.c).
 *
 * Tiles (issue 14, round 16): when a view's innermost stride puts every element of a run on a
 * cache line of its own (x.t() of a row-major matrix) and another dimension p steps through it
 * more finely, flat blocks read each line once per element and the line is evicted before the
 * next row comes back to it (10-30x the contiguous time, docs/speed-rounds.md, round 15).  Such
 * a job (f32 and f64 drivers) runs in tiles instead: up to TILE_ROWS indices of p by TILE_ELEMS /
 * TILE_ROWS of the innermost dimension, each view read or written run by run along its finer
 * dimension of the two.  Run lengths decide the speed: on this CPU a run that covers a whole
 * 4 KiB page keeps the hardware prefetchers streaming and shorter ones do not (two f32 x.t()
 * inputs of 64 MiB read in 1024 x 16 tiles, one thread: 6 ms; 512 x 32: 12 ms; 128 x 64:
 * 15 ms), while the other side's runs (the output's rows) want to be as long as the staging
 * allows.  Measured through
 * SoftplusBackward on [1024, 16 Mi/1024] x.t() views, 2 threads, ms f32 / f16 / f64:
 * 1024 x 64 18.6 / 14.2 / 38.5, 1024 x 128 18.2 / 13.8 / 39.4, 1024 x 32 21.3 / 20.2,
 * 512 x 32 25.6 / 16.6 / 50.1, 16 x 64 tiles of 1024 elements 46-49 / 33 / 76, flat blocks
 * 116 (Gelu f32) / 103 (Gelu f16).  So a tile is staged on the heap (3 x 256 KiB for f32), as
 * lines (its columns or its rows, whichever most views run along) a pitch apart that is not a
 * power of two: at a 4 KiB pitch the strided copies between staging and the runs of the crossing
 * views hit one cache set (that alone cost the 1024-row tiles 3x).  The kernel sees a staging
 * line ACL_EWISE_BLOCK elements at a time.  A tile is another set of elements handed to the same
 * elementwise kernel: no element's value changes. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "ewise.h"
#include "simd512.h"

static _Atomic int64_t g_nt_min_bytes = ACL_NT_MIN_BYTES;

int64_t acl_nt_min_bytes(void) { return atomic_load_explicit(&g_nt_min_bytes, memory_order_relaxed); }

void acl_nt_set_min_bytes(int64_t bytes)
{
    atomic_store_explicit(&g_nt_min_bytes, bytes >= 0 ? bytes : ACL_NT_MIN_BYTES, memory_order_relaxed);
}

/* Streaming stores are weakly ordered: SFENCE makes this thread's visible before the ones that
 * follow (the parallel-for's end).  Cheap when none are pending. */
void acl_nt_fence(void)
{
#if defined(__x86_64__) || defined(__i386__)
    _mm_sfence();
#endif
}

/* Copy `bytes` from src to dst with streaming stores for the whole 64-byte lines of dst and
 * plain stores for the head and tail; a plain copy without AVX-512 (the all-16-bit kernels, its
 * only callers, need it anyway).  The caller fences (acl_nt_fence) before its range ends. */
#ifdef ACL_HAVE_AVX512_KERNELS
ACL_AVX512_TARGET static size_t stream_lines(char *d, const char *s, size_t bytes)
{
    size_t k = 0;
    for (; k + 64 <= bytes; k += 64) _mm512_stream_si512((void *)(d + k), _mm512_loadu_si512(s + k));
    return k;
}
#endif

static void stream_copy(void *dst, const void *src, size_t bytes)
{
#ifdef ACL_HAVE_AVX512_KERNELS
    if (acl_have_avx512()) {
        char *d = dst;
        const char *s = src;
        size_t head = (size_t)(-(uintptr_t)d & 63);
        if (head > bytes) head = bytes;
        memcpy(d, s, head);
        size_t k = head + stream_lines(d + head, s + head, bytes - head);
        memcpy(d + k, s + k, bytes - k);
        return;
    }
#endif
    memcpy(dst, src, bytes);
}

typedef struct {
    const acl_view *a, *b, *out;
    acl_ewise_f32_fn f32;
    acl_ewise_f64_fn f64;
    acl_ewise_f32_u16_fn u16;
    acl_ewise_u16_fn raw;
    const void *ctx;
    bool prefetch; /* f32, a large output, an input read in place and a kernel that does not
                    * prefetch itself: sub-blocks with prefetch into L1 (see the top of this file) */
    bool nt;       /* all-16-bit: the kernel writes a block buffer that the driver copies to the
                    * contiguous output with streaming stores (stream_copy; top of this file) */
    int64_t shift; /* the block grid's offset, in elements (see the top of this file) */
    int tp;        /* tiled walk (see the top of this file): dimension p, or -1 for flat blocks */
    int64_t rows, cols, ntp, ntl; /* tile extents along p and the innermost dimension; tiles along each */
    bool cm;                      /* staging lines are a tile's columns (else its rows) */
    int64_t pitch;                /* elements from one staging line to the next */
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
#define ACL_STAGE_CHUNK 256
#define ACL_PREFETCH_MIN_BYTES ((int64_t)2 << 20)

/* into L1 */
static void prefetch_span(const char *p, size_t bytes)
{
    for (size_t o = 0; o < bytes; o += 64) __builtin_prefetch(p + o, 0, 3);
}

/* The in-place f32 inputs ia, ib (NULL: staged, not prefetched) of elements [s, s + n) of a total
 * of `total`: prefetch the span ahead of sub-block [s + k, s + k + m), ACL_PREFETCH_BYTES into L1. */
static void prefetch_ahead(const float *ia, const float *ib, int64_t s, int64_t k, int64_t m, int64_t total)
{
    int64_t ahead = ACL_PREFETCH_BYTES / (int64_t)sizeof(float);
    if (s + k + ahead + m > total) return;
    if (ia) prefetch_span((const char *)(ia + s + k + ahead), (size_t)m * sizeof(float));
    if (ib) prefetch_span((const char *)(ib + s + k + ahead), (size_t)m * sizeof(float));
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
    /* two staged inputs of 32 bits or more are loaded alternately in pieces (top of this file) */
    int64_t chunk = !da && !db && j->a->esize >= 4 && j->b->esize >= 4 ? ACL_STAGE_CHUNK : ACL_EWISE_BLOCK;
    for (int64_t blk = begin; blk < end; blk++) {
        int64_t n, s = block_range(j, blk, &n);
        const float *pa = da ? da + s : a, *pb = db ? db + s : b;
        float *po = dout ? dout + s : o;
        for (int64_t k = 0; k < n; k += chunk) {
            int64_t m = n - k < chunk ? n - k : chunk;
            if (!da) acl_view_load_f32(j->a, s + k, m, a + k);
            if (!db) acl_view_load_f32(j->b, s + k, m, b + k);
        }
        int64_t sub = j->prefetch ? ACL_EWISE_SUB_BYTES / (int64_t)sizeof(float) : n;
        for (int64_t k = 0; k < n; k += sub) {
            int64_t m = n - k < sub ? n - k : sub;
            if (j->prefetch) prefetch_ahead(da, db, s, k, m, total);
            j->f32(j->ctx, m, pa + k, pb + k, po + k);
        }
        if (!dout) acl_view_store_f32(j->out, s, n, o);
    }
    acl_nt_fence();
}

/* A view of f32 elements at every other float, element i at offset + 2i: its first element. */
static const float *pairs_f32(const acl_view *v)
{
    if (v->dtype != ACL_FLOAT) return NULL;
    int64_t step = 2;
    for (int k = v->ndim - 1; k >= 0; k--) {
        if (v->shape[k] != 1 && v->strides[k] != step) return NULL;
        step *= v->shape[k];
    }
    return (const float *)(const void *)v->data + v->offset;
}

static void run_f32_pairs(void *p, int64_t begin, int64_t end)
{
    const ewise_job *j = p;
    const float *a = pairs_f32(j->a), *b = pairs_f32(j->b);
    float *o = direct_f32(j->out);
    for (int64_t blk = begin; blk < end; blk++) {
        int64_t n, s = block_range(j, blk, &n);
        j->f32(j->ctx, n, a + 2 * s, b + 2 * s, o + s);
    }
    acl_nt_fence();
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

/* Contiguous 16-bit view: handed to the kernel in place. */
static uint16_t *direct_u16(const acl_view *v)
{
    return v->contiguous ? (uint16_t *)(void *)v->data + v->offset : NULL;
}

static void run_u16(void *p, int64_t begin, int64_t end)
{
    const ewise_job *j = p;
    uint16_t sa[ACL_EWISE_BLOCK], sb[ACL_EWISE_BLOCK];
    _Alignas(64) uint16_t so[ACL_EWISE_BLOCK];
    const uint16_t *a = direct_u16(j->a);
#if ACLCONFORM_MUTANT == 6 /* (mutant 6, continued: the all-16-bit driver too) */
    const uint16_t *b = j->b->contiguous ? (const uint16_t *)(const void *)j->b->data : NULL;
#else
    const uint16_t *b = direct_u16(j->b);
#endif
    uint16_t *o = direct_u16(j->out);
    for (int64_t blk = begin; blk < end; blk++) {
        int64_t n, s = block_range(j, blk, &n);
        if (!a) acl_view_load_raw16(j->a, s, n, sa);
        if (!b) acl_view_load_raw16(j->b, s, n, sb);
        j->raw(j->ctx, n, a ? a + s : sa, b ? b + s : sb, o && !j->nt ? o + s : so);
        if (!o) acl_view_store_raw16(j->out, s, n, so);
        else if (j->nt) stream_copy(o + s, so, (size_t)n * sizeof *so);
    }
    acl_nt_fence();
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
    for (int64_t blk = begin; blk < end; blk++) {
        int64_t n, s = block_range(j, blk, &n);
        const double *pa = da ? da + s : a, *pb = db ? db + s : b;
        double *po = dout ? dout + s : o;
        if (!da) acl_view_load_f64(j->a, s, n, a);
        if (!db) acl_view_load_f64(j->b, s, n, b);
        j->f64(j->ctx, n, pa, pb, po);
        if (!dout) acl_view_store_f64(j->out, s, n, o);
    }
}

/* ---- tiled walk ---------------------------------------------------------------------------- */

/* tile extents (top of this file); TILE_LINE: a cache line in bytes; TILE_PAD: what staging
 * lines are rounded up to and padded by, in elements */
enum { TILE_ROWS = 1024, TILE_ELEMS = 65536, TILE_LINE = 64, TILE_PAD = 16 };

/* The dimension to tile with the innermost one: for the first view whose innermost run has
 * every element on a line of its own (a stride of TILE_LINE bytes or more), its finest-striding
 * other dimension, if that is finer; -1 (flat blocks) otherwise. */
static int tile_dim(const acl_view *const *vs, int nv)
{
    for (int i = 0; i < nv; i++) {
        const acl_view *v = vs[i];
        int last = v->ndim - 1;
        if (last < 1 || v->contiguous || v->shape[last] < 2 ||
            v->strides[last] * (int64_t)v->esize < TILE_LINE)
            continue;
        int best = -1;
        for (int k = 0; k < last; k++)
            if (v->shape[k] > 1 && v->strides[k] != 0 && (best < 0 || v->strides[k] < v->strides[best])) best = k;
        if (best >= 0 && v->strides[best] < v->strides[last]) return best;
    }
    return -1;
}

/* A view's finer dimension of the two tiled ones is p (runs go along p), unless p is broadcast. */
static bool runs_along_p(int tp, const acl_view *v)
{
    int64_t sp = v->strides[tp], sl = v->strides[v->ndim - 1];
    return sl == 0 || (sp != 0 && sp <= sl);
}

bool acl_ewise_tiled(const acl_view *a, const acl_view *b, const acl_view *out)
{
    const acl_view *vs[3] = {a, b, out};
    return tile_dim(vs, 3) >= 0;
}

/* Plan the job's tiles (j->tp = -1: none) and return how many there are.  Staging holds a tile as
 * lines: columns (j->cm: the order of the views whose runs go along p, when more views than not
 * are of that kind) or rows, j->pitch elements apart (a line rounded up to 64 bytes, plus 64
 * bytes: a power-of-two pitch would put a row's elements in one cache set). */
static int64_t tile_plan(ewise_job *j)
{
    const acl_view *vs[3] = {j->a, j->b, j->out};
    j->tp = tile_dim(vs, 3);
    if (j->tp < 0) return 0;
    const acl_view *o = j->out;
    int last = o->ndim - 1;
    j->rows = o->shape[j->tp] < TILE_ROWS ? o->shape[j->tp] : TILE_ROWS;
    j->cols = o->shape[last] < TILE_ELEMS / j->rows ? o->shape[last] : TILE_ELEMS / j->rows;
    j->ntp = (o->shape[j->tp] + j->rows - 1) / j->rows;
    j->ntl = (o->shape[last] + j->cols - 1) / j->cols;
    j->cm = runs_along_p(j->tp, j->a) + runs_along_p(j->tp, j->b) + runs_along_p(j->tp, j->out) >= 2;
    j->pitch = ((j->cm ? j->rows : j->cols) + 2 * TILE_PAD - 1) / TILE_PAD * TILE_PAD;
    return o->numel / o->shape[j->tp] / o->shape[last] * j->ntp * j->ntl;
}

/* A tile's place: indices [r0, r0 + rows) of dimension p, [c0, c0 + cols) of the innermost one,
 * at index `outer` of the other dimensions (row-major). */
typedef struct {
    int64_t rows, cols, r0, c0, outer;
} tile_geom;

static tile_geom tile_at(const ewise_job *j, int64_t t)
{
    tile_geom g;
    int64_t il = t % j->ntl, ip = t / j->ntl % j->ntp;
    const acl_view *o = j->out;
    int last = o->ndim - 1;
    g.outer = t / j->ntl / j->ntp;
    g.r0 = ip * j->rows;
    g.c0 = il * j->cols;
    g.rows = o->shape[j->tp] - g.r0 < j->rows ? o->shape[j->tp] - g.r0 : j->rows;
    g.cols = o->shape[last] - g.c0 < j->cols ? o->shape[last] - g.c0 : j->cols;
#if ACLCONFORM_MUTANT == 60 /* tile-edge: tiled walk: the innermost dimension's last tile loses its last column */
    if (il == j->ntl - 1 && g.cols > 1) g.cols--;
#endif
    return g;
}

/* Element offset in view v of element (r, 0) of tile g; with flat, the element's row-major index
 * in the iteration shape instead. */
static int64_t tile_offset(const ewise_job *j, const acl_view *v, const tile_geom *g, int64_t r, bool flat)
{
    int last = v->ndim - 1;
    int64_t off = 0, rem = g->outer, scale = 1;
    for (int k = last; k >= 0; k--) {
        int64_t idx = k == last ? g->c0 : k == j->tp ? g->r0 + r : rem % v->shape[k];
        if (k != last && k != j->tp) rem /= v->shape[k];
        off += idx * (flat ? scale : v->strides[k]);
        scale *= v->shape[k];
    }
    return flat ? off : v->offset + off;
}

/* Bytes a tiled job may allocate for staging (tests lower it to run the fallback). */
static _Atomic int64_t g_staging_limit = INT64_MAX;

void acl_ewise_set_staging_limit(int64_t bytes)
{
    atomic_store_explicit(&g_staging_limit, bytes, memory_order_relaxed);
}

/* How view v's part of tile g is walked: nrun runs of len elements, stride bytes between a run's
 * elements and step bytes between runs, from base, along v's finer dimension of the two; a run
 * is a staging line (straight) or crosses the lines. */
typedef struct {
    char *base;
    int64_t stride, step, nrun, len;
    bool straight;
} tile_runs;

static tile_runs tile_runs_of(const ewise_job *j, const acl_view *v, const tile_geom *g)
{
    int64_t es = (int64_t)v->esize, sp = v->strides[j->tp] * es, sl = v->strides[v->ndim - 1] * es;
    bool alp = runs_along_p(j->tp, v);
    return (tile_runs){v->data + tile_offset(j, v, g, 0, false) * es, alp ? sp : sl, alp ? sl : sp,
                       alp ? g->cols : g->rows, alp ? g->rows : g->cols, alp == j->cm};
}

/* Load / store one view's tile run by run into / from staging s, a straight run directly, a
 * crossing one through tmp and a strided copy.  run_<T>_tiled: tiles [begin, end) staged on the
 * heap; the kernel sees a staging line (ACL_EWISE_BLOCK elements at a time) at a time.  Should
 * the allocation fail, each row of a tile is a run of the flat iteration order and goes through
 * the flat blocks' view walks instead. */
#define TILE_IO(T, SUF)                                                                            \
    static void tile_load_##SUF(const ewise_job *j, const acl_view *v, const tile_geom *g, T *s, T *tmp) \
    {                                                                                              \
        tile_runs r = tile_runs_of(j, v, g);                                                       \
        for (int64_t q = 0; q < r.nrun; q++) {                                                     \
            acl_run_load_##SUF(v->dtype, r.base + q * r.step, r.stride, r.len, r.straight ? s + q * j->pitch : tmp); \
            if (!r.straight)                                                                       \
                for (int64_t e = 0; e < r.len; e++) s[e * j->pitch + q] = tmp[e];                  \
        }                                                                                          \
    }                                                                                              \
    static void tile_store_##SUF(const ewise_job *j, const acl_view *v, const tile_geom *g, const T *s, T *tmp) \
    {                                                                                              \
        tile_runs r = tile_runs_of(j, v, g);                                                       \
        for (int64_t q = 0; q < r.nrun; q++) {                                                     \
            if (!r.straight)                                                                       \
                for (int64_t e = 0; e < r.len; e++) tmp[e] = s[e * j->pitch + q];                  \
            acl_run_store_##SUF(v->dtype, r.base + q * r.step, r.stride, r.len, r.straight ? s + q * j->pitch : tmp); \
        }                                                                                          \
    }                                                                                              \
    static void run_##SUF##_tiled(void *p, int64_t begin, int64_t end)                            \
    {                                                                                              \
        const ewise_job *j = p;                                                                    \
        int64_t size = (j->cm ? j->cols : j->rows) * j->pitch; /* one staging array */             \
        size_t bytes = (size_t)(3 * size + j->rows + j->cols) * sizeof(T);                         \
        T *a = (int64_t)bytes <= atomic_load_explicit(&g_staging_limit, memory_order_relaxed) ? malloc(bytes) : NULL; \
        for (int64_t t = begin; t < end; t++) {                                                    \
            tile_geom g = tile_at(j, t);                                                           \
            if (!a) {                                                                              \
                T fa[ACL_EWISE_BLOCK], fb[ACL_EWISE_BLOCK], fo[ACL_EWISE_BLOCK];                   \
                for (int64_t r = 0; r < g.rows; r++)                                               \
                    for (int64_t k = 0, row = tile_offset(j, j->out, &g, r, true); k < g.cols;     \
                         k += ACL_EWISE_BLOCK) {                                                   \
                        int64_t at = row + k;                                                      \
                        int64_t m = g.cols - k < ACL_EWISE_BLOCK ? g.cols - k : ACL_EWISE_BLOCK;   \
                        acl_view_load_##SUF(j->a, at, m, fa);                                      \
                        acl_view_load_##SUF(j->b, at, m, fb);                                      \
                        j->SUF(j->ctx, m, fa, fb, fo);                                             \
                        acl_view_store_##SUF(j->out, at, m, fo);                                   \
                    }                                                                              \
                continue;                                                                          \
            }                                                                                      \
            T *b = a + size, *o = b + size, *tmp = o + size;                                       \
            int64_t nl = j->cm ? g.cols : g.rows, len = j->cm ? g.rows : g.cols; /* staging lines */ \
            tile_load_##SUF(j, j->a, &g, a, tmp);                                                  \
            tile_load_##SUF(j, j->b, &g, b, tmp);                                                  \
            for (int64_t q = 0; q < nl; q++)                                                       \
                for (int64_t k = 0; k < len; k += ACL_EWISE_BLOCK)                                 \
                    j->SUF(j->ctx, len - k < ACL_EWISE_BLOCK ? len - k : ACL_EWISE_BLOCK, a + q * j->pitch + k, \
                           b + q * j->pitch + k, o + q * j->pitch + k);                            \
            tile_store_##SUF(j, j->out, &g, o, tmp);                                               \
        }                                                                                          \
        free(a);                                                                                   \
    }
TILE_IO(float, f32)
TILE_IO(double, f64)
#undef TILE_IO

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

static void ewise2_f32(const acl_view *a, const acl_view *b, const acl_view *out, acl_ewise_f32_fn fn,
                       const void *ctx, bool kernel_prefetches)
{
    ewise_job j = {.a = a, .b = b, .out = out, .f32 = fn, .ctx = ctx,
                   .prefetch = !kernel_prefetches && out->numel * (int64_t)sizeof(float) >= ACL_PREFETCH_MIN_BYTES &&
                               (direct_f32(a) || direct_f32(b)),
                   .tp = -1};
    int64_t nt = tile_plan(&j);
    if (nt) acl_parallel_for(nt, 16, run_f32_tiled, &j);
    else run_job(&j, run_f32);
}

void acl_ewise2_f32(const acl_view *a, const acl_view *b, const acl_view *out,
                    acl_ewise_f32_fn fn, const void *ctx)
{
    ewise2_f32(a, b, out, fn, ctx, false);
}

void acl_ewise2_f32_pf(const acl_view *a, const acl_view *b, const acl_view *out,
                       acl_ewise_f32_fn fn, const void *ctx)
{
    ewise2_f32(a, b, out, fn, ctx, true);
}

void acl_ewise2_f32_pairs(const acl_view *a, const acl_view *b, const acl_view *out, acl_ewise_f32_fn fn2,
                          acl_ewise_f32_fn fn, const void *ctx)
{
    if (!pairs_f32(a) || !pairs_f32(b) || !direct_f32(out)) {
        ewise2_f32(a, b, out, fn, ctx, false);
        return;
    }
    ewise_job j = {.a = a, .b = b, .out = out, .f32 = fn2, .ctx = ctx, .tp = -1};
    run_job(&j, run_f32_pairs);
}

void acl_ewise2_f64(const acl_view *a, const acl_view *b, const acl_view *out,
                    acl_ewise_f64_fn fn, const void *ctx)
{
    ewise_job j = {.a = a, .b = b, .out = out, .f64 = fn, .ctx = ctx, .tp = -1};
    int64_t nt = tile_plan(&j);
    if (nt) acl_parallel_for(nt, 16, run_f64_tiled, &j);
    else run_job(&j, run_f64);
}

void acl_ewise2_f32_u16(const acl_view *a, const acl_view *b, const acl_view *out,
                        acl_ewise_f32_u16_fn fn, const void *ctx)
{
    ewise_job j = {.a = a, .b = b, .out = out, .u16 = fn, .ctx = ctx, .tp = -1};
    run_job(&j, run_f32_u16);
}

void acl_ewise2_u16(const acl_view *a, const acl_view *b, const acl_view *out, acl_ewise_u16_fn fn,
                    const void *ctx, bool stream)
{
    ewise_job j = {.a = a, .b = b, .out = out, .raw = fn, .ctx = ctx, .nt = stream && acl_nt_wanted(out), .tp = -1};
    run_job(&j, run_u16);
}
