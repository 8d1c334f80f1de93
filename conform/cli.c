#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <strings.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


/* ---- the option table: one row per flag, the commands it belongs to, its help ---- */

enum {
    C_SWEEP = 1 << 0, C_REPLAY = 1 << 1, C_SHRINK = 1 << 2, C_REPORT = 1 << 3,
    C_MERGE = 1 << 4, C_EXPORT = 1 << 5, C_SCORE = 1 << 6, C_LIST = 1 << 7,
    C_RUNS = C_SWEEP | C_REPLAY | C_SHRINK, /* run a target */
    C_GEN = C_SWEEP | C_EXPORT,             /* generate cases */
};

enum {
    O_OP = 256, O_DTYPE, O_SEED, O_CASES, O_TIME, O_INVALID, O_TARGET, O_PROFILE, O_SHARD, O_JOBS, O_OUT,
    O_CORPUS, O_CONSTRAINTS, O_EXHAUSTIVE, O_ALLF32, O_QUIET, O_JSON, O_STRICT0, O_NOSHRINK, O_NOSTORE, O_KEEPWORST,
    O_PARTIAL, O_MAXBYTES, O_TIMEOUT, O_MAXEL, O_FORMAT, O_OUTPUT, O_MAXFAIL, O_ALL, O_JUNIT, O_GUARD, O_NOGUARD, O_COVERAGE, O_HELP
};

typedef struct {
    const char *name;
    int id;
    const char *arg; /* NULL: a switch */
    unsigned cmds;
    const char *help;
} optdef;

static const optdef OPTS[] = {
    {"op", O_OP, "NAME[,NAME]", C_GEN, "operators to test (default all); snake_case, CANN (GeluBackwardV2) or aclnn names"},
    {"dtype", O_DTYPE, "DT[,DT]", C_GEN, "output dtypes (f16 bf16 f32 f64; fp16, float16, bfloat16, float32, ... accepted)"},
    {"seed", O_SEED, "N", C_GEN, "run seed (default 0x5eed); every case derives its own from it"},
    {"cases", O_CASES, "N", C_GEN, "cases per (operator, dtype, variant) stream (instead of --time)"},
    {"time", O_TIME, "S", C_SWEEP, "time budget in seconds (default 60); no case starts after it"},
    {"invalid-cases", O_INVALID, "N", C_GEN, "cases per invalid-input rule and protocol check (default 8)"},
    {"target", O_TARGET, "builtin|LIB.so", C_RUNS,
     "implementation under test (default builtin; replay/shrink: the target the case records)"},
    {"profile", O_PROFILE, "spec|cann-kernel", C_GEN | C_REPLAY | C_SCORE | C_LIST, "constraint profile (default spec)"},
    {"shard", O_SHARD, "K/N", C_GEN, "run only case indices i with i mod N == K (0 <= K < N)"},
    {"jobs", O_JOBS, "J", C_SWEEP, "parallel cases (threads; worker processes for a foreign target); default: cores"},
    {"out", O_OUT, "DIR", C_SWEEP | C_EXPORT | C_SCORE, "directory for reports (sweep, score) or exported cases (export)"},
    {"corpus", O_CORPUS, "DIR", C_SWEEP | C_SHRINK | C_LIST,
     "where failing cases are stored (default corpus/ for builtin, failures/<target>/ for a library)"},
    {"constraints", O_CONSTRAINTS, "DIR", C_GEN | C_REPLAY | C_SHRINK | C_SCORE | C_LIST, "constraint files (default constraints/)"},
    {"exhaustive", O_EXHAUSTIVE, NULL, C_SWEEP, "every input bit pattern of x (elementwise ops, 16-bit dtypes)"},
    {"all-f32", O_ALLF32, NULL, C_SWEEP, "with --exhaustive: also all 2^32 f32 x values (hours)"},
    {"quiet", O_QUIET, NULL, C_SWEEP | C_REPLAY | C_MERGE | C_SCORE, "print only the verdict line"},
    {"json", O_JSON, NULL, C_SWEEP, "print the report JSON on stdout (FAIL lines go to stderr)"},
    {"strict-zero", O_STRICT0, NULL, C_SWEEP | C_REPLAY | C_SHRINK | C_SCORE,
     "count -0 against +0 (and +0 against -0) as a mismatch instead of a note"},
    {"no-shrink", O_NOSHRINK, NULL, C_SWEEP, "store failing cases as generated, without shrinking them"},
    {"no-store", O_NOSTORE, NULL, C_SWEEP, "store no failing case (lines then name seed#index instead of a path)"},
    {"keep-worst", O_KEEPWORST, NULL, C_SWEEP, "also store each row's worst cases when they pass, so a published report links them"},
    {"partial", O_PARTIAL, NULL, C_MERGE, "merge even when shards are missing (the result is marked partial)"},
    {"max-bytes", O_MAXBYTES, "N", C_RUNS, "largest case the harness allocates (default a quarter of memory)"},
    {"timeout", O_TIMEOUT, "S", C_RUNS, "per-case limit for a foreign target's worker (default 20 s)"},
    {"max-elements", O_MAXEL, "N", C_EXPORT, "skip cases with more than N elements in all tensors"},
    {"format", O_FORMAT, "md|html|csv", C_REPORT, "published form (default md; csv: one line per result row)"},
    {"output", O_OUTPUT, "FILE", C_SWEEP | C_REPORT | C_MERGE | C_SCORE, "output file (also -o FILE)"},
    {"max-fail-lines", O_MAXFAIL, "N", C_SWEEP, "FAIL lines printed per (op, dtype, variant, kind) group (default 3)"},
    {"all", O_ALL, NULL, C_SWEEP, "print every FAIL line"},
    {"junit", O_JUNIT, "FILE", C_SWEEP, "write JUnit XML: one testcase per stream and per invalid-input rule"},
    {"guard-pages", O_GUARD, NULL, C_RUNS,
     "foreign targets: put each storage between PROT_NONE pages, so a far write crashes the worker (the default)"},
    {"no-guard-pages", O_NOGUARD, NULL, C_RUNS, "foreign targets: guard zones without the PROT_NONE pages"},
    {"coverage", O_COVERAGE, NULL, C_SWEEP,
     "print the structural coverage (cases per size/rank/attribute bin, op threads); always in the report"},
    {"help", O_HELP, NULL, ~0u, "this help"},
};
#define NOPTS (sizeof OPTS / sizeof OPTS[0])

