/* Helpers for the operator API tests (header-only, included by tests/api/test_<op>.c).
 *
 * tt: a test tensor that owns its storage.  Layouts: TT_CONTIG (row-major compact),
 * TT_PADDED (row-major with every dim padded by one element and an offset of 3) and TT_COLMAJOR
 * (column-major, padded, offset 5).  Storage outside the view is filled with a sentinel byte so a
 * test can prove that nothing outside an output view was written.
 *
 * Expected values are long double formulas written in each test; ulp_err() measures a result
 * against them in units of the output dtype's last place:
 *   ulp(r) = 2^(max(floor(log2|r|), emin) − p + 1),  err = |got − r| / ulp(r)
 * with p, emin of numerics.md §1.  NaN expected ⇔ NaN got; an infinite expected value must be
 * matched exactly. */
#ifndef OP_UTIL_H
#define OP_UTIL_H

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aclnn/acl_meta.h"
#include "runtime/conv.h"
#include "runtime/runtime.h"
#include "runtime/simd256.h"

enum { TT_CONTIG, TT_PADDED, TT_COLMAJOR, TT_CONTIG64 /* TT_CONTIG with its storage on a 64-byte line */ };
#define TT_SENTINEL 0xA5

typedef struct {
    aclTensor *t;
    unsigned char *mem;
    int64_t storage_n;
    aclDataType dt;
    size_t es;
} tt;

static inline size_t tt_esize(aclDataType dt) { return acl_dtype_size(dt); }

static inline tt tt_new(aclDataType dt, int nd, const int64_t *dims, int layout)
{
    tt x;
    memset(&x, 0, sizeof x);
    x.dt = dt;
    x.es = tt_esize(dt);
    int64_t strides[ACL_MAX_DIMS], offset = 0, span = 1;
    if (layout == TT_CONTIG || layout == TT_CONTIG64) {
        for (int k = nd - 1; k >= 0; k--) { strides[k] = span; span *= dims[k]; }
    } else if (layout == TT_PADDED) {
        offset = 3;
        for (int k = nd - 1; k >= 0; k--) { strides[k] = span; span *= dims[k] + 1; }
    } else {
        offset = 5;
        for (int k = 0; k < nd; k++) { strides[k] = span; span *= dims[k] + 1; }
    }
    x.storage_n = offset + span + 2;
    size_t bytes = (size_t)x.storage_n * x.es;
    x.mem = layout == TT_CONTIG64 ? aligned_alloc(64, (bytes + 63) / 64 * 64) : malloc(bytes);
    memset(x.mem, layout == TT_CONTIG || layout == TT_CONTIG64 ? 0 : TT_SENTINEL, bytes);
    x.t = aclCreateTensor(dims, (uint64_t)nd, dt, strides, offset, ACL_FORMAT_ND, &x.storage_n, 1,
                          x.mem);
    return x;
}

static inline void tt_free(tt *x)
{
    aclDestroyTensor(x->t);
    free(x->mem);
    memset(x, 0, sizeof *x);
}

static inline void *tt_ptr(const tt *x, int64_t i)
{
    acl_view v;
    acl_view_init(&v, x->t);
    return acl_view_ptr(&v, i);
}

/* Store v (rounded to nearest even into the dtype; integers truncate toward zero). */
static inline void tt_set(const tt *x, int64_t i, double v)
{
    void *p = tt_ptr(x, i);
    switch (x->dt) {
    case ACL_FLOAT: { float f = (float)v; memcpy(p, &f, 4); break; }
    case ACL_DOUBLE: memcpy(p, &v, 8); break;
    case ACL_FLOAT16: { uint16_t h = acl_f32_to_f16((float)v); memcpy(p, &h, 2); break; }
    case ACL_BF16: { uint16_t h = acl_f32_to_bf16((float)v); memcpy(p, &h, 2); break; }
    case ACL_INT8: { int8_t q = (int8_t)v; memcpy(p, &q, 1); break; }
    case ACL_UINT8: { uint8_t q = (uint8_t)v; memcpy(p, &q, 1); break; }
    case ACL_BOOL: { uint8_t q = v != 0; memcpy(p, &q, 1); break; }
    case ACL_INT16: { int16_t q = (int16_t)v; memcpy(p, &q, 2); break; }
    case ACL_INT32: { int32_t q = (int32_t)v; memcpy(p, &q, 4); break; }
    case ACL_INT64: { int64_t q = (int64_t)v; memcpy(p, &q, 8); break; }
    default: break;
    }
}

