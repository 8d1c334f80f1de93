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

bool cf_row_plot_add(cf_row *row, int x, int y, int64_t n)
{
    if (!row->plot && !(row->plot = calloc(CF_PLOT_X, sizeof *row->plot))) return false;
    row->plot[x][y] += n;
    return true;
}

void cf_row_free(cf_row *row)
{
    free(row->plot);
    free(row->failed_ids);
    free(row->examples);
    row->plot = NULL;
    row->failed_ids = NULL;
    row->examples = NULL;
    row->nfailed_ids = 0;
}

void cf_rows_free(cf_row *rows, int n)
{
    for (int i = 0; rows && i < n; i++) cf_row_free(&rows[i]);
    free(rows);
}

void cf_row_add_failed(cf_row *row, const char *case_ref)
{
    for (int i = 0; i < row->nfailed_ids; i++)
        if (strcmp(row->failed_ids[i], case_ref) == 0) return;
    if (!row->failed_ids && !(row->failed_ids = malloc(CF_MAX_FAILED_IDS * sizeof *row->failed_ids))) return;
    if (row->nfailed_ids < CF_MAX_FAILED_IDS)
        snprintf(row->failed_ids[row->nfailed_ids++], sizeof row->failed_ids[0], "%s", case_ref);
}

static bool worse(double ulp, int64_t ci, int64_t el, const cf_worst *w)
{
    if (!w->has) return true;
    if (ulp != w->ulp) return ulp > w->ulp;
    return ci < w->case_index || (ci == w->case_index && el < w->element);
}

/* ---- representative failing cases ---- */

static const char *const EX_EXTRA[4] = {"status", "crash", "timeout", "error"};

int cf_example_kind(const char *kind)
{
    for (int i = 0; i < CF_MM_COUNT; i++)
        if (!strcmp(kind, cf_mismatch_name((cf_mismatch)i))) return i;
    for (int i = 0; i < 4; i++)
        if (!strcmp(kind, EX_EXTRA[i])) return CF_MM_COUNT + i;
    return -1;
}

const char *cf_example_kind_name(int kind)
{
    return kind < CF_MM_COUNT ? cf_mismatch_name((cf_mismatch)kind) : EX_EXTRA[kind - CF_MM_COUNT];
}

/* slot 0 keeps the smallest case (elements, then case index), slot 1 the largest finite error
 * (ties: smaller index): both orders are total, so any merge order keeps the same two cases */
static bool example_better(int slot, const cf_example *cand, const cf_example *cur)
{
    if (!cur->used) return true;
    if (slot == 1) {
        bool cf = isfinite(cand->ulp), uf = isfinite(cur->ulp);
        if (cf != uf) return cf;
        if (cf && cand->ulp != cur->ulp) return cand->ulp > cur->ulp;
    } else if (cand->elements != cur->elements) {
        return cand->elements < cur->elements;
    }
    if (cand->case_index != cur->case_index) return cand->case_index < cur->case_index;
    return strcmp(cand->case_ref, cur->case_ref) < 0;
}

static void example_offer(cf_row *row, int kind, const cf_example *x)
{
    if (!row->examples && !(row->examples = calloc(CF_EX_KINDS, sizeof *row->examples))) return;
    for (int slot = 0; slot < 2; slot++)
        if (example_better(slot, x, &row->examples[kind][slot])) row->examples[kind][slot] = *x;
}

void cf_row_add_example(cf_row *row, const char *kind, int64_t case_index, int64_t elements, double ulp,
                        const char *case_ref, const char *line)
{
    int k = cf_example_kind(kind);
    if (k < 0 || !case_ref || !case_ref[0]) return; /* only stored cases are examples */
    cf_example x = {true, case_index, elements, ulp, "", ""};
    snprintf(x.case_ref, sizeof x.case_ref, "%s", case_ref);
    snprintf(x.line, sizeof x.line, "%s", line ? line : "");
    example_offer(row, k, &x);
}

/* ---- the error plot's bins ---- */

int cf_plot_xbin(double v)
{
    if (isnan(v)) return CF_PLOT_X - 1;
    if (v == -INFINITY) return 0;
    if (v == INFINITY) return CF_PLOT_X - 2;
    double a = fabs(v);
    const int mid = 2 + CF_PLOT_SIDE; /* |v| < 2^-OCT */
    if (a < 0x1p-12) return mid;
    if (a >= 0x1p12) return v < 0 ? 1 : CF_PLOT_X - 3;
    int q = (int)floor((log2(a) + CF_PLOT_OCT) * 4); /* 0 .. SIDE-1 */
    if (q < 0) q = 0;
    if (q >= CF_PLOT_SIDE) q = CF_PLOT_SIDE - 1;
    return v < 0 ? mid - 1 - q : mid + 1 + q;
}

