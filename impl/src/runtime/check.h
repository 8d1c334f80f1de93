/* Validation helpers shared by the operators' GetWorkspaceSize (ops.md §0.2–§0.4).  Each returns
 * true when the rule holds; the operator maps a failure to its status in the documented order. */
#ifndef ACL_CHECK_H
#define ACL_CHECK_H

#include "runtime.h"

/* Rank within the operator limit (§0.3, 8 unless the operator says otherwise). */
static inline bool acl_rank_ok(const aclTensor *t) { return t->ndim <= ACL_MAX_OP_RANK; }

/* ND, NCHW, NHWC, NCL, NCDHW are accepted as ND; anything else → 161002. */
static inline bool acl_format_ok(const aclTensor *t) { return acl_format_is_nd(t->format); }

/* An output view must not have two elements at one address. */
static inline bool acl_output_ok(const aclTensor *t) { return !acl_tensor_self_overlaps(t); }

/* The last rule of all (§0.4): a non-empty tensor must have data. */
static inline bool acl_data_ok(const aclTensor *t) { return t->numel == 0 || t->data != NULL; }

static inline bool acl_dtype_is_half_or_f32(aclDataType dt)
{
    return acl_dtype_is16(dt) || dt == ACL_FLOAT;
}

#endif
