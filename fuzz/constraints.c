/* Loader of constraints/<op>.json (format: constraints/SCHEMA.md).  Every check reports the
 * file, the JSON path of the offending field and what was expected; malformed input of any
 * kind (not JSON, wrong types, unknown names, out-of-range numbers) is an FZ_ERR_* value. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "slurp.h"

struct cz_ld {
    const char *file;
    char *err;
    size_t errlen;
};
typedef cz_ld ld;

#define PATHLEN CZ_PATHLEN

fz_status cz_failf(ld *L, const char *path, const char *fmt, ...)
{
    if (L->err && L->errlen) {
        int n = snprintf(L->err, L->errlen, "%s: %s: expected ", L->file, path[0] ? path : "(top level)");
        if (n >= 0 && (size_t)n < L->errlen) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(L->err + n, L->errlen - (size_t)n, fmt, ap);
            va_end(ap);
        }
    }
    return FZ_ERR_SCHEMA;
}

/* JSON paths: "a.b", "a[3]"; truncated (never overflowing) if absurdly deep. */
void cz_sub(char *out, const char *path, const char *key)
{
    if (snprintf(out, PATHLEN, "%s%s%s", path, path[0] ? "." : "", key ? key : "?") >= PATHLEN) out[PATHLEN - 1] = 0;
}
void cz_idx(char *out, const char *path, int i)
{
    if (snprintf(out, PATHLEN, "%s[%d]", path, i) >= PATHLEN) out[PATHLEN - 1] = 0;
}

fz_status cz_member(ld *L, const cJSON *obj, const char *path, const char *key, bool required,
                        const cJSON **out)
{
    char p[PATHLEN];
    cz_sub(p, path, key);
    *out = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!*out && required) return cz_failf(L, p, "a member \"%s\"", key);
    return FZ_OK;
}

static fz_status get_str(ld *L, const cJSON *obj, const char *path, const char *key, bool required,
                         char *dst, size_t cap)
{
    const cJSON *it;
    char p[PATHLEN];
    cz_sub(p, path, key);
    TRY(cz_member(L, obj, path, key, required, &it));
    if (!it) return FZ_OK;
    if (!cJSON_IsString(it)) return cz_failf(L, p, "a string");
    if (strlen(it->valuestring) >= cap) return cz_failf(L, p, "a string shorter than %zu characters", cap);
    strcpy(dst, it->valuestring);
    return FZ_OK;
}

fz_status cz_as_array(ld *L, const cJSON *it, const char *p, int maxn, int *n)
{
    if (!cJSON_IsArray(it)) return cz_failf(L, p, "an array");
    *n = cJSON_GetArraySize(it);
    if (*n > maxn) return cz_failf(L, p, "at most %d entries", maxn);
    return FZ_OK;
}

/* A double: a JSON number or one of the strings "nan" "inf" "-inf" "-0" "0". */
static fz_status num_special(ld *L, const cJSON *it, const char *p, double *v)
{
    if (cJSON_IsNumber(it)) {
        *v = it->valuedouble;
        return FZ_OK;
    }
    if (cJSON_IsString(it)) {
        const char *s = it->valuestring;
        if (!strcmp(s, "nan")) *v = NAN;
        else if (!strcmp(s, "inf")) *v = INFINITY;
        else if (!strcmp(s, "-inf")) *v = -INFINITY;
        else if (!strcmp(s, "-0")) *v = -0.0;
        else if (!strcmp(s, "0")) *v = 0.0;
        else return cz_failf(L, p, "a number or one of \"nan\" \"inf\" \"-inf\" \"-0\" \"0\", not \"%s\"", s);
        return FZ_OK;
    }
    return cz_failf(L, p, "a number or one of \"nan\" \"inf\" \"-inf\" \"-0\" \"0\"");
}

fz_status cz_get_num(ld *L, const cJSON *obj, const char *path, const char *key, bool required,
                         double *v)
{
    const cJSON *it;
    char p[PATHLEN];
    cz_sub(p, path, key);
    TRY(cz_member(L, obj, path, key, required, &it));
    if (!it) return FZ_OK;
    if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble)) return cz_failf(L, p, "a finite number");
    *v = it->valuedouble;
    return FZ_OK;
}

fz_status cz_as_int(ld *L, const cJSON *it, const char *p, int64_t lo, int64_t hi, int64_t *v)
{
    if (!cJSON_IsNumber(it) || it->valuedouble != floor(it->valuedouble) || it->valuedouble < (double)lo ||
        it->valuedouble > (double)hi)
        return cz_failf(L, p, "an integer in [%lld, %lld]", (long long)lo, (long long)hi);
    *v = (int64_t)it->valuedouble;
    return FZ_OK;
}

fz_status cz_get_range(ld *L, const cJSON *obj, const char *path, const char *key, int64_t lo,
                           int64_t hi, int64_t out[2])
{
    const cJSON *it;
    char p[PATHLEN], q[PATHLEN];
    int n = 0;
    cz_sub(p, path, key);
    TRY(cz_member(L, obj, path, key, true, &it));
    TRY(cz_as_array(L, it, p, 2, &n));
    if (n != 2) return cz_failf(L, p, "[min, max]");
    for (int i = 0; i < 2; i++) {
        cz_idx(q, p, i);
        TRY(cz_as_int(L, cJSON_GetArrayItem(it, i), q, lo, hi, &out[i]));
    }
    if (out[0] > out[1]) return cz_failf(L, p, "min <= max");
    return FZ_OK;
}

static fz_status as_dtype(ld *L, const cJSON *it, const char *p, cf_dtype *dt)
{
    if (!cJSON_IsString(it) || !cf_dtype_parse(it->valuestring, dt))
        return cz_failf(L, p, "a dtype id (f16 bf16 f32 f64 i8 i16 i32 i64 u8 bool)");
    return FZ_OK;
}

static fz_status dtype_list(ld *L, const cJSON *obj, const char *path, const char *key, bool required,
                            cz_dtset *set)
{
    const cJSON *it;
    char p[PATHLEN], q[PATHLEN];
    int n = 0;
    cz_sub(p, path, key);
    *set = 0;
    TRY(cz_member(L, obj, path, key, required, &it));
    if (!it) return FZ_OK;
    TRY(cz_as_array(L, it, p, CF_DTYPE_COUNT, &n));
    if (n == 0) return cz_failf(L, p, "a non-empty array of dtype ids");
    for (int i = 0; i < n; i++) {
        cf_dtype dt;
        cz_idx(q, p, i);
        TRY(as_dtype(L, cJSON_GetArrayItem(it, i), q, &dt));
        if (*set & (1u << dt)) return cz_failf(L, q, "no duplicate dtype");
        *set |= 1u << dt;
    }
    return FZ_OK;
}

int cz_tensor_index(const cz_constraints *cz, const char *name)
{
    for (int i = 0; i < cz->ntensors; i++)
        if (name && !strcmp(cz->tensors[i].name, name)) return i;
    return -1;
}

int cz_param_index(const cz_constraints *cz, const char *name)
{
    for (int i = 0; i < cz->nparams; i++)
        if (name && !strcmp(cz->params[i].name, name)) return i;
    return -1;
}

fz_status cz_tensor_ref(ld *L, const cz_constraints *cz, const cJSON *it, const char *p, int *out)
{
    if (!cJSON_IsString(it) || (*out = cz_tensor_index(cz, it->valuestring)) < 0)
        return cz_failf(L, p, "the name of a tensor declared in \"tensors\"");
    return FZ_OK;
}

fz_status cz_param_ref(ld *L, const cz_constraints *cz, const cJSON *it, const char *p, int *out)
{
    if (!cJSON_IsString(it) || (*out = cz_param_index(cz, it->valuestring)) < 0)
        return cz_failf(L, p, "the name of a parameter declared in \"params\"");
    return FZ_OK;
}

fz_status cz_tensor_member(ld *L, const cz_constraints *cz, const cJSON *obj, const char *path,
                               const char *key, int *out)
{
    const cJSON *it;
    char p[PATHLEN];
    cz_sub(p, path, key);
    TRY(cz_member(L, obj, path, key, true, &it));
    return cz_tensor_ref(L, cz, it, p, out);
}

/* ---------------------------------------------------------------- sections ---- */
/* tensors[i].dims: per-dimension limits [{"dim", "max"}] (q: the path of "dims"). */
static fz_status load_dim_limits(ld *L, cz_tensor *ct, const cJSON *dims, const char *q)
{
    int nd = 0;
    TRY(cz_as_array(L, dims, q, 4, &nd));
    ct->ndims = nd;
    for (int k = 0; k < nd; k++) {
        char pk[PATHLEN], pd[PATHLEN];
        const cJSON *d = cJSON_GetArrayItem(dims, k), *v;
        cz_idx(pk, q, k);
        if (!cJSON_IsObject(d)) return cz_failf(L, pk, "an object {\"dim\", \"max\"}");
        int64_t x = 0;
        TRY(cz_member(L, d, pk, "dim", true, &v));
        cz_sub(pd, pk, "dim");
        TRY(cz_as_int(L, v, pd, 0, ct->rank_max - 1, &x));
        ct->dim_idx[k] = (int)x;
        TRY(cz_member(L, d, pk, "max", true, &v));
        cz_sub(pd, pk, "max");
        TRY(cz_as_int(L, v, pd, 0, 1 << 30, &ct->dim_max[k]));
    }
    return FZ_OK;
}

