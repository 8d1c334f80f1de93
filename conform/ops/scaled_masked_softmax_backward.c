#include <string.h>

#include "adapters.h"
#include "aclnnop/aclnn_scaled_masked_softmax_backward.h"

static aclnnStatus call_ws(cf_fnptr fn, const cf_case *c, aclTensor *const *t, void *const *p,
                           uint64_t *ws, aclOpExecutor **ex)
{
    (void)p;
    return ((__typeof__(&aclnnScaledMaskedSoftmaxBackwardGetWorkspaceSize))fn)(
        cf_arg_tensor(c, t, "gradOutput"), cf_arg_tensor(c, t, "y"), cf_arg_tensor(c, t, "mask"),
        cf_arg_f64(c, "scale", 1.0), cf_arg_bool(c, "fixTriuMask"), cf_arg_tensor(c, t, "out"),
        ws, ex);
}

static int oracle(const cf_case *c, orc_profile profile, cf_expected *x)
{
    orc_tensor g, y, m;
    if (!cf_orc_tensor(c, "gradOutput", &g) || !cf_orc_tensor(c, "y", &y) ||
        !cf_orc_tensor(c, "mask", &m))
        return ORC_EINVAL;
    orc_out o = cf_orc_out(x, "out");
    return orc_scaled_masked_softmax_backward(&g, &y, &m, cf_arg_f64(c, "scale", 1.0),
                                              cf_case_tensor_c(c, "out")->dtype, profile, &o);
}

/* out[b,n,i,j] is masked when mask[b or 0, n or 0, i, j] is true (broadcast on dims 0-1). */
static void masked(const cf_case *c, const char *out_name, uint8_t *flags)
{
    const cf_tensor *o = cf_case_tensor_c(c, out_name), *m = cf_case_tensor_c(c, "mask");
    int64_t n = cf_tensor_numel(o);
    memset(flags, 0, (size_t)n);
    if (!m || !m->present || !m->data || o->ndim != 4 || m->ndim != 4) return;
    for (int64_t e = 0; e < n; e++) {
        int64_t rem = e, idx[4];
        for (int k = 3; k >= 0; k--) idx[k] = rem % o->shape[k], rem /= o->shape[k];
        int64_t off = m->offset;
        for (int k = 0; k < 4; k++) off += (m->shape[k] == 1 ? 0 : idx[k]) * m->strides[k];
        flags[e] = ((const uint8_t *)m->data)[off] != 0;
    }
}

const cf_adapter cf_adapter_scaled_masked_softmax_backward = {
    (cf_fnptr)aclnnScaledMaskedSoftmaxBackwardGetWorkspaceSize, aclnnScaledMaskedSoftmaxBackward,
    call_ws, oracle, masked, NULL};
