/* An independent validator for generated cases, written from the constraint JSON itself (read
 * here with cJSON, not through fuzz/'s loader): it evaluates every rule of the file as a
 * predicate on a cf_case.  Shared by the fuzz tests; not part of the library. */
#ifndef TEST_FUZZ_VALIDATOR_H
#define TEST_FUZZ_VALIDATOR_H

#include <cjson/cJSON.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "case.h"

static cJSON *v_load(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    static char buf[1 << 17];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return cJSON_Parse(buf);
}

static const cJSON *v_get(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

static const cJSON *v_tensor_decl(const cJSON *root, const char *name)
{
    const cJSON *t;
    cJSON_ArrayForEach(t, v_get(root, "tensors")) if (!strcmp(v_get(t, "name")->valuestring, name)) return t;
    return NULL;
}

static const cJSON *v_param_decl(const cJSON *root, const char *name)
{
    const cJSON *t;
    cJSON_ArrayForEach(t, v_get(root, "params")) if (!strcmp(v_get(t, "name")->valuestring, name)) return t;
    return NULL;
}

static bool v_in_strlist(const cJSON *arr, const char *s)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, arr) if (cJSON_IsString(e) && !strcmp(e->valuestring, s)) return true;
    return false;
}

static bool v_dtype_ok(const cJSON *root, const cf_tensor *t)
{
    return v_in_strlist(v_get(v_tensor_decl(root, t->name), "dtypes"), cf_dtype_name(t->dtype));
}

static bool v_rank_ok(const cJSON *root, const cf_tensor *t)
{
    const cJSON *r = v_get(v_tensor_decl(root, t->name), "rank");
    return t->present && t->ndim >= cJSON_GetArrayItem(r, 0)->valueint && t->ndim <= cJSON_GetArrayItem(r, 1)->valueint;
}

static bool v_same_shape(const cf_tensor *a, const cf_tensor *b)
{
    if (a->ndim != b->ndim) return false;
    for (int i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i]) return false;
    return true;
}

static int64_t v_numel(const cf_tensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++) n *= t->shape[i];
    return n;
}

/* numpy broadcast; false if not broadcastable */
static bool v_broadcast(const cf_tensor *a, const cf_tensor *b, int *rank, int64_t *out)
{
    int r = a->ndim > b->ndim ? a->ndim : b->ndim;
    for (int j = 0; j < r; j++) {
        int64_t da = j < a->ndim ? a->shape[a->ndim - 1 - j] : 1, db = j < b->ndim ? b->shape[b->ndim - 1 - j] : 1;
        int64_t o;
        if (da == db) o = da;
        else if (da == 1) o = db;
        else if (db == 1) o = da;
        else return false;
        out[r - 1 - j] = o;
    }
    *rank = r;
    return true;
}

static int v_cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static bool v_self_overlap(const cf_tensor *t)
{
    int64_t n = v_numel(t);
    if (n <= 1) return false;
    for (int d = 0; d < t->ndim; d++)
        if (t->shape[d] > 1 && t->strides[d] == 0) return true;
    int64_t *addr = malloc(sizeof(int64_t) * (size_t)n);
    if (!addr) return false;
    for (int64_t i = 0; i < n; i++) {
        int64_t rem = i, off = t->offset;
        for (int d = t->ndim - 1; d >= 0; d--) {
            off += (rem % t->shape[d]) * t->strides[d];
            rem /= t->shape[d];
        }
        addr[i] = off;
    }
    qsort(addr, (size_t)n, sizeof *addr, v_cmp64);
    bool dup = false;
    for (int64_t i = 1; i < n && !dup; i++) dup = addr[i] == addr[i - 1];
    free(addr);
    return dup;
}

static const char *v_promote(const cJSON *root, const char *a, const char *b)
{
    const cJSON *p = v_get(root, "promotion"), *row = v_get(p, a);
    if (row && v_get(row, b)) return v_get(row, b)->valuestring;
    row = v_get(p, b);
    if (row && v_get(row, a)) return v_get(row, a)->valuestring;
    return NULL;
}

static const cf_tensor *v_t(const cf_case *c, const cJSON *name) { return cf_case_tensor_c(c, name->valuestring); }