/* tensors[i]: a unique name, its role, dtypes, rank range and dim limits. */
static fz_status load_tensor(ld *L, cz_constraints *cz, int i, const cJSON *t, const char *p)
{
    char q[PATHLEN], role[16] = "";
    cz_tensor *ct = &cz->tensors[i];
    if (!cJSON_IsObject(t)) return cz_failf(L, p, "an object");
    TRY(get_str(L, t, p, "name", true, ct->name, sizeof ct->name));
    cz_sub(q, p, "name");
    for (int j = 0; j < i; j++)
        if (!strcmp(cz->tensors[j].name, ct->name)) return cz_failf(L, q, "a name not used by an earlier tensor");
    TRY(get_str(L, t, p, "role", true, role, sizeof role));
    cz_sub(q, p, "role");
    if (!strcmp(role, "output")) ct->output = true;
    else if (strcmp(role, "input")) return cz_failf(L, q, "\"input\" or \"output\"");
    TRY(dtype_list(L, t, p, "dtypes", true, &ct->dtypes));
    int64_t r[2];
    TRY(cz_get_range(L, t, p, "rank", 0, 8, r));
    ct->rank_min = (int)r[0];
    ct->rank_max = (int)r[1];
    const cJSON *dims;
    TRY(cz_member(L, t, p, "dims", false, &dims));
    if (!dims) return FZ_OK;
    cz_sub(q, p, "dims");
    return load_dim_limits(L, ct, dims, q);
}

/* tensors[i].dtype_rel, once every name is known: equal to another tensor's dtype, or the
 * promotion of two; no cycle. */
static fz_status load_dtype_rel(ld *L, cz_constraints *cz, int i, const cJSON *t, const char *p)
{
    char q[PATHLEN], r[PATHLEN];
    const cJSON *rel;
    cz_tensor *ct = &cz->tensors[i];
    TRY(cz_member(L, t, p, "dtype_rel", false, &rel));
    if (!rel || cJSON_IsNull(rel)) return FZ_OK;
    cz_sub(q, p, "dtype_rel");
    const cJSON *eq = cJSON_GetObjectItemCaseSensitive(rel, "equal");
    const cJSON *pr = cJSON_GetObjectItemCaseSensitive(rel, "promote");
    if (cJSON_IsObject(rel) && eq && !pr) {
        cz_sub(r, q, "equal");
        TRY(cz_tensor_ref(L, cz, eq, r, &ct->rel_a));
        if (ct->rel_a == i) return cz_failf(L, r, "another tensor");
        ct->rel = CZ_REL_EQUAL;
    } else if (cJSON_IsObject(rel) && pr && !eq) {
        int m = 0;
        cz_sub(r, q, "promote");
        TRY(cz_as_array(L, pr, r, 2, &m));
        if (m != 2) return cz_failf(L, r, "two tensor names");
        char r0[PATHLEN], r1[PATHLEN];
        cz_idx(r0, r, 0);
        cz_idx(r1, r, 1);
        TRY(cz_tensor_ref(L, cz, cJSON_GetArrayItem(pr, 0), r0, &ct->rel_a));
        TRY(cz_tensor_ref(L, cz, cJSON_GetArrayItem(pr, 1), r1, &ct->rel_b));
        ct->rel = CZ_REL_PROMOTE;
    } else
        return cz_failf(L, q, "{\"equal\": TENSOR} or {\"promote\": [TENSOR, TENSOR]}");
    if (cz->tensors[ct->rel_a].rel != CZ_REL_NONE && cz->tensors[ct->rel_a].rel_a == i) return cz_failf(L, q, "no cycle of relations");
    return FZ_OK;
}

static fz_status load_tensors(ld *L, cz_constraints *cz, const cJSON *root)
{
    const cJSON *arr;
    int n = 0;
    TRY(cz_member(L, root, "", "tensors", true, &arr));
    TRY(cz_as_array(L, arr, "tensors", CF_MAX_TENSORS, &n));
    if (n == 0) return cz_failf(L, "tensors", "at least one tensor");
    cz->ntensors = n;
    char p[PATHLEN];
    for (int i = 0; i < n; i++) {
        cz_idx(p, "tensors", i);
        TRY(load_tensor(L, cz, i, cJSON_GetArrayItem(arr, i), p));
    }
    for (int i = 0; i < n; i++) { /* relations after all names are known */
        cz_idx(p, "tensors", i);
        TRY(load_dtype_rel(L, cz, i, cJSON_GetArrayItem(arr, i), p));
    }
    return FZ_OK;
}

static fz_status load_promotion(ld *L, cz_constraints *cz, const cJSON *root)
{
    const cJSON *pr;
    memset(cz->promotion, -1, sizeof cz->promotion);
    TRY(cz_member(L, root, "", "promotion", false, &pr));
    bool needed = false;
    for (int i = 0; i < cz->ntensors; i++) needed |= cz->tensors[i].rel == CZ_REL_PROMOTE;
    if (!pr) return needed ? cz_failf(L, "promotion", "a promotion table (a tensor uses \"promote\")") : FZ_OK;
    if (!cJSON_IsObject(pr)) return cz_failf(L, "promotion", "an object {DTYPE: {DTYPE: DTYPE}}");
    cz->has_promotion = true;
    const cJSON *row;
    cJSON_ArrayForEach(row, pr)
    {
        char p[PATHLEN];
        cf_dtype a, b, c;
        cz_sub(p, "promotion", row->string);
        if (!cf_dtype_parse(row->string, &a)) return cz_failf(L, p, "a dtype id as key");
        if (!cJSON_IsObject(row)) return cz_failf(L, p, "an object {DTYPE: DTYPE}");
        const cJSON *cell;
        cJSON_ArrayForEach(cell, row)
        {
            char q[PATHLEN];
            cz_sub(q, p, cell->string);
            if (!cf_dtype_parse(cell->string, &b)) return cz_failf(L, q, "a dtype id as key");
            TRY(as_dtype(L, cell, q, &c));
            cz->promotion[a][b] = (int8_t)c;
        }
    }
    for (int a = 0; a < CF_DTYPE_COUNT; a++)
        for (int b = 0; b < CF_DTYPE_COUNT; b++)
            if (cz->promotion[a][b] >= 0 && cz->promotion[b][a] >= 0 &&
                cz->promotion[a][b] != cz->promotion[b][a]) {
                char p[PATHLEN];
                snprintf(p, sizeof p, "promotion.%s.%s", cf_dtype_name((cf_dtype)a), cf_dtype_name((cf_dtype)b));
                return cz_failf(L, p, "a symmetric table (promotion.%s.%s differs)", cf_dtype_name((cf_dtype)b),
                             cf_dtype_name((cf_dtype)a));
            }
    return FZ_OK;
}

int cz_promote(const cz_constraints *cz, cf_dtype a, cf_dtype b)
{
    if ((unsigned)a >= CF_DTYPE_COUNT || (unsigned)b >= CF_DTYPE_COUNT) return -1;
    if (cz->promotion[a][b] >= 0) return cz->promotion[a][b];
    return cz->promotion[b][a];
}

static fz_status load_domain(ld *L, cz_param *cp, const cJSON *dom, const char *p)
{
    int n = 0;
    TRY(cz_as_array(L, dom, p, CZ_MAX_DOMAIN, &n));
    if (n == 0) return cz_failf(L, p, "a non-empty array of domain parts");
    cp->ndomain = n;
    for (int i = 0; i < n; i++) {
        char q[PATHLEN], r[PATHLEN];
        const cJSON *d = cJSON_GetArrayItem(dom, i), *v, *rg;
        cz_domain_part *dp = &cp->domain[i];
        cz_idx(q, p, i);
        if (!cJSON_IsObject(d)) return cz_failf(L, q, "an object {label, weight, values | range}");
        TRY(get_str(L, d, q, "label", true, dp->label, sizeof dp->label));
        dp->weight = 1;
        TRY(cz_get_num(L, d, q, "weight", false, &dp->weight));
        if (dp->weight < 0) {
            cz_sub(r, q, "weight");
            return cz_failf(L, r, "a weight >= 0");
        }
        v = cJSON_GetObjectItemCaseSensitive(d, "values");
        rg = cJSON_GetObjectItemCaseSensitive(d, "range");
        if ((v != NULL) == (rg != NULL)) return cz_failf(L, q, "exactly one of \"values\" and \"range\"");
        if (v) {
            cz_sub(r, q, "values");
            TRY(cz_as_array(L, v, r, CZ_MAX_VALUES, &dp->nvalues));
            if (dp->nvalues == 0) return cz_failf(L, r, "a non-empty array");
            for (int k = 0; k < dp->nvalues; k++) {
                char s[PATHLEN];
                cz_idx(s, r, k);
                TRY(num_special(L, cJSON_GetArrayItem(v, k), s, &dp->values[k]));
            }
        } else {
            int m = 0;
            cz_sub(r, q, "range");
            TRY(cz_as_array(L, rg, r, 2, &m));
            if (m != 2) return cz_failf(L, r, "[lo, hi]");
            char s[PATHLEN];
            cz_idx(s, r, 0);
            TRY(num_special(L, cJSON_GetArrayItem(rg, 0), s, &dp->lo));
            cz_idx(s, r, 1);
            TRY(num_special(L, cJSON_GetArrayItem(rg, 1), s, &dp->hi));
            if (!isfinite(dp->lo) || !isfinite(dp->hi) || dp->lo > dp->hi) return cz_failf(L, r, "finite lo <= hi");
            dp->is_range = true;
            const cJSON *lg = cJSON_GetObjectItemCaseSensitive(d, "log");
            if (lg) {
                cz_sub(s, q, "log");
                if (!cJSON_IsBool(lg)) return cz_failf(L, s, "true or false");
                dp->log = cJSON_IsTrue(lg);
                if (dp->log && !((dp->lo > 0) || (dp->hi < 0)))
                    return cz_failf(L, r, "a range of one sign excluding 0 (\"log\": true)");
            }
        }
    }
    return FZ_OK;
}

