/* ctest-labels: unit
 * NsaCompressGrad oracle: overlapping windows, an empty batch, a batch shorter than l and tail
 * tokens (inputGrad 0), checked against a naive scatter over (block, row) pairs written here;
 * inconsistent actSeqLen -> ORC_EINVAL; the spec example (f16, l = 32, d = 16). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "oracle_test_util.h"

static void small_case_matches_naive_scatter(void **state)
{
    (void)state;
    /* l = 4, d = 2, N = 1, D = 2; actSeqLen [0, 9, 12, 14]: batch 0 empty, batch 1 has 3 windows at
     * 0, 2, 4 (token 8 uncovered), batch 2 (3 tokens) and 3 (2 tokens) have none: C = 3. */
    enum { T = 14, N = 1, D = 2, L = 4, DS = 2, C = 3 };
    int64_t asl[4] = {0, 9, 12, 14};
    float inp[T * N * D], og[C * N * D], w[L * N];
    uint16_t inp_h[T * N * D], og_h[C * N * D], w_h[L * N];
    for (int i = 0; i < T * N * D; i++) inp[i] = (float)((i * 7) % 11 - 5), inp_h[i] = tt_f16_bits(inp[i]);
    for (int i = 0; i < C * N * D; i++) og[i] = (float)((i * 5) % 7 - 3) * 0.5f, og_h[i] = tt_f16_bits(og[i]);
    for (int i = 0; i < L * N; i++) w[i] = (float)(i + 1) * 0.25f, w_h[i] = tt_f16_bits(w[i]);
    double ig[T * N * D] = {0}, wg[L * N] = {0};
    int starts[C] = {0, 2, 4};
    for (int c = 0; c < C; c++)
        for (int r = 0; r < L; r++)
            for (int k = 0; k < D; k++) {
                int t = starts[c] + r;
                ig[t * D + k] += (double)w[r] * og[c * D + k];
                wg[r] += (double)og[c * D + k] * inp[t * D + k];
            }
    int64_t s_og[3] = {C, N, D}, s_in[3] = {T, N, D}, s_w[2] = {L, N};
    tt_tensor to, ti, tw;
    tt_out oi, ow;
    orc_out *outi = tt_out_alloc(&oi, T * N * D), *outw = tt_out_alloc(&ow, L * N);
    assert_int_equal(orc_nsa_compress_grad(tt_make(&to, CF_F16, 3, s_og, og_h), tt_make(&ti, CF_F16, 3, s_in, inp_h),
                                           tt_make(&tw, CF_F16, 2, s_w, w_h), asl, 4, L, DS, CF_F16, ORC_PROFILE_SPEC,
                                           outi, outw),
                     ORC_OK);
    for (int i = 0; i < T * N * D; i++) {
        assert_true(outi->r[i] == ig[i]); /* dyadic: every sum is exact */
        if (i >= 8 * D) assert_true(outi->r[i] == 0.0 && outi->m[i] == 0.0);
    }
    for (int r = 0; r < L; r++) assert_true(outw->r[r] == wg[r]);
    /* token 3 is covered by windows 0 (r = 3) and 1 (r = 1): m = Σ|w·og| */
    double m3 = fabs((double)w[3] * og[0]) + fabs((double)w[1] * og[2]);
    assert_true(outi->m[3 * D] == m3);
    /* inconsistent actSeqLen: C would be 4, last != T, decreasing */
    int64_t bad1[2] = {9, 14}, bad2[2] = {9, 13}, bad3[3] = {9, 5, 14};
    assert_int_equal(orc_nsa_compress_grad(&to.t, &ti.t, &tw.t, bad1, 2, L, DS, CF_F16, ORC_PROFILE_SPEC, outi, outw),
                     ORC_EINVAL);
    assert_int_equal(orc_nsa_compress_grad(&to.t, &ti.t, &tw.t, bad2, 2, L, DS, CF_F16, ORC_PROFILE_SPEC, outi, outw),
                     ORC_EINVAL);
    assert_int_equal(orc_nsa_compress_grad(&to.t, &ti.t, &tw.t, bad3, 3, L, DS, CF_F16, ORC_PROFILE_SPEC, outi, outw),
                     ORC_EINVAL);
    tt_out_free(&oi);
    tt_out_free(&ow);
}

static void spec_example_matches(void **state)
{
    (void)state;
    int64_t n1 = 0, n2 = 0, n3 = 0, n4 = 0, n5 = 0, n6 = 0, n7 = 0;
    const char *dir = "nsa_compress_grad/51a7488a3c231b9f/";
    char p[256];
#define EX(name, cnt) (snprintf(p, sizeof p, "%s%s", dir, name), tt_example(p, cnt))
    uint16_t *og = EX("outputGrad.npy", &n1), *inp = EX("input.npy", &n2), *w = EX("weight.npy", &n3);
    double *eig = EX("expected.inputGradOut.npy", &n4), *ewg = EX("expected.weightGradOut.npy", &n5);
    double *mig = EX("magnitude.inputGradOut.npy", &n6), *mwg = EX("magnitude.weightGradOut.npy", &n7);
#undef EX
    assert_non_null(og), assert_non_null(inp), assert_non_null(w);
    assert_non_null(eig), assert_non_null(ewg), assert_non_null(mig), assert_non_null(mwg);
    int64_t asl[4] = {0, 64, 112, 120};
    int64_t s_og[3] = {5, 2, 32}, s_in[3] = {120, 2, 32}, s_w[2] = {32, 2};
    tt_tensor to, ti, tw;
    tt_out oi, ow;
    orc_out *outi = tt_out_alloc(&oi, n4), *outw = tt_out_alloc(&ow, n5);
    assert_int_equal(orc_nsa_compress_grad(tt_make(&to, CF_F16, 3, s_og, og), tt_make(&ti, CF_F16, 3, s_in, inp),
                                           tt_make(&tw, CF_F16, 2, s_w, w), asl, 4, 32, 16, CF_F16, ORC_PROFILE_SPEC,
                                           outi, outw),
                     ORC_OK);
    for (int64_t i = 0; i < n4; i++) {
        assert_true(fabs(outi->r[i] - eig[i]) <= outi->err[i] + 0x1p-52 * fabs(eig[i]));
        assert_true(fabs(outi->m[i] - mig[i]) <= 1e-14 * mig[i]);
    }
    for (int64_t i = 0; i < n5; i++) {
        assert_true(fabs(outw->r[i] - ewg[i]) <= outw->err[i] + 0x1p-52 * fabs(ewg[i]));
        assert_true(fabs(outw->m[i] - mwg[i]) <= 1e-14 * mwg[i]);
    }
    /* tail batch (tokens 112..119, shorter than l) has no window: 0 */
    for (int64_t i = 112 * 64; i < 120 * 64; i++) assert_true(outi->r[i] == 0.0);
    tt_out_free(&oi);
    tt_out_free(&ow);
    free(og), free(inp), free(w), free(eig), free(ewg), free(mig), free(mwg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(small_case_matches_naive_scatter),
        cmocka_unit_test(spec_example_matches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