void cf_plot_xrange(int i, double *lo, double *hi)
{
    const int mid = 2 + CF_PLOT_SIDE;
    if (i == CF_PLOT_X - 1) *lo = *hi = NAN;
    else if (i == 0) *lo = *hi = -INFINITY;
    else if (i == CF_PLOT_X - 2) *lo = *hi = INFINITY;
    else if (i == 1) *lo = -INFINITY, *hi = -0x1p12;
    else if (i == CF_PLOT_X - 3) *lo = 0x1p12, *hi = INFINITY;
    else if (i == mid) *lo = -0x1p-12, *hi = 0x1p-12;
    else if (i > mid) {
        int q = i - mid - 1;
        *lo = exp2(q / 4.0 - CF_PLOT_OCT);
        *hi = exp2((q + 1) / 4.0 - CF_PLOT_OCT);
    } else {
        int q = mid - 1 - i;
        *lo = -exp2((q + 1) / 4.0 - CF_PLOT_OCT);
        *hi = -exp2(q / 4.0 - CF_PLOT_OCT);
    }
}

int cf_plot_ybin(double u)
{
    if (!(u == u) || isinf(u)) return CF_PLOT_Y - 1;
    if (u <= 0x1p-10) return 0;
    if (u >= 0x1p20) return CF_PLOT_Y - 2;
    int b = 1 + (int)floor(log2(u) + 10);
    return b < 1 ? 1 : b > CF_PLOT_Y - 3 ? CF_PLOT_Y - 3 : b;
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
    if (s->worst.has && worse(s->worst.ulp, s->worst.case_index, s->worst.element, &d->worst)) {
        d->worst = s->worst;
        d->max_ulp = s->max_ulp;
    }
    if (s->worst_finite.has && worse(s->worst_finite.ulp, s->worst_finite.case_index, s->worst_finite.element, &d->worst_finite))
        d->worst_finite = s->worst_finite;
    for (int i = 0; i < s->nfailed_ids; i++) cf_row_add_failed(d, s->failed_ids[i]);
    d->ms_n += s->ms_n;
    d->ms_nonfinite_got += s->ms_nonfinite_got;
    d->ms_within_1e3 += s->ms_within_1e3;
    d->ms_within_5e3 += s->ms_within_5e3;
    d->ms_dot += s->ms_dot;
    d->ms_gg += s->ms_gg;
    d->ms_ee += s->ms_ee;
    if (s->ms_max_abs > d->ms_max_abs) d->ms_max_abs = s->ms_max_abs;
    if (s->ms_max_rel > d->ms_max_rel) d->ms_max_rel = s->ms_max_rel;
    for (int k = 0; s->examples && k < CF_EX_KINDS; k++)
        for (int slot = 0; slot < 2; slot++)
            if (s->examples[k][slot].used) example_offer(d, k, &s->examples[k][slot]);
    if (!d->plot_spec.x[0]) d->plot_spec = s->plot_spec;
    if (s->has_plot) d->has_plot = true;
    for (int x = 0; s->plot && x < CF_PLOT_X; x++)
        for (int y = 0; y < CF_PLOT_Y; y++)
            if (s->plot[x][y]) cf_row_plot_add(d, x, y, s->plot[x][y]);
}

double cf_row_cosine(const cf_row *r)
{
    if (r->ms_gg == 0 && r->ms_ee == 0) return r->ms_n ? 1 : NAN;
    if (r->ms_gg == 0 || r->ms_ee == 0) return NAN;
    double c = r->ms_dot / (sqrt(r->ms_gg) * sqrt(r->ms_ee));
    return c > 1 ? 1 : c < -1 ? -1 : c; /* rounding of the sums can step past ±1 */
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

static cJSON *worst_json(const cf_worst *w)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "case", w->case_ref);
    cJSON_AddNumberToObject(o, "case_index", (double)w->case_index);
    cJSON_AddNumberToObject(o, "flat_element", (double)w->element);
    cJSON *ix = cJSON_Parse(w->index);
    cJSON_AddItemToObject(o, "element", ix ? ix : cJSON_CreateArray());
    cJSON *in = cJSON_Parse(w->inputs);
    cJSON_AddItemToObject(o, "inputs", in ? in : cJSON_CreateObject());
    cJSON_AddStringToObject(o, "got", w->got);
    cJSON_AddItemToObject(o, "expected", num(w->expected));
    cJSON_AddItemToObject(o, "ulp", num(w->ulp));
    return o;
}

