/* aclnnScaledMaskedSoftmaxBackward — not implemented yet (issue 3): both phases return ACLNN_ERR_INNER. */
#include "aclnnop/aclnn_scaled_masked_softmax_backward.h"
#include "runtime/runtime.h"

aclnnStatus aclnnScaledMaskedSoftmaxBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *y,
    const aclTensor *mask, double scale, bool fixTriuMask, aclTensor *out, uint64_t *workspaceSize,
    aclOpExecutor **executor)
{
    (void)gradOutput; (void)y; (void)mask; (void)scale; (void)fixTriuMask; (void)out;
    (void)workspaceSize; if (executor) *executor = NULL;
    return ACLNN_ERR_INNER;
}
aclnnStatus aclnnScaledMaskedSoftmaxBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                             aclrtStream stream)
{
    (void)stream;
    return acl_executor_run(workspace, workspaceSize, executor);
}
