/* Report rows (spec numerics.md §6, formats.md): statistics per (operator, output dtype,
 * variant), mergeable across shards — counts, maxima with their worst element, histograms
 * exactly; sums in merge order — and the invalid-input status table. */
#ifndef ACLCONFORM_STATS_H
#define ACLCONFORM_STATS_H

#include <cjson/cJSON.h>
#include <stdint.h>

#include "case.h"
#include "casefile.h"
#include "fuzz.h"
#include "run.h"
#include "ulp.h"

#define CF_HIST_BINS 8
extern const double cf_hist_edges[CF_HIST_BINS];
#define CF_MAX_FAILED_IDS 64

/* Where the error lives (report "error_plot"): ULP error binned against the plot variable of
 * each element — an input (x of Gelu/LogitGrad), an input times a scalar attribute (β·x of
 * Softplus) or, for reductions, the cancellation ratio m/|exact|.  x bins: quarter octaves of
 * |v| in [2^-12, 2^12) per sign, with bins for |v| < 2^-12 (zero included), |v| >= 2^12, ±inf
 * and NaN; y bins: ulp <= 2^-10, one per octave up to 2^20, >= 2^20 finite, infinite (a
 * special-value mismatch).  Counts only, so shards merge exactly. */
#define CF_PLOT_OCT 12                        /* |v| in [2^-OCT, 2^OCT) is binned by quarter octave */
#define CF_PLOT_SIDE (8 * CF_PLOT_OCT)        /* quarter-octave bins per sign */
#define CF_PLOT_X (2 * CF_PLOT_SIDE + 6)      /* -inf, <-2^OCT, neg, tiny, pos, >=2^OCT, +inf, nan */
#define CF_PLOT_Y 33
/* The row's description: the operator's "report" block of its constraint file (fuzz.h cz_report:
 * plot axis x / scale / label, marks, scaled_reason), copied into the row so that a report JSON
 * carries it and publishing needs no constraint file. */
#define CF_MAX_MARKS CZ_MAX_MARKS
typedef cz_report cf_plot_spec;
int cf_plot_xbin(double v);
int cf_plot_ybin(double ulp);
/* Lower and upper value of x bin i (the symmetric-log axis); ±inf / NaN bins give ±inf / NaN. */
void cf_plot_xrange(int i, double *lo, double *hi);

/* A failing case that represents its row: per failure kind, the smallest case (fewest output
 * elements, then smallest case index: the one a reader reads first) and the one with the largest
 * finite error. */
#define CF_EX_KINDS (CF_MM_COUNT + 4) /* the mismatch kinds, then status, crash, timeout, error */
typedef struct {
    bool used;
    int64_t case_index;
    int64_t elements; /* output elements of the case */
    double ulp;      /* largest finite ULP error among the case's failing elements (NaN: none) */
    char case_ref[160];
    char line[640];  /* the case's first FAIL line */
} cf_example;

/* The worst element of a row by one ordering (see cf_row). */
typedef struct {
    bool has;
    double ulp;
    int64_t case_index, element;
    char case_ref[160];
    char index[96];   /* "[0,3,5]" */
    char inputs[256]; /* JSON object text {"x":"0x3c00",...} */
    char got[24];
    double expected;
} cf_worst;

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
    cf_worst worst;
    int nfailed_ids;
    char (*failed_ids)[160]; /* CF_MAX_FAILED_IDS slots, allocated by the first id (owned, as plot) */
    /* the largest finite error (a representative element when max_ulp is an overflow edge) */
    cf_worst worst_finite;
    /* msprobe-comparable metrics over elements with a finite exact value (formats: README
     * "Reading a report"): sums for the cosine similarity (f64 values scaled by 2^-600 first),
     * the largest absolute and relative errors, and the counts within 1e-3 / 5e-3 relative error */
    int64_t ms_n, ms_nonfinite_got, ms_within_1e3, ms_within_5e3;
    double ms_dot, ms_gg, ms_ee, ms_max_abs, ms_max_rel;
    /* [kind][0: smallest case, 1: largest finite error]: CF_EX_KINDS pairs, allocated by the
     * first example (NULL: none; owned, as plot) */
    cf_example (*examples)[2];
    cf_plot_spec plot_spec;
    bool has_plot;
    /* counts per [x bin][y bin], allocated by the first count (NULL: all zero).  The row owns it
     * (and failed_ids and examples: a row is ~2 KB, the lazily allocated parts ~60 KB):
     * cf_row_free releases them, and a row copied by value hands them to the copy (then only one
     * of the two may be freed or merged into). */
    int64_t (*plot)[CF_PLOT_Y];
} cf_row;

typedef struct {
    char op[40];
    char rule[48];
    int32_t expected;
    int64_t cases, mismatches;
    int64_t not_applicable; /* protocol checks that did not apply (planned workspace 0) */
    char example[160];
} cf_status_row;

/* row must hold no plot, ids or examples (fresh, zeroed or freed). */
void cf_row_init(cf_row *row, const char *op, cf_dtype dt, const char *variant, const cf_tol *tol);
/* Add n to plot cell (x, y); false when its grid cannot be allocated (the count is dropped). */
bool cf_row_plot_add(cf_row *row, int x, int y, int64_t n);
/* Release the row's plot, failed ids and examples (the row stays valid, with none of them). */
void cf_row_free(cf_row *row);
/* cf_row_free on rows[0..n), then free(rows). */
void cf_rows_free(cf_row *rows, int n);
/* Merge src into dst (same key): exact for counts, maxima and histograms.  src keeps its plot. */
void cf_row_merge(cf_row *dst, const cf_row *src);
void cf_row_add_failed(cf_row *row, const char *case_ref);
/* Record a failing case (its verdict, stored path and case index) as a candidate example. */
void cf_row_add_example(cf_row *row, const char *kind, int64_t case_index, int64_t elements, double ulp,
                        const char *case_ref, const char *line);
int cf_example_kind(const char *kind);          /* index into examples, -1 when unknown */
const char *cf_example_kind_name(int kind);
/* The cosine similarity of got and exact over the row (NaN when one side is all zero). */
double cf_row_cosine(const cf_row *row);
/* Derived values for publishing. */
double cf_row_mean_ulp(const cf_row *row);
double cf_row_p99_ulp(const cf_row *row); /* upper edge of the bin holding the 99th percentile */
bool cf_row_single_bm(const cf_row *row, double *mere, double *mare);
const char *cf_row_verdict(const cf_row *row);

cJSON *cf_row_to_json(const cf_row *row);
/* row must be all zero (calloc): the parts absent from j stay untouched. */
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
    double max_ulp;          /* largest finite ULP error of a failing element (NaN: none) */
    int64_t elements;        /* output elements of the case */
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
