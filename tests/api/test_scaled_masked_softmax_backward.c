/* ctest-labels: api
 * aclnnScaledMaskedSoftmaxBackward (ops.md §1): validation rules and order; rows against a long
 * double evaluation of the formula written here, scored in scaled ULP against the conditioning
 * m = |scale|·(|g·y| + |y|·Σ|g·y|); mask broadcast on dims 0–1; masked outputs exactly +0.0 even
 * when the row is NaN/Inf; views, threads and sentinels. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "aclnnop/aclnn_scaled_masked_softmax_backward.h"
#include "op_util.h"

#pragma GCC diagnostic ignored "-Woverride-init"

void acl_nt_set_min_bytes(int64_t bytes); /* runtime/ewise.h */

typedef struct {
    const char *name;
    tspec g, y, mask, out;
    bool triu;
    int null_ws, null_exec;
    aclnnStatus want;
} vcase;

#define T4(dt, ...) TS(dt, ACL_FORMAT_ND, __VA_ARGS__)
#define BASE .g = T4(ACL_FLOAT, 2, 3, 4, 5), .y = T4(ACL_FLOAT, 2, 3, 4, 5), .mask = T4(ACL_BOOL, 2, 3, 4, 5), \
             .out = T4(ACL_FLOAT, 2, 3, 4, 5), .want = ACLNN_ERR_PARAM_INVALID