static bool v_param_valid(const cJSON *decl, const cf_param *p)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, v_get(decl, "valid"))
    {
        if (cJSON_IsString(e) && p->kind == CF_PARAM_STRING && !strcmp(e->valuestring, p->str)) return true;
        if (cJSON_IsBool(e) && p->kind == CF_PARAM_BOOL && cJSON_IsTrue(e) == p->b) return true;
        if (cJSON_IsNumber(e) && p->kind == CF_PARAM_INT && e->valuedouble == (double)p->i) return true;
    }
    return false;
}

static int64_t v_nblk(int64_t S, int64_t l, int64_t d) { return S >= l ? (S - l) / d + 1 : 0; }

/* Does case c break rule r of the file?  Predicates are guarded: a rule that needs a
 * property another rule owns (a rank, a present tensor, a valid dtype) is not evaluated
 * when that property is broken. */
static bool v_rule_broken(const cJSON *root, const cJSON *r, const cf_case *c)
{
    const char *kind = v_get(r, "kind")->valuestring;
    const cJSON *targets = v_get(r, "targets"), *e;
    if (!strcmp(kind, "null_tensor")) {
        cJSON_ArrayForEach(e, targets) if (!v_t(c, e)->present) return true;
        return false;
    }
    if (!strcmp(kind, "null_data")) { /* a non-empty tensor without storage */
        cJSON_ArrayForEach(e, targets) if (v_t(c, e)->present && v_t(c, e)->null_data && cf_tensor_numel(v_t(c, e)) > 0) return true;
        return false;
    }
    if (!strcmp(kind, "null_param")) {
        cJSON_ArrayForEach(e, targets) if (cf_case_param_c(c, e->valuestring)->is_null) return true;
        return false;
    }
    if (!strcmp(kind, "dtype_not_allowed")) {
        cJSON_ArrayForEach(e, targets) if (v_t(c, e)->present && !v_dtype_ok(root, v_t(c, e))) return true;
        return false;
    }
    if (!strcmp(kind, "dtype_relation")) {
        cJSON_ArrayForEach(e, targets)
        {
            const cf_tensor *t = v_t(c, e);
            const cJSON *rel = v_get(v_tensor_decl(root, t->name), "dtype_rel");
            if (!t->present || !v_dtype_ok(root, t)) continue;
            if (v_get(rel, "equal")) {
                const cf_tensor *s = cf_case_tensor_c(c, v_get(rel, "equal")->valuestring);
                if (s->present && v_dtype_ok(root, s) && s->dtype != t->dtype) return true;
            } else {
                const cJSON *pr = v_get(rel, "promote");
                const cf_tensor *a = cf_case_tensor_c(c, cJSON_GetArrayItem(pr, 0)->valuestring);
                const cf_tensor *b = cf_case_tensor_c(c, cJSON_GetArrayItem(pr, 1)->valuestring);
                if (!a->present || !b->present || !v_dtype_ok(root, a) || !v_dtype_ok(root, b)) continue;
                const char *w = v_promote(root, cf_dtype_name(a->dtype), cf_dtype_name(b->dtype));
                if (w && strcmp(w, cf_dtype_name(t->dtype))) return true;
            }
        }
        return false;
    }
    if (!strcmp(kind, "rank_out_of_range")) {
        cJSON_ArrayForEach(e, targets) if (v_t(c, e)->present && !v_rank_ok(root, v_t(c, e))) return true;
        return false;
    }
    if (!strcmp(kind, "shape_equal")) {
        const cf_tensor *a = v_t(c, cJSON_GetArrayItem(targets, 0)), *b = v_t(c, v_get(r, "to"));
        return v_rank_ok(root, a) && v_rank_ok(root, b) && !v_same_shape(a, b);
    }
    if (!strcmp(kind, "not_broadcastable") || !strcmp(kind, "output_shape")) {
        const cJSON *pair = !strcmp(kind, "output_shape") ? v_get(r, "broadcast_of") : targets;
        const cf_tensor *a = v_t(c, cJSON_GetArrayItem(pair, 0)), *b = v_t(c, cJSON_GetArrayItem(pair, 1));
        int rank;
        int64_t bs[CF_MAX_RANK];
        if (!v_rank_ok(root, a) || !v_rank_ok(root, b)) return false;
        bool ok = v_broadcast(a, b, &rank, bs);
        if (!strcmp(kind, "not_broadcastable")) return !ok;
        const cf_tensor *o = v_t(c, cJSON_GetArrayItem(targets, 0));
        if (!ok || !v_rank_ok(root, o)) return false;
        if (o->ndim != rank) return true;
        for (int i = 0; i < rank; i++)
            if (o->shape[i] != bs[i]) return true;
        return false;
    }
    if (!strcmp(kind, "shape_broadcast_dims")) {
        const cf_tensor *m = v_t(c, cJSON_GetArrayItem(targets, 0)), *g = v_t(c, v_get(r, "to"));
        if (!v_rank_ok(root, m) || !v_rank_ok(root, g) || m->ndim != g->ndim) return false;
        unsigned bd = 0;
        cJSON_ArrayForEach(e, v_get(r, "broadcast_dims")) bd |= 1u << e->valueint;
        for (int i = 0; i < m->ndim; i++) {
            if ((bd >> i) & 1u ? (m->shape[i] != 1 && m->shape[i] != g->shape[i]) : m->shape[i] != g->shape[i])
                return true;
        }
        return false;
    }
    if (!strcmp(kind, "dim_out_of_range")) {
        cJSON_ArrayForEach(e, targets)
        {
            const cf_tensor *t = v_t(c, e);
            const cJSON *lim;
            if (!v_rank_ok(root, t)) continue;
            cJSON_ArrayForEach(lim, v_get(v_tensor_decl(root, t->name), "dims"))
            {
                int d = v_get(lim, "dim")->valueint;
                if (t->shape[d] > (int64_t)v_get(lim, "max")->valuedouble) return true;
            }
        }
        return false;
    }
    if (!strcmp(kind, "param_invalid")) {
        const cJSON *p = cJSON_GetArrayItem(targets, 0);
        const cf_param *cp = cf_case_param_c(c, p->valuestring);
        return !cp->is_null && !v_param_valid(v_param_decl(root, p->valuestring), cp);
    }
    if (!strcmp(kind, "output_overlap")) {
        cJSON_ArrayForEach(e, targets) if (v_t(c, e)->present && v_self_overlap(v_t(c, e))) return true;
        return false;
    }
    if (!strcmp(kind, "format_not_accepted")) {
        cJSON_ArrayForEach(e, targets)
        {
            if (v_t(c, e)->present && !v_in_strlist(v_get(v_get(root, "formats"), "accepted"), v_t(c, e)->format))
                return true;
        }
        return false;
    }
    if (!strcmp(kind, "empty_tensor")) {
        cJSON_ArrayForEach(e, targets) if (v_t(c, e)->present && v_numel(v_t(c, e)) == 0) return true;
        return false;
    }
    /* NsaCompressGrad */
    const cJSON *m = v_get(root, "shape_model");
    const cf_tensor *og = v_t(c, v_get(m, "outputGrad")), *in = v_t(c, v_get(m, "input")), *w = v_t(c, v_get(m, "weight"));
    const cf_param *ps = cf_case_param_c(c, v_get(m, "actSeqLen")->valuestring);
    int64_t l = cf_case_param_c(c, v_get(m, "l")->valuestring)->i, d = cf_case_param_c(c, v_get(m, "d")->valuestring)->i;
    int64_t bm = (int64_t)v_get(m, "block_multiple")->valuedouble, Dm = (int64_t)v_get(m, "D_multiple")->valuedouble;
    bool in_ok = v_rank_ok(root, in), shapes_ok = in_ok && v_rank_ok(root, og) && v_rank_ok(root, w);
    if (!strcmp(kind, "nsa_block_multiple")) return l <= 0 || d <= 0 || l % bm || d % bm;
    if (!strcmp(kind, "nsa_l_gt_d")) return l > 0 && d > 0 && l <= d;
    if (!strcmp(kind, "nsa_D_multiple")) return in_ok && (in->shape[2] <= 0 ? in->shape[2] < 0 : in->shape[2] % Dm != 0);
    bool seq_bad = false;
    if (!ps->is_null) {
        if (ps->arr_len == 0) seq_bad = true;
        for (int64_t i = 0; i < ps->arr_len; i++)
            if (ps->arr[i] < 0 || (i && ps->arr[i] < ps->arr[i - 1])) seq_bad = true;
        if (in_ok && ps->arr_len && ps->arr[ps->arr_len - 1] != in->shape[0]) seq_bad = true;
    }
    if (!strcmp(kind, "nsa_actseqlen")) return in_ok && seq_bad;
    if (!strcmp(kind, "nsa_C")) {
        if (!shapes_ok || seq_bad || l <= 0 || d <= 0) return false;
        int64_t C = 0;
        if (ps->is_null) C = v_nblk(in->shape[0], l, d);
        else
            for (int64_t i = 0; i < ps->arr_len; i++) C += v_nblk(ps->arr[i] - (i ? ps->arr[i - 1] : 0), l, d);
        return C != og->shape[0];
    }
    if (!strcmp(kind, "nsa_dims"))
        return shapes_ok && (og->shape[1] != in->shape[1] || og->shape[2] != in->shape[2] || w->shape[0] != l ||
                             w->shape[1] != in->shape[1]);
    fprintf(stderr, "validator: unknown rule kind %s\n", kind);
    return true;
}

