/* Dtype ids of the suite (spec ops.md: f16 bf16 f32 f64 i8 i16 i32 i64 u8 bool; abi.md's other
 * aclDataTypes u16 u32 u64 c64 c128 for invalid-dtype cases).  A pure
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
    /* dtypes no operator takes: they exist so that invalid-dtype rules meet every aclDataType
     * of abi.md (formats.md gives each a case-file name and an .npy storage) */
    CF_U16,
    CF_U32,
    CF_U64,
    CF_C64,
    CF_C128,
    CF_DTYPE_COUNT
} cf_dtype;

#endif