/* msprobe's sums and counts, and the ratios derived from them (merge recomputes those). */
static void msprobe_json(cJSON *o, const cf_row *r)
{
    cJSON *ms = cJSON_AddObjectToObject(o, "msprobe");
    cJSON_AddNumberToObject(ms, "n", (double)r->ms_n);
    cJSON_AddNumberToObject(ms, "nonfinite_got", (double)r->ms_nonfinite_got);
    cJSON_AddNumberToObject(ms, "within_1e-3", (double)r->ms_within_1e3);
    cJSON_AddNumberToObject(ms, "within_5e-3", (double)r->ms_within_5e3);
    cJSON_AddItemToObject(ms, "dot", num(r->ms_dot));
    cJSON_AddItemToObject(ms, "gg", num(r->ms_gg));
    cJSON_AddItemToObject(ms, "ee", num(r->ms_ee));
    cJSON_AddItemToObject(ms, "max_abs_err", num(r->ms_max_abs));
    cJSON_AddItemToObject(ms, "max_rel_err", num(r->ms_max_rel));
    cJSON_AddItemToObject(ms, "cosine", num(cf_row_cosine(r)));
    cJSON_AddItemToObject(ms, "one_thousandth_ratio", num(r->ms_n ? (double)r->ms_within_1e3 / (double)r->ms_n : NAN));
    cJSON_AddItemToObject(ms, "five_thousandths_ratio", num(r->ms_n ? (double)r->ms_within_5e3 / (double)r->ms_n : NAN));
}

/* The example failing cases, the second slot left out when it is the first's case. */
static void examples_json(cJSON *o, const cf_row *r)
{
    cJSON *ex = cJSON_AddArrayToObject(o, "examples");
    for (int k = 0; r->examples && k < CF_EX_KINDS; k++)
        for (int slot = 0; slot < 2; slot++) {
            const cf_example *x = &r->examples[k][slot];
            if (!x->used || (slot == 1 && !strcmp(x->case_ref, r->examples[k][0].case_ref))) continue;
            cJSON *xj = cJSON_CreateObject();
            cJSON_AddStringToObject(xj, "kind", cf_example_kind_name(k));
            cJSON_AddStringToObject(xj, "case", x->case_ref);
            cJSON_AddNumberToObject(xj, "case_index", (double)x->case_index);
            cJSON_AddNumberToObject(xj, "elements", (double)x->elements);
            cJSON_AddItemToObject(xj, "ulp", num(x->ulp));
            cJSON_AddStringToObject(xj, "line", x->line);
            cJSON_AddItemToArray(ex, xj);
        }
}

/* The row's error plot: its description, then the non-zero cells [x bin, y bin, count]. */
static void plot_json(cJSON *o, const cf_row *r)
{
    const cf_plot_spec *ps = &r->plot_spec;
    if (ps->scaled_reason[0]) cJSON_AddStringToObject(o, "scaled_reason", ps->scaled_reason);
    if (ps->x[0]) {
        cJSON *pl = cJSON_AddObjectToObject(o, "error_plot");
        cJSON_AddStringToObject(pl, "x", ps->x);
        cJSON_AddStringToObject(pl, "scale", ps->scale);
        cJSON_AddStringToObject(pl, "label", ps->label);
        cJSON *mk = cJSON_AddArrayToObject(pl, "marks");
        for (int i = 0; i < ps->nmarks; i++) {
            cJSON *m = cJSON_CreateObject();
            cJSON_AddItemToObject(m, "at", num(ps->mark_at[i]));
            cJSON_AddStringToObject(m, "label", ps->mark_label[i]);
            cJSON_AddItemToArray(mk, m);
        }
        cJSON *cells = cJSON_AddArrayToObject(pl, "cells"); /* [x bin, y bin, count], non-zero only */
        for (int x = 0; r->plot && x < CF_PLOT_X; x++)
            for (int y = 0; y < CF_PLOT_Y; y++)
                if (r->plot[x][y]) {
                    cJSON *c = cJSON_CreateArray();
                    cJSON_AddItemToArray(c, cJSON_CreateNumber(x));
                    cJSON_AddItemToArray(c, cJSON_CreateNumber(y));
                    cJSON_AddItemToArray(c, cJSON_CreateNumber((double)r->plot[x][y]));
                    cJSON_AddItemToArray(cells, c);
                }
    }
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
    if (r->worst.has) cJSON_AddItemToObject(o, "worst", worst_json(&r->worst));
    if (r->worst_finite.has) cJSON_AddItemToObject(o, "worst_finite", worst_json(&r->worst_finite));
    msprobe_json(o, r);
    examples_json(o, r);
    plot_json(o, r);
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

static void worst_from_json(const cJSON *w, cf_worst *x)
{
    memset(x, 0, sizeof *x);
    if (!cJSON_IsObject(w)) return;
    double v;
    x->has = true;
    const cJSON *cs = cJSON_GetObjectItemCaseSensitive(w, "case"), *got = cJSON_GetObjectItemCaseSensitive(w, "got");
    snprintf(x->case_ref, sizeof x->case_ref, "%s", cJSON_IsString(cs) ? cs->valuestring : "");
    snprintf(x->got, sizeof x->got, "%s", cJSON_IsString(got) ? got->valuestring : "");
    if (jnum(w, "case_index", &v)) x->case_index = (int64_t)v;
    if (jnum(w, "flat_element", &v)) x->element = (int64_t)v;
    if (!jnum(w, "ulp", &x->ulp)) x->ulp = NAN;
    jnum(w, "expected", &x->expected);
    char *s = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(w, "element"));
    if (s) snprintf(x->index, sizeof x->index, "%s", s);
    free(s);
    s = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(w, "inputs"));
    if (s) snprintf(x->inputs, sizeof x->inputs, "%s", s);
    free(s);
}

