/* ctest-labels: api
 * Large calls take paths that the sweep's small cases rarely reach (issue 14): the elementwise
 * driver prefetches ahead in 512-byte sub-blocks once an output passes 2 MiB, and 16-bit
 * LogitGrad runs 16 lanes with a masked tail.  Those paths may only change timing: a call on
 * N = 2^20 + 37 elements (specials sprinkled in) must give, for 1, 2 and 3 threads, exactly the
 * bits of the same elements computed by calls of 4096 elements (below every threshold).  The
 * 16-bit operators read contiguous tensors in place and stage strided ones (as raw bits since
 * round 20): the same call on strided views (every other element of buffers twice as long) must
 * give the same bits too.  So must calls whose tensors start at other places
 * within a 64-byte line (the driver starts its blocks on the output's lines).  Permuted views
 * (x.t() and the like) run in tiles of two dimensions instead of flat blocks (round 16): on 4-D
 * views whose storage orders differ from tensor to tensor, padded, with partial tiles, broadcast
 * or not, every element must come out with the contiguous call's bits (NaN: as a NaN), for 1, 2
 * and 3 threads and with the tiles' staging allocation refused, and nothing outside the output
 * view may be written. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "aclnn/acl_meta.h"
#include "aclnnop/aclnn_gelu_backward_v2.h"
#include "aclnnop/aclnn_logit_grad.h"
#include "aclnnop/aclnn_softplus_backward.h"
#include "runtime/conv.h"
#include "op_util.h"

void aclconformSetNumThreads(int n);
void acl_ewise_set_staging_limit(int64_t bytes); /* runtime/ewise.h */
void acl_nt_set_min_bytes(int64_t bytes);        /* runtime/ewise.h */

enum { N = (1 << 20) + 37, CHUNK = 4096 };

typedef enum { GELU_NONE, GELU_TANH, SOFTPLUS, LOGIT } which;

static uint32_t lcg(uint32_t *s) { return *s = *s * 1664525u + 1013904223u; }

/* element i of input k (0: the gradient, 1: x) as a double, with specials every 997th element
 * in each input alone and, every 997th element too, in both at once, over all pairs of specials
 * (a NaN gradient with a NaN x: which NaN comes out must not depend on where the element sits) */
static double value(which op, int k, int64_t i, uint32_t *s)
{
    static const double special[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1e30, -1e30, 1.0, -0.75179, 20.0, -NAN};
    double u = (double)(lcg(s) >> 8) * 0x1p-24;
    if (i % 997 == (k ? 11 : 500)) return special[(i / 997) % 11];
    if (i % 997 == 700) return special[(i / 997 + (k ? i / 10967 : 0)) % 11];
    if (k == 0) return u * 6 - 3;
    /* SoftplusBackward (beta 1.5): z from -195 to 45, through every branch of the 16-bit path */
    return op == LOGIT ? u * 1.2 - 0.1 : op == SOFTPLUS ? u * 160 - 130 : u * 24 - 12;
}

static void store(aclDataType dt, void *p, int64_t i, double v)
{
    switch (dt) {
    case ACL_FLOAT: ((float *)p)[i] = (float)v; break;
    case ACL_DOUBLE: ((double *)p)[i] = v; break;
    case ACL_FLOAT16: ((uint16_t *)p)[i] = acl_f32_to_f16((float)v); break;
    default: ((uint16_t *)p)[i] = acl_f32_to_bf16((float)v); break;
    }
}

/* n elements, stride st elements apart */
static aclTensor *tensor1(aclDataType dt, int64_t n, int64_t st, void *data)
{
    int64_t storage = (n - 1) * st + 1;
    return aclCreateTensor(&n, 1, dt, &st, 0, ACL_FORMAT_ND, &storage, 1, data);
}

