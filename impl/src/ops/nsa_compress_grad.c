/* aclnnNsaCompressGrad (ops.md §3), layout TND, l = compressBlockSize, d = compressStride:
 *   weightGrad[r,n]  = Σ_c Σ_k outputGrad[c,n,k] · input[start(c)+r, n, k]
 *   inputGrad[t,n,k] = Σ_{(c,r): start(c)+r = t} weight[r,n] · outputGrad[c,n,k]
 * with windows c = (batch b, i-th block), start(c) = a[b-1] + i·d, i < nblk(S_b).
 *
 * Both gradients are gathers, not scatters: every output element is one sum in a fixed order,
 * so the bits do not depend on the thread count.  inputGrad: windows ascending, from +0.
 * weightGrad: the tokens are cut into K segments, K a function of the shape alone
 * (nsa_segments); per segment 16 interleaved partial sums (element k into lane k & 15, c
 * ascending then k ascending, from +0), the segments' lanes added in segment order, then
 * combined by acl_sum_tree16.  Products of two 16-bit values are exact in
 * double and the sums accumulate in double, so each output is one rounding (to f32, then the 16-bit store: ≤ 0.5 + 2^-13 ULP) of a
 * value with relative error ≤ n·2^-53 of its conditioning sum.  Rows along D are processed in
 * chunks of NSA_CHUNK (workspace 0).  Most shapes take the streaming path below (same sums in the
 * same order, far fewer conversions and cache misses); these gathers are its fallback. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aclnnop/aclnn_nsa_compress_grad.h"
#include "runtime/check.h"
#include "runtime/ewise.h"
#include "runtime/simd256.h"
#include "runtime/vecmath.h"

#define NSA_CHUNK 256

typedef struct {
    aclTensor outputGrad, input, weight, inputGrad, weightGrad;
    int64_t l, d, B, C;
    int64_t seq[]; /* a[0..B-1] (cumulative ends), then cbase[0..B-1] (first window of batch b) */
} nsa_args;

typedef struct {
    const nsa_args *a;
    acl_view og, in, w, ig, wg;
    int64_t N, D, T;
    bool nt; /* inputGrad written with non-temporal stores (nsa_tok_avx512) */
    bool w32; /* every weight ±0 or of magnitude in [2^-63, 2^64) (nsa_tok_rows2_avx2's f32 sums) */
} nsa_job;

static inline int64_t nsa_nblk(int64_t S, int64_t l, int64_t d) { return S >= l ? (S - l) / d + 1 : 0; }

/* weightGrad's order: NSA_LANES interleaved partial sums, acc[k & 15] += g[k]·x[k] with k
 * ascending, windows ascending, combined by acl_sum_tree16; g and x start at a multiple of 16
 * elements of the row. */
#define NSA_LANES 16
ACL_KERNEL_CLONES static void nsa_dot16_f32(int64_t n, const float *g, const float *x, double *acc)
{
    for (int64_t k = 0; k < n; k++) acc[k & 15] += (double)g[k] * (double)x[k];
}

/* The weightGrad segments: K = T / (max(256, 4·l) tokens), at most NSA_SEG_MAX and at most what
 * NSA_SEG_BYTES of partial sums hold, at least 1.  Segment q holds tokens [q·T/K, (q+1)·T/K).
 * A function of the shape alone: it fixes the order of the sums, which must not depend on the
 * thread count (the threads split segments and heads, never a sum). */
#define NSA_SEG_MAX 64
#define NSA_SEG_BYTES (64 << 20)
static int64_t nsa_segments(int64_t T, int64_t l, int64_t N)
{
    int64_t tokens = l * 4 > 256 ? l * 4 : 256, K = T / tokens;
    int64_t cap = NSA_SEG_BYTES / (l * N * NSA_LANES * (int64_t)sizeof(double));
    if (K > NSA_SEG_MAX) K = NSA_SEG_MAX;
    if (K > cap) K = cap;
    return K > 1 ? K : 1;
}

static inline int64_t nsa_seg_lo(int64_t q, int64_t T, int64_t K) { return q * T / K; }

/* weightGrad[r, n] for q = r·N + n in [begin, end): per segment of tokens the 16 lanes from +0,
 * added into the total at each segment's end (the streaming path's order). */
static void nsa_weight_grad(void *p, int64_t begin, int64_t end)
{
    const nsa_job *j = p;
    const nsa_args *a = j->a;
    const int64_t *ends = a->seq, K = nsa_segments(j->T, a->l, j->N);
    float g[NSA_CHUNK], x[NSA_CHUNK];
    for (int64_t q = begin; q < end; q++) {
        int64_t r = q / j->N, n = q % j->N;
        double acc[NSA_LANES] = {0}, tot[NSA_LANES] = {0};
        int64_t c = 0, prev = 0, seg = 0;
        for (int64_t b = 0; b < a->B; b++) {
            int64_t nb = nsa_nblk(ends[b] - prev, a->l, a->d);
            for (int64_t i = 0; i < nb; i++, c++) {
                int64_t t = prev + i * a->d + r;
                for (; t >= nsa_seg_lo(seg + 1, j->T, K); seg++)
                    for (int k = 0; k < NSA_LANES; k++) {
                        tot[k] += acc[k];
                        acc[k] = 0.0;
                    }
#if ACLCONFORM_MUTANT == 47 /* chunk-boundary: gather weightGrad (fallback path, D or l > 1024 or scratch > 256 MiB): partial last D chunk dropped */
                for (int64_t k0 = 0; k0 + NSA_CHUNK <= j->D || k0 == 0; k0 += NSA_CHUNK) {
                    int64_t len = j->D - k0 < NSA_CHUNK ? j->D - k0 : NSA_CHUNK;
                    acl_view_load_f32(&j->og, (c * j->N + n) * j->D + k0, len, g);
#else
                for (int64_t k0 = 0; k0 < j->D; k0 += NSA_CHUNK) {
                    int64_t len = j->D - k0 < NSA_CHUNK ? j->D - k0 : NSA_CHUNK;
                    acl_view_load_f32(&j->og, (c * j->N + n) * j->D + k0, len, g);
#endif
                    acl_view_load_f32(&j->in, (t * j->N + n) * j->D + k0, len, x);
                    nsa_dot16_f32(len, g, x, acc);
                }
            }
            prev = ends[b];
        }
        for (int k = 0; k < NSA_LANES; k++) tot[k] += acc[k];
        float v = (float)acl_sum_tree16(tot);
        acl_view_store_f32(&j->wg, q, 1, &v);
    }
}

/* inputGrad rows of tokens t in [begin, end), all heads. */
static void nsa_input_grad(void *p, int64_t begin, int64_t end)
{
    const nsa_job *j = p;
    const nsa_args *a = j->a;
    const int64_t *ends = a->seq, *cbase = a->seq + a->B;
    float g[NSA_CHUNK], o[NSA_CHUNK];
    double acc[NSA_CHUNK];
    for (int64_t t = begin; t < end; t++) {
        /* batch of t: the first b with ends[b] > t (ends is non-decreasing, ends[B-1] = T) */
        int64_t lo = 0, hi = a->B - 1;
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            if (ends[mid] > t) hi = mid;
            else lo = mid + 1;
        }
        int64_t b = lo, first = b > 0 ? ends[b - 1] : 0;
        int64_t pos = t - first, nb = nsa_nblk(ends[b] - first, a->l, a->d);
        /* windows i with i·d ≤ pos ≤ i·d + l − 1 */
        int64_t i_lo = pos >= a->l ? (pos - a->l) / a->d + 1 : 0;
        int64_t i_hi = pos / a->d < nb - 1 ? pos / a->d : nb - 1;
        for (int64_t n = 0; n < j->N; n++) {
            for (int64_t k0 = 0; k0 < j->D; k0 += NSA_CHUNK) {
                int64_t len = j->D - k0 < NSA_CHUNK ? j->D - k0 : NSA_CHUNK;
                for (int64_t k = 0; k < len; k++) acc[k] = 0.0;
                for (int64_t i = i_lo; i <= i_hi; i++) {
                    float w;
                    acl_view_load_f32(&j->w, (pos - i * a->d) * j->N + n, 1, &w);
                    acl_view_load_f32(&j->og, ((cbase[b] + i) * j->N + n) * j->D + k0, len, g);
                    for (int64_t k = 0; k < len; k++) acc[k] += (double)w * (double)g[k];
                }
                for (int64_t k = 0; k < len; k++) o[k] = (float)acc[k];
                acl_view_store_f32(&j->ig, (t * j->N + n) * j->D + k0, len, o);
            }
        }
    }
}

