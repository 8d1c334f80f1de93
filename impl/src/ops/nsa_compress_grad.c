/* aclnnNsaCompressGrad (ops.md §3), layout TND, l = compressBlockSize, d = compressStride:
 *   weightGrad[r,n]  = Σ_c Σ_k outputGrad[c,n,k] · input[start(c)+r, n, k]
 *   inputGrad[t,n,k] = Σ_{(c,r): start(c)+r = t} weight[r,n] · outputGrad[c,n,k]
 * with windows c = (batch b, i-th block), start(c) = a[b-1] + i·d, i < nblk(S_b).
 *
 * Both gradients are gathers, not scatters: every output element is one sum computed by one
 * thread in a fixed order (c ascending, then k; windows ascending), so the bits do not depend on
 * the thread count.  Products of two 16-bit values are exact in double and the sums accumulate in
 * double, so each output is one rounding (to f32, then the 16-bit store: ≤ 0.5 + 2^-13 ULP) of a
 * value with relative error ≤ n·2^-53 of its conditioning sum.  Rows along D are processed in
 * chunks of NSA_CHUNK (workspace 0).  Most shapes take the streaming path below (same sums in the
 * same order, far fewer conversions and cache misses); these gathers are its fallback. */
#include <stdlib.h>
#include <string.h>

#include "aclnnop/aclnn_nsa_compress_grad.h"
#include "runtime/check.h"
#include "runtime/simd512.h"
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
} nsa_job;

static inline int64_t nsa_nblk(int64_t S, int64_t l, int64_t d) { return S >= l ? (S - l) / d + 1 : 0; }

/* Σ g[k]·x[k] in double: 8 interleaved partial sums combined in a fixed tree, so the loop
 * vectorises and the result does not depend on anything but the inputs. */