/* to = op(tg, tx) through the ABI, with the operators' attributes of these tests */
static void call_tensors(which op, aclTensor *tg, aclTensor *tx, aclTensor *to)
{
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    if (op == SOFTPLUS) {
        float beta = 1.5f, thr = 20.0f;
        aclScalar *b = aclCreateScalar(&beta, ACL_FLOAT), *t = aclCreateScalar(&thr, ACL_FLOAT);
        assert_int_equal(aclnnSoftplusBackwardGetWorkspaceSize(tg, tx, b, t, to, &ws, &ex), ACLNN_SUCCESS);
        assert_int_equal(aclnnSoftplusBackward(NULL, ws, ex, NULL), ACLNN_SUCCESS);
        aclDestroyScalar(b);
        aclDestroyScalar(t);
    } else if (op == LOGIT) {
        assert_int_equal(aclnnLogitGradGetWorkspaceSize(tx, tg, 1e-3, to, &ws, &ex), ACLNN_SUCCESS);
        assert_int_equal(aclnnLogitGrad(NULL, ws, ex, NULL), ACLNN_SUCCESS);
    } else {
        assert_int_equal(aclnnGeluBackwardV2GetWorkspaceSize(tg, tx, op == GELU_NONE ? "none" : "tanh", to, &ws, &ex),
                         ACLNN_SUCCESS);
        assert_int_equal(aclnnGeluBackwardV2(NULL, ws, ex, NULL), ACLNN_SUCCESS);
    }
}

/* out[0, stride, .., (n-1)·stride] = op(g, x) at the same positions, through the ABI */
static void call_strided(which op, aclDataType dt, int64_t n, int64_t stride, const void *g, const void *x, void *out)
{
    aclTensor *tg = tensor1(dt, n, stride, (void *)g), *tx = tensor1(dt, n, stride, (void *)x), *to = tensor1(dt, n, stride, out);
    call_tensors(op, tg, tx, to);
    aclDestroyTensor(tg);
    aclDestroyTensor(tx);
    aclDestroyTensor(to);
}

static void call(which op, aclDataType dt, int64_t n, const void *g, const void *x, void *out)
{
    call_strided(op, dt, n, 1, g, x, out);
}

/* The operator and dtype cases of the placement and permuted-view tests: every elementwise
 * operator in f32, Softplus in f64, and each 16-bit path (Gelu's table, Softplus, LogitGrad). */
typedef struct {
    which op;
    aclDataType dt;
    size_t es;
} op_case;
static const op_case OP_CASES[] = {
    {GELU_NONE, ACL_FLOAT, 4}, {GELU_TANH, ACL_FLOAT, 4}, {SOFTPLUS, ACL_FLOAT, 4}, {SOFTPLUS, ACL_DOUBLE, 8},
    {LOGIT, ACL_FLOAT, 4}, {GELU_NONE, ACL_BF16, 2}, {GELU_TANH, ACL_FLOAT16, 2}, {SOFTPLUS, ACL_FLOAT16, 2},
    {LOGIT, ACL_BF16, 2}};
#define N_OP_CASES (sizeof OP_CASES / sizeof OP_CASES[0])

