/* The shrinker tries candidates from smallest to largest and keeps the first that still fails
 * the same way:
 *   1. one element: every tensor sliced to the failing output element (inputs broadcastable to
 *      the output — the elementwise operators);
 *   2. one row: every tensor sliced to the failing element's last-axis row (row reductions such
 *      as ScaledMaskedSoftmaxBackward, whose tensors all broadcast to the output);
 *   3. the operator's own candidates (adapter shrink_step): NsaCompressGrad keeps one head, one
 *      16-wide block of D, one batch;
 *   4. value simplification of a single-element case: inputs replaced by 0, ±1, 2, 0.5 where the
 *      failure survives.
 * Rounds repeat (each from the current smallest case) while a candidate is accepted. */
#include "shrink.h"

#include "eval.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "adapters.h"
#include "ulp.h"

typedef struct {
    bool status_fail;
    int32_t status;
    cf_mismatch kind;
} signature;

static bool evaluate(const cf_target *t, const cf_case *c, const cf_opts *o, cz_constraints *const *cz,
                     const char *variant, signature *sig)
{
    cf_err e = {{0}};
    cf_run_result r;
    cf_expected x = {0};
    cf_tol tol;
    bool fails = false;
    if (cf_run_case(t, c, o->timeout_s, &r, &e)) return false;
    if (c->expect_status == 0 && r.status == 0 && !r.error[0] && cf_oracle_expected(c, o->profile, &x, &e)) goto done;
    if (cf_tolerance_for(cz, c, o->profile, variant, o->strict_zero, &tol, &e)) goto done;
    cf_case_verdict v;
    cf_score_case(c, &x, &r, &tol, 0, "shrink", NULL, &v, NULL, NULL, 0);
    fails = !v.pass;
    sig->status_fail = !v.status_ok;
    sig->status = r.error[0] ? -1 : r.status;
    sig->kind = v.first_kind;
done:
    cf_expected_free(&x);
    cf_run_result_free(&r);
    return fails;
}

static bool same_failure(const signature *a, const signature *b)
{
    if (a->status_fail || b->status_fail) return a->status_fail == b->status_fail && a->status == b->status;
    return a->kind == b->kind;
}

/* Slice every tensor of c at output multi-index ix, keeping the last axis when keep_last. */
static bool slice_case(const cf_case *c, const cf_tensor *out, const int64_t *ix, bool keep_last, cf_case *dst)
{
    memset(dst, 0, sizeof *dst);
    *dst = *c;
    for (int i = 0; i < dst->ntensors; i++) dst->tensors[i].data = NULL;
    for (int i = 0; i < dst->nparams; i++) dst->params[i].arr = NULL;
    for (int i = 0; i < c->nparams; i++)
        if (c->params[i].arr) {
            dst->params[i].arr = malloc(sizeof(int64_t) * (size_t)(c->params[i].arr_len + 1));
            if (!dst->params[i].arr) goto fail;
            memcpy(dst->params[i].arr, c->params[i].arr, sizeof(int64_t) * (size_t)c->params[i].arr_len);
        }
    for (int i = 0; i < c->ntensors; i++) {
        const cf_tensor *t = &c->tensors[i];
        cf_tensor *d = &dst->tensors[i];
        if (!t->present) continue;
        if (t->ndim > out->ndim) goto fail;
        int lead = out->ndim - t->ndim;
        for (int k = 0; k < t->ndim; k++)
            if (t->shape[k] != 1 && t->shape[k] != out->shape[k + lead]) goto fail;
        int64_t n = 1;
        for (int k = 0; k < t->ndim; k++) {
            d->shape[k] = (keep_last && k == t->ndim - 1) ? t->shape[k] : 1;
            n *= d->shape[k];
        }
        int64_t run = 1;
        for (int k = t->ndim - 1; k >= 0; k--) d->strides[k] = run, run *= d->shape[k];
        d->offset = 0;
        d->storage_ndim = t->ndim;
        memcpy(d->storage_shape, d->shape, sizeof d->shape);
        if (t->ndim == 0) d->storage_ndim = 0;
        if (t->output) continue;
        size_t es = cf_dtype_size(t->dtype);
        d->data = malloc((size_t)(n ? n : 1) * es);
        if (!d->data) goto fail;
        for (int64_t j = 0; j < n; j++) {
            int64_t off = t->offset;
            for (int k = 0; k < t->ndim; k++) {
                int64_t idx = (keep_last && k == t->ndim - 1) ? j : (t->shape[k] == 1 ? 0 : ix[k + lead]);
                off += idx * t->strides[k];
            }
            memcpy((char *)d->data + (size_t)j * es, (const char *)t->data + (size_t)off * es, es);
        }
    }
    return true;
fail:
    cf_case_free(dst);
    return false;
}

