/* The "nsa_tnd" shape model (NsaCompressGrad, TND layout): the block size l, the stride d, the
 * head dim D, the heads N and the batch lengths (actSeqLen, cumulative) decide every shape --
 * input and inputGrad [T, N, D], outputGrad [C, N, D] with C the windows of all batches, weight
 * and weightGrad [l, N] -- and the attributes l, d and actSeqLen follow from them. */
#include <stdlib.h>
#include <string.h>

#include "model.h"

typedef struct {
    int og, in, w, ig, wg; /* tensors */
    int p_seq, p_l, p_d;   /* params */
    int64_t block_multiple, D_multiple;
    int64_t l_range[2], d_range[2], D_range[2], N_range[2], batches[2], max_elements;
    double null_seq_rate;
} nsa_fields;

#define NSA_MAX_BATCHES 1024

typedef struct {
    int64_t l, d, D, N, nb, S[NSA_MAX_BATCHES];
    bool seq_null;
} nsa_state;

static fz_status load_int_member(cz_ld *L, const cJSON *m, const char *p, const char *name, int64_t lo, int64_t hi,
                                 int64_t *out)
{
    const cJSON *it;
    char q[CZ_PATHLEN];
    TRY(cz_member(L, m, p, name, true, &it));
    cz_sub(q, p, name);
    return cz_as_int(L, it, q, lo, hi, out);
}

static fz_status load(cz_ld *L, cz_constraints *cz, const cJSON *m, const char *p)
{
    nsa_fields *cm = calloc(1, sizeof *cm);
    if (!cm) return FZ_ERR_NOMEM;
    cz->model.priv = cm;
    TRY(cz_tensor_member(L, cz, m, p, "outputGrad", &cm->og));
    TRY(cz_tensor_member(L, cz, m, p, "input", &cm->in));
    TRY(cz_tensor_member(L, cz, m, p, "weight", &cm->w));
    TRY(cz_tensor_member(L, cz, m, p, "inputGrad", &cm->ig));
    TRY(cz_tensor_member(L, cz, m, p, "weightGrad", &cm->wg));
    const char *pn[3] = {"actSeqLen", "l", "d"};
    int *pi[3] = {&cm->p_seq, &cm->p_l, &cm->p_d};
    for (int i = 0; i < 3; i++) {
        const cJSON *it;
        char q[CZ_PATHLEN];
        TRY(cz_member(L, m, p, pn[i], true, &it));
        cz_sub(q, p, pn[i]);
        TRY(cz_param_ref(L, cz, it, q, pi[i]));
    }
    if (cz->params[cm->p_seq].kind != CF_PARAM_INTARRAY) return cz_failf(L, "shape_model.actSeqLen", "an intarray parameter");
    if (cz->params[cm->p_l].kind != CF_PARAM_INT || cz->params[cm->p_d].kind != CF_PARAM_INT)
        return cz_failf(L, "shape_model.l", "int parameters for l and d");
    TRY(load_int_member(L, m, p, "block_multiple", 1, 1024, &cm->block_multiple));
    TRY(load_int_member(L, m, p, "D_multiple", 1, 1024, &cm->D_multiple));
    TRY(cz_get_range(L, m, p, "l_range", 1, 4096, cm->l_range));
    TRY(cz_get_range(L, m, p, "d_range", 1, 4096, cm->d_range));
    TRY(cz_get_range(L, m, p, "D_range", 1, 4096, cm->D_range));
    TRY(cz_get_range(L, m, p, "N_range", 1, 4096, cm->N_range));
    TRY(cz_get_range(L, m, p, "batches", 1, 1024, cm->batches));
    TRY(load_int_member(L, m, p, "max_elements", 1024, 1 << 24, &cm->max_elements));
    TRY(cz_get_num(L, m, p, "null_actseqlen_rate", true, &cm->null_seq_rate));
    if (cm->l_range[1] <= cm->d_range[0]) return cz_failf(L, "shape_model.l_range", "room for l > d");
    cz->model.ref = cm->in;
    return FZ_OK;
}

