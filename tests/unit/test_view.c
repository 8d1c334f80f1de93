/* ctest-labels: unit
 * Strided views and parallel-for: loads/stores through strided, offset, permuted and broadcast
 * views equal a naive index computation, for every start/length split; parallel-for visits each
 * index exactly once for any thread count.  Raw 16-bit loads (the all-16-bit driver's staging)
 * read nothing past a view's last element. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "runtime/conv.h"
#include "runtime/runtime.h"

/* Naive address of element i of t broadcast to shape[nd]. */
static int64_t naive_off(const aclTensor *t, int nd, const int64_t *shape, int64_t i)
{
    int64_t off = t->offset;
    for (int k = nd - 1; k >= 0; k--) {
        int64_t ik = i % shape[k];
        i /= shape[k];
        int tk = k - (nd - (int)t->ndim);
        if (tk >= 0 && t->dims[tk] != 1) off += ik * t->strides[tk];
    }
    return off;
}

/* The n elements of the 2-D view t (dims) in storage[200] hold want[], and every other element
 * of the storage still holds 0xdead. */
static void assert_view_holds(const aclTensor *t, const int64_t *dims, int n, const uint16_t *storage,
                              const uint16_t *want)
{
    unsigned char touched[200] = {0};
    for (int i = 0; i < n; i++) {
        int64_t off = naive_off(t, 2, dims, i);
        touched[off] = 1;
        assert_int_equal(storage[off], want[i]);
    }
    for (int i = 0; i < 200; i++)
        if (!touched[i]) assert_int_equal(storage[i], 0xdead);
}

static void strided_loads_match_naive_indexing(void **state)
{
    (void)state;
    float storage[512];
    for (int i = 0; i < 512; i++) storage[i] = (float)i;
    struct { int nd; int64_t dims[4]; int64_t strides[4]; int64_t off; int bnd; int64_t bshape[4]; } cs[] = {
        {2, {3, 4}, {4, 1}, 0, 2, {3, 4}},             /* contiguous */
        {2, {3, 4}, {1, 3}, 5, 2, {3, 4}},             /* transposed, offset */
        {3, {2, 3, 5}, {40, 10, 2}, 7, 3, {2, 3, 5}},  /* steps > 1 */
        {2, {1, 5}, {5, 1}, 2, 3, {4, 3, 5}},          /* broadcast on two leading dims */
        {2, {3, 1}, {2, 0}, 1, 2, {3, 6}},             /* broadcast inner dim */
        {0, {0}, {0}, 9, 2, {2, 2}},                   /* rank 0 broadcast everywhere */
        {4, {2, 1, 3, 2}, {30, 0, 1, 3}, 11, 4, {2, 2, 3, 2}},
    };
    for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++) {
        int64_t sdim = 512;
        aclTensor *t = aclCreateTensor(cs[c].dims, (uint64_t)cs[c].nd, ACL_FLOAT, cs[c].strides,
                                       cs[c].off, ACL_FORMAT_ND, &sdim, 1, storage);
        assert_non_null(t);
        acl_view v;
        acl_view_broadcast(&v, t, cs[c].bnd, cs[c].bshape);
        int64_t n = v.numel;
        for (int64_t start = 0; start < n; start++) {
            for (int64_t len = 1; start + len <= n; len += 3) {
                float got[256];
                acl_view_load_f32(&v, start, len, got);
                double got64[256];
                acl_view_load_f64(&v, start, len, got64);
                for (int64_t j = 0; j < len; j++) {
                    float want = storage[naive_off(t, cs[c].bnd, cs[c].bshape, start + j)];
                    if (got[j] != want || got64[j] != want)
                        fail_msg("case %zu start %ld len %ld j %ld: got %g want %g", c, (long)start,
                                 (long)len, (long)j, got[j], want);
                }
            }
        }
        aclDestroyTensor(t);
    }
}

static void strided_stores_touch_only_the_view_and_round_once(void **state)
{
    (void)state;
    uint16_t storage[200];
    for (int i = 0; i < 200; i++) storage[i] = 0xdead;
    int64_t dims[2] = {4, 5}, strides[2] = {1, 9}, sdim = 200;
    aclTensor *t = aclCreateTensor(dims, 2, ACL_FLOAT16, strides, 13, ACL_FORMAT_ND, &sdim, 1, storage);
    assert_non_null(t);
    acl_view v;
    acl_view_init(&v, t);
    assert_false(v.contiguous);
    float src[20];
    for (int i = 0; i < 20; i++) src[i] = 1.0f + (float)i * 0x1p-11f; /* odd i: ties to even */
    acl_view_store_f32(&v, 0, 7, src);
    acl_view_store_f32(&v, 7, 13, src + 7);
    uint16_t want[20];
    for (int i = 0; i < 20; i++) want[i] = acl_f32_to_f16(src[i]);
    assert_view_holds(t, dims, 20, storage, want);
    /* the tie cases really did round to even */
    assert_int_equal(acl_f32_to_f16(1.0f + 0x1p-11f), 0x3c00);
    aclDestroyTensor(t);
}