static const char *const kind_names[] = {"f64", "bool", "int", "string", "intarray", "scalar"};

static fz_status load_params(ld *L, cz_constraints *cz, const cJSON *root)
{
    const cJSON *arr;
    int n = 0;
    TRY(cz_member(L, root, "", "params", true, &arr));
    TRY(cz_as_array(L, arr, "params", CF_MAX_PARAMS, &n));
    cz->nparams = n;
    for (int i = 0; i < n; i++) {
        char p[PATHLEN], q[PATHLEN];
        char kind[16] = "";
        const cJSON *t = cJSON_GetArrayItem(arr, i), *it;
        cz_param *cp = &cz->params[i];
        cz_idx(p, "params", i);
        if (!cJSON_IsObject(t)) return cz_failf(L, p, "an object");
        TRY(get_str(L, t, p, "name", true, cp->name, sizeof cp->name));
        for (int j = 0; j < i; j++)
            if (!strcmp(cz->params[j].name, cp->name)) {
                cz_sub(q, p, "name");
                return cz_failf(L, q, "a name not used by an earlier parameter");
            }
        TRY(get_str(L, t, p, "kind", true, kind, sizeof kind));
        cz_sub(q, p, "kind");
        int k = -1;
        for (int j = 0; j < 6; j++)
            if (!strcmp(kind, kind_names[j])) k = j;
        if (k < 0) return cz_failf(L, q, "one of f64 bool int string intarray scalar");
        cp->kind = (cf_param_kind)k;
        TRY(cz_member(L, t, p, "nullable", false, &it));
        if (it) {
            cz_sub(q, p, "nullable");
            if (!cJSON_IsBool(it)) return cz_failf(L, q, "true or false");
            cp->nullable = cJSON_IsTrue(it);
        }
        TRY(cz_member(L, t, p, "derived", false, &it));
        if (it) {
            cz_sub(q, p, "derived");
            if (!cJSON_IsBool(it)) return cz_failf(L, q, "true or false");
            cp->derived = cJSON_IsTrue(it);
        }
        const cJSON *dom, *valid;
        TRY(cz_member(L, t, p, "domain", false, &dom));
        TRY(cz_member(L, t, p, "valid", false, &valid));
        if (cp->kind == CF_PARAM_SCALAR) TRY(dtype_list(L, t, p, "scalar_dtypes", true, &cp->scalar_dtypes));
        if (cp->derived) continue;
        if (cp->kind == CF_PARAM_F64 || cp->kind == CF_PARAM_SCALAR) {
            cz_sub(q, p, "domain");
            if (!dom) return cz_failf(L, q, "a domain (a %s parameter that is not derived)", kind);
            TRY(load_domain(L, cp, dom, q));
        } else if (cp->kind == CF_PARAM_INTARRAY) {
            cz_sub(q, p, "derived");
            return cz_failf(L, q, "true (an intarray is derived by the shape model)");
        } else {
            cz_sub(q, p, "valid");
            if (!valid) return cz_failf(L, q, "the list of valid values");
            TRY(cz_as_array(L, valid, q, CZ_MAX_VALID, &cp->nvalid));
            if (cp->nvalid == 0) return cz_failf(L, q, "a non-empty array");
            for (int j = 0; j < cp->nvalid; j++) {
                char r[PATHLEN];
                const cJSON *v = cJSON_GetArrayItem(valid, j);
                cz_idx(r, q, j);
                if (cp->kind == CF_PARAM_STRING) {
                    if (!cJSON_IsString(v) || strlen(v->valuestring) >= CZ_STR) return cz_failf(L, r, "a short string");
                    strcpy(cp->valid_str[j], v->valuestring);
                } else if (cp->kind == CF_PARAM_BOOL) {
                    if (!cJSON_IsBool(v)) return cz_failf(L, r, "true or false");
                    cp->valid_int[j] = cJSON_IsTrue(v);
                } else
                    TRY(cz_as_int(L, v, r, INT32_MIN, INT32_MAX, &cp->valid_int[j]));
            }
        }
    }
    return FZ_OK;
}

/* obj.key: the names of two tensors, into out[0], out[1]. */
fz_status cz_tensor_pair(ld *L, const cz_constraints *cz, const cJSON *obj, const char *path, const char *key, int out[2])
{
    const cJSON *it;
    char q[PATHLEN];
    TRY(cz_member(L, obj, path, key, true, &it));
    cz_sub(q, path, key);
    int n = 0;
    TRY(cz_as_array(L, it, q, 2, &n));
    if (n != 2) return cz_failf(L, q, "two tensor names");
    for (int i = 0; i < 2; i++) {
        char r[PATHLEN];
        cz_idx(r, q, i);
        TRY(cz_tensor_ref(L, cz, cJSON_GetArrayItem(it, i), r, &out[i]));
    }
    return FZ_OK;
}

/* obj.key: a list of dims 0..3, as a bit mask (bit d). */
fz_status cz_dims_mask(ld *L, const cJSON *obj, const char *path, const char *key, unsigned *mask)
{
    const cJSON *it;
    char q[PATHLEN];
    TRY(cz_member(L, obj, path, key, true, &it));
    cz_sub(q, path, key);
    int n = 0;
    TRY(cz_as_array(L, it, q, 4, &n));
    for (int i = 0; i < n; i++) {
        char r[PATHLEN];
        int64_t d = 0;
        cz_idx(r, q, i);
        TRY(cz_as_int(L, cJSON_GetArrayItem(it, i), r, 0, 3, &d));
        *mask |= 1u << d;
    }
    return FZ_OK;
}

/* A model's "tensors" (model.h); the models' own fields are theirs (fuzz/model_<id>.c). */
fz_status cz_model_tensors(ld *L, cz_constraints *cz, const cJSON *m, const char *p)
{
    cz_model *cm = &cz->model;
    const cJSON *it;
    char q[PATHLEN];
    TRY(cz_member(L, m, p, "tensors", true, &it));
    cz_sub(q, p, "tensors");
    TRY(cz_as_array(L, it, q, CF_MAX_TENSORS, &cm->ntensors));
    if (cm->ntensors == 0) return cz_failf(L, q, "a non-empty array");
    for (int i = 0; i < cm->ntensors; i++) {
        char r[PATHLEN];
        cz_idx(r, q, i);
        TRY(cz_tensor_ref(L, cz, cJSON_GetArrayItem(it, i), r, &cm->tensors[i]));
    }
    return FZ_OK;
}

static fz_status load_model(ld *L, cz_constraints *cz, const cJSON *root)
{
    const cJSON *m;
    char kind[24] = "";
    const char *p = "shape_model";
    TRY(cz_member(L, root, "", p, true, &m));
    if (!cJSON_IsObject(m)) return cz_failf(L, p, "an object");
    TRY(get_str(L, m, p, "kind", true, kind, sizeof kind));
    cz->model.kind = fz_model_find(kind);
    if (cz->model.kind == CZ_MODEL_COUNT) {
        int n;
        const char *kinds = fz_model_kinds(&n);
        return cz_failf(L, "shape_model.kind", "one of %.*s", n, kinds);
    }
    cz->model.self_filled = -1;
    return fz_model_of(cz->model.kind)->load(L, cz, m, p);
}

static fz_status load_formats(ld *L, cz_constraints *cz, const cJSON *root)
{
    const cJSON *f, *it;
    char q[PATHLEN];
    TRY(cz_member(L, root, "", "formats", true, &f));
    if (!cJSON_IsObject(f)) return cz_failf(L, "formats", "an object");
    TRY(cz_member(L, f, "formats", "accepted", true, &it));
    TRY(cz_as_array(L, it, "formats.accepted", CZ_MAX_FORMATS, &cz->nformats));
    for (int i = 0; i < cz->nformats; i++) {
        const cJSON *v = cJSON_GetArrayItem(it, i);
        cz_idx(q, "formats.accepted", i);
        if (!cJSON_IsString(v) || strlen(v->valuestring) >= 16) return cz_failf(L, q, "a format name");
        strcpy(cz->formats[i], v->valuestring);
    }
    if (cz->nformats == 0 || strcmp(cz->formats[0], "ND")) return cz_failf(L, "formats.accepted[0]", "\"ND\"");
    TRY(cz_member(L, f, "formats", "rank", false, &it));
    if (it) {
        const cJSON *e;
        if (!cJSON_IsObject(it)) return cz_failf(L, "formats.rank", "an object {FORMAT: RANK}");
        cJSON_ArrayForEach(e, it)
        {
            int k = -1;
            int64_t r = 0;
            cz_sub(q, "formats.rank", e->string);
            for (int i = 0; i < cz->nformats; i++)
                if (!strcmp(cz->formats[i], e->string)) k = i;
            if (k < 0) return cz_failf(L, q, "a format listed in formats.accepted");
            TRY(cz_as_int(L, e, q, 1, 8, &r));
            cz->format_rank[k] = (int)r;
        }
    }
    TRY(cz_member(L, f, "formats", "rejected", true, &it));
    TRY(cz_as_array(L, it, "formats.rejected", CZ_MAX_FORMATS, &cz->nformats_rejected));
    for (int i = 0; i < cz->nformats_rejected; i++) {
        const cJSON *v = cJSON_GetArrayItem(it, i);
        cz_idx(q, "formats.rejected", i);
        if (!cJSON_IsString(v) || strlen(v->valuestring) >= 16) return cz_failf(L, q, "a format name");
        for (int k = 0; k < cz->nformats; k++)
            if (!strcmp(cz->formats[k], v->valuestring)) return cz_failf(L, q, "a format not in formats.accepted");
        strcpy(cz->formats_rejected[i], v->valuestring);
    }
    return FZ_OK;
}

