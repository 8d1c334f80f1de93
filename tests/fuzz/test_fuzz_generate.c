/* ctest-labels: unit */
/* The generator against the constraint files: determinism, validity of valid cases, exactly
 * one broken rule per invalid case, coverage of shapes, views and edge values, exhaustive
 * chunks.  Validity is judged by validator.h, written from the JSON, not by fuzz/ or impl/. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "constraints.h"
#include "fuzz.h"
#include "constraints_fixture.h"

static bool same_case(const cf_case *a, const cf_case *b)
{
    if (a->ntensors != b->ntensors || a->nparams != b->nparams || a->seed != b->seed || a->index != b->index ||
        a->expect_status != b->expect_status || strcmp(a->rule, b->rule) || strcmp(a->origin_kind, b->origin_kind))
        return false;
    for (int i = 0; i < a->ntensors; i++) {
        const cf_tensor *x = &a->tensors[i], *y = &b->tensors[i];
        if (x->present != y->present || x->dtype != y->dtype || x->ndim != y->ndim || x->offset != y->offset ||
            x->storage_ndim != y->storage_ndim || strcmp(x->format, y->format) ||
            memcmp(x->shape, y->shape, sizeof x->shape) || memcmp(x->strides, y->strides, sizeof x->strides) ||
            memcmp(x->storage_shape, y->storage_shape, sizeof x->storage_shape))
            return false;
        if ((x->data == NULL) != (y->data == NULL)) return false;
        if (x->data && memcmp(x->data, y->data, (size_t)cf_tensor_storage_numel(x) * cf_dtype_size(x->dtype))) return false;
    }
    for (int i = 0; i < a->nparams; i++) {
        const cf_param *x = &a->params[i], *y = &b->params[i];
        if (x->is_null != y->is_null || x->kind != y->kind || x->b != y->b || x->i != y->i || strcmp(x->str, y->str) ||
            x->scalar_dtype != y->scalar_dtype || x->scalar_bits != y->scalar_bits || x->arr_len != y->arr_len ||
            memcmp(&x->f64, &y->f64, sizeof x->f64))
            return false;
        if (x->arr_len && memcmp(x->arr, y->arr, sizeof(int64_t) * (size_t)x->arr_len)) return false;
    }
    return true;
}

static void same_seed_gives_identical_cases(void **state)
{
    (void)state;
    for (int o = 0; o < CF_OP_COUNT; o++) {
        fz_stream s[16];
        int n = fz_streams(cz[o], "spec", s, 16);
        assert_true(n > 0 && n <= 16);
        for (int i = 0; i < n; i++)
            for (int64_t k = 0; k < 20; k++) {
                cf_case a, b, c;
                assert_int_equal(fz_generate(cz[o], "spec", &s[i], 0x5eed, k, &a), FZ_OK);
                assert_int_equal(fz_generate(cz[o], "spec", &s[i], 0x5eed, k, &b), FZ_OK);
                assert_int_equal(fz_generate(cz[o], "spec", &s[i], 0x5eee, k, &c), FZ_OK);
                assert_true(same_case(&a, &b));
                assert_true(a.seed == fz_case_seed(0x5eed, (cf_op)o, s[i].dtype, s[i].variant, k));
                assert_true(a.seed != c.seed);
                assert_int_equal(a.index, k);
                cf_case_free(&a);
                cf_case_free(&b);
                cf_case_free(&c);
            }
        for (int r = 0; r < fz_rule_count(cz[o], "spec"); r++) {
            cf_case a, b;
            assert_int_equal(fz_generate_invalid(cz[o], "spec", r, 7, 3, &a), FZ_OK);
            assert_int_equal(fz_generate_invalid(cz[o], "spec", r, 7, 3, &b), FZ_OK);
            assert_true(same_case(&a, &b));
            cf_case_free(&a);
            cf_case_free(&b);
        }
    }
    /* seeds differ across every field of the key */
    uint64_t s0 = fz_case_seed(1, CF_OP_gelu_backward_v2, CF_F16, "approximate=none", 0);
    assert_true(s0 != fz_case_seed(1, CF_OP_gelu_backward_v2, CF_F16, "approximate=tanh", 0));
    assert_true(s0 != fz_case_seed(1, CF_OP_gelu_backward_v2, CF_BF16, "approximate=none", 0));
    assert_true(s0 != fz_case_seed(1, CF_OP_logit_grad, CF_F16, "approximate=none", 0));
    assert_true(s0 != fz_case_seed(1, CF_OP_gelu_backward_v2, CF_F16, "approximate=none", 1));
    assert_true(s0 != fz_case_seed(2, CF_OP_gelu_backward_v2, CF_F16, "approximate=none", 0));
}

