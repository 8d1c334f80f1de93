/* Strided views: row-major walks over a (broadcast) iteration shape with conversion to and from
 * the compute precision.  A contiguous view is one conversion loop; otherwise the walk keeps an
 * odometer and runs the innermost dimension as a tight strided loop. */
#include <string.h>

#include "conv.h"
#include "runtime.h"
#include "simd512.h"

static void view_finish(acl_view *v)
{
    v->numel = 1;
    for (int k = 0; k < v->ndim; k++) v->numel *= v->shape[k];
    int64_t run = 1;
    v->contiguous = true;
    for (int k = v->ndim - 1; k >= 0; k--) {
#if ACLCONFORM_MUTANT == 10 /* contiguity: contiguity decided by the innermost stride only */
        if (k == v->ndim - 1 && v->shape[k] != 1 && v->strides[k] != run) v->contiguous = false;
#else
        if (v->shape[k] != 1 && v->strides[k] != run) v->contiguous = false;
#endif
        run *= v->shape[k];
    }
    v->esize = acl_dtype_size(v->dtype);
}

void acl_view_init(acl_view *v, const aclTensor *t)
{
    acl_view_broadcast(v, t, (int)t->ndim, t->dims);
}

void acl_view_broadcast(acl_view *v, const aclTensor *t, int ndim, const int64_t *shape)
{
    memset(v, 0, sizeof *v);
    v->ndim = ndim;
    v->offset = t->offset;
    v->dtype = t->dtype;
    v->data = t->data;
    int lead = ndim - (int)t->ndim;
    for (int k = 0; k < ndim; k++) {
        v->shape[k] = shape[k];
#if ACLCONFORM_MUTANT == 9 /* broadcast-stride: broadcast aligns dims from the left instead of the right */
        int tk = k < (int)t->ndim ? k : -1; (void)lead;
#else
        int tk = k - lead;
#endif
        v->strides[k] = (tk < 0 || t->dims[tk] == 1) ? 0 : t->strides[tk];
    }
    view_finish(v);
}

void *acl_view_ptr(const acl_view *v, int64_t i)
{
    int64_t off = v->offset;
    for (int k = v->ndim - 1; k >= 0; k--) {
        off += (i % v->shape[k]) * v->strides[k];
        i /= v->shape[k];
    }
    return v->data + off * (int64_t)v->esize;
}

/* One element converted to float / double. */
static inline float ld_f32(aclDataType dt, const char *p)
{
    switch (dt) {
    case ACL_FLOAT: { float f; memcpy(&f, p, 4); return f; }
    case ACL_FLOAT16: { uint16_t h; memcpy(&h, p, 2); return acl_f16_to_f32(h); }
    case ACL_BF16: { uint16_t h; memcpy(&h, p, 2); return acl_bf16_to_f32(h); }
    case ACL_DOUBLE: { double d; memcpy(&d, p, 8); return (float)d; }
    case ACL_INT8: return (float)*(const int8_t *)p;
    case ACL_UINT8: return (float)*(const uint8_t *)p;
    case ACL_BOOL: return *(const uint8_t *)p ? 1.0f : 0.0f;
    case ACL_INT16: { int16_t x; memcpy(&x, p, 2); return (float)x; }
    case ACL_INT32: { int32_t x; memcpy(&x, p, 4); return (float)x; }
#if ACLCONFORM_MUTANT == 13 /* index-width: int64 element read through an int32 (|value| >= 2^31 wraps) */
    case ACL_INT64: { int64_t x; memcpy(&x, p, 8); return (float)(int32_t)x; }
#else
    case ACL_INT64: { int64_t x; memcpy(&x, p, 8); return (float)x; }
#endif
    default: return 0.0f;
    }
}

static inline double ld_f64(aclDataType dt, const char *p)
{
    switch (dt) {
    case ACL_DOUBLE: { double d; memcpy(&d, p, 8); return d; }
    case ACL_INT64: { int64_t x; memcpy(&x, p, 8); return (double)x; }
    case ACL_INT32: { int32_t x; memcpy(&x, p, 4); return (double)x; }
    default: return (double)ld_f32(dt, p); /* every other dtype is exact in f32 */
    }
}

