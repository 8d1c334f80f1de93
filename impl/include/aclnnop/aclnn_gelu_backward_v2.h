/* aclnnGeluBackwardV2 — see spec ops.md.  Two phases: GetWorkspaceSize validates (NULL → 161001, then dtypes,
 * shapes/ranks, attributes → 161002), plans and returns a new executor; the execute call runs it
 * once and releases it. */
#ifndef ACLNN_GELU_BACKWARD_V2_H
#define ACLNN_GELU_BACKWARD_V2_H

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

aclnnStatus aclnnGeluBackwardV2GetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *self,
                                                char *approximate, aclTensor *gradInput,
                                                uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnGeluBackwardV2(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
