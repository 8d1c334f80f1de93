/* aclnnLogitGrad — see spec ops.md.  Two phases: GetWorkspaceSize validates (NULL → 161001, then dtypes,
 * shapes/ranks, attributes → 161002), plans and returns a new executor; the execute call runs it
 * once and releases it. */
#ifndef ACLNN_LOGIT_GRAD_H
#define ACLNN_LOGIT_GRAD_H

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

aclnnStatus aclnnLogitGradGetWorkspaceSize(const aclTensor *x, const aclTensor *dy, double eps,
                                           const aclTensor *out, uint64_t *workspaceSize,
                                           aclOpExecutor **executor);
aclnnStatus aclnnLogitGrad(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                           aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