static const vcase vcases[] = {
    {BASE, .name = "valid", .want = ACLNN_SUCCESS},
    {BASE, .name = "valid mask [1,3]", .mask = T4(ACL_BOOL, 1, 3, 4, 5), .want = ACLNN_SUCCESS},
    {BASE, .name = "valid mask [2,1]", .mask = T4(ACL_BOOL, 2, 1, 4, 5), .want = ACLNN_SUCCESS},
    {BASE, .name = "valid mask [1,1]", .mask = T4(ACL_BOOL, 1, 1, 4, 5), .want = ACLNN_SUCCESS},
    {BASE, .name = "valid bf16", .g = T4(ACL_BF16, 2, 3, 4, 5), .y = T4(ACL_BF16, 2, 3, 4, 5),
     .out = T4(ACL_BF16, 2, 3, 4, 5), .want = ACLNN_SUCCESS},
    {BASE, .name = "valid S2 4096", .g = T4(ACL_FLOAT16, 1, 1, 1, 4096), .y = T4(ACL_FLOAT16, 1, 1, 1, 4096),
     .mask = T4(ACL_BOOL, 1, 1, 1, 4096), .out = T4(ACL_FLOAT16, 1, 1, 1, 4096), .want = ACLNN_SUCCESS},
    {BASE, .name = "valid empty", .g = T4(ACL_FLOAT, 0, 3, 4, 5), .y = T4(ACL_FLOAT, 0, 3, 4, 5),
     .mask = T4(ACL_BOOL, 1, 3, 4, 5), .out = T4(ACL_FLOAT, 0, 3, 4, 5), .want = ACLNN_SUCCESS},
    {BASE, .name = "valid S2 = 0", .g = T4(ACL_FLOAT, 2, 3, 4, 0), .y = T4(ACL_FLOAT, 2, 3, 4, 0),
     .mask = T4(ACL_BOOL, 2, 3, 4, 0), .out = T4(ACL_FLOAT, 2, 3, 4, 0), .want = ACLNN_SUCCESS},
    {BASE, .name = "valid NHWC", .g = TS(ACL_FLOAT, ACL_FORMAT_NHWC, 2, 3, 4, 5), .want = ACLNN_SUCCESS},
    {BASE, .name = "gradOutput NULL", .g.flags = VT_NULL, .want = ACLNN_ERR_PARAM_NULLPTR},
    {BASE, .name = "y NULL", .y.flags = VT_NULL, .want = ACLNN_ERR_PARAM_NULLPTR},
    {BASE, .name = "mask NULL", .mask.flags = VT_NULL, .want = ACLNN_ERR_PARAM_NULLPTR},
    {BASE, .name = "out NULL", .out.flags = VT_NULL, .want = ACLNN_ERR_PARAM_NULLPTR},
    {BASE, .name = "workspaceSize NULL", .null_ws = 1, .want = ACLNN_ERR_PARAM_NULLPTR},
    {BASE, .name = "executor NULL", .null_exec = 1, .want = ACLNN_ERR_PARAM_NULLPTR},
    {BASE, .name = "f64", .g = T4(ACL_DOUBLE, 2, 3, 4, 5), .y = T4(ACL_DOUBLE, 2, 3, 4, 5), .out = T4(ACL_DOUBLE, 2, 3, 4, 5)},
    {BASE, .name = "y dtype differs", .y = T4(ACL_FLOAT16, 2, 3, 4, 5)},
    {BASE, .name = "out dtype differs", .out = T4(ACL_FLOAT16, 2, 3, 4, 5)},
    {BASE, .name = "mask not bool", .mask = T4(ACL_UINT8, 2, 3, 4, 5)},
    {BASE, .name = "rank 3", .g = T4(ACL_FLOAT, 6, 4, 5), .y = T4(ACL_FLOAT, 6, 4, 5), .mask = T4(ACL_BOOL, 6, 4, 5),
     .out = T4(ACL_FLOAT, 6, 4, 5)},
    {BASE, .name = "rank 5", .g = T4(ACL_FLOAT, 1, 2, 3, 4, 5), .y = T4(ACL_FLOAT, 1, 2, 3, 4, 5),
     .mask = T4(ACL_BOOL, 1, 2, 3, 4, 5), .out = T4(ACL_FLOAT, 1, 2, 3, 4, 5)},
    {BASE, .name = "y shape differs", .y = T4(ACL_FLOAT, 2, 3, 5, 4)},
    {BASE, .name = "out shape differs", .out = T4(ACL_FLOAT, 1, 3, 4, 5)},
    {BASE, .name = "mask rank 2", .mask = T4(ACL_BOOL, 4, 5)},
    {BASE, .name = "mask S1 broadcast", .mask = T4(ACL_BOOL, 2, 3, 1, 5)},
    {BASE, .name = "mask S2 broadcast", .mask = T4(ACL_BOOL, 2, 3, 4, 1)},
    {BASE, .name = "mask B mismatch", .g = T4(ACL_FLOAT, 3, 3, 4, 5), .y = T4(ACL_FLOAT, 3, 3, 4, 5),
     .out = T4(ACL_FLOAT, 3, 3, 4, 5)},
    {BASE, .name = "S2 4097", .g = T4(ACL_FLOAT16, 1, 1, 1, 4097), .y = T4(ACL_FLOAT16, 1, 1, 1, 4097),
     .mask = T4(ACL_BOOL, 1, 1, 1, 4097), .out = T4(ACL_FLOAT16, 1, 1, 1, 4097)},
    {BASE, .name = "fixTriuMask true", .triu = true},
    {BASE, .name = "format NC1HWC0 mask", .mask = TS(ACL_BOOL, ACL_FORMAT_NC1HWC0, 2, 3, 4, 5)},
    {BASE, .name = "out overlaps itself", .out.flags = VT_OVERLAP},
    {BASE, .name = "y data NULL", .y.flags = VT_NODATA, .want = ACLNN_ERR_PARAM_NULLPTR},
    {BASE, .name = "mask data NULL", .mask.flags = VT_NODATA, .want = ACLNN_ERR_PARAM_NULLPTR},
    {BASE, .name = "NULL mask before fixTriuMask", .mask.flags = VT_NULL, .triu = true, .want = ACLNN_ERR_PARAM_NULLPTR},
    {BASE, .name = "fixTriuMask before data NULL", .triu = true, .g.flags = VT_NODATA},
    {BASE, .name = "empty still checks fixTriuMask", .g = T4(ACL_FLOAT, 0, 3, 4, 5), .y = T4(ACL_FLOAT, 0, 3, 4, 5),
     .mask = T4(ACL_BOOL, 1, 3, 4, 5), .out = T4(ACL_FLOAT, 0, 3, 4, 5), .triu = true},
};

static void validation_table_returns_documented_status(void **state)
{
    (void)state;
    int fails = 0;
    for (size_t i = 0; i < sizeof vcases / sizeof vcases[0]; i++) {
        const vcase *c = &vcases[i];
        vt_pool pool = {0};
        aclTensor *g = vt_make(&pool, &c->g), *y = vt_make(&pool, &c->y), *m = vt_make(&pool, &c->mask),
                  *o = vt_make(&pool, &c->out);
        uint64_t ws = 77;
        aclOpExecutor *ex = (aclOpExecutor *)&ws;
        aclnnStatus st = aclnnScaledMaskedSoftmaxBackwardGetWorkspaceSize(
            g, y, m, 0.5, c->triu, o, c->null_ws ? NULL : &ws, c->null_exec ? NULL : &ex);
        fails += vt_check_row("softmax", c->name, st, c->want, c->null_exec, ex, ws, aclnnScaledMaskedSoftmaxBackward);
        vt_free(&pool);
    }
    assert_int_equal(fails, 0);
}