static const struct {
    const char *name;
    unsigned bit;
    int minpos, maxpos;
    const char *usage, *what;
} CMDS[] = {
    {"sweep", C_SWEEP, 0, 0, "sweep [options]", "generate cases, run target and oracle, score, report, store failures"},
    {"replay", C_REPLAY, 1, 1 << 20, "replay PATH... [options]", "rerun stored cases (case, operator or corpus dirs); no oracle"},
    {"shrink", C_SHRINK, 1, 1, "shrink CASE [options]", "reduce a failing case; store it with origin.shrunk_from"},
    {"report", C_REPORT, 1, 1, "report RUN.json [--format md|html|csv] [-o FILE]", "publish a report"},
    {"merge", C_MERGE, 1, 1 << 20, "merge A.json B.json... -o OUT.json", "combine shard reports exactly"},
    {"export", C_EXPORT, 0, 0, "export --out DIR [options]", "write cases (.npy inputs + manifests) for an out-of-process target"},
    {"score", C_SCORE, 1, 1, "score DIR [options]", "score the outputs another program wrote beside exported cases"},
    {"list", C_LIST, 0, 0, "list [options]", "operators, dtypes, profiles, invalid-input rules, corpus contents"},
};
#define NCMDS (sizeof CMDS / sizeof CMDS[0])

static int cmd_index(const char *cmd)
{
    for (size_t i = 0; i < NCMDS; i++)
        if (!strcmp(CMDS[i].name, cmd)) return (int)i;
    return -1;
}

/* Levenshtein distance (short strings), for did-you-mean. */
static int edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63) return 99;
    int d[64][64];
    for (size_t i = 0; i <= la; i++) d[i][0] = (int)i;
    for (size_t j = 0; j <= lb; j++) d[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            int c = d[i - 1][j - 1] + (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
            int x = d[i - 1][j] + 1, y = d[i][j - 1] + 1;
            d[i][j] = c < x ? (c < y ? c : y) : (x < y ? x : y);
        }
    return d[la][lb];
}

