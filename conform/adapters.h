/* Per-operator glue of the harness, one file per operator in conform/ops/<op>.c: how to call the
 * operator's GetWorkspaceSize with a case's objects, how to ask the oracle for its golden values,
 * and which output positions are masked.  The table is generated from common/ops.def. */
#ifndef ACLCONFORM_ADAPTERS_H
#define ACLCONFORM_ADAPTERS_H

#include "case.h"
#include "casefile.h"
#include "oracle.h"
#include "target.h"

typedef struct {
    cf_fnptr builtin_get_ws;
    cf_exec_fn builtin_exec;
    /* tensors[i]: the target's aclTensor for c->tensors[i] (NULL for a NULL or rejected tensor);
     * params[i]: the target's aclScalar / aclIntArray for c->params[i] (NULL where is_null). */
    aclnnStatus (*call_ws)(cf_fnptr fn, const cf_case *c, aclTensor *const *tensors,
                           void *const *params, uint64_t *ws, aclOpExecutor **ex);
    /* Golden values of every output (x allocated by cf_expected_alloc with lo for f64). */
    int (*oracle)(const cf_case *c, orc_profile profile, cf_expected *x);
    /* Output positions that must be exactly +0.0 (NULL when the operator has none). */
    void (*masked)(const cf_case *c, const char *out_name, uint8_t *masked);
    /* Operator-specific shrink candidate `step` (0, 1, ...) for a failure at output `out_name`
     * element `el`: a smaller valid case in dst (true), or false when there are no more.  NULL
     * when the generic slicing of shrink.c suffices. */
    bool (*shrink_step)(const cf_case *c, const char *out_name, int64_t el, int step, cf_case *dst);
} cf_adapter;

/* Copy the box [start, start+count) of tensor t's view into dst as a new contiguous tensor (same
 * name, dtype, role; inputs get their data).  false on allocation failure. */
bool cf_tensor_box(const cf_tensor *t, const int64_t *start, const int64_t *count, cf_tensor *dst);

extern const cf_adapter *const cf_adapters[CF_OP_COUNT];

/* Helpers for the adapters. */
aclTensor *cf_arg_tensor(const cf_case *c, aclTensor *const *tensors, const char *name);
void *cf_arg_param(const cf_case *c, void *const *params, const char *name);
double cf_arg_f64(const cf_case *c, const char *name, double dflt);
int64_t cf_arg_int(const cf_case *c, const char *name, int64_t dflt);
bool cf_arg_bool(const cf_case *c, const char *name);
/* A string attribute: NULL when absent or JSON null. */
const char *cf_arg_str(const cf_case *c, const char *name);
/* An oracle view of a case tensor (NULL-safe: returns false when absent). */
bool cf_orc_tensor(const cf_case *c, const char *name, orc_tensor *o);
orc_out cf_orc_out(cf_expected *x, const char *name);

#endif
