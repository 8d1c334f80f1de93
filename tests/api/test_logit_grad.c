/* ctest-labels: api
 * aclnnLogitGrad (ops.md §2): validation rules and order; an (eps × x × dy) grid against the
 * spec formula in long double with an exact range test written here (TwoSum), covering the
 * ±0/1 infinities with IEEE signs, NaN rules, eps < 0, eps > 0.5, tiny eps; views, threads,
 * sentinels. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "aclnnop/aclnn_logit_grad.h"
#include "op_util.h"

#pragma GCC diagnostic ignored "-Woverride-init"

typedef struct {
    const char *name;
    tspec x, dy, out;
    int null_ws, null_exec;
    aclnnStatus want;
} vcase;

#define F16_23 TS(ACL_FLOAT16, ACL_FORMAT_ND, 2, 3)
#define BASE .x = F16_23, .dy = F16_23, .out = F16_23, .want = ACLNN_ERR_PARAM_INVALID

static const vcase vcases[] = {
    {BASE, .name = "valid", .want = ACLNN_SUCCESS},
    {BASE, .name = "valid bf16", .x = TS(ACL_BF16, ACL_FORMAT_ND, 4), .dy = TS(ACL_BF16, ACL_FORMAT_ND, 4),
     .out = TS(ACL_BF16, ACL_FORMAT_NCL, 4), .want = ACLNN_SUCCESS},
    {BASE, .name = "valid rank 0", .x = TS0(ACL_FLOAT), .dy = TS0(ACL_FLOAT), .out = TS0(ACL_FLOAT), .want = ACLNN_SUCCESS},
    {BASE, .name = "valid empty", .x = TS(ACL_FLOAT16, ACL_FORMAT_ND, 0, 5), .dy = TS(ACL_FLOAT16, ACL_FORMAT_ND, 0, 5),
     .out = TS(ACL_FLOAT16, ACL_FORMAT_ND, 0, 5), .want = ACLNN_SUCCESS},
    {BASE, .name = "x NULL", .x.flags = VT_NULL, .want = ACLNN_ERR_PARAM_NULLPTR},
    {BASE, .name = "dy NULL", .dy.flags = VT_NULL, .want = ACLNN_ERR_PARAM_NULLPTR},
    {BASE, .name = "out NULL", .out.flags = VT_NULL, .want = ACLNN_ERR_PARAM_NULLPTR},
    {BASE, .name = "workspaceSize NULL", .null_ws = 1, .want = ACLNN_ERR_PARAM_NULLPTR},
    {BASE, .name = "executor NULL", .null_exec = 1, .want = ACLNN_ERR_PARAM_NULLPTR},
    {BASE, .name = "x f64", .x = TS(ACL_DOUBLE, ACL_FORMAT_ND, 2, 3), .dy = TS(ACL_DOUBLE, ACL_FORMAT_ND, 2, 3),
     .out = TS(ACL_DOUBLE, ACL_FORMAT_ND, 2, 3)},
    {BASE, .name = "dy dtype differs", .dy = TS(ACL_FLOAT, ACL_FORMAT_ND, 2, 3)},
    {BASE, .name = "out dtype differs", .out = TS(ACL_BF16, ACL_FORMAT_ND, 2, 3)},
    {BASE, .name = "x int32", .x = TS(ACL_INT32, ACL_FORMAT_ND, 2, 3)},
    {BASE, .name = "dy shape differs", .dy = TS(ACL_FLOAT16, ACL_FORMAT_ND, 1, 3)},
    {BASE, .name = "out shape differs", .out = TS(ACL_FLOAT16, ACL_FORMAT_ND, 6)},
    {BASE, .name = "rank 9", .x = TS(ACL_FLOAT16, ACL_FORMAT_ND, 1, 1, 1, 1, 1, 1, 1, 2, 3),
     .dy = TS(ACL_FLOAT16, ACL_FORMAT_ND, 1, 1, 1, 1, 1, 1, 1, 2, 3),
     .out = TS(ACL_FLOAT16, ACL_FORMAT_ND, 1, 1, 1, 1, 1, 1, 1, 2, 3)},
    {BASE, .name = "format NC1HWC0", .dy = TS(ACL_FLOAT16, ACL_FORMAT_NC1HWC0, 2, 3)},
    {BASE, .name = "out overlaps itself", .out.flags = VT_OVERLAP},
    {BASE, .name = "x data NULL", .x.flags = VT_NODATA, .want = ACLNN_ERR_PARAM_NULLPTR},
    {BASE, .name = "out data NULL", .out.flags = VT_NODATA, .want = ACLNN_ERR_PARAM_NULLPTR},
    {BASE, .name = "NULL before bad dtype", .out.flags = VT_NULL, .x = TS(ACL_INT8, ACL_FORMAT_ND, 2, 3),
     .want = ACLNN_ERR_PARAM_NULLPTR},
    {BASE, .name = "bad shape before data NULL", .dy = {ACL_FLOAT16, 1, {6}, ACL_FORMAT_ND, VT_NODATA}},
    {BASE, .name = "bad format before data NULL", .out = {ACL_FLOAT16, 2, {2, 3}, ACL_FORMAT_FRACTAL_NZ, VT_NODATA}},
};

static void validation_table_returns_documented_status(void **state)
{
    (void)state;
    int fails = 0;
    for (size_t i = 0; i < sizeof vcases / sizeof vcases[0]; i++) {
        const vcase *c = &vcases[i];
        vt_pool pool = {0};
        aclTensor *x = vt_make(&pool, &c->x), *dy = vt_make(&pool, &c->dy), *o = vt_make(&pool, &c->out);
        uint64_t ws = 77;
        aclOpExecutor *ex = (aclOpExecutor *)&ws;
        aclnnStatus st = aclnnLogitGradGetWorkspaceSize(x, dy, 1e-6, o, c->null_ws ? NULL : &ws,
                                                        c->null_exec ? NULL : &ex);
        fails += vt_check_row("logit", c->name, st, c->want, c->null_exec, ex, ws, aclnnLogitGrad);
        vt_free(&pool);
    }
    assert_int_equal(fails, 0);
}

/* The spec formula; the range test x ≤ 1 − lo is decided exactly as x + lo ≤ 1 with TwoSum. */
static long double ref_logit(long double x, long double dy, double eps_in)
{
    float eps = (float)eps_in;
    if (isnan(x) || isnan(dy) || isnan(eps)) return NAN;
    long double lo = eps >= 0 ? eps : 0.0L;
    long double s = x + lo, bb = s - x, err = (x - (s - bb)) + (lo - bb);
    int in = lo <= x && (s < 1.0L || (s == 1.0L && err <= 0.0L));
    if (in) return dy / (x * (1.0L - x));
    return eps >= 0 ? 0.0L : NAN;
}