static inline void st_f32(aclDataType dt, char *p, float f)
{
    switch (dt) {
    case ACL_FLOAT: memcpy(p, &f, 4); break;
    case ACL_FLOAT16: { uint16_t h = acl_f32_to_f16(f); memcpy(p, &h, 2); break; }
    case ACL_BF16: { uint16_t h = acl_f32_to_bf16(f); memcpy(p, &h, 2); break; }
    case ACL_DOUBLE: { double d = f; memcpy(p, &d, 8); break; }
    default: break;
    }
}

static inline void st_f64(aclDataType dt, char *p, double d)
{
    if (dt == ACL_DOUBLE) memcpy(p, &d, 8);
    else st_f32(dt, p, (float)d); /* only used where the output is f64 (ops.md §0.6) */
}

/* Contiguous bulk forms. */
static void bulk_load_f32(aclDataType dt, const char *p, int64_t n, float *dst)
{
    switch (dt) {
    case ACL_FLOAT: memcpy(dst, p, (size_t)n * 4); break;
    case ACL_FLOAT16: acl_cvt_f16_to_f32((const uint16_t *)(const void *)p, dst, (size_t)n); break;
    case ACL_BF16: acl_cvt_bf16_to_f32((const uint16_t *)(const void *)p, dst, (size_t)n); break;
    case ACL_BOOL: { /* masks: a vectorisable loop instead of the per-element switch */
        const uint8_t *b = (const uint8_t *)p;
        for (int64_t i = 0; i < n; i++) dst[i] = b[i] ? 1.0f : 0.0f;
        break;
    }
    default: {
        size_t es = acl_dtype_size(dt);
        for (int64_t i = 0; i < n; i++) dst[i] = ld_f32(dt, p + i * (int64_t)es);
    }
    }
}

static void bulk_store_f32(aclDataType dt, char *p, int64_t n, const float *src)
{
    switch (dt) {
    case ACL_FLOAT: memcpy(p, src, (size_t)n * 4); break;
    case ACL_FLOAT16: acl_cvt_f32_to_f16(src, (uint16_t *)(void *)p, (size_t)n); break;
    case ACL_BF16: acl_cvt_f32_to_bf16(src, (uint16_t *)(void *)p, (size_t)n); break;
    default: {
        size_t es = acl_dtype_size(dt);
        for (int64_t i = 0; i < n; i++) st_f32(dt, p + i * (int64_t)es, src[i]);
    }
    }
}

/* Strided runs (a byte stride other than the element size; 0 for a broadcast store never
 * happens): below STRIDED_TIGHT_MAX bytes the dtype's loop is chosen once per run, not per
 * element, and f16 goes through a small buffer and the bulk conversion (F16C where the CPU has
 * it).  The bulk and scalar conversions give the same bits (conv.h), so the values are those of
 * the per-element forms.  Larger strides keep the per-element loop: there every element is a
 * line of its own, and the tight loops, which issue the loads faster, measured slower on this
 * CPU (one thread, 4 Mi f32 read as a transposed view, best of 3: 4 KiB stride 29.5 against
 * 24.9 ms, 2 KiB 20.3 against 13.6, 1 KiB 9.5 against 7.9; 128-512 B: 7.0-7.5 against 9.1-10.9),
 * which looks like the strides' cache-set conflicts; such views now run in tiles (ewise.c).
 * Measured through the operators: docs/speed-rounds.md, round 15.  The loops are unrolled by 4:
 * rolled, their speed hung on where the linker put them (round 16 moved this code and LogitGrad
 * bf16 x[::2] went from 10.0 to 13.9 ms, 16 Mi, 2 threads, the same six instructions per element;
 * unrolled: back to round 15's times whatever the placement). */
enum { STRIDED_CHUNK = 256, STRIDED_TIGHT_MAX = 1024 };

