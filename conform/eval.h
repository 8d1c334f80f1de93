/* Evaluation: the constraint files of a run, the tolerance of a case, the oracle's golden values
 * and the masking of a case, and the report key and description of its row.  Shared by every
 * command that scores; option parsing stays in cli.c. */
#ifndef ACLCONFORM_EVAL_H
#define ACLCONFORM_EVAL_H

#include "cli.h"

cf_status cf_load_constraints(const cf_opts *o, cz_constraints *cz[CF_OP_COUNT], cf_err *e);
cf_status cf_tolerance_for(cz_constraints *const *cz, const cf_case *c, const char *profile,
                           const char *variant, bool strict_zero, cf_tol *tol, cf_err *e);

/* The report description of the operator (its error plot, scaled_reason) from its constraints:
 * a row so described bins its elements for the plot. */
void cf_row_describe(cf_row *row, const cz_constraints *cz);

/* Compute the golden values of a valid case with the oracle (masked flags included). */
cf_status cf_oracle_expected(const cf_case *c, const char *profile, cf_expected *x, cf_err *e);
/* Fill masked flags of x from the case inputs (replay). */
cf_status cf_fill_masked(const cf_case *c, cf_expected *x, cf_err *e);

/* The report row key (output dtype, stream variant) of a stored case under `profile`. */
void cf_case_stream_key(cz_constraints *const *cz, const cf_case *c, const char *profile,
                        cf_dtype *dt, char variant[FZ_VARIANT_LEN]);

#endif