/* The windows of a batch of S tokens (block l, stride d). */
static int64_t nblk(int64_t S, int64_t l, int64_t d) { return (l > 0 && d > 0 && S >= l) ? (S - l) / d + 1 : 0; }

/* l and d (multiples of block_multiple, l > d; d the smallest, l minus one block, or between),
 * D, N, a NULL actSeqLen or not, and the batch count; returns the smallest l. */
static int64_t nsa_dims(fz_gen *g, const nsa_fields *m, nsa_state *st)
{
    int64_t bm = m->block_multiple, Dm = m->D_multiple;
    int64_t llo = m->l_range[0] > m->d_range[0] + bm ? m->l_range[0] : m->d_range[0] + bm;
    llo = (llo + bm - 1) / bm * bm;
    st->l = fz_tier_multiple(g, llo, m->l_range[1] > llo ? m->l_range[1] : llo, bm);
    int64_t dhi = st->l - bm < m->d_range[1] ? st->l - bm : m->d_range[1];
    double u = runif(&g->r);
    if (u < 0.2) st->d = (m->d_range[0] + bm - 1) / bm * bm;     /* the smallest stride */
    else if (u < 0.4) st->d = dhi / bm * bm;                        /* the largest: l - d minimal */
    else st->d = fz_tier_multiple(g, m->d_range[0], dhi, bm);
    st->D = fz_tier_multiple(g, m->D_range[0], m->D_range[1], Dm);
    st->N = fz_tier_size(g, m->N_range[0], m->N_range[1]);
    st->seq_null = rbern(&g->r, m->null_seq_rate);
    st->nb = st->seq_null ? 1 : rbern(&g->r, 0.85) ? rrange(&g->r, m->batches[0], m->batches[1] < 6 ? m->batches[1] : 6)
                                              : fz_tier_size(g, m->batches[0], m->batches[1]);
    if (st->nb > NSA_MAX_BATCHES) st->nb = NSA_MAX_BATCHES;
    return llo;
}

/* The case's element budget (~8 % of cases 8 x max_elements, 1.5 % 32 x, the scheduled large
 * tier), N and D (and l, d for many batches) shrunk until one window fits it; returns the token
 * cap T <= budget / (N D), and *Tmin the tokens the large tier needs. */
static int64_t nsa_budget(fz_gen *g, const nsa_fields *m, nsa_state *st, int64_t llo, int64_t *Tmin)
{
    int64_t bm = m->block_multiple, Dm = m->D_multiple;
    double cu = runif(&g->r);
    int64_t cap = g->large ? FZ_LARGE_ELEMS + FZ_LARGE_ELEMS / 16
                  : cu < 0.015 ? 32 * m->max_elements
                  : cu < 0.095 ? 8 * m->max_elements : m->max_elements;
    int64_t Dmin = (m->D_range[0] + Dm - 1) / Dm * Dm;
    bool many = st->nb > 6; /* many batches: short ones, small l, N, D, so that they fit */
    if (many) {
        if (cap < 8 * m->max_elements) cap = 8 * m->max_elements;
        st->N = m->N_range[0];
        st->D = Dmin;
        if (st->nb * st->l > 2 * cap / (st->N * st->D)) {
            st->l = llo;
            st->d = (m->d_range[0] + bm - 1) / bm * bm;
        }
    }
    /* a D in the upper half of its range keeps its width (kernels change paths for wide rows):
     * one head, and the budget grows to one window of it when that fits 32 x max_elements */
    if (!many && 2 * st->D > m->D_range[1] && cap < st->l * st->D && st->l * st->D <= 32 * m->max_elements) {
        cap = st->l * st->D;
        st->N = m->N_range[0];
    }
    while (cap / (st->N * st->D) < st->l) { /* room for one window: fewer heads, then a narrower D */
        if (st->N > m->N_range[0]) st->N = (st->N + 1) / 2 > m->N_range[0] ? (st->N + 1) / 2 : m->N_range[0];
        else if (st->D > Dmin) st->D = st->D / 2 / Dm * Dm > Dmin ? st->D / 2 / Dm * Dm : Dmin;
        else break;
    }
    int64_t Tcap = cap / (st->N * st->D);
    *Tmin = g->large ? FZ_LARGE_ELEMS / (st->N * st->D) + 1 : cap > 8 * m->max_elements ? cap / 4 / (st->N * st->D) : 0;
    if (Tcap < st->l) Tcap = st->l;
    if (*Tmin > Tcap) *Tmin = Tcap;
    return Tcap;
}