/* Store v (a small integer) in every input element of dst where the failure survives. */
static void simplify_values(const cf_target *t, cf_case *dst, const cf_opts *o, cz_constraints *const *cz,
                            const char *variant, const signature *want)
{
    static const double vals[] = {0.0, 1.0, -1.0, 2.0, 0.5};
    for (int i = 0; i < dst->ntensors; i++) {
        cf_tensor *tt = &dst->tensors[i];
        if (!tt->present || tt->output || !tt->data || cf_tensor_storage_numel(tt) != 1) continue;
        size_t es = cf_dtype_size(tt->dtype);
        uint8_t saved[8];
        memcpy(saved, tt->data, es);
        for (size_t v = 0; v < sizeof vals / sizeof vals[0]; v++) {
            uint8_t enc[8] = {0};
            float f = (float)vals[v];
            uint32_t u;
            memcpy(&u, &f, 4);
            switch (tt->dtype) {
            case CF_F32: memcpy(enc, &f, 4); break;
            case CF_F64: memcpy(enc, &vals[v], 8); break;
            case CF_BF16: { uint16_t h = (uint16_t)(u >> 16); memcpy(enc, &h, 2); break; } /* exact for these values */
            case CF_F16: {
                static const uint16_t h16[] = {0x0000, 0x3c00, 0xbc00, 0x4000, 0x3800};
                memcpy(enc, &h16[v], 2);
                break;
            }
            case CF_BOOL: case CF_U8: if (vals[v] < 0 || vals[v] != floor(vals[v])) continue; enc[0] = (uint8_t)vals[v]; break;
            default: {
                if (vals[v] != floor(vals[v])) continue;
                int64_t iv = (int64_t)vals[v];
                memcpy(enc, &iv, es); /* little endian */
            }
            }
            if (!memcmp(enc, saved, es)) break;
            memcpy(tt->data, enc, es);
            signature s;
            if (evaluate(t, dst, o, cz, variant, &s) && same_failure(&s, want)) break;
            memcpy(tt->data, saved, es);
        }
    }
}

/* The first element of c (on target) that fails with the wanted kind: its output and index. */
static bool first_failing(const cf_target *target, const cf_case *c, const cf_opts *o, cz_constraints *const *cz,
                          const char *variant, cf_mismatch kind, char *out_name, int64_t *el)
{
    cf_err e = {{0}};
    cf_run_result r;
    cf_expected gx = {0};
    cf_tol tol;
    bool found = false;
    if (cf_run_case(target, c, o->timeout_s, &r, &e)) return false;
    if (r.status != 0 || cf_oracle_expected(c, o->profile, &gx, &e) ||
        cf_tolerance_for(cz, c, o->profile, variant, o->strict_zero, &tol, &e))
        goto done;
    for (int oi = 0; oi < r.nout && !found; oi++) {
        cf_fmt f;
        if (!cf_fmt_of(r.out[oi].dtype, &f)) continue;
        size_t es = cf_dtype_size(r.out[oi].dtype);
        for (int64_t k = 0; k < r.out[oi].n && k < gx.out[oi].n; k++) {
            uint64_t gb = 0;
            memcpy(&gb, r.out[oi].bits + (size_t)k * es, es);
            cf_expect ex = {gx.out[oi].r[k], gx.out[oi].lo ? gx.out[oi].lo[k] : 0, gx.out[oi].m[k], gx.out[oi].err[k],
                            gx.out[oi].alt[k], gx.out[oi].masked ? gx.out[oi].masked[k] != 0 : false};
            cf_elem_score s = cf_score_element(&f, cf_decode(r.out[oi].dtype, r.out[oi].bits + (size_t)k * es), gb, &ex, &tol);
            if (s.verdict == CF_EL_FAIL && s.kind == kind) {
                snprintf(out_name, CF_NAME_LEN, "%s", r.out[oi].name);
                *el = k;
                found = true;
                break;
            }
        }
    }
done:
    cf_run_result_free(&r);
    cf_expected_free(&gx);
    return found;
}

