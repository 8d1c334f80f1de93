/* Structural coverage bins (fuzz.h, "coverage bins"): where in each documented range the valid
 * cases of one operator fell.  The bin set is derived from the constraint file -- rank range,
 * shape model, dim limits, attribute domains, value dists, branch-boundary edges -- and holds
 * only bins that a generator following the file reaches, so a bin with 0 hits is a gap.  Every
 * bin is classified from the case itself (shapes, params, stored values), not from what the
 * generator meant to do. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

typedef struct {
    char group[24];
    char name[64];
    fz_bin_kind kind;
    double lo, hi;
    int64_t hits;
} bin;

/* Bins and groups as many as the constraint file derives (grown while fz_bins_new builds them;
 * an allocation failure there makes it return NULL, never a truncated set). */
struct fz_bins {
    const cz_constraints *cz;
    int nbins, ngroups, bins_cap, groups_cap;
    bin *bins;
    fz_bin_group *groups;
    bool *seen;          /* per bin, scratch of fz_bins_add */
    bool oom;            /* a bin or group could not be added */
    fz_bin_group spill;  /* what an addition writes to after oom */
    int64_t cases, invalid;
};

/* arr (n used of *cap elements of sz bytes) with room for one more; NULL when it cannot grow
 * (arr is then still valid). */
static void *grow(void *arr, int n, int *cap, size_t sz)
{
    if (n < *cap) return arr;
    int nc = *cap ? 2 * *cap : 16;
    void *na = realloc(arr, sz * (size_t)nc);
    if (na) *cap = nc;
    return na;
}

fz_bin_group *fz_bins_new_group(fz_bins *b, fz_group_kind k, int arg)
{
    fz_bin_group *ng = grow(b->groups, b->ngroups, &b->groups_cap, sizeof *b->groups);
    if (!ng) {
        b->oom = true;
        return &b->spill;
    }
    b->groups = ng;
    fz_bin_group *g = &b->groups[b->ngroups++];
    memset(g, 0, sizeof *g);
    g->kind = k;
    g->arg = arg;
    g->first = b->nbins;
    return g;
}

void fz_bins_add_bin(fz_bins *b, fz_bin_group *g, const char *gname, const char *name, fz_bin_kind k, double lo, double hi)
{
    bin *nb = b->oom || g == &b->spill ? NULL : grow(b->bins, b->nbins, &b->bins_cap, sizeof *b->bins);
    if (!nb) {
        b->oom = true;
        return;
    }
    b->bins = nb;
    bin *x = &b->bins[b->nbins++];
    memset(x, 0, sizeof *x);
    snprintf(x->group, sizeof x->group, "%s", gname);
    snprintf(x->name, sizeof x->name, "%s:%s", gname, name);
    x->kind = k;
    x->lo = lo;
    x->hi = hi;
    g->n++;
}

void fz_bins_add_range(fz_bins *b, fz_bin_group *g, const char *gname, double lo, double hi)
{
    char nm[48];
    if (lo == hi) snprintf(nm, sizeof nm, "%.0f", lo);
    else if (isinf(hi)) snprintf(nm, sizeof nm, ">=%.0f", lo);
    else snprintf(nm, sizeof nm, "%.0f-%.0f", lo, hi);
    fz_bins_add_bin(b, g, gname, nm, BK_RANGE, lo, hi);
}

/* A multiple-of-step attribute in [lo, hi] around a pivot: lo, below the pivot, the pivot, above
 * it, hi (the middle three only when hi passes the pivot). */
void fz_bins_add_pivot_band(fz_bins *b, fz_bin_group *g, const char *gname, double lo, double step, double pivot, double hi)
{
    fz_bins_add_range(b, g, gname, lo, lo);
    if (hi > pivot) {
        fz_bins_add_range(b, g, gname, lo + step, pivot - step);
        fz_bins_add_range(b, g, gname, pivot, pivot);
        fz_bins_add_range(b, g, gname, pivot + step, hi - step);
    }
    fz_bins_add_range(b, g, gname, hi, hi);
}