static void check_params(int o, const cf_case *c)
{
    const cJSON *root = js[o], *p;
    cJSON_ArrayForEach(p, v_get(root, "params"))
    {
        const cf_param *cp = cf_case_param_c(c, v_get(p, "name")->valuestring);
        assert_non_null(cp);
        const char *kind = v_get(p, "kind")->valuestring;
        if (cp->is_null) {
            assert_true(cJSON_IsTrue(v_get(p, "nullable")));
            continue;
        }
        if (!strcmp(kind, "scalar")) {
            assert_true(v_in_strlist(v_get(p, "scalar_dtypes"), cf_dtype_name(cp->scalar_dtype)));
            size_t w = cf_dtype_size(cp->scalar_dtype) * 8;
            assert_true(w == 64 || cp->scalar_bits >> w == 0);
        }
    }
}

/* every valid case of every stream and profile breaks no rule and is well formed */
static void valid_cases_satisfy_every_constraint(void **state)
{
    (void)state;
    char why[512], broken[1024];
    for (int o = 0; o < CF_OP_COUNT; o++)
        for (int pi = 0; pi < cz_profile_count(cz[o]); pi++) {
            const char *prof = cz_profile_name(cz[o], pi);
            fz_stream s[16];
            int n = fz_streams(cz[o], prof, s, 16);
            for (int i = 0; i < n; i++)
                for (int64_t k = 0; k < 60; k++) {
                    cf_case c;
                    assert_int_equal(fz_generate(cz[o], prof, &s[i], 1234, k, &c), FZ_OK);
                    if (!v_structure(&c, why, sizeof why)) fail_msg("%s %s k=%lld: %s", cf_op_name((cf_op)o), prof, (long long)k, why);
                    if (v_broken_rules(js[o], &c, broken, sizeof broken))
                        fail_msg("%s %s %s %s k=%lld: valid case breaks %s", cf_op_name((cf_op)o), prof,
                                 cf_dtype_name(s[i].dtype), s[i].variant, (long long)k, broken);
                    for (int t = 0; t < c.ntensors; t++) {
                        assert_true(c.tensors[t].present);
                        assert_true(v_dtype_ok(js[o], &c.tensors[t]));
                        assert_true(v_rank_ok(js[o], &c.tensors[t]));
                        assert_true(v_in_strlist(v_get(v_get(js[o], "formats"), "accepted"), c.tensors[t].format));
                    }
                    const char *st = v_get(v_get(js[o], "streams"), "dtype_of")->valuestring;
                    assert_int_equal(cf_case_tensor_c(&c, st)->dtype, s[i].dtype);
                    assert_int_equal(c.expect_status, 0);
                    assert_string_equal(c.rule, "");
                    assert_string_equal(c.profile, prof);
                    check_params(o, &c);
                    /* the variant's params are applied */
                    const cJSON *v;
                    cJSON_ArrayForEach(v, v_get(v_get(js[o], "streams"), "variants"))
                    {
                        if (strcmp(v_get(v, "name")->valuestring, s[i].variant)) continue;
                        const cJSON *pv;
                        cJSON_ArrayForEach(pv, v_get(v, "params")) assert_string_equal(cf_case_param_c(&c, pv->string)->str, pv->valuestring);
                    }
                    cf_case_free(&c);
                }
        }
}

