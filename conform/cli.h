/* Shared machinery of the aclnn-conform commands: options (cli.md), constraint loading, the
 * evaluation of one case (target + oracle + score), and report files. */
#ifndef ACLCONFORM_CLI_H
#define ACLCONFORM_CLI_H

#include <stdio.h>

#include "casefile.h"
#include "fuzz.h"
#include "run.h"
#include "stats.h"
#include "target.h"

#define CF_TOOL_NAME "aclnn-conform"
#define CF_TOOL_VERSION "0.1.0"

typedef struct {
    bool op_on[CF_OP_COUNT];
    bool dtype_on[CF_DTYPE_COUNT];
    bool dtype_given;    /* --dtype was on the command line */
    uint64_t seed;
    bool seed_given;
    int64_t cases;       /* per stream; 0 = use the time budget */
    double time_s;       /* budget (sweep) */
    int64_t invalid_cases; /* per invalid-input rule */
    char target[1024];
    char profile[16];
    int shard_k, shard_n;
    int jobs;
    char out_dir[1024];
    char corpus[1024];
    char constraints[1024];
    bool exhaustive, exhaustive_f32;
    bool quiet, json, strict_zero, no_shrink, no_store, keep_worst;
    bool partial;        /* merge: missing shards allowed */
    bool target_given, corpus_given, out_given;
    int max_fail_lines;  /* sweep: FAIL lines shown per (op, dtype, variant, kind) group */
    bool all_lines;      /* sweep --all: every FAIL line */
    bool guard_pages;    /* foreign targets: storages between PROT_NONE regions */
    const char *junit;   /* sweep --junit FILE */
    bool help;           /* --help / -h was given */
    bool coverage;       /* sweep --coverage: print the structural bins */
    uint64_t max_bytes;  /* --max-bytes (0 = cf_max_bytes() default) */
    double timeout_s;    /* per case, foreign targets */
    int64_t max_elements; /* export: skip cases with more elements in all tensors (0 = no limit) */
    const char *format;  /* report --format */
    const char *output;  /* merge -o / report -o */
    int npos;
    const char **pos;    /* positional arguments */
} cf_opts;

/* Parse argv[first..] of command cmd into o (glibc getopt_long; options may follow positionals).
 * Unknown, malformed, out-of-range or other-command flags and a wrong number of positionals:
 * a message naming the flag (with a did-you-mean for near misses), CFE_INPUT. */
cf_status cf_parse_opts(const char *cmd, int argc, char **argv, int first, cf_opts *o, cf_err *e);
/* `aclnn-conform CMD --help`: exactly that command's options, each explained. */
void cf_print_command_help(FILE *f, const char *cmd);
bool cf_is_command(const char *cmd);
const char *cf_command_did_you_mean(const char *s);
/* The nearest of cands to s when near enough to be a typo, else NULL. */
const char *cf_did_you_mean(const char *s, const char *const *cands, int n);
void cf_opts_free(cf_opts *o);

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

/* Write the report atomically. */
cf_status cf_write_report(const char *path, cJSON *report, cf_err *e);
cJSON *cf_report_new(const char *command, const cf_opts *o, double seconds, int64_t cases,
                     const char *started);
void cf_print_summary(FILE *f, cf_row *const *rows, int nrows);

bool cf_stderr_is_tty(void);

#endif
