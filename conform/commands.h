/* The subcommands of aclnn-conform (cli.md).  Each returns a cf_status exit code. */
#ifndef ACLCONFORM_COMMANDS_H
#define ACLCONFORM_COMMANDS_H

#include "cli.h"

int cmd_sweep(const cf_opts *o);
int cmd_replay(const cf_opts *o);
int cmd_shrink(const cf_opts *o);
int cmd_list(const cf_opts *o);

/* Collect the case directories under path (a case dir, an op dir, or a corpus root), sorted. */
cf_status cf_collect_cases(const char *path, char ***dirs, int *n, cf_err *e);

#endif
