/* ctest-labels: unit */
/* Structural coverage bins (fuzz.h fz_bins_*): the case set of a default sweep hits every bin
 * of every operator, and the API (names, lookup, invalid cases, merge, JSON) behaves.
 *
 * The case set: the default sweep's streams (profile spec, seed 0x5eed, every (op, dtype,
 * variant) stream) with a fixed budget per stream of its first FZ_TEST_CASES valid cases (k = 0
 * .. 383) and its first scheduled large case (k = 700, fz_case_is_large()) -- a subset of what a
 * 60 s default sweep runs (about 2200 cases per stream on a loaded 2-core machine: k = 0 ..
 * 2200, two large cases each) -- plus the invalid cases of every rule. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "fuzz.h"
#include "constraints_fixture.h"

#define FZ_TEST_SEED 0x5eed
#define FZ_TEST_CASES 384
#define FZ_TEST_LARGE_K 700
#define FZ_TEST_INVALID 4

static void default_sweep_case_set_hits_every_bin(void **state)
{
    (void)state;
    assert_true(fz_case_is_large(700) && !fz_case_is_large(699) && !fz_case_is_large(0) && !fz_case_is_large(7));
    int missing = 0;
    for (int o = 0; o < CF_OP_COUNT; o++) {
        fz_bins *b = fz_bins_new(cz[o]);
        assert_non_null(b);
        fz_stream s[16];
        int n = fz_streams(cz[o], "spec", s, 16);
        assert_true(n > 0 && n <= 16);
        for (int i = 0; i < n; i++)
            for (int64_t j = 0; j <= FZ_TEST_CASES; j++) {
                int64_t k = j < FZ_TEST_CASES ? j : FZ_TEST_LARGE_K; /* then the first large case */
                cf_case c;
                assert_int_equal(fz_generate(cz[o], "spec", &s[i], FZ_TEST_SEED, k, &c), FZ_OK);
                fz_bins_add(b, &c);
                cf_case_free(&c);
            }
        for (int r = 0; r < fz_rule_count(cz[o], "spec"); r++)
            for (int64_t k = 0; k < FZ_TEST_INVALID; k++) {
                cf_case c;
                assert_int_equal(fz_generate_invalid(cz[o], "spec", r, FZ_TEST_SEED, k, &c), FZ_OK);
                fz_bins_add(b, &c);
                cf_case_free(&c);
            }
        assert_int_equal(fz_bins_cases(b), (int64_t)n * (FZ_TEST_CASES + 1));
        assert_int_equal(fz_bins_invalid(b), (int64_t)fz_rule_count(cz[o], "spec") * FZ_TEST_INVALID);
        printf("bins %s (%lld cases, %d bins):", cf_op_name((cf_op)o), (long long)fz_bins_cases(b), fz_bins_count(b));
        for (int i = 0; i < fz_bins_count(b); i++) printf(" %s=%lld", fz_bins_name(b, i), (long long)fz_bins_hits(b, i));
        printf("\n");
        int miss_op = 0;
        for (int i = 0; i < fz_bins_count(b); i++)
            if (fz_bins_hits(b, i) == 0) {
                fprintf(stderr, "%s: coverage bin %s never hit\n", cf_op_name((cf_op)o), fz_bins_name(b, i));
                miss_op++;
            }
        assert_int_equal(fz_bins_missing(b), miss_op);
        missing += miss_op;
        fz_bins_free(b);
    }
    assert_int_equal(missing, 0);
}