/* ---- streaming path (D ≤ NSA_FAST_MAX_D and the scratch fits NSA_FAST_MAX_BYTES) ----
 * The gather above converts every outputGrad row l times and walks input by (r, c), far from
 * memory order.  Here a task (a segment of tokens × a group of heads, nsa_segments) walks its
 * tokens in memory order (t, then its heads): each input row is converted to double once, the
 * outputGrad rows of the live windows (at most ceil(l/d) at a time) stay converted to double in
 * a ring per head (tagged by window), and weightGrad[r, n] accumulates in the segment's 16 lanes
 * (element k into lane k & 15, windows ascending — t = start(c) + r ascends with c — then k
 * ascending: the gather's order; two accumulators, not one latency-bound chain, and half the L1
 * footprint of 32 lanes, which measured 8 % slower).  The same walk writes the inputGrad rows
 * of its tokens and heads from the same converted rows: Σ over the covering windows ascending
 * of w·og, from +0, as nsa_input_grad.  With AVX-512 and contiguous tensors one pass per
 * (token, head) does it all (nsa_tok_avx512; with AVX2 two half passes, nsa_tok_avx2: the same
 * sums), with the input and inputGrad rows prefetched NSA_PF_BYTES ahead.  A thread takes whole segments, every head when there are at least as
 * many segments as threads: one contiguous stream of input and one of inputGrad per thread.
 * (Until round 12 the threads split the heads of every token: two threads reading and writing
 * alternate halves of each token's rows ran the bench row at 5.9 ms, by segments 3.5 ms.)
 * Every output is one sum in a fixed order, so the bits do not depend on the partition or the
 * thread count. */
#define NSA_FAST_MAX_D 1024
/* a ring slot: the outputGrad row as D doubles, then as D floats, then a double that is 1 when
 * every value of the row is ±0 or of magnitude in [2^-63, 2^64) (always, for f16), else 0: the
 * floats and the flag written and read only by the AVX2 helpers (nsa_row_avx2,
 * nsa_tok_rows2_avx2).  The floats of a bf16 row lie in the even / odd split of each 16-element
 * block (NSA_EO: elements 0, 2, .., 14, then 1, 3, .., 15), the order acl_pack16_bf16_eo takes. */
#define NSA_SLOT_F32(D) (D)               /* where the floats start, in doubles */
#define NSA_SLOT_FLAG(D) ((D) + (D) / 2)   /* where the flag is */
#define NSA_SLOT(D) (NSA_SLOT_FLAG(D) + 8) /* the flag padded to 64 bytes: slots stay on cache lines */
#define NSA_EO(k) (((k) & ~(int64_t)15) + ((k) & 1) * 8 + ((k) & 15) / 2) /* element k's float in a bf16 row */
#define NSA_FAST_MAX_BYTES (256 << 20)
#define NSA_PF_BYTES 2048

typedef struct {
    const nsa_job *j;
    const double *w;    /* weight, l × N, as double */
    double *part;       /* the segments' weightGrad lanes, [K][l][N][16] */
    double *scratch;    /* per worker (stride doubles): ring HG·W·D, x row D */
    int64_t *tags;      /* per worker (HG·W): the window in each ring slot */
    int64_t K, G;       /* tasks g·K + q: head group g, segment q */
    int64_t HG, W;      /* heads per group, ring slots per head (ceil(l/d) + 1) */
    int64_t stride, workers;
} nsa_fast;

