/* The "softmax_mask" shape model (ScaledMaskedSoftmaxBackward): gradOutput, y and the output
 * of shape [B, N, S1, S2], S2 over its whole documented range; a bool mask that may broadcast on
 * dims 0 and 1, filled by the model with rows of every density; and, at a rate, a realistic y
 * (a softmax of random logits over each row's unmasked positions). */
#include <stdio.h>
#include <stdlib.h>

#include "model.h"

typedef struct {
    int mask, y;     /* tensors */
    unsigned bdims;  /* dims the mask may broadcast on (bit d) */
    double realistic_y_rate;
    int nlogit_scales;
    double logit_scales[4];
} softmax_fields;

typedef struct {
    bool realistic_y;
} softmax_state;

static fz_status load(cz_ld *L, cz_constraints *cz, const cJSON *m, const char *p)
{
    cz_model *cm = &cz->model;
    softmax_fields *f = calloc(1, sizeof *f);
    if (!f) return FZ_ERR_NOMEM;
    cm->priv = f;
    const cJSON *it;
    char q[CZ_PATHLEN];
    TRY(cz_model_tensors(L, cz, m, p));
    TRY(cz_tensor_member(L, cz, m, p, "mask", &f->mask));
    TRY(cz_tensor_member(L, cz, m, p, "y", &f->y));
    TRY(cz_dims_mask(L, m, p, "broadcast_dims", &f->bdims));
    TRY(cz_get_num(L, m, p, "realistic_y_rate", true, &f->realistic_y_rate));
    TRY(cz_member(L, m, p, "logit_scales", true, &it));
    cz_sub(q, p, "logit_scales");
    TRY(cz_as_array(L, it, q, 4, &f->nlogit_scales));
    if (f->nlogit_scales == 0) return cz_failf(L, q, "a non-empty array");
    for (int i = 0; i < f->nlogit_scales; i++) {
        char r[CZ_PATHLEN];
        cz_idx(r, q, i);
        const cJSON *v = cJSON_GetArrayItem(it, i);
        if (!cJSON_IsNumber(v) || !(v->valuedouble > 0)) return cz_failf(L, r, "a positive number");
        f->logit_scales[i] = v->valuedouble;
    }
    if (cz->tensors[cm->tensors[0]].rank_min != 4 || cz->tensors[cm->tensors[0]].rank_max != 4)
        return cz_failf(L, "tensors[0].rank", "[4, 4] for the softmax_mask model");
    cm->ref = cm->tensors[0];
    cm->self_filled = f->mask;
    return FZ_OK;
}

/* ScaledMaskedSoftmaxBackward: S2 over its whole documented range 0..max (the file's dims
 * limit), B, N, S1 from the tiers within the case's element budget. */
