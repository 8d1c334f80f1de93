/* Meta objects (abi.md): tensors, scalars, int arrays, and the dtype/format helpers. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "conv.h"
#include "runtime.h"

size_t acl_dtype_size(aclDataType dt)
{
    switch (dt) {
    case ACL_INT8: case ACL_UINT8: case ACL_BOOL: return 1;
    case ACL_FLOAT16: case ACL_BF16: case ACL_INT16: case ACL_UINT16: return 2;
    case ACL_FLOAT: case ACL_INT32: case ACL_UINT32: return 4;
    case ACL_DOUBLE: case ACL_INT64: case ACL_UINT64: case ACL_COMPLEX64: return 8;
    case ACL_COMPLEX128: return 16;
    default: return 0;
    }
}

bool acl_dtype_is_float(aclDataType dt)
{
    return dt == ACL_FLOAT16 || dt == ACL_BF16 || dt == ACL_FLOAT || dt == ACL_DOUBLE;
}

bool acl_format_is_nd(aclFormat f)
{
    return f == ACL_FORMAT_ND || f == ACL_FORMAT_NCHW || f == ACL_FORMAT_NHWC ||
           f == ACL_FORMAT_NCL || f == ACL_FORMAT_NCDHW;
}

aclDataType acl_promote(aclDataType a, aclDataType b)
{
    if (a == ACL_DOUBLE || b == ACL_DOUBLE) return ACL_DOUBLE;
    if (a == ACL_FLOAT || b == ACL_FLOAT) return ACL_FLOAT;
    if ((a == ACL_FLOAT16 && b == ACL_BF16) || (a == ACL_BF16 && b == ACL_FLOAT16)) return ACL_FLOAT;
    if (a == ACL_FLOAT16 || b == ACL_FLOAT16) return ACL_FLOAT16;
    if (a == ACL_BF16 || b == ACL_BF16) return ACL_BF16;
    return ACL_DT_UNDEFINED;
}

static bool mul_ok(int64_t a, int64_t b, int64_t *out)
{
    return !__builtin_mul_overflow(a, b, out);
}

aclTensor *aclCreateTensor(const int64_t *viewDims, uint64_t viewDimsNum, aclDataType dataType,
                           const int64_t *stride, int64_t offset, aclFormat format,
                           const int64_t *storageDims, uint64_t storageDimsNum, void *tensorData)
{
    if (viewDimsNum > ACL_MAX_DIMS || storageDimsNum > ACL_MAX_DIMS) return NULL;
    if ((viewDims == NULL && viewDimsNum > 0) || (storageDims == NULL && storageDimsNum > 0))
        return NULL;
    if (acl_dtype_size(dataType) == 0 || offset < 0) return NULL;

    int64_t numel = 1, storage = 1, last = offset;
    for (uint64_t i = 0; i < viewDimsNum; i++) {
        if (viewDims[i] < 0 || (stride && stride[i] < 0)) return NULL;
        if (!mul_ok(numel, viewDims[i], &numel)) return NULL;
    }
    for (uint64_t i = 0; i < storageDimsNum; i++) {
        if (storageDims[i] < 0 || !mul_ok(storage, storageDims[i], &storage)) return NULL;
    }
    if (!mul_ok(storage, (int64_t)acl_dtype_size(dataType), &(int64_t){0})) return NULL;

    aclTensor *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->ndim = viewDimsNum;
    t->dtype = dataType;
    t->format = format;
    t->offset = offset;
    t->numel = numel;
    t->data = tensorData;
    t->storage_ndim = storageDimsNum;
    t->storage_numel = storage;
    if (storageDimsNum) memcpy(t->storage_dims, storageDims, storageDimsNum * sizeof(int64_t));
    int64_t run = 1;
    for (uint64_t k = viewDimsNum; k-- > 0;) {
        t->dims[k] = viewDims[k];
        t->strides[k] = stride ? stride[k] : run;
        if (!stride && !mul_ok(run, viewDims[k] ? viewDims[k] : 1, &run)) goto fail;
    }
    /* The last element of a non-empty view must lie inside the storage. */
    if (numel > 0) {
        for (uint64_t k = 0; k < viewDimsNum; k++) {
            int64_t step;
            if (!mul_ok(viewDims[k] - 1, t->strides[k], &step) ||
                __builtin_add_overflow(last, step, &last))
                goto fail;
        }
        if (last >= storage) goto fail;
    }
    return t;
fail:
    free(t);
    return NULL;
}

aclnnStatus aclDestroyTensor(const aclTensor *tensor)
{
    free((void *)(uintptr_t)tensor);
    return ACLNN_SUCCESS;
}

aclScalar *aclCreateScalar(void *value, aclDataType dataType)
{
    if (!value) return NULL;
    switch (dataType) {
    case ACL_FLOAT16: case ACL_BF16: case ACL_FLOAT: case ACL_DOUBLE: case ACL_INT8:
    case ACL_INT16: case ACL_INT32: case ACL_INT64: case ACL_UINT8: case ACL_BOOL:
    /* abi.md: every aclDataType is a scalar; an operator rejects the ones it does not list */
    case ACL_UINT16: case ACL_UINT32: case ACL_UINT64: case ACL_COMPLEX64: case ACL_COMPLEX128: break;
    default: return NULL;
    }
    aclScalar *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->dtype = dataType;
    memcpy(s->v.raw, value, acl_dtype_size(dataType));
    if (dataType == ACL_BOOL) s->v.b = s->v.raw[0] != 0; /* any non-zero byte is true */
    return s;
}

