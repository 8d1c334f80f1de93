#include "casefile.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "npy.h"
#include "ulp.h"

void cf_expected_free(cf_expected *x)
{
    for (int i = 0; i < x->nout; i++) {
        cf_expected_out *o = &x->out[i];
        free(o->r); free(o->lo); free(o->m); free(o->alt); free(o->err); free(o->masked);
    }
    memset(x, 0, sizeof *x);
}

cf_status cf_expected_alloc(cf_expected *x, const cf_case *c, bool with_lo, cf_err *e)
{
    memset(x, 0, sizeof *x);
    for (int i = 0; i < c->ntensors && x->nout < 2; i++) {
        const cf_tensor *t = &c->tensors[i];
        if (!t->output || !t->present) continue;
        cf_expected_out *o = &x->out[x->nout++];
        snprintf(o->name, sizeof o->name, "%s", t->name);
        o->n = cf_tensor_numel(t);
        size_t n = (size_t)(o->n > 0 ? o->n : 1);
        o->r = calloc(n, sizeof(double));
        o->m = calloc(n, sizeof(double));
        o->alt = calloc(n, sizeof(double));
        o->err = calloc(n, sizeof(double));
        if (with_lo) o->lo = calloc(n, sizeof(double));
        if (!o->r || !o->m || !o->alt || !o->err || (with_lo && !o->lo)) {
            cf_expected_free(x);
            return cf_fail(e, CFE_IO, "out of memory for expected values");
        }
    }
    return CFE_OK;
}

/* ---- JSON helpers ---- */

static const char *FORMATS[] = {"ND", "NCHW", "NHWC", "NCL", "NCDHW", "NC1HWC0", "FRACTAL_Z", "FRACTAL_NZ"};

static cf_status get_int_array(const char *file, const char *field, const cJSON *a, int64_t *out,
                               int *n, int max, cf_err *e)
{
    if (!cJSON_IsArray(a)) return cf_fail(e, CFE_INPUT, "%s: field '%s': expected an array of integers", file, field);
    int k = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, a)
    {
        if (k >= max) return cf_fail(e, CFE_INPUT, "%s: field '%s': more than %d entries", file, field, max);
        if (!cJSON_IsNumber(it) || it->valuedouble != floor(it->valuedouble) || fabs(it->valuedouble) > 0x1p62)
            return cf_fail(e, CFE_INPUT, "%s: field '%s[%d]': expected an integer", file, field, k);
        out[k++] = (int64_t)it->valuedouble;
    }
    *n = k;
    return CFE_OK;
}

static bool special_double(const char *s, double *v)
{
    if (!strcmp(s, "nan")) *v = NAN;
    else if (!strcmp(s, "inf")) *v = INFINITY;
    else if (!strcmp(s, "-inf")) *v = -INFINITY;
    else if (!strcmp(s, "-0")) *v = -0.0;
    else return false;
    return true;
}

static cJSON *double_json(double v)
{
    if (isnan(v)) return cJSON_CreateString("nan");
    if (isinf(v)) return cJSON_CreateString(v > 0 ? "inf" : "-inf");
    if (v == 0 && signbit(v)) return cJSON_CreateString("-0");
    return cJSON_CreateNumber(v);
}

