/* ctest-labels: api tsan
 * Issue 11: an executor that is no longer live (already run, destroyed, or never created by this
 * library) is refused with 161002 — no double free, no run after free — through the runtime and
 * an operator's public entry points; thousands of live executors at once (the registry grows
 * and shrinks); and destroy/run racing from several threads releases each executor exactly once.
 * Before the registry, the second destroy below was a double free (glibc aborts). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>

#include "aclnn/acl_meta.h"
#include "aclnnop/aclnn_softplus_backward.h"
#include "runtime/runtime.h"

static atomic_int g_runs;

static aclnnStatus kernel(void *args, void *ws, uint64_t wsSize)
{
    (void)args, (void)ws, (void)wsSize;
    atomic_fetch_add(&g_runs, 1);
    return ACLNN_SUCCESS;
}

static aclOpExecutor *make(uint64_t planned)
{
    int dummy = 0;
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    assert_int_equal(acl_executor_create(kernel, &dummy, sizeof dummy, planned, &ws, &ex), ACLNN_SUCCESS);
    assert_non_null(ex);
    return ex;
}

static void destroy_twice_is_invalid_not_a_double_free(void **state)
{
    (void)state;
    aclOpExecutor *ex = make(0);
    assert_int_equal(aclDestroyAclOpExecutor(ex), ACLNN_SUCCESS);
    assert_int_equal(aclDestroyAclOpExecutor(ex), ACLNN_ERR_PARAM_INVALID);
    assert_int_equal(aclDestroyAclOpExecutor(NULL), ACLNN_SUCCESS); /* abi.md */
}

static void run_after_release_is_invalid(void **state)
{
    (void)state;
    atomic_store(&g_runs, 0);
    aclOpExecutor *ex = make(0);
    assert_int_equal(acl_executor_run(NULL, 0, ex), ACLNN_SUCCESS);
    assert_int_equal(acl_executor_run(NULL, 0, ex), ACLNN_ERR_PARAM_INVALID); /* already run */
    assert_int_equal(aclDestroyAclOpExecutor(ex), ACLNN_ERR_PARAM_INVALID);
    aclOpExecutor *ex2 = make(0);
    assert_int_equal(aclDestroyAclOpExecutor(ex2), ACLNN_SUCCESS);
    assert_int_equal(acl_executor_run(NULL, 0, ex2), ACLNN_ERR_PARAM_INVALID); /* destroyed */
    assert_int_equal(atomic_load(&g_runs), 1);
}

static void foreign_pointer_is_invalid(void **state)
{
    (void)state;
    max_align_t fake[8];
    memset(fake, 0x5a, sizeof fake);
    aclOpExecutor *ex = (aclOpExecutor *)fake;
    assert_int_equal(acl_executor_run(NULL, 0, ex), ACLNN_ERR_PARAM_INVALID);
    assert_int_equal(aclDestroyAclOpExecutor(ex), ACLNN_ERR_PARAM_INVALID);
}

static void short_workspace_keeps_it_live(void **state)
{
    (void)state;
    aclOpExecutor *ex = make(32);
    char ws[32];
    assert_int_equal(acl_executor_run(ws, 8, ex), ACLNN_ERR_PARAM_INVALID);
    assert_int_equal(acl_executor_run(ws, 32, ex), ACLNN_SUCCESS);
    assert_int_equal(acl_executor_run(ws, 32, ex), ACLNN_ERR_PARAM_INVALID);
}

