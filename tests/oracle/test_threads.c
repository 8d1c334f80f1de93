/* ctest-labels: unit tsan
 * The oracle from several threads at once, as the sweep's workers use it: the threads start
 * together (racing on the once-only GSL set-up), each evaluates SoftplusBackward with f64 output
 * (MPFR at 128/256 bits: per-thread constant caches), f32 SoftplusBackward and GeluBackwardV2
 * (GSL), and ScaledMaskedSoftmaxBackward with an infinite scale (the exact MPFR sum), then
 * releases its MPFR caches (orc_thread_release).  Every output array must equal, bit for bit,
 * the same evaluation done afterwards by the main thread alone.  Run it under ThreadSanitizer
 * with scripts/tsan.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>

#include "oracle_test_util.h"

enum { N = 512, ROWS = 4, WORKERS = 4 };

typedef struct {
    double dy64[N], x64[N];
    float dy32[N], x32[N], y32[N];
    uint8_t mask[N];
    double res[5][5 * N]; /* per evaluation: r | r_lo | m | err | alt */
} job;

static uint64_t xs(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}
static double u01(uint64_t *s) { return (double)(xs(s) >> 11) * 0x1p-53; }

static void fill(job *j, uint64_t seed)
{
    for (int i = 0; i < N; i++) {
        j->x64[i] = -760.0 + 800.0 * u01(&seed); /* deep tail (subnormal results) to above threshold */
        j->dy64[i] = (u01(&seed) - 0.5) * ldexp(1.0, (int)(xs(&seed) % 40) - 20);
        j->x32[i] = (float)(u01(&seed) * 20 - 10);
        j->dy32[i] = (float)(u01(&seed) * 4 - 2);
        j->y32[i] = (float)(u01(&seed) / (N / ROWS));
        j->mask[i] = (xs(&seed) & 7) == 0;
    }
}

static orc_out view(job *j, int k)
{
    double *b = j->res[k];
    return (orc_out){b, b + N, b + 2 * N, b + 3 * N, b + 4 * N};
}

static int evaluate(job *j)
{
    int64_t sh[1] = {N}, sh4[4] = {1, 1, ROWS, N / ROWS};
    tt_tensor a, b, c;
    double one = 1.0, thr = 20.0;
    uint64_t ob, tb;
    memcpy(&ob, &one, 8), memcpy(&tb, &thr, 8);
    orc_scalar beta64 = {CF_F64, ob}, thr64 = {CF_F64, tb};
    int st = 0;
    orc_out o = view(j, 0);
    st |= orc_softplus_backward(tt_make(&a, CF_F64, 1, sh, j->dy64), tt_make(&b, CF_F64, 1, sh, j->x64), beta64,
                                thr64, CF_F64, ORC_PROFILE_SPEC, &o);
    o = view(j, 1);
    st |= orc_softplus_backward(tt_make(&a, CF_F32, 1, sh, j->dy32), tt_make(&b, CF_F32, 1, sh, j->x32), beta64,
                                thr64, CF_F32, ORC_PROFILE_SPEC, &o);
    o = view(j, 2);
    st |= orc_gelu_backward_v2(tt_make(&a, CF_F32, 1, sh, j->dy32), tt_make(&b, CF_F32, 1, sh, j->x32), "tanh",
                               CF_F32, ORC_PROFILE_SPEC, &o);
    o = view(j, 3);
    st |= orc_scaled_masked_softmax_backward(tt_make(&a, CF_F32, 4, sh4, j->dy32), tt_make(&b, CF_F32, 4, sh4, j->y32),
                                             tt_make(&c, CF_BOOL, 4, sh4, j->mask), 1e300 /* -> +Inf */, CF_F32,
                                             ORC_PROFILE_SPEC, &o);
    o = view(j, 4);
    st |= orc_scaled_masked_softmax_backward(tt_make(&a, CF_F32, 4, sh4, j->dy32), tt_make(&b, CF_F32, 4, sh4, j->y32),
                                             tt_make(&c, CF_BOOL, 4, sh4, j->mask), 0.75, CF_F32, ORC_PROFILE_SPEC, &o);
    return st;
}

static job g_run[WORKERS], g_ref[WORKERS];
static pthread_barrier_t g_start;
static atomic_int g_status;

static void *worker(void *arg)
{
    int id = (int)(intptr_t)arg;
    pthread_barrier_wait(&g_start);
    for (int r = 0; r < 2; r++)
        if (evaluate(&g_run[id]) != ORC_OK) atomic_fetch_add(&g_status, 1);
    orc_thread_release();
    return NULL;
}

static void threads_agree_with_one_thread(void **state)
{
    (void)state;
    for (int w = 0; w < WORKERS; w++) fill(&g_run[w], 0x9e3779b97f4a7c15u * (uint64_t)(w + 1));
    assert_int_equal(pthread_barrier_init(&g_start, NULL, WORKERS), 0);
    pthread_t th[WORKERS];
    for (int w = 0; w < WORKERS; w++) assert_int_equal(pthread_create(&th[w], NULL, worker, (void *)(intptr_t)w), 0);
    for (int w = 0; w < WORKERS; w++) pthread_join(th[w], NULL);
    pthread_barrier_destroy(&g_start);
    assert_int_equal(atomic_load(&g_status), 0);
    for (int w = 0; w < WORKERS; w++) {
        memcpy(&g_ref[w], &g_run[w], offsetof(job, res));
        assert_int_equal(evaluate(&g_ref[w]), ORC_OK);
        assert_memory_equal(g_ref[w].res, g_run[w].res, sizeof g_ref[w].res);
    }
    /* the f64 run reached the subnormal / underflow range, and the infinite scale gave ±Inf */
    int tiny = 0, inf = 0;
    for (int i = 0; i < N; i++) tiny += g_ref[0].res[0][i] != 0 && fabs(g_ref[0].res[0][i]) < 0x1p-1022;
    for (int i = 0; i < N; i++) inf += isinf(g_ref[0].res[3][i]) != 0;
    print_message("subnormal f64 results: %d, infinite softmax results: %d\n", tiny, inf);
    assert_true(tiny > 0 && inf > 0);
    orc_thread_release();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(threads_agree_with_one_thread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
