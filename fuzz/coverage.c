/* Coverage classes of a case, found by inspecting the case itself (shapes, strides, stored
 * bits, params), so that the distribution test measures what was generated rather than what
 * the generator meant to generate. */
#include <math.h>
#include <string.h>

#include "model.h"

static const char *const cov_names[FZ_COV_COUNT] = {
#define FZ_COV(id, text) #id,
#include "fz_coverage.def"
#undef FZ_COV
};

const char *fz_cov_name(fz_cov_class c) { return (unsigned)c < FZ_COV_COUNT ? cov_names[c] : "?"; }

static bool is_contig(const cf_tensor *t)
{
    int64_t acc = 1;
    for (int d = t->ndim - 1; d >= 0; d--) {
        if (t->shape[d] > 1 && t->strides[d] != acc) return false;
        acc *= t->shape[d] > 0 ? t->shape[d] : 1;
    }
    return t->offset == 0;
}

static void view_kinds(const cf_tensor *t, bool *permuted, bool *step, bool *zero)
{
    int64_t prev = INT64_MAX, span = 1, dense = 1;
    for (int d = 0; d < t->ndim; d++) {
        if (t->shape[d] <= 1) continue;
        if (t->strides[d] == 0) {
            *zero = true;
            continue;
        }
        if (t->strides[d] > prev) *permuted = true;
        prev = t->strides[d];
        span += (t->shape[d] - 1) * t->strides[d];
        dense *= t->shape[d];
    }
    if (span > dense) *step = true;
}

static int float_class(cf_dtype dt, uint64_t bits, double v, const cz_constraints *cz, fz_coverage *cov,
                       bool *seen)
{
    (void)cz;
    (void)cov;
    if (!cf_dtype_is_float(dt)) {
        if (v == 0) seen[FZ_COV_val_zero] = true;
        if (v == fz_class_value(dt, CZ_CLS_MAX_FINITE)) seen[FZ_COV_val_max_finite] = true;
        return 0;
    }
    if (isnan(v)) seen[FZ_COV_val_nan] = true;
    else if (isinf(v)) seen[v > 0 ? FZ_COV_val_inf : FZ_COV_val_neginf] = true;
    else if (v == 0) seen[bits ? FZ_COV_val_negzero : FZ_COV_val_zero] = true;
    else if (fabs(v) < fz_class_value(dt, CZ_CLS_MIN_NORMAL)) seen[FZ_COV_val_subnormal] = true;
    else if (fabs(v) == fz_class_value(dt, CZ_CLS_MAX_FINITE)) seen[FZ_COV_val_max_finite] = true;
    return 0;
}

/* Position of a float's bits on a line where adjacent values differ by 1 (sign-magnitude to
 * two's complement), so that "k ULPs apart" is a difference of k. */
static int64_t ordered(cf_dtype dt, uint64_t bits)
{
    int w = (int)cf_dtype_size(dt) * 8;
    uint64_t sign = 1ull << (w - 1), mag = bits & (sign - 1);
    return (bits & sign) ? -(int64_t)mag : (int64_t)mag;
}

/* Shape and view classes of one tensor. */
static void cov_view(const cf_tensor *t, bool *seen, bool *all_contig)
{
    int64_t n = cf_tensor_numel(t);
    if (t->ndim == 0) seen[FZ_COV_rank0] = true;
    if (n == 0) seen[FZ_COV_empty] = true;
    if (n > 4096) seen[FZ_COV_large] = true;
    if (t->offset > 0) seen[FZ_COV_offset] = true;
    if (!is_contig(t)) {
        *all_contig = false;
        if (t->output) seen[FZ_COV_out_noncontig] = true;
    }
    bool perm = false, step = false, zero = false;
    view_kinds(t, &perm, &step, &zero);
    seen[FZ_COV_permuted] |= perm;
    seen[FZ_COV_step] |= step;
    if (!t->output) seen[FZ_COV_zero_stride] |= zero;
    if (strcmp(t->format, "ND") != 0) seen[FZ_COV_format_non_nd] = true;
}