/* The batch lengths: empty, shorter than l, l, whole windows, windows and a tail (many batches:
 * mostly short ones), within [Tmin, Tcap] tokens; at least one window. */
static void nsa_batches(fz_gen *g, nsa_state *st, int64_t Tmin, int64_t Tcap)
{
    bool many = st->nb > 6;
    int64_t T = 0, C = 0;
    int nb = (int)st->nb;
    for (int b = 0; b < nb; b++) {
        double v = runif(&g->r);
        int64_t S;
        if (st->seq_null) v = 0.5 + 0.5 * v;
        if (many && b != nb - 1) v *= 0.5;
        if (v < 0.15) S = 0;
        else if (v < 0.35) S = rrange(&g->r, 1, st->l - 1);
        else if (v < 0.5) S = st->l;
        else if (v < 0.75) S = st->l + st->d * fz_tier_size(g, 1, 64);
        else S = st->l + st->d * fz_tier_size(g, 0, 16) + rrange(&g->r, 1, st->d - 1);
        if (b == nb - 1 && T + S < Tmin) S = Tmin - T; /* the large tier: the last batch takes the rest */
        if (T + S > Tcap) {                           /* the budget ends the batches here */
            S = Tcap - T;
            nb = b + 1;
        }
        st->S[b] = S;
        T += S;
        C += nblk(S, st->l, st->d);
    }
    st->nb = nb;
    if (C == 0) { /* at least one window: one batch of length l (others emptied if needed) */
        int b = (int)rrange(&g->r, 0, st->nb - 1);
        T += st->l - st->S[b];
        st->S[b] = st->l;
        if (T > Tcap)
            for (int i = 0; i < st->nb; i++)
                if (i != b) st->S[i] = 0;
    }
}

static void nsa_draw(fz_gen *g)
{
    const nsa_fields *m = g->cz->model.priv;
    nsa_state *st = g->mstate;
    int64_t llo = nsa_dims(g, m, st), Tmin = 0;
    int64_t Tcap = nsa_budget(g, m, st, llo, &Tmin);
    nsa_batches(g, st, Tmin, Tcap);
}

static void nsa_apply(fz_gen *g)
{
    const nsa_fields *m = g->cz->model.priv;
    nsa_state *st = g->mstate;
    int64_t T = 0, C = 0;
    for (int b = 0; b < st->nb; b++) {
        T += st->S[b];
        C += nblk(st->S[b], st->l, st->d);
    }
    int64_t og[3] = {C, st->N, st->D}, in[3] = {T, st->N, st->D}, w[2] = {st->l, st->N};
    fz_set_shape(&g->c->tensors[m->og], 3, og);
    fz_set_shape(&g->c->tensors[m->in], 3, in);
    fz_set_shape(&g->c->tensors[m->ig], 3, in);
    fz_set_shape(&g->c->tensors[m->w], 2, w);
    fz_set_shape(&g->c->tensors[m->wg], 2, w);
    cf_param *pl = &g->c->params[m->p_l], *pd = &g->c->params[m->p_d], *ps = &g->c->params[m->p_seq];
    pl->i = st->l;
    pd->i = st->d;
    free(ps->arr);
    ps->arr = NULL;
    ps->arr_len = 0;
    ps->is_null = st->seq_null;
    if (!st->seq_null) {
        ps->arr = malloc(sizeof(int64_t) * (size_t)st->nb);
        if (!ps->arr) return;
        ps->arr_len = st->nb;
        int64_t acc = 0;
        for (int b = 0; b < st->nb; b++) ps->arr[b] = (acc += st->S[b]);
    }
}

