/* aclnnGeluBackwardV2 — not implemented yet (issue 3): both phases return ACLNN_ERR_INNER. */
#include "aclnnop/aclnn_gelu_backward_v2.h"
#include "runtime/runtime.h"

aclnnStatus aclnnGeluBackwardV2GetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *self,
    char *approximate, aclTensor *gradInput, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    (void)gradOutput; (void)self; (void)approximate; (void)gradInput; (void)workspaceSize;
    if (executor) *executor = NULL;
    return ACLNN_ERR_INNER;
}
aclnnStatus aclnnGeluBackwardV2(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                aclrtStream stream)
{
    (void)stream;
    return acl_executor_run(workspace, workspaceSize, executor);
}