static inline double tt_get(const tt *x, int64_t i)
{
    const void *p = tt_ptr(x, i);
    switch (x->dt) {
    case ACL_FLOAT: { float f; memcpy(&f, p, 4); return f; }
    case ACL_DOUBLE: { double d; memcpy(&d, p, 8); return d; }
    case ACL_FLOAT16: { uint16_t h; memcpy(&h, p, 2); return acl_f16_to_f32(h); }
    case ACL_BF16: { uint16_t h; memcpy(&h, p, 2); return acl_bf16_to_f32(h); }
    case ACL_INT8: return *(const int8_t *)p;
    case ACL_UINT8: return *(const uint8_t *)p;
    case ACL_BOOL: return *(const uint8_t *)p != 0;
    case ACL_INT16: { int16_t q; memcpy(&q, p, 2); return q; }
    case ACL_INT32: { int32_t q; memcpy(&q, p, 4); return q; }
    case ACL_INT64: { int64_t q; memcpy(&q, p, 8); return (double)q; }
    default: return NAN;
    }
}

static inline uint64_t tt_bits(const tt *x, int64_t i)
{
    uint64_t u = 0;
    memcpy(&u, tt_ptr(x, i), x->es);
    return u;
}

/* Whether the stored bits b of dtype dt are a NaN. */
static inline bool tt_bits_nan(aclDataType dt, uint64_t b)
{
    switch (dt) {
    case ACL_FLOAT16: return (b & 0x7c00u) == 0x7c00u && (b & 0x3ffu);
    case ACL_BF16: return (b & 0x7f80u) == 0x7f80u && (b & 0x7fu);
    case ACL_FLOAT: return (b & 0x7f800000u) == 0x7f800000u && (b & 0x7fffffu);
    case ACL_DOUBLE: return (b & 0x7ff0000000000000ull) == 0x7ff0000000000000ull && (b & 0xfffffffffffffull);
    default: return false;
    }
}

/* The comparison of two code paths' outputs (docs/hosts.md, "What is the same on every host"):
 * the same bits, or both NaN.  numerics.md leaves a NaN's sign and payload unspecified, and the
 * portable loops are C that the compiler may vectorise with a commutative product's operands in
 * either order (x86 returns the first operand's NaN), differently for each target_clones clone:
 * the payload of a portable NaN depends on the CPU the library runs on. */
static inline bool tt_same_value(aclDataType dt, uint64_t a, uint64_t b)
{
    return a == b || (tt_bits_nan(dt, a) && tt_bits_nan(dt, b));
}

/* Whether the operators now run hand-written vector kernels (AVX2 or AVX-512, at the current
 * acl_simd_set_cap level): their NaN bits are promised independent of threads, placement and
 * layout; the portable loops' NaNs only as NaNs (docs/hosts.md). */
static inline bool tt_vector_kernels(void)
{
#ifdef ACL_HAVE_AVX2_KERNELS
    return acl_have_avx2() || acl_have_avx512();
#else
    return false;
#endif
}

/* Under scripts/cpus.sh (an x86-64 CPU model in qemu-user's TCG, ACLCONFORM_QEMU_CPU set) where
 * the emulator is known to differ from the hardware: says so and returns true (the caller skips
 * that check there; it runs on every real CPU). */
static inline bool tt_qemu_deviates(const char *what)
{
    const char *cpu = getenv("ACLCONFORM_QEMU_CPU");
    if (!cpu) return false;
    fprintf(stderr, "not checked on qemu's %s model: %s\n", cpu, what);
    return true;
}

/* The comparison of two runs of the same kernels at the current level (threads, placement,
 * layout): the same bits where tt_vector_kernels(), else tt_same_value. */