static void strided_load_f32(aclDataType dt, const char *p, int64_t bstride, int64_t len, float *dst)
{
    switch (bstride < STRIDED_TIGHT_MAX ? dt : ACL_DT_UNDEFINED) {
    case ACL_FLOAT:
#pragma GCC unroll 4
        for (int64_t j = 0; j < len; j++) memcpy(dst + j, p + j * bstride, 4);
        return;
    case ACL_BF16:
#pragma GCC unroll 4
        for (int64_t j = 0; j < len; j++) {
            uint16_t h;
            memcpy(&h, p + j * bstride, 2);
            dst[j] = acl_bf16_to_f32(h);
        }
        return;
    case ACL_FLOAT16:
        for (int64_t j0 = 0; j0 < len; j0 += STRIDED_CHUNK) {
            uint16_t h[STRIDED_CHUNK];
            int64_t m = len - j0 < STRIDED_CHUNK ? len - j0 : STRIDED_CHUNK;
#pragma GCC unroll 4
            for (int64_t j = 0; j < m; j++) memcpy(h + j, p + (j0 + j) * bstride, 2);
            acl_cvt_f16_to_f32(h, dst + j0, (size_t)m);
        }
        return;
    default:
        for (int64_t j = 0; j < len; j++) dst[j] = ld_f32(dt, p + j * bstride);
    }
}

static void strided_store_f32(aclDataType dt, char *p, int64_t bstride, int64_t len, const float *src)
{
    switch (bstride < STRIDED_TIGHT_MAX ? dt : ACL_DT_UNDEFINED) {
    case ACL_FLOAT:
#pragma GCC unroll 4
        for (int64_t j = 0; j < len; j++) memcpy(p + j * bstride, src + j, 4);
        return;
    case ACL_BF16:
#pragma GCC unroll 4
        for (int64_t j = 0; j < len; j++) {
            uint16_t h = acl_f32_to_bf16(src[j]);
            memcpy(p + j * bstride, &h, 2);
        }
        return;
    case ACL_FLOAT16:
        for (int64_t j0 = 0; j0 < len; j0 += STRIDED_CHUNK) {
            uint16_t h[STRIDED_CHUNK];
            int64_t m = len - j0 < STRIDED_CHUNK ? len - j0 : STRIDED_CHUNK;
            acl_cvt_f32_to_f16(src + j0, h, (size_t)m);
#pragma GCC unroll 4
            for (int64_t j = 0; j < m; j++) memcpy(p + (j0 + j) * bstride, h + j, 2);
        }
        return;
    default:
        for (int64_t j = 0; j < len; j++) st_f32(dt, p + j * bstride, src[j]);
    }
}

/* Odometer walk over [start, start+n): calls BODY(ptr_of_run_start, byte_stride, run_len, j0)
 * for each maximal run along the innermost dimension. */
#define VIEW_WALK(v, start, n, BODY)                                                               \
    do {                                                                                           \
        int64_t idx_[ACL_MAX_OP_RANK];                                                             \
        int64_t rem_ = (start), off_ = (v)->offset;                                                \
        for (int k_ = (v)->ndim - 1; k_ >= 0; k_--) {                                              \
            idx_[k_] = rem_ % (v)->shape[k_];                                                      \
            rem_ /= (v)->shape[k_];                                                                \
            off_ += idx_[k_] * (v)->strides[k_];                                                   \
        }                                                                                          \
        int last_ = (v)->ndim - 1;                                                                 \
        int64_t inner_ = last_ >= 0 ? (v)->shape[last_] : 1;                                       \
        int64_t istr_ = last_ >= 0 ? (v)->strides[last_] * (int64_t)(v)->esize : 0;               \
        int64_t done_ = 0;                                                                         \
        while (done_ < (n)) {                                                                      \
            int64_t pos_ = last_ >= 0 ? idx_[last_] : 0;                                           \
            int64_t run_ = inner_ - pos_;                                                          \
            if (run_ > (n)-done_) run_ = (n)-done_;                                                \
            char *base_ = (v)->data + off_ * (int64_t)(v)->esize;                                  \
            BODY(base_, istr_, run_, done_);                                                       \
            done_ += run_;                                                                         \
            if (done_ >= (n)) break;                                                               \
            /* advance the odometer by run_ (which ends the innermost row) */                      \
            off_ += (inner_ - pos_) * (last_ >= 0 ? (v)->strides[last_] : 0);                      \
            if (last_ >= 0) idx_[last_] = 0;                                                       \
            off_ -= inner_ * (last_ >= 0 ? (v)->strides[last_] : 0);                               \
            for (int k_ = last_ - 1; k_ >= 0; k_--) {                                              \
                off_ += (v)->strides[k_];                                                          \
                if (++idx_[k_] < (v)->shape[k_]) break;                                            \
                off_ -= idx_[k_] * (v)->strides[k_];                                               \
                idx_[k_] = 0;                                                                      \
            }                                                                                      \
        }                                                                                          \
    } while (0)