static int64_t nsa_div_up(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* a worker's ring tags, rounded up to whole 64-byte lines: one worker's tag writes (a ring slot
 * refilled) must not invalidate the line another worker reads at every (token, head).  Round 31:
 * the tags of all workers in one array of 8·HG·W bytes had two threads run the bench row (1 Mi
 * elements) 1.45x faster than one; on lines of their own 1.8x (bench_speed, 0.43 against
 * 0.29-0.31 -> 0.24 ms). */
#define NSA_TAGS(n) (((n) + 7) / 8 * 8)

/* v is ±0 or of magnitude in [2^-63, 2^64): the product of two such 16-bit values is ±0 or a
 * normal float in [2^-126, 2^128) with at most 22 significant bits, exact in f32 (every f16 value
 * is in range; bf16 values need not be) */
static inline bool nsa_f32_range(double v)
{
    double a = fabs(v);
    return a == 0.0 || (a >= 0x1p-63 && a < 0x1p64);
}

/* The windows [*lo, *hi] of a batch of nb windows that cover position pos (relative to the
 * batch start): i·d ≤ pos ≤ i·d + l − 1.  Empty (lo > hi) past the last window. */
static inline void nsa_covering(int64_t pos, int64_t l, int64_t d, int64_t nb, int64_t *lo, int64_t *hi)
{
#if ACLCONFORM_MUTANT == 42 /* window-index: fast paths: first covering window off by one (a window ending before t is included) */
    *lo = pos >= l ? (pos - l) / d : 0;
#else
    *lo = pos >= l ? (pos - l) / d + 1 : 0;
#endif
    *hi = pos / d < nb - 1 ? pos / d : nb - 1;
}

/* One task's state while it walks a batch. */
typedef struct {
    const nsa_fast *f;
    double *ring, *x, *acc; /* worker scratch: ring rows, the input row; the segment's lanes at head n0 */
    int64_t *tag;
    int64_t n0, H, prev, cb; /* heads [n0, n0 + H), batch start, first window */
    const char *pf_in;  /* contiguous input (bytes) to prefetch from, or NULL */
    char *pf_ig;        /* contiguous inputGrad (bytes) to prefetch for writing, or NULL */
    int64_t pf_rows;    /* prefetch distance in tokens */
} nsa_walk;

/* The per-position work of a task, one template for the AVX-512, AVX2 and portable helpers
 * (inlined into each with the helpers as constants: no call per row):
 *   row(v, r, n, out)   row r of a [rows, N, D] view at head n, as doubles;
 *   tok(...)            for one (token, head) in one pass: every weightGrad dot and the
 *                       inputGrad row, or false; then the portable nsa_dot16_portable and
 *                       nsa_ig_row_portable do it.
 * The products are exact in double, so an FMA in one form is the add of the other. */
typedef void (*nsa_row_fn)(const acl_view *v, int64_t row, int64_t n, int64_t N, int64_t D, double *out);
/* tok(j, t, n, nw, rows, accs, w): the whole (token, head) at once — every dot and the inputGrad
 * row — or false (nothing done) when it does not apply. */
typedef bool (*nsa_tok_fn)(const nsa_job *j, int64_t t, int64_t n, int64_t nw, const double *const *rows,
                           double *const *accs, const double *w);

ACL_KERNEL_CLONES static void nsa_dot16_portable(int64_t D, const double *g, const double *x, double *acc)
{
    for (int64_t k = 0; k < D; k++) acc[k & 15] += g[k] * x[k];
}

/* one inputGrad row, Σ_i w[i]·rows[i][k] from +0, i ascending, stored */
static void nsa_ig_row_portable(const acl_view *ig, int64_t at, int64_t D, int64_t nw, const double *const *rows,
                                const double *w)
{
    float o[NSA_FAST_MAX_D];
    for (int64_t k = 0; k < D; k++) {
        double acc = 0.0;
        for (int64_t i = 0; i < nw; i++) acc += w[i] * rows[i][k];
        o[k] = (float)acc;
    }
    acl_view_store_f32(ig, at, D, o);
}

static inline __attribute__((always_inline)) void
nsa_walk_pos(const nsa_walk *s, int64_t pos, int64_t lo_i, int64_t hi_i, nsa_row_fn row, nsa_tok_fn tok)
{
    const nsa_fast *f = s->f;
    const nsa_job *j = f->j;
    const int64_t d = j->a->d, D = j->D, N = j->N, W = f->W, H = s->H, nw = hi_i - lo_i + 1;
    const double *rows[NSA_FAST_MAX_D / 16 + 1]; /* ≤ ceil(l/d) ≤ l/16 windows */
    double *accs[NSA_FAST_MAX_D / 16 + 1], wt[NSA_FAST_MAX_D / 16 + 1];
    if (s->pf_in) { /* this task's part of the input row NSA_PF_BYTES ahead (see nsa_fast_task) */
        int64_t t = s->prev + pos + s->pf_rows;
        if (t < j->T)
            for (int64_t o = 0; o < H * D * 2; o += 64) {
                __builtin_prefetch(s->pf_in + ((t * N + s->n0) * D) * 2 + o, 0, 3);
                if (s->pf_ig) __builtin_prefetch(s->pf_ig + ((t * N + s->n0) * D) * 2 + o, 1, 3);
            }
    }
    /* per window, once for all heads: its ring slot (c % W, a 64-bit division) and its weight
     * row r·N; these were computed per window and head (round 28) */
    int64_t slot0[NSA_FAST_MAX_D / 16 + 1], wrow[NSA_FAST_MAX_D / 16 + 1];
    for (int64_t i = 0; i < nw; i++) {
        slot0[i] = (s->cb + lo_i + i) % W;
        wrow[i] = (pos - (lo_i + i) * d) * N;
    }
    for (int64_t h = 0; h < H; h++) {
        int64_t n = s->n0 + h, t = s->prev + pos;
        for (int64_t i = 0; i < nw; i++) {
            int64_t c = s->cb + lo_i + i, slot = h * W + slot0[i];
            double *gr = s->ring + slot * NSA_SLOT(D);
            if (s->tag[slot] != c) {
                row(&j->og, c, n, N, D, gr);
                s->tag[slot] = c;
            }
            rows[i] = gr;
            accs[i] = s->acc + (wrow[i] + h) * NSA_LANES;
            wt[i] = f->w[wrow[i] + n];
        }
        if (tok(j, t, n, nw, rows, accs, wt)) continue;
        row(&j->in, t, n, N, D, s->x);
        for (int64_t i = 0; i < nw; i++) nsa_dot16_portable(D, rows[i], s->x, accs[i]);
        nsa_ig_row_portable(&j->ig, (t * N + n) * D, D, nw, rows, wt);
    }
}

static void nsa_row_portable(const acl_view *v, int64_t row, int64_t n, int64_t N, int64_t D, double *out)
{
    acl_view_load_f64(v, (row * N + n) * D, D, out);
}

static bool nsa_tok_none(const nsa_job *j, int64_t t, int64_t n, int64_t nw, const double *const *rows,
                         double *const *accs, const double *w)
{
    (void)j; (void)t; (void)n; (void)nw; (void)rows; (void)accs; (void)w;
    return false;
}

static void nsa_pos_portable(const nsa_walk *s, int64_t pos, int64_t lo_i, int64_t hi_i)
{
    nsa_walk_pos(s, pos, lo_i, hi_i, nsa_row_portable, nsa_tok_none);
}

#ifdef ACL_HAVE_AVX512_KERNELS
/* Contiguous 16-bit rows converted in registers (D is a multiple of 16); strided views through
 * the portable view functions. */
ACL_AVX512_TARGET static inline void nsa_row_avx512(const acl_view *v, int64_t row, int64_t n, int64_t N, int64_t D,
                                                    double *out)
{
    if (!v->contiguous) {
        acl_view_load_f64(v, (row * N + n) * D, D, out);
        return;
    }
    const uint16_t *p = (const uint16_t *)(const void *)v->data + v->offset + (row * N + n) * D;
    acl_row16_to_f64(p, D, out, v->dtype == ACL_BF16);
}

/* One (token, head) from contiguous 16-bit input and inputGrad: the input row is converted in
 * registers, 16 elements a step, and used by every covering window; per window the two
 * weightGrad accumulators (lanes k & 15, as nsa_dot16_portable) and the inputGrad sum
 * (Σ_i w_i·g_i from +0, windows ascending, as nsa_ig_row_portable) stay in registers across the
 * row: no converted input row is stored and reloaded.  NW is a constant once inlined.
 * Strided input or inputGrad (tok returns false) take the portable helpers: the same bits. */
ACL_AVX512_TARGET static inline __attribute__((always_inline)) void
nsa_tok_rows(int64_t D, int64_t nw, const uint16_t *x16, const double *const *rows, double *const *accs,
             const double *w, uint16_t *out, bool bf, bool nt)
{
    __m512d a[2 * (NSA_FAST_MAX_D / 16 + 1)], wv[NSA_FAST_MAX_D / 16 + 1];
    for (int64_t i = 0; i < nw; i++) {
        a[2 * i] = _mm512_loadu_pd(accs[i]);
        a[2 * i + 1] = _mm512_loadu_pd(accs[i] + 8);
        wv[i] = _mm512_set1_pd(w[i]);
    }
    for (int64_t k = 0; k < D; k += 16) {
        __m512d x0 = _mm512_cvtps_pd(acl_load8_16(x16 + k, 0xff, bf));
        __m512d x1 = _mm512_cvtps_pd(acl_load8_16(x16 + k + 8, 0xff, bf));
        __m512d o0 = _mm512_setzero_pd(), o1 = _mm512_setzero_pd();
        for (int64_t i = 0; i < nw; i++) {
            __m512d g0 = _mm512_loadu_pd(rows[i] + k), g1 = _mm512_loadu_pd(rows[i] + k + 8);
            a[2 * i] = _mm512_fmadd_pd(g0, x0, a[2 * i]);
            a[2 * i + 1] = _mm512_fmadd_pd(g1, x1, a[2 * i + 1]);
            o0 = _mm512_fmadd_pd(wv[i], g0, o0);
            o1 = _mm512_fmadd_pd(wv[i], g1, o1);
        }
        __m512 o = _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(o0)), _mm512_cvtpd_ps(o1), 1);
        if (nt) _mm256_stream_si256((__m256i *)(void *)(out + k), acl_pack16_16(o, bf));
        else acl_store16_16(out + k, 0xffff, o, bf);
    }
    for (int64_t i = 0; i < nw; i++) {
        _mm512_storeu_pd(accs[i], a[2 * i]);
        _mm512_storeu_pd(accs[i] + 8, a[2 * i + 1]);
    }
}