aclnnStatus aclDestroyScalar(const aclScalar *scalar)
{
    free((void *)(uintptr_t)scalar);
    return ACLNN_SUCCESS;
}

aclIntArray *aclCreateIntArray(const int64_t *value, uint64_t size)
{
    if (!value && size > 0) return NULL;
    if (size > (uint64_t)(SIZE_MAX / sizeof(int64_t))) return NULL;
    aclIntArray *a = calloc(1, sizeof *a);
    if (!a) return NULL;
    a->size = size;
    if (size) {
        a->data = malloc(size * sizeof(int64_t));
        if (!a->data) {
            free(a);
            return NULL;
        }
        memcpy(a->data, value, size * sizeof(int64_t));
    }
    return a;
}

aclnnStatus aclDestroyIntArray(const aclIntArray *array)
{
    if (array) free(array->data);
    free((void *)(uintptr_t)array);
    return ACLNN_SUCCESS;
}

double acl_scalar_to_f64(const aclScalar *s)
{
    switch (s->dtype) {
    case ACL_FLOAT16: return acl_f16_to_f32(s->v.u16);
    case ACL_BF16: return acl_bf16_to_f32(s->v.u16);
    case ACL_FLOAT: return s->v.f32;
    case ACL_DOUBLE: return s->v.f64;
    case ACL_INT8: return s->v.i8;
    case ACL_INT16: return s->v.i16;
    case ACL_INT32: return s->v.i32;
    case ACL_INT64: return (double)s->v.i64;
    case ACL_UINT8: return s->v.u8;
    case ACL_BOOL: return s->v.b ? 1.0 : 0.0;
    default: return 0.0;
    }
}

float acl_scalar_to_f32(const aclScalar *s)
{
    /* i64 and f64 round once from the stored value; every other dtype is exact in f32 or goes
     * through an exact double. */
    if (s->dtype == ACL_INT64) return (float)s->v.i64;
    return (float)acl_scalar_to_f64(s);
}

/* ---- shape helpers ---- */

bool acl_same_shape(const aclTensor *a, const aclTensor *b)
{
    if (a->ndim != b->ndim) return false;
    for (uint64_t i = 0; i < a->ndim; i++)
        if (a->dims[i] != b->dims[i]) return false;
    return true;
}

bool acl_broadcast_shape(const int64_t *a, uint64_t na, const int64_t *b, uint64_t nb,
                         int64_t *out, uint64_t *nout)
{
    uint64_t n = na > nb ? na : nb;
    for (uint64_t k = 0; k < n; k++) {
        int64_t da = k < na ? a[na - 1 - k] : 1;
        int64_t db = k < nb ? b[nb - 1 - k] : 1;
        int64_t d;
        if (da == db) d = da;
        else if (da == 1) d = db;
        else if (db == 1) d = da;
        else return false;
        out[n - 1 - k] = d;
    }
    *nout = n;
    return true;
}

bool acl_tensor_is_contiguous(const aclTensor *t)
{
    int64_t run = 1;
    for (uint64_t k = t->ndim; k-- > 0;) {
        if (t->dims[k] != 1 && t->strides[k] != run) return false;
        run *= t->dims[k];
    }
    return true;
}

static int cmp_dim(const void *pa, const void *pb)
{
    const int64_t *a = pa, *b = pb; /* pairs (stride, dim) */
    return (a[0] > b[0]) - (a[0] < b[0]);
}

bool acl_tensor_self_overlaps(const aclTensor *t)
{
    if (t->numel <= 1) return false;
    /* Sufficient test: sorted by stride, each stride exceeds the span of the smaller ones. */
    int64_t pairs[ACL_MAX_DIMS][2];
    int n = 0;
    for (uint64_t k = 0; k < t->ndim; k++) {
        if (t->dims[k] == 1) continue;
        if (t->strides[k] == 0) return true;
        pairs[n][0] = t->strides[k];
        pairs[n][1] = t->dims[k];
        n++;
    }
    qsort(pairs, (size_t)n, sizeof pairs[0], cmp_dim);
    int64_t span = 1;
    bool simple = true;
    for (int i = 0; i < n; i++) {
        if (pairs[i][0] < span) {
            simple = false;
            break;
        }
        span = pairs[i][0] * (pairs[i][1] - 1) + span;
    }
    if (simple) return false;
    /* Interleaved layouts: mark every address in a bitmap over the view's extent (bounded by
     * the storage, which the caller allocated). */
    int64_t extent = 1;
    for (int i = 0; i < n; i++) extent += pairs[i][0] * (pairs[i][1] - 1);
    unsigned char *seen = calloc((size_t)(extent + 7) / 8, 1);
    if (!seen) return true; /* cannot prove it safe */
    bool overlap = false;
    int64_t idx[ACL_MAX_DIMS] = {0};
    for (int64_t e = 0; e < t->numel && !overlap; e++) {
        int64_t off = 0;
        for (int i = 0; i < n; i++) off += idx[i] * pairs[i][0];
        if (seen[off >> 3] & (1u << (off & 7))) overlap = true;
        seen[off >> 3] |= (unsigned char)(1u << (off & 7));
        for (int i = 0; i < n; i++) {
            if (++idx[i] < pairs[i][1]) break;
            idx[i] = 0;
        }
    }
    free(seen);
    return overlap;
}
