#include "adapters.h"
#include "aclnnop/aclnn_logit_grad.h"

static aclnnStatus call_ws(cf_fnptr fn, const cf_case *c, aclTensor *const *t, void *const *p,
                           uint64_t *ws, aclOpExecutor **ex)
{
    (void)p;
    return ((__typeof__(&aclnnLogitGradGetWorkspaceSize))fn)(
        cf_arg_tensor(c, t, "x"), cf_arg_tensor(c, t, "dy"), cf_arg_f64(c, "eps", -1.0),
        cf_arg_tensor(c, t, "out"), ws, ex);
}

static int oracle(const cf_case *c, orc_profile profile, cf_expected *x)
{
    orc_tensor xx, dy;
    if (!cf_orc_tensor(c, "x", &xx) || !cf_orc_tensor(c, "dy", &dy)) return ORC_EINVAL;
    orc_out o = cf_orc_out(x, "out");
    return orc_logit_grad(&xx, &dy, cf_arg_f64(c, "eps", -1.0), cf_case_tensor_c(c, "out")->dtype,
                          profile, &o);
}

const cf_adapter cf_adapter_logit_grad = {
    (cf_fnptr)aclnnLogitGradGetWorkspaceSize, aclnnLogitGrad, call_ws, oracle, NULL, NULL};
