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

const cf_adapter cf_adapter_nsa_compress_grad = {
    (cf_fnptr)aclnnNsaCompressGradGetWorkspaceSize, aclnnNsaCompressGrad, call_ws, oracle, NULL};