static cf_status parse_param(const char *file, const char *name, const cJSON *v, cf_param *p, cf_err *e)
{
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", name);
    if (cJSON_IsNull(v)) {
        p->kind = CF_PARAM_STRING; /* NULL string or array: both are a NULL pointer */
        p->is_null = true;
    } else if (cJSON_IsBool(v)) {
        p->kind = CF_PARAM_BOOL;
        p->b = cJSON_IsTrue(v);
    } else if (cJSON_IsNumber(v)) {
        p->kind = CF_PARAM_F64;
        p->f64 = v->valuedouble;
        /* integer attributes are read from .i, double ones from .f64: both are filled */
        if (v->valuedouble == floor(v->valuedouble) && fabs(v->valuedouble) < 0x1p62)
            p->i = (int64_t)v->valuedouble;
    } else if (cJSON_IsString(v)) {
        p->kind = CF_PARAM_STRING;
        if (strlen(v->valuestring) >= sizeof p->str)
            return cf_fail(e, CFE_INPUT, "%s: field 'params.%s': string longer than %zu", file, name, sizeof p->str - 1);
        snprintf(p->str, sizeof p->str, "%s", v->valuestring);
        if (special_double(v->valuestring, &p->f64)) p->kind = CF_PARAM_F64;
    } else if (cJSON_IsArray(v)) {
        p->kind = CF_PARAM_INTARRAY;
        int n = cJSON_GetArraySize(v);
        p->arr = malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
        if (!p->arr) return cf_fail(e, CFE_IO, "out of memory");
        int got = 0;
        char field[64];
        snprintf(field, sizeof field, "params.%s", name);
        cf_status st = get_int_array(file, field, v, p->arr, &got, n, e);
        if (st) return st;
        p->arr_len = got;
    } else if (cJSON_IsObject(v)) {
        p->kind = CF_PARAM_SCALAR;
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "null"))) {
            p->is_null = true;
            return CFE_OK;
        }
        const cJSON *dt = cJSON_GetObjectItemCaseSensitive(v, "dtype");
        const cJSON *bits = cJSON_GetObjectItemCaseSensitive(v, "bits");
        if (!cJSON_IsString(dt) || !cf_dtype_parse(dt->valuestring, &p->scalar_dtype))
            return cf_fail(e, CFE_INPUT, "%s: field 'params.%s.dtype': expected a dtype (f16 bf16 f32 f64 i8 i16 i32 i64 u8 bool)", file, name);
        if (!cJSON_IsString(bits) || strncmp(bits->valuestring, "0x", 2) != 0)
            return cf_fail(e, CFE_INPUT, "%s: field 'params.%s.bits': expected a hex string \"0x...\"", file, name);
        char *end;
        p->scalar_bits = strtoull(bits->valuestring + 2, &end, 16);
        if (*end || end == bits->valuestring + 2)
            return cf_fail(e, CFE_INPUT, "%s: field 'params.%s.bits': not hexadecimal", file, name);
        size_t w = cf_dtype_size(p->scalar_dtype) * 8;
        if (w < 64 && (p->scalar_bits >> w))
            return cf_fail(e, CFE_INPUT, "%s: field 'params.%s.bits': wider than %zu bits", file, name, w);
    } else {
        return cf_fail(e, CFE_INPUT, "%s: field 'params.%s': unsupported value", file, name);
    }
    return CFE_OK;
}