/* Size tiers of a dim in [lo, hi]: 0, 1, tiny, vector-width neighbours, powers of two +-1, other. */
static void add_size_tiers(fz_bins *b, fz_bin_group *g, const char *gname, int64_t lo, int64_t hi, bool pow2)
{
    if (lo <= 0) fz_bins_add_range(b, g, gname, 0, 0);
    if (lo <= 1 && hi >= 1) fz_bins_add_range(b, g, gname, 1, 1);
    if (hi >= 2) fz_bins_add_range(b, g, gname, lo > 2 ? (double)lo : 2, hi < 6 ? (double)hi : 6);
    if (hi >= 33) fz_bins_add_bin(b, g, gname, "vec+-1", BK_VEC, 0, 0);
    if (pow2 && hi >= 65) fz_bins_add_bin(b, g, gname, "pow2+-1", BK_POW2, 0, 0);
}

static int64_t tensor_numel(const cf_tensor *t) { return t->present ? cf_tensor_numel(t) : 0; }

/* Magnitude bands of a real attribute (domain-derived: only bands the domain reaches). */
static const double bands[] = {0x1p-149, 1.1754943508222875e-38, 1e-30, 1e-22, 1e-14, 1e-7, 1e-5, 1e-3, 1e-1,
                               1, 10, 100, 1e4, 1e8, INFINITY};
#define NBANDS ((int)(sizeof bands / sizeof bands[0]) - 1)

static void band_name(char *out, size_t cap, int i)
{
    if (i == 0) snprintf(out, cap, "|x|<f32min_normal");
    else snprintf(out, cap, "|x|>=%.0e", bands[i]);
}

static bool domain_reaches(const cz_param *p, double lo, double hi, bool *zero, bool *neg, bool *nan, bool *inf)
{
    bool any = false;
    for (int i = 0; i < p->ndomain; i++) {
        const cz_domain_part *d = &p->domain[i];
        if (d->is_range) {
            double a = fabs(d->lo), c = fabs(d->hi), mn = a < c ? a : c, mx = a < c ? c : a;
            if (d->lo <= 0 && d->hi >= 0) mn = 0;
            if (d->lo < 0) *neg = true;
            if (mn == 0) *zero = true;
            if (mx > lo && mn < hi) any = true; /* more than a point of the band */
        } else
            for (int k = 0; k < d->nvalues; k++) {
                double v = d->values[k];
                if (isnan(v)) *nan = true;
                else if (isinf(v)) *inf = true;
                else if (v == 0) *zero = true;
                else {
                    if (v < 0) *neg = true;
                    if (fabs(v) >= lo && fabs(v) < hi) any = true;
                }
            }
    }
    return any;
}

static void add_param_bins(fz_bins *b, int pi)
{
    const cz_param *p = &b->cz->params[pi];
    fz_bin_group *g = fz_bins_new_group(b, G_PARAM, pi);
    bool zero = false, neg = false, nan = false, inf = false;
    for (int i = 0; i < NBANDS; i++) {
        char nm[48];
        if (!domain_reaches(p, bands[i], bands[i + 1], &zero, &neg, &nan, &inf)) continue;
        band_name(nm, sizeof nm, i);
        fz_bins_add_bin(b, g, p->name, nm, BK_ABS, i == 0 ? 0x1p-1074 : bands[i], bands[i + 1]);
    }
    if (zero) fz_bins_add_bin(b, g, p->name, "0", BK_RANGE, 0, 0);
    if (neg) fz_bins_add_bin(b, g, p->name, "<0", BK_RANGE, -INFINITY, -0x1p-1074);
    if (nan) fz_bins_add_bin(b, g, p->name, "nan", BK_NAN, 0, 0);
    if (inf) fz_bins_add_bin(b, g, p->name, "inf", BK_ABS, INFINITY, INFINITY);
}

void fz_bins_add_numel(fz_bins *b, const double (*t)[2], int n, bool empty_ok)
{
    fz_bin_group *g = fz_bins_new_group(b, G_NUMEL, 0);
    if (empty_ok) fz_bins_add_range(b, g, "numel", 0, 0);
    for (int i = 0; i < n; i++) fz_bins_add_range(b, g, "numel", t[i][0], t[i][1]);
}

const cz_constraints *fz_bins_cz(const fz_bins *b) { return b->cz; }

/* Element-wise models (same, broadcast): element counts around the driver's blocks of 1024 and
 * parallel grains of 16384, and the size tiers of the last three dims of the reference tensor. */
