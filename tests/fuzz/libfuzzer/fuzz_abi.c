/* libFuzzer harness: the ABI of impl/ driven from random tensor descriptors.  The input picks an
 * operator's small generated case (templates made once), then rewrites each tensor's
 * description from the bytes: present or NULL, dtype, rank, dims, strides, offset and storage
 * size (a view may or may not fit its storage).  The case runs on the built-in target through the
 * harness's guarded buffers (run.h).  Invariants — a violation traps:
 *   - nothing crashes, leaks or reads/writes out of bounds (the sanitizers);
 *   - the status is 0 or a documented aclnnStatus (ops.md: 161001, 161002, 361001, 561002);
 *   - no byte outside an output's view and no input byte changes (wrote_outside / modified_input);
 *   - status 0 only when every present tensor's view fits its storage (abi.md: aclCreateTensor
 *     returns NULL otherwise, and the operator sees NULL). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static cz_constraints *g_cz[CF_OP_COUNT];
static cf_target g_builtin;
/* small valid cases of every stream, generated once: an execution clones one and rewrites it */
#define MAX_TEMPLATES 1024
static cf_case g_tpl[MAX_TEMPLATES];
static int g_ntpl;

/* a byte reader that returns 0 past the end */
typedef struct {
    const uint8_t *p;
    size_t n, i;
} bytes;

static unsigned take(bytes *b) { return b->i < b->n ? b->p[b->i++] : 0u; }

static int init(void)
{
    cf_set_max_bytes(UINT64_C(64) << 20); /* a fuzzer process is not the machine */
    char dir[4096], err[512];
    snprintf(dir, sizeof dir, "%s", __FILE__); /* <root>/tests/fuzz/libfuzzer/fuzz_abi.c */
    for (int up = 0; up < 4; up++) {
        char *sl = strrchr(dir, '/');
        if (sl) *sl = '\0';
    }
    snprintf(dir + strlen(dir), sizeof dir - strlen(dir), "/constraints");
    if (cz_load_dir(dir, g_cz, err, sizeof err) != FZ_OK) __builtin_trap();
    cf_err e = {{0}};
    if (cf_target_load("builtin", &g_builtin, &e)) __builtin_trap();
    aclconformSetNumThreads(1);
    for (int op = 0; op < CF_OP_COUNT; op++) {
        fz_stream streams[64];
        int ns = fz_streams(g_cz[op], "spec", streams, 64);
        for (int i = 0; i < ns && i < 64; i++)
            for (int64_t k = 0; k < 48 && g_ntpl < MAX_TEMPLATES; k++) {
                cf_case c;
                if (fz_generate(g_cz[op], "spec", &streams[i], 0x5eed, k, &c) != FZ_OK) continue;
                int64_t n = 0;
                for (int t = 0; t < c.ntensors; t++) n += c.tensors[t].present ? cf_tensor_storage_numel(&c.tensors[t]) : 0;
                if (n <= 2048) g_tpl[g_ntpl++] = c; /* small: fast to run */
                else cf_case_free(&c);
            }
    }
    if (!g_ntpl) __builtin_trap();
    return 1;
}

/* Does the view of t fit its storage (every element's offset in [0, storage numel))? */
static bool view_fits(const cf_tensor *t)
{
    int64_t sn = cf_tensor_storage_numel(t), hi = t->offset;
    if (t->offset < 0 || sn < 0) return false;
    for (int k = 0; k < t->ndim; k++) {
        if (t->shape[k] < 0 || t->strides[k] < 0) return false;
        if (t->shape[k] == 0) return true; /* no elements */
        hi += (t->shape[k] - 1) * t->strides[k];
    }
    return hi < sn;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    if (!ready) ready = init();
    bytes b = {data, size, 0};
    unsigned pick = take(&b) | take(&b) << 8;
    cf_case c;
    if (!cf_case_clone(&c, &g_tpl[pick % (unsigned)g_ntpl])) abort();
    for (int i = 0; i < c.ntensors; i++) {
        cf_tensor *t = &c.tensors[i];
        unsigned how = take(&b);
        if (how % 4 != 0) continue; /* most tensors keep their valid description */
        if (how & 0x80) { /* NULL */
            t->present = false;
            continue;
        }
        if (how & 0x40) t->dtype = (cf_dtype)(take(&b) % CF_DTYPE_COUNT);
        t->ndim = (int)(take(&b) % 5);
        for (int k = 0; k < t->ndim; k++) {
            t->shape[k] = (int64_t)(take(&b) % 6);
            t->strides[k] = (int64_t)(take(&b) % 7) - (take(&b) % 16 == 0 ? 2 : 0);
        }
        t->offset = (int64_t)(take(&b) % 9) - (take(&b) % 16 == 0 ? 1 : 0);
        t->storage_ndim = 1;
        t->storage_shape[0] = (int64_t)(take(&b) % 64);
        if (!t->output) { /* the storage's bytes, from the input */
            size_t nb = (size_t)t->storage_shape[0] * cf_dtype_size(t->dtype);
            free(t->data);
            t->data = malloc(nb ? nb : 1);
            if (!t->data) abort();
            for (size_t k = 0; k < nb; k++) ((uint8_t *)t->data)[k] = (uint8_t)take(&b);
        }
    }
    bool all_fit = true;
    for (int i = 0; i < c.ntensors; i++)
        if (c.tensors[i].present) all_fit &= view_fits(&c.tensors[i]);
    cf_run_result r;
    cf_err e = {{0}};
    if (cf_run_here(&g_builtin, &c, &r, &e) == CFE_OK) {
        int32_t st = r.status;
        if (st != 0 && st != 161001 && st != 161002 && st != 361001 && st != 561002) __builtin_trap();
        if (r.modified_input) __builtin_trap();
        for (int k = 0; k < r.nout; k++)
            if (r.out[k].wrote_outside) __builtin_trap();
        if (st == 0 && !all_fit) __builtin_trap();
        cf_run_result_free(&r);
    }
    cf_case_free(&c);
    return 0;
}
