/* Targets (spec abi.md): an implementation of the ten operator functions plus the meta-object
 * functions.  The suite talks to a target only through this table. */
#ifndef ACLCONFORM_TARGET_H
#define ACLCONFORM_TARGET_H

#include "aclnn/acl_meta.h"
#include "case.h"
#include "util.h"

typedef void (*cf_fnptr)(void);
typedef aclnnStatus (*cf_exec_fn)(void *, uint64_t, aclOpExecutor *, aclrtStream);

typedef struct {
    char name[256]; /* "builtin" or the library path */
    void *handle;   /* dlopen handle (NULL for builtin) */
    bool isolate;   /* run cases in worker processes (foreign targets; worker.h) */
    bool guard_pages; /* storages between PROT_NONE regions (--guard-pages, foreign targets) */
    char sha256[65];  /* of the library file (foreign targets), recorded in stored cases */
    bool one_thread;  /* workers start with OMP_NUM_THREADS=1 (--jobs > 1 runs cases in parallel
                       * instead; an OMP_NUM_THREADS the user set wins) */
    aclTensor *(*create_tensor)(const int64_t *, uint64_t, aclDataType, const int64_t *, int64_t,
                                aclFormat, const int64_t *, uint64_t, void *);
    aclScalar *(*create_scalar)(void *, aclDataType);
    aclIntArray *(*create_int_array)(const int64_t *, uint64_t);
    aclnnStatus (*destroy_tensor)(const aclTensor *);
    aclnnStatus (*destroy_scalar)(const aclScalar *);
    aclnnStatus (*destroy_int_array)(const aclIntArray *);
    aclnnStatus (*destroy_executor)(aclOpExecutor *); /* optional */
    /* optional device hooks (abi.md): all five present, or the target uses host memory */
    int (*dev_alloc)(void **ptr, size_t bytes);
    int (*dev_free)(void *ptr);
    int (*copy_to_dev)(void *dst, const void *src, size_t bytes);
    int (*copy_to_host)(void *dst, const void *src, size_t bytes);
    int (*dev_sync)(void *stream);
    /* optional: aclconformSetNumThreads(n) (0 = default); the sweep runs sampled cases at several
     * op thread counts and requires bit-identical outputs (ops.md: deterministic) */
    void (*set_threads)(int n);  /* in this process (builtin, or a worker's loaded library) */
    bool has_set_threads;        /* the target has the hook (for a foreign one: in its worker) */
    int default_threads; /* what set_threads is restored to after a case (0 = the default) */
    cf_fnptr get_ws[CF_OP_COUNT];                      /* aclnn<Op>GetWorkspaceSize */
    cf_exec_fn exec[CF_OP_COUNT];                      /* aclnn<Op> */
} cf_target;

/* "builtin" (linked in) or a path to a shared library exporting the ABI.  A library is never
 * loaded into this process: a worker loads it (a load error or missing symbol is reported here,
 * CFE_INPUT) and runs its cases. */
cf_status cf_target_open(const char *spec, cf_target *t, cf_err *e);
/* Load a library into this process (the worker's side of cf_target_open). */
cf_status cf_target_load(const char *spec, cf_target *t, cf_err *e);
/* SHA-256 of a file as 64 hex digits (false when it cannot be read). */
bool cf_file_sha256(const char *path, char hex[65]);
void cf_target_close(cf_target *t);

/* The target a case runs on (replay, shrink): --target when given, else the library the case
 * records (origin.target) — checked against its recorded SHA-256 — else builtin.  Opened targets
 * are kept in the cache for the command's lifetime (at most 16). */
typedef struct {
    int n;
    cf_target t[16];
    char spec[16][1024];
} cf_target_cache;
struct cf_opts;
const cf_target *cf_target_cache_for(cf_target_cache *tc, const struct cf_opts *o, const cf_case *c, cf_err *e);
void cf_target_cache_close(cf_target_cache *tc);

#endif
