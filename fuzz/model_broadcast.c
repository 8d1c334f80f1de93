/* The "broadcast" shape model: two inputs broadcast to the output (numpy rules, right-aligned)
 * (GeluBackwardV2).  The model's tensors are the two inputs and the output, in that order. */
#include <string.h>

#include "model.h"

enum { IN_A, IN_B, OUT };

static fz_status load(cz_ld *L, cz_constraints *cz, const cJSON *m, const char *p)
{
    cz_model *cm = &cz->model;
    TRY(cz_tensor_pair(L, cz, m, p, "inputs", cm->tensors));
    TRY(cz_tensor_member(L, cz, m, p, "output", &cm->tensors[OUT]));
    cm->ntensors = 3;
    cm->ref = cm->tensors[OUT];
    return FZ_OK;
}

static fz_status draw(fz_gen *g)
{
    const cz_model *m = &g->cz->model;
    const cz_tensor *to = &g->cz->tensors[m->tensors[OUT]];
    int64_t o[CF_MAX_RANK], a[CF_MAX_RANK], b[CF_MAX_RANK];
    int ro;
    fz_draw_shape(g, to->rank_min, to->rank_max, o, &ro);
    if (rbern(&g->r, 0.4)) {
        for (int i = 0; i < 3; i++) fz_set_shape(&g->c->tensors[m->tensors[i]], ro, o);
        return FZ_OK;
    }
    int ra = ro, rb = ro;
    if (rbern(&g->r, 0.35)) {
        if (rbern(&g->r, 0.5)) ra = (int)rrange(&g->r, 0, ro);
        else rb = (int)rrange(&g->r, 0, ro);
    }
    /* right-aligned: position j counts from the last dim */
    for (int j = 0; j < ro; j++) {
        int64_t od = o[ro - 1 - j];
        bool ca = j < ra, cb = j < rb;
        int64_t da = od, db = od;
        if (od != 1 && ca && cb) {
            double u = runif(&g->r);
            if (u < 0.25) da = 1;
            else if (u < 0.5) db = 1;
        }
        if (ca) a[ra - 1 - j] = da;
        if (cb) b[rb - 1 - j] = db;
    }
    fz_set_shape(&g->c->tensors[m->tensors[IN_A]], ra, a);
    fz_set_shape(&g->c->tensors[m->tensors[IN_B]], rb, b);
    fz_set_shape(&g->c->tensors[m->tensors[OUT]], ro, o);
    return FZ_OK;
}

static bool break_not_broadcastable(fz_gen *g, const cz_rule *ru, int tgt)
{
    (void)tgt;
    cf_case *c = g->c;
    /* one right-aligned dim pair that fails: off by one (p, p +- 1), 0 against p > 1, or
     * two unrelated sizes */
    cf_tensor *a = &c->tensors[ru->targets[0]], *b = &c->tensors[ru->targets[1]];
    if (a->ndim == 0) a->shape[a->ndim++] = 1;
    if (b->ndim == 0) b->shape[b->ndim++] = 1;
    int r = a->ndim < b->ndim ? a->ndim : b->ndim;
    int j = (int)rrange(&g->r, 0, r - 1); /* from the right */
    int64_t *pa = &a->shape[a->ndim - 1 - j], *pb = &b->shape[b->ndim - 1 - j];
    int64_t p = *pa > *pb ? *pa : *pb, q;
    if (p < 2) p = rrange(&g->r, 2, 5);
    double u = g->k == 0 ? 0.25 : g->k == 1 ? 0.6 : runif(&g->r);
    if (u < 0.5) q = p >= 3 && rbern(&g->r, 0.5) ? p - 1 : p + 1;
    else if (u < 0.7) q = 0;
    else {
        p = rrange(&g->r, 2, 5);
        q = rrange(&g->r, 2, 4);
        if (q >= p) q++;
    }
    if (rbern(&g->r, 0.5)) {
        *pa = p;
        *pb = q;
    } else {
        *pa = q;
        *pb = p;
    }
    return true;
}

static bool break_output_shape(fz_gen *g, const cz_rule *ru, int tgt)
{
    const cz_constraints *cz = g->cz;
    cf_case *c = g->c;
    /* the output is not the broadcast shape: a dim off by one, the shape of one of the
     * inputs (what a kernel that sizes its output from one input accepts), a leading 1
     * added or dropped, a broadcast dim left at 1 */
    cf_tensor *t = &c->tensors[tgt];
    const cz_tensor *ct = &cz->tensors[tgt];
    int form = fz_edge_k(g) ? (int)g->k : (int)rrange(&g->r, 0, 3);
    if (form == 1) { /* an input's shape, when it differs */
        int cand[2], nc = 0;
        for (int i = 0; i < 2; i++) {
            const cf_tensor *in = &c->tensors[ru->bcast[i]];
            bool same = in->ndim == t->ndim;
            for (int d = 0; same && d < t->ndim; d++) same = in->shape[d] == t->shape[d];
            if (!same) cand[nc++] = ru->bcast[i];
        }
        if (nc) {
            const cf_tensor *in = &c->tensors[cand[rrange(&g->r, 0, nc - 1)]];
            fz_set_shape(t, in->ndim, in->shape);
            return true;
        }
    }
    if (form == 2 && t->ndim < ct->rank_max && (t->ndim == 0 || rbern(&g->r, 0.5))) {
        memmove(t->shape + 1, t->shape, sizeof(int64_t) * (size_t)t->ndim);
        t->shape[0] = rbern(&g->r, 0.5) ? 1 : rrange(&g->r, 2, 3);
        t->ndim++;
        return true;
    }
    if (form == 2 && t->ndim > ct->rank_min && t->ndim > 0) {
        memmove(t->shape, t->shape + 1, sizeof(int64_t) * (size_t)(t->ndim - 1));
        t->ndim--;
        return true;
    }
    if (t->ndim == 0) {
        if (ct->rank_max < 1) return false;
        t->shape[t->ndim++] = rrange(&g->r, 2, 3);
        return true;
    }
    int64_t *d = &t->shape[rrange(&g->r, 0, t->ndim - 1)];
    if (form == 3 && *d > 1) *d = 1;
    else if (*d >= 2 && rbern(&g->r, 0.5)) (*d)--;
    else (*d)++;
    return true;
}

/* broadcast model: dims that differ, size-1 and size-0 pairs (right-aligned). */
static void cover(const cz_model *m, const cf_case *c, bool *seen)
{
    const cf_tensor *a = &c->tensors[m->tensors[IN_A]], *b = &c->tensors[m->tensors[IN_B]];
    if (!a->present || !b->present) return;
    int r = a->ndim > b->ndim ? a->ndim : b->ndim;
    for (int j = 0; j < r; j++) {
        int64_t da = j < a->ndim ? a->shape[a->ndim - 1 - j] : 1;
        int64_t db = j < b->ndim ? b->shape[b->ndim - 1 - j] : 1;
        if (j >= a->ndim || j >= b->ndim || da != db) seen[FZ_COV_broadcast] = true;
        if ((da == 1 && db > 1) || (db == 1 && da > 1)) seen[FZ_COV_broadcast_size1] = true;
        if ((da == 1 && db == 0) || (db == 1 && da == 0)) seen[FZ_COV_broadcast_size0] = true;
    }
}

const fz_model fz_model_broadcast = {
    .load = load,
    .draw = draw,
    .brk = {[CZ_RULE_NOT_BROADCASTABLE] = break_not_broadcastable, [CZ_RULE_OUTPUT_SHAPE] = break_output_shape},
    .bins = fz_bins_elementwise,
    .cover = cover,
};