/* Writes the names of all broken rules (comma separated) into out; returns their count. */
static int v_broken_rules(const cJSON *root, const cf_case *c, char *out, size_t cap)
{
    const cJSON *r;
    int n = 0;
    out[0] = 0;
    cJSON_ArrayForEach(r, v_get(root, "rules"))
    {
        if (v_rule_broken(root, r, c)) {
            size_t len = strlen(out);
            snprintf(out + len, cap - len, "%s%s", n ? "," : "", v_get(r, "name")->valuestring);
            n++;
        }
    }
    return n;
}

/* Status a profile assigns to a rule (override or base); -1 if disabled. */
static int32_t v_rule_status(const cJSON *root, const char *profile, const char *rule)
{
    const cJSON *r;
    int32_t st = -1;
    cJSON_ArrayForEach(r, v_get(root, "rules")) if (!strcmp(v_get(r, "name")->valuestring, rule)) st = v_get(r, "status")->valueint;
    const cJSON *ov = v_get(v_get(v_get(v_get(root, "profiles"), profile), "rules"), rule);
    if (ov && cJSON_IsTrue(v_get(ov, "disabled"))) return -1;
    if (ov && v_get(ov, "status")) st = v_get(ov, "status")->valueint;
    return st;
}

/* Structural well-formedness of any generated case (valid or invalid): views inside their
 * storage, 1-D storage for non-contiguous or offset views (formats.md), data present. */