ACL_KERNEL_CLONES static double nsa_dot(int64_t n, const float *g, const float *x)
{
    double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int64_t k = 0;
    for (; k + 8 <= n; k += 8)
        for (int j = 0; j < 8; j++) acc[j] += (double)g[k + j] * (double)x[k + j];
    for (; k < n; k++) acc[k & 7] += (double)g[k] * (double)x[k];
    return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

/* weightGrad[r, n] for q = r·N + n in [begin, end). */
static void nsa_weight_grad(void *p, int64_t begin, int64_t end)
{
    const nsa_job *j = p;
    const nsa_args *a = j->a;
    const int64_t *ends = a->seq;
    float g[NSA_CHUNK], x[NSA_CHUNK];
    for (int64_t q = begin; q < end; q++) {
        int64_t r = q / j->N, n = q % j->N;
        double acc = 0.0;
        int64_t c = 0, prev = 0;
        for (int64_t b = 0; b < a->B; b++) {
            int64_t nb = nsa_nblk(ends[b] - prev, a->l, a->d);
            for (int64_t i = 0; i < nb; i++, c++) {
                int64_t t = prev + i * a->d + r;
#if ACLCONFORM_MUTANT == 47 /* chunk-boundary: gather weightGrad (fallback path, D > 1024 or big rings): partial last D chunk dropped */
                for (int64_t k0 = 0; k0 + NSA_CHUNK <= j->D || k0 == 0; k0 += NSA_CHUNK) {
                    int64_t len = j->D - k0 < NSA_CHUNK ? j->D - k0 : NSA_CHUNK;
                    acl_view_load_f32(&j->og, (c * j->N + n) * j->D + k0, len, g);
#else
                for (int64_t k0 = 0; k0 < j->D; k0 += NSA_CHUNK) {
                    int64_t len = j->D - k0 < NSA_CHUNK ? j->D - k0 : NSA_CHUNK;
                    acl_view_load_f32(&j->og, (c * j->N + n) * j->D + k0, len, g);
#endif
                    acl_view_load_f32(&j->in, (t * j->N + n) * j->D + k0, len, x);
                    acc += nsa_dot(len, g, x);
                }
            }
            prev = ends[b];
        }
        float v = (float)acc;
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

/* ---- streaming path (D ≤ NSA_FAST_MAX_D and the rings fit) ----
 * The weightGrad gather above converts every outputGrad row l times and walks input by (r, c),
 * far from memory order: 3-4 % of the triad on the bench_speed shape.  Here weightGrad walks
 * tokens in memory order (t, then a group of heads), converts each input row once per task, and
 * keeps the converted outputGrad rows of the live windows (at most ceil(l/d) at a time) in a ring
 * per head; inputGrad (already in memory order) gets its weight from one converted copy (a small
 * malloc, l·N floats; without it the gather path runs) and a vectorised row update.  Every output
 * is still one sum in the gather path's order — weightGrad[r, n]: windows c ascending
 * (t = start(c) + r ascends with c), then k in NSA_CHUNK pieces through nsa_dot;
 * inputGrad[t, n, k]: covering windows ascending — so the bits are the gather path's and do not
 * depend on the partition (which only spreads head groups and row blocks over threads). */
#define NSA_FAST_MAX_D 1024

#define NSA_FAST_RING 24576 /* ring floats per task: heads × slots × D */
#define NSA_FAST_ACC 4096   /* weightGrad accumulators per task: rows × heads */

typedef struct {
    const nsa_job *j;
    const float *w;     /* weight, l × N, converted */
    int64_t G, RB;      /* weightGrad tasks: G groups of heads × RB blocks of rows */
    int64_t W;          /* ring slots per head: ceil(l/d) + 1 */
} nsa_fast;

static int64_t nsa_div_up(int64_t a, int64_t b) { return (a + b - 1) / b; }

#ifdef ACL_HAVE_AVX512_KERNELS
/* nsa_dot with x read as raw 16-bit and converted in registers: lane k of acc is acc[k & 7] of
 * nsa_dot (the tail under a mask keeps that mapping), the products are exact so the FMA is its
 * add, and the tree is the same: the same bits. */
ACL_AVX512_TARGET static double nsa_dot16(int64_t n, const float *g, const uint16_t *x, bool bf)
{
    __m512d acc = _mm512_setzero_pd();
    for (int64_t k = 0; k < n; k += 8) {
        __mmask8 m = acl_mask8(n - k);
        __m512d gd = _mm512_cvtps_pd(acl_loadu8_ps(g + k, m));
        acc = _mm512_mask3_fmadd_pd(gd, _mm512_cvtps_pd(acl_load8_16(x + k, m, bf)), acc, m);
    }
    double a[8];
    _mm512_storeu_pd(a, acc);
    return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
}
#endif

/* weightGrad rows [r0, r1) × heads [n0, n1) for task q = g·RB + rb.  Tokens are walked in
 * memory order (t, then the group's heads), so the task streams its part of input once; the
 * outputGrad rows of the live windows stay converted in a ring per head (tagged by window). */
static void nsa_weight_grad_fast(void *p, int64_t begin, int64_t end)
{
    const nsa_fast *f = p;
    const nsa_job *j = f->j;
    const nsa_args *a = j->a;
    const int64_t *ends = a->seq, *cbase = a->seq + a->B;
    const int64_t l = a->l, d = a->d, D = j->D, N = j->N, W = f->W;
#if ACLCONFORM_MUTANT == 48 /* thread-partition: fast path: head groups sized by floor(N/G), the last heads of an uneven split never computed */
    const int64_t HG = N / f->G > 0 ? N / f->G : 1, RL = nsa_div_up(l, f->RB);
#else
    const int64_t HG = nsa_div_up(N, f->G), RL = nsa_div_up(l, f->RB);
#endif
    float ring[NSA_FAST_RING], x[NSA_FAST_MAX_D];
    int64_t tag[NSA_FAST_RING / 16]; /* ≥ heads × slots (D ≥ 16) */
    double acc[NSA_FAST_ACC];
#ifdef ACL_HAVE_AVX512_KERNELS
    const bool raw = j->in.contiguous && acl_have_avx512(), bf = j->in.dtype == ACL_BF16;
    const uint16_t *in16 = (const uint16_t *)(const void *)j->in.data + j->in.offset;
#endif
    for (int64_t q = begin; q < end; q++) {
        int64_t g = q / f->RB, rb = q % f->RB;
        int64_t n0 = g * HG, n1 = n0 + HG < N ? n0 + HG : N;
        int64_t r0 = rb * RL, r1 = r0 + RL < l ? r0 + RL : l;
        if (n0 >= n1 || r0 >= r1) continue;
        int64_t H = n1 - n0;
        for (int64_t k = 0; k < (r1 - r0) * H; k++) acc[k] = 0.0;
        for (int64_t k = 0; k < H * W; k++) tag[k] = -1;
        int64_t prev = 0;
        for (int64_t b = 0; b < a->B; b++) {
            int64_t nb = nsa_nblk(ends[b] - prev, l, d);
#if ACLCONFORM_MUTANT == 43 /* window-tail: fast weightGrad: last window of each batch not walked (pos < (nb-1)*d + l - 1) */
            for (int64_t pos = 0; nb > 0 && pos < (nb - 1) * d + l - 1; pos++) {
#else
            for (int64_t pos = 0; nb > 0 && pos <= (nb - 1) * d + l - 1; pos++) {
#endif
                int64_t i_lo = pos >= l ? (pos - l) / d + 1 : 0;
                int64_t i_hi = pos / d < nb - 1 ? pos / d : nb - 1;
                /* windows i whose row r = pos - i·d falls in [r0, r1) */
                int64_t lo_i = pos - r1 + 1 > 0 ? nsa_div_up(pos - r1 + 1, d) : 0;
                int64_t hi_i = pos - r0 >= 0 ? (pos - r0) / d : -1;
                if (lo_i < i_lo) lo_i = i_lo;
                if (hi_i > i_hi) hi_i = i_hi;
                if (lo_i > hi_i) continue;
                for (int64_t h = 0; h < H; h++) {
                    int64_t n = n0 + h;
#ifdef ACL_HAVE_AVX512_KERNELS
                    const uint16_t *x16 = in16 + ((prev + pos) * N + n) * D;
                    if (!raw)
#endif
                        acl_view_load_f32(&j->in, ((prev + pos) * N + n) * D, D, x);
                    for (int64_t i = lo_i; i <= hi_i; i++) {
                        int64_t c = cbase[b] + i, slot = h * W + c % W;
                        float *gr = ring + slot * D;
                        if (tag[slot] != c) {
                            acl_view_load_f32(&j->og, (c * N + n) * D, D, gr);
                            tag[slot] = c;
                        }
                        double *ar = &acc[(pos - i * d - r0) * H + h];
                        for (int64_t k0 = 0; k0 < D; k0 += NSA_CHUNK) {
                            int64_t len = D - k0 < NSA_CHUNK ? D - k0 : NSA_CHUNK;
#ifdef ACL_HAVE_AVX512_KERNELS
                            if (raw) {
                                *ar += nsa_dot16(len, gr + k0, x16 + k0, bf);
                                continue;
                            }
#endif
                            *ar += nsa_dot(len, gr + k0, x + k0);
                        }
                    }
                }
            }
            prev = ends[b];
        }
        for (int64_t r = r0; r < r1; r++)
            for (int64_t h = 0; h < H; h++) {
                float v = (float)acc[(r - r0) * H + h];
                acl_view_store_f32(&j->wg, r * N + n0 + h, 1, &v);
            }
    }
}

static int64_t nsa_batch_of(const int64_t *ends, int64_t B, int64_t t)
{
    int64_t lo = 0, hi = B - 1;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
#if ACLCONFORM_MUTANT == 44 /* batch-boundary: fast inputGrad: token at a batch end assigned to that batch (ends[mid] >= t) */
        if (ends[mid] >= t) hi = mid;
        else lo = mid + 1;
    }
    return lo;
#else
        if (ends[mid] > t) hi = mid;
        else lo = mid + 1;
    }
    return lo;
#endif
}

/* acc[k] += w·g[k] over one row (vectorised: the clones give it AVX2 / AVX-512). */
ACL_KERNEL_CLONES static void nsa_axpy(int64_t n, double w, const float *g, double *acc)
{
    for (int64_t k = 0; k < n; k++) acc[k] += w * (double)g[k];
}

#define NSA_RAW_MAXW 64 /* covering windows per token handled by nsa_ig_row16 */

#ifdef ACL_HAVE_AVX512_KERNELS
/* One inputGrad row for contiguous 16-bit outputGrad and inputGrad, converting in registers:
 * acc = Σ w_i·og_i from +0 in double, windows ascending (each product is exact, so the FMA is
 * nsa_axpy's add: the same bits), rounded to f32 and then to the dtype as acl_view_store_f32. */
ACL_AVX512_TARGET static void nsa_ig_row16(int64_t D, int64_t nw, const uint16_t *const *rows,
                                           const double *w, uint16_t *out, bool bf)
{
    for (int64_t k = 0; k < D; k += 8) {
        __mmask8 m = acl_mask8(D - k);
        __m512d acc = _mm512_setzero_pd();
        for (int64_t i = 0; i < nw; i++)
            acc = _mm512_fmadd_pd(_mm512_set1_pd(w[i]), _mm512_cvtps_pd(acl_load8_16(rows[i] + k, m, bf)), acc);
        acl_store8_16(out + k, m, _mm512_cvtpd_ps(acc), bf);
    }
}
#endif

/* inputGrad rows of tokens t in [begin, end), all heads, in memory order (t, then n).  The
 * outputGrad rows are re-read per covering window (they stay in cache: a window covers l
 * consecutive tokens); weight comes from the converted copy. */
static void nsa_input_grad_fast(void *p, int64_t begin, int64_t end)
{
    const nsa_fast *f = p;
    const nsa_job *j = f->j;
    const nsa_args *a = j->a;
    const int64_t *ends = a->seq, *cbase = a->seq + a->B;
    const int64_t l = a->l, d = a->d, D = j->D, N = j->N;
    float g[NSA_FAST_MAX_D], o[NSA_FAST_MAX_D];
    double acc[NSA_FAST_MAX_D];
#ifdef ACL_HAVE_AVX512_KERNELS
    const bool raw = j->og.contiguous && j->ig.contiguous && acl_have_avx512();
    const bool bf = j->og.dtype == ACL_BF16;
    const uint16_t *og16 = (const uint16_t *)(const void *)j->og.data + j->og.offset;
    uint16_t *ig16 = (uint16_t *)(void *)j->ig.data + j->ig.offset;
#endif
    for (int64_t t = begin; t < end; t++) {
        int64_t b = nsa_batch_of(ends, a->B, t), first = b > 0 ? ends[b - 1] : 0;
        int64_t pos = t - first, nb = nsa_nblk(ends[b] - first, l, d);
#if ACLCONFORM_MUTANT == 42 /* window-index: fast inputGrad: first covering window off by one (a window ending before t is included) */
        int64_t i_lo = pos >= l ? (pos - l) / d : 0;
#else
        int64_t i_lo = pos >= l ? (pos - l) / d + 1 : 0;
#endif
        int64_t i_hi = pos / d < nb - 1 ? pos / d : nb - 1;
        for (int64_t n = 0; n < N; n++) {
#ifdef ACL_HAVE_AVX512_KERNELS
            if (raw && i_hi - i_lo < NSA_RAW_MAXW) {
                const uint16_t *rows[NSA_RAW_MAXW];
                double w[NSA_RAW_MAXW];
                int64_t nw = 0;
                for (int64_t i = i_lo; i <= i_hi; i++, nw++) {
                    rows[nw] = og16 + ((cbase[b] + i) * N + n) * D;
                    w[nw] = (double)f->w[(pos - i * d) * N + n];
                }
                nsa_ig_row16(D, nw, rows, w, ig16 + (t * N + n) * D, bf);
                continue;
            }
#endif
            for (int64_t k = 0; k < D; k++) acc[k] = 0.0;
            for (int64_t i = i_lo; i <= i_hi; i++) {
                acl_view_load_f32(&j->og, ((cbase[b] + i) * N + n) * D, D, g);
                nsa_axpy(D, (double)f->w[(pos - i * d) * N + n], g, acc);
            }
            for (int64_t k = 0; k < D; k++) o[k] = (float)acc[k];
            acl_view_store_f32(&j->ig, (t * N + n) * D, D, o);
        }
    }
}

/* Returns false (nothing written) when the row-cached path does not apply or memory is short. */
static bool nsa_by_rows(const nsa_job *j)
{
    const nsa_args *a = j->a;
    int64_t W = nsa_div_up(a->l, a->d) + 1, N = j->N;
    if (j->D > NSA_FAST_MAX_D || W * j->D > NSA_FAST_RING) return false;
    /* tasks: G head groups (≥ 1 per thread where there are enough heads), then blocks of rows;
     * the partition only decides who computes an output, never how */
    int threads = aclconformGetNumThreads();
    int64_t G = N < threads ? N : threads;
    while (nsa_div_up(N, G) * W * j->D > NSA_FAST_RING || nsa_div_up(N, G) > NSA_FAST_ACC) G++;
    int64_t RB = nsa_div_up(threads, G);
    while (nsa_div_up(a->l, RB) * nsa_div_up(N, G) > NSA_FAST_ACC) RB++;
    float *w = malloc((size_t)(a->l * N) * sizeof *w);
    if (!w) return false;
    acl_view_load_f32(&j->w, 0, a->l * N, w);
    nsa_fast f = {j, w, G, RB, W};
    acl_parallel_for(G * RB, 1, nsa_weight_grad_fast, &f);
    acl_parallel_for(j->T, 16, nsa_input_grad_fast, &f);
    free(w);
    return true;
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
    if (nsa_by_rows(&j)) return ACLNN_SUCCESS;
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
    if ((og->dtype != ACL_FLOAT16 && og->dtype != ACL_BF16) || in->dtype != og->dtype ||
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