static fz_status load_edge(ld *L, cz_constraints *cz, const cJSON *e, const char *p, cz_edge *ce)
{
    static const char *const cls[] = {"min_subnormal", "max_subnormal", "min_normal", "max_finite"};
    if (cJSON_IsNumber(e)) {
        ce->kind = CZ_EDGE_LITERAL;
        ce->v = e->valuedouble;
        ce->boundary = true;
        return FZ_OK;
    }
    if (cJSON_IsString(e)) {
        const char *s = e->valuestring;
        bool neg = s[0] == '-';
        for (int i = 0; i < 4; i++)
            if (!strcmp(s + neg, cls[i])) {
                ce->kind = CZ_EDGE_CLASS;
                ce->cls = (cz_cls)i;
                ce->neg = neg;
                return FZ_OK;
            }
        ce->kind = CZ_EDGE_LITERAL;
        if (num_special(L, e, p, &ce->v) != FZ_OK)
            return cz_failf(L, p, "a number, \"0\" \"-0\" \"inf\" \"-inf\" \"nan\", an edge class "
                               "([-]min_subnormal, max_subnormal, min_normal, max_finite) or an object");
        return FZ_OK;
    }
    if (cJSON_IsObject(e)) {
        char q[PATHLEN];
        const cJSON *pa = cJSON_GetObjectItemCaseSensitive(e, "param");
        const cJSON *dv = cJSON_GetObjectItemCaseSensitive(e, "div");
        ce->boundary = true;
        if (pa) {
            cz_sub(q, p, "param");
            TRY(cz_param_ref(L, cz, pa, q, &ce->pa));
            const cJSON *om = cJSON_GetObjectItemCaseSensitive(e, "one_minus");
            if (om) {
                cz_sub(q, p, "one_minus");
                if (!cJSON_IsBool(om)) return cz_failf(L, q, "true or false");
                ce->one_minus = cJSON_IsTrue(om);
            }
            ce->kind = CZ_EDGE_PARAM;
        } else if (dv) {
            int n = 0;
            cz_sub(q, p, "div");
            TRY(cz_as_array(L, dv, q, 2, &n));
            if (n != 2) return cz_failf(L, q, "[PARAM, PARAM]");
            char r[PATHLEN];
            cz_idx(r, q, 0);
            TRY(cz_param_ref(L, cz, cJSON_GetArrayItem(dv, 0), r, &ce->pa));
            cz_idx(r, q, 1);
            TRY(cz_param_ref(L, cz, cJSON_GetArrayItem(dv, 1), r, &ce->pb));
            ce->kind = CZ_EDGE_DIV;
        } else
            return cz_failf(L, p, "{\"param\": NAME} or {\"div\": [NAME, NAME]}");
        int pis[2] = {ce->pa, ce->kind == CZ_EDGE_DIV ? ce->pb : ce->pa};
        for (int i = 0; i < 2; i++) {
            cf_param_kind k = cz->params[pis[i]].kind;
            if (k != CF_PARAM_F64 && k != CF_PARAM_SCALAR) return cz_failf(L, p, "a reference to an f64 or scalar parameter");
        }
        return FZ_OK;
    }
    return cz_failf(L, p, "an edge value");
}

/* One value distribution (normal, uniform, loguniform) at path r. */
static fz_status load_dist(ld *L, const cJSON *d, const char *r, cz_dist *cd)
{
    char s[PATHLEN], kind[16] = "";
    if (!cJSON_IsObject(d)) return cz_failf(L, r, "an object");
    TRY(get_str(L, d, r, "kind", true, kind, sizeof kind));
    cd->weight = 1;
    TRY(cz_get_num(L, d, r, "weight", false, &cd->weight));
    TRY(dtype_list(L, d, r, "dtypes", false, &cd->dtypes));
    if (!strcmp(kind, "normal")) {
        cd->kind = CZ_DIST_NORMAL;
        TRY(cz_get_num(L, d, r, "scale", true, &cd->a));
        cz_sub(s, r, "scale");
        return cd->a > 0 ? FZ_OK : cz_failf(L, s, "a positive scale");
    }
    if (strcmp(kind, "uniform") && strcmp(kind, "loguniform")) {
        cz_sub(s, r, "kind");
        return cz_failf(L, s, "one of normal, uniform, loguniform");
    }
    cd->kind = kind[0] == 'u' ? CZ_DIST_UNIFORM : CZ_DIST_LOGUNIFORM;
    const cJSON *rg;
    int n = 0;
    TRY(cz_member(L, d, r, "range", true, &rg));
    cz_sub(s, r, "range");
    TRY(cz_as_array(L, rg, s, 2, &n));
    if (n != 2 || !cJSON_IsNumber(cJSON_GetArrayItem(rg, 0)) || !cJSON_IsNumber(cJSON_GetArrayItem(rg, 1)))
        return cz_failf(L, s, "[lo, hi]");
    cd->a = cJSON_GetArrayItem(rg, 0)->valuedouble;
    cd->b = cJSON_GetArrayItem(rg, 1)->valuedouble;
    if (!(cd->a <= cd->b) || (cd->kind == CZ_DIST_LOGUNIFORM && !(cd->a > 0)))
        return cz_failf(L, s, cd->kind == CZ_DIST_LOGUNIFORM ? "0 < lo <= hi" : "lo <= hi");
    const cJSON *pos = cJSON_GetObjectItemCaseSensitive(d, "positive");
    if (pos) {
        cz_sub(s, r, "positive");
        if (!cJSON_IsBool(pos) || cd->kind != CZ_DIST_LOGUNIFORM) return cz_failf(L, s, "true or false, on a loguniform dist only");
        cd->positive = cJSON_IsTrue(pos);
    }
    return FZ_OK;
}

/* values[i]: an input tensor (once), its dists, edges, ulp_neighbours and edge_rate. */
static fz_status load_values_entry(ld *L, cz_constraints *cz, int i, const cJSON *v, const char *p)
{
    char q[PATHLEN];
    const cJSON *it;
    cz_values *cv = &cz->values[i];
    if (!cJSON_IsObject(v)) return cz_failf(L, p, "an object");
    TRY(cz_tensor_member(L, cz, v, p, "tensor", &cv->tensor));
    cz_sub(q, p, "tensor");
    if (cz->tensors[cv->tensor].output) return cz_failf(L, q, "an input tensor");
    TRY(cz_member(L, v, p, "dists", true, &it));
    cz_sub(q, p, "dists");
    TRY(cz_as_array(L, it, q, CZ_MAX_DISTS, &cv->ndists));
    if (cv->ndists == 0) return cz_failf(L, q, "a non-empty array");
    for (int k = 0; k < cv->ndists; k++) {
        char r[PATHLEN];
        cz_idx(r, q, k);
        TRY(load_dist(L, cJSON_GetArrayItem(it, k), r, &cv->dists[k]));
    }
    TRY(cz_member(L, v, p, "edges", true, &it));
    cz_sub(q, p, "edges");
    TRY(cz_as_array(L, it, q, CZ_MAX_EDGES, &cv->nedges));
    for (int k = 0; k < cv->nedges; k++) {
        char r[PATHLEN];
        cz_idx(r, q, k);
        TRY(load_edge(L, cz, cJSON_GetArrayItem(it, k), r, &cv->edges[k]));
    }
    double un = 0;
    TRY(cz_get_num(L, v, p, "ulp_neighbours", false, &un));
    cz_sub(q, p, "ulp_neighbours");
    if (un < 0 || un > 16 || un != floor(un)) return cz_failf(L, q, "an integer in [0, 16]");
    cv->ulp_neighbours = (int)un;
    cv->edge_rate = -1;
    TRY(cz_get_num(L, v, p, "edge_rate", false, &cv->edge_rate));
    cz_sub(q, p, "edge_rate");
    if (cJSON_GetObjectItemCaseSensitive(v, "edge_rate") && !(cv->edge_rate >= 0 && cv->edge_rate <= 1))
        return cz_failf(L, q, "a number in [0, 1]");
    cz_sub(q, p, "tensor");
    for (int k = 0; k < i; k++)
        if (cz->values[k].tensor == cv->tensor) return cz_failf(L, q, "a tensor without an earlier values entry");
    return FZ_OK;
}

static fz_status load_values(ld *L, cz_constraints *cz, const cJSON *root)
{
    const cJSON *arr;
    TRY(cz_member(L, root, "", "values", true, &arr));
    TRY(cz_as_array(L, arr, "values", CF_MAX_TENSORS, &cz->nvalues));
    for (int i = 0; i < cz->nvalues; i++) {
        char p[PATHLEN];
        cz_idx(p, "values", i);
        TRY(load_values_entry(L, cz, i, cJSON_GetArrayItem(arr, i), p));
    }
    for (int t = 0; t < cz->ntensors; t++) { /* every input has an entry (the softmax mask draws its own) */
        bool has = false;
        for (int k = 0; k < cz->nvalues; k++) has |= cz->values[k].tensor == t;
        bool need = !cz->tensors[t].output && t != cz->model.self_filled;
        if (need && !has) return cz_failf(L, "values", "an entry for input tensor \"%s\"", cz->tensors[t].name);
    }
    return FZ_OK;
}

