/* Targets for the harness's own tests: libaclnn_impl.so with a few ABI functions replaced.
 * Each variant defines only the functions it changes.  It is linked against libaclnn_impl.so, so
 * every other symbol the harness looks up resolves to the implementation (dlsym on a library
 * searches its dependencies too), and a replaced function reaches the real one through
 * dlsym(RTLD_NEXT).  A new operator needs no edit here.  Built three times:
 *   PLANT_DEFECTS (libwrong_target.so): defects the sweep must find, store and replay —
 *     - LogitGrad flips the last bit of the first output element (a 1-ULP error);
 *     - SoftplusBackward answers a NULL beta with 161002 instead of 161001 (a wrong status);
 *     - NsaCompressGrad flips bit 3 of the first inputGradOut element (an 8-ULP error).
 *   DEVICE_HOOKS (libdevice_target.so): exports abi.md's optional device hooks, with "device"
 *     memory that is a separate allocation the harness must copy to and from.
 *   ROGUE (librogue_target.so): GeluBackwardV2 misbehaves as the environment variable
 *     ROGUE_MODE says — "oob" writes the byte before its output's first element, "modify"
 *     changes its input self, "crash" raises SIGSEGV, "hang" never returns, "print" writes to
 *     stdout and stderr (and is otherwise right), "ws" plans a 64-byte workspace and never checks
 *     it, "ws_ok" plans one and checks it (ops.md protocol), "threads" changes the last bit of its
 *     first output element when run with more than one op thread, "ws_over4" / "ws_over256" write
 *     4 / 256 bytes past the 64-byte workspace it plans, "far" writes 8 KiB before its output,
 *     "sentinel" corrupts its output unless the byte after the output's storage is 0xA5, "fork"
 *     leaves a child process running for a minute, "threads_crash" crashes when run with more
 *     than one op thread, "hog" allocates 6 GiB (and aborts when an allocation fails), "late" leaves
 *     a thread that changes its output 20 ms after the call returned; the other operators are right. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_NEXT */
#endif
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aclnnop/aclnn_gelu_backward_v2.h"
#include "aclnnop/aclnn_logit_grad.h"
#include "aclnnop/aclnn_nsa_compress_grad.h"
#include "aclnnop/aclnn_scaled_masked_softmax_backward.h"
#include "aclnnop/aclnn_softplus_backward.h"

#if defined(PLANT_DEFECTS) || defined(ROGUE)
/* The implementation's definition of `name` (the next one after this library's). */
static void *real(const char *name) { return dlsym(RTLD_NEXT, name); }

/* Remember where each tensor's first view element lives, to corrupt an output or an input. */
typedef struct { const aclTensor *t; char *first; size_t esize; char *end; } rec_t;
static rec_t recs[4096];
static int nrecs;

static size_t esize_of(aclDataType dt) { return dt == ACL_FLOAT ? 4 : (dt == ACL_FLOAT16 || dt == ACL_BF16) ? 2 : 0; }

aclTensor *aclCreateTensor(const int64_t *viewDims, uint64_t viewDimsNum, aclDataType dataType,
                           const int64_t *stride, int64_t offset, aclFormat format,
                           const int64_t *storageDims, uint64_t storageDimsNum, void *tensorData)
{
    aclTensor *(*f)(const int64_t *, uint64_t, aclDataType, const int64_t *, int64_t, aclFormat,
                    const int64_t *, uint64_t, void *);
    void *p = real("aclCreateTensor");
    memcpy(&f, &p, sizeof f);
    aclTensor *t = f(viewDims, viewDimsNum, dataType, stride, offset, format, storageDims, storageDimsNum, tensorData);
    int64_t sn = 1;
    for (uint64_t k = 0; storageDims && k < storageDimsNum; k++) sn *= storageDims[k];
    if (t && tensorData && nrecs < 4096)
        recs[nrecs++] = (rec_t){t, (char *)tensorData + offset * (int64_t)esize_of(dataType), esize_of(dataType),
                                (char *)tensorData + sn * (int64_t)esize_of(dataType)};
    return t;
}

aclnnStatus aclDestroyTensor(const aclTensor *t)
{
    for (int i = 0; i < nrecs; i++)
        if (recs[i].t == t) recs[i] = recs[--nrecs];
    aclnnStatus (*f)(const aclTensor *);
    void *p = real("aclDestroyTensor");
    memcpy(&f, &p, sizeof f);
    return f(t);
}

static char *first_of(const aclTensor *t)
{
    for (int i = 0; i < nrecs; i++)
        if (recs[i].t == t && recs[i].esize) return recs[i].first;
    return NULL;
}