static cf_status parse_tensor(const char *dir, const char *file, const cJSON *v, cf_tensor *t, bool inputs_data, cf_err *e)
{
    char field[96];
    const char *nm = v->string;
    memset(t, 0, sizeof *t);
    if (strlen(nm) >= sizeof t->name) return cf_fail(e, CFE_INPUT, "%s: field 'tensors.%s': name too long", file, nm);
    snprintf(t->name, sizeof t->name, "%s", nm);
    if (!cJSON_IsObject(v)) return cf_fail(e, CFE_INPUT, "%s: field 'tensors.%s': expected an object", file, nm);
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "null"))) {
        t->present = false;
        t->output = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "output"));
        return CFE_OK;
    }
    t->present = true;
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(v, "dtype");
    if (!cJSON_IsString(dt) || !cf_dtype_parse(dt->valuestring, &t->dtype))
        return cf_fail(e, CFE_INPUT, "%s: field 'tensors.%s.dtype': expected one of f16 bf16 f32 f64 i8 i16 i32 i64 u8 bool", file, nm);
    int n1 = 0, n2 = 0, n3 = 0;
    cf_status st;
    snprintf(field, sizeof field, "tensors.%s.shape", nm);
    if ((st = get_int_array(file, field, cJSON_GetObjectItemCaseSensitive(v, "shape"), t->shape, &n1, CF_MAX_RANK, e))) return st;
    snprintf(field, sizeof field, "tensors.%s.strides", nm);
    if ((st = get_int_array(file, field, cJSON_GetObjectItemCaseSensitive(v, "strides"), t->strides, &n2, CF_MAX_RANK, e))) return st;
    snprintf(field, sizeof field, "tensors.%s.storage_shape", nm);
    if ((st = get_int_array(file, field, cJSON_GetObjectItemCaseSensitive(v, "storage_shape"), t->storage_shape, &n3, CF_MAX_RANK, e))) return st;
    if (n1 != n2) return cf_fail(e, CFE_INPUT, "%s: field 'tensors.%s.strides': %d entries for a rank-%d shape", file, nm, n2, n1);
    t->ndim = n1;
    t->storage_ndim = n3;
    /* element counts must be representable: every count the harness computes stays far from
     * int64 overflow (2^40 elements is beyond any case it can run anyway) */
    int64_t numel = 1, snumel = 1;
    for (int k = 0; k < n1; k++) {
        if (t->shape[k] < 0 || t->strides[k] < 0)
            return cf_fail(e, CFE_INPUT, "%s: field 'tensors.%s.%s[%d]': expected a non-negative integer", file, nm,
                           t->shape[k] < 0 ? "shape" : "strides", k);
        if (__builtin_mul_overflow(numel, t->shape[k], &numel) || numel > (INT64_C(1) << 40))
            return cf_fail(e, CFE_INPUT, "%s: field 'tensors.%s.shape': more than 2^40 elements", file, nm);
    }
    for (int k = 0; k < n3; k++) {
        if (t->storage_shape[k] < 0) return cf_fail(e, CFE_INPUT, "%s: field 'tensors.%s.storage_shape[%d]': negative", file, nm, k);
        if (__builtin_mul_overflow(snumel, t->storage_shape[k], &snumel) || snumel > (INT64_C(1) << 40))
            return cf_fail(e, CFE_INPUT, "%s: field 'tensors.%s.storage_shape': more than 2^40 elements", file, nm);
    }
    const cJSON *off = cJSON_GetObjectItemCaseSensitive(v, "offset");
    if (!cJSON_IsNumber(off) || off->valuedouble != floor(off->valuedouble))
        return cf_fail(e, CFE_INPUT, "%s: field 'tensors.%s.offset': expected an integer", file, nm);
    t->offset = (int64_t)off->valuedouble;
    if (t->offset < 0 || t->offset > (INT64_C(1) << 40))
        return cf_fail(e, CFE_INPUT, "%s: field 'tensors.%s.offset': expected 0 .. 2^40", file, nm);
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(v, "format");
    snprintf(t->format, sizeof t->format, "ND");
    if (fmt) {
        bool ok = false;
        for (size_t i = 0; cJSON_IsString(fmt) && i < sizeof FORMATS / sizeof FORMATS[0]; i++) ok |= !strcmp(fmt->valuestring, FORMATS[i]);
        if (!ok) return cf_fail(e, CFE_INPUT, "%s: field 'tensors.%s.format': expected one of ND NCHW NHWC NCL NCDHW NC1HWC0 FRACTAL_Z FRACTAL_NZ", file, nm);
        snprintf(t->format, sizeof t->format, "%s", fmt->valuestring);
    }
    t->output = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "output"));
    if (t->output || !inputs_data) return CFE_OK;
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(v, "file");
    if (!cJSON_IsString(f) || strchr(f->valuestring, '/'))
        return cf_fail(e, CFE_INPUT, "%s: field 'tensors.%s.file': expected a file name in the case directory", file, nm);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, f->valuestring);
    npy_array a;
    if ((st = npy_read(path, &a, e))) return st;
    if (!npy_descr_matches(a.descr, t->dtype)) {
        npy_free(&a);
        return cf_fail(e, CFE_INPUT, "%s: descr '%s' does not hold dtype %s (field 'tensors.%s.dtype' of %s)", path, a.descr, cf_dtype_name(t->dtype), nm, file);
    }
    bool same = a.ndim == t->storage_ndim;
    for (int k = 0; same && k < a.ndim; k++) same = a.shape[k] == t->storage_shape[k];
    if (!same) {
        npy_free(&a);
        return cf_fail(e, CFE_INPUT, "%s: shape does not equal field 'tensors.%s.storage_shape' of %s", path, nm, file);
    }
    t->data = a.data;
    return CFE_OK;
}