/* The first of n elements of es bytes where got and want differ, or -1. */
/* nt: the large calls (not the chunked reference) with streaming stores on every size */
static void check_nt(which op, aclDataType dt, size_t es, bool nt)
{
    char *g = malloc(N * es), *x = malloc(N * es), *ref = malloc(N * es), *out = malloc(N * es);
    assert_non_null(g);
    assert_non_null(x);
    assert_non_null(ref);
    assert_non_null(out);
    uint32_t s = 12345u + (uint32_t)op * 77u + (uint32_t)dt;
    for (int64_t i = 0; i < N; i++) {
        store(dt, g, i, value(op, 0, i, &s));
        store(dt, x, i, value(op, 1, i, &s));
    }
    aclconformSetNumThreads(1);
    for (int64_t i = 0; i < N; i += CHUNK) {
        int64_t n = N - i < CHUNK ? N - i : CHUNK;
        call(op, dt, n, g + i * (int64_t)es, x + i * (int64_t)es, ref + i * (int64_t)es);
    }
    if (nt) acl_nt_set_min_bytes(0);
    for (int t = 1; t <= 3; t++) {
        aclconformSetNumThreads(t);
        memset(out, 0x5a, N * es);
        call(op, dt, N, g, x, out);
        int64_t first = tt_first_differ(dt, out, ref, N);
        if (first >= 0) print_error("op %d dtype %d threads %d%s: element %lld differs from the chunked call\n",
                                    (int)op, (int)dt, t, nt ? " (streaming stores)" : "", (long long)first);
        assert_int_equal(first, -1);
    }
    /* The same call on copies displaced from a 64-byte line, the inputs by other amounts than the
     * output: the driver starts its blocks on the output's lines (round 13), so the blocks now
     * begin at other elements, and no bit may change. */
    aclconformSetNumThreads(2);
    int64_t line = 64 / (int64_t)es;
    size_t bytes = ((size_t)(N + line) * es + 63) / 64 * 64;
    char *g2 = aligned_alloc(64, bytes), *x2 = aligned_alloc(64, bytes), *out2 = aligned_alloc(64, bytes);
    assert_true(g2 && x2 && out2);
    for (int64_t d = 1; d < line; d += 3) {
        int64_t dg = d * 5 % line, dx = d * 7 % line;
        memcpy(g2 + dg * (int64_t)es, g, N * es);
        memcpy(x2 + dx * (int64_t)es, x, N * es);
        memset(out2, 0x5a, bytes);
        call(op, dt, N, g2 + dg * (int64_t)es, x2 + dx * (int64_t)es, out2 + d * (int64_t)es);
        int64_t first = tt_first_differ(dt, out2 + d * (int64_t)es, ref, N);
        if (first >= 0) print_error("op %d dtype %d%s: output %lld elements past a line: element %lld differs\n",
                                    (int)op, (int)dt, nt ? " (streaming stores)" : "", (long long)d, (long long)first);
        assert_int_equal(first, -1);
    }
    aclconformSetNumThreads(0);
    acl_nt_set_min_bytes(-1);
    free(g);
    free(x);
    free(ref);
    free(out);
    free(g2);
    free(x2);
    free(out2);
}

static void check(which op, aclDataType dt, size_t es)
{
    check_nt(op, dt, es, false);
}

/* Every element a pair of specials (a NaN of either sign, ±Inf, ±0, huge, a root, ...) in a
 * short call placed at every element offset within a 64-byte line, inputs and output displaced
 * differently: the block grid follows the output's address, so each element runs in other
 * positions of the kernels' steps (whole vectors, tails, paired steps), and which NaN comes out
 * of a NaN gradient times a NaN x must not depend on that. */
static void specials_do_not_depend_on_placement(void **state)
{
    (void)state;
    static const double sp[] = {NAN, -NAN, INFINITY, -INFINITY, 0.0, -0.0, 1e30, -1e30, -0.75179, 0.5, -50.0, 2.0};
    enum { M = 3001, NS = sizeof sp / sizeof sp[0] };
    for (size_t c = 0; c < N_OP_CASES; c++) {
        size_t es = OP_CASES[c].es, bytes = ((M + 64) * es + 63) / 64 * 64; /* aligned_alloc: a multiple of 64 */
        char *g = aligned_alloc(64, bytes), *x = aligned_alloc(64, bytes), *o = aligned_alloc(64, bytes),
             *ref = malloc(M * es);
        assert_true(g && x && o && ref);
        int64_t line = 64 / (int64_t)es;
        for (int64_t d = 0; d < line; d++) {
            int64_t dg = d * 5 % line, dx = d * 7 % line;
            for (int64_t i = 0; i < M; i++) {
                store(OP_CASES[c].dt, g + (dg + i) * (int64_t)es, 0, sp[i % NS]);
                store(OP_CASES[c].dt, x + (dx + i) * (int64_t)es, 0, sp[i / NS % NS]);
            }
            call(OP_CASES[c].op, OP_CASES[c].dt, M, g + dg * (int64_t)es, x + dx * (int64_t)es, o + d * (int64_t)es);
            if (d == 0) {
                memcpy(ref, o, M * es);
                continue;
            }
            int64_t i = tt_first_differ(OP_CASES[c].dt, o + d * (int64_t)es, ref, M);
            if (i >= 0)
                fail_msg("op %d dtype %d: output %lld elements past a line: element %lld (gradient %g, x %g) differs",
                         (int)OP_CASES[c].op, (int)OP_CASES[c].dt, (long long)d, (long long)i, sp[i % NS], sp[i / NS % NS]);
        }
        free(g);
        free(x);
        free(o);
        free(ref);
    }
}