_Static_assert(CF_PLOT_X == 198 && CF_PLOT_Y == 33, "the bounds in extras_from_json's message");

static bool jcount(const cJSON *v, double hi)
{
    return cJSON_IsNumber(v) && isfinite(v->valuedouble) && v->valuedouble == floor(v->valuedouble) && v->valuedouble >= 0 &&
           v->valuedouble <= hi;
}

static bool jstr(const cJSON *o, const char *k, char *dst, size_t n, bool optional)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!v) return optional;
    if (!cJSON_IsString(v)) return false;
    snprintf(dst, n, "%s", v->valuestring);
    return true;
}

/* The fields report schema 1 gained for publishing (msprobe metrics, examples, the error plot,
 * scaled_reason): optional (older reports have none), typed and in range when present. */
static cf_status extras_from_json(const cJSON *o, const char *file, int index, cf_row *r, cf_err *e)
{
#define BAD(field, what) cf_fail(e, CFE_INPUT, "%s: field 'results[%d].%s': expected %s", file, index, field, what)
    const cJSON *ms = cJSON_GetObjectItemCaseSensitive(o, "msprobe"), *it;
    if (ms) {
        if (!cJSON_IsObject(ms)) return BAD("msprobe", "an object");
        struct { const char *k; int64_t *dst; } cs[] = {{"n", &r->ms_n}, {"nonfinite_got", &r->ms_nonfinite_got},
                                                         {"within_1e-3", &r->ms_within_1e3}, {"within_5e-3", &r->ms_within_5e3}};
        for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(ms, cs[i].k);
            if (!jcount(v, 0x1p53)) return BAD("msprobe", "counts n, nonfinite_got, within_1e-3, within_5e-3");
            *cs[i].dst = (int64_t)v->valuedouble;
        }
        if (r->ms_within_5e3 > r->ms_n || r->ms_within_1e3 > r->ms_within_5e3) return BAD("msprobe", "within_1e-3 <= within_5e-3 <= n");
        if (!jnum(ms, "dot", &r->ms_dot) || !jnum(ms, "gg", &r->ms_gg) || !jnum(ms, "ee", &r->ms_ee) ||
            !jnum(ms, "max_abs_err", &r->ms_max_abs) || !jnum(ms, "max_rel_err", &r->ms_max_rel) || r->ms_gg < 0 || r->ms_ee < 0 ||
            r->ms_max_abs < 0 || r->ms_max_rel < 0)
            return BAD("msprobe", "numbers dot, gg >= 0, ee >= 0, max_abs_err >= 0, max_rel_err >= 0");
    }
    const cJSON *ex = cJSON_GetObjectItemCaseSensitive(o, "examples");
    if (ex && !cJSON_IsArray(ex)) return BAD("examples", "an array");
    int i = 0;
    cJSON_ArrayForEach(it, ex)
    {
        char kind[32] = "", cref[160] = "", line[640] = "", f[48];
        double ci = -1, ulp = NAN;
        snprintf(f, sizeof f, "examples[%d]", i++);
        const cJSON *civ = cJSON_GetObjectItemCaseSensitive(it, "case_index");
        if (!cJSON_IsObject(it) || !jstr(it, "kind", kind, sizeof kind, false) || cf_example_kind(kind) < 0 ||
            !jstr(it, "case", cref, sizeof cref, false) || !cref[0] || !jstr(it, "line", line, sizeof line, true) ||
            !jcount(civ, 0x1p62) || (cJSON_GetObjectItemCaseSensitive(it, "ulp") && !jnum(it, "ulp", &ulp)))
            return BAD(f, "{kind: a failure kind, case: a stored case, case_index: a count, ulp: a number, line: a string}");
        ci = civ->valuedouble;
        const cJSON *elv = cJSON_GetObjectItemCaseSensitive(it, "elements");
        if (elv && !jcount(elv, 0x1p62)) return BAD(f, "elements: a count");
        cf_row_add_example(r, kind, (int64_t)ci, elv ? (int64_t)elv->valuedouble : 0, ulp, cref, line);
    }
    if (!jstr(o, "scaled_reason", r->plot_spec.scaled_reason, sizeof r->plot_spec.scaled_reason, true))
        return BAD("scaled_reason", "a string");
    const cJSON *pl = cJSON_GetObjectItemCaseSensitive(o, "error_plot");
    if (!pl) return CFE_OK;
    cf_plot_spec *ps = &r->plot_spec;
    if (!cJSON_IsObject(pl) || !jstr(pl, "x", ps->x, sizeof ps->x, false) || !ps->x[0] || !jstr(pl, "scale", ps->scale, sizeof ps->scale, true) ||
        !jstr(pl, "label", ps->label, sizeof ps->label, true))
        return BAD("error_plot", "an object with strings x (not empty), scale, label");
    const cJSON *mk = cJSON_GetObjectItemCaseSensitive(pl, "marks");
    if (mk && (!cJSON_IsArray(mk) || cJSON_GetArraySize(mk) > CF_MAX_MARKS)) return BAD("error_plot.marks", "an array of at most 6 marks");
    cJSON_ArrayForEach(it, mk)
    {
        if (!cJSON_IsObject(it) || !jnum(it, "at", &ps->mark_at[ps->nmarks]) ||
            !jstr(it, "label", ps->mark_label[ps->nmarks], sizeof ps->mark_label[0], false))
            return BAD("error_plot.marks", "objects {at: a number, label: a string}");
        ps->nmarks++;
    }
    const cJSON *cells = cJSON_GetObjectItemCaseSensitive(pl, "cells");
    if (!cJSON_IsArray(cells)) return BAD("error_plot.cells", "an array of [x bin, y bin, count]");
    i = 0;
    cJSON_ArrayForEach(it, cells)
    {
        char f[48];
        snprintf(f, sizeof f, "error_plot.cells[%d]", i++);
        const cJSON *x = cJSON_GetArrayItem(it, 0), *y = cJSON_GetArrayItem(it, 1), *n = cJSON_GetArrayItem(it, 2);
        if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) != 3 || !jcount(x, CF_PLOT_X - 1) || !jcount(y, CF_PLOT_Y - 1) || !jcount(n, 0x1p53))
            return BAD(f, "[x bin < 198, y bin < 33, count]");
        int xb = (int)x->valuedouble, yb = (int)y->valuedouble;
        int64_t have = r->plot ? r->plot[xb][yb] : 0, add = (int64_t)n->valuedouble;
        if (have > (INT64_C(1) << 53) - add) return BAD(f, "cells whose counts for one bin add up to at most 2^53");
        if (add && !cf_row_plot_add(r, xb, yb, add)) return cf_fail(e, CFE_IO, "%s: out of memory for the error plot", file);
    }
    r->has_plot = true;
    return CFE_OK;