static int64_t nsa_C(const fz_gen *g)
{
    const nsa_state *st = g->mstate;
    int64_t C = 0;
    for (int b = 0; b < st->nb; b++) C += nblk(st->S[b], st->l, st->d);
    return C;
}

static bool break_nsa_block_multiple(fz_gen *g, const cz_rule *ru, int tgt)
{
    (void)tgt;
    cf_case *c = g->c;
    const nsa_fields *m = g->cz->model.priv;
    nsa_state *st = g->mstate;
    /* l or d off the multiple by one or by half of it, or d = 0 / negative (kept l > d) */
    int64_t bm = m->block_multiple;
    int form = g->k == 0 ? 2 : g->k == 1 ? 5 : (int)rrange(&g->r, 0, 5);
    if (form == 5) { /* d <= 0: the parameter only; shapes stay those of the valid d.  d = 0
                        and d = -16 are multiples that are not positive: only where the
                        profile keeps the rule's base status (cann-kernel's 561002 is a
                        tiling check of the multiple); d = -1 breaks both */
        nsa_apply(g);
        bool base = g->pf->status[g->rule] == ru->status;
        c->params[m->p_d].i = base && rbern(&g->r, 0.5) ? 0 : base && rbern(&g->r, 0.5) ? -bm : -1;
        return true;
    }
    if (form == 0) st->l += 1;
    else if (form == 1) st->l -= 1;
    else if (form == 2) st->d += 1;
    else if (form == 3) st->d -= 1;
    else if (rbern(&g->r, 0.5)) st->l += bm / 2;
    else st->d -= bm / 2;
    if (st->d <= 0 || st->l <= st->d || (st->l % bm == 0 && st->d % bm == 0)) return false;
    nsa_apply(g);
    return true;
}

static bool break_nsa_l_gt_d(fz_gen *g, const cz_rule *ru, int tgt)
{
    (void)ru;
    (void)tgt;
    const nsa_fields *m = g->cz->model.priv;
    nsa_state *st = g->mstate;
    double u = g->k == 0 ? 0.25 : g->k == 1 ? 0.6 : runif(&g->r);
    if (u < 0.5) st->d = st->l;           /* the first invalid stride */
    else if (u < 0.75) st->l = st->d;     /* or block */
    else st->d = st->l + m->block_multiple;
    nsa_apply(g);
    return true;
}

static bool break_nsa_d_multiple(fz_gen *g, const cz_rule *ru, int tgt)
{
    (void)ru;
    (void)tgt;
    const nsa_fields *m = g->cz->model.priv;
    nsa_state *st = g->mstate;
    int64_t Dm = m->D_multiple, k = g->k < 2 ? g->k : rrange(&g->r, 0, 2);
    int64_t delta = k == 0 ? 1 : k == 1 ? -1 : (Dm / 2 ? Dm / 2 : 1);
    if (st->D + delta <= 0) delta = 1;
    st->D += delta;
    if (st->D % Dm == 0) return false;
    nsa_apply(g);
    return true;
}

