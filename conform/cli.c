#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "adapters.h"

static bool parse_i64(const char *s, int64_t *v)
{
    char *end;
    long long x = strtoll(s, &end, 0);
    if (!*s || *end || x < 0) return false;
    *v = x;
    return true;
}

cf_status cf_parse_opts(int argc, char **argv, int first, cf_opts *o, cf_err *e)
{
    memset(o, 0, sizeof *o);
    for (int i = 0; i < CF_OP_COUNT; i++) o->op_on[i] = true;
    for (int i = 0; i < CF_DTYPE_COUNT; i++) o->dtype_on[i] = true;
    o->seed = 0x5eed;
    o->invalid_cases = 2;
    o->shard_n = 1;
    o->jobs = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (o->jobs < 1) o->jobs = 1;
    o->timeout_s = 20;
    o->max_fail_lines = 3;
    snprintf(o->target, sizeof o->target, "builtin");
    snprintf(o->profile, sizeof o->profile, "spec");
    snprintf(o->out_dir, sizeof o->out_dir, "reports");
    snprintf(o->corpus, sizeof o->corpus, "corpus");
    o->constraints[0] = '\0';
    o->pos = calloc((size_t)argc + 1, sizeof *o->pos);
    if (!o->pos) return cf_fail(e, CFE_IO, "out of memory");
    for (int i = first; i < argc; i++) {
        const char *a = argv[i];
        const char *val = NULL;
        char flag[64];
        if (strncmp(a, "--", 2) != 0 || a[2] == '\0') {
            if (a[0] == '-' && a[1] == 'o' && a[2] == '\0' && i + 1 < argc) {
                o->output = argv[++i];
                continue;
            }
            if (a[0] == '-' && a[1] != '\0') return cf_fail(e, CFE_INPUT, "unknown flag '%s' (see --help)", a);
            o->pos[o->npos++] = a;
            continue;
        }
        const char *eq = strchr(a, '=');
        if (eq) {
            snprintf(flag, sizeof flag, "%.*s", (int)(eq - a), a);
            val = eq + 1;
        } else {
            snprintf(flag, sizeof flag, "%s", a);
        }
        bool boolean = !strcmp(flag, "--exhaustive") || !strcmp(flag, "--quiet") || !strcmp(flag, "--json") ||
                       !strcmp(flag, "--strict-zero") || !strcmp(flag, "--no-shrink") || !strcmp(flag, "--no-store") ||
                       !strcmp(flag, "--all-f32") || !strcmp(flag, "--partial");
        if (!boolean && !val) {
            if (i + 1 >= argc) return cf_fail(e, CFE_INPUT, "flag %s needs a value", flag);
            val = argv[++i];
        }
        if (!strcmp(flag, "--op")) {
            for (int k = 0; k < CF_OP_COUNT; k++) o->op_on[k] = false;
            char buf[512];
            snprintf(buf, sizeof buf, "%s", val);
            for (char *s = strtok(buf, ","); s; s = strtok(NULL, ",")) {
                cf_op op;
                if (!cf_op_parse(s, &op)) return cf_fail(e, CFE_INPUT, "--op: unknown operator '%s' (see 'aclnn-conform list')", s);
                o->op_on[op] = true;
            }
        } else if (!strcmp(flag, "--dtype")) {
            for (int k = 0; k < CF_DTYPE_COUNT; k++) o->dtype_on[k] = false;
            char buf[256];
            snprintf(buf, sizeof buf, "%s", val);
            for (char *s = strtok(buf, ","); s; s = strtok(NULL, ",")) {
                cf_dtype dt;
                if (!cf_dtype_parse(s, &dt)) return cf_fail(e, CFE_INPUT, "--dtype: unknown dtype '%s' (f16 bf16 f32 f64 ...)", s);
                o->dtype_on[dt] = true;
            }
            o->dtype_given = true;
        } else if (!strcmp(flag, "--seed")) {
            char *end;
            o->seed = strtoull(val, &end, 0);
            if (!*val || *end) return cf_fail(e, CFE_INPUT, "--seed: expected an integer, got '%s'", val);
            o->seed_given = true;
        } else if (!strcmp(flag, "--cases")) {
            if (!parse_i64(val, &o->cases) || o->cases == 0) return cf_fail(e, CFE_INPUT, "--cases: expected a positive integer, got '%s'", val);
        } else if (!strcmp(flag, "--invalid-cases")) {
            if (!parse_i64(val, &o->invalid_cases)) return cf_fail(e, CFE_INPUT, "--invalid-cases: expected an integer >= 0, got '%s'", val);
        } else if (!strcmp(flag, "--max-elements")) {
            if (!parse_i64(val, &o->max_elements)) return cf_fail(e, CFE_INPUT, "--max-elements: expected an integer >= 0, got '%s'", val);
        } else if (!strcmp(flag, "--time")) {
            char *end;
            o->time_s = strtod(val, &end);
            if (!*val || *end || !(o->time_s > 0)) return cf_fail(e, CFE_INPUT, "--time: expected seconds > 0, got '%s'", val);
        } else if (!strcmp(flag, "--timeout")) {
            char *end;
            o->timeout_s = strtod(val, &end);
            if (!*val || *end || !(o->timeout_s > 0)) return cf_fail(e, CFE_INPUT, "--timeout: expected seconds > 0, got '%s'", val);
        } else if (!strcmp(flag, "--target")) {
            snprintf(o->target, sizeof o->target, "%s", val);
            o->target_given = true;
        } else if (!strcmp(flag, "--profile")) {
            if (strcmp(val, "spec") && strcmp(val, "cann-kernel")) return cf_fail(e, CFE_INPUT, "--profile: expected spec or cann-kernel, got '%s'", val);
            snprintf(o->profile, sizeof o->profile, "%s", val);
        } else if (!strcmp(flag, "--shard")) {
            int k, n, used = 0;
            if (sscanf(val, "%d/%d%n", &k, &n, &used) != 2 || val[used] || n < 1 || k < 0 || k >= n)
                return cf_fail(e, CFE_INPUT, "--shard: expected K/N with 0 <= K < N, got '%s'", val);
            o->shard_k = k;
            o->shard_n = n;
        } else if (!strcmp(flag, "--jobs")) {
            int64_t j;
            if (!parse_i64(val, &j) || j < 1 || j > 256) return cf_fail(e, CFE_INPUT, "--jobs: expected 1..256, got '%s'", val);
            o->jobs = (int)j;
        } else if (!strcmp(flag, "--out")) {
            snprintf(o->out_dir, sizeof o->out_dir, "%s", val);
        } else if (!strcmp(flag, "--corpus")) {
            snprintf(o->corpus, sizeof o->corpus, "%s", val);
            o->corpus_given = true;
        } else if (!strcmp(flag, "--constraints")) {
            snprintf(o->constraints, sizeof o->constraints, "%s", val);
        } else if (!strcmp(flag, "--format")) {
            if (strcmp(val, "md") && strcmp(val, "html")) return cf_fail(e, CFE_INPUT, "--format: expected md or html, got '%s'", val);
            o->format = val;
        } else if (!strcmp(flag, "--output")) {
            o->output = val;
        } else if (!strcmp(flag, "--exhaustive")) {
            o->exhaustive = true;
        } else if (!strcmp(flag, "--all-f32")) {
            o->exhaustive_f32 = true;
        } else if (!strcmp(flag, "--quiet")) {
            o->quiet = true;
        } else if (!strcmp(flag, "--json")) {
            o->json = true;
        } else if (!strcmp(flag, "--strict-zero")) {
            o->strict_zero = true;
        } else if (!strcmp(flag, "--no-shrink")) {
            o->no_shrink = true;
        } else if (!strcmp(flag, "--no-store")) {
            o->no_store = true;
        } else if (!strcmp(flag, "--partial")) {
            o->partial = true;
        } else if (!strcmp(flag, "--max-bytes")) {
            int64_t mb;
            if (!parse_i64(val, &mb) || mb < 1) return cf_fail(e, CFE_INPUT, "--max-bytes: expected a positive integer, got '%s'", val);
            o->max_bytes = (uint64_t)mb;
            cf_set_max_bytes(o->max_bytes);
        } else {
            return cf_fail(e, CFE_INPUT, "unknown flag '%s' (see --help)", flag);
        }
    }
    /* cli.md: --exhaustive with --dtype f32 sweeps all 2^32 x values (--all-f32 says it alone) */
    if (o->exhaustive && o->dtype_given && o->dtype_on[CF_F32]) o->exhaustive_f32 = true;
    return CFE_OK;
}