#undef BAD
}

cf_status cf_row_from_json(const cJSON *o, const char *file, int index, cf_row *r, cf_err *e)
{
    /* r is zero already (stats.h): a row is ~0.1 MB, mostly the error plot, and calloc'd memory
     * that is never touched costs no page */
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
    worst_from_json(cJSON_GetObjectItemCaseSensitive(o, "worst"), &r->worst);
    if (r->worst.has) r->worst.ulp = r->max_ulp;
    worst_from_json(cJSON_GetObjectItemCaseSensitive(o, "worst_finite"), &r->worst_finite);
    cf_status st = extras_from_json(o, file, index, r, e);
    if (st) return st;
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
/* The multi-index of flat output element e. */
static void out_index(const cf_tensor *out, int64_t e, int64_t ix[CF_MAX_RANK])
{
    for (int k = out->ndim - 1; k >= 0; k--) ix[k] = e % out->shape[k], e /= out->shape[k];
}

/* The storage offset of input t, broadcast (right-aligned) to out, at the output multi-index ix;
 * false when t does not broadcast to out. */
static bool bcast_offset(const cf_tensor *t, const cf_tensor *out, const int64_t *ix, int64_t *off)
{
    if (t->ndim > out->ndim) return false;
    int lead = out->ndim - t->ndim;
    *off = t->offset;
    for (int k = 0; k < t->ndim; k++) {
        if (t->shape[k] == 1) continue;
        if (t->shape[k] != out->shape[k + lead]) return false;
        *off += ix[k + lead] * t->strides[k];
    }
    return true;
}

static void element_context(const cf_case *c, const cf_tensor *out, int64_t e, char *idx, size_t idxn,
                            char *inputs, size_t inn, bool decoded)
{
    int64_t ix[CF_MAX_RANK];
    out_index(out, e, ix);
    size_t n = (size_t)snprintf(idx, idxn, "[");
    for (int k = 0; k < out->ndim && n < idxn; k++) n += (size_t)snprintf(idx + n, idxn - n, "%s%lld", k ? "," : "", (long long)ix[k]);
    if (n < idxn) snprintf(idx + n, idxn - n, "]");
    n = decoded ? 0 : (size_t)snprintf(inputs, inn, "{");
    if (decoded) inputs[0] = '\0';
    int first = 1;
    for (int i = 0; i < c->ntensors && n < inn; i++) {
        const cf_tensor *t = &c->tensors[i];
        int64_t off;
        if (!t->present || t->output || !t->data || !bcast_offset(t, out, ix, &off)) continue;
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

static void set_worst(cf_worst *w, double u, int64_t case_index, int64_t k, const char *case_ref, const cf_case *c,
                      const cf_tensor *t, const uint8_t *gp, size_t es, double expected)
{
    w->has = true;
    w->ulp = u;
    w->case_index = case_index;
    w->element = k;
    snprintf(w->case_ref, sizeof w->case_ref, "%s", case_ref);
    element_context(c, t, k, w->index, sizeof w->index, w->inputs, sizeof w->inputs, false);
    bits_hex(w->got, sizeof w->got, gp, es);
    w->expected = expected;
}

/* msprobe's metrics (README "Reading a report"): elements whose exact value is NaN or ±Inf, or
 * rounds to ±Inf in the output dtype, are judged by the special-value rule only; a non-finite result for a finite exact value is an
 * infinite absolute and relative error, outside both ratios and outside the cosine sums. */
static void msprobe_add(cf_row *row, const cf_fmt *f, cf_dtype dt, double g, double x, double alt)
{
    /* where ops.md allows either branch (Softplus at the threshold), the one the result took */
    if (alt != x && isfinite(alt) && isfinite(g) && fabs(g - alt) < fabs(g - x)) x = alt;
    if (!isfinite(x) || fabs(x) >= f->ovf) return; /* the reference (exact, rounded) is NaN or ±Inf */
    row->ms_n++;
    if (!isfinite(g)) {
        row->ms_nonfinite_got++;
        row->ms_max_abs = row->ms_max_rel = INFINITY;
        return;
    }
    double d = fabs(g - x), rel = x != 0 ? d / fabs(x) : (d == 0 ? 0 : INFINITY);
    if (d > row->ms_max_abs) row->ms_max_abs = d;
    if (rel > row->ms_max_rel) row->ms_max_rel = rel;
    row->ms_within_1e3 += rel < 1e-3;
    row->ms_within_5e3 += rel < 5e-3;
    const double sc = dt == CF_F64 ? 0x1p-600 : 1; /* cosine is scale-free; f64 squares would overflow */
    g *= sc, x *= sc;
    row->ms_dot += g * x;
    row->ms_gg += g * g;
    row->ms_ee += x * x;
}

/* The plot variable of an output element: an input (broadcast to the output) times an optional
 * scalar attribute, or the cancellation ratio m/|exact|. */
typedef struct {
    const cf_tensor *t;
    double scale;
    bool cancellation;
} plot_input;

static double elem_double(cf_dtype dt, const uint8_t *p)
{
    cf_fmt f;
    if (cf_fmt_of(dt, &f)) return cf_decode(dt, p);
    switch (dt) {
    case CF_I8: return *(const int8_t *)p;
    case CF_U8:
    case CF_BOOL: return *p;
    case CF_I16: { int16_t v; memcpy(&v, p, 2); return v; }
    case CF_U16: { uint16_t v; memcpy(&v, p, 2); return v; }
    case CF_I32: { int32_t v; memcpy(&v, p, 4); return v; }
    case CF_U32: { uint32_t v; memcpy(&v, p, 4); return v; }
    case CF_I64: { int64_t v; memcpy(&v, p, 8); return (double)v; }
    case CF_U64: { uint64_t v; memcpy(&v, p, 8); return (double)v; }
    default: return NAN;
    }
}

static void plot_input_init(plot_input *pin, const cf_case *c, const cf_plot_spec *ps)
{
    pin->scale = 1;
    if (!strcmp(ps->x, "cancellation")) {
        pin->cancellation = true;
        return;
    }
    const cf_tensor *t = cf_case_tensor_c(c, ps->x);
    if (!t || !t->present || t->output || !t->data) return;
    pin->t = t;
    if (ps->scale[0]) {
        const cf_param *p = cf_case_param_c(c, ps->scale);
        uint8_t bytes[8];
        if (!p || p->is_null) pin->scale = NAN;
        else if (p->kind == CF_PARAM_F64) pin->scale = p->f64;
        else if (p->kind == CF_PARAM_SCALAR) {
            memcpy(bytes, &p->scalar_bits, 8);
            pin->scale = elem_double(p->scalar_dtype, bytes);
        } else pin->scale = NAN;
    }
}

static double plot_value(const plot_input *pin, const cf_tensor *out, int64_t e, double exact, double m)
{
    if (pin->cancellation) {
        if (!isfinite(exact)) return NAN;
        return exact != 0 ? fabs(m) / fabs(exact) : (m == 0 ? 1 : INFINITY);
    }
    const cf_tensor *t = pin->t;
    int64_t ix[CF_MAX_RANK], off;
    out_index(out, e, ix);
    if (!bcast_offset(t, out, ix, &off)) return NAN;
    return elem_double(t->dtype, (const uint8_t *)t->data + (size_t)off * cf_dtype_size(t->dtype)) * pin->scale;
}

/* What scoring one case carries from check to check: where its lines go and the row it feeds. */
typedef struct {
    const cf_case *c;
    const cf_tol *tol;
    int64_t case_index;
    const char *case_ref;
    cf_row *row; /* NULL: the verdict only */
    cf_case_verdict *v;
    cf_fail_cb cb;
    void *ctx;
    int max_lines;  /* element lines passed to cb */
    int lines;      /* element lines formatted so far */
    char head[320]; /* "FAIL <op> <dtype> <variant> <case>" */
} case_scorer;

/* One output being scored: the result, its golden values and its tensor in the case. */
typedef struct {
    const cf_run_out *o;
    const cf_expected_out *eo;
    const cf_tensor *t;
    cf_fmt f;
    size_t es;
    plot_input pin;
} out_scorer;

/* How the case ran: an error (timeout, crash) or a status other than the expected one. */
static void score_run(case_scorer *s, const cf_run_result *r)
{
    char line[1024];
    if (r->error[0]) {
        const char *kind = strstr(r->error, "timed out") ? "timeout" : strstr(r->error, "crashed") ? "crash" : "error";
        snprintf(line, sizeof line, "%s: %s", s->head, r->error);
        case_failure(s->v, kind, line, s->cb, s->ctx);
    } else if (!s->v->status_ok) {
        snprintf(line, sizeof line, "%s: status %d (phase %s), expected %d%s%s", s->head, r->status,
                 r->phase ? "execute" : "GetWorkspaceSize", s->c->expect_status, s->c->rule[0] ? " for rule " : "", s->c->rule);
        case_failure(s->v, "status", line, s->cb, s->ctx);
    }
}

/* A guard-zone finding: a case-level failure that also counts as a mismatch of its kind. */
static void guard_failure(case_scorer *s, cf_mismatch kind, const char *line)
{
    case_failure(s->v, cf_mismatch_name(kind), line, s->cb, s->ctx);
    if (s->v->first_kind == CF_MM_COUNT) s->v->first_kind = kind;
    if (s->row) s->row->mismatches[kind]++;
}

/* The guard zones of a case that ran: inputs left unchanged, nothing written outside an output. */
static void score_guards(case_scorer *s, const cf_run_result *r)
{
    char line[1024];
    if (r->modified_input) {
        snprintf(line, sizeof line, "%s: modified_input: the target changed %s", s->head, r->modified);
        guard_failure(s, CF_MM_modified_input, line);
    }
    if (r->ws_overrun) {
        snprintf(line, sizeof line, "%s: wrote_outside: its workspace: %s", s->head, r->ws_where);
        guard_failure(s, CF_MM_wrote_outside, line);
    }
    for (int oi = 0; oi < r->nout; oi++)
        if (r->out[oi].wrote_outside) {
            snprintf(line, sizeof line, "%s: wrote_outside: output %s: %s", s->head, r->out[oi].name, r->out[oi].outside);
            guard_failure(s, CF_MM_wrote_outside, line);
        }
}

/* The histogram bin of an element's ULP error (the last bin takes everything above its edge). */
static int hist_bin(double u)
{
    int bin = 0;
    while (bin + 1 < CF_HIST_BINS && u > cf_hist_edges[bin + 1]) bin++;
    if (u > cf_hist_edges[CF_HIST_BINS - 1]) bin = CF_HIST_BINS - 1;
    return bin;
}

/* A scored element's share of the row: histogram, ULP and relative-error sums, the worst
 * elements, msprobe's metrics and the plot.  A special value that matched counts as 0 ULP. */
static void row_add_element(case_scorer *s, const out_scorer *os, int64_t k, const cf_expect *ex, const cf_elem_score *sc)
{
    cf_row *row = s->row;
    const cf_run_out *o = os->o;
    const uint8_t *gp = o->bits + (size_t)k * os->es;
    double u = sc->special && sc->verdict == CF_EL_PASS ? 0 : sc->ulp, exact = os->eo->r[k];
    row->scored++;
    if (sc->signed_zero) row->signed_zero++;
    row->hist[hist_bin(u)]++;
    if (isfinite(u)) row->sum_ulp += u;
    if (isfinite(sc->scaled) && sc->scaled > row->max_scaled_ulp && !sc->special) row->max_scaled_ulp = sc->scaled;
    if (!sc->special) {
        row->sum_rel += sc->rel;
        if (sc->rel > row->max_rel) row->max_rel = sc->rel;
        if (sc->rel > (o->dtype == CF_F32 || o->dtype == CF_F64 ? 1e-4 : 1e-3)) row->rel_over++;
    }
    if (worse(u, s->case_index, k, &row->worst)) {
        row->max_ulp = u;
        set_worst(&row->worst, u, s->case_index, k, s->case_ref, s->c, os->t, gp, os->es, exact);
    }
    if (isfinite(u) && !sc->special && worse(u, s->case_index, k, &row->worst_finite))
        set_worst(&row->worst_finite, u, s->case_index, k, s->case_ref, s->c, os->t, gp, os->es, exact);
    msprobe_add(row, &os->f, o->dtype, cf_decode(o->dtype, gp), exact, ex->alt);
    if (row->has_plot) {
        double pv = os->pin.t || os->pin.cancellation ? plot_value(&os->pin, os->t, k, exact, os->eo->m[k]) : NAN;
        cf_row_plot_add(row, cf_plot_xbin(pv), cf_plot_ybin(u), 1);
    }
}

/* A failing element: counted, and its line formatted while it is among the first max_lines (or
 * is the case's first failure, which the verdict keeps even when no line is printed). */
static void element_failure(case_scorer *s, const out_scorer *os, int64_t k, const cf_elem_score *sc)
{
    cf_case_verdict *v = s->v;
    const cf_run_out *o = os->o;
    v->pass = false;
    if (v->failed_elements == 0 && v->first_kind == CF_MM_COUNT) v->first_kind = sc->kind;
    v->failed_elements++;
    if (s->row) {
        s->row->failed_elements++;
        s->row->mismatches[sc->kind]++;
    }
    if (s->lines >= s->max_lines && v->first_failure[0]) return;
    char idx[96], inputs[400], got[80], attrs[200], line[1024];
    element_context(s->c, os->t, k, idx, sizeof idx, inputs, sizeof inputs, true);
    value_text(got, sizeof got, o->dtype, o->bits + (size_t)k * os->es);
    params_text(s->c, attrs, sizeof attrs);
    snprintf(line, sizeof line, "%s %s%s%s %s got %s expected %.17g ulp %.4g scaled %.4g %s tol %g/%g", s->head, o->name,
             idx, attrs, inputs, got, os->eo->r[k], sc->ulp, sc->scaled, cf_mismatch_name(sc->kind), s->tol->max_ulp,
             s->tol->max_scaled_ulp);
    if (!v->first_failure[0]) {
        snprintf(v->first_failure, sizeof v->first_failure, "%s", line);
        snprintf(v->kind, sizeof v->kind, "%s", cf_mismatch_name(sc->kind));
    }
    if (s->cb && s->lines < s->max_lines) s->cb(s->ctx, line);
    s->lines++;
}

/* One output against its golden values, element by element (numerics.md §4).  Uncertain
 * elements (the oracle's own error too large) are counted but neither scored nor judged. */
static void score_output(case_scorer *s, const cf_expected *x, const cf_run_out *o)
{
    out_scorer os = {.o = o};
    for (int k = 0; k < x->nout; k++)
        if (!strcmp(x->out[k].name, o->name)) os.eo = &x->out[k];
    os.t = cf_case_tensor_c(s->c, o->name);
    if (!os.eo || !os.t || !cf_fmt_of(o->dtype, &os.f) || os.eo->n != o->n || (!o->bits && o->n > 0)) {
        char line[1024];
        snprintf(line, sizeof line, "%s: no golden values or no outputs for %s", s->head, o->name);
        case_failure(s->v, "error", line, s->cb, s->ctx);
        return;
    }
    os.es = cf_dtype_size(o->dtype);
    s->v->elements += o->n;
    if (s->row && s->row->has_plot) plot_input_init(&os.pin, s->c, &s->row->plot_spec);
    const cf_expected_out *eo = os.eo;
    for (int64_t k = 0; k < o->n; k++) {
        const uint8_t *gp = o->bits + (size_t)k * os.es;
        uint64_t gbits = 0;
        memcpy(&gbits, gp, os.es);
        cf_expect ex = {eo->r[k], eo->lo ? eo->lo[k] : 0, eo->m[k], eo->err ? eo->err[k] : -1,
                        eo->alt ? eo->alt[k] : eo->r[k], eo->masked ? eo->masked[k] != 0 : false};
        cf_elem_score sc = cf_score_element(&os.f, cf_decode(o->dtype, gp), gbits, &ex, s->tol);
        if (s->row) s->row->elements++;
        if (sc.verdict == CF_EL_UNCERTAIN) {
            if (s->row) s->row->uncertain++;
            continue;
        }
        if (s->row) row_add_element(s, &os, k, &ex, &sc);
        if (sc.verdict == CF_EL_FAIL && isfinite(sc.ulp) && !(sc.ulp <= s->v->max_ulp)) s->v->max_ulp = sc.ulp;
        if (sc.verdict == CF_EL_FAIL) element_failure(s, &os, k, &sc);
    }
}

void cf_score_case(const cf_case *c, const cf_expected *x, const cf_run_result *r, const cf_tol *tol,
                   int64_t case_index, const char *case_ref, cf_row *row, cf_case_verdict *v,
                   cf_fail_cb cb, void *ctx, int max_lines)
{
    memset(v, 0, sizeof *v);
    v->first_kind = CF_MM_COUNT;
    v->max_ulp = NAN;
    v->status_ok = !r->error[0] && r->status == c->expect_status;
    v->pass = true;
    if (row) row->cases++;
    case_scorer s = {.c = c, .tol = tol, .case_index = case_index, .case_ref = case_ref, .row = row, .v = v,
                     .cb = cb, .ctx = ctx, .max_lines = max_lines};
    case_head(c, case_ref, s.head, sizeof s.head);
    score_run(&s, r);
    /* the guard zones are checked on every case that ran, whatever its status */
    if (!r->error[0]) score_guards(&s, r);
    /* element scores only where the case was to succeed and did */
    if (v->status_ok && c->expect_status == 0)
        for (int oi = 0; oi < r->nout; oi++) score_output(&s, x, &r->out[oi]);
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
