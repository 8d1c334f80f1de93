/* ctest-labels: api
 * The two-phase protocol of ops.md §0.4 on the runtime's executor, and through every operator's
 * public execute entry point (NULL executor → 161001). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "aclnnop/aclnn_gelu_backward_v2.h"
#include "aclnnop/aclnn_logit_grad.h"
#include "aclnnop/aclnn_nsa_compress_grad.h"
#include "aclnnop/aclnn_scaled_masked_softmax_backward.h"
#include "aclnnop/aclnn_softplus_backward.h"
#include "runtime/runtime.h"

typedef struct { int *runs; int value; } args_t;

static aclnnStatus kernel(void *args, void *ws, uint64_t wsSize)
{
    args_t *a = args;
    (*a->runs)++;
    if (wsSize >= 8) ((char *)ws)[7] = 1; /* the workspace is really usable */
    return a->value == 42 ? ACLNN_SUCCESS : ACLNN_ERR_INNER;
}

static void executor_runs_once_with_a_copy_of_its_args(void **state)
{
    (void)state;
    int runs = 0;
    args_t a = {&runs, 42};
    uint64_t ws = 99;
    aclOpExecutor *ex = NULL;
    assert_int_equal(acl_executor_create(kernel, &a, sizeof a, 0, &ws, &ex), ACLNN_SUCCESS);
    assert_int_equal(ws, 0);
    a.value = 0; /* the executor kept its own copy */
    assert_int_equal(acl_executor_run(NULL, 0, ex), ACLNN_SUCCESS); /* planned 0: NULL is fine */
    assert_int_equal(runs, 1);
}

static void short_or_null_workspace_is_invalid_and_keeps_the_executor(void **state)
{
    (void)state;
    int runs = 0;
    args_t a = {&runs, 42};
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    assert_int_equal(acl_executor_create(kernel, &a, sizeof a, 64, &ws, &ex), ACLNN_SUCCESS);
    assert_int_equal(ws, 64);
    char buf[64];
    assert_int_equal(acl_executor_run(NULL, 64, ex), ACLNN_ERR_PARAM_INVALID);
    assert_int_equal(acl_executor_run(buf, 63, ex), ACLNN_ERR_PARAM_INVALID);
    assert_int_equal(runs, 0);
    assert_int_equal(acl_executor_run(buf, 64, ex), ACLNN_SUCCESS); /* retry succeeds */
    assert_int_equal(runs, 1);
    assert_int_equal(buf[7], 1);
}

static void kernel_failure_status_is_returned_and_executor_released(void **state)
{
    (void)state;
    int runs = 0;
    args_t a = {&runs, 1};
    uint64_t ws;
    aclOpExecutor *ex;
    assert_int_equal(acl_executor_create(kernel, &a, sizeof a, 0, &ws, &ex), ACLNN_SUCCESS);
    assert_int_equal(acl_executor_run(NULL, 0, ex), ACLNN_ERR_INNER);
    assert_int_equal(runs, 1);
}

static void unrun_executor_is_released_by_destroy(void **state)
{
    (void)state;
    int runs = 0;
    args_t a = {&runs, 42};
    uint64_t ws;
    aclOpExecutor *ex;
    assert_int_equal(acl_executor_create(kernel, &a, sizeof a, 16, &ws, &ex), ACLNN_SUCCESS);
    assert_int_equal(aclDestroyAclOpExecutor(ex), ACLNN_SUCCESS); /* the sanitizer checks the leak */
    assert_int_equal(runs, 0);
}

static void every_operator_rejects_a_null_executor(void **state)
{
    (void)state;
    char ws[16];
    assert_int_equal(aclnnScaledMaskedSoftmaxBackward(ws, 16, NULL, NULL), ACLNN_ERR_PARAM_NULLPTR);
    assert_int_equal(aclnnLogitGrad(ws, 16, NULL, NULL), ACLNN_ERR_PARAM_NULLPTR);
    assert_int_equal(aclnnNsaCompressGrad(ws, 16, NULL, NULL), ACLNN_ERR_PARAM_NULLPTR);
    assert_int_equal(aclnnGeluBackwardV2(ws, 16, NULL, NULL), ACLNN_ERR_PARAM_NULLPTR);
    assert_int_equal(aclnnSoftplusBackward(ws, 16, NULL, NULL), ACLNN_ERR_PARAM_NULLPTR);
    assert_int_equal(aclnnLogitGrad(NULL, 0, NULL, NULL), ACLNN_ERR_PARAM_NULLPTR);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(executor_runs_once_with_a_copy_of_its_args),
        cmocka_unit_test(short_or_null_workspace_is_invalid_and_keeps_the_executor),
        cmocka_unit_test(kernel_failure_status_is_returned_and_executor_released),
        cmocka_unit_test(unrun_executor_is_released_by_destroy),
        cmocka_unit_test(every_operator_rejects_a_null_executor),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
