/* aclnn-conform: the command line (spec cli.md).  Thin: parse, dispatch, exit code. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "oracle.h"
#include "report.h"
#include "worker.h"

static const struct {
    const char *name;
    int (*fn)(const cf_opts *);
} COMMANDS[] = {
    {"sweep", cmd_sweep}, {"replay", cmd_replay}, {"shrink", cmd_shrink}, {"report", cmd_report},
    {"merge", cmd_merge}, {"export", cmd_export}, {"score", cmd_score}, {"list", cmd_list},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: aclnn-conform COMMAND [options]     (aclnn-conform COMMAND --help: its options)\n\ncommands:\n"
               "  sweep    generate cases, run target and oracle, score, report, store failures\n"
               "  replay   PATH...: rerun stored cases against a target (no oracle)\n"
               "  shrink   CASE: reduce a failing case, store it with origin.shrunk_from\n"
               "  report   RUN.json --format md|html [-o FILE]: publish a report\n"
               "  merge    A.json B.json... -o OUT.json: combine shard reports exactly\n"
               "  export   --out DIR: write cases (inputs + manifests) for an out-of-process target\n"
               "  score    DIR: score the outputs another program wrote beside exported cases\n"
               "  list     operators, dtypes, profiles, invalid-input rules, corpus contents\n"
               "\nexit: 0 conforms, 1 failures found, 2 usage/input error, 3 internal or I/O error\n");
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        if (argc >= 3 && !strcmp(argv[1], "help") && cf_is_command(argv[2])) {
            cf_print_command_help(stdout, argv[2]);
            return CFE_OK;
        }
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? CFE_INPUT : CFE_OK;
    }
    if (!strcmp(argv[1], "__worker")) return cf_worker_main(argc, argv); /* worker.h */
    if (!strcmp(argv[1], "--version")) {
        printf("%s %s\n", CF_TOOL_NAME, CF_TOOL_VERSION);
        return CFE_OK;
    }
    for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++) {
        if (strcmp(argv[1], COMMANDS[i].name) != 0) continue;
        cf_opts o;
        cf_err e = {{0}};
        cf_status st = cf_parse_opts(COMMANDS[i].name, argc, argv, 2, &o, &e);
        if (!st && o.help) {
            cf_print_command_help(stdout, COMMANDS[i].name);
            cf_opts_free(&o);
            return CFE_OK;
        }
        if (st) {
            fprintf(stderr, "aclnn-conform %s: %s\n", COMMANDS[i].name, e.msg);
            cf_opts_free(&o);
            return st;
        }
        cf_worker_set_load_timeout(o.timeout_s); /* a library that hangs while loading: --timeout, not minutes */
        int rc = COMMANDS[i].fn(&o);
        cf_opts_free(&o);
        cf_worker_thread_release();
        orc_thread_release();
        return rc;
    }
    const char *near = cf_command_did_you_mean(argv[1]);
    fprintf(stderr, "aclnn-conform: unknown command '%s'%s%s%s\n\n", argv[1], near ? "; did you mean '" : "", near ? near : "",
            near ? "'?" : "");
    usage(stderr);
    return CFE_INPUT;
}