static cf_status read_f8(const char *dir, const char *prefix, const char *out, int64_t n, bool optional, double **dst, cf_err *e)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.%s.npy", dir, prefix, out);
    *dst = NULL;
    if (optional && !cf_is_file(path)) return CFE_OK;
    npy_array a;
    cf_status st = npy_read(path, &a, e);
    if (st) return st;
    if (strcmp(a.descr, "<f8") != 0 || a.numel != n) {
        npy_free(&a);
        return cf_fail(e, CFE_INPUT, "%s: expected '<f8' with %lld elements (the output view), found '%s' with %lld", path, (long long)n, a.descr, (long long)a.numel);
    }
    *dst = a.data;
    return CFE_OK;
}

cf_status cf_case_read(const char *dir, cf_case *c, cf_expected *x, cf_err *e)
{
    memset(c, 0, sizeof *c);
    if (x) memset(x, 0, sizeof *x);
    char file[4096];
    snprintf(file, sizeof file, "%s/case.json", dir);
    cJSON *root;
    cf_status st = cf_read_json(file, &root, e);
    if (st) return st;
    const cJSON *it;
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(root, "schema");
    if (!cJSON_IsNumber(schema) || schema->valueint != 1) {
        st = cf_fail(e, CFE_INPUT, "%s: field 'schema': expected 1", file);
        goto fail;
    }
    const cJSON *op = cJSON_GetObjectItemCaseSensitive(root, "op");
    if (!cJSON_IsString(op) || !cf_op_parse(op->valuestring, &c->op)) {
        st = cf_fail(e, CFE_INPUT, "%s: field 'op': expected an operator name", file);
        goto fail;
    }
    const cJSON *prof = cJSON_GetObjectItemCaseSensitive(root, "profile");
    snprintf(c->profile, sizeof c->profile, "%s", cJSON_IsString(prof) ? prof->valuestring : "spec");
    if (strcmp(c->profile, "spec") && strcmp(c->profile, "cann-kernel")) {
        st = cf_fail(e, CFE_INPUT, "%s: field 'profile': expected spec or cann-kernel", file);
        goto fail;
    }
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(root, "params");
    if (!cJSON_IsObject(params)) {
        st = cf_fail(e, CFE_INPUT, "%s: field 'params': expected an object", file);
        goto fail;
    }
    cJSON_ArrayForEach(it, params)
    {
        if (c->nparams >= CF_MAX_PARAMS) {
            st = cf_fail(e, CFE_INPUT, "%s: field 'params': too many", file);
            goto fail;
        }
        if ((st = parse_param(file, it->string, it, &c->params[c->nparams++], e))) goto fail;
    }
    const cJSON *tensors = cJSON_GetObjectItemCaseSensitive(root, "tensors");
    if (!cJSON_IsObject(tensors)) {
        st = cf_fail(e, CFE_INPUT, "%s: field 'tensors': expected an object", file);
        goto fail;
    }
    cJSON_ArrayForEach(it, tensors)
    {
        if (c->ntensors >= CF_MAX_TENSORS) {
            st = cf_fail(e, CFE_INPUT, "%s: field 'tensors': too many", file);
            goto fail;
        }
        if ((st = parse_tensor(dir, file, it, &c->tensors[c->ntensors++], true, e))) goto fail;
    }
    const cJSON *expect = cJSON_GetObjectItemCaseSensitive(root, "expect");
    const cJSON *status = expect ? cJSON_GetObjectItemCaseSensitive(expect, "status") : NULL;
    if (!cJSON_IsNumber(status)) {
        st = cf_fail(e, CFE_INPUT, "%s: field 'expect.status': expected an integer", file);
        goto fail;
    }
    c->expect_status = (int32_t)status->valuedouble;
    const cJSON *rule = expect ? cJSON_GetObjectItemCaseSensitive(expect, "rule") : NULL;
    if (cJSON_IsString(rule)) snprintf(c->rule, sizeof c->rule, "%s", rule->valuestring);
    const cJSON *origin = cJSON_GetObjectItemCaseSensitive(root, "origin");
    if (cJSON_IsObject(origin)) {
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(origin, "kind");
        if (cJSON_IsString(k)) snprintf(c->origin_kind, sizeof c->origin_kind, "%s", k->valuestring);
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(origin, "seed");
        if (cJSON_IsString(s)) c->seed = strtoull(s->valuestring, NULL, 0);
        const cJSON *ix = cJSON_GetObjectItemCaseSensitive(origin, "index");
        if (cJSON_IsNumber(ix)) c->index = (int64_t)ix->valuedouble;
        const cJSON *sf = cJSON_GetObjectItemCaseSensitive(origin, "shrunk_from");
        if (cJSON_IsString(sf)) snprintf(c->shrunk_from, sizeof c->shrunk_from, "%s", sf->valuestring);
    }
    const cJSON *note = cJSON_GetObjectItemCaseSensitive(root, "note");
    if (cJSON_IsString(note)) snprintf(c->note, sizeof c->note, "%s", note->valuestring);
    cJSON_Delete(root);
    root = NULL;
    if (!x || c->expect_status != 0) return CFE_OK;
    for (int i = 0; i < c->ntensors; i++) {
        const cf_tensor *t = &c->tensors[i];
        if (!t->output || !t->present) continue;
        cf_expected_out *o = &x->out[x->nout++];
        snprintf(o->name, sizeof o->name, "%s", t->name);
        o->n = cf_tensor_numel(t);
        if ((st = read_f8(dir, "expected", t->name, o->n, false, &o->r, e)) ||
            (st = read_f8(dir, "magnitude", t->name, o->n, false, &o->m, e)) ||
            (st = read_f8(dir, "expected_lo", t->name, o->n, true, &o->lo, e)) ||
            (st = read_f8(dir, "alt", t->name, o->n, true, &o->alt, e)))
            goto fail;
    }
    return CFE_OK;
fail:
    cJSON_Delete(root);
    cf_case_free(c);
    if (x) cf_expected_free(x);
    return st;
}