static void gelu_f32_large_equals_chunked(void **state)
{
    (void)state;
    check(GELU_NONE, ACL_FLOAT, 4);
    check(GELU_TANH, ACL_FLOAT, 4);
}

/* the 16-bit Gelu table path (all-16-bit driver), also with its streaming stores (round 27) */
static void gelu16_large_equals_chunked(void **state)
{
    (void)state;
    check(GELU_NONE, ACL_BF16, 2);
    check(GELU_TANH, ACL_FLOAT16, 2);
    check_nt(GELU_NONE, ACL_FLOAT16, 2, true);
    check_nt(GELU_TANH, ACL_BF16, 2, true);
}

static void softplus_large_equals_chunked(void **state)
{
    (void)state;
    check(SOFTPLUS, ACL_FLOAT, 4);
    check(SOFTPLUS, ACL_DOUBLE, 8);
    check(SOFTPLUS, ACL_FLOAT16, 2);
    check(SOFTPLUS, ACL_BF16, 2);
}

/* SoftplusBackward's 16-bit table kernels (calls of 2^20 elements up, AVX2) hand a lane whose
 * divisor is NaN (|beta·x| > 86, or a NaN x) to the scalar form; the bf16 kernel tests for such
 * lanes once per block of the driver (round 32), so a block holding a single one must still find
 * it, wherever it sits in the block's passes of 32.  Here every such lane is alone in its block:
 * 32 of them, 4097 elements apart (so at 32 successive offsets within the passes, whatever the
 * block grid's shift), x = -100 (z = -150) or NaN, the rest ordinary.  The large call against the
 * chunked one (the direct kernels), bit for bit, for 1 and 2 threads. */
static void softplus16_lone_redo_lanes(void **state)
{
    (void)state;
    const aclDataType dts[2] = {ACL_BF16, ACL_FLOAT16};
    for (int d = 0; d < 2; d++) {
        uint16_t *g = malloc(N * 2), *x = malloc(N * 2), *ref = malloc(N * 2), *out = malloc(N * 2);
        assert_true(g && x && ref && out);
        uint32_t s = 4242u + (uint32_t)d;
        for (int64_t i = 0; i < N; i++) {
            store(dts[d], g, i, (double)(lcg(&s) >> 8) * 0x1p-24 * 6 - 3);
            store(dts[d], x, i, (double)(lcg(&s) >> 8) * 0x1p-24 * 8 - 4);
        }
        for (int64_t r = 0; r < 32; r++) store(dts[d], x, 4097 * (r + 1), r % 2 ? NAN : -100.0);
        aclconformSetNumThreads(1);
        for (int64_t i = 0; i < N; i += CHUNK) call(SOFTPLUS, dts[d], N - i < CHUNK ? N - i : CHUNK, g + i, x + i, ref + i);
        for (int t = 1; t <= 2; t++) {
            aclconformSetNumThreads(t);
            memset(out, 0x5a, N * 2);
            call(SOFTPLUS, dts[d], N, g, x, out);
            int64_t first = tt_first_differ(dts[d], out, ref, N);
            if (first >= 0) print_error("dtype %d threads %d: element %lld differs from the chunked call\n", (int)dts[d], t,
                                        (long long)first);
            assert_int_equal(first, -1);
        }
        aclconformSetNumThreads(0);
        free(g); free(x); free(ref); free(out);
    }
}

/* The 16-bit operators on views of stride 2 (every other element of buffers twice as long: the
 * all-16-bit driver stages them as raw bits, round 20; the f32 staging before) against the
 * contiguous call (in place), element by element, bit for bit, for 1, 2 and 3 threads; the gaps
 * between the output's elements stay untouched */
