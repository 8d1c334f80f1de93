/* ctest-labels: api
 * Meta objects (abi.md): every validation path of aclCreateTensor / Scalar / IntArray returns
 * NULL (never crashes), every success path stores what it was given, destroy(NULL) is 0;
 * ownership is checked by the sanitizer build (no leaks). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "aclnn/acl_meta.h"
#include "runtime/runtime.h"

static float buf[64];

static void create_tensor_accepts_valid_views(void **state)
{
    (void)state;
    int64_t d[3] = {2, 3, 4}, s[3] = {12, 4, 1}, sd = 64;
    aclTensor *t = aclCreateTensor(d, 3, ACL_FLOAT, s, 0, ACL_FORMAT_ND, d, 3, buf);
    assert_non_null(t);
    assert_int_equal(t->numel, 24);
    assert_true(acl_tensor_is_contiguous(t));
    aclDestroyTensor(t);
    /* NULL stride = contiguous; a view ending exactly at the last storage element */
    int64_t d2[2] = {3, 5}, s2[2] = {1, 3};
    t = aclCreateTensor(d2, 2, ACL_FLOAT, NULL, 49, ACL_FORMAT_ND, &sd, 1, buf);
    assert_non_null(t);
    assert_int_equal(t->strides[0], 5);
    assert_int_equal(t->strides[1], 1);
    aclDestroyTensor(t);
    t = aclCreateTensor(d2, 2, ACL_FLOAT, s2, 50, ACL_FORMAT_NCHW, &sd, 1, buf); /* last = 50+2+12 = 64? */
    assert_null(t); /* 50 + 2 + 12 = 64 is outside 64 elements */
    t = aclCreateTensor(d2, 2, ACL_FLOAT, s2, 49, ACL_FORMAT_NCHW, &sd, 1, buf);
    assert_non_null(t);
    assert_false(acl_tensor_is_contiguous(t));
    aclDestroyTensor(t);
    /* rank 0 and empty views; an empty view needs no storage; 32 dims are accepted */
    t = aclCreateTensor(NULL, 0, ACL_BF16, NULL, 0, ACL_FORMAT_ND, &sd, 1, buf);
    assert_non_null(t);
    assert_int_equal(t->numel, 1);
    aclDestroyTensor(t);
    int64_t z[2] = {0, 1000000}, zero = 0;
    t = aclCreateTensor(z, 2, ACL_FLOAT16, NULL, 0, ACL_FORMAT_ND, &zero, 1, NULL);
    assert_non_null(t);
    assert_int_equal(t->numel, 0);
    aclDestroyTensor(t);
    int64_t ones[32], st[32];
    for (int i = 0; i < 32; i++) ones[i] = 1, st[i] = 1;
    t = aclCreateTensor(ones, 32, ACL_INT8, st, 0, ACL_FORMAT_ND, &sd, 1, buf);
    assert_non_null(t);
    aclDestroyTensor(t);
}

static void create_tensor_rejects_invalid_descriptions(void **state)
{
    (void)state;
    int64_t d[2] = {2, 3}, s[2] = {3, 1}, sd = 64;
    int64_t neg[2] = {2, -1}, negs[2] = {3, -1};
    int64_t ones[33], huge[2] = {INT64_C(1) << 40, INT64_C(1) << 40};
    for (int i = 0; i < 33; i++) ones[i] = 1;
    assert_null(aclCreateTensor(NULL, 2, ACL_FLOAT, s, 0, ACL_FORMAT_ND, &sd, 1, buf));
    assert_null(aclCreateTensor(d, 2, ACL_FLOAT, s, 0, ACL_FORMAT_ND, NULL, 1, buf));
    assert_null(aclCreateTensor(neg, 2, ACL_FLOAT, s, 0, ACL_FORMAT_ND, &sd, 1, buf));
    assert_null(aclCreateTensor(d, 2, ACL_FLOAT, negs, 0, ACL_FORMAT_ND, &sd, 1, buf));
    assert_null(aclCreateTensor(d, 2, ACL_FLOAT, s, -1, ACL_FORMAT_ND, &sd, 1, buf));
    int64_t negsd = -4;
    assert_null(aclCreateTensor(d, 2, ACL_FLOAT, s, 0, ACL_FORMAT_ND, &negsd, 1, buf));
    assert_null(aclCreateTensor(ones, 33, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, &sd, 1, buf));
    assert_null(aclCreateTensor(d, 2, (aclDataType)99, s, 0, ACL_FORMAT_ND, &sd, 1, buf));
    assert_null(aclCreateTensor(d, 2, ACL_DT_UNDEFINED, s, 0, ACL_FORMAT_ND, &sd, 1, buf));
    /* element count overflow (2^80) and a view past its storage */
    int64_t three[3] = {INT64_C(1) << 40, INT64_C(1) << 40, 1};
    assert_null(aclCreateTensor(three, 3, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, huge, 2, buf));
    int64_t small = 5;
    assert_null(aclCreateTensor(d, 2, ACL_FLOAT, s, 0, ACL_FORMAT_ND, &small, 1, buf));
    int64_t bigstride[2] = {INT64_MAX / 2, 1};
    assert_null(aclCreateTensor(d, 2, ACL_FLOAT, bigstride, 0, ACL_FORMAT_ND, &sd, 1, buf));
}