static fz_status draw(fz_gen *g)
{
    const cz_model *m = &g->cz->model;
    const softmax_fields *f = m->priv;
    const cz_tensor *t0 = &g->cz->tensors[m->tensors[0]];
    int64_t s2max = FZ_SMALL_BUDGET; /* no limit in the file: only the sampling budget */
    for (int k = 0; k < t0->ndims; k++)
        if (t0->dim_idx[k] == 3) s2max = t0->dim_max[k];
    int64_t g4[4], S2;
    double u = runif(&g->r);
    if (u < 0.22) S2 = rrange(&g->r, 1, 64 < s2max ? 64 : s2max);
    else if (u < 0.42) S2 = fz_tier_size(g, 1, s2max);
    else if (u < 0.54) S2 = rrange(&g->r, 65 < s2max ? 65 : 1, 512 < s2max ? 512 : s2max);
    else if (u < 0.74) S2 = rrange(&g->r, 513 < s2max ? 513 : 1, s2max - 4 > 513 ? s2max - 4 : s2max);
    else if (u < 0.84) S2 = s2max - rrange(&g->r, 0, 3 < s2max - 1 ? 3 : s2max - 1);
    else {
        int kmax = 1;
        while (kmax < 40 && ((int64_t)1 << (kmax + 1)) <= s2max) kmax++;
        S2 = ((int64_t)1 << rrange(&g->r, 1, kmax)) + rrange(&g->r, -1, 1);
        if (S2 > s2max) S2 = s2max;
    }
    int64_t budget = g->large ? FZ_LARGE_ELEMS + rrange(&g->r, 1, FZ_LARGE_ELEMS / 16)
                              : rbern(&g->r, 0.06) ? FZ_MEDIUM_BUDGET : FZ_SMALL_BUDGET;
    g4[0] = rbern(&g->r, 0.25) ? fz_tier_size(g, 1, 64) : rrange(&g->r, 1, 4);
    g4[1] = rbern(&g->r, 0.25) ? fz_tier_size(g, 1, 64) : rrange(&g->r, 1, 4);
    g4[2] = rbern(&g->r, 0.25) ? fz_tier_size(g, 1, 4096) : rrange(&g->r, 1, 16);
    g4[3] = S2;
    int64_t rows = budget / S2;
    fz_fit_budget(g4, 3, rows > 0 ? rows : 1);
    if (g->large && g4[0] * g4[1] * g4[2] * S2 <= FZ_LARGE_ELEMS)
        g4[2] = FZ_LARGE_ELEMS / (g4[0] * g4[1] * S2) + 1;
    if (!g->large && rbern(&g->r, 0.05)) g4[rrange(&g->r, 0, 3)] = 0;
    for (int i = 0; i < m->ntensors; i++) fz_set_shape(&g->c->tensors[m->tensors[i]], 4, g4);
    int64_t mk[4] = {g4[0], g4[1], g4[2], g4[3]};
    for (int d = 0; d < 2; d++)
        if ((f->bdims >> d) & 1u && rbern(&g->r, 0.35)) mk[d] = 1;
    fz_set_shape(&g->c->tensors[f->mask], 4, mk);
    /* a realistic y (rows that sum to 1 over the unmasked positions) needs all of y's elements */
    softmax_state *st = calloc(1, sizeof *st);
    if (!st) return FZ_ERR_NOMEM;
    g->mstate = st;
    st->realistic_y = rbern(&g->r, f->realistic_y_rate);
    if (st->realistic_y) {
        g->no_zero_stride[f->y] = true;
        snprintf(g->note, sizeof g->note, ", realistic softmax y");
    }
    return FZ_OK;
}

static bool same_shape(const cf_tensor *a, const cf_tensor *b)
{
    if (a->ndim != b->ndim) return false;
    for (int i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i]) return false;
    return true;
}

/* Mask rows of random density, some all-masked and some unmasked; then (realistic) y =
 * softmax of random logits over the unmasked positions of its row, masked positions 0. */
