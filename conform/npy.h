/* numpy .npy files (format v1.0 written; v1.0–v3.0 read), little endian only.
 * The suite's storage dtypes: f16 '<f2', bf16 '<u2' (raw bits; the manifest says bf16), f32 '<f4',
 * f64 '<f8', i8 '|i1', i16 '<i2', i32 '<i4', i64 '<i8', u8 '|u1', bool '|b1'. */
#ifndef ACLCONFORM_NPY_H
#define ACLCONFORM_NPY_H

#include <stdint.h>

#include "case.h"
#include "util.h"

#define NPY_MAX_DIMS 32

typedef struct {
    char descr[8]; /* normalised: '<f2' '<u2' '<f4' '<f8' '|i1' '<i2' '<i4' '<i8' '|u1' '|b1' */
    int ndim;
    int64_t shape[NPY_MAX_DIMS];
    int64_t numel;
    size_t itemsize;
    void *data; /* numel * itemsize bytes, owned */
} npy_array;

/* descr for a dtype (bf16 -> '<u2'); NULL for none. */
const char *npy_descr_for(cf_dtype dt);
/* Does descr hold values of dt (the manifest's dtype)? */
bool npy_descr_matches(const char *descr, cf_dtype dt);

/* Read and validate a file: magic, version, header dict (descr, fortran_order False, shape),
 * data size vs shape.  Every error names the file and the field. */
cf_status npy_read(const char *path, npy_array *out, cf_err *e);
/* The same over len bytes in memory (path names them in messages).  The data size the header
 * asks for is bounded by cf_max_bytes(); on error *out holds nothing. */
cf_status npy_parse(const char *path, const void *data, size_t len, npy_array *out, cf_err *e);
/* Write atomically (temporary file + rename). */
cf_status npy_write(const char *path, const char *descr, int ndim, const int64_t *shape,
                    const void *data, cf_err *e);
void npy_free(npy_array *a);

#endif
