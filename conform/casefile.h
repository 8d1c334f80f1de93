/* Corpus cases on disk (spec formats.md): <corpus>/<op>/<id>/case.json + <tensor>.npy +
 * expected.<out>.npy, expected_lo.<out>.npy, magnitude.<out>.npy, alt.<out>.npy.
 * Reading validates everything and names the file and field of any error; writing is atomic
 * (a temporary directory renamed into place). */
#ifndef ACLCONFORM_CASEFILE_H
#define ACLCONFORM_CASEFILE_H

#include "case.h"
#include "util.h"

/* The golden values of one output, in row-major order of its view. */
typedef struct {
    char name[CF_NAME_LEN];
    int64_t n;
    double *r;      /* expected */
    double *lo;     /* expected_lo (NULL: 0) */
    double *m;      /* magnitude */
    double *alt;    /* alt (NULL: same as r) */
    double *err;    /* oracle error bound (NULL when read from a corpus: unknown) */
    uint8_t *masked; /* 1 = must be exactly +0.0 (NULL: none) */
} cf_expected_out;

typedef struct {
    int nout;
    cf_expected_out out[2];
} cf_expected;

void cf_expected_free(cf_expected *x);
/* Allocate r, m, alt, err (and lo when with_lo) for each output of c. */
cf_status cf_expected_alloc(cf_expected *x, const cf_case *c, bool with_lo, cf_err *e);

/* Read <dir>/case.json and its files.  x may be NULL (inputs only); a case that expects a
 * non-zero status has no expected outputs (x->nout = 0). */
cf_status cf_case_read(const char *dir, cf_case *c, cf_expected *x, cf_err *e);

/* The case id: 16 hex digits of SHA-256 over op, params, tensor descriptions and input bytes. */
void cf_case_id(const cf_case *c, char id[17]);

/* Write c (and x, when c expects success) as <corpus>/<op>/<id>/; the directory's path is
 * returned in path_out.  An existing case with the same id is left as it is. */
cf_status cf_case_write(const char *corpus, const cf_case *c, const cf_expected *x,
                        const char *tool, char *path_out, size_t path_len, cf_err *e);

/* Write c (inputs and manifest only) into an explicit directory (export). */
cf_status cf_case_write_dir(const char *dir, const cf_case *c, const cf_expected *x,
                            const char *tool, cf_err *e);

#endif
