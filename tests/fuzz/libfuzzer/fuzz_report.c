/* libFuzzer harness: the report reader, merge and the md/html/csv publisher.  The input is one
 * report, or two separated by a NUL byte; they are written to a private temporary directory and
 * run through one of `merge A B -o M --partial` then `report M --format md`, `report A --format
 * html` or `report A --format csv` (the commands' own code, file I/O included), chosen by the
 * input's length mod 3, so that an input always takes the same path (a crash reproduces) and an
 * execution costs one command, not three.  Any input must end in exit 0, 1 or 2, never a crash
 * or a leak. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[256], pa[300], pb[300], pm[300], pr[300];

static void put(const char *path, const void *d, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (n && fwrite(d, 1, n, f) != n) abort();
    fclose(f);
}

static void cleanup(void) { cf_rmtree(dir); } /* the inputs, the outputs and the md figures (r/plots/) */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dir[0]) {
        const char *t = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/fuzz_report_%ld", t && t[0] ? t : "/tmp", (long)getpid());
        cf_err e = {{0}};
        if (cf_mkdirs(dir, &e)) abort();
        snprintf(pa, sizeof pa, "%s/a.json", dir);
        snprintf(pb, sizeof pb, "%s/b.json", dir);
        snprintf(pm, sizeof pm, "%s/m.json", dir);
        snprintf(pr, sizeof pr, "%s/r.out", dir);
        cf_set_max_bytes(UINT64_C(64) << 20);
        atexit(cleanup);
    }
    const uint8_t *nul = memchr(data, 0, size);
    size_t alen = nul ? (size_t)(nul - data) : size;
    int mode = (int)(size % 3);
    put(pa, data, alen);
    if (nul && mode == 0) put(pb, nul + 1, size - alen - 1);
    unlink(pm);
    cf_opts o;
    int rc;
    if (mode == 0) {
        const char *two[2] = {pa, nul ? pb : pa};
        memset(&o, 0, sizeof o);
        o.quiet = true;
        o.partial = true;
        o.npos = 2;
        o.pos = two;
        o.output = pm;
        rc = cmd_merge(&o);
        if (rc < 0 || rc > 3) __builtin_trap();
    }
    /* publish the input or, when merge wrote one, the merged report */
    const char *one[1] = {mode == 0 && access(pm, F_OK) == 0 ? pm : pa};
    static const char *fmts[3] = {"md", "html", "csv"};
    memset(&o, 0, sizeof o);
    o.quiet = true;
    o.npos = 1;
    o.pos = one;
    o.format = fmts[mode];
    o.output = pr;
    rc = cmd_report(&o);
    if (rc < 0 || rc > 3) __builtin_trap();
    return 0;
}