static void fill(fz_gen *g)
{
    const cz_model *m = &g->cz->model;
    const softmax_fields *f = m->priv;
    cf_tensor *mk = &g->c->tensors[f->mask], *y = &g->c->tensors[f->y];
    cf_tensor *go = &g->c->tensors[m->tensors[0]];
    if (mk->present && mk->ndim == 4) {
        int64_t S2 = mk->shape[3], rows = S2 > 0 ? cf_tensor_numel(mk) / S2 : 0;
        double dens = rbern(&g->r, 0.2) ? 0 : runif(&g->r);
        for (int64_t rw = 0; rw < rows; rw++) {
            double u = runif(&g->r), p = u < 0.1 ? 1.0 : u < 0.3 ? 0.0 : dens;
            for (int64_t j = 0; j < S2; j++)
                fz_store_bits(mk->dtype, mk->data, fz_view_index(mk, rw * S2 + j),
                              fz_bits_from_double(mk->dtype, rbern(&g->r, p) ? 1 : 0));
        }
    }
    if (!((const softmax_state *)g->mstate)->realistic_y || !y->present || !mk->present || !same_shape(y, go) || y->ndim != 4 || mk->ndim != 4 ||
        !cf_dtype_is_float(y->dtype))
        return;
    for (int d = 0; d < 4; d++)
        if (y->strides[d] == 0 && y->shape[d] > 1) return;
    int64_t B = y->shape[0], N = y->shape[1], S1 = y->shape[2], S2 = y->shape[3];
    double scale = f->logit_scales[rrange(&g->r, 0, f->nlogit_scales - 1)];
    double *row = malloc(sizeof(double) * (size_t)(S2 > 0 ? S2 : 1));
    if (!row) return;
    for (int64_t b = 0; b < B; b++)
        for (int64_t n = 0; n < N; n++)
            for (int64_t i = 0; i < S1; i++) {
                int64_t mb = mk->shape[0] == 1 ? 0 : b, mn = mk->shape[1] == 1 ? 0 : n;
                double mx = -INFINITY, sum = 0;
                for (int64_t j = 0; j < S2; j++) {
                    int64_t mi = ((mb * mk->shape[1] + mn) * mk->shape[2] + i) * S2 + j;
                    bool masked = fz_load_bits(mk->dtype, mk->data, fz_view_index(mk, mi)) != 0;
                    row[j] = masked ? -INFINITY : scale * rnormal(&g->r);
                    if (row[j] > mx) mx = row[j];
                }
                for (int64_t j = 0; j < S2; j++) {
                    row[j] = isinf(mx) ? 0 : fz_exp(row[j] - mx);
                    sum += row[j];
                }
                for (int64_t j = 0; j < S2; j++) {
                    int64_t yi = ((b * N + n) * S1 + i) * S2 + j;
                    fz_store_bits(y->dtype, y->data, fz_view_index(y, yi),
                                  fz_bits_from_double(y->dtype, sum > 0 ? row[j] / sum : 0));
                }
            }
    free(row);
}

static bool break_shape_broadcast_dims(fz_gen *g, const cz_rule *ru, int tgt)
{
    cf_case *c = g->c;
    /* the mask broadcasts the wrong way: a dim that must be full left at 1 (numpy would
     * accept it), a broadcast dim larger than gradOutput's 1, or a dim off by one */
    cf_tensor *mk = &c->tensors[tgt];
    const cf_tensor *to = &c->tensors[ru->to];
    if (mk->ndim != to->ndim || mk->ndim == 0) return false;
    int form = fz_edge_k(g) ? (g->k == 0 ? 0 : 2) : (int)rrange(&g->r, 0, 2);
    int cand[CF_MAX_RANK], nc = 0;
    for (int j = 0; j < mk->ndim; j++) {
        bool bd = (ru->bdims >> j) & 1u;
        if (form == 0 ? !bd && to->shape[j] > 1 : form == 1 ? bd && to->shape[j] == 1 : false) cand[nc++] = j;
    }
    if (nc) {
        int j = cand[rrange(&g->r, 0, nc - 1)];
        mk->shape[j] = form == 0 ? 1 : rrange(&g->r, 2, 4);
        return true;
    }
    int j = (int)rrange(&g->r, 0, mk->ndim - 1);
    int64_t gd = to->shape[j];
    if ((ru->bdims >> j) & 1u) mk->shape[j] = gd == 0 ? 2 : gd + 1;
    else mk->shape[j] = gd >= 1 && rbern(&g->r, 0.5) ? gd - 1 : gd + 1;
    return true;
}

/* softmax model: element counts, B / N / S1 tiers, and S2 over its documented range (vector
 * widths and powers of two +-1, the maximum). */
