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

typedef struct cf_opts {
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

bool cf_stderr_is_tty(void);

#endif