static const char *const rule_kinds[CZ_RULE_KIND_COUNT] = {
    "null_tensor", "null_param", "dtype_not_allowed", "dtype_relation", "rank_out_of_range",
    "shape_equal", "not_broadcastable", "output_shape", "shape_broadcast_dims", "dim_out_of_range",
    "param_invalid", "output_overlap", "format_not_accepted", "empty_tensor", "nsa_block_multiple",
    "nsa_l_gt_d", "nsa_D_multiple", "nsa_actseqlen", "nsa_C", "nsa_dims", "null_data"};

static bool kind_targets_params(cz_rule_kind k) { return k == CZ_RULE_NULL_PARAM || k == CZ_RULE_PARAM_INVALID; }

/* "values" of a rule: break values, interpreted by kind (and by the target for params). */
static fz_status load_rule_values(ld *L, const cz_constraints *cz, const cz_rule *r, const cJSON *v,
                                  const char *p, cz_rule *dst)
{
    int n = 0;
    TRY(cz_as_array(L, v, p, CZ_MAX_VALID, &n));
    if (n == 0) return cz_failf(L, p, "a non-empty array");
    dst->nvalues = n;
    dst->value_dtypes = 0;
    for (int i = 0; i < n; i++) {
        char q[PATHLEN];
        const cJSON *e = cJSON_GetArrayItem(v, i);
        cz_idx(q, p, i);
        if (r->kind == CZ_RULE_DTYPE_NOT_ALLOWED) {
            cf_dtype dt;
            TRY(as_dtype(L, e, q, &dt));
            for (int t = 0; t < r->ntargets; t++)
                if (cz->tensors[r->targets[t]].dtypes & (1u << dt))
                    return cz_failf(L, q, "a dtype not allowed for \"%s\"", cz->tensors[r->targets[t]].name);
            dst->value_dtypes |= 1u << dt;
        } else if (r->kind == CZ_RULE_PARAM_INVALID) {
            const cz_param *cp = &cz->params[r->targets[0]];
            if (cp->kind == CF_PARAM_STRING) {
                if (!cJSON_IsString(e) || strlen(e->valuestring) >= CZ_STR) return cz_failf(L, q, "a short string");
                for (int k = 0; k < cp->nvalid; k++)
                    if (!strcmp(cp->valid_str[k], e->valuestring)) return cz_failf(L, q, "a value not in the parameter's \"valid\" list");
                strcpy(dst->value_str[i], e->valuestring);
            } else if (cp->kind == CF_PARAM_BOOL) {
                if (!cJSON_IsBool(e)) return cz_failf(L, q, "true or false");
                dst->value_int[i] = cJSON_IsTrue(e);
                for (int k = 0; k < cp->nvalid; k++)
                    if (cp->valid_int[k] == dst->value_int[i]) return cz_failf(L, q, "a value not in the parameter's \"valid\" list");
            } else {
                TRY(cz_as_int(L, e, q, INT32_MIN, INT32_MAX, &dst->value_int[i]));
                for (int k = 0; k < cp->nvalid; k++)
                    if (cp->valid_int[k] == dst->value_int[i]) return cz_failf(L, q, "a value not in the parameter's \"valid\" list");
            }
        } else
            return cz_failf(L, p, "no \"values\" for a rule of kind %s", rule_kinds[r->kind]);
    }
    return FZ_OK;
}

/* A rule's name (unique), kind and status. */
static fz_status load_rule_head(ld *L, cz_constraints *cz, int i, const cJSON *r, const char *p, char *kind, size_t kcap)
{
    cz_rule *cr = &cz->rules[i];
    char q[PATHLEN];
    const cJSON *it;
    TRY(get_str(L, r, p, "name", true, cr->name, sizeof cr->name));
    for (int j = 0; j < i; j++)
        if (!strcmp(cz->rules[j].name, cr->name)) {
            cz_sub(q, p, "name");
            return cz_failf(L, q, "a rule name not used by an earlier rule");
        }
    TRY(get_str(L, r, p, "kind", true, kind, kcap));
    int k = -1;
    for (int j = 0; j < CZ_RULE_KIND_COUNT; j++)
        if (!strcmp(kind, rule_kinds[j])) k = j;
    cz_sub(q, p, "kind");
    if (k < 0) return cz_failf(L, q, "a known rule kind (constraints/SCHEMA.md), not \"%s\"", kind);
    cr->kind = (cz_rule_kind)k;
    /* a rule about one model's shapes (no generic breaker) needs that model */
    const fz_model *M = fz_model_of(cz->model.kind);
    if (!fz_rule_generic(cr->kind) && !M->brk[cr->kind]) {
        for (int j = 0; j < CZ_MODEL_COUNT; j++)
            if (fz_model_of((cz_model_kind)j)->brk[cr->kind])
                return cz_failf(L, q, "a kind the shape model breaks: %s is a rule of the %s model", kind, fz_model_name((cz_model_kind)j));
        return cz_failf(L, q, "a kind the shape model breaks: no model breaks %s", kind);
    }
    int64_t st = 0;
    TRY(cz_member(L, r, p, "status", true, &it));
    cz_sub(q, p, "status");
    TRY(cz_as_int(L, it, q, 1, INT32_MAX, &st));
    cr->status = (int32_t)st;
    return FZ_OK;
}

/* The rule's targets: params or tensors by kind, each fit for the kind; how many the kind takes. */
static fz_status load_rule_targets(ld *L, cz_constraints *cz, cz_rule *cr, const cJSON *it, const char *q, const char *kind)
{
    TRY(cz_as_array(L, it, q, CF_MAX_TENSORS, &cr->ntargets));
    if (cr->ntargets == 0) return cz_failf(L, q, "a non-empty array");
    for (int j = 0; j < cr->ntargets; j++) {
        char s[PATHLEN];
        cz_idx(s, q, j);
        if (kind_targets_params(cr->kind)) {
            TRY(cz_param_ref(L, cz, cJSON_GetArrayItem(it, j), s, &cr->targets[j]));
            const cz_param *cp = &cz->params[cr->targets[j]];
            if (cr->kind == CZ_RULE_NULL_PARAM && cp->nullable) return cz_failf(L, s, "a parameter that is not nullable");
            if (cr->kind == CZ_RULE_PARAM_INVALID &&
                (cp->nvalid == 0 || (cp->kind != CF_PARAM_STRING && cp->kind != CF_PARAM_INT && cp->kind != CF_PARAM_BOOL)))
                return cz_failf(L, s, "a string, int or bool parameter with a \"valid\" list");
        } else {
            TRY(cz_tensor_ref(L, cz, cJSON_GetArrayItem(it, j), s, &cr->targets[j]));
            const cz_tensor *ct = &cz->tensors[cr->targets[j]];
            if (cr->kind == CZ_RULE_OUTPUT_OVERLAP && !ct->output) return cz_failf(L, s, "an output tensor");
            if (cr->kind == CZ_RULE_DTYPE_RELATION && ct->rel == CZ_REL_NONE) return cz_failf(L, s, "a tensor with a dtype_rel");
            if (cr->kind == CZ_RULE_DIM_OUT_OF_RANGE && ct->ndims == 0) return cz_failf(L, s, "a tensor with \"dims\" limits");
        }
    }
    int need = cr->kind == CZ_RULE_NOT_BROADCASTABLE ? 2 : 1;
    bool single = cr->kind == CZ_RULE_SHAPE_EQUAL || cr->kind == CZ_RULE_OUTPUT_SHAPE || cr->kind == CZ_RULE_SHAPE_BROADCAST_DIMS ||
                  cr->kind == CZ_RULE_PARAM_INVALID || cr->kind == CZ_RULE_NOT_BROADCASTABLE;
    if (single && cr->ntargets != need) return cz_failf(L, q, "exactly %d target(s) for kind %s", need, kind);
    return FZ_OK;
}

/* The shape kinds' own fields: "to", "broadcast_dims", "broadcast_of" (q: the targets path). */
static fz_status load_rule_shape(ld *L, cz_constraints *cz, cz_rule *cr, const cJSON *r, const char *p, const char *q)
{
    if (cr->kind == CZ_RULE_SHAPE_EQUAL || cr->kind == CZ_RULE_SHAPE_BROADCAST_DIMS) {
        TRY(cz_tensor_member(L, cz, r, p, "to", &cr->to));
        if (cr->to == cr->targets[0]) return cz_failf(L, q, "a target other than \"to\"");
    }
    if (cr->kind == CZ_RULE_SHAPE_BROADCAST_DIMS) TRY(cz_dims_mask(L, r, p, "broadcast_dims", &cr->bdims));
    if (cr->kind == CZ_RULE_OUTPUT_SHAPE) TRY(cz_tensor_pair(L, cz, r, p, "broadcast_of", cr->bcast));
    return FZ_OK;
}

