/* Targets (spec abi.md): an implementation of the ten operator functions plus the meta-object
 * functions.  The suite talks to a target only through this table. */
#ifndef ACLCONFORM_TARGET_H
#define ACLCONFORM_TARGET_H

#include "aclnn/acl_meta.h"
#include "case.h"
#include "util.h"

typedef void (*cf_fnptr)(void);
typedef aclnnStatus (*cf_exec_fn)(void *, uint64_t, aclOpExecutor *, aclrtStream);

typedef struct {
    char name[256]; /* "builtin" or the library path */
    void *handle;   /* dlopen handle (NULL for builtin) */
    bool isolate;   /* run cases in a worker process (foreign targets) */
    aclTensor *(*create_tensor)(const int64_t *, uint64_t, aclDataType, const int64_t *, int64_t,
                                aclFormat, const int64_t *, uint64_t, void *);
    aclScalar *(*create_scalar)(void *, aclDataType);
    aclIntArray *(*create_int_array)(const int64_t *, uint64_t);
    aclnnStatus (*destroy_tensor)(const aclTensor *);
    aclnnStatus (*destroy_scalar)(const aclScalar *);
    aclnnStatus (*destroy_int_array)(const aclIntArray *);
    aclnnStatus (*destroy_executor)(aclOpExecutor *); /* optional */
    /* optional device hooks (abi.md): all five present, or the target uses host memory */
    int (*dev_alloc)(void **ptr, size_t bytes);
    int (*dev_free)(void *ptr);
    int (*copy_to_dev)(void *dst, const void *src, size_t bytes);
    int (*copy_to_host)(void *dst, const void *src, size_t bytes);
    int (*dev_sync)(void *stream);
    cf_fnptr get_ws[CF_OP_COUNT];                      /* aclnn<Op>GetWorkspaceSize */
    cf_exec_fn exec[CF_OP_COUNT];                      /* aclnn<Op> */
} cf_target;

/* "builtin" (linked in) or a path to a shared library exporting the ABI. */
cf_status cf_target_open(const char *spec, cf_target *t, cf_err *e);
void cf_target_close(cf_target *t);

#endif