void fz_bins_elementwise(fz_bins *b, const cz_constraints *cz, bool empty_ok)
{
    int ref = cz->model.ref;
    const cz_tensor *rt = &cz->tensors[ref];
    static const double t[][2] = {{1, 1}, {2, 63}, {64, 1022}, {1023, 1025}, {1026, 16382}, {16383, 16385},
                                  {16386, 1048576}, {1048577, INFINITY}};
    fz_bins_add_numel(b, t, (int)(sizeof t / sizeof t[0]), empty_ok);
    for (int pos = 1; pos <= 3; pos++) {
        static const char *const nm[] = {"", "dim[-1]", "dim[-2]", "dim[outer]"};
        if (rt->rank_max < pos) break;
        fz_bin_group *g = fz_bins_new_group(b, G_DIM, pos);
        g->t = ref;
        add_size_tiers(b, g, nm[pos], empty_ok ? 0 : 1, 1025, true);
        fz_bins_add_range(b, g, nm[pos], 7, 1025); /* any size of the sampled range beyond tiny */
    }
}

/* A branch boundary x = P / Q on a tensor (Softplus: threshold / beta): bands of z = Q * x, and
 * both sides of the branch z > P. */
static void bins_product(fz_bins *b, const cz_constraints *cz, const cz_values *cv, const cz_edge *ed)
{
    char gn[24];
    snprintf(gn, sizeof gn, "%s*%s", cz->params[ed->pb].name, cz->tensors[cv->tensor].name);
    fz_bin_group *g = fz_bins_new_group(b, G_PRODUCT, 0);
    g->t = cv->tensor;
    g->pb = ed->pb;
    for (int i = 0; i < NBANDS; i++) {
        char nm[48];
        band_name(nm, sizeof nm, i);
        if (i > 0 && bands[i] < 1e-14) continue; /* z in [FLT_MIN, 1e-14): sigmoid(z) = 1/2 exactly */
        fz_bins_add_bin(b, g, gn, nm, BK_ABS, i == 0 ? 0x1p-1074 : bands[i], bands[i + 1]);
    }
    fz_bins_add_bin(b, g, gn, "0", BK_RANGE, 0, 0);
    fz_bins_add_bin(b, g, gn, "<0", BK_RANGE, -INFINITY, -0x1p-1074);
    fz_bins_add_bin(b, g, gn, "nan", BK_NAN, 0, 0);
    fz_bins_add_bin(b, g, gn, "inf", BK_ABS, INFINITY, INFINITY);
    g = fz_bins_new_group(b, G_BRANCH, 0);
    g->t = cv->tensor;
    g->pa = ed->pa;
    g->pb = ed->pb;
    snprintf(gn, sizeof gn, "branch");
    char nm[48];
    snprintf(nm, sizeof nm, "z>%s", cz->params[g->pa].name);
    fz_bins_add_bin(b, g, gn, nm, BK_RANGE, 1, 1);
    snprintf(nm, sizeof nm, "z<=%s", cz->params[g->pa].name);
    fz_bins_add_bin(b, g, gn, nm, BK_RANGE, 0, 0);
}

fz_bins *fz_bins_new(const cz_constraints *cz)
{
    if (!cz) return NULL;
    fz_bins *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    b->cz = cz;
    const cz_model *m = &cz->model;
    bool empty_ok = true; /* no empty_tensor rule: 0-element tensors are valid */
    for (int r = 0; r < cz->nrules; r++)
        if (cz->rules[r].kind == CZ_RULE_EMPTY_TENSOR) empty_ok = false;
    int ref = m->ref;
    const cz_tensor *rt = &cz->tensors[ref];
    fz_bin_group *g = fz_bins_new_group(b, G_RANK, ref);
    for (int r = rt->rank_min; r <= rt->rank_max; r++) fz_bins_add_range(b, g, "rank", r, r);
    fz_model_of(m->kind)->bins(b, cz, empty_ok);
    /* real attributes: magnitude bands, 0, negative, NaN, Inf as the domain reaches them */
    for (int i = 0; i < cz->nparams; i++)
        if (!cz->params[i].derived && (cz->params[i].kind == CF_PARAM_F64 || cz->params[i].kind == CF_PARAM_SCALAR))
            add_param_bins(b, i);
    for (int v = 0; v < cz->nvalues; v++) {
        const cz_values *cv = &cz->values[v];
        for (int e = 0; e < cv->nedges; e++)
            if (cv->edges[e].kind == CZ_EDGE_DIV) {
                bins_product(b, cz, cv, &cv->edges[e]);
                break;
            }
        /* integer values of magnitude >= 2^31 drawn by a dist of integer dtypes */
        for (int d = 0; d < cv->ndists; d++)
            if (cv->dists[d].dtypes && cv->dists[d].b >= 2147483648.0 && cv->dists[d].kind != CZ_DIST_NORMAL) {
                char gn[24];
                snprintf(gn, sizeof gn, "%s:int", cz->tensors[cv->tensor].name);
                g = fz_bins_new_group(b, G_BIGINT, 0);
                g->t = cv->tensor;
                fz_bins_add_bin(b, g, gn, "|x|>=2^31", BK_RANGE, 1, 1);
                break;
            }
    }
    b->seen = calloc((size_t)(b->nbins ? b->nbins : 1), sizeof *b->seen);
    if (b->oom || !b->seen) {
        fz_bins_free(b);
        return NULL;
    }
    return b;
}