static fz_status load_rules(ld *L, cz_constraints *cz, const cJSON *root)
{
    const cJSON *arr;
    TRY(cz_member(L, root, "", "rules", true, &arr));
    TRY(cz_as_array(L, arr, "rules", CZ_MAX_RULES, &cz->nrules));
    for (int i = 0; i < cz->nrules; i++) {
        char p[PATHLEN], q[PATHLEN], kind[32] = "";
        const cJSON *r = cJSON_GetArrayItem(arr, i), *it;
        cz_rule *cr = &cz->rules[i];
        cz_idx(p, "rules", i);
        if (!cJSON_IsObject(r)) return cz_failf(L, p, "an object");
        TRY(load_rule_head(L, cz, i, r, p, kind, sizeof kind));
        bool nsa = cr->kind >= CZ_RULE_NSA_BLOCK_MULTIPLE && cr->kind <= CZ_RULE_NSA_DIMS;
        TRY(cz_member(L, r, p, "targets", !nsa, &it));
        cz_sub(q, p, it ? "targets" : "status");
        if (it) TRY(load_rule_targets(L, cz, cr, it, q, kind));
        TRY(load_rule_shape(L, cz, cr, r, p, q));
        TRY(cz_member(L, r, p, "values", cr->kind == CZ_RULE_PARAM_INVALID, &it));
        if (it) {
            cz_sub(q, p, "values");
            TRY(load_rule_values(L, cz, cr, it, q, cr));
        }
        if (cr->kind == CZ_RULE_FORMAT_NOT_ACCEPTED && cz->nformats_rejected == 0)
            return cz_failf(L, "formats.rejected", "at least one rejected format (rule \"%s\")", cr->name);
    }
    return FZ_OK;
}

static fz_status load_tols(ld *L, const cz_constraints *cz, const cJSON *arr, const char *p, int *n, cz_tol *out)
{
    TRY(cz_as_array(L, arr, p, CZ_MAX_TOL, n));
    for (int i = 0; i < *n; i++) {
        char q[PATHLEN], s[PATHLEN];
        const cJSON *t = cJSON_GetArrayItem(arr, i), *it;
        cz_tol *ct = &out[i];
        cz_idx(q, p, i);
        if (!cJSON_IsObject(t)) return cz_failf(L, q, "an object {dtype, max_ulp, max_scaled_ulp}");
        TRY(cz_member(L, t, q, "dtype", true, &it));
        cz_sub(s, q, "dtype");
        TRY(as_dtype(L, it, s, &ct->dtype));
        if (!(cz->stream_dtypes & (1u << ct->dtype))) return cz_failf(L, s, "a dtype listed in streams.dtypes");
        TRY(get_str(L, t, q, "variant", false, ct->variant, sizeof ct->variant));
        if (ct->variant[0]) {
            bool ok = false;
            for (int v = 0; v < cz->nvariants; v++) ok |= !strcmp(cz->variants[v].name, ct->variant);
            if (!ok) {
                cz_sub(s, q, "variant");
                return cz_failf(L, s, "a variant named in streams.variants");
            }
        }
        TRY(cz_get_num(L, t, q, "max_ulp", true, &ct->max_ulp));
        TRY(cz_get_num(L, t, q, "max_scaled_ulp", true, &ct->max_scaled_ulp));
        if (!(ct->max_ulp > 0)) {
            cz_sub(s, q, "max_ulp");
            return cz_failf(L, s, "a positive number");
        }
        if (!(ct->max_scaled_ulp > 0)) {
            cz_sub(s, q, "max_scaled_ulp");
            return cz_failf(L, s, "a positive number");
        }
        /* numerics.md §7: a scaled bound looser than the ULP bound would let a truncating
         * conversion through wherever m = |r|. */
        if (!cz->reduction && ct->max_scaled_ulp > ct->max_ulp) {
            cz_sub(s, q, "max_scaled_ulp");
            return cz_failf(L, s, "max_scaled_ulp <= max_ulp for an elementwise operator (numerics.md §7)");
        }
        for (int j = 0; j < i; j++)
            if (out[j].dtype == ct->dtype && !strcmp(out[j].variant, ct->variant))
                return cz_failf(L, q, "one entry per (dtype, variant)");
    }
    return FZ_OK;
}

static fz_status load_streams(ld *L, cz_constraints *cz, const cJSON *root)
{
    const cJSON *s, *it;
    TRY(cz_member(L, root, "", "streams", true, &s));
    if (!cJSON_IsObject(s)) return cz_failf(L, "streams", "an object");
    TRY(cz_tensor_member(L, cz, s, "streams", "dtype_of", &cz->stream_tensor));
    TRY(dtype_list(L, s, "streams", "dtypes", true, &cz->stream_dtypes));
    if (cz->stream_dtypes & ~cz->tensors[cz->stream_tensor].dtypes)
        return cz_failf(L, "streams.dtypes", "dtypes allowed for tensor \"%s\"", cz->tensors[cz->stream_tensor].name);
    TRY(cz_member(L, s, "streams", "variants", true, &it));
    TRY(cz_as_array(L, it, "streams.variants", CZ_MAX_VARIANTS, &cz->nvariants));
    if (cz->nvariants == 0) return cz_failf(L, "streams.variants", "at least one variant ({\"name\": \"\", \"params\": {}})");
    for (int i = 0; i < cz->nvariants; i++) {
        char p[PATHLEN], q[PATHLEN];
        const cJSON *v = cJSON_GetArrayItem(it, i), *ps, *e;
        cz_variant *cv = &cz->variants[i];
        cz_idx(p, "streams.variants", i);
        if (!cJSON_IsObject(v)) return cz_failf(L, p, "an object {name, params}");
        TRY(get_str(L, v, p, "name", true, cv->name, sizeof cv->name));
        for (int j = 0; j < i; j++)
            if (!strcmp(cz->variants[j].name, cv->name)) return cz_failf(L, p, "a unique variant name");
        TRY(cz_member(L, v, p, "params", true, &ps));
        cz_sub(q, p, "params");
        if (!cJSON_IsObject(ps)) return cz_failf(L, q, "an object {PARAM: VALUE}");
        cJSON_ArrayForEach(e, ps)
        {
            char r[PATHLEN];
            cz_sub(r, q, e->string);
            int pi = cz_param_index(cz, e->string);
            if (pi < 0 || cz->params[pi].kind != CF_PARAM_STRING) return cz_failf(L, r, "a string parameter name as key");
            if (!cJSON_IsString(e)) return cz_failf(L, r, "a string value");
            bool ok = false;
            for (int k = 0; k < cz->params[pi].nvalid; k++) ok |= !strcmp(cz->params[pi].valid_str[k], e->valuestring);
            if (!ok || strlen(e->valuestring) >= CZ_STR) return cz_failf(L, r, "a value from the parameter's \"valid\" list");
            if (cv->nset >= CF_MAX_PARAMS) return cz_failf(L, q, "at most %d entries", CF_MAX_PARAMS);
            cv->param[cv->nset] = pi;
            strcpy(cv->str[cv->nset], e->valuestring);
            cv->nset++;
        }
    }
    return FZ_OK;
}

static fz_status load_exhaustive(ld *L, cz_constraints *cz, const cJSON *root)
{
    const cJSON *e, *it;
    const char *p = "exhaustive";
    char q[PATHLEN];
    cz_exhaustive *x = &cz->exh;
    TRY(cz_member(L, root, "", p, false, &e));
    if (!e) return FZ_OK;
    if (cz->reduction) return cz_failf(L, p, "no exhaustive section for a reduction");
    if (!cJSON_IsObject(e)) return cz_failf(L, p, "an object");
    cz->has_exhaustive = true;
    TRY(cz_tensor_member(L, cz, e, p, "x", &x->x));
    TRY(cz_tensor_member(L, cz, e, p, "grad", &x->grad));
    if (cz->tensors[x->x].output || cz->tensors[x->grad].output || x->x == x->grad)
        return cz_failf(L, "exhaustive.grad", "two different input tensors for x and grad");
    TRY(cz_member(L, e, p, "chunk", true, &it));
    TRY(cz_as_int(L, it, "exhaustive.chunk", 1, 1 << 16, &x->chunk));
    if (x->chunk & (x->chunk - 1)) return cz_failf(L, "exhaustive.chunk", "a power of two");
    TRY(cz_member(L, e, p, "gradients", true, &it));
    TRY(cz_as_array(L, it, "exhaustive.gradients", CZ_MAX_EXH, &x->ngrad));
    if (x->ngrad == 0) return cz_failf(L, "exhaustive.gradients", "a non-empty array");
    for (int i = 0; i < x->ngrad; i++) {
        cz_idx(q, "exhaustive.gradients", i);
        TRY(num_special(L, cJSON_GetArrayItem(it, i), q, &x->gradients[i]));
    }
    TRY(cz_member(L, e, p, "param_sets", true, &it));
    TRY(cz_as_array(L, it, "exhaustive.param_sets", CZ_MAX_EXH, &x->nsets));
    if (x->nsets == 0) return cz_failf(L, "exhaustive.param_sets", "a non-empty array (use [{}] for none)");
    for (int i = 0; i < x->nsets; i++) {
        const cJSON *set = cJSON_GetArrayItem(it, i), *pv;
        cz_idx(q, "exhaustive.param_sets", i);
        if (!cJSON_IsObject(set)) return cz_failf(L, q, "an object {PARAM: VALUE}");
        cJSON_ArrayForEach(pv, set)
        {
            char r[PATHLEN];
            int n = x->sets[i].n;
            cz_sub(r, q, pv->string);
            int pi = cz_param_index(cz, pv->string);
            if (pi < 0 || (cz->params[pi].kind != CF_PARAM_F64 && cz->params[pi].kind != CF_PARAM_SCALAR))
                return cz_failf(L, r, "an f64 or scalar parameter name as key");
            if (n >= CF_MAX_PARAMS) return cz_failf(L, q, "at most %d entries", CF_MAX_PARAMS);
            x->sets[i].param[n] = pi;
            x->sets[i].dt[n] = CF_F64;
            if (cz->params[pi].kind == CF_PARAM_SCALAR) {
                char s[PATHLEN];
                if (!cJSON_IsObject(pv)) return cz_failf(L, r, "{\"dtype\": DTYPE, \"value\": NUMBER}");
                const cJSON *d = cJSON_GetObjectItemCaseSensitive(pv, "dtype");
                cz_sub(s, r, "dtype");
                if (!d) return cz_failf(L, s, "a member \"dtype\"");
                TRY(as_dtype(L, d, s, &x->sets[i].dt[n]));
                if (!(cz->params[pi].scalar_dtypes & (1u << x->sets[i].dt[n]))) return cz_failf(L, s, "a dtype from scalar_dtypes");
                cz_sub(s, r, "value");
                const cJSON *v = cJSON_GetObjectItemCaseSensitive(pv, "value");
                if (!v) return cz_failf(L, s, "a member \"value\"");
                TRY(num_special(L, v, s, &x->sets[i].v[n]));
            } else
                TRY(num_special(L, pv, r, &x->sets[i].v[n]));
            x->sets[i].n++;
        }
    }
    return FZ_OK;
}