static void bins_api_names_merge_and_json(void **state)
{
    (void)state;
    for (int o = 0; o < CF_OP_COUNT; o++) {
        fz_bins *a = fz_bins_new(cz[o]), *b = fz_bins_new(cz[o]);
        assert_non_null(a);
        assert_non_null(b);
        assert_int_equal(fz_bins_op(a), o);
        int n = fz_bins_count(a);
        assert_true(n > 5);
        for (int i = 0; i < n; i++) {
            const char *nm = fz_bins_name(a, i), *g = fz_bins_group(a, i);
            assert_non_null(nm);
            assert_non_null(g);
            assert_int_equal(strncmp(nm, g, strlen(g)), 0); /* "GROUP:BIN" */
            assert_int_equal(nm[strlen(g)], ':');
            assert_int_equal(fz_bins_find(a, nm), i); /* names are unique */
            assert_int_equal(fz_bins_hits(a, i), 0);
        }
        assert_null(fz_bins_name(a, n));
        assert_int_equal(fz_bins_hits(a, -1), -1);
        assert_int_equal(fz_bins_find(a, "no:such-bin"), -1);
        assert_int_equal(fz_bins_missing(a), n);
        fz_stream s[16];
        fz_streams(cz[o], "spec", s, 16);
        for (int64_t k = 0; k < 20; k++) {
            cf_case c;
            assert_int_equal(fz_generate(cz[o], "spec", &s[0], 3, k, &c), FZ_OK);
            fz_bins_add(k < 10 ? a : b, &c);
            cf_case_free(&c);
        }
        int64_t ra = fz_bins_hits(a, fz_bins_find(a, fz_bins_name(a, 0))), rb = fz_bins_hits(b, 0);
        assert_int_equal(fz_bins_merge(a, b), FZ_OK);
        assert_int_equal(fz_bins_cases(a), 20);
        assert_int_equal(fz_bins_hits(a, 0), ra + rb);
        /* every valid case has exactly one rank and one numel bin */
        int64_t rank_hits = 0, numel_hits = 0;
        for (int i = 0; i < n; i++) {
            if (!strcmp(fz_bins_group(a, i), "rank")) rank_hits += fz_bins_hits(a, i);
            if (!strcmp(fz_bins_group(a, i), "numel")) numel_hits += fz_bins_hits(a, i);
        }
        assert_int_equal(rank_hits, 20);
        assert_int_equal(numel_hits, 20);
        char *text = fz_bins_json(a);
        assert_non_null(text);
        cJSON *root = cJSON_Parse(text);
        assert_non_null(root);
        assert_string_equal(cJSON_GetObjectItem(root, "op")->valuestring, cf_op_name((cf_op)o));
        assert_int_equal((int)cJSON_GetObjectItem(root, "cases")->valuedouble, 20);
        assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(root, "bins")), n);
        assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(root, "missing")), fz_bins_missing(a));
        cJSON_Delete(root);
        free(text);
        /* another operator's bins do not merge */
        fz_bins *other = fz_bins_new(cz[(o + 1) % CF_OP_COUNT]);
        assert_int_equal(fz_bins_merge(a, other), FZ_ERR_ARG);
        fz_bins_free(other);
        fz_bins_free(a);
        fz_bins_free(b);
    }
    assert_null(fz_bins_new(NULL));
    assert_int_equal(fz_bins_count(NULL), 0);
}


/* the scheduled large tier: valid, well formed, more than 2^20 elements */
static void large_tier_cases_are_valid_and_large(void **state)
{
    (void)state;
    char why[512], broken[1024];
    for (int o = 0; o < CF_OP_COUNT; o++) {
        fz_stream s[16];
        int n = fz_streams(cz[o], "spec", s, 16);
        for (int64_t k = FZ_TEST_LARGE_K; k <= FZ_TEST_LARGE_K; k += 1024) {
            cf_case c;
            assert_int_equal(fz_generate(cz[o], "spec", &s[(int)(k % n)], FZ_TEST_SEED, k, &c), FZ_OK);
            int64_t mx = 0;
            for (int i = 0; i < c.ntensors; i++)
                if (cf_tensor_numel(&c.tensors[i]) > mx) mx = cf_tensor_numel(&c.tensors[i]);
            if (mx <= ((int64_t)1 << 20)) fail_msg("%s k=%lld: largest tensor has %lld elements", cf_op_name((cf_op)o), (long long)k, (long long)mx);
            if (!v_structure(&c, why, sizeof why)) fail_msg("%s k=%lld: %s", cf_op_name((cf_op)o), (long long)k, why);
            if (v_broken_rules(js[o], &c, broken, sizeof broken)) fail_msg("%s k=%lld: valid case breaks %s", cf_op_name((cf_op)o), (long long)k, broken);
            cf_case_free(&c);
        }
    }
}