static bool break_nsa_actseqlen(fz_gen *g, const cz_rule *ru, int tgt)
{
    (void)ru;
    (void)tgt;
    cf_case *c = g->c;
    const nsa_fields *m = g->cz->model.priv;
    /* from the valid cumulative array: empty, a negative entry, one step down by one, or
     * the last entry T +- 1 */
    cf_param *ps = &c->params[m->p_seq];
    int64_t T = c->tensors[m->in].shape[0];
    int64_t n = ps->is_null ? 1 : ps->arr_len;
    int64_t *arr = malloc(sizeof(int64_t) * (size_t)(n + 1));
    if (!arr) return false;
    if (ps->is_null) arr[0] = T;
    else memcpy(arr, ps->arr, sizeof(int64_t) * (size_t)n);
    int form = g->k == 0 ? 3 : g->k == 1 ? 2 : (int)rrange(&g->r, 0, 3);
    if (form == 0) n = 0; /* empty (not NULL) */
    else if (form == 1) arr[0] = -1;
    else if (form == 2) { /* decreasing: arr[i] = arr[i-1] - 1 (or a leading T + 1) */
        int64_t cand[NSA_MAX_BATCHES], nc = 0;
        for (int64_t i = 1; i < n; i++)
            if (arr[i - 1] >= 1) cand[nc++] = i;
        if (nc) {
            int64_t i = cand[rrange(&g->r, 0, nc - 1)];
            arr[i] = arr[i - 1] - 1;
        } else {
            memmove(arr + 1, arr, sizeof(int64_t) * (size_t)n);
            arr[0] = T + 1;
            n++;
        }
    } else
        arr[n - 1] = T >= 1 && (n < 2 || arr[n - 2] <= T - 1) && rbern(&g->r, 0.5) ? T - 1 : T + 1;
    free(ps->arr);
    ps->arr = arr;
    ps->arr_len = n;
    ps->is_null = false;
    return true;
}

static bool break_nsa_c(fz_gen *g, const cz_rule *ru, int tgt)
{
    (void)ru;
    (void)tgt;
    cf_case *c = g->c;
    const nsa_fields *m = g->cz->model.priv;
    nsa_state *st = g->mstate;
    /* C +- 1, or C by a plausible wrong window count: (S - l) / d without the + 1, with a
     * partial tail window, or S / d */
    cf_tensor *og = &c->tensors[m->og];
    int64_t C = og->shape[0], alt[3] = {0, 0, 0};
    for (int b = 0; b < st->nb; b++) {
        int64_t S = st->S[b];
        if (S >= st->l) {
            alt[0] += (S - st->l) / st->d;
            alt[1] += (S - st->l + st->d - 1) / st->d + 1;
        }
        alt[2] += S / st->d;
    }
    int64_t cand[3], nc = 0;
    for (int i = 0; i < 3; i++)
        if (alt[i] >= 1 && alt[i] != C) cand[nc++] = alt[i];
    if (nc && (g->k == 1 || (g->k > 1 && rbern(&g->r, 0.5)))) og->shape[0] = cand[rrange(&g->r, 0, nc - 1)];
    else if (C >= 2 && g->k > 1 && rbern(&g->r, 0.5)) og->shape[0] = C - 1;
    else og->shape[0] = C + 1;
    return true;
}

static bool break_nsa_dims(fz_gen *g, const cz_rule *ru, int tgt)
{
    (void)ru;
    (void)tgt;
    cf_case *c = g->c;
    const nsa_fields *m = g->cz->model.priv;
    /* outputGrad's N or D off (by one head, by one D step, or N = 1 that would
     * broadcast), weight not [l, N]: l + 1 rows, N + 1 or 1 columns (broadcastable,
     * as the CANN page's wording suggests), or transposed [N, l] */
    cf_tensor *og = &c->tensors[m->og], *w = &c->tensors[m->w], *wg = &c->tensors[m->wg];
    for (int tries = 0; tries < 8; tries++) {
        int form = tries == 0 && g->k < 2 ? (g->k == 0 ? 6 : 0) : (int)rrange(&g->r, 0, 7);
        if (form == 0) og->shape[1] += 1;
        else if (form == 1 && og->shape[1] > 1) og->shape[1] = 1;
        else if (form == 2) og->shape[2] += m->D_multiple;
        else if (form == 3 && og->shape[2] > m->D_multiple) og->shape[2] -= m->D_multiple;
        else if (form == 4) w->shape[0] += 1;
        else if (form == 5) w->shape[1] += 1;
        else if (form == 6 && w->shape[1] > 1) w->shape[1] = 1;
        else if (form == 7 && w->shape[0] != w->shape[1]) {
            int64_t x = w->shape[0];
            w->shape[0] = w->shape[1];
            w->shape[1] = x;
        } else
            continue;
        wg->shape[0] = w->shape[0];
        wg->shape[1] = w->shape[1];
        return true;
    }
    og->shape[1] += 1;
    return true;
}