/* Candidate `step` of one shrink round: the generic slices first (one element, one last-axis row),
 * then the operator's own (adapter shrink_step). */
static bool candidate(const cf_case *c, const char *out_name, int64_t el, int step, cf_case *dst)
{
    const cf_tensor *outt = cf_case_tensor_c(c, out_name);
    if (step < 2) {
        int64_t ix[CF_MAX_RANK], rem = el;
        for (int k = outt->ndim - 1; k >= 0; k--) ix[k] = rem % outt->shape[k], rem /= outt->shape[k];
        /* a slice that keeps every element is no smaller */
        if (step == 1 && (outt->ndim == 0 || cf_tensor_numel(outt) == outt->shape[outt->ndim - 1])) return false;
        if (step == 0 && cf_tensor_numel(outt) <= 1) return false;
        return slice_case(c, outt, ix, step == 1, dst);
    }
    const cf_adapter *ad = cf_adapters[c->op];
    return ad->shrink_step && ad->shrink_step(c, out_name, el, step - 2, dst);
}

static int64_t total_elements(const cf_case *c)
{
    int64_t n = 0;
    for (int i = 0; i < c->ntensors; i++) n += c->tensors[i].present ? cf_tensor_numel(&c->tensors[i]) : 0;
    return n;
}

cf_status cf_shrink(const cf_target *target, const cf_case *c, const cf_expected *x, const cf_opts *o,
                    cz_constraints *const *cz, const char *variant, cf_case *out, double budget_s)
{
    (void)x;
    double t0 = cf_now_s(); /* wall clock: a foreign target's time is spent in its worker */
    signature want;
    if (!evaluate(target, c, o, cz, variant, &want)) return CFE_FAIL; /* does not fail (flaky?) */
    if (want.status_fail || c->expect_status != 0) return CFE_FAIL;  /* status failures are small already */
    cf_case cur;
    if (!cf_case_clone(&cur, c)) return CFE_FAIL;
    bool shrunk = false;
    for (int round = 0; round < 8; round++) { /* greedy: keep the first smaller case that fails alike */
        char out_name[CF_NAME_LEN];
        int64_t el;
        if (!first_failing(target, &cur, o, cz, variant, want.kind, out_name, &el)) break;
        bool progressed = false;
        for (int step = 0; step < 16 && !progressed; step++) {
            if (cf_now_s() - t0 > budget_s) break;
            cf_case cand;
            if (!candidate(&cur, out_name, el, step, &cand)) {
                if (step >= 2 && !(cf_adapters[cur.op]->shrink_step)) break;
                continue;
            }
            signature s;
            if (total_elements(&cand) < total_elements(&cur) && evaluate(target, &cand, o, cz, variant, &s) &&
                same_failure(&s, &want)) {
                if (step == 0) simplify_values(target, &cand, o, cz, variant, &want);
                cf_case_free(&cur);
                cur = cand;
                progressed = shrunk = true;
            } else {
                cf_case_free(&cand);
            }
        }
        if (!progressed) break;
    }
    if (!shrunk) {
        cf_case_free(&cur);
        return CFE_FAIL;
    }
    char id[17];
    cf_case_id(c, id);
    snprintf(cur.shrunk_from, sizeof cur.shrunk_from, "%s", id);
    snprintf(cur.origin_kind, sizeof cur.origin_kind, "shrink");
    *out = cur;
    return CFE_OK;
}