void fz_bins_free(fz_bins *b)
{
    if (!b) return;
    free(b->bins);
    free(b->groups);
    free(b->seen);
    free(b);
}

static bool is_vec(double v)
{
    static const int vs[] = {7, 8, 9, 15, 16, 17, 31, 32, 33};
    for (size_t i = 0; i < sizeof vs / sizeof vs[0]; i++)
        if (v == vs[i]) return true;
    return false;
}

static bool is_pow2nb(double v)
{
    for (int k = 6; k < 62; k++) {
        double p = ldexp(1, k);
        if (v == p - 1 || v == p || v == p + 1) return true;
    }
    return false;
}

static bool bin_has(const bin *x, double v)
{
    switch (x->kind) {
    case BK_RANGE: return v >= x->lo && v <= x->hi;
    case BK_VEC: return is_vec(v);
    case BK_POW2: return is_pow2nb(v);
    case BK_NAN: return isnan(v);
    case BK_ABS: return fabs(v) >= x->lo && (fabs(v) < x->hi || (isinf(x->hi) && isinf(v) && isinf(x->lo)));
    }
    return false;
}

void fz_bins_mark(const fz_bins *b, const fz_bin_group *g, double v, bool *seen)
{
    for (int i = g->first; i < g->first + g->n; i++)
        if (bin_has(&b->bins[i], v)) seen[i] = true;
}

/* Value bins of a tensor's viewed elements: bands of z = Q·x (G_PRODUCT), both sides of the
 * branch z > P (G_BRANCH), an integer of magnitude >= 2^31 (G_BIGINT). */
static void mark_values(const fz_bins *b, const fz_bin_group *g, const cf_case *c, bool *seen)
{
    const cf_tensor *t = &c->tensors[g->t];
    if (!t->present || !t->data) return;
    if (g->kind == G_BIGINT && cf_dtype_is_float(t->dtype)) return;
    double q = g->kind == G_BIGINT ? 0 : fz_param_value(&c->params[g->pb]);
    double thr = g->kind == G_BRANCH ? fz_param_value(&c->params[g->pa]) : 0;
    int64_t n = cf_tensor_numel(t);
    bool done_pos = false, done_neg = false;
    for (int64_t e = 0; e < n; e++) {
        double x = fz_double_from_bits(t->dtype, fz_load_bits(t->dtype, t->data, fz_view_index(t, e)));
        if (g->kind == G_BIGINT) {
            if (fabs(x) < 2147483648.0) continue;
            fz_bins_mark(b, g, 1, seen);
            return;
        }
        double z = q * x;
        if (g->kind == G_PRODUCT) fz_bins_mark(b, g, z, seen);
        else if (z > thr && !done_pos) {
            fz_bins_mark(b, g, 1, seen);
            done_pos = true;
        } else if (!(z > thr) && !done_neg) {
            fz_bins_mark(b, g, 0, seen);
            done_neg = true;
        }
        if (g->kind == G_BRANCH && done_pos && done_neg) return;
    }
}

static int64_t max_numel(const cf_case *c)
{
    int64_t mx = 0;
    for (int i = 0; i < c->ntensors; i++)
        if (tensor_numel(&c->tensors[i]) > mx) mx = tensor_numel(&c->tensors[i]);
    return mx;
}

