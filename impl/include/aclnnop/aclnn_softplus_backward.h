/* aclnnSoftplusBackward — see spec ops.md.  Two phases: GetWorkspaceSize validates (NULL → 161001, then dtypes,
 * shapes/ranks, attributes → 161002), plans and returns a new executor; the execute call runs it
 * once and releases it. */
#ifndef ACLNN_SOFTPLUS_BACKWARD_H
#define ACLNN_SOFTPLUS_BACKWARD_H

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

aclnnStatus aclnnSoftplusBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *self,
                                                  const aclScalar *beta, const aclScalar *threshold,
                                                  aclTensor *gradInput, uint64_t *workspaceSize,
                                                  aclOpExecutor **executor);
aclnnStatus aclnnSoftplusBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                  aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
