/* parallel-for on OpenMP.  The partition only decides which thread computes an index, never
 * how, so results do not depend on the thread count. */
#include <omp.h>
#include <stdatomic.h>

#include "runtime.h"

/* 0 = OpenMP default (all cores or OMP_NUM_THREADS).  Atomic: a caller may set it while other
 * threads run operators (a plain int was a data race, issue 11).  Relaxed order is enough: the
 * value only chooses a thread count, and each parallel-for reads it once. */
static atomic_int g_threads;

void aclconformSetNumThreads(int n) { atomic_store_explicit(&g_threads, n > 0 ? n : 0, memory_order_relaxed); }

int aclconformGetNumThreads(void)
{
    int n = atomic_load_explicit(&g_threads, memory_order_relaxed);
    return n > 0 ? n : omp_get_max_threads();
}

void acl_parallel_for(int64_t n, int64_t grain, acl_range_fn fn, void *ctx)
{
    if (n <= 0) return;
    if (grain < 1) grain = 1;
    int64_t chunks = (n + grain - 1) / grain;
    int threads = aclconformGetNumThreads();
    if (threads <= 1 || chunks <= 1) {
        fn(ctx, 0, n);
        return;
    }
    if (chunks > (int64_t)threads * 8) chunks = (int64_t)threads * 8; /* few, large chunks */
#if ACLCONFORM_MUTANT == 2 /* chunk-boundary: chunk step rounded down: the remainder n mod chunks is never run */
    int64_t step = n / chunks;
#else
    int64_t step = (n + chunks - 1) / chunks;
#endif
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
    for (int64_t c = 0; c < chunks; c++) {
#if ACLCONFORM_MUTANT == 1 /* chunk-boundary: last chunk of the parallel-for stops one element short */
        int64_t b = c * step, e = b + step < n ? b + step : n - 1;
#else
        int64_t b = c * step, e = b + step < n ? b + step : n;
#endif
        if (b < e) fn(ctx, b, e);
    }
}
