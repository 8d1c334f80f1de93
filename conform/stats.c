#include "stats.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const double cf_hist_edges[CF_HIST_BINS] = {0, 0.5, 1, 2, 4, 16, 256, 65536};

void cf_row_init(cf_row *row, const char *op, cf_dtype dt, const char *variant, const cf_tol *tol)
{
    memset(row, 0, sizeof *row);
    snprintf(row->op, sizeof row->op, "%s", op);
    row->dtype = dt;
    snprintf(row->variant, sizeof row->variant, "%s", variant ? variant : "");
    if (tol) row->tol = *tol;
}

void cf_row_add_failed(cf_row *row, const char *case_ref)
{
    for (int i = 0; i < row->nfailed_ids; i++)
        if (strcmp(row->failed_ids[i], case_ref) == 0) return;
    if (row->nfailed_ids < CF_MAX_FAILED_IDS)
        snprintf(row->failed_ids[row->nfailed_ids++], sizeof row->failed_ids[0], "%s", case_ref);
}

static bool worse(double ulp, int64_t ci, int64_t el, const cf_row *r)
{
    if (!r->has_worst) return true;
    if (ulp != r->max_ulp) return ulp > r->max_ulp;
    return ci < r->worst_case_index || (ci == r->worst_case_index && el < r->worst_element);
}

void cf_row_merge(cf_row *d, const cf_row *s)
{
    d->cases += s->cases;
    d->failed_cases += s->failed_cases;
    d->elements += s->elements;
    d->scored += s->scored;
    d->uncertain += s->uncertain;
    d->failed_elements += s->failed_elements;
    d->signed_zero += s->signed_zero;
    d->sum_ulp += s->sum_ulp;
    d->sum_rel += s->sum_rel;
    d->rel_over += s->rel_over;
    if (s->max_scaled_ulp > d->max_scaled_ulp) d->max_scaled_ulp = s->max_scaled_ulp;
    if (s->max_rel > d->max_rel) d->max_rel = s->max_rel;
    for (int i = 0; i < CF_HIST_BINS; i++) d->hist[i] += s->hist[i];
    for (int i = 0; i < CF_MM_COUNT; i++) d->mismatches[i] += s->mismatches[i];
    if (s->has_worst && worse(s->max_ulp, s->worst_case_index, s->worst_element, d)) {
        d->has_worst = true;
        d->max_ulp = s->max_ulp;
        d->worst_case_index = s->worst_case_index;
        d->worst_element = s->worst_element;
        memcpy(d->worst_case, s->worst_case, sizeof d->worst_case);
        memcpy(d->worst_index, s->worst_index, sizeof d->worst_index);
        memcpy(d->worst_inputs, s->worst_inputs, sizeof d->worst_inputs);
        memcpy(d->worst_got, s->worst_got, sizeof d->worst_got);
        d->worst_expected = s->worst_expected;
    }
    for (int i = 0; i < s->nfailed_ids; i++) cf_row_add_failed(d, s->failed_ids[i]);
}

double cf_row_mean_ulp(const cf_row *r) { return r->scored ? r->sum_ulp / (double)r->scored : 0; }

double cf_row_p99_ulp(const cf_row *r)
{
    int64_t total = 0, acc = 0;
    for (int i = 0; i < CF_HIST_BINS; i++) total += r->hist[i];
    if (!total) return 0;
    int64_t want = (int64_t)ceil(0.99 * (double)total);
    for (int i = 0; i < CF_HIST_BINS; i++) {
        acc += r->hist[i];
        if (acc >= want) return i + 1 < CF_HIST_BINS ? cf_hist_edges[i + 1] : INFINITY;
    }
    return INFINITY;
}

static double bm_threshold(cf_dtype dt)
{
    switch (dt) {
    case CF_F32: return 0x1p-13;
    case CF_F16: return 0x1p-10;
    case CF_BF16: return 0x1p-7;
    default: return 0x1p-30;
    }
}

bool cf_row_single_bm(const cf_row *r, double *mere, double *mare)
{
    *mere = r->scored ? r->sum_rel / (double)r->scored : 0;
    *mare = r->max_rel;
    double th = bm_threshold(r->dtype);
    return *mere < th && *mare < 10 * th;
}