/* One rule's override in profile cp: {status | disabled | values}, e at path r. */
static fz_status load_profile_rule(ld *L, cz_constraints *cz, cz_profile *cp, const cJSON *e, const char *r)
{
    int ri = -1;
    for (int i = 0; i < cz->nrules; i++)
        if (!strcmp(cz->rules[i].name, e->string)) ri = i;
    if (ri < 0) return cz_failf(L, r, "the name of a rule in \"rules\"");
    if (!cJSON_IsObject(e) || !e->child) return cz_failf(L, r, "an object with status, disabled or values");
    const cJSON *f;
    cJSON_ArrayForEach(f, e)
    {
        char s[PATHLEN];
        cz_sub(s, r, f->string);
        if (!strcmp(f->string, "status")) {
            int64_t st = 0;
            TRY(cz_as_int(L, f, s, 1, INT32_MAX, &st));
            cp->status[ri] = (int32_t)st;
        } else if (!strcmp(f->string, "disabled")) {
            if (!cJSON_IsBool(f)) return cz_failf(L, s, "true or false");
            cp->disabled[ri] = cJSON_IsTrue(f);
        } else if (!strcmp(f->string, "values")) {
            cp->has_values[ri] = true;
            TRY(load_rule_values(L, cz, &cz->rules[ri], f, s, &cp->values[ri]));
        } else
            return cz_failf(L, s, "one of status, disabled, values");
    }
    return FZ_OK;
}

/* A profile's "special" flags (it at path q). */
static fz_status load_profile_special(ld *L, cz_profile *cp, const cJSON *it, const char *q)
{
    TRY(cz_as_array(L, it, q, CZ_MAX_SPECIAL, &cp->nspecial));
    for (int i = 0; i < cp->nspecial; i++) {
        char r[PATHLEN];
        const cJSON *v = cJSON_GetArrayItem(it, i);
        cz_idx(r, q, i);
        if (!cJSON_IsString(v) || strlen(v->valuestring) >= CZ_STR) return cz_failf(L, r, "a flag name (string)");
        strcpy(cp->special[i], v->valuestring);
    }
    return FZ_OK;
}

/* One profile block pr (path p) over the spec's statuses: rules, tolerances, special, doc. */
static fz_status load_profile(ld *L, cz_constraints *cz, const cJSON *pr, const char *p)
{
    char q[PATHLEN];
    const cJSON *it, *e;
    if (!strcmp(pr->string, "spec")) return cz_failf(L, p, "no override block for \"spec\" (it is the base)");
    if (strlen(pr->string) >= 16 || !pr->string[0]) return cz_failf(L, p, "a profile name of 1-15 characters");
    if (cz->nprofiles >= CZ_MAX_PROFILES) return cz_failf(L, p, "at most %d profiles", CZ_MAX_PROFILES - 1);
    if (!cJSON_IsObject(pr)) return cz_failf(L, p, "an object");
    cz_profile *cp = &cz->profiles[cz->nprofiles++];
    strcpy(cp->name, pr->string);
    for (int i = 0; i < cz->nrules; i++) cp->status[i] = cz->rules[i].status;
    TRY(cz_member(L, pr, p, "rules", false, &it));
    if (it) {
        cz_sub(q, p, "rules");
        if (!cJSON_IsObject(it)) return cz_failf(L, q, "an object {RULE: {status | disabled | values}}");
        cJSON_ArrayForEach(e, it)
        {
            char r[PATHLEN];
            cz_sub(r, q, e->string);
            TRY(load_profile_rule(L, cz, cp, e, r));
        }
    }
    TRY(cz_member(L, pr, p, "tolerances", false, &it));
    if (it) {
        cz_sub(q, p, "tolerances");
        TRY(load_tols(L, cz, it, q, &cp->ntol, cp->tol));
    }
    TRY(cz_member(L, pr, p, "special", false, &it));
    if (it) {
        cz_sub(q, p, "special");
        TRY(load_profile_special(L, cp, it, q));
    }
    cJSON_ArrayForEach(e, pr)
    {
        if (strcmp(e->string, "rules") && strcmp(e->string, "tolerances") && strcmp(e->string, "special") &&
            strcmp(e->string, "doc")) {
            cz_sub(q, p, e->string);
            return cz_failf(L, q, "only doc, rules, tolerances, special in a profile");
        }
    }
    return FZ_OK;
}

/* profiles[0] is "spec" (the rules' own statuses); the file's blocks override it. */
static fz_status load_profiles(ld *L, cz_constraints *cz, const cJSON *root)
{
    const cJSON *ps, *pr;
    cz->nprofiles = 1;
    strcpy(cz->profiles[0].name, "spec");
    for (int i = 0; i < cz->nrules; i++) cz->profiles[0].status[i] = cz->rules[i].status;
    TRY(cz_member(L, root, "", "profiles", false, &ps));
    if (!ps) return FZ_OK;
    if (!cJSON_IsObject(ps)) return cz_failf(L, "profiles", "an object {PROFILE: OVERRIDES}");
    cJSON_ArrayForEach(pr, ps)
    {
        char p[PATHLEN];
        cz_sub(p, "profiles", pr->string);
        TRY(load_profile(L, cz, pr, p));
    }
    return FZ_OK;
}

static fz_status only_keys(ld *L, const cJSON *obj, const char *path, const char *const *keys, const char *list)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, obj)
    {
        bool ok = false;
        for (int i = 0; keys[i]; i++) ok |= !strcmp(e->string, keys[i]);
        if (!ok) {
            char q[PATHLEN];
            cz_sub(q, path, e->string);
            return cz_failf(L, q, "only %s in %s", list, path);
        }
    }
    return FZ_OK;
}

/* "report": {"plot": {"x", "scale"?, "label"?}, "marks"?: [{"at", "label"}], "scaled_reason"?} */
static fz_status load_report(ld *L, cz_constraints *cz, const cJSON *root)
{
    const cJSON *rp, *pl, *mk, *it;
    cz_report *r = &cz->report;
    TRY(cz_member(L, root, "", "report", false, &rp));
    if (!rp) return FZ_OK;
    if (!cJSON_IsObject(rp)) return cz_failf(L, "report", "an object");
    static const char *const rkeys[] = {"plot", "marks", "scaled_reason", "doc", NULL};
    TRY(only_keys(L, rp, "report", rkeys, "plot, marks, scaled_reason, doc"));
    TRY(get_str(L, rp, "report", "scaled_reason", false, r->scaled_reason, sizeof r->scaled_reason));
    TRY(cz_member(L, rp, "report", "plot", true, &pl));
    if (!cJSON_IsObject(pl)) return cz_failf(L, "report.plot", "an object");
    static const char *const pkeys[] = {"x", "scale", "label", NULL};
    TRY(only_keys(L, pl, "report.plot", pkeys, "x, scale, label"));
    TRY(get_str(L, pl, "report.plot", "x", true, r->x, sizeof r->x));
    TRY(get_str(L, pl, "report.plot", "scale", false, r->scale, sizeof r->scale));
    TRY(get_str(L, pl, "report.plot", "label", false, r->label, sizeof r->label));
    int t = cz_tensor_index(cz, r->x);
    if (strcmp(r->x, "cancellation") && (t < 0 || cz->tensors[t].output))
        return cz_failf(L, "report.plot.x", "an input tensor or \"cancellation\", not \"%s\"", r->x);
    if (r->scale[0]) {
        int pi = cz_param_index(cz, r->scale);
        if (pi < 0 || (cz->params[pi].kind != CF_PARAM_SCALAR && cz->params[pi].kind != CF_PARAM_F64))
            return cz_failf(L, "report.plot.scale", "a scalar or f64 attribute, not \"%s\"", r->scale);
    }
    TRY(cz_member(L, rp, "report", "marks", false, &mk));
    if (!mk) return FZ_OK;
    TRY(cz_as_array(L, mk, "report.marks", CZ_MAX_MARKS, &r->nmarks));
    int i = 0;
    cJSON_ArrayForEach(it, mk)
    {
        char q[PATHLEN];
        cz_idx(q, "report.marks", i);
        if (!cJSON_IsObject(it)) return cz_failf(L, q, "an object {at, label}");
        static const char *const mkeys[] = {"at", "label", NULL};
        TRY(only_keys(L, it, q, mkeys, "at, label"));
        TRY(cz_get_num(L, it, q, "at", true, &r->mark_at[i]));
        TRY(get_str(L, it, q, "label", true, r->mark_label[i], sizeof r->mark_label[0]));
        i++;
    }
    return FZ_OK;
}