ACL_AVX512_TARGET static bool nsa_tok_avx512(const nsa_job *j, int64_t t, int64_t n, int64_t nw,
                                             const double *const *rows, double *const *accs, const double *w)
{
    if (!j->in.contiguous || !j->ig.contiguous) return false;
    const int64_t N = j->N, D = j->D;
    const bool bf = j->in.dtype == ACL_BF16;
    const uint16_t *x16 = (const uint16_t *)(const void *)j->in.data + j->in.offset + (t * N + n) * D;
    uint16_t *out = (uint16_t *)(void *)j->ig.data + j->ig.offset + (t * N + n) * D;
#define NSA_TOK(NW) nsa_tok_rows(D, NW, x16, rows, accs, w, out, bf, j->nt)
    switch (nw) { /* l/d = 2, 3, 4: 1..4 covering windows get their own loop */
    case 1: NSA_TOK(1); break;
    case 2: NSA_TOK(2); break;
    case 3: NSA_TOK(3); break;
    case 4: NSA_TOK(4); break;
    default: NSA_TOK(nw); break;
    }
#undef NSA_TOK
    return true;
}

ACL_AVX512_TARGET static void nsa_pos_avx512(const nsa_walk *s, int64_t pos, int64_t lo_i, int64_t hi_i)
{
    nsa_walk_pos(s, pos, lo_i, hi_i, nsa_row_avx512, nsa_tok_avx512);
}
#endif

#ifdef ACL_HAVE_AVX2_KERNELS
/* The AVX2 twins (CPUs without AVX-512, round 28): the same sums in the same order, 4 doubles a
 * vector.
 *
 * 4 f16 / bf16 values widened exactly to double: 4-lane F16C (or the bf16 shift, as a word
 * interleave with 0) from an 8-byte load.  In the row loop below, against one 8-lane conversion
 * split in two (VEXTRACTF128): f16 0.317 -> 0.304 ms, bf16 0.387 -> 0.365 ms (1024 tokens x 4
 * heads x 128, l 32, d 16, 1 thread, best of 500, in one process). */
ACL_AVX2_TARGET static inline __m256d nsa_load4_16_pd(const uint16_t *p, bool bf)
{
    __m128i h = _mm_loadl_epi64((const __m128i *)(const void *)p);
    return _mm256_cvtps_pd(bf ? _mm_castsi128_ps(_mm_unpacklo_epi16(_mm_setzero_si128(), h)) : _mm_cvtph_ps(h));
}

/* nsa_row_avx512's conversion, 4 elements a step (the dtype a constant in each loop) */
ACL_AVX2_TARGET static inline void nsa_row_avx2(const acl_view *v, int64_t row, int64_t n, int64_t N, int64_t D,
                                                double *out)
{
    float *f = (float *)(void *)(out + NSA_SLOT_F32(D)); /* the f32 mirror and the range flag (NSA_SLOT) */
    double *flag = out + NSA_SLOT_FLAG(D);
    if (!v->contiguous) {
        acl_view_load_f64(v, (row * N + n) * D, D, out);
        bool in = true, eo = v->dtype == ACL_BF16;
        for (int64_t k = 0; k < D; k++) {
            f[eo ? NSA_EO(k) : k] = (float)out[k]; /* exact: 16-bit values */
            in = in && nsa_f32_range(out[k]);
        }
        *flag = in;
        return;
    }
    const uint16_t *p = (const uint16_t *)(const void *)v->data + v->offset + (row * N + n) * D;
    *flag = 1.0;
    if (v->dtype == ACL_BF16) {
        __m128i mx = _mm_setzero_si128(), mn = _mm_set1_epi16(-1);
        for (int64_t k = 0; k < D; k += 16) { /* D is a multiple of 16 */
            __m256i w = _mm256_loadu_si256((const __m256i *)(const void *)(p + k));
            __m256 e, o;
            acl_split16_bf16_eo(w, &e, &o); /* the floats, even / odd (NSA_EO) */
            _mm256_storeu_ps(f + k, e);
            _mm256_storeu_ps(f + k + 8, o);
            for (int q = 0; q < 2; q++) { /* the doubles in element order */
                __m128i b = q ? _mm256_extracti128_si256(w, 1) : _mm256_castsi256_si128(w);
                acl_bf16_range_track8(b, &mx, &mn);
                __m256 h = acl_widen8_16(b, true);
                _mm256_storeu_pd(out + k + 8 * q, _mm256_cvtps_pd(_mm256_castps256_ps128(h)));
                _mm256_storeu_pd(out + k + 8 * q + 4, _mm256_cvtps_pd(_mm256_extractf128_ps(h, 1)));
            }
        }
        *flag = acl_bf16_range_ok(mx, mn);
    } else
        for (int64_t k = 0; k < D; k += 8) {
            __m256 h = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(p + k)));
            _mm256_storeu_ps(f + k, h);
            _mm256_storeu_pd(out + k, _mm256_cvtps_pd(_mm256_castps256_ps128(h)));
            _mm256_storeu_pd(out + k + 4, _mm256_cvtps_pd(_mm256_extractf128_ps(h, 1)));
        }
}

/* 16 f32 (the inputGrad sums, rounded from double by the half passes) rounded to f16 / bf16:
 * acl_pack8_16_avx2's bits.  bf16 without a NaN among them (one compare each and a mask test):
 * the two halves' round-to-nearest-even (acl_bf16_rne8_avx2: ACL_BF16_RNE, where the conversion
 * mutants are planted) and one 16-bit pack; else acl_pack8_16_avx2 (which quiets NaN).  Against
 * two acl_pack8_16_avx2: bf16 0.315 -> 0.295 ms (1024 tokens x 4 heads x 128, l 32, d 16, 1
 * thread, best of 500, in one process). */
ACL_AVX2_TARGET static inline __m256i nsa_pack16_f32(__m256 f0, __m256 f1, bool bf)
{
    if (!bf) return _mm256_set_m128i(_mm256_cvtps_ph(f1, ACL_F16_ROUND), _mm256_cvtps_ph(f0, ACL_F16_ROUND));
    if (_mm256_movemask_ps(_mm256_or_ps(_mm256_cmp_ps(f0, f0, _CMP_UNORD_Q), _mm256_cmp_ps(f1, f1, _CMP_UNORD_Q))))
        return _mm256_set_m128i(acl_pack8_16_avx2(f1, true), acl_pack8_16_avx2(f0, true));
    __m256i r0 = acl_bf16_rne8_avx2(f0), r1 = acl_bf16_rne8_avx2(f1);
    /* 16-bit words r0[0-3] r1[0-3] | r0[4-7] r1[4-7]: the middle 8-byte quarters swapped */
    return _mm256_permute4x64_epi64(_mm256_packus_epi32(r0, r1), 0xd8);
}

/* nsa_tok_rows on AVX2: lanes h..h+7 of every 16-element block of the row (elements k + h ..
 * k + h + 7, k = 0, 16, ..): per window the two accumulators of those lanes (element k + h + m
 * into lane h + m, k ascending: nsa_dot16_portable's order) and the 8 inputGrad sums
 * Σ_i w_i·g_i from +0, windows ascending, left in o[k + h .. k + h + 7] rounded to f32 (as doubles
 * until round 30, rounded in the 16-bit pass: 1 Mi elements, 1 thread, alternating, f16
 * 0.498-0.508 -> 0.474-0.481 ms, bf16 0.625-0.627 -> 0.545-0.564; half the bytes, no VINSERTF128
 * joins).  The 16 ymm
 * registers hold 2·NW accumulators, NW weights, x and o (two each) for NW ≤ 4; the 4·NW of a
 * whole 16-element block would not from NW = 2 on (one pass with them spilled measured 4 %
 * slower for NW = 2). */
