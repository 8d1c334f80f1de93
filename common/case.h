/* One conformance case in memory: the operator, its tensors (as views into storage), its
 * parameters and the expected status.  The fuzzer produces it, the corpus reader/writer
 * (conform/) maps it to and from case.json + .npy (spec formats.md), the targets run it.
 * impl/ and oracle/ never see this type.
 *
 * Ownership: a cf_case owns every tensor's `data` and every param's `arr`; cf_case_free()
 * releases them (and leaves the struct zeroed). */
#ifndef ACLCONFORM_CASE_H
#define ACLCONFORM_CASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dtype.h"

#define CF_MAX_RANK 32
#define CF_MAX_TENSORS 6
#define CF_MAX_PARAMS 8
#define CF_NAME_LEN 24

/* ---- operators: the list of common/ops.def as an enum ---- */
typedef enum {
#define OP(id, Camel) CF_OP_##id,
#include "ops.def"
#undef OP
    CF_OP_COUNT
} cf_op;

const char *cf_op_name(cf_op op);                 /* "gelu_backward_v2" */
const char *cf_op_camel(cf_op op);                /* "GeluBackwardV2" */
bool cf_op_parse(const char *name, cf_op *op);    /* false for an unknown name */

/* ---- dtypes ---- */
const char *cf_dtype_name(cf_dtype dt);           /* "f16", ... */
bool cf_dtype_parse(const char *name, cf_dtype *dt);
size_t cf_dtype_size(cf_dtype dt);
bool cf_dtype_is_float(cf_dtype dt);

typedef struct {
    char name[CF_NAME_LEN]; /* "gradOutput", "self", ... exactly as in constraints/ and case.json */
    bool present;           /* false: a NULL tensor ({"null": true}) */
    bool null_data;         /* described, but its data pointer is NULL ({"null_data": true}; ops.md
                             * §0: a non-empty one is 161001, checked after every other rule) */
    bool output;
    cf_dtype dtype;
    int ndim;
    int64_t shape[CF_MAX_RANK];
    int64_t strides[CF_MAX_RANK]; /* elements */
    int64_t offset;               /* elements */
    char format[16];              /* "ND", "NCHW", "NHWC", "NCL", "NCDHW", "NC1HWC0", "FRACTAL_Z", "FRACTAL_NZ" */
    int storage_ndim;
    int64_t storage_shape[CF_MAX_RANK];
    void *data; /* inputs: cf_tensor_storage_numel() elements of dtype, little endian; outputs: NULL */
} cf_tensor;

typedef enum {
    CF_PARAM_F64,      /* double attribute: scale, eps */
    CF_PARAM_BOOL,     /* fixTriuMask */
    CF_PARAM_INT,      /* compressBlockSize, compressStride, actSeqLenType */
    CF_PARAM_STRING,   /* approximate, layout (may be NULL) */
    CF_PARAM_INTARRAY, /* actSeqLen (may be NULL) */
    CF_PARAM_SCALAR    /* beta, threshold: an aclScalar (may be NULL) */
} cf_param_kind;

typedef struct {
    char name[CF_NAME_LEN];
    cf_param_kind kind;
    bool is_null; /* NULL string / array / scalar */
    double f64;
    bool b;
    int64_t i;
    char str[64];
    int64_t *arr; /* owned */
    int64_t arr_len;
    cf_dtype scalar_dtype;
    uint64_t scalar_bits; /* the scalar's bit pattern, zero-extended (authoritative) */
} cf_param;

typedef struct {
    cf_op op;
    char profile[16]; /* "spec" or "cann-kernel" */
    int ntensors;
    cf_tensor tensors[CF_MAX_TENSORS]; /* in the operator's argument order */
    int nparams;
    cf_param params[CF_MAX_PARAMS];
    int32_t expect_status;
    char rule[48]; /* the invalid-input rule a case breaks ("" for a valid case) */
    /* origin (informational) */
    char origin_kind[16]; /* "fuzz", "edge", "invalid", "exhaustive", "hand", "example", "shrink" */
    uint64_t seed;
    int64_t index;
    char shrunk_from[40];
    char note[160];
    /* origin.target: the library a stored failure was found on ("" = builtin / unknown) and the
     * SHA-256 of its file (64 hex digits, "" = unknown); replay and shrink default to it. */
    char target_path[1024];
    char target_sha256[65];
    /* run-time only, never stored: op threads for this run (0 = the target's default) through
     * the target's optional aclconformSetNumThreads (the sweep's determinism check) */
    int op_threads;
} cf_case;

int64_t cf_tensor_numel(const cf_tensor *t);         /* product of shape (1 for rank 0) */
int64_t cf_tensor_storage_numel(const cf_tensor *t); /* product of storage_shape */
cf_tensor *cf_case_tensor(cf_case *c, const char *name);       /* NULL if absent */
const cf_tensor *cf_case_tensor_c(const cf_case *c, const char *name);
cf_param *cf_case_param(cf_case *c, const char *name);
const cf_param *cf_case_param_c(const cf_case *c, const char *name);
/* Deep copy (data and arrays duplicated).  Returns false on allocation failure. */
bool cf_case_clone(cf_case *dst, const cf_case *src);
void cf_case_free(cf_case *c);

#endif
