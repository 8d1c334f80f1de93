/* aclnnScaledMaskedSoftmaxBackward — see spec ops.md.  Two phases: GetWorkspaceSize validates (NULL → 161001, then dtypes,
 * shapes/ranks, attributes → 161002), plans and returns a new executor; the execute call runs it
 * once and releases it. */
#ifndef ACLNN_SCALED_MASKED_SOFTMAX_BACKWARD_H
#define ACLNN_SCALED_MASKED_SOFTMAX_BACKWARD_H

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

aclnnStatus aclnnScaledMaskedSoftmaxBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *y,
                                                             const aclTensor *mask, double scale,
                                                             bool fixTriuMask, aclTensor *out,
                                                             uint64_t *workspaceSize,
                                                             aclOpExecutor **executor);
aclnnStatus aclnnScaledMaskedSoftmaxBackward(void *workspace, uint64_t workspaceSize,
                                             aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
