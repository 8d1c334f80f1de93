/* libFuzzer harness: the case.json reader (cf_case_parse).  The input is case.json text, then
 * optionally a NUL byte and the bytes every .npy of the case is read from (so the fuzzer reaches
 * the checks of a file's dtype and shape against the manifest).  Any input must end in CFE_OK or
 * CFE_INPUT naming the field, never a crash, a leak or a name that is not [A-Za-z0-9_]. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "casefile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct {
    const uint8_t *npy;
    size_t len;
    bool have;
} blob;

static cf_status load(void *ctx, const char *name, bool optional, npy_array *out, bool *found, char *path, size_t plen, cf_err *e)
{
    const blob *b = ctx;
    snprintf(path, plen, "fuzz/%s", name);
    *found = false;
    memset(out, 0, sizeof *out);
    if (!b->have) return optional ? CFE_OK : cf_fail(e, CFE_INPUT, "%s: cannot open: no such file", path);
    *found = true;
    return npy_parse(path, b->npy, b->len, out, e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int init;
    if (!init) {
        cf_set_max_bytes(UINT64_C(64) << 20);
        init = 1;
    }
    const uint8_t *nul = memchr(data, 0, size);
    size_t jlen = nul ? (size_t)(nul - data) : size;
    blob b = {nul ? nul + 1 : NULL, nul ? size - jlen - 1 : 0, nul != NULL};
    cf_npy_loader ld = {load, &b};
    cf_case c;
    cf_expected x;
    cf_err e = {{0}};
    cf_status st = cf_case_parse("fuzz/case.json", (const char *)data, jlen, &ld, &c, &x, &e);
    if (st == CFE_OK) {
        /* what was accepted is safe to use as file names and to hash */
        for (int i = 0; i < c.ntensors; i++)
            if (!cf_name_ok(c.tensors[i].name)) __builtin_trap();
        for (int i = 0; i < c.nparams; i++)
            if (!cf_name_ok(c.params[i].name)) __builtin_trap();
        char id[17];
        cf_case_id(&c, id);
        cf_case_free(&c);
        cf_expected_free(&x);
    } else if (!strstr(e.msg, "fuzz/")) {
        __builtin_trap(); /* every error names the file */
    }
    return 0;
}