/* ---- writing ---- */

static cJSON *int_array(const int64_t *v, int n)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n; i++) cJSON_AddItemToArray(a, cJSON_CreateNumber((double)v[i]));
    return a;
}

static cJSON *params_json(const cf_case *c)
{
    cJSON *o = cJSON_CreateObject();
    for (int i = 0; i < c->nparams; i++) {
        const cf_param *p = &c->params[i];
        cJSON *v;
        switch (p->kind) {
        case CF_PARAM_F64: v = double_json(p->f64); break;
        case CF_PARAM_BOOL: v = cJSON_CreateBool(p->b); break;
        case CF_PARAM_INT: v = cJSON_CreateNumber((double)p->i); break;
        case CF_PARAM_STRING: v = p->is_null ? cJSON_CreateNull() : cJSON_CreateString(p->str); break;
        case CF_PARAM_INTARRAY: v = p->is_null || !p->arr ? cJSON_CreateNull() : int_array(p->arr, (int)p->arr_len); break;
        default: { /* scalar */
            v = cJSON_CreateObject();
            if (p->is_null) {
                cJSON_AddTrueToObject(v, "null");
                break;
            }
            cJSON_AddStringToObject(v, "dtype", cf_dtype_name(p->scalar_dtype));
            double val = 0;
            uint64_t b = p->scalar_bits;
            uint8_t raw[8];
            memcpy(raw, &b, 8);
            switch (p->scalar_dtype) {
            case CF_I8: val = (int8_t)b; break;
            case CF_I16: val = (int16_t)b; break;
            case CF_I32: val = (int32_t)b; break;
            case CF_I64: val = (double)(int64_t)b; break;
            case CF_U8: val = (uint8_t)b; break;
            case CF_BOOL: val = b != 0; break;
            default: val = cf_decode(p->scalar_dtype, raw);
            }
            cJSON_AddItemToObject(v, "value", double_json(val));
            char hex[24];
            snprintf(hex, sizeof hex, "0x%0*" PRIx64, (int)cf_dtype_size(p->scalar_dtype) * 2, b);
            cJSON_AddStringToObject(v, "bits", hex);
        }
        }
        cJSON_AddItemToObject(o, p->name, v);
    }
    return o;
}