static void integer_and_bool_loads_convert_exactly(void **state)
{
    (void)state;
    int64_t big[3] = {INT64_C(9007199254740993), -7, INT64_C(16777217)};
    int64_t d = 3;
    aclTensor *t = aclCreateTensor(&d, 1, ACL_INT64, NULL, 0, ACL_FORMAT_ND, &d, 1, big);
    acl_view v;
    acl_view_init(&v, t);
    float f[3];
    double g[3];
    acl_view_load_f32(&v, 0, 3, f);
    acl_view_load_f64(&v, 0, 3, g);
    assert_true(f[0] == 9007199254740992.0f && f[1] == -7.0f && f[2] == 16777216.0f);
    assert_true(g[0] == 9007199254740992.0 && g[2] == 16777217.0);
    aclDestroyTensor(t);
    uint8_t b[2] = {0, 5};
    int64_t d2 = 2;
    t = aclCreateTensor(&d2, 1, ACL_BOOL, NULL, 0, ACL_FORMAT_ND, &d2, 1, b);
    acl_view_init(&v, t);
    acl_view_load_f32(&v, 0, 2, f);
    assert_true(f[0] == 0.0f && f[1] == 1.0f);
    aclDestroyTensor(t);
}

/* Raw 16-bit loads and stores (the all-16-bit driver's staging) through x[::2], broadcast and
 * padded-row views equal naive indexing for every start and length; the x[::2] view's storage
 * ends on a page that is followed by an inaccessible one, so a load that read the last
 * element's partner (the vector form's masked lane) would fault.  Stores touch only the view. */
static void raw16_views_match_naive_indexing(void **state)
{
    (void)state;
    long pg = sysconf(_SC_PAGESIZE);
    char *map = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(map != MAP_FAILED);
    assert_int_equal(mprotect(map + pg, (size_t)pg, PROT_NONE), 0);
    enum { E = 150 };                              /* elements of the x[::2] view */
    uint16_t *st = (uint16_t *)(void *)(map + pg) - (2 * E - 1); /* its last element ends the page */
    for (int i = 0; i < 2 * E - 1; i++) st[i] = (uint16_t)(i * 40503u + 7u);
    int64_t sd = 2 * E - 1;
    struct { int nd; int64_t dims[2]; int64_t strides[2]; int bnd; int64_t bshape[2]; } cs[] = {
        {1, {E}, {2}, 1, {E}},                   /* x[::2] */
        {2, {3, 40}, {50, 1}, 2, {3, 40}},       /* padded rows: runs of 40 */
        {2, {1, 37}, {37, 1}, 2, {4, 37}},       /* broadcast rows */
        {2, {5, 1}, {3, 1}, 2, {5, 29}},         /* broadcast inner dim (stride 0 runs) */
        {2, {7, 20}, {1, 7}, 2, {7, 20}},        /* transposed */
    };
    for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++) {
        aclTensor *t = aclCreateTensor(cs[c].dims, (uint64_t)cs[c].nd, ACL_BF16, cs[c].strides, 0, ACL_FORMAT_ND, &sd, 1, st);
        assert_non_null(t);
        acl_view v;
        acl_view_broadcast(&v, t, cs[c].bnd, cs[c].bshape);
        int64_t n = v.numel;
        for (int64_t start = 0; start < n; start++)
            for (int64_t len = 0; start + len <= n; len += 1 + len / 8) {
                uint16_t got[E * 2];
                memset(got, 0xee, sizeof got);
                acl_view_load_raw16(&v, start, len, got);
                for (int64_t j = 0; j < len; j++)
                    if (got[j] != st[naive_off(t, cs[c].bnd, cs[c].bshape, start + j)])
                        fail_msg("case %zu start %ld len %ld: element %ld is %#x, not %#x", c, (long)start, (long)len,
                                 (long)j, got[j], st[naive_off(t, cs[c].bnd, cs[c].bshape, start + j)]);
                if (got[len] != 0xeeee) fail_msg("case %zu start %ld len %ld: wrote past the end", c, (long)start, (long)len);
            }
        aclDestroyTensor(t);
    }
    /* stores through a padded-row view: the view's elements get the values, the rest is kept */
    uint16_t buf[200], src[120];
    for (int i = 0; i < 200; i++) buf[i] = 0xdead;
    for (int i = 0; i < 120; i++) src[i] = (uint16_t)(1000 + i);
    int64_t dims[2] = {3, 40}, strides[2] = {50, 1}, sb = 200;
    aclTensor *t = aclCreateTensor(dims, 2, ACL_FLOAT16, strides, 3, ACL_FORMAT_ND, &sb, 1, buf);
    acl_view v;
    acl_view_init(&v, t);
    acl_view_store_raw16(&v, 0, 45, src);
    acl_view_store_raw16(&v, 45, 75, src + 45);
    assert_view_holds(t, dims, 120, buf, src);
    aclDestroyTensor(t);
    munmap(map, (size_t)pg * 2);
}

static void count_range(void *ctx, int64_t b, int64_t e)
{
    int *hits = ctx;
    for (int64_t i = b; i < e; i++) __atomic_add_fetch(&hits[i], 1, __ATOMIC_RELAXED);
}

static void parallel_for_visits_each_index_once(void **state)
{
    (void)state;
    int64_t sizes[] = {1, 2, 7, 100, 1000, 100003};
    for (int threads = 1; threads <= 4; threads++) {
        aclconformSetNumThreads(threads);
        assert_int_equal(aclconformGetNumThreads(), threads);
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            int *hits = calloc((size_t)sizes[s], sizeof(int));
            acl_parallel_for(sizes[s], 16, count_range, hits);
            for (int64_t i = 0; i < sizes[s]; i++)
                if (hits[i] != 1) fail_msg("n=%ld threads=%d index %ld hit %d times", (long)sizes[s], threads, (long)i, hits[i]);
            free(hits);
        }
    }
    aclconformSetNumThreads(0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(strided_loads_match_naive_indexing),
        cmocka_unit_test(strided_stores_touch_only_the_view_and_round_once),
        cmocka_unit_test(integer_and_bool_loads_convert_exactly),
        cmocka_unit_test(raw16_views_match_naive_indexing),
        cmocka_unit_test(parallel_for_visits_each_index_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