/* The nearest of cands[] to s when it is near enough to be a typo, else NULL. */
const char *cf_did_you_mean(const char *s, const char *const *cands, int n)
{
    const char *best = NULL;
    int bd = 99;
    for (int i = 0; i < n; i++) {
        int d = edit_distance(s, cands[i]);
        if (d < bd) bd = d, best = cands[i];
    }
    size_t len = strlen(s);
    return best && bd <= (len <= 4 ? 1 : len <= 8 ? 2 : 3) ? best : NULL;
}

void cf_print_command_help(FILE *f, const char *cmd)
{
    int ci = cmd_index(cmd);
    if (ci < 0) return;
    fprintf(f, "usage: aclnn-conform %s\n%s\n\noptions:\n", CMDS[ci].usage, CMDS[ci].what);
    for (size_t i = 0; i < NOPTS; i++) {
        if (!(OPTS[i].cmds & CMDS[ci].bit)) continue;
        char lhs[64];
        snprintf(lhs, sizeof lhs, "--%s%s%s", OPTS[i].name, OPTS[i].arg ? " " : "", OPTS[i].arg ? OPTS[i].arg : "");
        fprintf(f, "  %-30s %s\n", lhs, OPTS[i].help);
    }
    fprintf(f, "\nexit: 0 conforms, 1 failures found, 2 usage/input error, 3 internal or I/O error%s\n",
            CMDS[ci].bit == C_SWEEP ? ", 130/143 interrupted" : "");
}

bool cf_is_command(const char *cmd) { return cmd_index(cmd) >= 0; }

const char *cf_command_did_you_mean(const char *s)
{
    const char *names[NCMDS];
    for (size_t i = 0; i < NCMDS; i++) names[i] = CMDS[i].name;
    return cf_did_you_mean(s, names, (int)NCMDS);
}

/* Integers: digits only (0x.. allowed), no sign, no overflow, within [lo, hi]. */
static cf_status parse_int(const char *flag, const char *s, int64_t lo, int64_t hi, int64_t *v, cf_err *e)
{
    char *end;
    errno = 0;
    if (!*s || *s == '-' || *s == '+' || isspace((unsigned char)*s))
        return cf_fail(e, CFE_INPUT, "--%s: expected an integer in [%lld, %lld], got '%s'", flag, (long long)lo, (long long)hi, s);
    unsigned long long x = strtoull(s, &end, 0);
    if (*end || errno == ERANGE || x > (unsigned long long)hi || (long long)x < lo)
        return cf_fail(e, CFE_INPUT, "--%s: expected an integer in [%lld, %lld], got '%s'", flag, (long long)lo, (long long)hi, s);
    *v = (int64_t)x;
    return CFE_OK;
}

static cf_status parse_seconds(const char *flag, const char *s, double *v, cf_err *e)
{
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (!*s || *end || errno == ERANGE || !(x > 0) || !(x <= 1e7))
        return cf_fail(e, CFE_INPUT, "--%s: expected seconds in (0, 1e7], got '%s'", flag, s);
    *v = x;
    return CFE_OK;
}

/* Operator names: snake_case ids, CANN names (GeluBackwardV2) and API names (aclnnGeluBackwardV2),
 * any case. */
static bool op_alias(const char *s, cf_op *op)
{
    if (cf_op_parse(s, op)) return true;
    const char *t = strncasecmp(s, "aclnn", 5) == 0 ? s + 5 : s;
    for (int i = 0; i < CF_OP_COUNT; i++)
        if (!strcasecmp(t, cf_op_camel((cf_op)i)) || !strcasecmp(t, cf_op_name((cf_op)i))) {
            *op = (cf_op)i;
            return true;
        }
    return false;
}

static bool dtype_alias(const char *s, cf_dtype *dt)
{
    static const struct { const char *a; cf_dtype d; } A[] = {
        {"fp16", CF_F16}, {"float16", CF_F16}, {"half", CF_F16}, {"bfloat16", CF_BF16}, {"fp32", CF_F32},
        {"float32", CF_F32}, {"float", CF_F32}, {"fp64", CF_F64}, {"float64", CF_F64}, {"double", CF_F64},
        {"int8", CF_I8}, {"int16", CF_I16}, {"int32", CF_I32}, {"int64", CF_I64}, {"uint8", CF_U8}, {"bool", CF_BOOL},
        {"uint16", CF_U16}, {"uint32", CF_U32}, {"uint64", CF_U64}, {"complex64", CF_C64}, {"complex128", CF_C128},
    };
    char low[32];
    size_t n = strlen(s);
    if (n >= sizeof low) return false;
    for (size_t i = 0; i <= n; i++) low[i] = (char)tolower((unsigned char)s[i]);
    if (cf_dtype_parse(low, dt)) return true;
    for (size_t i = 0; i < sizeof A / sizeof A[0]; i++)
        if (!strcmp(low, A[i].a)) {
            *dt = A[i].d;
            return true;
        }
    return false;
}

