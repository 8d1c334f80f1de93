/* Shrinking a failing case (cli.md `shrink`): reduce it to a smaller case that still fails the
 * same way — the same wrong status, or the same mismatch kind at some element. */
#ifndef ACLCONFORM_SHRINK_H
#define ACLCONFORM_SHRINK_H

#include "cli.h"

/* c fails on target with golden values x (NULL for a status failure).  On success (CFE_OK) out
 * holds the smaller case with origin.shrunk_from set; CFE_FAIL when nothing smaller still fails
 * the same way (out untouched); budget_s bounds the time spent. */
cf_status cf_shrink(const cf_target *target, const cf_case *c, const cf_expected *x,
                    const cf_opts *o, cz_constraints *const *cz, const char *variant,
                    cf_case *out, double budget_s);

#endif