void fz_bins_add(fz_bins *b, const cf_case *c)
{
    if (!b || !c) return;
    if (c->expect_status != 0 || c->op != b->cz->op) {
        b->invalid++;
        return;
    }
    bool *seen = b->seen;
    memset(seen, 0, sizeof *seen * (size_t)b->nbins);
    const fz_model *M = fz_model_of(b->cz->model.kind);
    for (int gi = 0; gi < b->ngroups; gi++) {
        const fz_bin_group *g = &b->groups[gi];
        const cf_tensor *t = g->kind == G_DIM ? &c->tensors[g->t] : NULL;
        switch (g->kind) {
        case G_RANK: fz_bins_mark(b, g, c->tensors[g->arg].ndim, seen); break;
        case G_NUMEL: fz_bins_mark(b, g, (double)max_numel(c), seen); break;
        case G_DIM:
            if (g->arg < 3) {
                if (t->ndim >= g->arg) fz_bins_mark(b, g, (double)t->shape[t->ndim - g->arg], seen);
            } else
                for (int d = 0; d + 2 < t->ndim; d++) fz_bins_mark(b, g, (double)t->shape[d], seen);
            break;
        case G_MODEL: M->mark(b, g, c, seen); break;
        case G_PARAM:
            if (!c->params[g->arg].is_null) fz_bins_mark(b, g, fz_param_value(&c->params[g->arg]), seen);
            break;
        case G_PRODUCT:
        case G_BRANCH:
        case G_BIGINT: mark_values(b, g, c, seen); break;
        }
    }
    b->cases++;
    for (int i = 0; i < b->nbins; i++) b->bins[i].hits += seen[i];
}

int fz_bins_count(const fz_bins *b) { return b ? b->nbins : 0; }
const char *fz_bins_name(const fz_bins *b, int i) { return b && i >= 0 && i < b->nbins ? b->bins[i].name : NULL; }
const char *fz_bins_group(const fz_bins *b, int i) { return b && i >= 0 && i < b->nbins ? b->bins[i].group : NULL; }
int64_t fz_bins_hits(const fz_bins *b, int i) { return b && i >= 0 && i < b->nbins ? b->bins[i].hits : -1; }
int64_t fz_bins_cases(const fz_bins *b) { return b ? b->cases : 0; }
int64_t fz_bins_invalid(const fz_bins *b) { return b ? b->invalid : 0; }
cf_op fz_bins_op(const fz_bins *b) { return b ? b->cz->op : CF_OP_COUNT; }

int fz_bins_find(const fz_bins *b, const char *name)
{
    for (int i = 0; b && name && i < b->nbins; i++)
        if (!strcmp(b->bins[i].name, name)) return i;
    return -1;
}

int fz_bins_missing(const fz_bins *b)
{
    int n = 0;
    for (int i = 0; b && i < b->nbins; i++) n += b->bins[i].hits == 0;
    return n;
}

fz_status fz_bins_merge(fz_bins *dst, const fz_bins *src)
{
    if (!dst || !src || dst->cz->op != src->cz->op || dst->nbins != src->nbins) return FZ_ERR_ARG;
    for (int i = 0; i < dst->nbins; i++)
        if (strcmp(dst->bins[i].name, src->bins[i].name)) return FZ_ERR_ARG;
    for (int i = 0; i < dst->nbins; i++) dst->bins[i].hits += src->bins[i].hits;
    dst->cases += src->cases;
    dst->invalid += src->invalid;
    return FZ_OK;
}

struct cJSON *fz_bins_to_cjson(const fz_bins *b)
{
    if (!b) return NULL;
    cJSON *o = cJSON_CreateObject(), *arr = cJSON_CreateArray(), *miss = cJSON_CreateArray();
    if (!o || !arr || !miss) {
        cJSON_Delete(o);
        cJSON_Delete(arr);
        cJSON_Delete(miss);
        return NULL;
    }
    cJSON_AddStringToObject(o, "op", cf_op_name(b->cz->op));
    cJSON_AddNumberToObject(o, "cases", (double)b->cases);
    cJSON_AddNumberToObject(o, "invalid_cases", (double)b->invalid);
    for (int i = 0; i < b->nbins; i++) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "group", b->bins[i].group);
        cJSON_AddStringToObject(x, "name", b->bins[i].name);
        cJSON_AddNumberToObject(x, "hits", (double)b->bins[i].hits);
        cJSON_AddItemToArray(arr, x);
        if (b->bins[i].hits == 0) cJSON_AddItemToArray(miss, cJSON_CreateString(b->bins[i].name));
    }
    cJSON_AddItemToObject(o, "bins", arr);
    cJSON_AddItemToObject(o, "missing", miss);
    return o;
}

char *fz_bins_json(const fz_bins *b)
{
    cJSON *o = fz_bins_to_cjson(b);
    char *s = o ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    return s;
}
