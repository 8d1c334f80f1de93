/* aclnnNsaCompressGrad — see spec ops.md.  Two phases: GetWorkspaceSize validates (NULL → 161001, then dtypes,
 * shapes/ranks, attributes → 161002), plans and returns a new executor; the execute call runs it
 * once and releases it. */
#ifndef ACLNN_NSA_COMPRESS_GRAD_H
#define ACLNN_NSA_COMPRESS_GRAD_H

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

aclnnStatus aclnnNsaCompressGradGetWorkspaceSize(
    const aclTensor *outputGrad, const aclTensor *input, const aclTensor *weight,
    const aclIntArray *actSeqLenOptional, int64_t compressBlockSize, int64_t compressStride,
    int64_t actSeqLenType, char *layoutOptional, const aclTensor *inputGradOut,
    const aclTensor *weightGradOut, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnNsaCompressGrad(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                 aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
