/* Internal runtime of the production implementation: the meta objects' layout, the executor
 * protocol (ops.md §0.4), dtype helpers, strided views with broadcast and a parallel-for.
 * Every operator in impl/src/ops/ is written against this header only. */
#ifndef ACL_RUNTIME_H
#define ACL_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aclnn/acl_meta.h"

#define ACL_MAX_DIMS 32   /* what aclCreateTensor accepts */
#define ACL_MAX_OP_RANK 8 /* what the operators accept (ops.md §0.3) */

struct aclTensor {
    uint64_t ndim;
    int64_t dims[ACL_MAX_DIMS];
    int64_t strides[ACL_MAX_DIMS];
    int64_t offset;
    aclDataType dtype;
    aclFormat format;
    int64_t numel; /* product of dims (0 for an empty view, 1 for rank 0) */
    uint64_t storage_ndim;
    int64_t storage_dims[ACL_MAX_DIMS];
    int64_t storage_numel;
    void *data;
};

struct aclScalar {
    aclDataType dtype;
    union {
        uint8_t raw[16];
        uint16_t u16; /* f16 / bf16 bits */
        float f32;
        double f64;
        int8_t i8;
        int16_t i16;
        int32_t i32;
        int64_t i64;
        uint8_t u8;
        bool b;
    } v;
};

struct aclIntArray {
    uint64_t size;
    int64_t *data;
};

/* ---- dtypes ---------------------------------------------------------------------------- */
size_t acl_dtype_size(aclDataType dt); /* 0 for an unknown dtype */
/* f16 or bf16: the dtypes whose raw bits the 16-bit kernels and tables take */
static inline bool acl_dtype_is16(aclDataType dt) { return dt == ACL_FLOAT16 || dt == ACL_BF16; }
bool acl_dtype_is_float(aclDataType dt);  /* f16 bf16 f32 f64 */
bool acl_format_is_nd(aclFormat f);        /* ND, NCHW, NHWC, NCL, NCDHW */
/* Promotion table of ops.md §0.5 (symmetric).  Returns ACL_DT_UNDEFINED if neither is a float. */
aclDataType acl_promote(aclDataType a, aclDataType b);

/* Scalar value converted to double (exact for every scalar dtype but i64 beyond 2^53) and to
 * float (one rounding, round-to-nearest-even, from the stored value). */
double acl_scalar_to_f64(const aclScalar *s);
float acl_scalar_to_f32(const aclScalar *s);

/* ---- tensors ----------------------------------------------------------------------------- */
bool acl_tensor_is_contiguous(const aclTensor *t);
/* True if two distinct view elements share an address (ops.md §0.3: invalid for an output). */
bool acl_tensor_self_overlaps(const aclTensor *t);
bool acl_same_shape(const aclTensor *a, const aclTensor *b);
/* numpy broadcast of two shapes into out (rank max(na, nb)); false if not broadcastable. */
bool acl_broadcast_shape(const int64_t *a, uint64_t na, const int64_t *b, uint64_t nb,
                         int64_t *out, uint64_t *nout);

/* ---- strided views ------------------------------------------------------------------------
 * A view walks a tensor in row-major order of a (possibly broadcast) iteration shape.  Loads
 * convert to float/double exactly (integers round once, RNE); stores round once (RNE). */
typedef struct {
    int ndim;
    int64_t shape[ACL_MAX_OP_RANK];
    int64_t strides[ACL_MAX_OP_RANK]; /* 0 on broadcast dims */
    int64_t offset;
    int64_t numel;
    aclDataType dtype;
    size_t esize;
    char *data;
    bool contiguous; /* strides are row-major compact: element i is at offset + i */
} acl_view;

/* View of t over its own shape.  t->ndim must be ≤ ACL_MAX_OP_RANK. */
void acl_view_init(acl_view *v, const aclTensor *t);
/* View of t broadcast (right-aligned) to shape[ndim]; t must be broadcastable to it. */
void acl_view_broadcast(acl_view *v, const aclTensor *t, int ndim, const int64_t *shape);

void acl_view_load_f32(const acl_view *v, int64_t start, int64_t n, float *dst);
void acl_view_load_f64(const acl_view *v, int64_t start, int64_t n, double *dst);
void acl_view_store_f32(const acl_view *v, int64_t start, int64_t n, const float *src);
void acl_view_store_f64(const acl_view *v, int64_t start, int64_t n, const double *src);
/* One run: len elements from byte stride bstride apart (0: one element broadcast, loads only),
 * converted as the view forms do. */
void acl_run_load_f32(aclDataType dt, const char *p, int64_t bstride, int64_t len, float *dst);
void acl_run_load_f64(aclDataType dt, const char *p, int64_t bstride, int64_t len, double *dst);
void acl_run_store_f32(aclDataType dt, char *p, int64_t bstride, int64_t len, const float *src);
void acl_run_store_f64(aclDataType dt, char *p, int64_t bstride, int64_t len, const double *src);
/* A view of a 16-bit dtype (f16 or bf16) copied to / from a contiguous array as its raw bits, no
 * conversion (the all-16-bit elementwise driver's staging). */
void acl_view_load_raw16(const acl_view *v, int64_t start, int64_t n, uint16_t *dst);
void acl_view_store_raw16(const acl_view *v, int64_t start, int64_t n, const uint16_t *src);
/* Address of element i (row-major index into the view's iteration shape). */
void *acl_view_ptr(const acl_view *v, int64_t i);

/* ---- executor (ops.md §0.4) ---------------------------------------------------------------- */
typedef aclnnStatus (*acl_kernel_fn)(void *args, void *workspace, uint64_t workspace_size);

/* Create an executor that runs fn(copy of args, workspace) once.  args (args_size bytes) is
 * copied; it should hold aclTensor descriptors by value, not pointers to the caller's. */
aclnnStatus acl_executor_create(acl_kernel_fn fn, const void *args, size_t args_size,
                                uint64_t workspace_size, uint64_t *workspaceSize,
                                aclOpExecutor **executor);
/* The execute phase: NULL executor → 161001; an executor that is not live (already run or
 * destroyed, or never created here) → 161002 without touching it; workspace NULL while
 * planned > 0, or workspaceSize smaller than planned → 161002 with the executor left valid;
 * otherwise run and release.  aclDestroyAclOpExecutor likewise refuses a non-live one (161002). */
aclnnStatus acl_executor_run(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor);

/* ---- parallel-for -------------------------------------------------------------------------
 * fn(ctx, begin, end) over [0, n) in chunks of at least `grain`.  Chunks are disjoint; work
 * inside one index must not depend on the partition (results are thread-count independent). */
typedef void (*acl_range_fn)(void *ctx, int64_t begin, int64_t end);
void acl_parallel_for(int64_t n, int64_t grain, acl_range_fn fn, void *ctx);

#endif