void cf_opts_free(cf_opts *o)
{
    free(o->pos);
    o->pos = NULL;
}

cf_status cf_load_constraints(const cf_opts *o, cz_constraints *cz[CF_OP_COUNT], cf_err *e)
{
    char err[512] = "";
    const char *dir = o->constraints[0] ? o->constraints : "constraints";
    if (!o->constraints[0] && !cf_is_dir(dir)) dir = ACLCONFORM_SOURCE_DIR "/constraints";
    fz_status s = cz_load_dir(dir, cz, err, sizeof err);
    if (s != FZ_OK) return cf_fail(e, s == FZ_ERR_NOMEM ? CFE_IO : CFE_INPUT, "%s", err);
    return CFE_OK;
}

cf_status cf_tolerance_for(cz_constraints *const *cz, const cf_case *c, const char *profile,
                           const char *variant, bool strict_zero, cf_tol *tol, cf_err *e)
{
    cf_dtype dt = CF_F32;
    for (int i = 0; i < c->ntensors; i++)
        if (c->tensors[i].output && c->tensors[i].present) {
            dt = c->tensors[i].dtype;
            break;
        }
    tol->strict_zero = strict_zero;
    if (cz_tolerance(cz[c->op], profile, dt, variant, &tol->max_ulp, &tol->max_scaled_ulp) != FZ_OK)
        return cf_fail(e, CFE_INPUT, "%s: no tolerance for %s %s (profile %s)", cz_path(cz[c->op]),
                       cf_op_name(c->op), cf_dtype_name(dt), profile);
    return CFE_OK;
}