static void output_overlap_detection(void **state)
{
    (void)state;
    int64_t sd = 64;
    struct { int64_t d[2], s[2]; bool overlap; } cs[] = {
        {{3, 4}, {4, 1}, false}, {{3, 4}, {1, 3}, false}, {{3, 4}, {0, 1}, true},
        {{1, 4}, {0, 1}, false}, /* a 0 stride on a size-1 dim is harmless */
        {{3, 4}, {2, 1}, true},  /* rows overlap */
        {{2, 2}, {1, 2}, false}, {{2, 3}, {2, 1}, true}, /* 0,1,2,2,3,4 */
        {{2, 3}, {3, 2}, false}, /* interleaved: 0,2,4,3,5,7 */
        {{2, 2}, {3, 2}, false}, /* interleaved: 0,2,3,5 — no collision */
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        aclTensor *t = aclCreateTensor(cs[i].d, 2, ACL_FLOAT, cs[i].s, 0, ACL_FORMAT_ND, &sd, 1, buf);
        assert_non_null(t);
        if (acl_tensor_self_overlaps(t) != cs[i].overlap) fail_msg("overlap case %zu", i);
        aclDestroyTensor(t);
    }
}

static void create_scalar_copies_and_checks_dtype(void **state)
{
    (void)state;
    float f = 1.5f;
    aclScalar *s = aclCreateScalar(&f, ACL_FLOAT);
    assert_non_null(s);
    f = 7.0f; /* copied, not referenced */
    assert_true(acl_scalar_to_f64(s) == 1.5);
    aclDestroyScalar(s);
    int64_t big = (INT64_C(1) << 60) + 1;
    s = aclCreateScalar(&big, ACL_INT64);
    assert_true(acl_scalar_to_f32(s) == 0x1p60f);
    aclDestroyScalar(s);
    uint16_t h = 0x3c00; /* 1.0 in f16; 0x3f80 is 1.0 in bf16 */
    s = aclCreateScalar(&h, ACL_FLOAT16);
    assert_true(acl_scalar_to_f32(s) == 1.0f);
    aclDestroyScalar(s);
    h = 0x3f80;
    s = aclCreateScalar(&h, ACL_BF16);
    assert_true(acl_scalar_to_f64(s) == 1.0);
    aclDestroyScalar(s);
    uint8_t b = 2;
    s = aclCreateScalar(&b, ACL_BOOL);
    assert_true(acl_scalar_to_f64(s) == 1.0);
    aclDestroyScalar(s);
    double nan = NAN;
    s = aclCreateScalar(&nan, ACL_DOUBLE);
    assert_true(isnan(acl_scalar_to_f32(s)));
    aclDestroyScalar(s);
    assert_null(aclCreateScalar(NULL, ACL_FLOAT));
    /* abi.md: every aclDataType makes a scalar (an operator that does not list it answers
     * 161002, not 161001 through a NULL scalar); an undefined enum value does not */
    uint8_t wide[16] = {1};
    static const aclDataType others[] = {ACL_UINT16, ACL_UINT32, ACL_UINT64, ACL_COMPLEX64, ACL_COMPLEX128};
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        s = aclCreateScalar(wide, others[i]);
        assert_non_null(s);
        aclDestroyScalar(s);
    }
    assert_null(aclCreateScalar(&f, (aclDataType)55));
}

static void create_int_array_copies(void **state)
{
    (void)state;
    int64_t v[3] = {4, 5, 6};
    aclIntArray *a = aclCreateIntArray(v, 3);
    assert_non_null(a);
    v[1] = 99;
    assert_int_equal(a->size, 3);
    assert_int_equal(a->data[1], 5);
    aclDestroyIntArray(a);
    a = aclCreateIntArray(NULL, 0);
    assert_non_null(a);
    assert_int_equal(a->size, 0);
    aclDestroyIntArray(a);
    assert_null(aclCreateIntArray(NULL, 2));
}

static void destroy_null_returns_success(void **state)
{
    (void)state;
    assert_int_equal(aclDestroyTensor(NULL), ACLNN_SUCCESS);
    assert_int_equal(aclDestroyScalar(NULL), ACLNN_SUCCESS);
    assert_int_equal(aclDestroyIntArray(NULL), ACLNN_SUCCESS);
    assert_int_equal(aclDestroyAclOpExecutor(NULL), ACLNN_SUCCESS);
}

static void promotion_follows_the_table(void **state)
{
    (void)state;
    const aclDataType F = ACL_FLOAT, H = ACL_FLOAT16, B = ACL_BF16, D = ACL_DOUBLE;
    struct { aclDataType a, b, want; } t[] = {
        {F, F, F}, {F, H, F}, {F, B, F}, {F, D, D}, {F, ACL_INT32, F}, {F, ACL_BOOL, F},
        {H, H, H}, {H, B, F}, {H, D, D}, {H, ACL_INT8, H}, {H, ACL_UINT8, H}, {H, ACL_BOOL, H},
        {B, B, B}, {B, D, D}, {B, ACL_INT64, B}, {B, ACL_BOOL, B}, {D, ACL_INT16, D}, {D, D, D},
        {ACL_INT32, ACL_INT8, ACL_DT_UNDEFINED},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        assert_int_equal(acl_promote(t[i].a, t[i].b), t[i].want);
        assert_int_equal(acl_promote(t[i].b, t[i].a), t[i].want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(create_tensor_accepts_valid_views),
        cmocka_unit_test(create_tensor_rejects_invalid_descriptions),
        cmocka_unit_test(output_overlap_detection),
        cmocka_unit_test(create_scalar_copies_and_checks_dtype),
        cmocka_unit_test(create_int_array_copies),
        cmocka_unit_test(destroy_null_returns_success),
        cmocka_unit_test(promotion_follows_the_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