/* the byte after t's storage */
static inline char *end_of(const aclTensor *t)
{
    for (int i = 0; i < nrecs; i++)
        if (recs[i].t == t && recs[i].esize) return recs[i].end;
    return NULL;
}
#endif

#ifdef PLANT_DEFECTS
/* Run the real execute `name`, then xor `bits` into the first element of out. */
static aclnnStatus run_then_flip(const char *name, const aclTensor *out, unsigned char bits, void *ws, uint64_t n,
                                 aclOpExecutor *e, aclrtStream s)
{
    aclnnStatus (*f)(void *, uint64_t, aclOpExecutor *, aclrtStream);
    void *p = real(name);
    memcpy(&f, &p, sizeof f);
    aclnnStatus st = f(ws, n, e, s);
    char *o = st == 0 ? first_of(out) : NULL;
    if (o) o[0] ^= (char)bits;
    return st;
}

static const aclTensor *nsa_out;

aclnnStatus aclnnNsaCompressGradGetWorkspaceSize(const aclTensor *a, const aclTensor *b, const aclTensor *c,
                                                 const aclIntArray *d, int64_t l, int64_t st, int64_t ty, char *lay,
                                                 const aclTensor *ig, const aclTensor *wg, uint64_t *w, aclOpExecutor **e)
{
    nsa_out = ig;
    aclnnStatus (*f)(const aclTensor *, const aclTensor *, const aclTensor *, const aclIntArray *, int64_t, int64_t,
                     int64_t, char *, const aclTensor *, const aclTensor *, uint64_t *, aclOpExecutor **);
    void *p = real("aclnnNsaCompressGradGetWorkspaceSize");
    memcpy(&f, &p, sizeof f);
    return f(a, b, c, d, l, st, ty, lay, ig, wg, w, e);
}

aclnnStatus aclnnNsaCompressGrad(void *ws, uint64_t n, aclOpExecutor *e, aclrtStream s)
{
    return run_then_flip("aclnnNsaCompressGrad", nsa_out, 8, ws, n, e, s); /* bit 3: 8 ULP */
}

aclnnStatus aclnnSoftplusBackwardGetWorkspaceSize(const aclTensor *g, const aclTensor *x, const aclScalar *beta,
                                                  const aclScalar *th, aclTensor *o, uint64_t *w, aclOpExecutor **e)
{
    if (!beta && g && x && th && o && w && e) return 161002; /* defect: should be 161001 */
    aclnnStatus (*f)(const aclTensor *, const aclTensor *, const aclScalar *, const aclScalar *, aclTensor *, uint64_t *, aclOpExecutor **);
    void *p = real("aclnnSoftplusBackwardGetWorkspaceSize");
    memcpy(&f, &p, sizeof f);
    return f(g, x, beta, th, o, w, e);
}

static const aclTensor *logit_out;

aclnnStatus aclnnLogitGradGetWorkspaceSize(const aclTensor *x, const aclTensor *dy, double eps, const aclTensor *out,
                                           uint64_t *w, aclOpExecutor **e)
{
    logit_out = out;
    aclnnStatus (*f)(const aclTensor *, const aclTensor *, double, const aclTensor *, uint64_t *, aclOpExecutor **);
    void *p = real("aclnnLogitGradGetWorkspaceSize");
    memcpy(&f, &p, sizeof f);
    return f(x, dy, eps, out, w, e);
}

aclnnStatus aclnnLogitGrad(void *ws, uint64_t n, aclOpExecutor *e, aclrtStream s)
{
    return run_then_flip("aclnnLogitGrad", logit_out, 1, ws, n, e, s); /* the last bit: 1 ULP */
}
#endif

#ifdef ROGUE
static const aclTensor *gelu_out, *gelu_self;

aclnnStatus aclnnGeluBackwardV2GetWorkspaceSize(const aclTensor *g, const aclTensor *x, char *ap, aclTensor *o, uint64_t *w,
                                                aclOpExecutor **e)
{
    gelu_out = o;
    gelu_self = x;
    aclnnStatus (*f)(const aclTensor *, const aclTensor *, char *, aclTensor *, uint64_t *, aclOpExecutor **);
    void *p = real("aclnnGeluBackwardV2GetWorkspaceSize");
    memcpy(&f, &p, sizeof f);
    aclnnStatus st = f(g, x, ap, o, w, e);
    const char *mode = getenv("ROGUE_MODE");
    if (st == 0 && w && mode && !strncmp(mode, "ws", 2)) *w = 64; /* plans a workspace */
    return st;
}

static int rogue_threads;

/* "late": a thread the call leaves behind flips the output's first byte 20 ms after it returned */
static void *late_writer(void *p)
{
    usleep(20000);
    *(volatile char *)p ^= 0x01;
    return NULL;
}