ACL_AVX2_TARGET static inline __attribute__((always_inline)) void
nsa_tok_half_avx2(int64_t D, int64_t nw, int64_t h, const uint16_t *x16, const double *const *rows,
                  double *const *accs, const double *w, float *o, bool bf)
{
    __m256d a[2 * (NSA_FAST_MAX_D / 16 + 1)], wv[NSA_FAST_MAX_D / 16 + 1];
    for (int64_t i = 0; i < nw; i++) {
        a[2 * i] = _mm256_loadu_pd(accs[i] + h);
        a[2 * i + 1] = _mm256_loadu_pd(accs[i] + h + 4);
        wv[i] = _mm256_set1_pd(w[i]);
    }
    for (int64_t k = h; k < D; k += 16) {
        __m256d x0 = nsa_load4_16_pd(x16 + k, bf), x1 = nsa_load4_16_pd(x16 + k + 4, bf);
        __m256d o0 = _mm256_setzero_pd(), o1 = _mm256_setzero_pd();
        for (int64_t i = 0; i < nw; i++) {
            __m256d g0 = _mm256_loadu_pd(rows[i] + k), g1 = _mm256_loadu_pd(rows[i] + k + 4);
            a[2 * i] = _mm256_fmadd_pd(g0, x0, a[2 * i]);
            a[2 * i + 1] = _mm256_fmadd_pd(g1, x1, a[2 * i + 1]);
            o0 = _mm256_fmadd_pd(wv[i], g0, o0);
            o1 = _mm256_fmadd_pd(wv[i], g1, o1);
        }
        _mm_storeu_ps(o + k, _mm256_cvtpd_ps(o0)); /* rounded to f32 here (round 30) */
        _mm_storeu_ps(o + k + 4, _mm256_cvtpd_ps(o1));
    }
    for (int64_t i = 0; i < nw; i++) {
        _mm256_storeu_pd(accs[i] + h, a[2 * i]);
        _mm256_storeu_pd(accs[i] + h + 4, a[2 * i + 1]);
    }
}

/* One (token, head): the low halves of the blocks, then the high halves, then the inputGrad row
 * rounded to 16 bits and stored (or streamed: 32 bytes on 32), 16 elements a step.  Rounding in
 * that separate loop rather than at the end of each half step: f16 0.247 -> 0.238 ms, bf16
 * 0.348 -> 0.322 ms (1024 tokens x 4 heads x 128, l 32, d 16, 1 thread, best of 500, in one
 * process; perf put the time on the stores waiting for the conversions' long chains). */
ACL_AVX2_TARGET static inline __attribute__((always_inline)) void
nsa_tok_rows_avx2(int64_t D, int64_t nw, const uint16_t *x16, const double *const *rows, double *const *accs,
                  const double *w, uint16_t *out, bool bf, bool nt)
{
    float o[NSA_FAST_MAX_D];
    nsa_tok_half_avx2(D, nw, 0, x16, rows, accs, w, o, bf);
    nsa_tok_half_avx2(D, nw, 8, x16, rows, accs, w, o, bf);
    for (int64_t k = 0; k < D; k += 16) {
        __m256i v = nsa_pack16_f32(_mm256_loadu_ps(o + k), _mm256_loadu_ps(o + k + 8), bf);
        if (nt) _mm256_stream_si256((__m256i *)(void *)(out + k), v);
        else _mm256_storeu_si256((__m256i *)(void *)(out + k), v);
    }
}

/* nsa_tok_rows_avx2 for one or two windows (NW ≤ 2, l ≤ 2·d: the bench row's l 32, d 16), in two
 * passes over the row.  The weightGrad pass takes whole 16-element blocks: the 4·NW accumulators
 * (element k + m into lane m of window i's 16, k ascending: the same sums) advance together, 8
 * independent FMA chains for NW = 2 where a half pass has 4, which left Zen 3's two FMA pipes
 * waiting on the 4-cycle latency (round 30); g read as FMA memory operands, so accumulators and
 * x fit the 16 registers.  The inputGrad pass then sums Σ_i w_i·g_i from +0, windows ascending,
 * for 16 elements, rounds them to f32 and to 16 bits and stores them: the same operations.
 *
 * Round 31: that pass in f32, from the rows' f32 mirrors (NSA_SLOT), when every weight (j->w32)
 * and every value of the covering rows (their flags) is ±0 or of magnitude in [2^-63, 2^64):
 * always for f16, for bf16 by those tests.  Then each product a = w_1·g_1, b = w_2·g_2 is exact in
 * f32 (at most 22 significant bits, normal), and fma_f32(w_2, g_2, fma_f32(w_1, g_1, +0)) =
 * RN_f32(a + b) equals the double pass's RN_f32(RN_f64(a + b)): if a + b is exact in double the
 * two are the same rounding; if not, the two products' bits span more than 53 places, so (|a| ≥
 * |b|) |b| < 2^-30·|a|, below half an f32 unit of a, and both roundings give a.  ±0 and the
 * special values follow the same IEEE operations in the same order (+0 first, w before g).  Per
 * 16 elements and two windows 4 f32 FMAs and two conversions to 16 bits, where the double pass
 * took 8 FMAs of 4 lanes, 4 narrowing conversions and 2 joins.  The bench row (l 32, d 16, D
 * 128), both orders (scripts/ab.sh, 6 ratios), time against the double pass: 1 Mi elements, 1
 * thread, f16 1.007 (a draw), bf16 0.850; 16 Mi, 2 threads, f16 0.899, bf16 0.864. */
ACL_AVX2_TARGET static inline __attribute__((always_inline)) void
nsa_tok_rows2_avx2(int64_t D, int64_t nw, const uint16_t *x16, const double *const *rows, double *const *accs,
                   const double *w, uint16_t *out, bool bf, bool nt, bool w32)
{
    __m256d a[8]; /* a[4i + q]: window i, lanes 4q .. 4q + 3 */
    for (int64_t i = 0; i < nw; i++)
        for (int q = 0; q < 4; q++) a[4 * i + q] = _mm256_loadu_pd(accs[i] + 4 * q);
    for (int64_t k = 0; k < D; k += 16) {
        __m256d x[4];
        for (int q = 0; q < 4; q++) x[q] = nsa_load4_16_pd(x16 + k + 4 * q, bf);
        for (int64_t i = 0; i < nw; i++)
            for (int q = 0; q < 4; q++) a[4 * i + q] = _mm256_fmadd_pd(_mm256_loadu_pd(rows[i] + k + 4 * q), x[q], a[4 * i + q]);
    }
    for (int64_t i = 0; i < nw; i++)
        for (int q = 0; q < 4; q++) _mm256_storeu_pd(accs[i] + 4 * q, a[4 * i + q]);
    bool f32 = w32;
    for (int64_t i = 0; i < nw; i++) f32 = f32 && rows[i][NSA_SLOT_FLAG(D)] != 0.0;
    if (f32) { /* the same sums in f32, from the rows' f32 mirrors (see above) */
        __m256 wf[2];
        const float *gf[2];
        for (int64_t i = 0; i < nw; i++) wf[i] = _mm256_set1_ps((float)w[i]), gf[i] = (const float *)(const void *)(rows[i] + NSA_SLOT_F32(D));
        for (int64_t k = 0; k < D; k += 16) {
            __m256 o0 = _mm256_setzero_ps(), o1 = _mm256_setzero_ps();
            for (int64_t i = 0; i < nw; i++) {
                o0 = _mm256_fmadd_ps(wf[i], _mm256_loadu_ps(gf[i] + k), o0);
                o1 = _mm256_fmadd_ps(wf[i], _mm256_loadu_ps(gf[i] + k + 8), o1);
            }
            /* bf16: o0 holds the even elements, o1 the odd ones (NSA_EO), merged by one word
             * blend, and no NaN: the products of values within the range are finite, so each sum
             * is finite or ±Inf (no Inf - Inf): the rounding without its NaN test */
            __m256i v = bf ? acl_pack16_bf16_eo(o0, o1, true) : nsa_pack16_f32(o0, o1, false);
            if (nt) _mm256_stream_si256((__m256i *)(void *)(out + k), v);
            else _mm256_storeu_si256((__m256i *)(void *)(out + k), v);
        }
        return;
    }
    __m256d wv[2];
    for (int64_t i = 0; i < nw; i++) wv[i] = _mm256_set1_pd(w[i]);
    for (int64_t k = 0; k < D; k += 16) {
        __m256d o[4];
        for (int q = 0; q < 4; q++) o[q] = _mm256_setzero_pd();
        for (int64_t i = 0; i < nw; i++)
            for (int q = 0; q < 4; q++) o[q] = _mm256_fmadd_pd(wv[i], _mm256_loadu_pd(rows[i] + k + 4 * q), o[q]);
        __m256i v = nsa_pack16_f32(acl_join4_ps(o[0], o[1]), acl_join4_ps(o[2], o[3]), bf);
        if (nt) _mm256_stream_si256((__m256i *)(void *)(out + k), v);
        else _mm256_storeu_si256((__m256i *)(void *)(out + k), v);
    }
}