static fz_status draw(fz_gen *g)
{
    nsa_state *st = calloc(1, sizeof *st);
    if (!st) return FZ_ERR_NOMEM;
    g->mstate = st;
    nsa_draw(g);
    nsa_apply(g);
    return FZ_OK;
}

/* empty_tensor: no heads (N = 0), or every batch shorter than l (C = 0: only outputGrad is empty) */
static bool break_empty(fz_gen *g, const cz_rule *ru, int tgt)
{
    (void)ru;
    (void)tgt;
    nsa_state *st = g->mstate;
    if (g->k == 1 || (g->k > 1 && rbern(&g->r, 0.5))) st->N = 0;
    else {
        for (int b = 0; b < st->nb; b++)
            if (st->S[b] >= st->l) st->S[b] = rbern(&g->r, 0.5) ? st->l - 1 : rrange(&g->r, 1, st->l - 1);
    }
    nsa_apply(g);
    return true;
}

/* a broken l, d or D keeps at least one window, so that the case is rejected for that rule and
 * not for an empty outputGrad */
static bool break_block_multiple(fz_gen *g, const cz_rule *ru, int tgt)
{
    return break_nsa_block_multiple(g, ru, tgt) && nsa_C(g) >= 1;
}
static bool break_l_gt_d(fz_gen *g, const cz_rule *ru, int tgt) { return break_nsa_l_gt_d(g, ru, tgt) && nsa_C(g) >= 1; }
static bool break_d_multiple(fz_gen *g, const cz_rule *ru, int tgt)
{
    return break_nsa_d_multiple(g, ru, tgt) && nsa_C(g) >= 1;
}

/* nsa model: element counts, D, l, d relative to l, N and batch-count tiers. */
static void bins(fz_bins *b, const cz_constraints *cz, bool empty_ok)
{
    (void)empty_ok; /* an empty_tensor rule: never valid */
    const nsa_fields *m = cz->model.priv;
    static const double t[][2] = {{1, 4095}, {4096, 32767}, {32768, 1048576}, {1048577, INFINITY}};
    fz_bins_add_numel(b, t, (int)(sizeof t / sizeof t[0]), false);
    /* D: one NSA_CHUNK-sized row band, below, at and above 256, the maximum */
    fz_bin_group *g = fz_bins_new_group(b, G_MODEL, 0);
    double Dm = (double)m->D_multiple, Dmin = ceil((double)m->D_range[0] / Dm) * Dm, Dmax = floor((double)m->D_range[1] / Dm) * Dm;
    fz_bins_add_pivot_band(b, g, "D", Dmin, Dm, 256, Dmax);
    g = fz_bins_new_group(b, G_MODEL, 1);
    double bm = (double)m->block_multiple;
    double lmin = ceil((double)(m->l_range[0] > m->d_range[0] + m->block_multiple ? m->l_range[0] : m->d_range[0] + m->block_multiple) / bm) * bm;
    double lmax = floor((double)m->l_range[1] / bm) * bm;
    fz_bins_add_pivot_band(b, g, "l", lmin, bm, 128, lmax);
    g = fz_bins_new_group(b, G_MODEL, 2); /* d relative to l: the smallest, l - d minimal, between */
    fz_bins_add_bin(b, g, "d", "min", BK_RANGE, 0, 0);
    fz_bins_add_bin(b, g, "d", "l-multiple", BK_RANGE, 1, 1);
    fz_bins_add_bin(b, g, "d", "between", BK_RANGE, 2, 2);
    g = fz_bins_new_group(b, G_MODEL, 3);
    fz_bins_add_range(b, g, "N", 1, 1);
    if (m->N_range[1] >= 4) fz_bins_add_range(b, g, "N", 2, 4);
    if (m->N_range[1] >= 5) fz_bins_add_range(b, g, "N", 5, INFINITY);
    g = fz_bins_new_group(b, G_MODEL, 4);
    fz_bins_add_range(b, g, "batches", 1, 1);
    if (m->batches[1] >= 6) fz_bins_add_range(b, g, "batches", 2, 6);
    if (m->batches[1] >= 7) fz_bins_add_range(b, g, "batches", 7, 64 < m->batches[1] ? 64 : (double)m->batches[1]);
    if (m->batches[1] > 64) fz_bins_add_range(b, g, "batches", 65, INFINITY);
}

