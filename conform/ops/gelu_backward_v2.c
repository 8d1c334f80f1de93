#include "adapters.h"
#include "aclnnop/aclnn_gelu_backward_v2.h"

static aclnnStatus call_ws(cf_fnptr fn, const cf_case *c, aclTensor *const *t, void *const *p,
                           uint64_t *ws, aclOpExecutor **ex)
{
    (void)p;
    return ((__typeof__(&aclnnGeluBackwardV2GetWorkspaceSize))fn)(
        cf_arg_tensor(c, t, "gradOutput"), cf_arg_tensor(c, t, "self"),
        (char *)cf_arg_str(c, "approximate"), cf_arg_tensor(c, t, "gradInput"), ws, ex);
}

static int oracle(const cf_case *c, orc_profile profile, cf_expected *x)
{
    orc_tensor g, s;
    if (!cf_orc_tensor(c, "gradOutput", &g) || !cf_orc_tensor(c, "self", &s)) return ORC_EINVAL;
    orc_out o = cf_orc_out(x, "gradInput");
    return orc_gelu_backward_v2(&g, &s, cf_arg_str(c, "approximate"),
                                cf_case_tensor_c(c, "gradInput")->dtype, profile, &o);
}

const cf_adapter cf_adapter_gelu_backward_v2 = {
    (cf_fnptr)aclnnGeluBackwardV2GetWorkspaceSize, aclnnGeluBackwardV2, call_ws, oracle, NULL, NULL};
