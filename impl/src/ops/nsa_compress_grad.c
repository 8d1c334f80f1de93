/* aclnnNsaCompressGrad — not implemented yet (issue 3): both phases return ACLNN_ERR_INNER. */
#include "aclnnop/aclnn_nsa_compress_grad.h"
#include "runtime/runtime.h"

aclnnStatus aclnnNsaCompressGradGetWorkspaceSize(const aclTensor *outputGrad, const aclTensor *input,
    const aclTensor *weight, const aclIntArray *actSeqLenOptional, int64_t compressBlockSize,
    int64_t compressStride, int64_t actSeqLenType, char *layoutOptional, const aclTensor *inputGradOut,
    const aclTensor *weightGradOut, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    (void)outputGrad; (void)input; (void)weight; (void)actSeqLenOptional; (void)compressBlockSize;
    (void)compressStride; (void)actSeqLenType; (void)layoutOptional; (void)inputGradOut;
    (void)weightGradOut; (void)workspaceSize; if (executor) *executor = NULL;
    return ACLNN_ERR_INNER;
}
aclnnStatus aclnnNsaCompressGrad(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                 aclrtStream stream)
{
    (void)stream;
    return acl_executor_run(workspace, workspaceSize, executor);
}
