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
    const char *help;
} COMMANDS[] = {
    {"sweep", cmd_sweep, "generate cases, run target and oracle, score, report, store failures"},
    {"replay", cmd_replay, "PATH...: rerun stored cases against a target (no oracle)"},
    {"shrink", cmd_shrink, "CASE: reduce a failing case, store it with origin.shrunk_from"},
    {"report", cmd_report, "RUN.json --format md|html [-o FILE]: publish a report"},
    {"merge", cmd_merge, "A.json B.json... -o OUT.json: combine shard reports exactly"},
    {"export", cmd_export, "--out DIR: write cases (inputs + manifests) for an out-of-process target"},
    {"score", cmd_score, "DIR: score the result.json / got.<out>.npy another program wrote"},
    {"list", cmd_list, "operators, dtypes, profiles, invalid-input rules, corpus contents"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: aclnn-conform COMMAND [options]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++)
        fprintf(f, "  %-8s %s\n", COMMANDS[i].name, COMMANDS[i].help);
    fprintf(f,
            "\ncommon options:\n"
            "  --op NAME[,NAME]      operators (default: all)      --dtype f16,bf16,...  output dtypes\n"
            "  --seed N              run seed (printed; default 0x5eed)\n"
            "  --cases N             cases per (op, dtype, variant) stream   --time S   time budget (default 60)\n"
            "  --invalid-cases N     cases per invalid-input rule (default 2)\n"
            "  --target builtin|PATH.so   --profile spec|cann-kernel   --shard K/N   --jobs J\n"
            "  --out DIR (reports/)  --corpus DIR (corpus/)   --constraints DIR (constraints/)\n"
            "  --exhaustive [--all-f32]   --quiet   --json   --strict-zero   --no-shrink   --no-store\n"
            "  --timeout S           per-case limit for a foreign target (worker process)\n"
            "  --max-elements N      export: skip cases with more than N elements in all tensors\n"
            "exit: 0 conforms, 1 failures found, 2 usage/input error, 3 internal or I/O error\n");
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
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
        for (int a = 2; a < argc; a++)
            if (!strcmp(argv[a], "--help") || !strcmp(argv[a], "-h")) {
                printf("aclnn-conform %s: %s\n\n", COMMANDS[i].name, COMMANDS[i].help);
                usage(stdout);
                return CFE_OK;
            }
        cf_opts o;
        cf_err e = {{0}};
        cf_status st = cf_parse_opts(argc, argv, 2, &o, &e);
        if (st) {
            fprintf(stderr, "aclnn-conform %s: %s\n", COMMANDS[i].name, e.msg);
            cf_opts_free(&o);
            return st;
        }
        int rc = COMMANDS[i].fn(&o);
        cf_opts_free(&o);
        orc_thread_release();
        return rc;
    }
    fprintf(stderr, "aclnn-conform: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return CFE_INPUT;
}