static bool v_structure(const cf_case *c, char *why, size_t cap)
{
    for (int i = 0; i < c->ntensors; i++) {
        const cf_tensor *t = &c->tensors[i];
        if (!t->present) {
            if (t->data) return snprintf(why, cap, "%s: NULL tensor with data", t->name), false;
            continue;
        }
        int64_t n = v_numel(t), hi = t->offset, sn = 1;
        bool contig = t->offset == 0;
        int64_t acc = 1;
        for (int d = t->ndim - 1; d >= 0; d--) {
            if (t->shape[d] < 0 || t->strides[d] < 0) return snprintf(why, cap, "%s: negative dim/stride", t->name), false;
            if (t->shape[d] > 1 && t->strides[d] != acc) contig = false;
            acc *= t->shape[d] > 0 ? t->shape[d] : 1;
            if (t->shape[d] > 0) hi += (t->shape[d] - 1) * t->strides[d];
        }
        for (int d = 0; d < t->storage_ndim; d++) sn *= t->storage_shape[d];
        if (n > 0 && hi >= sn) return snprintf(why, cap, "%s: view reaches %lld >= storage %lld", t->name, (long long)hi, (long long)sn), false;
        if (!contig && t->storage_ndim != 1) return snprintf(why, cap, "%s: non-contiguous view without 1-D storage", t->name), false;
        if (contig) {
            bool same = t->storage_ndim == t->ndim;
            for (int d = 0; same && d < t->ndim; d++) same = t->storage_shape[d] == t->shape[d];
            if (!same) return snprintf(why, cap, "%s: contiguous view at offset 0 whose storage_shape is not its shape", t->name), false;
        }
        if (!t->output && !t->data && !t->null_data) return snprintf(why, cap, "%s: input without data", t->name), false;
        if (t->output && t->data) return snprintf(why, cap, "%s: output with data", t->name), false;
    }
    return true;
}

#endif