/* One item of a comma list: set it in o, or fail naming it (with a did-you-mean). */
typedef cf_status (*list_item_fn)(const char *item, cf_opts *o, cf_err *e);

static cf_status op_item(const char *s, cf_opts *o, cf_err *e)
{
    cf_op op;
    if (op_alias(s, &op)) {
        o->op_on[op] = true;
        return CFE_OK;
    }
    const char *names[2 * CF_OP_COUNT];
    for (int i = 0; i < CF_OP_COUNT; i++) names[2 * i] = cf_op_name((cf_op)i), names[2 * i + 1] = cf_op_camel((cf_op)i);
    const char *near = cf_did_you_mean(strncasecmp(s, "aclnn", 5) == 0 ? s + 5 : s, names, 2 * CF_OP_COUNT);
    return cf_fail(e, CFE_INPUT, "--op: unknown operator '%s'%s%s%s (see 'aclnn-conform list')", s,
                   near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
}

static cf_status dtype_item(const char *s, cf_opts *o, cf_err *e)
{
    cf_dtype dt;
    if (dtype_alias(s, &dt)) {
        o->dtype_on[dt] = true;
        return CFE_OK;
    }
    static const char *const names[] = {"f16", "bf16", "f32", "f64", "fp16", "float16", "bfloat16", "fp32", "float32", "fp64", "float64"};
    const char *near = cf_did_you_mean(s, names, (int)(sizeof names / sizeof names[0]));
    return cf_fail(e, CFE_INPUT, "--dtype: unknown dtype '%s'%s%s%s (f16 bf16 f32 f64)", s, near ? "; did you mean '" : "",
                   near ? near : "", near ? "'?" : "");
}

/* --flag A,B,...: each item through fn; at least one item. */
static cf_status each_item(const char *flag, const char *what, const char *val, size_t max_len, list_item_fn fn, cf_opts *o,
                           cf_err *e)
{
    char buf[512];
    if (strlen(val) >= max_len || strlen(val) >= sizeof buf) return cf_fail(e, CFE_INPUT, "--%s: value too long", flag);
    snprintf(buf, sizeof buf, "%s", val);
    char *save = NULL;
    int n = 0;
    for (char *s = strtok_r(buf, ",", &save); s; s = strtok_r(NULL, ",", &save), n++) {
        cf_status st = fn(s, o, e);
        if (st) return st;
    }
    return n ? CFE_OK : cf_fail(e, CFE_INPUT, "--%s: expected at least one %s", flag, what);
}

static cf_status set_ops(const char *val, cf_opts *o, cf_err *e)
{
    for (int k = 0; k < CF_OP_COUNT; k++) o->op_on[k] = false;
    return each_item("op", "operator", val, 512, op_item, o, e);
}

static cf_status set_dtypes(const char *val, cf_opts *o, cf_err *e)
{
    for (int k = 0; k < CF_DTYPE_COUNT; k++) o->dtype_on[k] = false;
    o->dtype_given = true;
    return each_item("dtype", "dtype", val, 256, dtype_item, o, e);
}

static cf_status copy_path(const char *flag, char *dst, size_t n, const char *val, cf_err *e)
{
    if (!*val) return cf_fail(e, CFE_INPUT, "--%s: expected a path, got an empty string", flag);
    if (strlen(val) >= n) return cf_fail(e, CFE_INPUT, "--%s: path longer than %zu bytes", flag, n - 1);
    snprintf(dst, n, "%s", val);
    return CFE_OK;
}

static void set_defaults(cf_opts *o)
{
    memset(o, 0, sizeof *o);
    for (int i = 0; i < CF_OP_COUNT; i++) o->op_on[i] = true;
    for (int i = 0; i < CF_DTYPE_COUNT; i++) o->dtype_on[i] = true;
    o->seed = 0x5eed;
    o->invalid_cases = 8;
    o->shard_n = 1;
    o->jobs = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (o->jobs < 1) o->jobs = 1;
    if (o->jobs > 256) o->jobs = 256;
    o->timeout_s = 20;
    /* foreign targets: a write more than 4 KiB past a storage passed 405 of 432 cases without the
     * PROT_NONE pages (issue 57); they cost nothing measurable (--cases 300: 5.9 s either way) */
    o->guard_pages = true;
    o->max_fail_lines = 3;
    snprintf(o->target, sizeof o->target, "builtin");
    snprintf(o->profile, sizeof o->profile, "spec");
    snprintf(o->out_dir, sizeof o->out_dir, "reports");
    snprintf(o->corpus, sizeof o->corpus, "corpus");
}

static const optdef *opt_of(int id)
{
    for (size_t i = 0; i < NOPTS; i++)
        if (OPTS[i].id == id) return &OPTS[i];
    return NULL;
}

/* getopt's '?' (unknown flag, or a switch given a value) and ':' (missing value), as a message
 * naming the flag, with a did-you-mean among the command's own flags. */
static cf_status getopt_error(int c, const char *bad, const char *cmd, unsigned bit, cf_err *e)
{
    char name[64];
    snprintf(name, sizeof name, "%s", bad ? bad : "?");
    char *eq = strchr(name, '=');
    if (eq) *eq = '\0';
    if (c == ':') return cf_fail(e, CFE_INPUT, "%s needs a value (see 'aclnn-conform %s --help')", name, cmd);
    if (eq && !strncmp(name, "--", 2)) /* --quiet=3: a switch given a value */
        for (size_t i = 0; i < NOPTS; i++)
            if (!OPTS[i].arg && !strcmp(name + 2, OPTS[i].name))
                return cf_fail(e, CFE_INPUT, "%s is a switch and takes no value (got '%s')", name, bad);
    const char *cands[NOPTS];
    int nc = 0;
    for (size_t i = 0; i < NOPTS; i++)
        if (OPTS[i].cmds & bit) cands[nc++] = OPTS[i].name;
    const char *near = !strncmp(name, "--", 2) ? cf_did_you_mean(name + 2, cands, nc) : NULL;
    return cf_fail(e, CFE_INPUT, "unknown flag '%s'%s%s%s (see 'aclnn-conform %s --help')", name,
                   near ? "; did you mean '--" : "", near ? near : "", near ? "'?" : "", cmd);
}

/* A known flag of another command: say whose it is. */
static cf_status not_an_option_of(const optdef *d, const char *cmd, cf_err *e)
{
    char owners[128] = "";
    for (size_t i = 0; i < NCMDS; i++)
        if (d->cmds & CMDS[i].bit)
            snprintf(owners + strlen(owners), sizeof owners - strlen(owners), "%s%s", owners[0] ? ", " : "", CMDS[i].name);
    return cf_fail(e, CFE_INPUT, "--%s is not an option of '%s' (it belongs to: %s; see 'aclnn-conform %s --help')", d->name,
                   cmd, owners, cmd);
}

static cf_status parse_seed(const char *val, cf_opts *o, cf_err *e)
{
    int64_t v;
    if (!parse_int("seed", val, 0, INT64_MAX, &v, e)) {
        o->seed = (uint64_t)v, o->seed_given = true;
        return CFE_OK;
    }
    /* full 64-bit seeds (printed as 0x...) are fine too */
    char *end;
    errno = 0;
    unsigned long long x = strtoull(val, &end, 0);
    if (!*val || *val == '-' || *end || errno == ERANGE)
        return cf_fail(e, CFE_INPUT, "--seed: expected an unsigned 64-bit integer, got '%s'", val);
    o->seed = x, o->seed_given = true;
    return CFE_OK;
}

static cf_status parse_shard(const char *val, cf_opts *o, cf_err *e)
{
    long long k, nn;
    int used = 0;
    if (sscanf(val, "%lld/%lld%n", &k, &nn, &used) != 2 || val[used] || nn < 1 || nn > 1000000 || k < 0 || k >= nn ||
        val[0] == '-' || val[0] == '+')
        return cf_fail(e, CFE_INPUT, "--shard: expected K/N with 0 <= K < N <= 1000000, got '%s'", val);
    o->shard_k = (int)k, o->shard_n = (int)nn;
    return CFE_OK;
}

/* One flag of the command, with its value (NULL for a switch). */
static cf_status apply_flag(int c, const char *val, cf_opts *o, cf_err *e)
{
    cf_status st = CFE_OK;
    int64_t v;
    switch (c) {
    case O_OP: st = set_ops(val, o, e); break;
    case O_DTYPE: st = set_dtypes(val, o, e); break;
    case O_SEED: st = parse_seed(val, o, e); break;
    case O_CASES: if (!(st = parse_int("cases", val, 1, INT64_C(1) << 40, &v, e))) o->cases = v; break;
    case O_INVALID: if (!(st = parse_int("invalid-cases", val, 0, INT64_C(1) << 30, &v, e))) o->invalid_cases = v; break;
    case O_MAXEL: if (!(st = parse_int("max-elements", val, 0, INT64_MAX, &v, e))) o->max_elements = v; break;
    case O_TIME: st = parse_seconds("time", val, &o->time_s, e); break;
    case O_TIMEOUT: st = parse_seconds("timeout", val, &o->timeout_s, e); break;
    case O_TARGET:
        if (!(st = copy_path("target", o->target, sizeof o->target, val, e))) o->target_given = true;
        break;
    case O_PROFILE:
        if (strcmp(val, "spec") && strcmp(val, "cann-kernel"))
            st = cf_fail(e, CFE_INPUT, "--profile: expected spec or cann-kernel, got '%s'", val);
        else snprintf(o->profile, sizeof o->profile, "%s", val);
        break;
    case O_SHARD: st = parse_shard(val, o, e); break;
    case O_JOBS: if (!(st = parse_int("jobs", val, 1, 256, &v, e))) o->jobs = (int)v; break;
    case O_OUT:
        if (!(st = copy_path("out", o->out_dir, sizeof o->out_dir, val, e))) o->out_given = true;
        break;
    case O_CORPUS:
        if (!(st = copy_path("corpus", o->corpus, sizeof o->corpus, val, e))) o->corpus_given = true;
        break;
    case O_CONSTRAINTS: st = copy_path("constraints", o->constraints, sizeof o->constraints, val, e); break;
    case O_FORMAT:
        if (strcmp(val, "md") && strcmp(val, "html") && strcmp(val, "csv"))
            st = cf_fail(e, CFE_INPUT, "--format: expected md, html or csv, got '%s'", val);
        else o->format = val;
        break;
    case O_OUTPUT:
        if (!*val) st = cf_fail(e, CFE_INPUT, "--output: expected a file name");
        else o->output = val;
        break;
    case O_MAXBYTES:
        if (!(st = parse_int("max-bytes", val, 1, INT64_MAX, &v, e))) {
            o->max_bytes = (uint64_t)v;
            cf_set_max_bytes(o->max_bytes);
        }
        break;
    case O_MAXFAIL: if (!(st = parse_int("max-fail-lines", val, 0, 1000000, &v, e))) o->max_fail_lines = (int)v; break;
    case O_JUNIT:
        if (!*val) st = cf_fail(e, CFE_INPUT, "--junit: expected a file name");
        else o->junit = val;
        break;
    case O_EXHAUSTIVE: o->exhaustive = true; break;
    case O_ALLF32: o->exhaustive_f32 = true; break;
    case O_QUIET: o->quiet = true; break;
    case O_JSON: o->json = true; break;
    case O_STRICT0: o->strict_zero = true; break;
    case O_NOSHRINK: o->no_shrink = true; break;
    case O_NOSTORE: o->no_store = true; break;
    case O_KEEPWORST: o->keep_worst = true; break;
    case O_PARTIAL: o->partial = true; break;
    case O_ALL: o->all_lines = true; break;
    case O_GUARD: o->guard_pages = true; break;
    case O_NOGUARD: o->guard_pages = false; break;
    case O_COVERAGE: o->coverage = true; break;
    default: st = cf_fail(e, CFE_INPUT, "unhandled flag"); break;
    }
    return st;
}

/* The positionals after the flags, counted against the command's usage. */
static cf_status take_positionals(int ci, const char *cmd, int n, char **av, cf_opts *o, cf_err *e)
{
    for (int i = optind; i < n; i++) o->pos[o->npos++] = av[i];
    if (o->npos >= CMDS[ci].minpos && o->npos <= CMDS[ci].maxpos) return CFE_OK;
    if (CMDS[ci].maxpos == 0)
        return cf_fail(e, CFE_INPUT, "'%s' takes no positional argument, got '%s' (usage: aclnn-conform %s)", cmd, o->pos[0],
                       CMDS[ci].usage);
    return cf_fail(e, CFE_INPUT, "'%s' expects %s, got %d (usage: aclnn-conform %s)", cmd,
                   CMDS[ci].minpos == CMDS[ci].maxpos ? "one path" : "at least one path", o->npos, CMDS[ci].usage);
}

/* Whether two paths name one file: the same device and inode when both exist, else the same
 * text once each directory part is resolved (a file not written yet). */
static bool same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    char ra[PATH_MAX], rb[PATH_MAX];
    const char *pa = realpath(a, ra) ? ra : a, *pb = realpath(b, rb) ? rb : b;
    return strcmp(pa, pb) == 0;
}

