#include "case.h"

#include <stdlib.h>
#include <string.h>

static const char *const op_names[] = {
#define OP(id, Camel) #id,
#include "ops.def"
#undef OP
};
static const char *const op_camels[] = {
#define OP(id, Camel) #Camel,
#include "ops.def"
#undef OP
};

const char *cf_op_name(cf_op op) { return (unsigned)op < CF_OP_COUNT ? op_names[op] : "?"; }
const char *cf_op_camel(cf_op op) { return (unsigned)op < CF_OP_COUNT ? op_camels[op] : "?"; }

bool cf_op_parse(const char *name, cf_op *op)
{
    for (int i = 0; i < CF_OP_COUNT; i++)
        if (name && strcmp(name, op_names[i]) == 0) {
            *op = (cf_op)i;
            return true;
        }
    return false;
}

static const struct { const char *name; size_t size; bool is_float; } dtypes[CF_DTYPE_COUNT] = {
    [CF_F16] = {"f16", 2, true},  [CF_BF16] = {"bf16", 2, true}, [CF_F32] = {"f32", 4, true},
    [CF_F64] = {"f64", 8, true},  [CF_I8] = {"i8", 1, false},    [CF_I16] = {"i16", 2, false},
    [CF_I32] = {"i32", 4, false}, [CF_I64] = {"i64", 8, false},  [CF_U8] = {"u8", 1, false},
    [CF_BOOL] = {"bool", 1, false}, [CF_U16] = {"u16", 2, false},   [CF_U32] = {"u32", 4, false},
    [CF_U64] = {"u64", 8, false},   [CF_C64] = {"c64", 8, false},    [CF_C128] = {"c128", 16, false},
};

const char *cf_dtype_name(cf_dtype dt) { return (unsigned)dt < CF_DTYPE_COUNT ? dtypes[dt].name : "?"; }
size_t cf_dtype_size(cf_dtype dt) { return (unsigned)dt < CF_DTYPE_COUNT ? dtypes[dt].size : 0; }
bool cf_dtype_is_float(cf_dtype dt) { return (unsigned)dt < CF_DTYPE_COUNT && dtypes[dt].is_float; }

bool cf_dtype_parse(const char *name, cf_dtype *dt)
{
    for (int i = 0; i < CF_DTYPE_COUNT; i++)
        if (name && strcmp(name, dtypes[i].name) == 0) {
            *dt = (cf_dtype)i;
            return true;
        }
    return false;
}

int64_t cf_tensor_numel(const cf_tensor *t)
{
    int64_t n = 1;
    for (int k = 0; k < t->ndim; k++) n *= t->shape[k];
    return n;
}

int64_t cf_tensor_storage_numel(const cf_tensor *t)
{
    int64_t n = 1;
    for (int k = 0; k < t->storage_ndim; k++) n *= t->storage_shape[k];
    return n;
}

const cf_tensor *cf_case_tensor_c(const cf_case *c, const char *name)
{
    for (int i = 0; i < c->ntensors; i++)
        if (strcmp(c->tensors[i].name, name) == 0) return &c->tensors[i];
    return NULL;
}

cf_tensor *cf_case_tensor(cf_case *c, const char *name)
{
    return (cf_tensor *)(uintptr_t)cf_case_tensor_c(c, name);
}

const cf_param *cf_case_param_c(const cf_case *c, const char *name)
{
    for (int i = 0; i < c->nparams; i++)
        if (strcmp(c->params[i].name, name) == 0) return &c->params[i];
    return NULL;
}

cf_param *cf_case_param(cf_case *c, const char *name)
{
    return (cf_param *)(uintptr_t)cf_case_param_c(c, name);
}

bool cf_case_clone(cf_case *dst, const cf_case *src)
{
    *dst = *src;
    for (int i = 0; i < dst->ntensors; i++) dst->tensors[i].data = NULL;
    for (int i = 0; i < dst->nparams; i++) dst->params[i].arr = NULL;
    for (int i = 0; i < src->ntensors; i++) {
        const cf_tensor *t = &src->tensors[i];
        if (!t->data) continue;
        size_t bytes = (size_t)cf_tensor_storage_numel(t) * cf_dtype_size(t->dtype);
        dst->tensors[i].data = malloc(bytes ? bytes : 1);
        if (!dst->tensors[i].data) goto fail;
        memcpy(dst->tensors[i].data, t->data, bytes);
    }
    for (int i = 0; i < src->nparams; i++) {
        const cf_param *p = &src->params[i];
        if (!p->arr) continue;
        size_t bytes = (size_t)p->arr_len * sizeof(int64_t);
        dst->params[i].arr = malloc(bytes ? bytes : 1);
        if (!dst->params[i].arr) goto fail;
        memcpy(dst->params[i].arr, p->arr, bytes);
    }
    return true;
fail:
    cf_case_free(dst);
    return false;
}

void cf_case_free(cf_case *c)
{
    for (int i = 0; i < c->ntensors; i++) free(c->tensors[i].data);
    for (int i = 0; i < c->nparams; i++) free(c->params[i].arr);
    memset(c, 0, sizeof *c);
}