const char *cf_row_verdict(const cf_row *r)
{
    if (r->cases == 0) return "no-data";
    return r->failed_cases ? "fail" : "pass";
}

/* ---- JSON ---- */

static cJSON *num(double v)
{
    if (isnan(v)) return cJSON_CreateString("nan");
    if (isinf(v)) return cJSON_CreateString(v > 0 ? "inf" : "-inf");
    return cJSON_CreateNumber(v);
}

cJSON *cf_row_to_json(const cf_row *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "op", r->op);
    cJSON_AddStringToObject(o, "dtype", cf_dtype_name(r->dtype));
    cJSON_AddStringToObject(o, "variant", r->variant);
    cJSON_AddNumberToObject(o, "cases", (double)r->cases);
    cJSON_AddNumberToObject(o, "failed_cases", (double)r->failed_cases);
    cJSON_AddNumberToObject(o, "elements", (double)r->elements);
    cJSON_AddNumberToObject(o, "scored", (double)r->scored);
    cJSON_AddNumberToObject(o, "uncertain", (double)r->uncertain);
    cJSON_AddNumberToObject(o, "failed_elements", (double)r->failed_elements);
    cJSON_AddItemToObject(o, "max_ulp", num(r->max_ulp));
    cJSON_AddItemToObject(o, "mean_ulp", num(cf_row_mean_ulp(r)));
    cJSON_AddItemToObject(o, "p99_ulp", num(cf_row_p99_ulp(r)));
    cJSON_AddItemToObject(o, "sum_ulp", num(r->sum_ulp));
    cJSON_AddItemToObject(o, "max_scaled_ulp", num(r->max_scaled_ulp));
    cJSON *h = cJSON_AddObjectToObject(o, "histogram");
    cJSON *edges = cJSON_AddArrayToObject(h, "edges"), *counts = cJSON_AddArrayToObject(h, "counts");
    for (int i = 0; i < CF_HIST_BINS; i++) {
        cJSON_AddItemToArray(edges, cJSON_CreateNumber(cf_hist_edges[i]));
        cJSON_AddItemToArray(counts, cJSON_CreateNumber((double)r->hist[i]));
    }
    cJSON *mm = cJSON_AddObjectToObject(o, "mismatches");
    for (int i = 0; i < CF_MM_COUNT; i++)
        if (i != CF_MM_signed_zero) cJSON_AddNumberToObject(mm, cf_mismatch_name((cf_mismatch)i), (double)r->mismatches[i]);
    cJSON_AddNumberToObject(mm, "signed_zero", (double)r->signed_zero);
    double mere, mare;
    bool bm = cf_row_single_bm(r, &mere, &mare);
    cJSON *sb = cJSON_AddObjectToObject(o, "single_bm");
    cJSON_AddItemToObject(sb, "mere", num(mere));
    cJSON_AddItemToObject(sb, "mare", num(mare));
    cJSON_AddItemToObject(sb, "sum_rel", num(r->sum_rel));
    cJSON_AddBoolToObject(sb, "pass", bm);
    cJSON_AddNumberToObject(o, "rel_over_threshold", (double)r->rel_over);
    cJSON *tol = cJSON_AddObjectToObject(o, "tolerance");
    cJSON_AddNumberToObject(tol, "max_ulp", r->tol.max_ulp);
    cJSON_AddNumberToObject(tol, "max_scaled_ulp", r->tol.max_scaled_ulp);
    if (r->has_worst) {
        cJSON *w = cJSON_AddObjectToObject(o, "worst");
        cJSON_AddStringToObject(w, "case", r->worst_case);
        cJSON_AddNumberToObject(w, "case_index", (double)r->worst_case_index);
        cJSON_AddNumberToObject(w, "flat_element", (double)r->worst_element);
        cJSON *ix = cJSON_Parse(r->worst_index);
        cJSON_AddItemToObject(w, "element", ix ? ix : cJSON_CreateArray());
        cJSON *in = cJSON_Parse(r->worst_inputs);
        cJSON_AddItemToObject(w, "inputs", in ? in : cJSON_CreateObject());
        cJSON_AddStringToObject(w, "got", r->worst_got);
        cJSON_AddItemToObject(w, "expected", num(r->worst_expected));
        cJSON_AddItemToObject(w, "ulp", num(r->max_ulp));
    }
    cJSON *f = cJSON_AddArrayToObject(o, "failed_cases_ids");
    for (int i = 0; i < r->nfailed_ids; i++) cJSON_AddItemToArray(f, cJSON_CreateString(r->failed_ids[i]));
    cJSON_AddStringToObject(o, "verdict", cf_row_verdict(r));
    return o;
}