const cz_report *cz_report_of(const cz_constraints *cz) { return &cz->report; }

_Static_assert(CF_DTYPE_COUNT * CZ_MAX_VARIANTS <= FZ_MAX_STREAMS_PER_OP, "fz_streams of one operator fit FZ_MAX_STREAMS_PER_OP");

static fz_status load_root(ld *L, cz_constraints *cz, const cJSON *root)
{
    const cJSON *it;
    char name[40] = "", cls[16] = "";
    if (!cJSON_IsObject(root)) return cz_failf(L, "", "a JSON object");
    TRY(cz_member(L, root, "", "schema", true, &it));
    if (!cJSON_IsNumber(it) || it->valuedouble != 1) return cz_failf(L, "schema", "1");
    TRY(get_str(L, root, "", "op", true, name, sizeof name));
    if (!cf_op_parse(name, &cz->op)) return cz_failf(L, "op", "an operator id of common/ops.def, not \"%s\"", name);
    TRY(get_str(L, root, "", "class", true, cls, sizeof cls));
    if (!strcmp(cls, "reduction")) cz->reduction = true;
    else if (strcmp(cls, "elementwise")) return cz_failf(L, "class", "\"elementwise\" or \"reduction\"");
    TRY(load_tensors(L, cz, root));
    TRY(load_promotion(L, cz, root));
    TRY(load_params(L, cz, root));
    TRY(load_model(L, cz, root));
    TRY(load_formats(L, cz, root));
    TRY(load_values(L, cz, root));
    TRY(load_rules(L, cz, root));
    TRY(load_streams(L, cz, root));
    TRY(cz_member(L, root, "", "tolerances", true, &it));
    TRY(load_tols(L, cz, it, "tolerances", &cz->ntol, cz->tol));
    for (int d = 0; d < CF_DTYPE_COUNT; d++) {
        if (!(cz->stream_dtypes & (1u << d))) continue;
        bool ok = false;
        for (int i = 0; i < cz->ntol; i++) ok |= cz->tol[i].dtype == (cf_dtype)d && !cz->tol[i].variant[0];
        if (!ok) return cz_failf(L, "tolerances", "an entry without variant for stream dtype %s", cf_dtype_name((cf_dtype)d));
    }
    TRY(load_exhaustive(L, cz, root));
    TRY(load_profiles(L, cz, root));
    TRY(load_report(L, cz, root));
    return FZ_OK;
}

/* ---------------------------------------------------------------- public ---- */
fz_status cz_load(const char *path, cz_constraints **out, char *err, size_t errlen)
{
    ld L = {path ? path : "(null)", err, errlen};
    if (err && errlen) err[0] = 0;
    if (!out) return FZ_ERR_ARG;
    *out = NULL;
    if (!path) {
        snprintf(err ? err : (char[1]){0}, err ? errlen : 1, "(null): no path given");
        return FZ_ERR_ARG;
    }
    char *buf;
    size_t len;
    int rc = cf_slurp(path, (size_t)64 << 20, &buf, &len);
    if (rc == ENOMEM) {
        if (err) snprintf(err, errlen, "%s: out of memory", path);
        return FZ_ERR_NOMEM;
    }
    if (rc) {
        if (err) snprintf(err, errlen, "%s: %s%s%s", path, rc == EFBIG ? "read error or file larger than 64 MiB" : "cannot open",
                              rc == EFBIG ? "" : ": ", rc == EFBIG ? "" : strerror(rc));
        return FZ_ERR_IO;
    }
    fz_status st = FZ_OK;
    const char *end = NULL;
    cJSON *root = strlen(buf) == len ? cJSON_ParseWithOpts(buf, &end, true) : NULL;
    if (!root) {
        size_t off = end && end >= buf ? (size_t)(end - buf) : 0;
        size_t line = 1;
        for (size_t i = 0; i < off && i < len; i++) line += buf[i] == '\n';
        if (err) snprintf(err, errlen, "%s: line %zu (byte %zu): expected valid JSON", path, line, off);
        free(buf);
        return FZ_ERR_PARSE;
    }
    free(buf);
    cz_constraints *cz = calloc(1, sizeof *cz);
    if (!cz) {
        cJSON_Delete(root);
        if (err) snprintf(err, errlen, "%s: out of memory", path);
        return FZ_ERR_NOMEM;
    }
    snprintf(cz->path, sizeof cz->path, "%s", path);
    st = load_root(&L, cz, root);
    cJSON_Delete(root);
    if (st != FZ_OK) {
        cz_free(cz);
        return st;
    }
    *out = cz;
    return FZ_OK;
}

fz_status cz_load_dir(const char *dir, cz_constraints *out[CF_OP_COUNT], char *err, size_t errlen)
{
    for (int i = 0; i < CF_OP_COUNT; i++) out[i] = NULL;
    for (int i = 0; i < CF_OP_COUNT; i++) {
        char path[600];
        snprintf(path, sizeof path, "%s/%s.json", dir ? dir : ".", cf_op_name((cf_op)i));
        fz_status st = cz_load(path, &out[i], err, errlen);
        if (st == FZ_OK && cz_op(out[i]) != (cf_op)i) {
            if (err) snprintf(err, errlen, "%s: op: expected \"%s\" (the file name)", path, cf_op_name((cf_op)i));
            st = FZ_ERR_SCHEMA;
        }
        if (st != FZ_OK) {
            for (int j = 0; j <= i; j++) {
                cz_free(out[j]);
                out[j] = NULL;
            }
            return st;
        }
    }
    return FZ_OK;
}

void cz_free(cz_constraints *cz)
{
    if (cz) free(cz->model.priv);
    free(cz);
}
cf_op cz_op(const cz_constraints *cz) { return cz->op; }
const char *cz_path(const cz_constraints *cz) { return cz->path; }
const char *cz_op_class(const cz_constraints *cz) { return cz->reduction ? "reduction" : "elementwise"; }
int cz_profile_count(const cz_constraints *cz) { return cz->nprofiles; }
const char *cz_profile_name(const cz_constraints *cz, int i)
{
    return i >= 0 && i < cz->nprofiles ? cz->profiles[i].name : NULL;
}

const cz_profile *cz_profile_get(const cz_constraints *cz, const char *profile)
{
    if (!profile || !profile[0]) return &cz->profiles[0];
    for (int i = 0; i < cz->nprofiles; i++)
        if (!strcmp(cz->profiles[i].name, profile)) return &cz->profiles[i];
    return NULL;
}

bool cz_has_profile(const cz_constraints *cz, const char *profile) { return cz_profile_get(cz, profile) != NULL; }

static const cz_tol *find_tol(const cz_tol *t, int n, cf_dtype dt, const char *variant, bool exact)
{
    for (int i = 0; i < n; i++)
        if (t[i].dtype == dt && (exact ? !strcmp(t[i].variant, variant) : !t[i].variant[0])) return &t[i];
    return NULL;
}

fz_status cz_tolerance(const cz_constraints *cz, const char *profile, cf_dtype out_dtype, const char *variant,
                       double *max_ulp, double *max_scaled_ulp)
{
    const cz_profile *p = cz_profile_get(cz, profile);
    if (!p) return FZ_ERR_ARG;
    if (!variant) variant = "";
    const cz_tol *t = NULL;
    if (variant[0]) t = find_tol(p->tol, p->ntol, out_dtype, variant, true);
    if (!t) t = find_tol(p->tol, p->ntol, out_dtype, variant, false);
    if (!t && variant[0]) t = find_tol(cz->tol, cz->ntol, out_dtype, variant, true);
    if (!t) t = find_tol(cz->tol, cz->ntol, out_dtype, variant, false);
    if (!t) return FZ_ERR_ARG;
    if (max_ulp) *max_ulp = t->max_ulp;
    if (max_scaled_ulp) *max_scaled_ulp = t->max_scaled_ulp;
    return FZ_OK;
}

bool cz_special(const cz_constraints *cz, const char *profile, const char *flag)
{
    const cz_profile *p = cz_profile_get(cz, profile);
    if (!p || !flag) return false;
    for (int i = 0; i < p->nspecial; i++)
        if (!strcmp(p->special[i], flag)) return true;
    return false;
}

int cz_special_count(const cz_constraints *cz, const char *profile)
{
    const cz_profile *p = cz_profile_get(cz, profile);
    return p ? p->nspecial : 0;
}

const char *cz_special_name(const cz_constraints *cz, const char *profile, int i)
{
    const cz_profile *p = cz_profile_get(cz, profile);
    return p && i >= 0 && i < p->nspecial ? p->special[i] : NULL;
}

const char *fz_status_name(fz_status s)
{
    static const char *const n[] = {"ok", "io error", "parse error", "schema error", "bad argument", "out of memory",
                                    "generation failed"};
    return (unsigned)s < sizeof n / sizeof n[0] ? n[s] : "?";
}