static aclnnStatus run_sms(const tt *g, const tt *y, const tt *m, const tt *o, double scale)
{
    uint64_t ws;
    aclOpExecutor *ex;
    aclnnStatus st = aclnnScaledMaskedSoftmaxBackwardGetWorkspaceSize(g->t, y->t, m->t, scale, false, o->t, &ws, &ex);
    if (st != ACLNN_SUCCESS) return st;
    return aclnnScaledMaskedSoftmaxBackward(NULL, ws, ex, NULL);
}

/* Check every output of [B,N,S1,S2] against long double; mask dims mb, mn ∈ {1, B/N}.
 * Returns the number of failures. */
static int check_against_reference(const tt *g, const tt *y, const tt *m, const tt *o, double scale)
{
    const int64_t *d = o->t->dims, *md = m->t->dims;
    int64_t S2 = d[3], rows = o->t->numel / S2;
    long double sc = (float)scale;
    int fails = 0;
    for (int64_t r = 0; r < rows; r++) {
        int64_t i = r % d[2], n = (r / d[2]) % d[1], b = r / (d[2] * d[1]);
        int64_t mrow = ((md[0] == 1 ? 0 : b) * md[1] + (md[1] == 1 ? 0 : n)) * d[2] + i;
        long double s = 0, sa = 0;
        for (int64_t j = 0; j < S2; j++) {
            long double p = (long double)tt_get(g, r * S2 + j) * tt_get(y, r * S2 + j);
            s += p;
            sa += fabsl(p);
        }
        for (int64_t j = 0; j < S2; j++) {
            long double gv = tt_get(g, r * S2 + j), yv = tt_get(y, r * S2 + j);
            double got = tt_get(o, r * S2 + j);
            if (tt_get(m, mrow * S2 + j) != 0) {
                if (got != 0.0 || signbit(got)) { fprintf(stderr, "masked output %a is not +0\n", got); fails++; }
                continue;
            }
            long double ref = sc * (gv * yv - s * yv);
            long double mag = fabsl(sc) * (fabsl(gv * yv) + fabsl(yv) * sa);
            double e = ulp_err(o->dt, got, ref); /* special values: exact match */
            if (isfinite(ref) && isfinite(got)) {
                /* scaled error: |got − ref| in ULPs of m */
                long double um = mag > 0 ? mag : fabsl(ref);
                int p = o->dt == ACL_FLOAT ? 24 : o->dt == ACL_FLOAT16 ? 11 : 8;
                int emin = o->dt == ACL_FLOAT16 ? -14 : -126;
                int ex = um == 0 ? emin : (int)floorl(log2l(um));
                if (ex < emin) ex = emin;
                e = (double)(fabsl((long double)got - ref) / ldexpl(1.0L, ex - p + 1));
            }
            if (!(e <= 1.0)) {
                fprintf(stderr, "softmax %s row %lld j %lld got %a ref %La scaled ulp %g\n", dt_name(o->dt),
                        (long long)r, (long long)j, got, ref, e);
                fails++;
            }
        }
    }
    return fails;
}

