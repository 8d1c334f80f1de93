#include "slurp.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

int cf_slurp(const char *path, size_t max_bytes, char **data, size_t *len)
{
    *data = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return errno ? errno : EIO;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    int rc = buf ? 0 : ENOMEM;
    while (!rc) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) break; /* end of file, or an error checked below */
        if (cap >= max_bytes) {
            rc = EFBIG;
            break;
        }
        char *nb = realloc(buf, 2 * cap + 1);
        if (!nb) {
            rc = ENOMEM;
            break;
        }
        buf = nb;
        cap *= 2;
    }
    if (!rc && ferror(f)) rc = EIO;
    fclose(f);
    if (rc) {
        free(buf);
        return rc;
    }
    buf[n] = '\0';
    *data = buf;
    *len = n;
    return 0;
}
