/* Helpers shared by the oracle tests (header-only; each test is its own executable):
 * tensor descriptors over caller storage, f16/bf16 encoders, a minimal .npy reader for the spec's
 * example corpus (header dict, then raw little-endian data). */
#ifndef ORACLE_TEST_UTIL_H
#define ORACLE_TEST_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"

typedef struct {
    int64_t shape[8], strides[8];
    orc_tensor t;
} tt_tensor;

/* Contiguous row-major descriptor (strides computed) over data. */
static inline orc_tensor *tt_make(tt_tensor *s, cf_dtype dt, int nd, const int64_t *shape, const void *data)
{
    int64_t st = 1;
    for (int k = nd - 1; k >= 0; k--) {
        s->shape[k] = shape[k];
        s->strides[k] = st;
        st *= shape[k];
    }
    s->t = (orc_tensor){dt, nd, s->shape, s->strides, 0, data};
    return &s->t;
}

static inline orc_tensor *tt_view(tt_tensor *s, cf_dtype dt, int nd, const int64_t *shape,
                                  const int64_t *strides, int64_t offset, const void *data)
{
    for (int k = 0; k < nd; k++) {
        s->shape[k] = shape[k];
        s->strides[k] = strides[k];
    }
    s->t = (orc_tensor){dt, nd, s->shape, s->strides, offset, data};
    return &s->t;
}

/* Output arrays for n elements (all five filled). */
typedef struct {
    double *buf;
    orc_out o;
} tt_out;

static inline orc_out *tt_out_alloc(tt_out *s, int64_t n)
{
    size_t k = (size_t)(n > 0 ? n : 1);
    s->buf = calloc(5 * k, sizeof(double));
    s->o = (orc_out){s->buf, s->buf + k, s->buf + 2 * k, s->buf + 3 * k, s->buf + 4 * k};
    return &s->o;
}
static inline void tt_out_free(tt_out *s) { free(s->buf); }

/* f32 -> f16 bits, round to nearest even (test-side encoder for exactly representable inputs
 * and for sampling; independent of the oracle's decoder). */
/* The f32 whose bits are b (a test's inputs written as bits) */
static inline float tt_f32_of(uint32_t b)
{
    float f;
    memcpy(&f, &b, 4);
    return f;
}

static inline uint16_t tt_f16_bits(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) return (uint16_t)(sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u : 0u));
    float af;
    memcpy(&af, &ax, 4);
    if (af >= 65520.0f) return (uint16_t)(sign | 0x7c00u);
    if (af < 0x1p-14f) { /* subnormal: multiples of 2^-24 */
        double q = (double)af * 0x1p24;
        double r = nearbyint(q);
        return (uint16_t)(sign | (uint32_t)r);
    }
    int e;
    double m = frexp((double)af, &e); /* af = m·2^e, m in [0.5,1) */
    double q = nearbyint(ldexp(m, 11)); /* 11 significant bits */
    if (q >= 2048.0) { q /= 2.0; e++; }
    uint32_t be = (uint32_t)(e - 1 + 15);
    if (be >= 31) return (uint16_t)(sign | 0x7c00u);
    return (uint16_t)(sign | (be << 10) | ((uint32_t)q - 1024u));
}

static inline uint16_t tt_bf16_bits(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);
    uint32_t r = x + 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(r >> 16);
}

/* Minimal .npy v1/v2 reader: returns malloc'ed data, number of elements and descr. */
static inline void *tt_npy_read(const char *path, char descr[8], int64_t *count)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    unsigned char h[10];
    void *data = NULL;
    char *hdr = NULL;
    if (fread(h, 1, 10, f) != 10 || memcmp(h, "\x93NUMPY", 6) != 0) goto out;
    size_t hl;
    if (h[6] == 1) {
        hl = (size_t)h[8] | ((size_t)h[9] << 8);
    } else {
        unsigned char h2[2];
        if (fread(h2, 1, 2, f) != 2) goto out;
        hl = (size_t)h[8] | ((size_t)h[9] << 8) | ((size_t)h2[0] << 16) | ((size_t)h2[1] << 24);
    }
    hdr = calloc(hl + 1, 1);
    if (!hdr || fread(hdr, 1, hl, f) != hl) goto out;
    const char *d = strstr(hdr, "'descr':");
    const char *s = strstr(hdr, "'shape':");
    if (!d || !s) goto out;
    d = strchr(d + 8, '\'');
    if (!d) goto out;
    int i = 0;
    for (d++; *d && *d != '\'' && i < 7; d++) descr[i++] = *d;
    descr[i] = 0;
    s = strchr(s, '(');
    if (!s) goto out;
    int64_t n = 1;
    for (s++; *s && *s != ')';) {
        if (*s >= '0' && *s <= '9') {
            n *= strtoll(s, (char **)&s, 10);
        } else {
            s++;
        }
    }
    int es = atoi(descr + 2);
    data = malloc((size_t)(n * es > 0 ? n * es : 1));
    if (!data || fread(data, (size_t)es, (size_t)n, f) != (size_t)n) {
        free(data);
        data = NULL;
        goto out;
    }
    *count = n;
out:
    free(hdr);
    fclose(f);
    return data;
}

/* the spec examples (spec/examples/corpus), one copy in the tree: tests/data/examples, also
 * replayed by the golden tier (golden_<op>) */
#define TT_EXAMPLES ACLCONFORM_SOURCE_DIR "/tests/data/examples"

/* Reads a copied spec example file (NULL if missing or malformed). */
static inline void *tt_example(const char *rel, int64_t *count)
{
    char path[512], descr[8];
    snprintf(path, sizeof path, "%s/%s", TT_EXAMPLES, rel);
    return tt_npy_read(path, descr, count);
}

#endif