/* invalid cases of a rule, k = 0 .. n-1, as a callback over each */
typedef bool (*edge_fn)(const cf_case *c);
static int count_edge(cf_op op, const char *rule, int n, edge_fn f)
{
    int i = fz_rule_find(cz[op], "spec", rule), hits = 0;
    assert_true(i >= 0);
    for (int64_t k = 0; k < n; k++) {
        cf_case c;
        char broken[1024];
        assert_int_equal(fz_generate_invalid(cz[op], "spec", i, 42, k, &c), FZ_OK);
        assert_int_equal(c.expect_status, v_rule_status(js[op], "spec", rule));
        if (v_broken_rules(js[op], &c, broken, sizeof broken) != 1 || strcmp(broken, rule))
            fail_msg("%s %s k=%lld breaks [%s]", cf_op_name(op), rule, (long long)k, broken);
        hits += f(&c);
        cf_case_free(&c);
    }
    return hits;
}

static bool s2_is_4097(const cf_case *c) { return cf_case_tensor_c(c, "gradOutput")->shape[3] == 4097; }
static bool rank_3(const cf_case *c) { return cf_case_tensor_c(c, "gradOutput")->ndim == 3; }
static bool rank_5(const cf_case *c) { return cf_case_tensor_c(c, "gradOutput")->ndim == 5; }
static bool case_or_space(const cf_case *c)
{
    const char *a = cf_case_param_c(c, "approximate")->str;
    return !strcmp(a, "Tanh") || !strcmp(a, "None") || !strcmp(a, " tanh") || !strcmp(a, "none ") ||
           !strcmp(a, "tanh ") || !strcmp(a, " none") || !strcmp(a, "TANH") || !strcmp(a, "NONE");
}
static bool empty_string(const cf_case *c) { return cf_case_param_c(c, "approximate")->str[0] == 0; }
static bool mask_inner_1(const cf_case *c)
{
    const cf_tensor *m = cf_case_tensor_c(c, "mask"), *g = cf_case_tensor_c(c, "gradOutput");
    return (m->shape[2] == 1 && g->shape[2] > 1) || (m->shape[3] == 1 && g->shape[3] > 1);
}
static bool broadcastable_unequal(const cf_case *c)
{
    const cf_tensor *a = cf_case_tensor_c(c, "self"), *b = cf_case_tensor_c(c, "gradOutput");
    int r;
    int64_t bs[CF_MAX_RANK];
    return v_broadcast(a, b, &r, bs) && !v_same_shape(a, b);
}
static bool l_or_d_off_by_one(const cf_case *c)
{
    int64_t l = cf_case_param_c(c, "compressBlockSize")->i, d = cf_case_param_c(c, "compressStride")->i;
    return l % 16 == 1 || l % 16 == 15 || d % 16 == 1 || d % 16 == 15;
}
static bool d_not_positive(const cf_case *c) { return cf_case_param_c(c, "compressStride")->i <= 0; }
static bool last_T_pm1(const cf_case *c)
{
    const cf_param *p = cf_case_param_c(c, "actSeqLen");
    int64_t T = cf_case_tensor_c(c, "input")->shape[0];
    return !p->is_null && p->arr_len > 0 && (p->arr[p->arr_len - 1] == T + 1 || p->arr[p->arr_len - 1] == T - 1);
}
static bool weight_broadcastable(const cf_case *c)
{
    const cf_tensor *w = cf_case_tensor_c(c, "weight"), *in = cf_case_tensor_c(c, "input");
    return w->shape[1] == 1 && in->shape[1] > 1;
}

