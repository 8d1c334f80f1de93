#include "target.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "adapters.h"
#include "cli.h"
#include "worker.h"

static cf_fnptr sym(void *h, const char *name)
{
    cf_fnptr f;
    void *p = dlsym(h, name);
    memcpy(&f, &p, sizeof f); /* POSIX: object pointer to function pointer */
    return f;
}

bool cf_file_sha256(const char *path, char hex[65])
{
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    cf_sha256 s;
    cf_sha256_init(&s);
    uint8_t buf[65536], d[32];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) cf_sha256_update(&s, buf, n);
    bool ok = !ferror(f);
    fclose(f);
    cf_sha256_final(&s, d);
    for (int i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", d[i]);
    return ok;
}

cf_status cf_target_open(const char *spec, cf_target *t, cf_err *e)
{
    if (strcmp(spec, "builtin") == 0) return cf_target_load(spec, t, e);
    memset(t, 0, sizeof *t);
    if (strlen(spec) >= sizeof t->name) return cf_fail(e, CFE_INPUT, "--target: path too long");
    snprintf(t->name, sizeof t->name, "%s", spec);
    if (!cf_is_file(spec)) return cf_fail(e, CFE_INPUT, "--target %s: no such file", spec);
    if (!cf_file_sha256(spec, t->sha256)) return cf_fail(e, CFE_INPUT, "--target %s: cannot read it", spec);
    t->isolate = true;
    cf_status st = cf_worker_probe(t, e);
    t->has_set_threads = !st && cf_worker_has_threads(); /* the worker applies a case's op_threads */
    return st;
}