static cJSON *tensors_json(const cf_case *c)
{
    cJSON *o = cJSON_CreateObject();
    for (int i = 0; i < c->ntensors; i++) {
        const cf_tensor *t = &c->tensors[i];
        cJSON *v = cJSON_CreateObject();
        if (!t->present) {
            cJSON_AddTrueToObject(v, "null");
        } else {
            cJSON_AddStringToObject(v, "dtype", cf_dtype_name(t->dtype));
            cJSON_AddItemToObject(v, "shape", int_array(t->shape, t->ndim));
            cJSON_AddItemToObject(v, "strides", int_array(t->strides, t->ndim));
            cJSON_AddNumberToObject(v, "offset", (double)t->offset);
            cJSON_AddStringToObject(v, "format", t->format[0] ? t->format : "ND");
            cJSON_AddItemToObject(v, "storage_shape", int_array(t->storage_shape, t->storage_ndim));
            if (t->output) cJSON_AddTrueToObject(v, "output");
            else {
                char fn[64];
                snprintf(fn, sizeof fn, "%s.npy", t->name);
                cJSON_AddStringToObject(v, "file", fn);
            }
        }
        cJSON_AddItemToObject(o, t->name, v);
    }
    return o;
}

void cf_case_id(const cf_case *c, char id[17])
{
    cf_sha256 s;
    cf_sha256_init(&s);
    const char *op = cf_op_name(c->op);
    cf_sha256_update(&s, op, strlen(op) + 1);
    cJSON *p = params_json(c), *t = tensors_json(c);
    char *ps = cJSON_PrintUnformatted(p), *ts = cJSON_PrintUnformatted(t);
    if (ps) cf_sha256_update(&s, ps, strlen(ps) + 1);
    if (ts) cf_sha256_update(&s, ts, strlen(ts) + 1);
    free(ps);
    free(ts);
    cJSON_Delete(p);
    cJSON_Delete(t);
    for (int i = 0; i < c->ntensors; i++) {
        const cf_tensor *tt = &c->tensors[i];
        if (tt->present && !tt->output && tt->data)
            cf_sha256_update(&s, tt->data, (size_t)cf_tensor_storage_numel(tt) * cf_dtype_size(tt->dtype));
    }
    uint8_t h[32];
    cf_sha256_final(&s, h);
    for (int i = 0; i < 8; i++) snprintf(id + 2 * i, 3, "%02x", h[i]);
}

