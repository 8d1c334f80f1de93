/* The two-phase protocol of ops.md §0.4. */
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

struct aclOpExecutor {
    acl_kernel_fn fn;
    uint64_t workspace_size;
    size_t args_size;
    max_align_t args[]; /* copy of the operator's argument block */
};

aclnnStatus acl_executor_create(acl_kernel_fn fn, const void *args, size_t args_size,
                                uint64_t workspace_size, uint64_t *workspaceSize,
                                aclOpExecutor **executor)
{
    aclOpExecutor *ex = malloc(sizeof *ex + args_size);
    if (!ex) {
        *executor = NULL;
        return ACLNN_ERR_RUNTIME_ERROR;
    }
    ex->fn = fn;
    ex->workspace_size = workspace_size;
    ex->args_size = args_size;
    if (args_size) memcpy(ex->args, args, args_size);
    *workspaceSize = workspace_size;
    *executor = ex;
    return ACLNN_SUCCESS;
}

aclnnStatus acl_executor_run(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor)
{
    if (!executor) return ACLNN_ERR_PARAM_NULLPTR;
    if (executor->workspace_size > 0 &&
        (workspace == NULL || workspaceSize < executor->workspace_size))
        return ACLNN_ERR_PARAM_INVALID; /* executor stays valid for a retry */
    aclnnStatus st = executor->fn(executor->args, workspace, workspaceSize);
    free(executor);
    return st;
}

aclnnStatus aclDestroyAclOpExecutor(aclOpExecutor *executor)
{
    free(executor);
    return ACLNN_SUCCESS;
}