static void rows_match_reference_with_mask_broadcast(void **state)
{
    (void)state;
    const aclDataType dts[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
    const int64_t shapes[][4] = {{2, 3, 4, 37}, {1, 2, 3, 1024}, {2, 1, 2, 4096}, {3, 2, 1, 1}};
    const int64_t mshapes[][4] = {{1, 3, 4, 37}, {1, 1, 3, 1024}, {2, 1, 2, 4096}, {3, 1, 1, 1}};
    int fails = 0;
    for (int d = 0; d < 3; d++)
        for (int sh = 0; sh < 4; sh++) {
            tt g = tt_new(dts[d], 4, shapes[sh], TT_CONTIG), y = tt_new(dts[d], 4, shapes[sh], TT_PADDED),
               o = tt_new(dts[d], 4, shapes[sh], TT_COLMAJOR), m = tt_new(ACL_BOOL, 4, mshapes[sh], TT_CONTIG);
            uint64_t s = 77 + (uint64_t)sh;
            for (int64_t i = 0; i < g.t->numel; i++) {
                tt_set(&g, i, tt_rand(&s, -2, 2));
                tt_set(&y, i, tt_rand(&s, 0, 1) / (double)shapes[sh][3] * 2);
            }
            for (int64_t i = 0; i < m.t->numel; i++) tt_set(&m, i, tt_rand(&s, 0, 1) < 0.3);
            assert_int_equal(run_sms(&g, &y, &m, &o, sh == 2 ? -0.125 : 1.7), ACLNN_SUCCESS);
            fails += check_against_reference(&g, &y, &m, &o, sh == 2 ? -0.125 : 1.7);
            assert_int_equal(tt_outside_written(&o), 0);
            tt_free(&g); tt_free(&y); tt_free(&o); tt_free(&m);
        }
    assert_int_equal(fails, 0);
}

/* A NaN or Inf product reaches every unmasked output of its row; masked outputs stay +0.0. */
static void nan_and_inf_propagate_but_masked_is_plus_zero(void **state)
{
    (void)state;
    int64_t dims[4] = {1, 1, 3, 4};
    tt g = tt_new(ACL_FLOAT, 4, dims, TT_CONTIG), y = tt_new(ACL_FLOAT, 4, dims, TT_CONTIG),
       o = tt_new(ACL_FLOAT, 4, dims, TT_CONTIG), m = tt_new(ACL_BOOL, 4, dims, TT_CONTIG);
    for (int i = 0; i < 12; i++) { tt_set(&g, i, 1.0 + i); tt_set(&y, i, 0.25); tt_set(&m, i, i % 4 == 3); }
    tt_set(&g, 1, NAN);      /* row 0: NaN */
    tt_set(&g, 5, INFINITY); /* row 1: Inf → s = Inf */
    assert_int_equal(run_sms(&g, &y, &m, &o, 2.0), ACLNN_SUCCESS);
    for (int i = 0; i < 12; i++) {
        double v = tt_get(&o, i);
        if (i % 4 == 3) { assert_true(v == 0.0 && !signbit(v)); continue; }
        if (i < 4) assert_true(isnan(v));
        else if (i == 5) assert_true(isnan(v));            /* Inf·y − Inf·y */
        else if (i < 8) assert_true(isinf(v) && v < 0);    /* g·y − Inf·y */
        else assert_true(isfinite(v));
    }
    tt_free(&g); tt_free(&y); tt_free(&o); tt_free(&m);
}

/* ops.md §0.6: scale is rounded to f32 before use.  With g = [6, 0], y = [0.5, 0.5] the row sum is
 * 3 and the outputs are exactly ±1.5·scale; for scale = 1 + 2^-24 + 2^-40 the f32 scale is
 * 1 + 2^-23 and ±1.5·(1 + 2^-23) rounds (tie to even) to ±(1.5 + 2^-22), whereas the unrounded
 * scale would give ±(1.5 + 2^-23). */
static void scale_is_rounded_to_f32_before_use(void **state)
{
    (void)state;
    int64_t dims[4] = {1, 1, 1, 2};
    tt g = tt_new(ACL_FLOAT, 4, dims, TT_CONTIG), y = tt_new(ACL_FLOAT, 4, dims, TT_CONTIG),
       o = tt_new(ACL_FLOAT, 4, dims, TT_CONTIG), m = tt_new(ACL_BOOL, 4, dims, TT_CONTIG);
    tt_set(&g, 0, 6.0); tt_set(&g, 1, 0.0); tt_set(&y, 0, 0.5); tt_set(&y, 1, 0.5);
    double scale = 1.0 + 0x1p-24 + 0x1p-40;
    assert_int_equal(run_sms(&g, &y, &m, &o, scale), ACLNN_SUCCESS);
    assert_true(tt_get(&o, 0) == 1.5 + 0x1p-22);
    assert_true(tt_get(&o, 1) == -(1.5 + 0x1p-22));
    tt_free(&g); tt_free(&y); tt_free(&o); tt_free(&m);
}

/* 16-bit rows take their output pass in f32 when the row sum splits into two floats (issue 14),
 * lanes whose t = (g − s)·y is not a normal float by the double formula.  Rows built to reach every
 * branch: exact zeros (g = s with y of both signs, y = ±0 unmasked: the double formula's signed
 * zero, +0 unless g·y = −0 and s·y = +0), bf16 lanes whose t is subnormal (scaled back up by a
 * large scale) or overflows f32 while the result does not, a bf16 row whose sum exceeds FLT_MAX
 * (the double pass for the whole row), ordinary rows with a 16 + 8 lane tail.  The in-register
 * path (contiguous out) and the staged path (padded out) must give the same bits, and both must
 * be within 1 scaled ULP of the long double reference. */
static void half_rows_f32_pass_match_staged_and_reference(void **state)
{
    (void)state;
    enum { R = 6, S2 = 40 };
    int64_t dims[4] = {1, 1, R, S2};
    const aclDataType dts[] = {ACL_FLOAT16, ACL_BF16};
    const double scales[] = {1.7, -0.125, 0x1p60};
    int fails = 0;
    for (int d = 0; d < 2; d++)
        for (int k = 0; k < 3; k++) {
            if (dts[d] == ACL_FLOAT16 && k == 2) continue; /* f16 results would all overflow */
            tt g = tt_new(dts[d], 4, dims, TT_CONTIG), y = tt_new(dts[d], 4, dims, TT_CONTIG),
               m = tt_new(ACL_BOOL, 4, dims, TT_CONTIG), oc = tt_new(dts[d], 4, dims, TT_CONTIG),
               op = tt_new(dts[d], 4, dims, TT_PADDED);
            uint64_t sd = 11 + (uint64_t)(3 * d + k);
            for (int64_t i = 0; i < R * S2; i++) {
                tt_set(&g, i, tt_rand(&sd, -2, 2));
                tt_set(&y, i, tt_rand(&sd, 0, 0.05));
                tt_set(&m, i, tt_rand(&sd, 0, 1) < 0.2);
            }
            /* row 0: y = ±0 at unmasked lanes, g of both signs */
            for (int j = 0; j < S2; j += 3) { tt_set(&y, j, j % 2 ? -0.0 : 0.0); tt_set(&m, j, 0); }
            /* row 1: g = 3 everywhere, y = 1.5, −0.5 then 0: s = 3, so d = 0 at every lane */
            for (int j = 0; j < S2; j++) {
                tt_set(&g, S2 + j, 3.0);
                tt_set(&y, S2 + j, j == 0 ? 1.5 : j == 1 ? -0.5 : j % 2 ? -0.0 : 0.0);
                tt_set(&m, S2 + j, 0);
            }
            if (dts[d] == ACL_BF16) {
                /* row 2: y tiny (subnormal t for s ≈ 1) */
                for (int j = 0; j < S2; j += 2) tt_set(&y, 2 * S2 + j, 0x1p-130 * (1 + j));
                /* row 3: g ≈ 2^127 against s ≈ -2^127: g − s_hi overflows f32 */
                tt_set(&g, 3 * S2, -0x1p127);
                tt_set(&y, 3 * S2, 1.0);
                for (int j = 1; j < S2; j += 4) { tt_set(&g, 3 * S2 + j, 0x1.8p127); tt_set(&y, 3 * S2 + j, 0x1p-60); }
                /* row 4: a sum beyond FLT_MAX */
                for (int j = 0; j < S2; j++) { tt_set(&g, 4 * S2 + j, 0x1p100); tt_set(&y, 4 * S2 + j, 0x1p100); }
            }
            assert_int_equal(run_sms(&g, &y, &m, &oc, scales[k]), ACLNN_SUCCESS);
            assert_int_equal(run_sms(&g, &y, &m, &op, scales[k]), ACLNN_SUCCESS);
            for (int64_t i = 0; i < R * S2; i++)
                if (tt_bits(&oc, i) != tt_bits(&op, i)) {
                    fprintf(stderr, "%s scale %g element %lld: in-register %a, staged %a\n", dt_name(dts[d]), scales[k],
                            (long long)i, tt_get(&oc, i), tt_get(&op, i));
                    fails++;
                }
            /* the double formula's zeros: +0·scale for g = s (row 1, y ≠ 0) */
            for (int j = 0; j < 2; j++) {
                double v = tt_get(&oc, S2 + j);
                if (v != 0.0 || (bool)signbit(v) != (scales[k] < 0)) fails++;
            }
            fails += check_against_reference(&g, &y, &m, &oc, scales[k]);
            tt_free(&g); tt_free(&y); tt_free(&m); tt_free(&oc); tt_free(&op);
        }
    assert_int_equal(fails, 0);
}

static void threads_give_identical_bits(void **state)
{
    (void)state;
    int64_t dims[4] = {2, 3, 17, 300}, md[4] = {2, 1, 17, 300};
    int64_t n = 2 * 3 * 17 * 300;
    uint64_t *ref = malloc((size_t)n * sizeof *ref);
    for (int threads = 1; threads <= 3; threads++) {
        aclconformSetNumThreads(threads);
        int lay = threads == 2 ? TT_PADDED : TT_CONTIG;
        tt g = tt_new(ACL_FLOAT16, 4, dims, lay), y = tt_new(ACL_FLOAT16, 4, dims, lay),
           o = tt_new(ACL_FLOAT16, 4, dims, lay), m = tt_new(ACL_BOOL, 4, md, lay);
        uint64_t s = 3;
        for (int64_t i = 0; i < n; i++) { tt_set(&g, i, tt_rand(&s, -1, 1)); tt_set(&y, i, tt_rand(&s, 0, 0.01)); }
        for (int64_t i = 0; i < m.t->numel; i++) tt_set(&m, i, tt_rand(&s, 0, 1) < 0.2);
        assert_int_equal(run_sms(&g, &y, &m, &o, 0.3), ACLNN_SUCCESS);
        for (int64_t i = 0; i < n; i++) {
            if (threads == 1) ref[i] = tt_bits(&o, i);
            else assert_true(tt_bits(&o, i) == ref[i]);
        }
        tt_free(&g); tt_free(&y); tt_free(&o); tt_free(&m);
    }
    aclconformSetNumThreads(0);
    free(ref);
}

/* f32 rows with streaming stores (round 27: every size with acl_nt_set_min_bytes(0), on storage
 * on a 64-byte line, S2 a multiple of 8) and without (S2 = 300, 16-byte-aligned storage) for 1, 2
 * and 3 threads give the bits of the plain call; NaN, Inf and masked lanes included. */
static void f32_streaming_stores_give_identical_bits(void **state)
{
    (void)state;
    static const int64_t s2s[] = {1024, 1032, 300};
    for (int k = 0; k < 3; k++) {
        int64_t dims[4] = {2, 3, 5, s2s[k]}, md[4] = {1, 3, 5, s2s[k]}, n = 30 * s2s[k];
        uint64_t *ref = malloc((size_t)n * sizeof *ref);
        assert_non_null(ref);
        for (int run = 0; run < 5; run++) {
            int threads = run == 0 ? 1 : 1 + (run - 1) % 3;
            aclconformSetNumThreads(threads);
            acl_nt_set_min_bytes(run == 0 ? -1 : 0);
            int lay = run == 4 ? TT_CONTIG : TT_CONTIG64;
            tt g = tt_new(ACL_FLOAT, 4, dims, lay), y = tt_new(ACL_FLOAT, 4, dims, lay),
               o = tt_new(ACL_FLOAT, 4, dims, lay), m = tt_new(ACL_BOOL, 4, md, lay);
            uint64_t s = 5 + (uint64_t)k;
            for (int64_t i = 0; i < n; i++) {
                tt_set(&g, i, i % 977 == 3 ? NAN : i % 1201 == 7 ? INFINITY : tt_rand(&s, -1, 1));
                tt_set(&y, i, tt_rand(&s, 0, 0.01));
            }
            for (int64_t i = 0; i < m.t->numel; i++) tt_set(&m, i, tt_rand(&s, 0, 1) < 0.2);
            assert_int_equal(run_sms(&g, &y, &m, &o, 0.3), ACLNN_SUCCESS);
            for (int64_t i = 0; i < n; i++) {
                if (run == 0) ref[i] = tt_bits(&o, i);
                else if (tt_bits(&o, i) != ref[i])
                    fail_msg("S2 %lld, %d threads, layout %d: element %lld has bits %#llx, plain stores gave %#llx",
                             (long long)s2s[k], threads, lay, (long long)i, (unsigned long long)tt_bits(&o, i),
                             (unsigned long long)ref[i]);
            }
            tt_free(&g); tt_free(&y); tt_free(&o); tt_free(&m);
        }
        free(ref);
    }
    acl_nt_set_min_bytes(-1);
    aclconformSetNumThreads(0);
}

/* Round 28: the AVX2 row kernel (CPUs without AVX-512) gives the AVX-512 kernel's bits, and both
 * give the portable row's: the same 32 partial sums in the same order, the same tree, the same
 * double and f32 formulas, the same lanes redone.  Every vector level the CPU has
 * (acl_simd_set_cap) against level 0, bit for bit, and against level 2 where the CPU has
 * AVX-512; every level within 1 scaled ULP of the long double reference.  One exception: bf16
 * with |scale| <= 1 on a CPU with AVX512-BF16 ("fold" in sms_out16: lanes whose v = t·scale is
 * subnormal are redone in double there, kept in f32 by the portable row), where level 0 is held
 * to the reference only.  Rows: all masked, none masked, random masks; NaN and Inf in g and in y;
 * 16-bit exact zeros (g = s, y = ±0), subnormal t and subnormal v = t·scale, bf16 sums beyond
 * FLT_MAX and g − s_hi beyond it, bf16 products beyond f32's range both ways (the AVX2 bf16 dot
 * sums f32 products only when the row's range makes them exact); a row where g·y − s·y cancels to 2^-31 of s·y (any other
 * rounding of the double formula shows); and an order row, pairs ±B (y = Y) at positions 37 apart among
 * small products, so that the partial sums round differently in any other order or tree (the f32
 * and bf16 outputs see it).  S2 in {1024, 1032, 300, 17, 4096} (every tail), four scales,
 * 1-3 threads, streaming stores in half of the runs (every size, storage on a 64-byte line). */
static void vector_paths_give_portable_bits(void **state)
{
    (void)state;
#ifndef ACL_HAVE_AVX2_KERNELS
    skip();
#else
    static const int64_t s2s[] = {1024, 1032, 300, 17, 4096};
    const aclDataType dts[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
    const double scales[] = {0.3, -1.7, -0.125, 0x1p40};
    int levels = 0;
    for (int d = 0; d < 3; d++)
        for (int k = 0; k < 5; k++)
            for (int c = 0; c < 4; c++) {
                aclDataType dt = dts[d];
                int64_t S2 = s2s[k], S1 = 7;
                int64_t dims[4] = {S2 == 4096 ? 1 : 2, 3, S1, S2}, md[4] = {1, 3, S1, S2};
                if (c == 1) md[0] = dims[0], md[1] = 1; /* mask broadcast over N instead */
                int64_t n = dims[0] * dims[1] * S1 * S2, rows = n / S2;
                bool nt = c % 2 == 0; /* f32 rows of S2 % 8 == 0, 16-bit (AVX2) of S2 % 8 == 0 */
                int lay = nt ? TT_CONTIG64 : TT_CONTIG;
                tt g = tt_new(dt, 4, dims, lay), y = tt_new(dt, 4, dims, lay), o = tt_new(dt, 4, dims, lay),
                   m = tt_new(ACL_BOOL, 4, md, TT_CONTIG);
                uint64_t *top = malloc((size_t)n * sizeof *top);
                assert_non_null(top);
                uint64_t sd = 0x5eed + (uint64_t)(100 * d + 10 * k + c);
                double big = dt == ACL_FLOAT16 ? 0x1p15 : 0x1p40, bigy = dt == ACL_FLOAT16 ? 0x1p15 : 1.0;
                for (int64_t r = 0; r < rows; r++) {
                    int kind = (int)(r % 8);
                    for (int64_t j = 0; j < S2; j++) {
                        double gv = tt_rand(&sd, -2, 2), yv = tt_rand(&sd, 0, 2.0 / (double)S2);
                        switch (kind) {
                        case 0: /* g = c, y = 1/2, 1/2, then tiny: s − c tiny, so g·y − s·y cancels to ~2^-31 of
                                   s·y (its double rounding shows in f32) */
                            if (r % 16 == 0) gv = 0.703125, yv = j < 2 ? 0.5 : tt_rand(&sd, 0, 0x1p-40);
                            break;
                        case 1: if (j == S2 / 2) gv = NAN; break;
                        case 2: if (j == S2 - 1) gv = r % 16 < 8 ? INFINITY : -INFINITY; break;
                        case 3: if (j == 0) yv = INFINITY; break;
                        case 4: /* g = 3, y: 1.5, -0.5, then ±0 (s = 3: d = 0) and y = ±0 elsewhere */
                            gv = j % 5 == 4 ? gv : 3.0;
                            yv = j == 0 ? 1.5 : j == 1 ? -0.5 : j % 5 == 4 ? 0.0 : j % 2 ? -0.0 : 0.0;
                            break;
                        case 5: /* tiny y: t subnormal (2^-130) or normal with v = t·scale subnormal */
                            yv = j % 3 == 0 ? 0x1p-130 * (double)(1 + j % 7) : j % 3 == 1 ? 0x1p-124 * (1 + (double)(j % 64) / 64) : yv;
                            if (r % 16 >= 8) { /* products ~2^-140 (inexact in f32) and s·y seen through y ~ 2^60 */
                                gv = j % 2 ? 0.0 : ldexp(tt_rand(&sd, 1, 2), -70);
                                yv = j % 2 ? ldexp(tt_rand(&sd, 1, 2), 60) : ldexp(tt_rand(&sd, 1, 2), -70);
                            }
                            break;
                        case 6: /* the order row */
                            if (j % 37 == 5) gv = (j / 37) % 2 ? -big : big, yv = bigy;
                            else yv = tt_rand(&sd, 0, 1);
                            break;
                        case 7: /* bf16: sums beyond FLT_MAX (products 2^140 at every fourth lane, finite
                                   outputs elsewhere); g − s_hi beyond it */
                            if (dt == ACL_BF16 && r % 16 < 8) {
                                if (j % 4 == 0) gv = 0x1p70, yv = 0x1p70;
                                else yv = ldexp(tt_rand(&sd, 1, 2), -60);
                            }
                            else if (dt == ACL_BF16) {
                                if (j == 0) gv = -0x1p127, yv = 1.0;
                                else if (j % 4 == 1) gv = 0x1.8p127, yv = 0x1p-60;
                            }
                            break;
                        default: break;
                        }
                        tt_set(&g, r * S2 + j, gv);
                        tt_set(&y, r * S2 + j, yv);
                    }
                }
                for (int64_t i = 0; i < m.t->numel; i++) {
                    int64_t mrow = i / S2 % S1; /* S1 row 0: all masked, 1: none, others random */
                    tt_set(&m, i, mrow == 0 ? 1 : mrow == 1 ? 0 : tt_rand(&sd, 0, 1) < 0.25);
                }
                bool fold = dt == ACL_BF16 && fabs(scales[c]) <= 1.0 && acl_bf16_hw, have_top = false;
                int top_level = 0;
                aclconformSetNumThreads(1 + (c + k) % 3);
                acl_nt_set_min_bytes(nt ? 0 : -1);
                for (int level = 2; level >= 0; level--) {
                    if (!tt_use_level(level)) continue;
                    if (level == 0 && !have_top) break; /* no vector level: nothing to compare */
                    memset(tt_ptr(&o, 0), 0xa5, (size_t)n * o.es);
                    assert_int_equal(run_sms(&g, &y, &m, &o, scales[c]), ACLNN_SUCCESS);
                    int fails = check_against_reference(&g, &y, &m, &o, scales[c]);
                    for (int64_t i = 0; i < n; i++) {
                        uint64_t b = tt_bits(&o, i);
                        if (!have_top) top[i] = b;
                        /* the twins (levels 2 and 1) bit for bit; the portable loops a NaN as any NaN */
                        else if (!(level == 0 ? tt_same_value(dt, b, top[i]) : b == top[i]) && !(level == 0 && fold) &&
                                 fails++ < 5)
                            fprintf(stderr, "softmax %s S2 %lld scale %g level %d: row %lld j %lld (g %a y %a) bits %#llx, "
                                            "level %d gave %#llx\n", dt_name(dt), (long long)S2, scales[c], level,
                                    (long long)(i / S2), (long long)(i % S2), tt_get(&g, i), tt_get(&y, i),
                                    (unsigned long long)b, top_level, (unsigned long long)top[i]);
                    }
                    if (!have_top) have_top = true, top_level = level, levels++;
                    assert_int_equal(fails, 0);
                }
                acl_simd_set_cap(2);
                acl_nt_set_min_bytes(-1);
                aclconformSetNumThreads(0);
                free(top);
                tt_free(&g); tt_free(&y); tt_free(&o); tt_free(&m);
            }
    if (levels == 0) skip(); /* a CPU with neither AVX2 nor AVX-512 */
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(validation_table_returns_documented_status),
        cmocka_unit_test(rows_match_reference_with_mask_broadcast),
        cmocka_unit_test(nan_and_inf_propagate_but_masked_is_plus_zero),
        cmocka_unit_test(scale_is_rounded_to_f32_before_use),
        cmocka_unit_test(half_rows_f32_pass_match_staged_and_reference),
        cmocka_unit_test(threads_give_identical_bits),
        cmocka_unit_test(f32_streaming_stores_give_identical_bits),
        cmocka_unit_test(vector_paths_give_portable_bits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
