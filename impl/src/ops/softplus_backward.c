/* aclnnSoftplusBackward — not implemented yet (issue 3): both phases return ACLNN_ERR_INNER. */
#include "aclnnop/aclnn_softplus_backward.h"
#include "runtime/runtime.h"

aclnnStatus aclnnSoftplusBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *self,
    const aclScalar *beta, const aclScalar *threshold, aclTensor *gradInput, uint64_t *workspaceSize,
    aclOpExecutor **executor)
{
    (void)gradOutput; (void)self; (void)beta; (void)threshold; (void)gradInput; (void)workspaceSize;
    if (executor) *executor = NULL;
    return ACLNN_ERR_INNER;
}
aclnnStatus aclnnSoftplusBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                  aclrtStream stream)
{
    (void)stream;
    return acl_executor_run(workspace, workspaceSize, executor);
}