static bool jnum(const cJSON *o, const char *k, double *v)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, k);
    if (cJSON_IsNumber(j)) {
        *v = j->valuedouble;
        return true;
    }
    if (cJSON_IsString(j)) {
        if (!strcmp(j->valuestring, "nan")) *v = NAN;
        else if (!strcmp(j->valuestring, "inf")) *v = INFINITY;
        else if (!strcmp(j->valuestring, "-inf")) *v = -INFINITY;
        else return false;
        return true;
    }
    return false;
}

cf_status cf_row_from_json(const cJSON *o, const char *file, int index, cf_row *r, cf_err *e)
{
    memset(r, 0, sizeof *r);
    const cJSON *op = cJSON_GetObjectItemCaseSensitive(o, "op"), *dt = cJSON_GetObjectItemCaseSensitive(o, "dtype"),
                *va = cJSON_GetObjectItemCaseSensitive(o, "variant");
    if (!cJSON_IsString(op)) return cf_fail(e, CFE_INPUT, "%s: field 'results[%d].op': expected a string", file, index);
    if (!cJSON_IsString(dt) || !cf_dtype_parse(dt->valuestring, &r->dtype))
        return cf_fail(e, CFE_INPUT, "%s: field 'results[%d].dtype': expected a dtype", file, index);
    snprintf(r->op, sizeof r->op, "%s", op->valuestring);
    snprintf(r->variant, sizeof r->variant, "%s", cJSON_IsString(va) ? va->valuestring : "");
    struct { const char *k; int64_t *dst; } ints[] = {
        {"cases", &r->cases}, {"failed_cases", &r->failed_cases}, {"elements", &r->elements},
        {"scored", &r->scored}, {"uncertain", &r->uncertain}, {"failed_elements", &r->failed_elements},
        {"rel_over_threshold", &r->rel_over}};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        double v;
        if (!jnum(o, ints[i].k, &v) || v < 0) return cf_fail(e, CFE_INPUT, "%s: field 'results[%d].%s': expected a count", file, index, ints[i].k);
        *ints[i].dst = (int64_t)v;
    }
    if (!jnum(o, "max_ulp", &r->max_ulp) || !jnum(o, "sum_ulp", &r->sum_ulp) || !jnum(o, "max_scaled_ulp", &r->max_scaled_ulp))
        return cf_fail(e, CFE_INPUT, "%s: field 'results[%d]': max_ulp, sum_ulp, max_scaled_ulp expected", file, index);
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(o, "histogram");
    const cJSON *counts = h ? cJSON_GetObjectItemCaseSensitive(h, "counts") : NULL;
    if (!cJSON_IsArray(counts) || cJSON_GetArraySize(counts) != CF_HIST_BINS)
        return cf_fail(e, CFE_INPUT, "%s: field 'results[%d].histogram.counts': expected %d counts", file, index, CF_HIST_BINS);
    for (int i = 0; i < CF_HIST_BINS; i++) r->hist[i] = (int64_t)cJSON_GetArrayItem(counts, i)->valuedouble;
    const cJSON *mm = cJSON_GetObjectItemCaseSensitive(o, "mismatches");
    if (!cJSON_IsObject(mm)) return cf_fail(e, CFE_INPUT, "%s: field 'results[%d].mismatches': expected an object", file, index);
    for (int i = 0; i < CF_MM_COUNT; i++) {
        double v = 0;
        jnum(mm, cf_mismatch_name((cf_mismatch)i), &v);
        if (i == CF_MM_signed_zero) r->signed_zero = (int64_t)v;
        else r->mismatches[i] = (int64_t)v;
    }
    const cJSON *sb = cJSON_GetObjectItemCaseSensitive(o, "single_bm");
    if (sb) {
        jnum(sb, "sum_rel", &r->sum_rel);
        jnum(sb, "mare", &r->max_rel);
    }
    const cJSON *tol = cJSON_GetObjectItemCaseSensitive(o, "tolerance");
    if (!tol || !jnum(tol, "max_ulp", &r->tol.max_ulp) || !jnum(tol, "max_scaled_ulp", &r->tol.max_scaled_ulp))
        return cf_fail(e, CFE_INPUT, "%s: field 'results[%d].tolerance': expected max_ulp and max_scaled_ulp", file, index);
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(o, "worst");
    if (cJSON_IsObject(w)) {
        double v;
        r->has_worst = true;
        const cJSON *cs = cJSON_GetObjectItemCaseSensitive(w, "case"), *got = cJSON_GetObjectItemCaseSensitive(w, "got");
        snprintf(r->worst_case, sizeof r->worst_case, "%s", cJSON_IsString(cs) ? cs->valuestring : "");
        snprintf(r->worst_got, sizeof r->worst_got, "%s", cJSON_IsString(got) ? got->valuestring : "");
        if (jnum(w, "case_index", &v)) r->worst_case_index = (int64_t)v;
        if (jnum(w, "flat_element", &v)) r->worst_element = (int64_t)v;
        jnum(w, "expected", &r->worst_expected);
        char *s = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(w, "element"));
        if (s) snprintf(r->worst_index, sizeof r->worst_index, "%s", s);
        free(s);
        s = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(w, "inputs"));
        if (s) snprintf(r->worst_inputs, sizeof r->worst_inputs, "%s", s);
        free(s);
    }
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, "failed_cases_ids"), *it;
    cJSON_ArrayForEach(it, f) if (cJSON_IsString(it)) cf_row_add_failed(r, it->valuestring);
    return CFE_OK;
}

