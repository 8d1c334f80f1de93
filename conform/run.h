/* Run one case on a target: create its objects through the target's own meta functions, call
 * GetWorkspaceSize, allocate the workspace, execute, read back each output view (row-major).
 *
 * Guarded buffers: every storage handed to the target (inputs and outputs), and its workspace,
 * sits between two guard zones of CF_GUARD_BYTES filled with a pattern of random bytes (a new one
 * for every buffer, so a target cannot recognise it); an output's storage outside its view holds
 * the pattern too.  After the call, a changed guard byte or a write into an output's storage outside
 * its view is `wrote_outside`; any changed byte of an input's storage (or its guards) is
 * `modified_input`.  With t->guard_pages (foreign targets), each storage additionally sits between
 * PROT_NONE regions of 1 MiB, so a write further away faults and the case fails as a crash.
 *
 * Foreign targets run in persistent worker processes (worker.c): a crash or hang is that case's
 * failure, not the tool's. */
#ifndef ACLCONFORM_RUN_H
#define ACLCONFORM_RUN_H

#include "case.h"
#include "target.h"

typedef struct {
    char name[CF_NAME_LEN];
    cf_dtype dtype;
    int64_t n;
    uint8_t *bits;      /* n view elements, each cf_dtype_size(dtype) bytes */
    bool wrote_outside; /* a byte outside the view (storage or guard zones) changed */
    char outside[96];   /* where, for the failure line */
} cf_run_out;

#define CF_GUARD_BYTES 4096

typedef struct {
    int32_t status;     /* ACLNN status returned (first non-zero of the two phases) */
    int phase;          /* 0 = GetWorkspaceSize, 1 = execute */
    bool executor_leak_check; /* an executor came back with a non-zero status (must be NULL) */
    char error[512];    /* worker crash / timeout / setup failure ("" when none) */
    bool not_applicable; /* a protocol check that does not apply (planned workspace 0) */
    int32_t protocol_status; /* a protocol check's rejected call (then status is that status) */
    bool modified_input; /* the target changed an input's storage or its guard zones */
    char modified[96];   /* which input, for the failure line */
    bool ws_overrun;     /* the target wrote into the guard zones of its workspace */
    char ws_where[96];   /* where, for the failure line */
    /* a write into an earlier case's storage after that case's execute had returned (a thread the
     * target left running), found while this case ran (cf_run_late_check): that case's op and
     * output dtype, its key ("op dtype variant") and the failure line */
    bool late;
    int32_t late_op, late_dtype;
    char late_key[160];
    char late_line[480];
    int nout;
    cf_run_out out[2];
} cf_run_result;

/* Protocol checks (ops.md "executor protocol"), run on valid inputs by every target.  A case
 * whose rule names one runs that step instead of the plain two phases:
 *   protocol_null_executor   execute(NULL, 0, NULL executor)              -> 161001
 *   protocol_short_workspace execute with workspaceSize = planned - 1     -> 161002, then a retry
 *                            with the planned workspace must return 0 (the executor stays valid)
 *   protocol_null_workspace  execute(NULL workspace, planned size > 0)    -> 161002, then retry
 * Outputs are not scored (plain cases do that); guard zones are checked. */
#define CF_PROTO_RULE_NULL_EXECUTOR "protocol_null_executor"
#define CF_PROTO_RULE_SHORT_WORKSPACE "protocol_short_workspace"
#define CF_PROTO_RULE_NULL_WORKSPACE "protocol_null_workspace"
typedef enum { CF_PROTO_NONE, CF_PROTO_NULL_EXECUTOR, CF_PROTO_SHORT_WORKSPACE, CF_PROTO_NULL_WORKSPACE } cf_protocol;
cf_protocol cf_protocol_of(const cf_case *c);

/* Late writes (a worker's side, foreign targets): with quarantine on, a case's storages are not
 * freed when it ends but kept, with a copy of their bytes, until room is needed (256 storages or
 * 64 MiB a worker, the oldest first); a later change is a write after execute returned.  Before,
 * the memory went back to the heap and such a write landed in other cases' buffers: crashes
 * blamed on other operators (issue 57).  Room is made by count and bytes only, never by age: a
 * thread the scheduler delays still finds the storage it was given, not another case's. */
#define CF_LATE_MS 250
void cf_run_quarantine(bool on);
/* Compare the quarantined storages whose age reached their next check (min_ms, CF_LATE_MS, then
 * four times the last: a few compares each) with their copies; the first changed one, or one
 * found while making room, fills r's late fields (true) and is released. */
bool cf_run_late_check(double min_ms, cf_run_result *r);

/* timeout_s applies to isolated (foreign) targets only. */
cf_status cf_run_case(const cf_target *t, const cf_case *c, double timeout_s, cf_run_result *r,
                      cf_err *e);
void cf_run_result_free(cf_run_result *r);
/* The in-process run (the builtin target, and a worker's side of a foreign one). */
cf_status cf_run_here(const cf_target *t, const cf_case *c, cf_run_result *r, cf_err *e);

#endif