/* A run of len elements at byte stride bstride (0: one element broadcast), converted. */
void acl_run_load_f32(aclDataType dt, const char *p, int64_t bstride, int64_t len, float *dst)
{
#if ACLCONFORM_MUTANT == 14 /* broadcast-stride: zero-stride (broadcast) inner run fills one element short */
    enum { BCAST_SHORT = 1 };
#else
    enum { BCAST_SHORT = 0 };
#endif
    if (bstride == (int64_t)acl_dtype_size(dt)) {
        bulk_load_f32(dt, p, len, dst);
    } else if (bstride == 0) {
        float x = ld_f32(dt, p);
        for (int64_t j = 0; j + BCAST_SHORT < len; j++) dst[j] = x;
    } else {
        strided_load_f32(dt, p, bstride, len, dst);
    }
}

void acl_view_load_f32(const acl_view *v, int64_t start, int64_t n, float *dst)
{
    if (n <= 0) return;
    if (v->contiguous) {
#if ACLCONFORM_MUTANT == 12 /* index-width: contiguous load computes the byte offset in int32 (overflows past 2 GiB) */
        bulk_load_f32(v->dtype, v->data + (int32_t)((v->offset + start) * (int64_t)v->esize), n, dst);
#else
        bulk_load_f32(v->dtype, v->data + (v->offset + start) * (int64_t)v->esize, n, dst);
#endif
        return;
    }
#define LOAD_RUN(p, bstride, len, j0) acl_run_load_f32(v->dtype, (p), (bstride), (len), dst + (j0))
    VIEW_WALK(v, start, n, LOAD_RUN);
#undef LOAD_RUN
}

/* f64 runs: doubles are copied directly (below STRIDED_TIGHT_MAX, as strided_load_f32), any
 * other dtype converted element by element */
void acl_run_load_f64(aclDataType dt, const char *p, int64_t bstride, int64_t len, double *dst)
{
    if (dt == ACL_DOUBLE && bstride < STRIDED_TIGHT_MAX)
        for (int64_t j = 0; j < len; j++) memcpy(dst + j, p + j * bstride, 8);
    else
        for (int64_t j = 0; j < len; j++) dst[j] = ld_f64(dt, p + j * bstride);
}

void acl_view_load_f64(const acl_view *v, int64_t start, int64_t n, double *dst)
{
    if (n <= 0) return;
#define LOAD_RUN(p, bstride, len, j0) acl_run_load_f64(v->dtype, (p), (bstride), (len), dst + (j0))
    VIEW_WALK(v, start, n, LOAD_RUN);
#undef LOAD_RUN
}

void acl_run_store_f32(aclDataType dt, char *p, int64_t bstride, int64_t len, const float *src)
{
#if ACLCONFORM_MUTANT == 11 /* stride-units: strided store steps by the byte stride divided by the element size (element/byte confusion) */
    int64_t unit = (int64_t)acl_dtype_size(dt);
#else
    int64_t unit = 1;
#endif
    if (bstride == (int64_t)acl_dtype_size(dt)) bulk_store_f32(dt, p, len, src);
    else strided_store_f32(dt, p, bstride / unit, len, src);
}

void acl_view_store_f32(const acl_view *v, int64_t start, int64_t n, const float *src)
{
    if (n <= 0) return;
    if (v->contiguous) {
        bulk_store_f32(v->dtype, v->data + (v->offset + start) * (int64_t)v->esize, n, src);
        return;
    }
#define STORE_RUN(p, bstride, len, j0) acl_run_store_f32(v->dtype, (p), (bstride), (len), src + (j0))
    VIEW_WALK(v, start, n, STORE_RUN);
#undef STORE_RUN
}