static void strided16_equals_contiguous(void **state)
{
    (void)state;
    enum { M = (1 << 16) + 21 };
    static const which ops[] = {GELU_NONE, GELU_TANH, SOFTPLUS, LOGIT};
    const aclDataType dts[2] = {ACL_FLOAT16, ACL_BF16};
    for (size_t op = 0; op < sizeof ops / sizeof ops[0]; op++)
        for (int d = 0; d < 2; d++) {
            uint16_t *g = malloc(M * 2), *x = malloc(M * 2), *out = malloc(M * 2);
            uint16_t *g2 = malloc(M * 4), *x2 = malloc(M * 4), *out2 = malloc(M * 4);
            assert_true(g && x && out && g2 && x2 && out2);
            uint32_t s = 777u + (uint32_t)d + 10u * (uint32_t)op;
            for (int64_t i = 0; i < M; i++) {
                store(dts[d], g, i, value(ops[op], 0, i, &s));
                store(dts[d], x, i, value(ops[op], 1, i, &s));
                g2[2 * i] = g[i];
                x2[2 * i] = x[i];
                g2[2 * i + 1] = x2[2 * i + 1] = 0x7e00; /* gaps: a NaN that must not leak in */
            }
            aclconformSetNumThreads(1);
            call(ops[op], dts[d], M, g, x, out);
            for (int t = 1; t <= 3; t++) {
                aclconformSetNumThreads(t);
                memset(out2, 0x5a, M * 4);
                call_strided(ops[op], dts[d], M, 2, g2, x2, out2);
                int64_t first = -1;
                for (int64_t i = 0; i < M && first < 0; i++)
                    if (out2[2 * i] != out[i] || (i + 1 < M && out2[2 * i + 1] != 0x5a5a)) first = i;
                if (first >= 0)
                    fail_msg("op %d dtype %d threads %d: element %lld differs between the strided and the contiguous call",
                             (int)ops[op], (int)dts[d], t, (long long)first);
            }
            aclconformSetNumThreads(0);
            free(g); free(x); free(out); free(g2); free(x2); free(out2);
        }
}

/* n floats that end where a page ends, the next page inaccessible (a read past them faults:
 * AddressSanitizer does not see the kernels' vector loads); *map, *len: for munmap */
static float *guarded_floats(int64_t n, void **map, size_t *len)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE), bytes = (size_t)n * 4, data = (bytes + pg - 1) / pg * pg;
    *len = data + pg;
    char *m = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(m != MAP_FAILED);
    assert_int_equal(mprotect(m + data, pg, PROT_NONE), 0);
    *map = m;
    return (float *)(void *)(m + data - bytes);
}

/* LogitGrad f32 on inputs that hold their elements at every other float (x[::2]) and a
 * contiguous output: read in place, two loads and a permute per 16 lanes (acl_ewise2_f32_pairs,
 * round 26).  Against the contiguous call, bit for bit, for 1, 2 and 3 threads: 1-D and 2-D
 * views, lengths around the kernel's 16- and 32-lane steps and the 1024-element blocks, views
 * starting at an odd float, the gaps holding a NaN that must not leak in, and each input's
 * storage ending at its last element, on a page followed by an inaccessible one (the last
 * element's partner lies past the storage: reading it faults).  Views that are not both x[::2]
 * (dy contiguous, a stride of 3) take the staged path and must give the same bits too. */
