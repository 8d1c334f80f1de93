#include "adapters.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OP(id, Camel) extern const cf_adapter cf_adapter_##id;
#include "ops.def"
#undef OP

const cf_adapter *const cf_adapters[CF_OP_COUNT] = {
#define OP(id, Camel) &cf_adapter_##id,
#include "ops.def"
#undef OP
};

aclTensor *cf_arg_tensor(const cf_case *c, aclTensor *const *tensors, const char *name)
{
    for (int i = 0; i < c->ntensors; i++)
        if (strcmp(c->tensors[i].name, name) == 0) return tensors[i];
    return NULL;
}

void *cf_arg_param(const cf_case *c, void *const *params, const char *name)
{
    for (int i = 0; i < c->nparams; i++)
        if (strcmp(c->params[i].name, name) == 0) return params[i];
    return NULL;
}

double cf_arg_f64(const cf_case *c, const char *name, double dflt)
{
    const cf_param *p = cf_case_param_c(c, name);
    if (!p) return dflt;
    return p->kind == CF_PARAM_INT ? (double)p->i : p->f64;
}

int64_t cf_arg_int(const cf_case *c, const char *name, int64_t dflt)
{
    const cf_param *p = cf_case_param_c(c, name);
    if (!p) return dflt;
    return p->kind == CF_PARAM_F64 ? (int64_t)p->f64 : p->i;
}

bool cf_arg_bool(const cf_case *c, const char *name)
{
    const cf_param *p = cf_case_param_c(c, name);
    return p && p->b;
}

const char *cf_arg_str(const cf_case *c, const char *name)
{
    const cf_param *p = cf_case_param_c(c, name);
    return p && !p->is_null ? p->str : NULL;
}

bool cf_orc_tensor(const cf_case *c, const char *name, orc_tensor *o)
{
    const cf_tensor *t = cf_case_tensor_c(c, name);
    if (!t || !t->present) return false;
    *o = (orc_tensor){t->dtype, t->ndim, t->shape, t->strides, t->offset, t->data};
    return true;
}

orc_out cf_orc_out(cf_expected *x, const char *name)
{
    for (int i = 0; i < x->nout; i++)
        if (strcmp(x->out[i].name, name) == 0) {
            cf_expected_out *o = &x->out[i];
            return (orc_out){o->r, o->lo, o->m, o->err, o->alt};
        }
    return (orc_out){0};
}

bool cf_tensor_box(const cf_tensor *t, const int64_t *start, const int64_t *count, cf_tensor *dst)
{
    *dst = *t;
    dst->data = NULL;
    dst->offset = 0;
    int64_t n = 1, run = 1;
    for (int k = t->ndim - 1; k >= 0; k--) {
        dst->shape[k] = count[k];
        dst->strides[k] = run;
        run *= count[k];
        n *= count[k];
    }
    dst->storage_ndim = t->ndim;
    memcpy(dst->storage_shape, dst->shape, sizeof dst->shape);
    snprintf(dst->format, sizeof dst->format, "ND");
    if (t->output || !t->present) return true;
    size_t es = cf_dtype_size(t->dtype);
    dst->data = malloc((size_t)(n ? n : 1) * es);
    if (!dst->data) return false;
    for (int64_t j = 0; j < n; j++) {
        int64_t rem = j, off = t->offset;
        for (int k = t->ndim - 1; k >= 0; k--) {
            off += (start[k] + rem % count[k]) * t->strides[k];
            rem /= count[k];
        }
        memcpy((char *)dst->data + (size_t)j * es, (const char *)t->data + (size_t)off * es, es);
    }
    return true;
}