static inline bool tt_same_run(aclDataType dt, uint64_t a, uint64_t b)
{
    return a == b || (!tt_vector_kernels() && tt_same_value(dt, a, b));
}

/* The number of the n elements of dtype dt at a and b that are not tt_same_value (of another run
 * of the same level, tt_same_run: tt_first_differ) */
static inline int64_t tt_count_differ(aclDataType dt, const void *a, const void *b, int64_t n)
{
    size_t es = acl_dtype_size(dt);
    int64_t d = 0;
    for (int64_t i = 0; i < n; i++) {
        uint64_t u = 0, v = 0;
        memcpy(&u, (const unsigned char *)a + (size_t)i * es, es);
        memcpy(&v, (const unsigned char *)b + (size_t)i * es, es);
        d += !tt_same_value(dt, u, v);
    }
    return d;
}

/* The first of the n elements of dtype dt at got and want that are not tt_same_run, or -1 */
static inline int64_t tt_first_differ(aclDataType dt, const void *got, const void *want, int64_t n)
{
    size_t es = acl_dtype_size(dt);
    for (int64_t i = 0; i < n; i++) {
        uint64_t u = 0, v = 0;
        memcpy(&u, (const unsigned char *)got + (size_t)i * es, es);
        memcpy(&v, (const unsigned char *)want + (size_t)i * es, es);
        if (!tt_same_run(dt, u, v)) return i;
    }
    return -1;
}

/* Number of storage bytes outside the view that lost the sentinel. */
static inline int64_t tt_outside_written(const tt *x)
{
    unsigned char *in = calloc((size_t)x->storage_n, 1);
    for (int64_t i = 0; i < x->t->numel; i++)
        in[((unsigned char *)tt_ptr(x, i) - x->mem) / (int64_t)x->es] = 1;
    int64_t bad = 0;
    for (int64_t e = 0; e < x->storage_n; e++)
        if (!in[e])
            for (size_t b = 0; b < x->es; b++) bad += x->mem[(size_t)e * x->es + b] != TT_SENTINEL;
    free(in);
    return bad;
}

/* Deterministic pseudo-random doubles in [lo, hi). */
static inline double tt_rand(uint64_t *s, double lo, double hi)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return lo + (hi - lo) * (double)(*s >> 11) * 0x1p-53;
}

static inline void dtype_format(aclDataType dt, int *p, int *emin)
{
    switch (dt) {
    case ACL_FLOAT16: *p = 11; *emin = -14; break;
    case ACL_BF16: *p = 8; *emin = -126; break;
    case ACL_DOUBLE: *p = 53; *emin = -1022; break;
    default: *p = 24; *emin = -126; break;
    }
}

static inline double ulp_err(aclDataType dt, double got, long double ref)
{
    if (isnan(ref)) return isnan(got) ? 0.0 : INFINITY;
    if (isnan(got)) return INFINITY;
    int p, emin;
    dtype_format(dt, &p, &emin);
    int emax = dt == ACL_FLOAT16 ? 15 : dt == ACL_DOUBLE ? 1023 : 127;
    /* values at or beyond max + ulp/2 round to infinity */
    if (fabsl(ref) >= ldexpl(1.0L, emax + 1) - ldexpl(1.0L, emax - p)) ref = ref > 0 ? INFINITY : -INFINITY;
    if (isinf(ref) || isinf(got)) return (long double)got == ref ? 0.0 : INFINITY;
    int e = ref == 0 ? emin : (int)floorl(log2l(fabsl(ref)));
    if (e < emin) e = emin;
    long double ulp = ldexpl(1.0L, e - p + 1);
    return (double)(fabsl((long double)got - ref) / ulp);
}

static inline const char *dt_name(aclDataType dt)
{
    switch (dt) {
    case ACL_FLOAT: return "f32";
    case ACL_FLOAT16: return "f16";
    case ACL_BF16: return "bf16";
    case ACL_DOUBLE: return "f64";
    default: return "int";
    }
}

/* ---- validation tables --------------------------------------------------------------------
 * A tensor described by a table row: dtype, shape, format and flags.  Rows start from a valid
 * configuration and override one or two fields (the test files silence -Woverride-init). */