static void invalid_cases_break_exactly_their_rule(void **state)
{
    (void)state;
    char why[512], broken[1024];
    for (int o = 0; o < CF_OP_COUNT; o++)
        for (int pi = 0; pi < cz_profile_count(cz[o]); pi++) {
            const char *prof = cz_profile_name(cz[o], pi);
            int nr = fz_rule_count(cz[o], prof);
            int enabled = 0;
            const cJSON *r;
            cJSON_ArrayForEach(r, v_get(js[o], "rules")) enabled += v_rule_status(js[o], prof, v_get(r, "name")->valuestring) >= 0;
            assert_int_equal(nr, enabled);
            for (int ri = 0; ri < nr; ri++) {
                const char *name = fz_rule_name(cz[o], prof, ri);
                assert_int_equal(fz_rule_status(cz[o], prof, ri), v_rule_status(js[o], prof, name));
                assert_int_equal(fz_rule_find(cz[o], prof, name), ri);
                for (int64_t k = 0; k < 15; k++) {
                    cf_case c;
                    assert_int_equal(fz_generate_invalid(cz[o], prof, ri, 99, k, &c), FZ_OK);
                    if (!v_structure(&c, why, sizeof why))
                        fail_msg("%s %s rule %s k=%lld: %s", cf_op_name((cf_op)o), prof, name, (long long)k, why);
                    int nb = v_broken_rules(js[o], &c, broken, sizeof broken);
                    if (nb != 1 || strcmp(broken, name))
                        fail_msg("%s %s rule %s k=%lld: breaks [%s]", cf_op_name((cf_op)o), prof, name, (long long)k, broken);
                    assert_string_equal(c.rule, name);
                    assert_int_equal(c.expect_status, v_rule_status(js[o], prof, name));
                    assert_string_equal(c.origin_kind, "invalid");
                    cf_case_free(&c);
                }
            }
        }
}

/* Properties of an operator's contract that decide which coverage classes it must show, read
 * from its constraint file (a new operator needs no edit here). */
static bool any_rank0(const cz_constraints *c)
{
    for (int i = 0; i < c->ntensors; i++)
        if (c->tensors[i].rank_min == 0) return true;
    return false;
}

static bool has_rule(const cz_constraints *c, cz_rule_kind k)
{
    for (int r = 0; r < c->nrules; r++)
        if (c->rules[r].kind == k) return true;
    return false;
}

static bool any_promote(const cz_constraints *c)
{
    for (int i = 0; i < c->ntensors; i++)
        if (c->tensors[i].rel == CZ_REL_PROMOTE) return true;
    return false;
}

/* a real attribute (whose special values are param_special); with ints: one of integer dtype */
static bool has_real_param(const cz_constraints *c, bool int_scalar)
{
    for (int i = 0; i < c->nparams; i++) {
        const cz_param *p = &c->params[i];
        if (p->derived || (p->kind != CF_PARAM_F64 && p->kind != CF_PARAM_SCALAR)) continue;
        if (!int_scalar) return true;
        for (int d = 0; d < CF_DTYPE_COUNT && p->kind == CF_PARAM_SCALAR; d++)
            if ((p->scalar_dtypes & (1u << d)) && !cf_dtype_is_float((cf_dtype)d)) return true;
    }
    return false;
}

static bool has_ulp_boundary(const cz_constraints *c)
{
    for (int v = 0; v < c->nvalues; v++)
        for (int e = 0; e < c->values[v].nedges && c->values[v].ulp_neighbours > 0; e++)
            if (c->values[v].edges[e].boundary) return true;
    return false;
}

