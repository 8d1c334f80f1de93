/* ctest-labels: diff
 * Issue 58, item 4: two rogue targets made from the built-in implementation's outputs, scored by
 * the sweep's own pipeline (generator, oracle, cf_score_case) on every stream of every operator:
 *  - inf_to_zero: every element whose expected value is ±Inf in the output dtype (r infinite or
 *    beyond the overflow threshold) returned as +0 -- the LogitGrad f32/bf16 elements whose
 *    interval r ± err lies beyond the threshold used to be oracle-uncertain and never scored;
 *  - nan_hard: every element the oracle found hardest in its case (the largest err/ulp_T(r)
 *    among its finite elements) returned as NaN.
 * Every element either rogue changed must fail, each on its own (so every case and row they touch
 * fails; the unchanged outputs pass), and each must touch cases: the LogitGrad overflow elements for the first, every row for the second.  Elements with
 * an alt (numerics.md §5) are left alone: there a 0 or a NaN can be the other branch's value. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "eval.h"
#include "fuzz.h"
#include "run.h"
#include "stats.h"
#include "target.h"
#include "ulp.h"

enum { ROGUE_INF_TO_ZERO, ROGUE_NAN_HARD };
enum { CASES = 60, MAX_STREAMS = 64 };

static cz_constraints *cz[CF_OP_COUNT];
static cf_target builtin;

static int setup(void **state)
{
    (void)state;
    char err[512];
    cf_err e = {{0}};
    if (cz_load_dir(ACLCONFORM_SOURCE_DIR "/constraints", cz, err, sizeof err) != FZ_OK) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    return cf_target_open("builtin", &builtin, &e) == CFE_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    cf_target_close(&builtin);
    for (int o = 0; o < CF_OP_COUNT; o++) cz_free(cz[o]);
    return 0;
}

static void put_nan(cf_dtype dt, uint8_t *p)
{
    static const uint64_t nan_bits[] = {[CF_F16] = 0x7e00, [CF_BF16] = 0x7fc0, [CF_F32] = 0x7fc00000u,
                                        [CF_F64] = 0x7ff8000000000000u};
    memcpy(p, &nan_bits[dt], cf_dtype_size(dt));
}

/* Changes the outputs of r as the rogue does; returns how many elements it changed. */
static int64_t rogue_outputs(int mode, const cf_expected *x, cf_run_result *r)
{
    int64_t changed = 0;
    for (int o = 0; o < r->nout; o++) {
        cf_run_out *ro = &r->out[o];
        const cf_expected_out *eo = NULL;
        for (int k = 0; k < x->nout; k++)
            if (!strcmp(x->out[k].name, ro->name)) eo = &x->out[k];
        cf_fmt f;
        if (!eo || !ro->bits || !cf_fmt_of(ro->dtype, &f)) continue;
        size_t es = cf_dtype_size(ro->dtype);
        double hardest = 0;
        for (int64_t i = 0; i < ro->n && mode == ROGUE_NAN_HARD; i++) {
            double v = eo->r[i];
            if ((eo->masked && eo->masked[i]) || !isfinite(v) || fabs(v) >= f.ovf || !eo->err) continue;
            if (eo->err[i] / cf_ulp(&f, v) > hardest) hardest = eo->err[i] / cf_ulp(&f, v);
        }
        for (int64_t i = 0; i < ro->n; i++) {
            double v = eo->r[i];
            bool ambiguous = eo->alt && memcmp(&eo->alt[i], &eo->r[i], sizeof v) != 0;
            if ((eo->masked && eo->masked[i]) || ambiguous) continue;
            uint8_t *p = ro->bits + (size_t)i * es;
            if (mode == ROGUE_INF_TO_ZERO && (isinf(v) || (isfinite(v) && fabs(v) >= f.ovf))) {
                memset(p, 0, es);
                changed++;
            } else if (mode == ROGUE_NAN_HARD && hardest > 0 && isfinite(v) && fabs(v) < f.ovf &&
                       eo->err[i] / cf_ulp(&f, v) == hardest) {
                put_nan(ro->dtype, p);
                changed++;
            }
        }
    }
    return changed;
}

