/* Report-level commands: publish (md/html), merge shards, export cases / score outputs of an
 * out-of-process target. */
#ifndef ACLCONFORM_REPORT_H
#define ACLCONFORM_REPORT_H

#include "cli.h"

int cmd_report(const cf_opts *o);
int cmd_merge(const cf_opts *o);
int cmd_export(const cf_opts *o);
int cmd_score(const cf_opts *o);

/* Read and validate a report file (rows parsed into *rows, caller frees). */
cf_status cf_report_read(const char *path, cJSON **root, cf_row **rows, int *nrows, cf_err *e);
/* The same over report text in memory (path names it in messages): every field merge and report
 * read is typed and in range (counts are integers in 0 .. 2^53, operators known, run.seed,
 * target, profile and shard strings), else CFE_INPUT naming file and field. */
cf_status cf_report_parse(const char *path, const char *text, size_t len, cJSON **root, cf_row **rows, int *nrows, cf_err *e);

/* Write the report atomically. */
cf_status cf_write_report(const char *path, cJSON *report, cf_err *e);
/* The same to a generated name (no --output): never replaces an existing file (cf_write_atomic_new). */
cf_status cf_write_report_new(const char *path, cJSON *report, cf_err *e);
cJSON *cf_report_new(const char *command, const cf_opts *o, double seconds, int64_t cases,
                     const char *started);
void cf_print_summary(FILE *f, const cf_row *rows, int nrows);

/* A JSON number that is an integer in [lo, hi]. */
bool cf_json_int_in(const cJSON *v, double lo, double hi);

#endif
