/* Read a whole file into memory: the one file reader of the harness components. */
#ifndef ACLCONFORM_SLURP_H
#define ACLCONFORM_SLURP_H

#include <stddef.h>

/* Reads path into a new NUL-terminated buffer (*len excludes the NUL; caller frees *data).
 * Returns 0, or an errno value: the fopen error, ENOMEM, EFBIG (larger than max_bytes), EIO. */
int cf_slurp(const char *path, size_t max_bytes, char **data, size_t *len);

#endif
