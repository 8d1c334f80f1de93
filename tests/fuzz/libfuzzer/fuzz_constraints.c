/* libFuzzer harness: the constraint loader (cz_load) on arbitrary file contents.  Any input must
 * end in FZ_OK or an error with a message naming the file and the field, never a crash, a leak
 * or an out-of-bounds access; a file that loads must answer the generator's queries (streams,
 * tolerances, rules) without failing. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[4096];
    if (!path[0]) {
        const char *tmp = getenv("TMPDIR");
        snprintf(path, sizeof path, "%s/aclnn-conform-fuzz-constraints-%ld.json", tmp && *tmp ? tmp : "/tmp", (long)getpid());
    }
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    if (size && fwrite(data, 1, size, f) != size) {
        fclose(f);
        return 0;
    }
    fclose(f);
    cz_constraints *cz = NULL;
    char err[512] = "";
    fz_status st = cz_load(path, &cz, err, sizeof err);
    if (st == FZ_OK) {
        if (!cz) __builtin_trap();
        for (int p = 0; p < cz_profile_count(cz); p++) {
            const char *prof = cz_profile_name(cz, p);
            fz_stream s[64];
            int n = fz_streams(cz, prof, s, 64);
            for (int i = 0; i < n && i < 64; i++) {
                double a = 0, b = 0;
                cz_tolerance(cz, prof, s[i].dtype, s[i].variant, &a, &b);
            }
            for (int i = 0; i < fz_rule_count(cz, prof); i++)
                if (!fz_rule_name(cz, prof, i)) __builtin_trap();
        }
        cz_free(cz);
    } else if (!err[0]) {
        __builtin_trap(); /* every error says what is wrong */
    }
    unlink(path);
    return 0;
}
