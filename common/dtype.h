/* Dtype ids of the suite (spec ops.md: f16 bf16 f32 f64 i8 i16 i32 i64 u8 bool).  A pure
 * description shared by every component; no logic lives here. */
#ifndef ACLCONFORM_DTYPE_H
#define ACLCONFORM_DTYPE_H

typedef enum {
    CF_F16,
    CF_BF16,
    CF_F32,
    CF_F64,
    CF_I8,
    CF_I16,
    CF_I32,
    CF_I64,
    CF_U8,
    CF_BOOL,
    CF_DTYPE_COUNT
} cf_dtype;

#endif
