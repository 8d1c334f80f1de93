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
 * chunks of NSA_CHUNK so no scratch memory is needed (workspace 0). */
#include <stdlib.h>
#include <string.h>

#include "aclnnop/aclnn_nsa_compress_grad.h"
#include "runtime/check.h"
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
                for (int64_t k0 = 0; k0 < j->D; k0 += NSA_CHUNK) {
                    int64_t len = j->D - k0 < NSA_CHUNK ? j->D - k0 : NSA_CHUNK;
                    acl_view_load_f32(&j->og, (c * j->N + n) * j->D + k0, len, g);
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
    if (l <= 0 || d <= 0 || l % 16 != 0 || d % 16 != 0 || l <= d || D % 16 != 0 || w->dims[0] != l)
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
        if (prev != T) return ACLNN_ERR_PARAM_INVALID;
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
