/* The subcommands of aclnn-conform (cli.md).  Each returns a cf_status exit code. */
#ifndef ACLCONFORM_COMMANDS_H
#define ACLCONFORM_COMMANDS_H

#include "cli.h"
#include "eval.h"
#include "report.h"

int cmd_sweep(const cf_opts *o);
int cmd_replay(const cf_opts *o);
int cmd_shrink(const cf_opts *o);
int cmd_list(const cf_opts *o);

#endif