/* ---- scoring a case ---- */

static void bits_hex(char *buf, size_t n, const uint8_t *p, size_t es)
{
    uint64_t b = 0;
    memcpy(&b, p, es);
    snprintf(buf, n, "0x%0*" PRIx64, (int)es * 2, b);
}

/* One element as "<dtype>:<value> (<bits>)" — the value decoded exactly enough to round-trip. */
static void value_text(char *buf, size_t n, cf_dtype dt, const uint8_t *p)
{
    char hex[24];
    size_t es = cf_dtype_size(dt);
    bits_hex(hex, sizeof hex, p, es);
    int64_t iv = 0;
    switch (dt) {
    case CF_F16:
    case CF_BF16:
    case CF_F32: snprintf(buf, n, "%s:%.9g (%s)", cf_dtype_name(dt), cf_decode(dt, p), hex); return;
    case CF_F64: snprintf(buf, n, "%s:%.17g (%s)", cf_dtype_name(dt), cf_decode(dt, p), hex); return;
    case CF_I8: iv = *(const int8_t *)p; break;
    case CF_I16: { int16_t v; memcpy(&v, p, 2); iv = v; } break;
    case CF_I32: { int32_t v; memcpy(&v, p, 4); iv = v; } break;
    case CF_I64: memcpy(&iv, p, 8); break;
    case CF_U8:
    case CF_BOOL: iv = *p; break;
    case CF_U16: { uint16_t v; memcpy(&v, p, 2); iv = v; } break;
    case CF_U32: { uint32_t v; memcpy(&v, p, 4); iv = v; } break;
    case CF_U64: { uint64_t v; memcpy(&v, p, 8); snprintf(buf, n, "u64:%llu (%s)", (unsigned long long)v, hex); return; }
    case CF_C64:
    case CF_C128: snprintf(buf, n, "%s:(%s)", cf_dtype_name(dt), hex); return;
    default: break;
    }
    snprintf(buf, n, "%s:%lld (%s)", cf_dtype_name(dt), (long long)iv, hex);
}

/* Multi-index text and the inputs at output element e (inputs broadcastable to it): as a JSON
 * object of bits ({"x":"0x3c00"}, the report's form) or decoded (x=f16:1 (0x3c00), a line's). */