static void logit_pairs_equal_contiguous(void **state)
{
    (void)state;
    if (tt_vector_kernels() && tt_qemu_deviates("qemu 7.2 faults on the masked-out lanes of VMASKMOVPS at a page end "
                                               "(hardware does not: SDM, and this test on every CPU it ran on)"))
        skip();
    static const int64_t lens[] = {1, 15, 16, 17, 31, 32, 33, 1000, 1024 + 37, (1 << 16) + 21};
    for (int nt = 0; nt < 2; nt++) /* 1: streaming stores on every size */
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
        for (int form = 0; form < 5; form++) {
            /* 0: 1-D, 1: 2-D [rows, M/rows], 2: dy contiguous, 3: stride 3, 4: 2-D with rows 6 floats
               further apart than x[::2] of the whole (not one run of pairs: staged) */
            acl_nt_set_min_bytes(nt ? 0 : -1);
            int64_t m = lens[li], two = form == 1 || form == 4, rows = two && m % 3 == 0 ? 3 : two && m % 5 == 0 ? 5 : 1;
            if (form == 4 && rows == 1) continue;
            int64_t st = form == 3 ? 3 : 2, off = li % 2; /* odd lengths' views start at float 1 */
            int64_t pad = form == 4 ? 6 : 0;
            int64_t storage = off + (m - 1) * st + 1 + (rows - 1) * pad;
            float *g = malloc((size_t)m * 4), *x = malloc((size_t)m * 4), *out = malloc((size_t)m * 4);
            void *gmap, *xmap;
            size_t glen, xlen;
            float *gs = guarded_floats(storage, &gmap, &glen), *xs = guarded_floats(storage, &xmap, &xlen);
            float *outs = malloc((size_t)m * 4);
            assert_true(g && x && out && gs && xs && outs);
            uint32_t s = 4242u + (uint32_t)li;
            for (int64_t i = 0; i < storage; i++) gs[i] = xs[i] = NAN;
            for (int64_t i = 0; i < m; i++) {
                g[i] = (float)value(LOGIT, 0, i, &s);
                x[i] = (float)value(LOGIT, 1, i, &s);
                int64_t at = off + st * i + i / (m / rows) * pad;
                gs[at] = g[i];
                xs[at] = x[i];
            }
            int64_t dims[2] = {rows, m / rows}, cdims[2] = {rows, m / rows};
            int64_t sst[2] = {st * (m / rows) + pad, st}, cst[2] = {m / rows, 1};
            aclTensor *tx = aclCreateTensor(dims, 2, ACL_FLOAT, sst, off, ACL_FORMAT_ND, &storage, 1, xs);
            aclTensor *tg = form == 2 ? aclCreateTensor(cdims, 2, ACL_FLOAT, cst, 0, ACL_FORMAT_ND, &m, 1, g)
                                      : aclCreateTensor(dims, 2, ACL_FLOAT, sst, off, ACL_FORMAT_ND, &storage, 1, gs);
            aclTensor *to = aclCreateTensor(cdims, 2, ACL_FLOAT, cst, 0, ACL_FORMAT_ND, &m, 1, outs);
            aclconformSetNumThreads(1);
            call(LOGIT, ACL_FLOAT, m, g, x, out);
            for (int t = 1; t <= 3; t++) {
                aclconformSetNumThreads(t);
                memset(outs, 0x5a, (size_t)m * 4);
                call_tensors(LOGIT, tg, tx, to);
                int64_t first = tt_first_differ(ACL_FLOAT, outs, out, m);
                if (first >= 0)
                    fail_msg("length %lld form %d threads %d nt %d: element %lld: %a strided, %a contiguous", (long long)m,
                             form, t, nt, (long long)first, (double)outs[first], (double)out[first]);
            }
            aclconformSetNumThreads(0);
            acl_nt_set_min_bytes(-1);
            aclDestroyTensor(tx);
            aclDestroyTensor(tg);
            aclDestroyTensor(to);
            free(g); free(x); free(out); free(outs);
            munmap(gmap, glen);
            munmap(xmap, xlen);
        }
}

/* ---- permuted views (tiled walk) ---------------------------------------------------------- */

enum { PR = 4, PPAD = 1, POFF = 2 };
static const int64_t PDIM[PR] = {2, 3, 45, 130};

/* A [2, 3, 45, 130] view whose storage holds the dimensions in the order ord (outermost first),
 * each padded by PPAD, at offset POFF (unless compact); a dimension d with bcast bit d set has extent 1 and
 * stride 0 in the view (the tensor is [1 or extent] per dimension, broadcast by the operator). */
typedef struct {
    aclTensor *t;
    char *mem;
    int64_t strides[PR], storage, off;
} ptensor;