cf_status cf_case_write_dir(const char *dir, const cf_case *c, const cf_expected *x, const char *tool, cf_err *e)
{
    cf_status st = cf_mkdirs(dir, e);
    if (st) return st;
    cJSON *root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "schema", 1);
    cJSON_AddStringToObject(root, "op", cf_op_name(c->op));
    cJSON_AddStringToObject(root, "profile", c->profile[0] ? c->profile : "spec");
    cJSON_AddItemToObject(root, "params", params_json(c));
    cJSON_AddItemToObject(root, "tensors", tensors_json(c));
    cJSON *ex = cJSON_AddObjectToObject(root, "expect");
    cJSON_AddNumberToObject(ex, "status", c->expect_status);
    if (c->rule[0]) cJSON_AddStringToObject(ex, "rule", c->rule);
    cJSON *o = cJSON_AddObjectToObject(root, "origin");
    cJSON_AddStringToObject(o, "kind", c->origin_kind[0] ? c->origin_kind : "fuzz");
    char seed[24];
    snprintf(seed, sizeof seed, "0x%" PRIx64, c->seed);
    cJSON_AddStringToObject(o, "seed", seed);
    cJSON_AddNumberToObject(o, "index", (double)c->index);
    cJSON_AddStringToObject(o, "tool", tool);
    if (c->shrunk_from[0]) cJSON_AddStringToObject(o, "shrunk_from", c->shrunk_from);
    else cJSON_AddNullToObject(o, "shrunk_from");
    cJSON_AddStringToObject(root, "note", c->note);
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text) return cf_fail(e, CFE_IO, "%s: out of memory", dir);
    char path[4096];
    for (int i = 0; i < c->ntensors && !st; i++) {
        const cf_tensor *t = &c->tensors[i];
        if (!t->present || t->output) continue;
        snprintf(path, sizeof path, "%s/%s.npy", dir, t->name);
        st = npy_write(path, npy_descr_for(t->dtype), t->storage_ndim, t->storage_shape, t->data, e);
    }
    for (int i = 0; x && c->expect_status == 0 && i < x->nout && !st; i++) {
        const cf_expected_out *eo = &x->out[i];
        const cf_tensor *t = cf_case_tensor_c(c, eo->name);
        const double *arrs[4] = {eo->r, eo->m, eo->lo, eo->alt};
        const char *names[4] = {"expected", "magnitude", "expected_lo", "alt"};
        for (int k = 0; k < 4 && !st; k++) {
            if (!arrs[k]) continue;
            if (k == 3) { /* alt only where it says something */
                bool differs = false;
                for (int64_t j = 0; j < eo->n && !differs; j++) differs = memcmp(&eo->alt[j], &eo->r[j], 8) != 0;
                if (!differs) continue;
            }
            snprintf(path, sizeof path, "%s/%s.%s.npy", dir, names[k], eo->name);
            st = npy_write(path, "<f8", t->ndim, t->shape, arrs[k], e);
        }
    }
    if (!st) {
        snprintf(path, sizeof path, "%s/case.json", dir);
        st = cf_write_atomic(path, text, strlen(text), e);
    }
    free(text);
    return st;
}

cf_status cf_case_write(const char *corpus, const cf_case *c, const cf_expected *x, const char *tool,
                        char *path_out, size_t path_len, cf_err *e)
{
    char id[17], final[4096], tmp[4200];
    cf_case_id(c, id);
    snprintf(final, sizeof final, "%s/%s/%s", corpus, cf_op_name(c->op), id);
    if (path_out) snprintf(path_out, path_len, "%s", final);
    if (cf_is_dir(final)) return CFE_OK;
    snprintf(tmp, sizeof tmp, "%s/%s/.tmp-%s-%ld", corpus, cf_op_name(c->op), id, (long)getpid());
    cf_status st = cf_case_write_dir(tmp, c, x, tool, e);
    if (!st && rename(tmp, final) != 0 && !cf_is_dir(final))
        st = cf_fail(e, CFE_IO, "%s: cannot rename into place", final);
    if (cf_is_dir(tmp)) cf_rmtree(tmp);
    return st;
}