cf_status cf_fill_masked(const cf_case *c, cf_expected *x, cf_err *e)
{
    if (!cf_adapters[c->op]->masked) return CFE_OK;
    for (int i = 0; i < x->nout; i++) {
        free(x->out[i].masked);
        x->out[i].masked = malloc((size_t)(x->out[i].n > 0 ? x->out[i].n : 1));
        if (!x->out[i].masked) return cf_fail(e, CFE_IO, "out of memory");
        cf_adapters[c->op]->masked(c, x->out[i].name, x->out[i].masked);
    }
    return CFE_OK;
}

cf_status cf_oracle_expected(const cf_case *c, const char *profile, cf_expected *x, cf_err *e)
{
    bool f64 = false;
    for (int i = 0; i < c->ntensors; i++) f64 |= c->tensors[i].output && c->tensors[i].dtype == CF_F64;
    cf_status st = cf_expected_alloc(x, c, f64, e);
    if (st) return st;
    orc_profile p = strcmp(profile, "cann-kernel") == 0 ? ORC_PROFILE_CANN_KERNEL : ORC_PROFILE_SPEC;
    int rc = cf_adapters[c->op]->oracle(c, p, x);
    if (rc != ORC_OK) {
        cf_expected_free(x);
        return cf_fail(e, CFE_IO, "oracle failed (%d) on a %s case", rc, cf_op_name(c->op));
    }
    return cf_fill_masked(c, x, e);
}

void cf_case_stream_key(cz_constraints *const *cz, const cf_case *c, const char *profile, cf_dtype *dt,
                        char variant[FZ_VARIANT_LEN])
{
    fz_stream streams[64];
    const char *names[64];
    int n = fz_streams(cz[c->op], profile, streams, 64), k = 0;
    for (int i = 0; i < n && i < 64; i++) {
        bool dup = false;
        for (int j = 0; j < k; j++) dup |= strcmp(names[j], streams[i].variant) == 0;
        if (!dup && streams[i].variant[0]) names[k++] = streams[i].variant;
    }
    const char *v;
    cf_case_row_key(c, names, k, dt, &v);
    snprintf(variant, FZ_VARIANT_LEN, "%s", v);
}

cf_status cf_write_report(const char *path, cJSON *report, cf_err *e)
{
    char *text = cJSON_Print(report);
    if (!text) return cf_fail(e, CFE_IO, "%s: out of memory", path);
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    cf_status st = CFE_OK;
    if (slash) {
        *slash = '\0';
        st = cf_mkdirs(dir, e);
    }
    if (!st) st = cf_write_atomic(path, text, strlen(text), e);
    free(text);
    return st;
}

cJSON *cf_report_new(const char *command, const cf_opts *o, double seconds, int64_t cases, const char *started)
{
    cJSON *r = cJSON_CreateObject();
    cJSON_AddNumberToObject(r, "schema", 1);
    cJSON *tool = cJSON_AddObjectToObject(r, "tool");
    cJSON_AddStringToObject(tool, "name", CF_TOOL_NAME);
    cJSON_AddStringToObject(tool, "version", CF_TOOL_VERSION);
    cJSON *run = cJSON_AddObjectToObject(r, "run");
    cJSON_AddStringToObject(run, "command", command);
    char buf[64];
    snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)o->seed);
    cJSON_AddStringToObject(run, "seed", buf);
    cJSON_AddStringToObject(run, "target", o->target);
    cJSON_AddStringToObject(run, "profile", o->profile);
    snprintf(buf, sizeof buf, "%d/%d", o->shard_k, o->shard_n);
    cJSON_AddStringToObject(run, "shard", buf);
    cJSON_AddStringToObject(run, "started", started);
    cJSON_AddNumberToObject(run, "seconds", round(seconds * 10) / 10);
    cJSON_AddNumberToObject(run, "cases", (double)cases);
    return r;
}

void cf_print_summary(FILE *f, cf_row *const *rows, int nrows)
{
    fprintf(f, "%-31s %-5s %-17s %8s %10s %10s %9s %10s %6s %s\n", "op", "dtype", "variant", "cases",
            "elements", "max_ulp", "mean_ulp", "max_scaled", "mism.", "verdict");
    for (int i = 0; i < nrows; i++) {
        const cf_row *r = rows[i];
        int64_t mm = 0;
        for (int k = 0; k < CF_MM_COUNT; k++) mm += r->mismatches[k];
        fprintf(f, "%-31s %-5s %-17s %8lld %10lld %10.4g %9.4f %10.4g %6lld %s\n", r->op,
                cf_dtype_name(r->dtype), r->variant[0] ? r->variant : "-", (long long)r->cases,
                (long long)r->elements, r->max_ulp, cf_row_mean_ulp(r), r->max_scaled_ulp,
                (long long)mm, cf_row_verdict(r));
    }
}

bool cf_stderr_is_tty(void) { return isatty(2) != 0; }
