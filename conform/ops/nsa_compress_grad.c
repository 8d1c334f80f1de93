#include <stdlib.h>
#include <string.h>

#include "adapters.h"
#include "aclnnop/aclnn_nsa_compress_grad.h"

static aclnnStatus call_ws(cf_fnptr fn, const cf_case *c, aclTensor *const *t, void *const *p,
                           uint64_t *ws, aclOpExecutor **ex)
{
    return ((__typeof__(&aclnnNsaCompressGradGetWorkspaceSize))fn)(
        cf_arg_tensor(c, t, "outputGrad"), cf_arg_tensor(c, t, "input"), cf_arg_tensor(c, t, "weight"),
        cf_arg_param(c, p, "actSeqLen"), cf_arg_int(c, "compressBlockSize", 0),
        cf_arg_int(c, "compressStride", 0), cf_arg_int(c, "actSeqLenType", 0),
        (char *)cf_arg_str(c, "layout"), cf_arg_tensor(c, t, "inputGradOut"),
        cf_arg_tensor(c, t, "weightGradOut"), ws, ex);
}

static int oracle(const cf_case *c, orc_profile profile, cf_expected *x)
{
    orc_tensor g, in, w;
    if (!cf_orc_tensor(c, "outputGrad", &g) || !cf_orc_tensor(c, "input", &in) ||
        !cf_orc_tensor(c, "weight", &w))
        return ORC_EINVAL;
    const cf_param *a = cf_case_param_c(c, "actSeqLen");
    bool has = a && !a->is_null && a->arr;
    orc_out ig = cf_orc_out(x, "inputGradOut"), wg = cf_orc_out(x, "weightGradOut");
    return orc_nsa_compress_grad(&g, &in, &w, has ? a->arr : NULL, has ? a->arr_len : 0,
                                 cf_arg_int(c, "compressBlockSize", 0),
                                 cf_arg_int(c, "compressStride", 0),
                                 cf_case_tensor_c(c, "inputGradOut")->dtype, profile, &ig, &wg);
}

static int64_t nblk(int64_t s, int64_t l, int64_t d) { return s >= l ? (s - l) / d + 1 : 0; }

/* Shrink candidates (each still a valid case: C = Σ nblk, D a multiple of 16):
 *   step 0: one head — N = 1 at the failing element's n;
 *   step 1: one 16-wide block of D — the block holding the failing k (inputGrad), else the first;
 *   step 2: one batch — the one holding the failing token (inputGrad), else the first with a window. */
static bool shrink_step(const cf_case *c, const char *out_name, int64_t el, int step, cf_case *dst)
{
    const cf_tensor *in = cf_case_tensor_c(c, "input"), *og = cf_case_tensor_c(c, "outputGrad");
    const cf_param *a = cf_case_param_c(c, "actSeqLen");
    if (!in || !og || in->ndim != 3 || og->ndim != 3) return false;
    int64_t T = in->shape[0], N = in->shape[1], D = in->shape[2];
    int64_t l = cf_arg_int(c, "compressBlockSize", 0), d = cf_arg_int(c, "compressStride", 0);
    bool is_in = strcmp(out_name, "inputGradOut") == 0;
    int64_t t = is_in ? el / (N * D) : -1, n = is_in ? (el / D) % N : el % N, k = is_in ? el % D : 0;
    /* the box per tensor: [T|C] x N x D for input-like tensors, [l] x N for weights */
    int64_t t0 = 0, tc = T, c0 = 0, cc = og->shape[0], n0 = 0, nc = N, k0 = 0, kc = D;
    int64_t batch_len = -1;
    if (step == 0) {
        if (N == 1) return false;
        n0 = n, nc = 1;
    } else if (step == 1) {
        if (D <= 16) return false;
        k0 = (k / 16) * 16, kc = 16;
    } else if (step == 2) {
        int64_t nb = a && !a->is_null && a->arr ? a->arr_len : 1, prev = 0, cprev = 0;
        if (nb <= 1) return false;
        for (int64_t b = 0; b < nb; b++) {
            int64_t end = a->arr[b], s = end - prev, w = nblk(s, l, d);
            if ((is_in && t >= prev && t < end) || (!is_in && w > 0)) {
                t0 = prev, tc = s, c0 = cprev, cc = w, batch_len = s;
                break;
            }
            prev = end, cprev += w;
        }
        if (batch_len < 0 || (is_in && cc == 0)) return false;
    } else {
        return false;
    }
    memset(dst, 0, sizeof *dst);
    *dst = *c;
    for (int i = 0; i < dst->ntensors; i++) dst->tensors[i].data = NULL;
    for (int i = 0; i < dst->nparams; i++) dst->params[i].arr = NULL;
    bool ok = true;
    for (int i = 0; i < c->ntensors && ok; i++) {
        const cf_tensor *x = &c->tensors[i];
        if (!x->present) continue;
        int64_t st[3], ct[3];
        if (x->ndim == 2) { /* weight, weightGradOut: [l, N] */
            st[0] = 0, ct[0] = x->shape[0], st[1] = n0, ct[1] = nc;
        } else if (!strcmp(x->name, "outputGrad")) {
            st[0] = c0, ct[0] = cc, st[1] = n0, ct[1] = nc, st[2] = k0, ct[2] = kc;
        } else {
            st[0] = t0, ct[0] = tc, st[1] = n0, ct[1] = nc, st[2] = k0, ct[2] = kc;
        }
        ok = cf_tensor_box(x, st, ct, &dst->tensors[i]);
    }
    for (int i = 0; i < c->nparams && ok; i++) {
        const cf_param *p = &c->params[i];
        if (!p->arr) continue;
        dst->params[i].arr = malloc(sizeof(int64_t) * (size_t)(p->arr_len + 1));
        if (!(ok = dst->params[i].arr != NULL)) break;
        if (step == 2 && !strcmp(p->name, "actSeqLen")) {
            dst->params[i].arr[0] = batch_len;
            dst->params[i].arr_len = 1;
        } else {
            memcpy(dst->params[i].arr, p->arr, sizeof(int64_t) * (size_t)p->arr_len);
        }
    }
    if (!ok) cf_case_free(dst);
    return ok;
}

const cf_adapter cf_adapter_nsa_compress_grad = {
    (cf_fnptr)aclnnNsaCompressGradGetWorkspaceSize, aclnnNsaCompressGrad, call_ws, oracle, NULL, shrink_step};
