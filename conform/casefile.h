/* Corpus cases on disk (spec formats.md): <corpus>/<op>/<id>/case.json + <tensor>.npy +
 * expected.<out>.npy, expected_lo.<out>.npy, magnitude.<out>.npy, alt.<out>.npy.
 * Reading validates everything and names the file and field of any error; writing is atomic
 * (a temporary directory renamed into place). */
#ifndef ACLCONFORM_CASEFILE_H
#define ACLCONFORM_CASEFILE_H

#include "case.h"
#include "npy.h"
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
 * non-zero status has no expected outputs (x->nout = 0).  Every field is checked (integers in
 * range, unknown fields refused, tensor and param names exactly the operator's, views inside
 * their storage, allocations within cf_max_bytes()); case.json and every .npy must be regular
 * files resolving inside dir. */
cf_status cf_case_read(const char *dir, cf_case *c, cf_expected *x, cf_err *e);

/* Where cf_case_parse gets the case's .npy files: load(ctx, "self.npy", optional, out, &found,
 * path, plen, e) reads one (path: its name for messages); an optional file that does not exist
 * is found = false and CFE_OK. */
typedef struct {
    cf_status (*load)(void *ctx, const char *name, bool optional, npy_array *out, bool *found, char *path,
                      size_t plen, cf_err *e);
    void *ctx;
} cf_npy_loader;

/* The reader over case.json text in memory (file names it in messages); ld NULL: manifest only
 * (no tensor data, no expected values). */
cf_status cf_case_parse(const char *file, const char *text, size_t len, const cf_npy_loader *ld, cf_case *c,
                        cf_expected *x, cf_err *e);

/* The operators' tensor and param names the reader checks against: the constraints a command
 * loaded (cz[CF_OP_COUNT], kept alive by the caller; NULL: load the default constraints/ once). */
struct cz_constraints;
void cf_case_use_constraints(struct cz_constraints *const *cz);

/* The case id: 16 hex digits of SHA-256 over op, params, tensor descriptions and input bytes. */
void cf_case_id(const cf_case *c, char id[17]);

/* Write c (and x, when c expects success) as <corpus>/<op>/<id>/; the directory's path is
 * returned in path_out.  An existing case with the same id is left as it is. */
cf_status cf_case_write(const char *corpus, const cf_case *c, const cf_expected *x,
                        const char *tool, char *path_out, size_t path_len, cf_err *e);

/* Write c (inputs and manifest only) into an explicit directory (export). */
cf_status cf_case_write_dir(const char *dir, const cf_case *c, const cf_expected *x,
                            const char *tool, cf_err *e);

/* Collect the case directories under path (a case dir, an op dir, or a corpus root), sorted. */
cf_status cf_collect_cases(const char *path, char ***dirs, int *n, cf_err *e);

#endif