static void many_live_executors(void **state)
{
    (void)state;
    enum { N = 5000 };
    aclOpExecutor **ex = malloc(N * sizeof *ex);
    assert_non_null(ex);
    for (int i = 0; i < N; i++) ex[i] = make(0);
    /* release every other one, then all, in an order that exercises probe-chain repair */
    for (int i = 0; i < N; i += 2) assert_int_equal(aclDestroyAclOpExecutor(ex[i]), ACLNN_SUCCESS);
    for (int i = 0; i < N; i += 2) assert_int_equal(aclDestroyAclOpExecutor(ex[i]), ACLNN_ERR_PARAM_INVALID);
    atomic_store(&g_runs, 0);
    for (int i = N - 1; i > 0; i -= 2) assert_int_equal(acl_executor_run(NULL, 0, ex[i]), ACLNN_SUCCESS);
    assert_int_equal(atomic_load(&g_runs), N / 2);
    for (int i = 0; i < N; i++) assert_int_equal(aclDestroyAclOpExecutor(ex[i]), ACLNN_ERR_PARAM_INVALID);
    free(ex);
}

static void operator_entry_point_refuses_a_released_executor(void **state)
{
    (void)state;
    int64_t dims[1] = {4}, strides[1] = {1}, sn = 4;
    float g[4] = {1, 2, 3, 4}, x[4] = {0.5f, -1, 2, 30}, out[4];
    aclTensor *tg = aclCreateTensor(dims, 1, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, &sn, 1, g);
    aclTensor *tx = aclCreateTensor(dims, 1, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, &sn, 1, x);
    aclTensor *to = aclCreateTensor(dims, 1, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, &sn, 1, out);
    float b = 1.0f, t = 20.0f;
    aclScalar *beta = aclCreateScalar(&b, ACL_FLOAT), *thr = aclCreateScalar(&t, ACL_FLOAT);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    assert_int_equal(aclnnSoftplusBackwardGetWorkspaceSize(tg, tx, beta, thr, to, &ws, &ex), ACLNN_SUCCESS);
    void *w = ws ? malloc(ws) : NULL;
    assert_int_equal(aclnnSoftplusBackward(w, ws, ex, NULL), ACLNN_SUCCESS);
    assert_int_equal(aclnnSoftplusBackward(w, ws, ex, NULL), ACLNN_ERR_PARAM_INVALID);
    assert_int_equal(aclDestroyAclOpExecutor(ex), ACLNN_ERR_PARAM_INVALID);
    free(w);
    aclDestroyTensor(tg), aclDestroyTensor(tx), aclDestroyTensor(to);
    aclDestroyScalar(beta), aclDestroyScalar(thr);
}

/* Several threads race to run or destroy the same executors: each is released exactly once. */
enum { RACE_N = 2000, RACE_T = 4 };
static aclOpExecutor *g_race[RACE_N];
static atomic_int g_ok;

static void *racer(void *arg)
{
    int id = (int)(intptr_t)arg;
    for (int i = 0; i < RACE_N; i++) {
        aclnnStatus st = (i + id) % 2 ? acl_executor_run(NULL, 0, g_race[i]) : aclDestroyAclOpExecutor(g_race[i]);
        if (st == ACLNN_SUCCESS) atomic_fetch_add(&g_ok, 1);
        else if (st != ACLNN_ERR_PARAM_INVALID) atomic_fetch_add(&g_ok, 1000000); /* unexpected */
    }
    return NULL;
}

static void racing_threads_release_each_once(void **state)
{
    (void)state;
    for (int i = 0; i < RACE_N; i++) g_race[i] = make(0);
    atomic_store(&g_ok, 0);
    pthread_t th[RACE_T];
    for (int k = 0; k < RACE_T; k++) assert_int_equal(pthread_create(&th[k], NULL, racer, (void *)(intptr_t)k), 0);
    for (int k = 0; k < RACE_T; k++) pthread_join(th[k], NULL);
    assert_int_equal(atomic_load(&g_ok), RACE_N);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(destroy_twice_is_invalid_not_a_double_free),
        cmocka_unit_test(run_after_release_is_invalid),
        cmocka_unit_test(foreign_pointer_is_invalid),
        cmocka_unit_test(short_workspace_keeps_it_live),
        cmocka_unit_test(many_live_executors),
        cmocka_unit_test(operator_entry_point_refuses_a_released_executor),
        cmocka_unit_test(racing_threads_release_each_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
