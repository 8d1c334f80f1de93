/* ctest-labels: api tsan
 * The built-in implementation called from several application threads at once (each operator
 * call then runs its own OpenMP team inside that thread), while another thread keeps changing
 * aclconformSetNumThreads: every result must be bitwise the single-threaded one, and under
 * ThreadSanitizer (scripts/tsan.sh) nothing may race — the thread-count setting was a plain int
 * read by every parallel-for (issue 11).  Moderate sizes: TSan runs it 5–15× slower. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "aclnn/acl_meta.h"
#include "aclnnop/aclnn_gelu_backward_v2.h"
#include "aclnnop/aclnn_scaled_masked_softmax_backward.h"
#include "aclnnop/aclnn_softplus_backward.h"

/* sizes above the parallel-for grains (16 blocks of 1024 elements; 16384 / COLS softmax rows), so
 * every call really runs an OpenMP team */
enum { N = 65536, ROWS = 128, COLS = N / ROWS, WORKERS = 4, ROUNDS = 4 };

typedef struct {
    float g[N], x[N], y[N];
    uint8_t mask[N];
    float out[3][N]; /* softplus, gelu, softmax */
} job;

static uint32_t lcg(uint32_t *s) { return *s = *s * 1664525u + 1013904223u; }
static float unit(uint32_t *s) { return (float)(lcg(s) >> 8) * 0x1p-24f; }

static void fill(job *j, uint32_t seed)
{
    for (int i = 0; i < N; i++) {
        j->g[i] = unit(&seed) * 4 - 2;
        j->x[i] = unit(&seed) * 60 - 30;
        j->y[i] = unit(&seed) / COLS;
        j->mask[i] = (lcg(&seed) >> 28) == 0;
    }
}

static aclTensor *tensor(int nd, const int64_t *dims, aclDataType dt, void *data)
{
    int64_t strides[4], st = 1, n = 1;
    for (int k = nd - 1; k >= 0; k--) strides[k] = st, st *= dims[k], n *= dims[k];
    return aclCreateTensor(dims, (uint64_t)nd, dt, strides, 0, ACL_FORMAT_ND, &n, 1, data);
}

/* Execute phase of a planned call (st: the GetWorkspaceSize status). */
static aclnnStatus execute(aclnnStatus st, const uint64_t *ws, aclOpExecutor *const *ex,
                           aclnnStatus (*run)(void *, uint64_t, aclOpExecutor *, aclrtStream))
{
    if (st != ACLNN_SUCCESS) return st;
    void *w = *ws ? malloc(*ws) : NULL;
    st = run(w, *ws, *ex, NULL);
    free(w);
    return st;
}

/* All three operators on one job; returns the first non-success status. */
static aclnnStatus compute(job *j)
{
    int64_t d1[1] = {N}, d4[4] = {1, 2, ROWS / 2, COLS};
    aclTensor *g = tensor(1, d1, ACL_FLOAT, j->g), *x = tensor(1, d1, ACL_FLOAT, j->x);
    aclTensor *o0 = tensor(1, d1, ACL_FLOAT, j->out[0]), *o1 = tensor(1, d1, ACL_FLOAT, j->out[1]);
    aclTensor *g4 = tensor(4, d4, ACL_FLOAT, j->g), *y4 = tensor(4, d4, ACL_FLOAT, j->y);
    aclTensor *m4 = tensor(4, d4, ACL_BOOL, j->mask), *o4 = tensor(4, d4, ACL_FLOAT, j->out[2]);
    float b = 1.5f, t = 20.0f;
    aclScalar *beta = aclCreateScalar(&b, ACL_FLOAT), *thr = aclCreateScalar(&t, ACL_FLOAT);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    char none[] = "none";
    aclnnStatus st = execute(aclnnSoftplusBackwardGetWorkspaceSize(g, x, beta, thr, o0, &ws, &ex), &ws, &ex,
                             aclnnSoftplusBackward);
    if (st == ACLNN_SUCCESS)
        st = execute(aclnnGeluBackwardV2GetWorkspaceSize(g, x, none, o1, &ws, &ex), &ws, &ex, aclnnGeluBackwardV2);
    if (st == ACLNN_SUCCESS)
        st = execute(aclnnScaledMaskedSoftmaxBackwardGetWorkspaceSize(g4, y4, m4, 0.5, false, o4, &ws, &ex), &ws, &ex,
                     aclnnScaledMaskedSoftmaxBackward);
    aclDestroyTensor(g), aclDestroyTensor(x), aclDestroyTensor(o0), aclDestroyTensor(o1);
    aclDestroyTensor(g4), aclDestroyTensor(y4), aclDestroyTensor(m4), aclDestroyTensor(o4);
    aclDestroyScalar(beta), aclDestroyScalar(thr);
    return st;
}

static job g_ref[WORKERS], g_run[WORKERS];
static atomic_int g_failures, g_stop;
static pthread_barrier_t g_start;

static void *worker(void *arg)
{
    int id = (int)(intptr_t)arg;
    pthread_barrier_wait(&g_start);
    for (int r = 0; r < ROUNDS; r++) {
        job *j = &g_run[id];
        memset(j->out, 0, sizeof j->out);
        if (compute(j) != ACLNN_SUCCESS || memcmp(j->out, g_ref[id].out, sizeof j->out) != 0)
            atomic_fetch_add(&g_failures, 1);
    }
    return NULL;
}

static void *knob(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&g_start);
    for (int k = 0; !atomic_load(&g_stop); k++) {
        aclconformSetNumThreads(k % 4); /* 0 = default, 1, 2, 3 */
        (void)aclconformGetNumThreads();
        sched_yield();
    }
    return NULL;
}

static void concurrent_calls_give_single_threaded_bits(void **state)
{
    (void)state;
    /* references: one application thread, one OpenMP thread */
    aclconformSetNumThreads(1);
    for (int w = 0; w < WORKERS; w++) {
        fill(&g_ref[w], 1234u + (uint32_t)w);
        assert_int_equal(compute(&g_ref[w]), ACLNN_SUCCESS);
        memcpy(&g_run[w], &g_ref[w], sizeof(job));
    }
    aclconformSetNumThreads(2);
    atomic_store(&g_failures, 0);
    atomic_store(&g_stop, 0);
    assert_int_equal(pthread_barrier_init(&g_start, NULL, WORKERS + 1), 0);
    pthread_t th[WORKERS], kt;
    for (int w = 0; w < WORKERS; w++) assert_int_equal(pthread_create(&th[w], NULL, worker, (void *)(intptr_t)w), 0);
    assert_int_equal(pthread_create(&kt, NULL, knob, NULL), 0);
    for (int w = 0; w < WORKERS; w++) pthread_join(th[w], NULL);
    atomic_store(&g_stop, 1);
    pthread_join(kt, NULL);
    pthread_barrier_destroy(&g_start);
    aclconformSetNumThreads(0);
    assert_int_equal(atomic_load(&g_failures), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(concurrent_calls_give_single_threaded_bits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
