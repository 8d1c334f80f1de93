/* Elementwise driver: out[i] = f(a[i], b[i]) over views that share one iteration shape (inputs
 * may be broadcast views).  Work is cut into blocks of ACL_EWISE_BLOCK elements: each block is
 * loaded into compute-precision arrays (exact widening), handed to the kernel, and stored with one
 * rounding to the output dtype.  Blocks run in parallel; the kernel sees a whole block so its
 * loop can vectorise, and the result of an element never depends on the partition. */
#ifndef ACL_EWISE_H
#define ACL_EWISE_H

#include "runtime.h"

#define ACL_EWISE_BLOCK 1024

/* The f32 and f64 drivers run views that cross cache lines element by element (x.t()) in tiles
 * staged on the heap (ewise.c); a job whose staging would take more than `bytes` (or whose
 * allocation fails) walks each tile row by row instead.  For tests; default unlimited. */
void acl_ewise_set_staging_limit(int64_t bytes);
/* True if acl_ewise2_f32 / acl_ewise2_f64 would run these views in tiles (the other drivers
 * never do: an operator with a choice of drivers takes the f32 one for such views). */
bool acl_ewise_tiled(const acl_view *a, const acl_view *b, const acl_view *out);

typedef void (*acl_ewise_f32_fn)(const void *ctx, int64_t n, const float *a, const float *b,
                                 float *out);
typedef void (*acl_ewise_f64_fn)(const void *ctx, int64_t n, const double *a, const double *b,
                                 double *out);

void acl_ewise2_f32(const acl_view *a, const acl_view *b, const acl_view *out,
                    acl_ewise_f32_fn fn, const void *ctx);

/* f32 inputs that both hold their elements at every other float (x[::2]: element i at offset
 * + 2i, whatever the view's shape) and a contiguous f32 output: fn2 reads the inputs in place,
 * element i of a block at a[2i] and b[2i] (round 26; acl_loadu16_even_ps).  Any other views run
 * by acl_ewise2_f32 with fn.  fn2 must give fn's bits. */
void acl_ewise2_f32_pairs(const acl_view *a, const acl_view *b, const acl_view *out, acl_ewise_f32_fn fn2,
                          acl_ewise_f32_fn fn, const void *ctx);

/* Non-temporal stores (issue 14, round 26; ewise.c): a kernel may write a contiguous output of at
 * least acl_nt_min_bytes() bytes (acl_nt_wanted) with streaming stores (aligned full vectors
 * only) when its driver ends every range with acl_nt_fence(), so that the stores are visible to
 * whoever waits for the parallel-for: acl_ewise2_f32's flat blocks, acl_ewise2_f32_pairs and
 * acl_ewise2_u16 do (not acl_ewise2_f32's tiles, nor the f64 and f32_u16 drivers), and so do
 * NsaCompressGrad's and ScaledMaskedSoftmaxBackward's tasks.  The size is settable for tests
 * (default ACL_NT_MIN_BYTES; 0 to use them on any size). */
#define ACL_NT_MIN_BYTES ((int64_t)16 << 20)
int64_t acl_nt_min_bytes(void);
void acl_nt_set_min_bytes(int64_t bytes);
void acl_nt_fence(void);
/* A contiguous output of at least acl_nt_min_bytes() bytes. */
static inline bool acl_nt_wanted(const acl_view *out)
{
    return out->contiguous && out->numel * (int64_t)out->esize >= acl_nt_min_bytes();
}
/* acl_nt_wanted, for a kernel that streams rows of `row` elements in vectors of `align` bytes:
 * the output and every row start on `align` bytes, so each full vector of a row is aligned. */
static inline bool acl_nt_wanted_rows(const acl_view *out, int64_t row, int64_t align)
{
    return acl_nt_wanted(out) && (uintptr_t)acl_view_ptr(out, 0) % (uintptr_t)align == 0 &&
           row * (int64_t)out->esize % align == 0;
}

/* How far ahead of the kernel the in-place inputs of a large f32 job are prefetched into L1. */
#define ACL_PREFETCH_BYTES 2048
/* The same driver for a kernel that prefetches its inputs itself, acl_prefetch_pass_f32 once per
 * pass: the driver hands it whole blocks (acl_ewise2_f32 hands a large job's blocks over in
 * sub-blocks of 128 elements, each after its own prefetches; see ewise.c). */
