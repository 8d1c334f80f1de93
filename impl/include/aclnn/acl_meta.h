/* CANN meta objects: data types, formats, tensors, scalars, int arrays, executors.
 *
 * Ownership: the caller owns every object created here, the data behind tensors, and the
 * workspace.  An operator never frees or retains them past its execute call (the executor keeps
 * its own copy of every tensor *descriptor*, so a tensor may be destroyed between the two phases;
 * the data it points to must stay alive until execute returns).
 */
#ifndef ACL_META_H
#define ACL_META_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aclnn/aclnn_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    ACL_DT_UNDEFINED = -1,
    ACL_FLOAT = 0,
    ACL_FLOAT16 = 1,
    ACL_INT8 = 2,
    ACL_INT32 = 3,
    ACL_UINT8 = 4,
    ACL_INT16 = 6,
    ACL_UINT16 = 7,
    ACL_UINT32 = 8,
    ACL_INT64 = 9,
    ACL_UINT64 = 10,
    ACL_DOUBLE = 11,
    ACL_BOOL = 12,
    ACL_COMPLEX64 = 16,
    ACL_COMPLEX128 = 17,
    ACL_BF16 = 27
} aclDataType;

typedef enum {
    ACL_FORMAT_UNDEFINED = -1,
    ACL_FORMAT_NCHW = 0,
    ACL_FORMAT_NHWC = 1,
    ACL_FORMAT_ND = 2,
    ACL_FORMAT_NC1HWC0 = 3,
    ACL_FORMAT_FRACTAL_Z = 4,
    ACL_FORMAT_FRACTAL_NZ = 29,
    ACL_FORMAT_NCDHW = 30,
    ACL_FORMAT_NCL = 47
} aclFormat;

typedef void *aclrtStream;

typedef struct aclTensor aclTensor;
typedef struct aclScalar aclScalar;
typedef struct aclIntArray aclIntArray;
typedef struct aclOpExecutor aclOpExecutor;

/* Create a view of `tensorData`.  viewDims[viewDimsNum] is the view shape (0 ≤ viewDimsNum ≤ 32),
 * stride[] and offset count elements (NULL stride = contiguous row-major), storageDims is the
 * shape of the underlying storage.  Returns NULL (and allocates nothing) for: viewDimsNum > 32,
 * NULL viewDims with viewDimsNum > 0, NULL storageDims with storageDimsNum > 0, negative dims,
 * strides, offset or storage dims, an element count that overflows int64, an unknown dataType,
 * or a non-empty view whose last element lies outside the storage.  Any aclFormat value is
 * accepted here; operators reject formats they do not support. */
aclTensor *aclCreateTensor(const int64_t *viewDims, uint64_t viewDimsNum, aclDataType dataType,
                           const int64_t *stride, int64_t offset, aclFormat format,
                           const int64_t *storageDims, uint64_t storageDimsNum, void *tensorData);

/* Copies *value (sized by dataType).  Returns NULL for NULL value or a dtype other than
 * f16, bf16, f32, f64, i8, i16, i32, i64, u8, bool. */
aclScalar *aclCreateScalar(void *value, aclDataType dataType);

/* Copies value[0..size).  Returns NULL for NULL value with size > 0. */
aclIntArray *aclCreateIntArray(const int64_t *value, uint64_t size);

/* Release an object.  NULL is accepted and returns ACLNN_SUCCESS. */
aclnnStatus aclDestroyTensor(const aclTensor *tensor);
aclnnStatus aclDestroyScalar(const aclScalar *scalar);
aclnnStatus aclDestroyIntArray(const aclIntArray *array);

/* Release an executor that will not be run (a successful execute releases it itself). */
aclnnStatus aclDestroyAclOpExecutor(aclOpExecutor *executor);

/* Not CANN: number of CPU threads the operators use (≤ 0 restores the default, all cores).
 * The results never depend on it. */
void aclconformSetNumThreads(int n);
int aclconformGetNumThreads(void);

#ifdef __cplusplus
}
#endif
#endif