static void rogue_fails_every_case_it_changes(int mode)
{
    int64_t touched_rows = 0, touched_cases = 0, logit_overflows = 0;
    for (int op = 0; op < CF_OP_COUNT; op++) {
        fz_stream s[MAX_STREAMS];
        int ns = fz_streams(cz[op], "spec", s, MAX_STREAMS);
        assert_true(ns > 0 && ns <= MAX_STREAMS);
        for (int si = 0; si < ns; si++) {
            int64_t touched = 0, passed = 0;
            for (int64_t k = 0; k < CASES; k++) {
                cf_case c;
                if (fz_generate(cz[op], "spec", &s[si], 0x5eed, k, &c) != FZ_OK) continue;
                cf_err e = {{0}};
                cf_run_result r;
                cf_expected x;
                memset(&x, 0, sizeof x);
                if (c.expect_status != 0 || cf_run_here(&builtin, &c, &r, &e) != CFE_OK) {
                    cf_case_free(&c);
                    continue;
                }
                if (r.status == 0 && !r.error[0] && cf_oracle_expected(&c, "spec", &x, &e) == CFE_OK) {
                    cf_dtype dt;
                    char variant[FZ_VARIANT_LEN];
                    cf_case_stream_key(cz, &c, "spec", &dt, variant);
                    cf_tol tol;
                    assert_int_equal(cf_tolerance_for(cz, &c, "spec", variant, false, &tol, &e), CFE_OK);
                    cf_case_verdict v;
                    cf_score_case(&c, &x, &r, &tol, k, "builtin", NULL, &v, NULL, NULL, 0);
                    assert_int_equal(v.failed_elements, 0); /* the built-in implementation conforms */
                    int64_t changed = rogue_outputs(mode, &x, &r);
                    if (changed) {
                        cf_score_case(&c, &x, &r, &tol, k, "rogue", NULL, &v, NULL, NULL, 0);
                        touched++;
                        /* every element the rogue changed is a failure of its own */
                        passed += v.failed_elements != changed;
                        if (op == CF_OP_logit_grad && mode == ROGUE_INF_TO_ZERO) logit_overflows += changed;
                        if (v.failed_elements != changed)
                            fprintf(stderr, "%s stream %d case %lld: %lld elements changed, %lld fail\n",
                                    cf_op_name((cf_op)op), si, (long long)k, (long long)changed,
                                    (long long)v.failed_elements);
                    }
                }
                cf_expected_free(&x);
                cf_run_result_free(&r);
                cf_case_free(&c);
            }
            touched_cases += touched;
            touched_rows += touched > 0;
            assert_int_equal(passed, 0);
        }
    }
    print_message("rogue %s: %lld cases changed in %lld streams, every changed element failed%s\n",
                  mode == ROGUE_INF_TO_ZERO ? "inf_to_zero" : "nan_hard", (long long)touched_cases, (long long)touched_rows,
                  mode == ROGUE_INF_TO_ZERO ? "" : " (one or more NaNs a case)");
    if (mode == ROGUE_INF_TO_ZERO) assert_true(logit_overflows > 0);
    else assert_true(touched_rows >= CF_OP_COUNT);
}

static void inf_to_zero_fails_every_case_it_touches(void **state)
{
    (void)state;
    rogue_fails_every_case_it_changes(ROGUE_INF_TO_ZERO);
}

static void nan_on_the_hardest_elements_fails_every_case_it_touches(void **state)
{
    (void)state;
    rogue_fails_every_case_it_changes(ROGUE_NAN_HARD);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(inf_to_zero_fails_every_case_it_touches),
        cmocka_unit_test(nan_on_the_hardest_elements_fails_every_case_it_touches),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