cf_status cf_target_load(const char *spec, cf_target *t, cf_err *e)
{
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", spec);
    if (strcmp(spec, "builtin") == 0) {
        t->create_tensor = aclCreateTensor;
        t->create_scalar = aclCreateScalar;
        t->create_int_array = aclCreateIntArray;
        t->destroy_tensor = aclDestroyTensor;
        t->destroy_scalar = aclDestroyScalar;
        t->destroy_int_array = aclDestroyIntArray;
        t->destroy_executor = aclDestroyAclOpExecutor;
        t->set_threads = aclconformSetNumThreads;
        t->has_set_threads = true;
        for (int op = 0; op < CF_OP_COUNT; op++) {
            t->get_ws[op] = cf_adapters[op]->builtin_get_ws;
            t->exec[op] = cf_adapters[op]->builtin_exec;
        }
        return CFE_OK;
    }
    /* RTLD_DEEPBIND keeps the target's own aclCreateTensor from binding to the built-in one;
     * the sanitizer runtimes refuse it, so sanitizer builds load without it. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    int flags = RTLD_NOW | RTLD_LOCAL;
#else
    int flags = RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND;
#endif
    t->handle = dlopen(spec, flags);
    if (!t->handle) return cf_fail(e, CFE_INPUT, "--target %s: cannot load: %s", spec, dlerror());
#define NEED(field, name)                                                                          \
    do {                                                                                           \
        cf_fnptr f_ = sym(t->handle, name);                                                        \
        if (!f_) {                                                                                 \
            cf_target_close(t);                                                                    \
            return cf_fail(e, CFE_INPUT, "--target %s: missing symbol %s", spec, name);            \
        }                                                                                          \
        memcpy(&t->field, &f_, sizeof f_);                                                         \
    } while (0)
    NEED(create_tensor, "aclCreateTensor");
    NEED(create_scalar, "aclCreateScalar");
    NEED(create_int_array, "aclCreateIntArray");
    NEED(destroy_tensor, "aclDestroyTensor");
    NEED(destroy_scalar, "aclDestroyScalar");
    NEED(destroy_int_array, "aclDestroyIntArray");
    for (int op = 0; op < CF_OP_COUNT; op++) {
        char n[128];
        snprintf(n, sizeof n, "aclnn%sGetWorkspaceSize", cf_op_camel((cf_op)op));
        NEED(get_ws[op], n);
        snprintf(n, sizeof n, "aclnn%s", cf_op_camel((cf_op)op));
        NEED(exec[op], n);
    }
#undef NEED
    cf_fnptr d = sym(t->handle, "aclDestroyAclOpExecutor");
    memcpy(&t->destroy_executor, &d, sizeof d);
    cf_fnptr th = sym(t->handle, "aclconformSetNumThreads");
    memcpy(&t->set_threads, &th, sizeof th);
    t->has_set_threads = t->set_threads != NULL;
    static const char *const hooks[5] = {"aclconformDeviceAlloc", "aclconformDeviceFree", "aclconformCopyToDevice",
                                         "aclconformCopyToHost", "aclconformSync"};
    cf_fnptr h[5];
    int found = 0;
    for (int i = 0; i < 5; i++) found += (h[i] = sym(t->handle, hooks[i])) != NULL;
    if (found == 5) {
        memcpy(&t->dev_alloc, &h[0], sizeof h[0]);
        memcpy(&t->dev_free, &h[1], sizeof h[1]);
        memcpy(&t->copy_to_dev, &h[2], sizeof h[2]);
        memcpy(&t->copy_to_host, &h[3], sizeof h[3]);
        memcpy(&t->dev_sync, &h[4], sizeof h[4]);
    } else if (found) {
        for (int i = 0; i < 5; i++)
            if (!h[i]) {
                cf_target_close(t);
                return cf_fail(e, CFE_INPUT, "--target %s: has some device hooks but not %s", spec, hooks[i]);
            }
    }
    return CFE_OK;
}

void cf_target_close(cf_target *t)
{
    if (t->isolate) cf_worker_thread_release();
    if (t->handle) dlclose(t->handle);
    t->handle = NULL;
}

const cf_target *cf_target_cache_for(cf_target_cache *tc, const cf_opts *o, const cf_case *c, cf_err *e)
{
    const char *spec = o->target;
    if (!o->target_given && c->target_path[0]) spec = c->target_path;
    for (int i = 0; i < tc->n; i++)
        if (!strcmp(tc->spec[i], spec)) return &tc->t[i];
    if (tc->n == 16) {
        cf_fail(e, CFE_INPUT, "more than 16 different targets recorded in these cases: pass --target");
        return NULL;
    }
    /* A library that a case file names and the user did not is loaded only when it is the very
     * file the case was stored from: loading runs its constructors, so a case from elsewhere must
     * not choose what code runs here (issue 57).  The hash is checked before any worker starts. */
    if (spec == c->target_path && strcmp(spec, "builtin")) {
        char sha[65] = "";
        if (!cf_is_file(spec)) {
            cf_fail(e, CFE_INPUT, "the case records target %s, which does not exist here: pass --target LIB.so", spec);
            return NULL;
        }
        if (!c->target_sha256[0]) {
            cf_fail(e, CFE_INPUT, "the case records target %s without its SHA-256: not loaded (pass --target LIB.so to run "
                                  "it on a library you name)", spec);
            return NULL;
        }
        if (!cf_file_sha256(spec, sha) || strcmp(sha, c->target_sha256)) {
            cf_fail(e, CFE_INPUT, "%s is not the library the case was stored from (SHA-256 %.16s... recorded, %.16s... on disk): "
                                  "not loaded (pass --target LIB.so to run the case on a library you name)",
                    spec, c->target_sha256, sha[0] ? sha : "unreadable");
            return NULL;
        }
    }
    cf_target *t = &tc->t[tc->n];
    if (cf_target_open(spec, t, e)) return NULL;
    t->guard_pages = o->guard_pages && t->isolate;
    snprintf(tc->spec[tc->n], sizeof tc->spec[0], "%s", spec);
    return &tc->t[tc->n++];
}

void cf_target_cache_close(cf_target_cache *tc)
{
    for (int i = 0; i < tc->n; i++) cf_target_close(&tc->t[i]);
    tc->n = 0;
}