static bool first_case_is(cf_op op, const char *rule, int64_t k, edge_fn f)
{
    cf_case c;
    int i = fz_rule_find(cz[op], "spec", rule);
    assert_int_equal(fz_generate_invalid(cz[op], "spec", i, FZ_TEST_SEED, k, &c), FZ_OK);
    bool r = f(&c);
    cf_case_free(&c);
    return r;
}

static bool not_valid_string(const cf_case *c)
{
    const char *a = cf_case_param_c(c, "approximate")->str;
    return strcmp(a, "none") && strcmp(a, "tanh") && strcmp(a, "None") && strcmp(a, "exact");
}
static bool d_plus_1(const cf_case *c) { return cf_case_param_c(c, "compressStride")->i % 16 == 1; }

static void invalid_cases_reach_the_edge(void **state)
{
    (void)state;
    /* the default sweep runs invalid cases k = 0, 1 of every rule: the canonical edges */
    assert_true(first_case_is(CF_OP_scaled_masked_softmax_backward, "last_dim_too_large", 0, s2_is_4097));
    assert_true(first_case_is(CF_OP_scaled_masked_softmax_backward, "last_dim_too_large", 1, s2_is_4097));
    assert_true(first_case_is(CF_OP_scaled_masked_softmax_backward, "rank_not_4", 0, rank_5));
    assert_true(first_case_is(CF_OP_scaled_masked_softmax_backward, "rank_not_4", 1, rank_3));
    assert_true(first_case_is(CF_OP_scaled_masked_softmax_backward, "mask_not_broadcastable", 0, mask_inner_1));
    assert_true(first_case_is(CF_OP_gelu_backward_v2, "approximate_invalid", 0, not_valid_string));
    assert_true(first_case_is(CF_OP_nsa_compress_grad, "block_not_multiple_16", 0, d_plus_1));
    assert_true(first_case_is(CF_OP_nsa_compress_grad, "block_not_multiple_16", 1, d_not_positive));
    assert_true(first_case_is(CF_OP_nsa_compress_grad, "actseqlen_invalid", 0, last_T_pm1));
    assert_true(count_edge(CF_OP_scaled_masked_softmax_backward, "last_dim_too_large", 30, s2_is_4097) >= 10);
    assert_true(count_edge(CF_OP_scaled_masked_softmax_backward, "rank_not_4", 30, rank_3) >= 5);
    assert_true(count_edge(CF_OP_scaled_masked_softmax_backward, "rank_not_4", 30, rank_5) >= 5);
    assert_true(count_edge(CF_OP_scaled_masked_softmax_backward, "mask_not_broadcastable", 40, mask_inner_1) >= 3);
    assert_true(count_edge(CF_OP_gelu_backward_v2, "approximate_invalid", 60, case_or_space) >= 10);
    assert_true(count_edge(CF_OP_gelu_backward_v2, "approximate_invalid", 60, empty_string) >= 2);
    assert_true(count_edge(CF_OP_softplus_backward, "self_shape_mismatch", 40, broadcastable_unequal) >= 5);
    assert_true(count_edge(CF_OP_nsa_compress_grad, "block_not_multiple_16", 40, l_or_d_off_by_one) >= 10);
    assert_true(count_edge(CF_OP_nsa_compress_grad, "block_not_multiple_16", 60, d_not_positive) >= 2);
    assert_true(count_edge(CF_OP_nsa_compress_grad, "actseqlen_invalid", 60, last_T_pm1) >= 5);
    assert_true(count_edge(CF_OP_nsa_compress_grad, "dims_mismatch", 60, weight_broadcastable) >= 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bins_api_names_merge_and_json),
        cmocka_unit_test(default_sweep_case_set_hits_every_bin),
        cmocka_unit_test(large_tier_cases_are_valid_and_large),
        cmocka_unit_test(invalid_cases_reach_the_edge),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