/* ROGUE_RESTART_HANG=FILE: the first load creates FILE, every later one (a worker restarted after
 * a crash) hangs in this constructor (issue 57: the sweep stalled past --time and --timeout) */
__attribute__((constructor)) static void rogue_ctor(void)
{
    const char *f = getenv("ROGUE_RESTART_HANG");
    if (!f) return;
    if (access(f, F_OK) == 0)
        for (;;) pause();
    FILE *m = fopen(f, "w");
    if (m) fclose(m);
}

/* the optional thread-count hook: forwarded, and remembered for the "threads" defect */
void aclconformSetNumThreads(int n)
{
    void (*f)(int);
    void *p = real("aclconformSetNumThreads");
    memcpy(&f, &p, sizeof f);
    if (f) f(n);
    rogue_threads = n;
}

aclnnStatus aclnnGeluBackwardV2(void *ws, uint64_t n, aclOpExecutor *e, aclrtStream s)
{
    const char *mode = getenv("ROGUE_MODE");
    mode = mode ? mode : "";
    aclnnStatus (*f)(void *, uint64_t, aclOpExecutor *, aclrtStream);
    void *p = real("aclnnGeluBackwardV2");
    memcpy(&f, &p, sizeof f);
    /* "ws_ok" checks the workspace it planned like ops.md says (161002, executor kept); "ws"
     * plans one and never checks it */
    if (!strcmp(mode, "ws_ok") && e && (n < 64 || !ws)) return 161002;
    aclnnStatus st = f(ws, n, e, s);
    char *o = first_of(gelu_out), *x = first_of(gelu_self);
    if (!strcmp(mode, "oob") && o) o[-1] ^= 0x5a;
    if (!strcmp(mode, "threads") && o && rogue_threads > 1) o[0] ^= 0x01; /* a chunking defect */
    if (!strcmp(mode, "modify") && x) x[0] ^= 0x01;
    /* issue 57: past the planned workspace by 4 and by 256 bytes; 8 KiB before the output (past
     * the 4 KiB zone); and a target that behaves only when the byte after its output's storage is
     * the fixed sentinel the harness used to fill it with */
    if (!strcmp(mode, "ws_over4") && ws && n == 64) memset((char *)ws + 64, 0x11, 4);
    if (!strcmp(mode, "ws_over256") && ws && n == 64) memset((char *)ws + 64, 0x11, 256);
    if (!strcmp(mode, "far") && o) o[-8192] ^= 0x5a;
    if (!strcmp(mode, "late") && o) {
        pthread_t th;
        if (pthread_create(&th, NULL, late_writer, o) == 0) pthread_detach(th);
    }
    if (!strcmp(mode, "fork") && fork() == 0) { /* a child left running (and otherwise right) */
        sleep(60);
        _exit(0);
    }
    if (!strcmp(mode, "sentinel") && o && end_of(gelu_out) && *end_of(gelu_out) != (char)0xA5) o[0] ^= 0x01;
    if (!strcmp(mode, "crash")) raise(SIGSEGV);
    if (!strcmp(mode, "threads_crash") && rogue_threads > 1) raise(SIGSEGV); /* only in a thread check */
    if (!strcmp(mode, "hog")) /* 6 GiB touched, 64 MiB at a time: past the worker's limit, or done */
        for (int k = 0; k < 96; k++) {
            char *h = malloc((size_t)64 << 20);
            if (!h) abort();
            memset(h, k, (size_t)64 << 20);
        }
    if (!strcmp(mode, "hang"))
        for (;;) pause();
    if (!strcmp(mode, "print")) {
        printf("hello from the target on stdout\n");
        fprintf(stderr, "and on stderr\n");
        fflush(stdout);
    }
    return st;
}
#endif

#ifdef DEVICE_HOOKS
/* "Device" memory: a separate heap block behind a header, so host pointers are never valid device
 * pointers; the counters let a test see that the copies happened. */
static long copies_in, copies_out;
int aclconformDeviceAlloc(void **ptr, size_t bytes)
{
    *ptr = malloc(bytes ? bytes : 1);
    return *ptr ? 0 : 1;
}
int aclconformDeviceFree(void *ptr)
{
    free(ptr);
    return 0;
}
int aclconformCopyToDevice(void *dst, const void *src, size_t n)
{
    memcpy(dst, src, n);
    copies_in++;
    return 0;
}
int aclconformCopyToHost(void *dst, const void *src, size_t n)
{
    memcpy(dst, src, n);
    copies_out++;
    return 0;
}
int aclconformSync(void *stream)
{
    (void)stream;
    return copies_in > 0 ? 0 : 1; /* a run that copied nothing in is a harness bug */
}
#endif