static ptensor ptensor_new(aclDataType dt, size_t es, const int ord[PR], unsigned bcast, bool compact)
{
    int64_t pad = compact ? 0 : PPAD, off = compact ? 0 : POFF;
    int64_t dims[PR], span = 1;
    ptensor p;
    for (int k = PR - 1; k >= 0; k--) {
        int d = ord[k];
        dims[d] = bcast >> d & 1 ? 1 : PDIM[d];
        p.strides[d] = bcast >> d & 1 ? 0 : span;
        span *= dims[d] + pad;
    }
    p.off = off;
    p.storage = off + span;
    p.mem = malloc((size_t)p.storage * es);
    assert_non_null(p.mem);
    memset(p.mem, 0x5a, (size_t)p.storage * es);
    int64_t tstrides[PR];
    for (int d = 0; d < PR; d++) tstrides[d] = bcast >> d & 1 ? 1 : p.strides[d];
    p.t = aclCreateTensor(dims, PR, dt, tstrides, off, ACL_FORMAT_ND, &p.storage, 1, p.mem);
    assert_non_null(p.t);
    return p;
}

/* storage element of logical element i (row-major) */
static int64_t ptensor_at(const ptensor *p, int64_t i)
{
    int64_t at = p->off;
    for (int d = PR - 1; d >= 0; d--) {
        at += i % PDIM[d] * p->strides[d];
        i /= PDIM[d];
    }
    return at;
}

static void ptensor_free(ptensor *p)
{
    aclDestroyTensor(p->t);
    free(p->mem);
}

