#include "adapters.h"
#include "aclnnop/aclnn_softplus_backward.h"

static aclnnStatus call_ws(cf_fnptr fn, const cf_case *c, aclTensor *const *t, void *const *p,
                           uint64_t *ws, aclOpExecutor **ex)
{
    return ((__typeof__(&aclnnSoftplusBackwardGetWorkspaceSize))fn)(
        cf_arg_tensor(c, t, "gradOutput"), cf_arg_tensor(c, t, "self"),
        cf_arg_param(c, p, "beta"), cf_arg_param(c, p, "threshold"),
        cf_arg_tensor(c, t, "gradInput"), ws, ex);
}

static orc_scalar scalar(const cf_case *c, const char *name)
{
    const cf_param *p = cf_case_param_c(c, name);
    return p ? (orc_scalar){p->scalar_dtype, p->scalar_bits} : (orc_scalar){CF_F32, 0};
}

static int oracle(const cf_case *c, orc_profile profile, cf_expected *x)
{
    orc_tensor g, s;
    if (!cf_orc_tensor(c, "gradOutput", &g) || !cf_orc_tensor(c, "self", &s)) return ORC_EINVAL;
    orc_out o = cf_orc_out(x, "gradInput");
    return orc_softplus_backward(&g, &s, scalar(c, "beta"), scalar(c, "threshold"),
                                 cf_case_tensor_c(c, "gradInput")->dtype, profile, &o);
}

const cf_adapter cf_adapter_softplus_backward = {
    (cf_fnptr)aclnnSoftplusBackwardGetWorkspaceSize, aclnnSoftplusBackward, call_ws, oracle, NULL, NULL};