/* inlined into nsa_pos_avx2 (and its walk): as a called function, f16 0.282 -> 0.257 ms, bf16
 * 0.372 -> 0.349 ms (1024 tokens x 4 heads x 128, l 32, d 16, 1 thread, best of 500) */
ACL_AVX2_TARGET static inline __attribute__((always_inline)) bool
nsa_tok_avx2(const nsa_job *j, int64_t t, int64_t n, int64_t nw, const double *const *rows, double *const *accs,
             const double *w)
{
    if (!j->in.contiguous || !j->ig.contiguous) return false;
    const int64_t N = j->N, D = j->D;
    const bool bf = j->in.dtype == ACL_BF16;
    const uint16_t *x16 = (const uint16_t *)(const void *)j->in.data + j->in.offset + (t * N + n) * D;
    uint16_t *out = (uint16_t *)(void *)j->ig.data + j->ig.offset + (t * N + n) * D;
#define NSA_TOK(NW, BF) nsa_tok_rows_avx2(D, NW, x16, rows, accs, w, out, BF, j->nt)
#define NSA_TOKS(BF)                                                                                \
    switch (nw) { /* l/d = 2, 3, 4: 1..4 covering windows get their own loop */                   \
    case 1: nsa_tok_rows2_avx2(D, 1, x16, rows, accs, w, out, BF, j->nt, j->w32); break;           \
    case 2: nsa_tok_rows2_avx2(D, 2, x16, rows, accs, w, out, BF, j->nt, j->w32); break;           \
    case 3: NSA_TOK(3, BF); break;                                                                  \
    case 4: NSA_TOK(4, BF); break;                                                                  \
    default: NSA_TOK(nw, BF); break;                                                                \
    }
    if (bf) NSA_TOKS(true) else NSA_TOKS(false) /* the dtype a constant in each loop */
#undef NSA_TOKS
#undef NSA_TOK
    return true;
}

/* nsa_walk_pos for one or two covering windows, contiguous input and inputGrad (the bench row's
 * l/d = 2): the same work per (token, head), with what the heads of a position share (the job's
 * fields, the row pointers, the dtype and window-count dispatch) set up once for them */
#define NSA_POS2(NW, BF)                                                                            \
    for (int64_t h = 0; h < H; h++) {                                                               \
        const double *rows[2];                                                                      \
        double *accs[2], wt[2];                                                                     \
        for (int64_t i = 0; i < (NW); i++) {                                                        \
            int64_t slot = h * W + slot0[i];                                                        \
            double *gr = ring + slot * NSA_SLOT(D);                                                 \
            if (tag[slot] != c[i]) {                                                                \
                nsa_row_avx2(&j->og, c[i], n0 + h, N, D, gr);                                       \
                tag[slot] = c[i];                                                                   \
            }                                                                                       \
            rows[i] = gr;                                                                           \
            accs[i] = acc + (wrow[i] + h) * NSA_LANES;                                              \
            wt[i] = wv[wrow[i] + n0 + h];                                                           \
        }                                                                                           \
        nsa_tok_rows2_avx2(D, (NW), x16 + h * D, rows, accs, wt, out + h * D, (BF), nt, w32);       \
    }

ACL_AVX2_TARGET static void nsa_pos_avx2(const nsa_walk *s, int64_t pos, int64_t lo_i, int64_t hi_i)
{
    const nsa_fast *f = s->f;
    const nsa_job *j = f->j;
    const int64_t nw = hi_i - lo_i + 1;
    if (nw > 2 || !j->in.contiguous || !j->ig.contiguous || s->pf_in) {
        nsa_walk_pos(s, pos, lo_i, hi_i, nsa_row_avx2, nsa_tok_avx2);
        return;
    }
    const int64_t d = j->a->d, D = j->D, N = j->N, W = f->W, H = s->H, n0 = s->n0, t = s->prev + pos;
    const bool nt = j->nt, w32 = j->w32;
    const uint16_t *x16 = (const uint16_t *)(const void *)j->in.data + j->in.offset + (t * N + n0) * D;
    uint16_t *out = (uint16_t *)(void *)j->ig.data + j->ig.offset + (t * N + n0) * D;
    double *ring = s->ring, *acc = s->acc;
    int64_t *tag = s->tag;
    const double *wv = f->w;
    int64_t c[2], slot0[2], wrow[2];
    for (int64_t i = 0; i < nw; i++) {
        c[i] = s->cb + lo_i + i;
        slot0[i] = c[i] % W;
        wrow[i] = (pos - (lo_i + i) * d) * N;
    }
    if (j->in.dtype == ACL_BF16) {
        if (nw == 1) NSA_POS2(1, true) else NSA_POS2(2, true)
    } else {
        if (nw == 1) NSA_POS2(1, false) else NSA_POS2(2, false)
    }
}
#undef NSA_POS2
#endif

/* +0 into inputGrad rows of tokens [t0, t1) that no window covers, heads [n0, n1). */
static void nsa_ig_zero(const acl_view *ig, int64_t t0, int64_t t1, int64_t n0, int64_t n1, int64_t N, int64_t D)
{
    static const float zero[NSA_FAST_MAX_D];
    for (int64_t t = t0; t < t1; t++)
        for (int64_t n = n0; n < n1; n++) acl_view_store_f32(ig, (t * N + n) * D, D, zero);
}

/* Task g·K + q: the tokens of segment q × heads [g·HG, (g + 1)·HG): their weightGrad lanes in
 * segment q's part and their inputGrad rows. */