/* which coverage classes each operator must show over a few thousand cases */
static bool cov_expected(cf_op op, fz_cov_class k)
{
    const cz_constraints *c = cz[op];
    cz_model_kind m = c->model.kind;
    switch (k) {
    case FZ_COV_rank0: return any_rank0(c);
    case FZ_COV_empty: return !has_rule(c, CZ_RULE_EMPTY_TENSOR);
    case FZ_COV_broadcast:
    case FZ_COV_broadcast_size1:
    case FZ_COV_broadcast_size0: return m == CZ_MODEL_BROADCAST;
    case FZ_COV_mixed_dtype: return any_promote(c);
    case FZ_COV_param_special: return has_real_param(c, false);
    case FZ_COV_scalar_int: return has_real_param(c, true);
    case FZ_COV_val_boundary_ulp: return has_ulp_boundary(c);
    case FZ_COV_mask_all_masked_row:
    case FZ_COV_mask_unmasked_row:
    case FZ_COV_mask_broadcast:
    case FZ_COV_softmax_realistic_y: return m == CZ_MODEL_SOFTMAX;
    case FZ_COV_nsa_empty_batch:
    case FZ_COV_nsa_short_batch:
    case FZ_COV_nsa_tail:
    case FZ_COV_nsa_overlap:
    case FZ_COV_nsa_null_actseqlen: return m == CZ_MODEL_NSA;
    default: return true;
    }
}

/* the derivation above gives the five operators the classes they were hand-listed with */
static void coverage_expectations_follow_the_contracts(void **state)
{
    (void)state;
    static const struct { const char *op; fz_cov_class k; bool want; } X[] = {
        {"logit_grad", FZ_COV_rank0, true},           {"nsa_compress_grad", FZ_COV_rank0, false},
        {"scaled_masked_softmax_backward", FZ_COV_rank0, false},
        {"nsa_compress_grad", FZ_COV_empty, false},   {"gelu_backward_v2", FZ_COV_empty, true},
        {"gelu_backward_v2", FZ_COV_broadcast, true}, {"softplus_backward", FZ_COV_broadcast, false},
        {"gelu_backward_v2", FZ_COV_mixed_dtype, true}, {"softplus_backward", FZ_COV_mixed_dtype, true},
        {"logit_grad", FZ_COV_mixed_dtype, false},    {"nsa_compress_grad", FZ_COV_param_special, false},
        {"gelu_backward_v2", FZ_COV_param_special, false}, {"scaled_masked_softmax_backward", FZ_COV_param_special, true},
        {"softplus_backward", FZ_COV_scalar_int, true}, {"logit_grad", FZ_COV_scalar_int, false},
        {"softplus_backward", FZ_COV_val_boundary_ulp, true}, {"nsa_compress_grad", FZ_COV_val_boundary_ulp, false},
        {"scaled_masked_softmax_backward", FZ_COV_val_boundary_ulp, false},
    };
    for (size_t i = 0; i < sizeof X / sizeof X[0]; i++) {
        cf_op op;
        assert_true(cf_op_parse(X[i].op, &op));
        if (cov_expected(op, X[i].k) != X[i].want) fail_msg("%s: %s expected %d", X[i].op, fz_cov_name(X[i].k), X[i].want);
    }
}

static void distribution_covers_edges_and_shape_forms(void **state)
{
    (void)state;
    for (int o = 0; o < CF_OP_COUNT; o++) {
        fz_coverage cov = {0};
        fz_stream s[16];
        int n = fz_streams(cz[o], "spec", s, 16);
        for (int64_t k = 0; k < 2000; k++) {
            cf_case c;
            assert_int_equal(fz_generate(cz[o], "spec", &s[k % n], 2024, k / n, &c), FZ_OK);
            fz_coverage_add(cz[o], &c, &cov);
            cf_case_free(&c);
        }
        printf("coverage %s (%lld cases):", cf_op_name((cf_op)o), (long long)cov.cases);
        for (int k = 0; k < FZ_COV_COUNT; k++)
            if (cov.counts[k] || cov_expected((cf_op)o, (fz_cov_class)k)) printf(" %s=%lld", fz_cov_name((fz_cov_class)k), (long long)cov.counts[k]);
        printf("\n");
        for (int k = 0; k < FZ_COV_COUNT; k++)
            if (cov_expected((cf_op)o, (fz_cov_class)k) && cov.counts[k] == 0)
                fail_msg("%s: coverage class %s never generated", cf_op_name((cf_op)o), fz_cov_name((fz_cov_class)k));
    }
}

