/* Run one case on a target: create its objects through the target's own meta functions, call
 * GetWorkspaceSize, allocate the workspace, execute, read back each output view (row-major) and
 * check that nothing outside the view was written (sentinel).  Foreign targets run in a forked
 * worker so that a crash or hang is that case's failure, not the tool's. */
#ifndef ACLCONFORM_RUN_H
#define ACLCONFORM_RUN_H

#include "case.h"
#include "target.h"

typedef struct {
    char name[CF_NAME_LEN];
    cf_dtype dtype;
    int64_t n;
    uint8_t *bits;      /* n view elements, each cf_dtype_size(dtype) bytes */
    bool wrote_outside; /* an element outside the view changed */
} cf_run_out;

typedef struct {
    int32_t status;     /* ACLNN status returned (first non-zero of the two phases) */
    int phase;          /* 0 = GetWorkspaceSize, 1 = execute */
    bool executor_leak_check; /* an executor came back with a non-zero status (must be NULL) */
    char error[256];    /* worker crash / timeout / setup failure ("" when none) */
    int nout;
    cf_run_out out[2];
} cf_run_result;

/* timeout_s applies to isolated (foreign) targets only. */
cf_status cf_run_case(const cf_target *t, const cf_case *c, double timeout_s, cf_run_result *r,
                      cf_err *e);
void cf_run_result_free(cf_run_result *r);

#endif