static void bins(fz_bins *b, const cz_constraints *cz, bool empty_ok)
{
    const cz_tensor *rt = &cz->tensors[cz->model.ref];
    static const double t[][2] = {{1, 63}, {64, 4095}, {4096, 16383}, {16384, 1048576}, {1048577, INFINITY}};
    fz_bins_add_numel(b, t, (int)(sizeof t / sizeof t[0]), empty_ok);
    fz_bin_group *g;
    int64_t s2max = 0;
    for (int k = 0; k < rt->ndims; k++)
        if (rt->dim_idx[k] == 3) s2max = rt->dim_max[k];
    static const char *const nm[] = {"B", "N", "S1", "S2"};
    for (int d = 0; d < 3; d++) {
        g = fz_bins_new_group(b, G_MODEL, d);
        if (empty_ok) fz_bins_add_range(b, g, nm[d], 0, 0);
        fz_bins_add_range(b, g, nm[d], 1, 1);
        fz_bins_add_range(b, g, nm[d], 2, d == 2 ? 16 : 4);
        fz_bins_add_range(b, g, nm[d], d == 2 ? 17 : 5, INFINITY);
    }
    g = fz_bins_new_group(b, G_MODEL, 3);
    if (empty_ok) fz_bins_add_range(b, g, "S2", 0, 0);
    if (s2max >= 4096) { /* the tiers of the documented range up to 4096 */
        static const double s2[][2] = {{1, 64}, {65, 512}, {513, 4092}, {4093, 4095}, {4096, 4096}};
        for (size_t i = 0; i < sizeof s2 / sizeof s2[0]; i++) fz_bins_add_range(b, g, "S2", s2[i][0], s2[i][1]);
    } else
        fz_bins_add_range(b, g, "S2", 1, INFINITY);
    fz_bins_add_bin(b, g, "S2", "vec+-1", BK_VEC, 0, 0);
    fz_bins_add_bin(b, g, "S2", "pow2+-1", BK_POW2, 0, 0);
    if (s2max > 0 && s2max != 4096) fz_bins_add_range(b, g, "S2", (double)s2max, (double)s2max);
}

/* the G_MODEL groups: B, N, S1, S2 (arg: the dim) */
static void mark(const fz_bins *b, const fz_bin_group *g, const cf_case *c, bool *seen)
{
    const cf_tensor *t = &c->tensors[fz_bins_cz(b)->model.tensors[0]];
    if (t->ndim == 4) fz_bins_mark(b, g, (double)t->shape[g->arg], seen);
}

/* softmax model: a broadcast mask, all-masked and unmasked rows, a y whose rows sum to 1. */
static void cover(const cz_model *m, const cf_case *c, bool *seen)
{
    const softmax_fields *f = m->priv;
    const cf_tensor *mk = &c->tensors[f->mask], *go = &c->tensors[m->tensors[0]], *y = &c->tensors[f->y];
    if (mk->present && go->present && mk->ndim == 4 && go->ndim == 4) {
        for (int d = 0; d < 2; d++)
            if (mk->shape[d] == 1 && go->shape[d] > 1) seen[FZ_COV_mask_broadcast] = true;
        int64_t S2 = mk->shape[3], rows = S2 > 0 ? cf_tensor_numel(mk) / S2 : 0;
        for (int64_t r = 0; r < rows && mk->data; r++) {
            int64_t cnt = 0;
            for (int64_t j = 0; j < S2; j++) cnt += fz_load_bits(mk->dtype, mk->data, fz_view_index(mk, r * S2 + j)) != 0;
            if (cnt == S2) seen[FZ_COV_mask_all_masked_row] = true;
            if (cnt == 0) seen[FZ_COV_mask_unmasked_row] = true;
        }
    }
    if (!(y->present && y->data && y->ndim == 4 && y->shape[3] >= 2 && cf_dtype_is_float(y->dtype))) return;
    int64_t S2 = y->shape[3], rows = cf_tensor_numel(y) / S2;
    for (int64_t r = 0; r < rows && !seen[FZ_COV_softmax_realistic_y]; r++) {
        double sum = 0;
        int nz = 0;
        for (int64_t j = 0; j < S2; j++) {
            double v = fz_double_from_bits(y->dtype, fz_load_bits(y->dtype, y->data, fz_view_index(y, r * S2 + j)));
            sum += v;
            nz += v != 0;
        }
        if (nz >= 2 && fabs(sum - 1) < 0.02 * (1 + 0.01 * (double)S2)) seen[FZ_COV_softmax_realistic_y] = true;
    }
}

const fz_model fz_model_softmax = {
    .load = load,
    .draw = draw,
    .fill = fill,
    .brk = {[CZ_RULE_SHAPE_BROADCAST_DIMS] = break_shape_broadcast_dims},
    .bins = bins,
    .mark = mark,
    .cover = cover,
};