#define VT_NULL 1    /* pass a NULL aclTensor* */
#define VT_NODATA 2  /* data pointer NULL */
#define VT_OVERLAP 4 /* dim 0 has stride 0 (an output that overlaps itself) */
typedef struct {
    aclDataType dt;
    int nd;
    int64_t dims[10];
    aclFormat fmt;
    int flags;
} tspec;

#define TS(dt_, fmt_, ...) {dt_, (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), {__VA_ARGS__}, fmt_, 0}
#define TS0(dt_) {dt_, 0, {0}, ACL_FORMAT_ND, 0}

typedef struct {
    aclTensor *t[8];
    void *mem[8];
    int n;
} vt_pool;

static inline aclTensor *vt_make(vt_pool *pool, const tspec *s)
{
    if (s->flags & VT_NULL) return NULL;
    int64_t strides[10], run = 1, numel = 1;
    for (int k = s->nd - 1; k >= 0; k--) {
        strides[k] = run;
        run *= s->dims[k] > 0 ? s->dims[k] : 1;
        numel *= s->dims[k];
    }
    if ((s->flags & VT_OVERLAP) && s->nd > 0) strides[0] = 0;
    int64_t storage = run + 1;
    void *mem = (s->flags & VT_NODATA) ? NULL : calloc((size_t)storage, 8);
    aclTensor *t = aclCreateTensor(s->dims, (uint64_t)s->nd, s->dt, strides, 0, s->fmt, &storage,
                                   1, mem);
    (void)numel;
    pool->t[pool->n] = t;
    pool->mem[pool->n] = mem;
    pool->n++;
    return t;
}

static inline void vt_free(vt_pool *pool)
{
    for (int i = 0; i < pool->n; i++) {
        aclDestroyTensor(pool->t[i]);
        free(pool->mem[i]);
    }
    pool->n = 0;
}


/* The checks every validation row makes after GetWorkspaceSize: the documented status, a NULL
 * executor on failure, and on success a zero workspace and an execute phase that runs.
 * Returns the number of failed checks (each printed with the operator and row). */
static inline int vt_check_row(const char *op, const char *row, aclnnStatus st, aclnnStatus want,
                               bool null_exec, aclOpExecutor *ex, uint64_t ws,
                               aclnnStatus (*exec)(void *, uint64_t, aclOpExecutor *, aclrtStream))
{
    int fails = 0;
    if (st != want) {
        fprintf(stderr, "%s validation row '%s': got %d want %d\n", op, row, (int)st, (int)want);
        fails++;
    }
    if (null_exec) return fails;
    if (st != ACLNN_SUCCESS && ex != NULL) {
        fprintf(stderr, "%s row '%s': executor not NULL on failure\n", op, row);
        fails++;
    }
    if (st == ACLNN_SUCCESS) {
        if (ws != 0) {
            fprintf(stderr, "%s row '%s': workspace %llu, planned 0\n", op, row, (unsigned long long)ws);
            fails++;
        }
        if (exec(NULL, ws, ex, NULL) != ACLNN_SUCCESS) {
            fprintf(stderr, "%s row '%s': execute failed\n", op, row);
            fails++;
        }
    }
    return fails;
}

/* Round 28: the widest kernels the operators may take (acl_simd_set_cap: 2 AVX-512, 1 AVX2,
 * 0 the portable loops), set when this CPU has that level's kernels: true then; false, with the
 * default level back, when it has not (a test loops over the levels and skips those). */
#ifdef ACL_HAVE_AVX2_KERNELS
static inline bool tt_use_level(int level)
{
    acl_simd_set_cap(level);
    if ((level == 1 && !acl_have_avx2()) || (level == 2 && !acl_have_avx512())) {
        acl_simd_set_cap(2);
        return false;
    }
    return true;
}

/* whether this CPU has that level's kernels, the default level left in place */
static inline bool tt_has_level(int level)
{
    bool v = tt_use_level(level);
    acl_simd_set_cap(2);
    return v;
}
#endif

#endif