/* Value classes at the viewed positions of input tensor i, and hits of its boundary edges (the
 * exact bits, or within the values entry's ulp_neighbours of them). */
static void cov_values(const cz_constraints *cz, const cf_case *c, int i, fz_coverage *cov, bool *seen)
{
    const cf_tensor *t = &c->tensors[i];
    const cz_values *vals = NULL;
    for (int k = 0; k < cz->nvalues; k++)
        if (cz->values[k].tensor == i) vals = &cz->values[k];
    uint64_t bnd[CZ_MAX_EDGES];
    int nb = 0;
    for (int k = 0; vals && k < vals->nedges; k++)
        if (vals->edges[k].boundary && fz_edge_bits(cz, c, &vals->edges[k], t->dtype, &bnd[nb])) nb++;
    size_t sz = cf_dtype_size(t->dtype);
    uint64_t signmask = 1ull << (8 * sz - 1);
    int64_t n = cf_tensor_numel(t);
    for (int64_t e = 0; e < n; e++) {
        uint64_t bits = fz_load_bits(t->dtype, t->data, fz_view_index(t, e));
        double v = fz_double_from_bits(t->dtype, bits);
        float_class(t->dtype, bits & signmask, v, cz, cov, seen);
        for (int k = 0; k < nb; k++) {
            if (bits == bnd[k]) seen[FZ_COV_val_boundary] = true;
            else if (cf_dtype_is_float(t->dtype) && vals->ulp_neighbours > 0 && !isnan(v)) {
                int64_t p = ordered(t->dtype, bits), q = ordered(t->dtype, bnd[k]), kk = vals->ulp_neighbours;
                /* same sign: no overflow; opposite signs: near only when both are tiny */
                bool near = (p >= 0) == (q >= 0) ? (p - q >= -kk && p - q <= kk)
                                                 : (p >= -kk && p <= kk && q >= -kk && q <= kk && p - q >= -kk && p - q <= kk);
                if (near) seen[FZ_COV_val_boundary_ulp] = true;
            }
        }
    }
}

static void cov_params(const cf_case *c, bool *seen)
{
    for (int i = 0; i < c->nparams; i++) {
        const cf_param *p = &c->params[i];
        if (p->is_null || (p->kind != CF_PARAM_F64 && p->kind != CF_PARAM_SCALAR)) continue;
        double v = fz_param_value(p);
        if (!(v > 0) || isinf(v)) seen[FZ_COV_param_special] = true;
        if (p->kind == CF_PARAM_SCALAR && !cf_dtype_is_float(p->scalar_dtype)) seen[FZ_COV_scalar_int] = true;
    }
}

/* The classes of a case: views, values and attributes here, the shape model's own (its cover). */
void fz_coverage_add(const cz_constraints *cz, const cf_case *c, fz_coverage *cov)
{
    bool seen[FZ_COV_COUNT] = {false};
    bool all_contig = true;
    int nin = 0;
    cf_dtype first_in = CF_DTYPE_COUNT;
    for (int i = 0; i < c->ntensors; i++) {
        const cf_tensor *t = &c->tensors[i];
        if (!t->present) continue;
        cov_view(t, seen, &all_contig);
        if (t->output || !t->data) continue;
        if (cf_dtype_is_float(t->dtype) && i != cz->model.self_filled) {
            if (nin++ == 0) first_in = t->dtype;
            else if (t->dtype != first_in) seen[FZ_COV_mixed_dtype] = true;
        }
        cov_values(cz, c, i, cov, seen);
    }
    seen[FZ_COV_contiguous] = all_contig;
    cov_params(c, seen);
    const fz_model *M = fz_model_of(cz->model.kind);
    if (M->cover) M->cover(&cz->model, c, seen);
    cov->cases++;
    for (int k = 0; k < FZ_COV_COUNT; k++) cov->counts[k] += seen[k];
}