/* Flags that imply or exclude each other. */
static cf_status check_combinations(cf_opts *o, cf_err *e)
{
    /* an output that is also an input, or the JUnit file, silently replaced it (issue 57:
     * report R.json -o R.json, merge A B -o A, -o X --junit X) */
    for (int i = 0; o->output && i < o->npos; i++)
        if (same_file(o->output, o->pos[i]))
            return cf_fail(e, CFE_INPUT, "--output %s is also the input %s: write the output elsewhere", o->output, o->pos[i]);
    if (o->output && o->junit && same_file(o->output, o->junit))
        return cf_fail(e, CFE_INPUT, "--output and --junit name one file (%s)", o->output);
    /* cli.md: --exhaustive with --dtype f32 sweeps all 2^32 x values (--all-f32 says it alone) */
    if (o->exhaustive && o->dtype_given && o->dtype_on[CF_F32]) o->exhaustive_f32 = true;
    if (o->exhaustive_f32 && !o->exhaustive) return cf_fail(e, CFE_INPUT, "--all-f32 needs --exhaustive");
    if (o->cases && o->time_s > 0) return cf_fail(e, CFE_INPUT, "--cases and --time are alternatives: give one");
    return CFE_OK;
}

cf_status cf_parse_opts(const char *cmd, int argc, char **argv, int first, cf_opts *o, cf_err *e)
{
    set_defaults(o);
    o->pos = calloc((size_t)argc + 1, sizeof *o->pos);
    if (!o->pos) return cf_fail(e, CFE_IO, "out of memory");
    int ci = cmd_index(cmd);
    if (ci < 0) return cf_fail(e, CFE_INPUT, "unknown command '%s'", cmd);
    unsigned bit = CMDS[ci].bit;
    /* every flag is known to getopt (so a flag of another command gets a precise message) */
    struct option lo[NOPTS + 1];
    for (size_t i = 0; i < NOPTS; i++) lo[i] = (struct option){OPTS[i].name, OPTS[i].arg ? required_argument : no_argument, NULL, OPTS[i].id};
    lo[NOPTS] = (struct option){NULL, 0, NULL, 0};
    /* getopt permutes argv: work on a copy; "+" would stop at the first positional, we allow
     * options after positionals (replay DIR --target X) */
    int n = argc - first + 1;
    char **av = calloc((size_t)n + 1, sizeof *av);
    if (!av) return cf_fail(e, CFE_IO, "out of memory");
    av[0] = (char *)cmd;
    for (int i = first; i < argc; i++) av[i - first + 1] = argv[i];
    opterr = 0;
    optind = 1;
    cf_status st = CFE_OK;
    for (int c; !st && (c = getopt_long(n, av, ":o:h", lo, NULL)) != -1;) {
        if (c == '?' || c == ':') {
            st = getopt_error(c, av[optind - 1], cmd, bit, e);
            break;
        }
        if (c == 'h') c = O_HELP;
        if (c == 'o') c = O_OUTPUT;
        if (c == O_HELP) {
            o->help = true;
            continue;
        }
        const optdef *d = opt_of(c);
        if (d && !(d->cmds & bit)) st = not_an_option_of(d, cmd, e);
        else st = apply_flag(c, optarg, o, e);
    }
    if (!st && !o->help) st = take_positionals(ci, cmd, n, av, o, e);
    free(av);
    return st ? st : check_combinations(o, e);
}

void cf_opts_free(cf_opts *o)
{
    free(o->pos);
    o->pos = NULL;
}

bool cf_stderr_is_tty(void) { return isatty(2) != 0; }