void acl_ewise2_f32_pf(const acl_view *a, const acl_view *b, const acl_view *out,
                       acl_ewise_f32_fn fn, const void *ctx);
/* For a kernel run by acl_ewise2_f32_pf: prefetch into L1 the 128 bytes of a and of b that lie
 * ACL_PREFETCH_BYTES past a and b (a pass of 32 elements).  The addresses may lie past the arrays'
 * ends (a prefetch never faults), so they are formed as integers. */
static inline void acl_prefetch_pass_f32(const float *a, const float *b)
{
    const char *pa = (const char *)(uintptr_t)((uintptr_t)a + ACL_PREFETCH_BYTES);
    const char *pb = (const char *)(uintptr_t)((uintptr_t)b + ACL_PREFETCH_BYTES);
    __builtin_prefetch(pa, 0, 3);
    __builtin_prefetch(pa + 64, 0, 3);
    __builtin_prefetch(pb, 0, 3);
    __builtin_prefetch(pb + 64, 0, 3);
}

/* The same for a kernel of doubles whose pass reads 16 elements (128 bytes) of a and of b. */
static inline void acl_prefetch_pass_f64(const double *a, const double *b)
{
    acl_prefetch_pass_f32((const float *)(const void *)a, (const float *)(const void *)b);
}

/* Same blocking, but b is a contiguous 16-bit (f16 or bf16) view handed to the kernel as its raw
 * bits, so that the kernel can index a 65536-entry table by them (acl_ewise_raw16_ok(b)). */
typedef void (*acl_ewise_f32_u16_fn)(const void *ctx, int64_t n, const float *a, const uint16_t *b,
                                     float *out);
static inline bool acl_ewise_raw16_ok(const acl_view *b)
{
#if ACLCONFORM_MUTANT == 8 /* broadcast-stride: raw 16-bit table path taken for strided/broadcast b (read as contiguous) */
    return acl_dtype_is16(b->dtype);
#else
    return b->contiguous && acl_dtype_is16(b->dtype);
#endif
}
void acl_ewise2_f32_u16(const acl_view *a, const acl_view *b, const acl_view *out,
                        acl_ewise_f32_u16_fn fn, const void *ctx);
void acl_ewise2_f64(const acl_view *a, const acl_view *b, const acl_view *out,
                    acl_ewise_f64_fn fn, const void *ctx);

/* Same blocking, all three views of one 16-bit dtype and not run in tiles (acl_ewise_all16_ok):
 * the kernel gets the raw bits of a, b and out and converts in registers.  Contiguous views are
 * read and written in place; the others (strided, broadcast) are copied as raw bits through
 * block buffers, so every layout gets the contiguous form's kernel and its bits.  With `stream`,
 * a contiguous output of acl_nt_min_bytes() or more is written by the kernel into a block buffer
 * and copied out with streaming stores (ewise.c, round 27): for the operators where measurement
 * showed it to pay. */
typedef void (*acl_ewise_u16_fn)(const void *ctx, int64_t n, const uint16_t *a, const uint16_t *b,
                                 uint16_t *out);
static inline bool acl_ewise_all16_ok(const acl_view *a, const acl_view *b, const acl_view *out)
{
    return acl_dtype_is16(b->dtype) && a->dtype == b->dtype && out->dtype == b->dtype && !acl_ewise_tiled(a, b, out);
}
void acl_ewise2_u16(const acl_view *a, const acl_view *b, const acl_view *out, acl_ewise_u16_fn fn,
                    const void *ctx, bool stream);
/* How far ahead the all-16-bit kernels prefetch their inputs into L2 (acl_prefetch_pass_u16). */
#define ACL_PREFETCH_L2_BYTES 8192
/* For an all-16-bit kernel, once per pass of 32 elements: prefetch into L2 only (PREFETCHT1) the
 * line of a and of b ACL_PREFETCH_L2_BYTES past a and b (see ewise.c). */
static inline void acl_prefetch_pass_u16(const uint16_t *a, const uint16_t *b)
{
    __builtin_prefetch((const char *)(uintptr_t)((uintptr_t)a + ACL_PREFETCH_L2_BYTES), 0, 2);
    __builtin_prefetch((const char *)(uintptr_t)((uintptr_t)b + ACL_PREFETCH_L2_BYTES), 0, 2);
}

#endif