static void element_context(const cf_case *c, const cf_tensor *out, int64_t e, char *idx, size_t idxn,
                            char *inputs, size_t inn, bool decoded)
{
    int64_t ix[CF_MAX_RANK], rem = e;
    for (int k = out->ndim - 1; k >= 0; k--) ix[k] = rem % out->shape[k], rem /= out->shape[k];
    size_t n = (size_t)snprintf(idx, idxn, "[");
    for (int k = 0; k < out->ndim && n < idxn; k++) n += (size_t)snprintf(idx + n, idxn - n, "%s%lld", k ? "," : "", (long long)ix[k]);
    if (n < idxn) snprintf(idx + n, idxn - n, "]");
    n = decoded ? 0 : (size_t)snprintf(inputs, inn, "{");
    if (decoded) inputs[0] = '\0';
    int first = 1;
    for (int i = 0; i < c->ntensors && n < inn; i++) {
        const cf_tensor *t = &c->tensors[i];
        if (!t->present || t->output || !t->data || t->ndim > out->ndim) continue;
        int lead = out->ndim - t->ndim;
        bool ok = true;
        int64_t off = t->offset;
        for (int k = 0; k < t->ndim && ok; k++) {
            if (t->shape[k] == 1) continue;
            if (t->shape[k] != out->shape[k + lead]) ok = false;
            else off += ix[k + lead] * t->strides[k];
        }
        if (!ok) continue;
        const uint8_t *p = (const uint8_t *)t->data + (size_t)off * cf_dtype_size(t->dtype);
        char val[80];
        if (decoded) value_text(val, sizeof val, t->dtype, p);
        else bits_hex(val, sizeof val, p, cf_dtype_size(t->dtype));
        if (decoded) n += (size_t)snprintf(inputs + n, inn - n, "%s%s=%s", first ? "" : " ", t->name, val);
        else n += (size_t)snprintf(inputs + n, inn - n, "%s\"%s\":\"%s\"", first ? "" : ",", t->name, val);
        first = 0;
    }
    if (!decoded && n < inn) snprintf(inputs + n, inn - n, "}");
}

void cf_case_variant_text(const cf_case *c, char *buf, size_t n)
{
    size_t k = 0;
    buf[0] = '\0';
    for (int i = 0; i < c->nparams && k < n; i++) {
        const cf_param *p = &c->params[i];
        if (p->kind != CF_PARAM_STRING || p->is_null) continue;
        k += (size_t)snprintf(buf + k, n - k, "%s%s=%s", k ? "," : "", p->name, p->str);
    }
    if (!buf[0]) snprintf(buf, n, "-");
}

/* The non-string attributes as " name=value" (eps, scale, beta, ...): a line is reproducible
 * by reading it. */
static void params_text(const cf_case *c, char *buf, size_t n)
{
    size_t k = 0;
    buf[0] = '\0';
    for (int i = 0; i < c->nparams && k < n; i++) {
        const cf_param *p = &c->params[i];
        if (p->kind == CF_PARAM_STRING || p->kind == CF_PARAM_INTARRAY) continue;
        if (p->is_null) k += (size_t)snprintf(buf + k, n - k, " %s=null", p->name);
        else if (p->kind == CF_PARAM_F64) k += (size_t)snprintf(buf + k, n - k, " %s=%.17g", p->name, p->f64);
        else if (p->kind == CF_PARAM_BOOL) k += (size_t)snprintf(buf + k, n - k, " %s=%s", p->name, p->b ? "true" : "false");
        else if (p->kind == CF_PARAM_INT) k += (size_t)snprintf(buf + k, n - k, " %s=%lld", p->name, (long long)p->i);
        else if (p->kind == CF_PARAM_SCALAR) {
            char v[80];
            uint8_t bytes[8];
            memcpy(bytes, &p->scalar_bits, 8); /* little endian: the value's own bytes first */
            value_text(v, sizeof v, p->scalar_dtype, bytes);
            k += (size_t)snprintf(buf + k, n - k, " %s=%s", p->name, v);
        }
    }
}

bool cf_case_out_dtype(const cf_case *c, cf_dtype *dt)
{
    for (int i = 0; i < c->ntensors; i++)
        if (c->tensors[i].output && c->tensors[i].present) {
            *dt = c->tensors[i].dtype;
            return true;
        }
    return false;
}