#ifdef ACL_HAVE_AVX512_KERNELS
/* Every other element of a raw 16-bit run (a byte stride of 4: x[::2]): an element is the low half
 * of the 32 bits it starts (little-endian), so 16 of them are one load and one narrowing, where
 * the element loop spends a load and a store on each.  The last element's partner may lie past the
 * storage: that lane's high half is masked off (a masked lane never faults).  16 Mi elements, 2
 * threads, x[::2] inputs, beside the element loop in one process, best of 15, two runs of three
 * rounds (ms): LogitGrad bf16 6.36-6.46 -> 4.23-5.48, GeluBackwardV2 none f16 12.7-13.5 ->
 * 9.2-9.9.  (The same for f32 runs, two loads and a two-table permute per 16, was slower than the
 * element loop: LogitGrad f32 x[::2] 9.7-10.0 -> 11.1-11.9, and 10.3 -> 13.5 in another run.) */
ACL_AVX512_TARGET static int64_t pairs_load_raw16(const char *p, int64_t len, uint16_t *dst)
{
    int64_t j = 0;
    for (; j + 16 <= len; j += 16)
        _mm256_storeu_si256((__m256i *)(dst + j), _mm512_cvtepi32_epi16(_mm512_maskz_loadu_epi16(0x7fffffff, p + 4 * j)));
    return j;
}
#endif

/* Raw 16-bit runs: a contiguous run is one copy, a broadcast one a fill, x[::2] the vector form
 * above, any other an element copy per element (unrolled as strided_load_f32's loops). */
static void run_load_raw16(const char *p, int64_t bstride, int64_t len, uint16_t *dst)
{
#ifdef ACL_HAVE_AVX512_KERNELS
    if (bstride == 4 && len >= 16 && acl_have_avx512()) {
        int64_t j = pairs_load_raw16(p, len, dst);
        p += 4 * j;
        dst += j;
        len -= j;
    }
#endif
    if (bstride == 2) {
        memcpy(dst, p, (size_t)len * 2);
    } else if (bstride == 0) {
        uint16_t h;
        memcpy(&h, p, 2);
        for (int64_t j = 0; j < len; j++) dst[j] = h;
    } else {
#pragma GCC unroll 4
        for (int64_t j = 0; j < len; j++) memcpy(dst + j, p + j * bstride, 2);
    }
}

static void run_store_raw16(char *p, int64_t bstride, int64_t len, const uint16_t *src)
{
    if (bstride == 2) {
        memcpy(p, src, (size_t)len * 2);
    } else {
#pragma GCC unroll 4
        for (int64_t j = 0; j < len; j++) memcpy(p + j * bstride, src + j, 2);
    }
}

void acl_view_load_raw16(const acl_view *v, int64_t start, int64_t n, uint16_t *dst)
{
    if (n <= 0) return;
#define LOAD_RUN(p, bstride, len, j0) run_load_raw16((p), (bstride), (len), dst + (j0))
    VIEW_WALK(v, start, n, LOAD_RUN);
#undef LOAD_RUN
}

void acl_view_store_raw16(const acl_view *v, int64_t start, int64_t n, const uint16_t *src)
{
    if (n <= 0) return;
#define STORE_RUN(p, bstride, len, j0) run_store_raw16((p), (bstride), (len), src + (j0))
    VIEW_WALK(v, start, n, STORE_RUN);
#undef STORE_RUN
}

void acl_run_store_f64(aclDataType dt, char *p, int64_t bstride, int64_t len, const double *src)
{
    if (dt == ACL_DOUBLE && bstride < STRIDED_TIGHT_MAX)
        for (int64_t j = 0; j < len; j++) memcpy(p + j * bstride, src + j, 8);
    else
        for (int64_t j = 0; j < len; j++) st_f64(dt, p + j * bstride, src[j]);
}

void acl_view_store_f64(const acl_view *v, int64_t start, int64_t n, const double *src)
{
    if (n <= 0) return;
#define STORE_RUN(p, bstride, len, j0) acl_run_store_f64(v->dtype, (p), (bstride), (len), src + (j0))
    VIEW_WALK(v, start, n, STORE_RUN);
#undef STORE_RUN
}
