/* Report rows (spec numerics.md §6, formats.md): statistics per (operator, output dtype,
 * variant), mergeable across shards — counts, maxima with their worst element, histograms
 * exactly; sums in merge order — and the invalid-input status table. */
#ifndef ACLCONFORM_STATS_H
#define ACLCONFORM_STATS_H

#include <cjson/cJSON.h>
#include <stdint.h>

#include "case.h"
#include "casefile.h"
#include "run.h"
#include "ulp.h"

#define CF_HIST_BINS 8
extern const double cf_hist_edges[CF_HIST_BINS];
#define CF_MAX_FAILED_IDS 64

typedef struct {
    char op[40];
    cf_dtype dtype;
    char variant[48];
    cf_tol tol;
    int64_t cases, failed_cases, elements, scored, uncertain, failed_elements, signed_zero;
    double max_ulp, sum_ulp, max_scaled_ulp;
    int64_t hist[CF_HIST_BINS];
    int64_t mismatches[CF_MM_COUNT];
    int64_t rel_over;   /* elements over the "double-thousandth" threshold */
    double sum_rel, max_rel;
    /* worst element (largest ulp_err; ties: smallest (case index, element)) */
    bool has_worst;
    int64_t worst_case_index, worst_element;
    char worst_case[160];
    char worst_index[96];  /* "[0,3,5]" */
    char worst_inputs[256]; /* JSON object text {"x":"0x3c00",...} */
    char worst_got[24];
    double worst_expected;
    int nfailed_ids;
    char failed_ids[CF_MAX_FAILED_IDS][160];
} cf_row;

typedef struct {
    char op[40];
    char rule[48];
    int32_t expected;
    int64_t cases, mismatches;
    int64_t not_applicable; /* protocol checks that did not apply (planned workspace 0) */
    char example[160];
} cf_status_row;

void cf_row_init(cf_row *row, const char *op, cf_dtype dt, const char *variant, const cf_tol *tol);
/* Merge src into dst (same key): exact for counts, maxima and histograms. */
void cf_row_merge(cf_row *dst, const cf_row *src);
void cf_row_add_failed(cf_row *row, const char *case_ref);
/* Derived values for publishing. */
double cf_row_mean_ulp(const cf_row *row);
double cf_row_p99_ulp(const cf_row *row); /* upper edge of the bin holding the 99th percentile */
bool cf_row_single_bm(const cf_row *row, double *mere, double *mare);
const char *cf_row_verdict(const cf_row *row);

cJSON *cf_row_to_json(const cf_row *row);
cf_status cf_row_from_json(const cJSON *j, const char *file, int index, cf_row *row, cf_err *e);

/* A failing element, as one pasteable line (replay prints these):
 *   FAIL <op> <out dtype> [<name>=<value>,...] <case> <output>[i,j] <input>=<dtype>:<value> (<bits>)...
 *        got <dtype>:<value> (<bits>) expected <value> ulp <u> scaled <s> <kind> tol <t>/<ts>
 * Status, crash, timeout and guard-zone failures are lines of the same head. */
typedef void (*cf_fail_cb)(void *ctx, const char *line);

typedef struct {
    bool pass;
    bool status_ok;
    int64_t failed_elements;
    cf_mismatch first_kind;  /* kind of the first failing element (CF_MM_COUNT: none) */
    char kind[32];           /* the failure's group key: a mismatch kind, "status", "crash",
                              * "timeout" or "error" ("" when passing) */
    char first_failure[768]; /* the first failure's line ("FAIL <op> <dtype> <variant> <case> ...") */
} cf_case_verdict;

/* Score one executed case into row (valid cases) — the pass rule of numerics.md §4.  x holds
 * the golden values (from the oracle or the corpus); case_ref names the case in lines. */
void cf_score_case(const cf_case *c, const cf_expected *x, const cf_run_result *r,
                   const cf_tol *tol, int64_t case_index, const char *case_ref, cf_row *row,
                   cf_case_verdict *v, cf_fail_cb cb, void *ctx, int max_lines);

/* The report row key of a case: (op, output dtype, variant) — variant strings come from the
 * constraint streams ("name=value" of a string param) and are matched against the case. */
/* The dtype of the case's first present output (false when it has none). */
bool cf_case_out_dtype(const cf_case *c, cf_dtype *dt);
/* "<op> <out dtype> <variant>": the head of the case's FAIL lines, and the key of its group. */
void cf_case_key(const cf_case *c, char *buf, size_t n);

/* "name=value,..." of the case's string parameters (the stream variant; "-" when none). */
void cf_case_variant_text(const cf_case *c, char *buf, size_t n);

void cf_case_row_key(const cf_case *c, const char *const *variants, int nvariants,
                     cf_dtype *dt, const char **variant);

#endif