void cf_case_key(const cf_case *c, char *buf, size_t n)
{
    cf_dtype dt;
    bool found = cf_case_out_dtype(c, &dt);
    char variant[96];
    cf_case_variant_text(c, variant, sizeof variant);
    snprintf(buf, n, "%s %s %s", cf_op_name(c->op), found ? cf_dtype_name(dt) : "-", variant);
}

/* "FAIL <op> <out dtype> <variant> <case>" */
static void case_head(const cf_case *c, const char *case_ref, char *buf, size_t n)
{
    char key[200];
    cf_case_key(c, key, sizeof key);
    snprintf(buf, n, "FAIL %s %s", key, case_ref);
}

/* A case-level failure (status, crash, guard zones): counted once, one line. */
static void case_failure(cf_case_verdict *v, const char *kind, const char *line, cf_fail_cb cb, void *ctx)
{
    if (!v->first_failure[0]) {
        snprintf(v->first_failure, sizeof v->first_failure, "%s", line);
        snprintf(v->kind, sizeof v->kind, "%s", kind);
    }
    v->pass = false;
    if (cb) cb(ctx, line);
}

void cf_score_case(const cf_case *c, const cf_expected *x, const cf_run_result *r, const cf_tol *tol,
                   int64_t case_index, const char *case_ref, cf_row *row, cf_case_verdict *v,
                   cf_fail_cb cb, void *ctx, int max_lines)
{
    memset(v, 0, sizeof *v);
    v->first_kind = CF_MM_COUNT;
    v->status_ok = !r->error[0] && r->status == c->expect_status;
    v->pass = true;
    if (row) row->cases++;
    char head[320], line[1024];
    case_head(c, case_ref, head, sizeof head);
    if (r->error[0]) {
        const char *kind = strstr(r->error, "timed out") ? "timeout" : strstr(r->error, "crashed") ? "crash" : "error";
        snprintf(line, sizeof line, "%s: %s", head, r->error);
        case_failure(v, kind, line, cb, ctx);
    } else if (!v->status_ok) {
        snprintf(line, sizeof line, "%s: status %d (phase %s), expected %d%s%s", head, r->status,
                 r->phase ? "execute" : "GetWorkspaceSize", c->expect_status, c->rule[0] ? " for rule " : "", c->rule);
        case_failure(v, "status", line, cb, ctx);
    }
    /* the guard zones are checked on every case that ran, whatever its status */
    if (!r->error[0]) {
        if (r->modified_input) {
            snprintf(line, sizeof line, "%s: modified_input: the target changed %s", head, r->modified);
            case_failure(v, "modified_input", line, cb, ctx);
            if (v->first_kind == CF_MM_COUNT) v->first_kind = CF_MM_modified_input;
            if (row) row->mismatches[CF_MM_modified_input]++;
        }
        for (int oi = 0; oi < r->nout; oi++)
            if (r->out[oi].wrote_outside) {
                snprintf(line, sizeof line, "%s: wrote_outside: output %s: %s", head, r->out[oi].name, r->out[oi].outside);
                case_failure(v, "wrote_outside", line, cb, ctx);
                if (v->first_kind == CF_MM_COUNT) v->first_kind = CF_MM_wrote_outside;
                if (row) row->mismatches[CF_MM_wrote_outside]++;
            }
    }
    if (!v->status_ok || c->expect_status != 0) goto done;
    int lines = 0;
    for (int oi = 0; oi < r->nout; oi++) {
        const cf_run_out *o = &r->out[oi];
        const cf_expected_out *eo = NULL;
        for (int k = 0; k < x->nout; k++)
            if (!strcmp(x->out[k].name, o->name)) eo = &x->out[k];
        const cf_tensor *t = cf_case_tensor_c(c, o->name);
        cf_fmt f;
        if (!eo || !t || !cf_fmt_of(o->dtype, &f) || eo->n != o->n || (!o->bits && o->n > 0)) {
            snprintf(line, sizeof line, "%s: no golden values or no outputs for %s", head, o->name);
            case_failure(v, "error", line, cb, ctx);
            continue;
        }
        size_t es = cf_dtype_size(o->dtype);
        for (int64_t k = 0; k < o->n; k++) {
            const uint8_t *gp = o->bits + (size_t)k * es;
            uint64_t gbits = 0;
            memcpy(&gbits, gp, es);
            cf_expect ex = {eo->r[k], eo->lo ? eo->lo[k] : 0, eo->m[k], eo->err ? eo->err[k] : -1,
                            eo->alt ? eo->alt[k] : eo->r[k], eo->masked ? eo->masked[k] != 0 : false};
            cf_elem_score s = cf_score_element(&f, cf_decode(o->dtype, gp), gbits, &ex, tol);
            if (row) row->elements++;
            if (s.verdict == CF_EL_UNCERTAIN) {
                if (row) row->uncertain++;
                continue;
            }
            double u = s.special && s.verdict == CF_EL_PASS ? 0 : s.ulp;
            if (row) {
                row->scored++;
                if (s.signed_zero) row->signed_zero++;
                int bin = 0;
                while (bin + 1 < CF_HIST_BINS && u > cf_hist_edges[bin + 1]) bin++;
                if (u > cf_hist_edges[CF_HIST_BINS - 1]) bin = CF_HIST_BINS - 1;
                row->hist[bin]++;
                if (isfinite(u)) row->sum_ulp += u;
                if (isfinite(s.scaled) && s.scaled > row->max_scaled_ulp && !s.special) row->max_scaled_ulp = s.scaled;
                if (!s.special) {
                    row->sum_rel += s.rel;
                    if (s.rel > row->max_rel) row->max_rel = s.rel;
                    if (s.rel > (o->dtype == CF_F32 || o->dtype == CF_F64 ? 1e-4 : 1e-3)) row->rel_over++;
                }
                if (worse(u, case_index, k, row)) {
                    row->has_worst = true;
                    row->max_ulp = u;
                    row->worst_case_index = case_index;
                    row->worst_element = k;
                    snprintf(row->worst_case, sizeof row->worst_case, "%s", case_ref);
                    element_context(c, t, k, row->worst_index, sizeof row->worst_index, row->worst_inputs,
                                    sizeof row->worst_inputs, false);
                    bits_hex(row->worst_got, sizeof row->worst_got, gp, es);
                    row->worst_expected = eo->r[k];
                }
            }
            if (s.verdict != CF_EL_FAIL) continue;
            v->pass = false;
            if (v->failed_elements == 0 && v->first_kind == CF_MM_COUNT) v->first_kind = s.kind;
            v->failed_elements++;
            if (row) {
                row->failed_elements++;
                row->mismatches[s.kind]++;
            }
            if (lines < max_lines || !v->first_failure[0]) {
                char idx[96], inputs[400], got[80], attrs[200];
                element_context(c, t, k, idx, sizeof idx, inputs, sizeof inputs, true);
                value_text(got, sizeof got, o->dtype, gp);
                params_text(c, attrs, sizeof attrs);
                snprintf(line, sizeof line, "%s %s%s%s %s got %s expected %.17g ulp %.4g scaled %.4g %s tol %g/%g", head,
                         o->name, idx, attrs, inputs, got, eo->r[k], s.ulp, s.scaled, cf_mismatch_name(s.kind), tol->max_ulp,
                         tol->max_scaled_ulp);
                if (!v->first_failure[0]) {
                    snprintf(v->first_failure, sizeof v->first_failure, "%s", line);
                    snprintf(v->kind, sizeof v->kind, "%s", cf_mismatch_name(s.kind));
                }
                if (cb && lines < max_lines) cb(ctx, line);
                lines++;
            }
        }
    }
done:
    if (row && !v->pass) {
        row->failed_cases++;
        cf_row_add_failed(row, case_ref);
    }
}

void cf_case_row_key(const cf_case *c, const char *const *variants, int nvariants, cf_dtype *dt,
                     const char **variant)
{
    if (!cf_case_out_dtype(c, dt)) *dt = CF_F32;
    *variant = "";
    for (int i = 0; i < nvariants; i++) {
        const char *eq = strchr(variants[i], '=');
        if (!eq) continue;
        char key[48];
        snprintf(key, sizeof key, "%.*s", (int)(eq - variants[i]), variants[i]);
        const cf_param *p = cf_case_param_c(c, key);
        if (p && !p->is_null && strcmp(p->str, eq + 1) == 0) {
            *variant = variants[i];
            return;
        }
    }
}