static void nsa_fast_task(const nsa_fast *f, int64_t task, double *ring, int64_t *tag)
{
    const nsa_job *j = f->j;
    const nsa_args *a = j->a;
    const int64_t *ends = a->seq, *cbase = a->seq + a->B;
    const int64_t l = a->l, d = a->d, D = j->D, N = j->N, W = f->W, HG = f->HG;
    void (*at_pos)(const nsa_walk *, int64_t, int64_t, int64_t) = nsa_pos_portable;
    bool prefetch = true;
#ifdef ACL_HAVE_AVX512_KERNELS
    if (acl_have_avx512()) at_pos = nsa_pos_avx512;
#ifdef ACL_HAVE_AVX2_KERNELS
    else if (acl_have_avx2()) at_pos = nsa_pos_avx2, prefetch = false; /* see below */
#endif
#endif
    int64_t g = task / f->K, q = task % f->K;
    int64_t n0 = g * HG, n1 = n0 + HG < N ? n0 + HG : N;
    if (n0 >= n1) return;
#if ACLCONFORM_MUTANT == 44 /* segment-boundary: the first token of every weightGrad segment after the first is skipped */
    int64_t t0 = nsa_seg_lo(q, j->T, f->K) + (q > 0), t1 = nsa_seg_lo(q + 1, j->T, f->K);
#else
    int64_t t0 = nsa_seg_lo(q, j->T, f->K), t1 = nsa_seg_lo(q + 1, j->T, f->K);
#endif
    /* the input rows stream from memory; the hardware prefetcher alone left the row conversion
     * waiting on them (half of the walk's samples, round 6).  Not on the AVX2 path: on the Zen 3
     * of round 28 the rows ran faster without (16 Mi elements, 1 thread, best of 8, in one
     * process: f16 8.27-8.68 -> 7.87-7.97 ms, bf16 10.5-10.9 -> 9.9-10.4 ms; in cache 0.237 ->
     * 0.228 ms) */
    const char *pf_in = prefetch && j->in.contiguous ? j->in.data + j->in.offset * 2 : NULL;
    nsa_walk s = {.f = f, .ring = ring, .x = ring + HG * W * NSA_SLOT(D), .tag = tag, .n0 = n0, .H = n1 - n0,
                  .acc = f->part + ((q * l) * N + n0) * NSA_LANES, .pf_in = pf_in,
                  .pf_ig = pf_in && j->ig.contiguous && !j->nt ? j->ig.data + j->ig.offset * 2 : NULL,
                  .pf_rows = nsa_div_up(NSA_PF_BYTES, (n1 - n0) * D * 2)};
    for (int64_t r = 0; r < l; r++)
        for (int64_t k = 0; k < s.H * NSA_LANES; k++) s.acc[r * N * NSA_LANES + k] = 0.0;
    for (int64_t k = 0; k < s.H * W; k++) s.tag[k] = -1;
    for (int64_t b = 0; b < a->B && s.prev < t1; b++) {
        int64_t nb = nsa_nblk(ends[b] - s.prev, l, d), covered = nb > 0 ? (nb - 1) * d + l : 0;
        int64_t p0 = t0 > s.prev ? t0 - s.prev : 0, p1 = (ends[b] < t1 ? ends[b] : t1) - s.prev;
        s.cb = cbase[b];
#if ACLCONFORM_MUTANT == 43 /* window-tail: fast weightGrad: last window of each batch not walked (pos < (nb-1)*d + l - 1) */
        for (int64_t pos = p0; pos < p1 && pos < covered - 1; pos++) {
#else
        for (int64_t pos = p0; pos < p1 && pos < covered; pos++) {
#endif
            int64_t lo_i, hi_i;
            nsa_covering(pos, l, d, nb, &lo_i, &hi_i);
            if (lo_i <= hi_i) at_pos(&s, pos, lo_i, hi_i);
        }
        int64_t z0 = s.prev + (covered > p0 ? covered : p0);
        if (z0 < s.prev + p1) nsa_ig_zero(&j->ig, z0, s.prev + p1, n0, n1, N, D);
        s.prev = ends[b];
    }
    if (j->nt) acl_nt_fence();
}

/* Worker w of f->workers: tasks [w·tasks/workers, (w + 1)·tasks/workers) with its own scratch. */
static void nsa_fast_worker(void *p, int64_t begin, int64_t end)
{
    const nsa_fast *f = p;
    int64_t tasks = f->G * f->K;
    for (int64_t w = begin; w < end; w++)
        for (int64_t t = w * tasks / f->workers; t < (w + 1) * tasks / f->workers; t++)
            nsa_fast_task(f, t, f->scratch + w * f->stride, f->tags + w * NSA_TAGS(f->HG * f->W));
}

/* weightGrad[r, n] for e = r·N + n in [begin, end): the segments' lanes added in order, then the tree. */
static void nsa_fast_combine(void *p, int64_t begin, int64_t end)
{
    const nsa_fast *f = p;
    const nsa_job *j = f->j;
    const int64_t ln = j->a->l * j->N;
    for (int64_t e = begin; e < end; e++) {
        double lanes[NSA_LANES];
        for (int k = 0; k < NSA_LANES; k++) lanes[k] = f->part[e * NSA_LANES + k];
        for (int64_t q = 1; q < f->K; q++)
            for (int k = 0; k < NSA_LANES; k++) lanes[k] += f->part[(q * ln + e) * NSA_LANES + k];
        float v = (float)acl_sum_tree16(lanes);
        acl_view_store_f32(&j->wg, e, 1, &v);
    }
}

/* Returns false (nothing written) when the streaming path does not apply or memory is short. */
static bool nsa_by_rows(nsa_job *j)
{
    const nsa_args *a = j->a;
    int64_t W = nsa_div_up(a->l, a->d) + 1, N = j->N, D = j->D, l = a->l;
    if (D > NSA_FAST_MAX_D || l > NSA_FAST_MAX_D) return false;
    /* tasks: K segments (nsa_segments: the shape alone decides) × G head groups, G > 1 only when
     * there are fewer segments than threads; the partition only decides who computes an output,
     * never how */
    int threads = aclconformGetNumThreads();
    int64_t K = nsa_segments(j->T, l, N), G = nsa_div_up(threads, K);
    if (G > N) G = N;
#if ACLCONFORM_MUTANT == 48 /* thread-partition: fast path: head groups sized by floor(N/G), the last heads of an uneven split never computed */
    int64_t HG = N / G > 0 ? N / G : 1;
#else
    int64_t HG = nsa_div_up(N, G);
#endif
    int64_t workers = G * K < threads ? G * K : threads, stride = HG * W * NSA_SLOT(D) + NSA_SLOT(D); /* the x row too: nsa_row_avx2 writes the mirror */
    if ((double)workers * (double)(stride + HG * W) * 8.0 + (double)(K + 1) * (double)(l * N) * NSA_LANES * 8.0 >
        NSA_FAST_MAX_BYTES)
        return false;
    double *w = malloc((size_t)(l * N) * sizeof *w), *part = malloc((size_t)(K * l * N * NSA_LANES) * sizeof *part);
    /* on 64-byte lines (stride and NSA_TAGS are multiples of 8 elements): no line shared by two
     * workers */
    double *scratch = aligned_alloc(64, (size_t)(workers * stride) * sizeof *scratch);
    int64_t *tags = aligned_alloc(64, (size_t)(workers * NSA_TAGS(HG * W)) * sizeof *tags);
    bool ok = w && part && scratch && tags;
    if (ok) {
        acl_view_load_f64(&j->w, 0, l * N, w);
        j->w32 = true;
        for (int64_t i = 0; i < l * N; i++) j->w32 = j->w32 && nsa_f32_range(w[i]);
        nsa_fast f = {j, w, part, scratch, tags, K, G, HG, W, stride, workers};
        acl_parallel_for(workers, 1, nsa_fast_worker, &f);
        acl_parallel_for(l * N, 64, nsa_fast_combine, &f);
    }
    free(w);
    free(part);
    free(scratch);
    free(tags);
    return ok;
}

static aclnnStatus nsa_kernel(void *p, void *ws, uint64_t ws_size)
{
    (void)ws; (void)ws_size;
    nsa_job j;
    j.a = p;
    acl_view_init(&j.og, &j.a->outputGrad);
    acl_view_init(&j.in, &j.a->input);
    acl_view_init(&j.w, &j.a->weight);
    acl_view_init(&j.ig, &j.a->inputGrad);
    acl_view_init(&j.wg, &j.a->weightGrad);
    j.T = j.a->input.dims[0];
    j.N = j.a->input.dims[1];
    j.D = j.a->input.dims[2];
    /* inputGrad by streaming stores (round 26): a large contiguous inputGrad on 32-byte lines is
     * written once and not read back, so its lines need not be read in first (32 of the bench
     * row's 101 MB of traffic); 16 Mi elements, 2 threads, side by side, f16 3.1-17 % faster */
    j.nt = false;
    j.w32 = false; /* set by nsa_by_rows */
#ifdef ACL_HAVE_AVX512_KERNELS
    /* rows of D 16-bit elements, 16 a store (AVX-512 and AVX2 alike; on the Zen 3 of round 28,
     * compute-bound and shared, streamed / plain, 16 Mi elements, 1 thread, best of 8, in one
     * process alternating: f16 8.64 / 8.78, 9.00 / 9.27, 12.28 / 12.57, 12.44 / 13.25 ms, bf16
     * 14.59 / 13.74, 14.06 / 14.08 ms; two threads could not be timed on the shared machine) */
    j.nt = (acl_have_avx512() || acl_have_avx2()) && acl_nt_wanted_rows(&j.ig, j.D, 32);
#endif
    /* ACLCONFORM_NSA_GATHER (diagnostic, tests): the gather path for every shape; the bits are
     * the streaming path's (tests/api/test_nsa_compress_grad.c compares them) */
    if (!getenv("ACLCONFORM_NSA_GATHER") && nsa_by_rows(&j)) return ACLNN_SUCCESS;
    acl_parallel_for(j.a->l * j.N, 1, nsa_weight_grad, &j);
    acl_parallel_for(j.T, 1, nsa_input_grad, &j);
    return ACLNN_SUCCESS;
}

static aclnnStatus nsa_validate(const aclTensor *og, const aclTensor *in, const aclTensor *w,
                                const aclIntArray *seq, int64_t l, int64_t d, int64_t seqType,
                                const char *layout, const aclTensor *ig, const aclTensor *wg)
{
    if (!og || !in || !w || !ig || !wg) return ACLNN_ERR_PARAM_NULLPTR;
    /* dtypes: all f16 or all bf16 */
    if (!acl_dtype_is16(og->dtype) || in->dtype != og->dtype ||
        w->dtype != og->dtype || ig->dtype != og->dtype || wg->dtype != og->dtype)
        return ACLNN_ERR_PARAM_INVALID;
    /* shapes: outputGrad [C,N,D], input and inputGrad [T,N,D], weight and weightGrad [l,N] */
    if (og->ndim != 3 || in->ndim != 3 || w->ndim != 2 || !acl_same_shape(in, ig) ||
        !acl_same_shape(w, wg) || og->dims[1] != in->dims[1] || og->dims[2] != in->dims[2] ||
        w->dims[1] != in->dims[1])
        return ACLNN_ERR_PARAM_INVALID;
    if (og->numel == 0 || in->numel == 0 || w->numel == 0) return ACLNN_ERR_PARAM_INVALID;
    /* attributes */
    int64_t D = in->dims[2], T = in->dims[0];
#if ACLCONFORM_MUTANT == 45 /* off-by-one-limit: l == d accepted (spec: l > d) */
    if (l <= 0 || d <= 0 || l % 16 != 0 || d % 16 != 0 || l < d || D % 16 != 0 || w->dims[0] != l)
#else
    if (l <= 0 || d <= 0 || l % 16 != 0 || d % 16 != 0 || l <= d || D % 16 != 0 || w->dims[0] != l)
#endif
        return ACLNN_ERR_PARAM_INVALID;
    if (seqType != 0) return ACLNN_ERR_PARAM_INVALID;
    if (layout && strcmp(layout, "TND") != 0) return ACLNN_ERR_PARAM_INVALID;
    int64_t C = 0;
    if (seq) {
        if (seq->size == 0 || !seq->data) return ACLNN_ERR_PARAM_INVALID;
        int64_t prev = 0;
        for (uint64_t b = 0; b < seq->size; b++) {
            if (seq->data[b] < prev) return ACLNN_ERR_PARAM_INVALID; /* negative or decreasing */
            C += nsa_nblk(seq->data[b] - prev, l, d);
            prev = seq->data[b];
        }
#if ACLCONFORM_MUTANT == 46 /* validation: actual sequence lengths not required to end at T */
        if (prev > T) return ACLNN_ERR_PARAM_INVALID;
#else
        if (prev != T) return ACLNN_ERR_PARAM_INVALID;
#endif
    } else {
        C = nsa_nblk(T, l, d);
    }
    if (og->dims[0] != C) return ACLNN_ERR_PARAM_INVALID;
    if (!acl_format_ok(og) || !acl_format_ok(in) || !acl_format_ok(w) || !acl_format_ok(ig) ||
        !acl_format_ok(wg) || !acl_output_ok(ig) || !acl_output_ok(wg))
        return ACLNN_ERR_PARAM_INVALID;
    if (!acl_data_ok(og) || !acl_data_ok(in) || !acl_data_ok(w) || !acl_data_ok(ig) ||
        !acl_data_ok(wg))
        return ACLNN_ERR_PARAM_NULLPTR;
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnNsaCompressGradGetWorkspaceSize(
    const aclTensor *outputGrad, const aclTensor *input, const aclTensor *weight,
    const aclIntArray *actSeqLenOptional, int64_t compressBlockSize, int64_t compressStride,
    int64_t actSeqLenType, char *layoutOptional, const aclTensor *inputGradOut,
    const aclTensor *weightGradOut, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    if (!executor) return ACLNN_ERR_PARAM_NULLPTR;
    *executor = NULL;
    if (!workspaceSize) return ACLNN_ERR_PARAM_NULLPTR;
    aclnnStatus st = nsa_validate(outputGrad, input, weight, actSeqLenOptional, compressBlockSize,
                                  compressStride, actSeqLenType, layoutOptional, inputGradOut,
                                  weightGradOut);
    if (st != ACLNN_SUCCESS) return st;
    int64_t B = actSeqLenOptional ? (int64_t)actSeqLenOptional->size : 1;
    size_t size = sizeof(nsa_args) + 2 * (size_t)B * sizeof(int64_t);
    nsa_args *a = calloc(1, size);
    if (!a) return ACLNN_ERR_RUNTIME_ERROR;
    a->outputGrad = *outputGrad;
    a->input = *input;
    a->weight = *weight;
    a->inputGrad = *inputGradOut;
    a->weightGrad = *weightGradOut;
    a->l = compressBlockSize;
    a->d = compressStride;
    a->B = B;
    int64_t prev = 0, c = 0;
    for (int64_t b = 0; b < B; b++) {
        a->seq[b] = actSeqLenOptional ? actSeqLenOptional->data[b] : input->dims[0];
        a->seq[B + b] = c;
        c += nsa_nblk(a->seq[b] - prev, a->l, a->d);
        prev = a->seq[b];
    }
    a->C = c;
    st = acl_executor_create(nsa_kernel, a, size, 0, workspaceSize, executor);
    free(a);
    return st;
}

aclnnStatus aclnnNsaCompressGrad(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                 aclrtStream stream)
{
    (void)stream;
    return acl_executor_run(workspace, workspaceSize, executor);
}
