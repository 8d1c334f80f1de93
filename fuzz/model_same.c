/* The "same" shape model: every tensor it lists has one shape, drawn from the size tiers
 * (LogitGrad, SoftplusBackward). */
#include "model.h"

static fz_status load(cz_ld *L, cz_constraints *cz, const cJSON *m, const char *p)
{
    TRY(cz_model_tensors(L, cz, m, p));
    cz->model.ref = cz->model.tensors[0];
    return FZ_OK;
}

static fz_status draw(fz_gen *g)
{
    const cz_model *m = &g->cz->model;
    const cz_tensor *t0 = &g->cz->tensors[m->tensors[0]];
    int64_t dims[CF_MAX_RANK];
    int rank;
    fz_draw_shape(g, t0->rank_min, t0->rank_max, dims, &rank);
    for (int i = 0; i < m->ntensors; i++) fz_set_shape(&g->c->tensors[m->tensors[i]], rank, dims);
    return FZ_OK;
}

const fz_model fz_model_same = {.load = load, .draw = draw, .bins = fz_bins_elementwise};