static void exhaustive_covers_every_pattern_once(void **state)
{
    (void)state;
    static unsigned char seen[65536];
    for (int o = 0; o < CF_OP_COUNT; o++) {
        fz_stream s[16];
        int n = fz_streams(cz[o], "spec", s, 16);
        const cJSON *ex = v_get(js[o], "exhaustive");
        for (int i = 0; i < n; i++) {
            int64_t cnt = fz_exhaustive_count(cz[o], &s[i], false);
            if (!ex || (s[i].dtype != CF_F16 && s[i].dtype != CF_BF16)) {
                assert_true(cnt == 0);
                if (ex && s[i].dtype == CF_F32)
                    assert_true(fz_exhaustive_count(cz[o], &s[i], true) ==
                                ((int64_t)1 << 32) / v_get(ex, "chunk")->valueint * cJSON_GetArraySize(v_get(ex, "param_sets")));
                continue;
            }
            int64_t chunk = v_get(ex, "chunk")->valueint, nsets = cJSON_GetArraySize(v_get(ex, "param_sets"));
            int64_t ngrad = cJSON_GetArraySize(v_get(ex, "gradients"));
            assert_true(cnt == 65536 / chunk * nsets);
            memset(seen, 0, sizeof seen);
            char broken[1024], why[256];
            for (int64_t k = 0; k < 65536 / chunk; k++) {
                cf_case c;
                assert_int_equal(fz_exhaustive_case(cz[o], "spec", &s[i], 5, k, &c), FZ_OK);
                assert_true(v_structure(&c, why, sizeof why));
                assert_int_equal(v_broken_rules(js[o], &c, broken, sizeof broken), 0);
                const cf_tensor *x = cf_case_tensor_c(&c, v_get(ex, "x")->valuestring);
                assert_int_equal(x->shape[0], ngrad);
                for (int64_t e = 0; e < chunk; e++) {
                    uint16_t b = ((const uint16_t *)x->data)[e];
                    assert_int_equal(seen[b], 0);
                    seen[b] = 1;
                }
                cf_case_free(&c);
            }
            for (int b = 0; b < 65536; b++) assert_int_equal(seen[b], 1);
            cf_case c;
            assert_int_equal(fz_exhaustive_case(cz[o], "spec", &s[i], 5, cnt, &c), FZ_ERR_ARG);
        }
    }
}

