/* aclnnLogitGrad — not implemented yet (issue 3): both phases return ACLNN_ERR_INNER. */
#include "aclnnop/aclnn_logit_grad.h"
#include "runtime/runtime.h"

aclnnStatus aclnnLogitGradGetWorkspaceSize(const aclTensor *x, const aclTensor *dy, double eps,
    const aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    (void)x; (void)dy; (void)eps; (void)out; (void)workspaceSize; if (executor) *executor = NULL;
    return ACLNN_ERR_INNER;
}
aclnnStatus aclnnLogitGrad(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)
{
    (void)stream;
    return acl_executor_run(workspace, workspaceSize, executor);
}