/* NSA bins of a case: D, l, d relative to l (the smallest, l - one block, between), N, batches. */
static void mark(const fz_bins *b, const fz_bin_group *g, const cf_case *c, bool *seen)
{
    const nsa_fields *m = fz_bins_cz(b)->model.priv;
    const cf_tensor *in = &c->tensors[m->in];
    int64_t l = c->params[m->p_l].i, d = c->params[m->p_d].i;
    const cf_param *ps = &c->params[m->p_seq];
    if (g->arg == 0 && in->ndim == 3) fz_bins_mark(b, g, (double)in->shape[2], seen);
    else if (g->arg == 1) fz_bins_mark(b, g, (double)l, seen);
    else if (g->arg == 2) {
        int64_t bm = m->block_multiple, dmin = (m->d_range[0] + bm - 1) / bm * bm;
        fz_bins_mark(b, g, d == dmin ? 0 : d == l - bm ? 1 : 2, seen);
        if (d == dmin && d == l - bm) fz_bins_mark(b, g, 1, seen);
    } else if (g->arg == 3 && in->ndim == 3) fz_bins_mark(b, g, (double)in->shape[1], seen);
    else if (g->arg == 4) fz_bins_mark(b, g, ps->is_null ? 1 : (double)ps->arr_len, seen);
}

/* nsa model: batch lengths (empty, shorter than a block, a tail, overlapping windows). */
static void cov_nsa_batch(int64_t S, int64_t l, int64_t d, bool *seen)
{
    if (S >= l && d > 0 && (S - l) % d) seen[FZ_COV_nsa_tail] = true;
    if (S >= l + d && l > d) seen[FZ_COV_nsa_overlap] = true;
}

static void cover(const cz_model *cm, const cf_case *c, bool *seen)
{
    const nsa_fields *m = cm->priv;
    const cf_param *ps = &c->params[m->p_seq];
    int64_t l = c->params[m->p_l].i, d = c->params[m->p_d].i;
    if (ps->is_null) {
        seen[FZ_COV_nsa_null_actseqlen] = true;
        if (c->tensors[m->in].present && c->tensors[m->in].ndim >= 1) cov_nsa_batch(c->tensors[m->in].shape[0], l, d, seen);
        return;
    }
    int64_t prev = 0;
    for (int64_t b = 0; b < ps->arr_len; b++) {
        int64_t S = ps->arr[b] - prev;
        prev = ps->arr[b];
        if (S == 0) seen[FZ_COV_nsa_empty_batch] = true;
        if (S > 0 && S < l) seen[FZ_COV_nsa_short_batch] = true;
        cov_nsa_batch(S, l, d, seen);
    }
}

const fz_model fz_model_nsa = {
    .load = load,
    .draw = draw,
    .brk =
        {
            [CZ_RULE_EMPTY_TENSOR] = break_empty,
            [CZ_RULE_NSA_BLOCK_MULTIPLE] = break_block_multiple,
            [CZ_RULE_NSA_L_GT_D] = break_l_gt_d,
            [CZ_RULE_NSA_D_MULTIPLE] = break_d_multiple,
            [CZ_RULE_NSA_ACTSEQLEN] = break_nsa_actseqlen,
            [CZ_RULE_NSA_C] = break_nsa_c,
            [CZ_RULE_NSA_DIMS] = break_nsa_dims,
        },
    .bins = bins,
    .mark = mark,
    .cover = cover,
};