static void tolerances_and_profiles_come_from_the_files(void **state)
{
    (void)state;
    for (int o = 0; o < CF_OP_COUNT; o++) {
        const cJSON *t;
        cJSON_ArrayForEach(t, v_get(js[o], "tolerances"))
        {
            cf_dtype dt;
            double mu = 0, ms = 0;
            assert_true(cf_dtype_parse(v_get(t, "dtype")->valuestring, &dt));
            assert_int_equal(cz_tolerance(cz[o], "spec", dt, "", &mu, &ms), FZ_OK);
            assert_true(mu == v_get(t, "max_ulp")->valuedouble && ms == v_get(t, "max_scaled_ulp")->valuedouble);
        }
        assert_int_equal(cz_tolerance(cz[o], "no-such-profile", CF_F16, "", NULL, NULL), FZ_ERR_ARG);
        assert_int_equal(cz_tolerance(cz[o], "spec", CF_I8, "", NULL, NULL), FZ_ERR_ARG);
    }
    /* numerics.md §7 and the cann-kernel overrides, spot-checked */
    double mu = 0, ms = 0;
    cz_tolerance(cz[CF_OP_gelu_backward_v2], "spec", CF_F32, "approximate=none", &mu, &ms);
    assert_true(mu == 4 && ms == 2);
    cz_tolerance(cz[CF_OP_gelu_backward_v2], "cann-kernel", CF_F32, "approximate=none", &mu, &ms);
    assert_true(mu > 4 && ms <= mu);
    cz_tolerance(cz[CF_OP_gelu_backward_v2], "cann-kernel", CF_F32, "approximate=tanh", &mu, &ms);
    assert_true(mu == 4 && ms == 2);
    cz_tolerance(cz[CF_OP_softplus_backward], "cann-kernel", CF_F64, NULL, &mu, &ms);
    assert_true(mu == 4.0 * 536870912.0 && ms == 2.0 * 536870912.0);
    cz_tolerance(cz[CF_OP_scaled_masked_softmax_backward], "spec", CF_BF16, "", &mu, &ms);
    assert_true(mu == 0.51 && ms == 1);
    cz_tolerance(cz[CF_OP_nsa_compress_grad], "cann-kernel", CF_F16, "", &mu, &ms);
    assert_true(mu == 0.51 && ms == 1);
    assert_true(cz_special(cz[CF_OP_logit_grad], "cann-kernel", "x_nan_with_nonneg_eps_gives_zero"));
    assert_false(cz_special(cz[CF_OP_logit_grad], "spec", "x_nan_with_nonneg_eps_gives_zero"));
    assert_int_equal(fz_rule_status(cz[CF_OP_nsa_compress_grad], "cann-kernel",
                                    fz_rule_find(cz[CF_OP_nsa_compress_grad], "cann-kernel", "block_not_multiple_16")),
                     561002);
    assert_int_equal(fz_rule_find(cz[CF_OP_softplus_backward], "cann-kernel", "null_beta"), -1);
    assert_true(fz_rule_find(cz[CF_OP_softplus_backward], "spec", "null_beta") >= 0);
    /* streams: one per (output dtype, variant) */
    assert_int_equal(fz_streams(cz[CF_OP_gelu_backward_v2], "spec", NULL, 0), 6);
    assert_int_equal(fz_streams(cz[CF_OP_softplus_backward], "spec", NULL, 0), 4);
    assert_int_equal(fz_streams(cz[CF_OP_nsa_compress_grad], "spec", NULL, 0), 2);
    assert_int_equal(fz_streams(cz[CF_OP_logit_grad], "bogus", NULL, 0), -1);
}

static void bad_arguments_are_values(void **state)
{
    (void)state;
    cf_case c;
    fz_stream s = {CF_OP_logit_grad, CF_F64, ""};
    assert_int_equal(fz_generate(cz[CF_OP_logit_grad], "spec", &s, 1, 0, &c), FZ_ERR_ARG);
    s.dtype = CF_F16;
    assert_int_equal(fz_generate(cz[CF_OP_gelu_backward_v2], "spec", &s, 1, 0, &c), FZ_ERR_ARG);
    assert_int_equal(fz_generate(cz[CF_OP_logit_grad], "spec", &s, 1, -1, &c), FZ_ERR_ARG);
    assert_int_equal(fz_generate(cz[CF_OP_logit_grad], "nope", &s, 1, 0, &c), FZ_ERR_ARG);
    assert_int_equal(fz_generate_invalid(cz[CF_OP_logit_grad], "spec", 999, 1, 0, &c), FZ_ERR_ARG);
    assert_null(fz_rule_name(cz[CF_OP_logit_grad], "spec", 999));
    assert_int_equal(fz_rule_status(cz[CF_OP_logit_grad], "spec", -1), -1);
    assert_int_equal(fz_generate(cz[CF_OP_logit_grad], "spec", &s, 1, 0, &c), FZ_OK);
    cf_case_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(same_seed_gives_identical_cases),
        cmocka_unit_test(valid_cases_satisfy_every_constraint),
        cmocka_unit_test(invalid_cases_break_exactly_their_rule),
        cmocka_unit_test(coverage_expectations_follow_the_contracts),
        cmocka_unit_test(distribution_covers_edges_and_shape_forms),
        cmocka_unit_test(exhaustive_covers_every_pattern_once),
        cmocka_unit_test(tolerances_and_profiles_come_from_the_files),
        cmocka_unit_test(bad_arguments_are_values),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