static aclnnStatus run_logit(const tt *x, const tt *dy, const tt *o, double eps)
{
    uint64_t ws;
    aclOpExecutor *ex;
    aclnnStatus st = aclnnLogitGradGetWorkspaceSize(x->t, dy->t, eps, o->t, &ws, &ex);
    if (st != ACLNN_SUCCESS) return st;
    return aclnnLogitGrad(NULL, ws, ex, NULL);
}

static void grid_matches_reference(void **state)
{
    (void)state;
    const double epss[] = {-1.0, 0.0, -0.0, 1e-6, 0.1, 0.5, 0.7, 1.0, 2.0, NAN, 1e-30, 0x1p-25, INFINITY, -INFINITY};
    const double xs[] = {0.0, -0.0, 1.0, 0.5, 0.25, 0.75, 1e-6, 1.0 - 0x1p-24, 1.0 - 0x1p-11, 0.1, 0.9, 0.999,
                         -0.1, 1.1, INFINITY, -INFINITY, NAN, 1e-40, 0.05, 0x1p-25, 0.3, 0.7, 1e-30, 0.95};
    const double dys[] = {1.0, -2.5, 0.0, -0.0, NAN, INFINITY, 1e-3, 7.0};
    const int ne = sizeof epss / sizeof epss[0], nx = sizeof xs / sizeof xs[0], nd = sizeof dys / sizeof dys[0];
    const aclDataType dts[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
    int64_t dims[2] = {nd, nx};
    int fails = 0;
    for (int d = 0; d < 3; d++)
        for (int e = 0; e < ne; e++) {
            tt x = tt_new(dts[d], 2, dims, e % 3), dy = tt_new(dts[d], 2, dims, (e + 1) % 3),
               o = tt_new(dts[d], 2, dims, (e + 2) % 3);
            for (int i = 0; i < nd; i++)
                for (int j = 0; j < nx; j++) { tt_set(&x, i * nx + j, xs[j]); tt_set(&dy, i * nx + j, dys[i]); }
            assert_int_equal(run_logit(&x, &dy, &o, epss[e]), ACLNN_SUCCESS);
            double tol = dts[d] == ACL_FLOAT ? 1.0 : 0.51;
            for (int64_t k = 0; k < x.t->numel; k++) {
                long double r = ref_logit(tt_get(&x, k), tt_get(&dy, k), epss[e]);
                double got = tt_get(&o, k), err = ulp_err(dts[d], got, r);
                if (!(err <= tol)) {
                    fprintf(stderr, "logit %s eps=%a x=%a dy=%a got=%a ref=%La ulp=%g\n", dt_name(dts[d]), epss[e],
                            tt_get(&x, k), tt_get(&dy, k), got, r, err);
                    fails++;
                }
            }
            if ((e + 2) % 3 != TT_CONTIG) assert_int_equal(tt_outside_written(&o), 0);
            tt_free(&x); tt_free(&dy); tt_free(&o);
        }
    assert_int_equal(fails, 0);
}

static void zero_and_one_give_signed_infinities(void **state)
{
    (void)state;
    int64_t dims[1] = {6};
    tt x = tt_new(ACL_FLOAT, 1, dims, TT_CONTIG), dy = tt_new(ACL_FLOAT, 1, dims, TT_CONTIG),
       o = tt_new(ACL_FLOAT, 1, dims, TT_CONTIG);
    const double xv[6] = {0.0, -0.0, 1.0, 0.0, -0.0, 1.0}, dv[6] = {3, 3, 3, -3, -3, 0};
    const double want[6] = {INFINITY, -INFINITY, INFINITY, -INFINITY, INFINITY, NAN};
    for (int i = 0; i < 6; i++) { tt_set(&x, i, xv[i]); tt_set(&dy, i, dv[i]); }
    assert_int_equal(run_logit(&x, &dy, &o, 0.0), ACLNN_SUCCESS);
    for (int i = 0; i < 6; i++) {
        if (isnan(want[i])) assert_true(isnan(tt_get(&o, i)));
        else assert_true(tt_get(&o, i) == want[i]);
    }
    tt_free(&x); tt_free(&dy); tt_free(&o);
}

static void threads_give_identical_bits(void **state)
{
    (void)state;
    int64_t dims[1] = {70001};
    uint64_t *ref = malloc(70001 * sizeof *ref);
    for (int threads = 1; threads <= 3; threads++) {
        aclconformSetNumThreads(threads);
        tt x = tt_new(ACL_BF16, 1, dims, TT_CONTIG), dy = tt_new(ACL_BF16, 1, dims, TT_CONTIG),
           o = tt_new(ACL_BF16, 1, dims, threads == 3 ? TT_PADDED : TT_CONTIG);
        uint64_t s = 5;
        for (int64_t i = 0; i < dims[0]; i++) { tt_set(&x, i, tt_rand(&s, -0.1, 1.1)); tt_set(&dy, i, tt_rand(&s, -2, 2)); }
        assert_int_equal(run_logit(&x, &dy, &o, 0.01), ACLNN_SUCCESS);
        for (int64_t i = 0; i < dims[0]; i++) {
            if (threads == 1) ref[i] = tt_bits(&o, i);
            else assert_true(tt_bits(&o, i) == ref[i]);
        }
        tt_free(&x); tt_free(&dy); tt_free(&o);
    }
    aclconformSetNumThreads(0);
    free(ref);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(validation_table_returns_documented_status),
        cmocka_unit_test(grid_matches_reference),
        cmocka_unit_test(zero_and_one_give_signed_infinities),
        cmocka_unit_test(threads_give_identical_bits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