static void permuted_views_equal_contiguous(void **state)
{
    (void)state;
    enum { M = 2 * 3 * 45 * 130 };
    static const int row[PR] = {0, 1, 2, 3}, tr[PR] = {0, 1, 3, 2}, rev[PR] = {3, 2, 1, 0}, mid[PR] = {2, 3, 0, 1};
    /* storage orders of gradient, x, output; x broadcast over dimensions (bit d: dimension d) */
    /* xc: x compact (no padding, no offset): contiguous where its order is row-major, and then
     * 16-bit Gelu takes its table paths by x's raw bits */
    static const struct { const int *g, *x, *o; unsigned xb; bool xc; } lay[] = {
        {row, row, row, 0, false}, {tr, tr, row, 0, false}, {row, tr, row, 0, false},
        {row, row, tr, 0, false},  {tr, tr, tr, 0, false},  {rev, row, rev, 0, false},
        {mid, tr, row, 0, false},  {tr, row, row, 3, false}, {tr, tr, row, 2, false},
        {tr, tr, row, 4, false},   {rev, tr, row, 8, false}, {tr, row, row, 0, true},
        {row, row, tr, 0, true}};
    for (size_t c = 0; c < N_OP_CASES; c++) {
        aclDataType dt = OP_CASES[c].dt;
        size_t es = OP_CASES[c].es;
        for (size_t l = 0; l < sizeof lay / sizeof lay[0]; l++) {
            unsigned xb = lay[l].xb;
            if (xb && OP_CASES[c].op != GELU_NONE && OP_CASES[c].op != GELU_TANH) continue; /* only Gelu broadcasts */
            ptensor g = ptensor_new(dt, es, lay[l].g, 0, false), x = ptensor_new(dt, es, lay[l].x, xb, lay[l].xc),
                    o = ptensor_new(dt, es, lay[l].o, 0, false);
            char *cg = malloc(M * es), *cx = malloc(M * es), *ref = malloc(M * es), *one = malloc((size_t)o.storage * es);
            assert_true(cg && cx && ref && one);
            uint32_t s = 4242u + (uint32_t)c * 31u + (uint32_t)l;
            for (int64_t i = 0; i < M; i++) {
                store(dt, cg, i, value(OP_CASES[c].op, 0, i, &s));
                store(dt, cx, i, value(OP_CASES[c].op, 1, i, &s));
            }
            /* a broadcast x: every element takes the value at index 0 of its broadcast dimensions */
            for (int64_t i = 0; i < M; i++) {
                int64_t src = 0, rem = i, scale = 1;
                for (int d = PR - 1; d >= 0; d--) {
                    src += (xb >> d & 1 ? 0 : rem % PDIM[d]) * scale;
                    rem /= PDIM[d];
                    scale *= PDIM[d];
                }
                memcpy(cx + i * (int64_t)es, cx + src * (int64_t)es, es);
            }
            for (int64_t i = 0; i < M; i++) {
                memcpy(g.mem + ptensor_at(&g, i) * (int64_t)es, cg + i * (int64_t)es, es);
                memcpy(x.mem + ptensor_at(&x, i) * (int64_t)es, cx + i * (int64_t)es, es);
            }
            char *inside = calloc((size_t)o.storage, 1); /* the output view's storage elements */
            assert_non_null(inside);
            for (int64_t i = 0; i < M; i++) inside[ptensor_at(&o, i)] = 1;
            aclconformSetNumThreads(1);
            call(OP_CASES[c].op, dt, M, cg, cx, ref);
            /* threads 1, 2, 3; then 2 with the tiles' staging allocation refused (row-by-row fallback) */
            for (int t = 1; t <= 4; t++) {
                aclconformSetNumThreads(t < 4 ? t : 2);
                acl_ewise_set_staging_limit(t < 4 ? INT64_MAX : 0);
                memset(o.mem, 0x5a, (size_t)o.storage * es);
                call_tensors(OP_CASES[c].op, g.t, x.t, o.t);
                if (t == 1) memcpy(one, o.mem, (size_t)o.storage * es);
                int64_t first = -1, written = 0;
                for (int64_t i = 0; i < M && first < 0; i++)
                    if (tt_count_differ(dt, o.mem + ptensor_at(&o, i) * (int64_t)es, ref + i * (int64_t)es, 1)) first = i;
                for (int64_t e = 0; e < o.storage; e++)
                    for (size_t b = 0; b < es && !inside[e]; b++) written += (unsigned char)o.mem[e * (int64_t)es + (int64_t)b] != 0x5a;
                /* the same bits as the 1-thread call, a NaN as any NaN on the portable loops */
                bool same_as_one = tt_first_differ(dt, one, o.mem, o.storage) < 0;
                if (first >= 0 || written || !same_as_one)
                    fail_msg("op %d dtype %d layout %zu threads %d%s: element %lld differs from the contiguous call, "
                             "%lld bytes outside the output view written, %s the 1-thread bits",
                             (int)OP_CASES[c].op, (int)dt, l, t < 4 ? t : 2, t < 4 ? "" : " (no staging)", (long long)first, (long long)written,
                             same_as_one ? "" : "not");
            }
            aclconformSetNumThreads(0);
            acl_ewise_set_staging_limit(INT64_MAX);
            free(cg);
            free(cx);
            free(ref);
            free(one);
            free(inside);
            ptensor_free(&g);
            ptensor_free(&x);
            ptensor_free(&o);
        }
    }
}

/* LogitGrad, and once more with streaming stores on every size (acl_nt_set_min_bytes(0)) for
 * the large calls against the chunked calls' plain stores: f32 (its kernel's, round 26) and
 * 16-bit (the all-16-bit driver's copy, round 27) */
static void logit_large_equals_chunked(void **state)
{
    (void)state;
    check(LOGIT, ACL_FLOAT, 4);
    check(LOGIT, ACL_FLOAT16, 2);
    check(LOGIT, ACL_BF16, 2);
    check_nt(LOGIT, ACL_FLOAT, 4, true);
    check_nt(LOGIT, ACL_FLOAT16, 2, true);
    check_nt(LOGIT, ACL_BF16, 2, true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gelu_f32_large_equals_chunked),
        cmocka_unit_test(specials_do_not_depend_on_placement),
        cmocka_unit_test(gelu16_large_equals_chunked),
        cmocka_unit_test(softplus_large_equals_chunked),
        cmocka_unit_test(softplus16_lone_redo_lanes),
        cmocka_unit_test(strided16_equals_contiguous),
        cmocka_unit_test(logit_large_equals_chunked),
        cmocka_unit_test(logit_pairs_equal_contiguous),
        cmocka_unit_test(permuted_views_equal_contiguous),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
