#include "report.h"

#include <inttypes.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"

/* ---- reading reports: every field merge and report use is typed and in range ---- */

#define COUNT_MAX 0x1p53 /* counts are exact integers in a double */

bool cf_json_int_in(const cJSON *v, double lo, double hi)
{
    return cJSON_IsNumber(v) && isfinite(v->valuedouble) && v->valuedouble == floor(v->valuedouble) && v->valuedouble >= lo &&
           v->valuedouble <= hi;
}

/* A count: an integer in [0, 2^53]; absent allowed when optional. */
static cf_status need_count(const char *path, const char *where, const cJSON *o, const char *key, bool optional, cf_err *e)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v && optional) return CFE_OK;
    if (!cf_json_int_in(v, 0, COUNT_MAX)) return cf_fail(e, CFE_INPUT, "%s: field '%s.%s': expected a count (an integer in 0 .. 2^53)", path, where, key);
    return CFE_OK;
}

static cf_status need_string(const char *path, const char *where, const cJSON *o, const char *key, bool optional, cf_err *e)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v && optional) return CFE_OK;
    if (!cJSON_IsString(v)) return cf_fail(e, CFE_INPUT, "%s: field '%s.%s': expected a string", path, where, key);
    return CFE_OK;
}

static cf_status need_bool(const char *path, const char *where, const cJSON *o, const char *key, cf_err *e)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (v && !cJSON_IsBool(v)) return cf_fail(e, CFE_INPUT, "%s: field '%s%s%s': expected true or false", path, where, where[0] ? "." : "", key);
    return CFE_OK;
}

/* A non-negative number (ULP maxima and sums): finite, or the strings "inf" / "nan" the writer
 * uses for what JSON cannot carry. */
static cf_status need_nonneg(const char *path, const char *where, const cJSON *o, const char *key, bool optional, cf_err *e)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v && optional) return CFE_OK;
    bool ok = cJSON_IsNumber(v) ? isfinite(v->valuedouble) && v->valuedouble >= 0
                                : cJSON_IsString(v) && (!strcmp(v->valuestring, "inf") || !strcmp(v->valuestring, "nan"));
    if (!ok) return cf_fail(e, CFE_INPUT, "%s: field '%s.%s': expected a non-negative number (or \"inf\", \"nan\")", path, where, key);
    return CFE_OK;
}

/* results[i].worst and .worst_finite: absent, null, or an object of typed fields */
static cf_status check_worst(const char *path, const char *w, const cJSON *o, const char *key, cf_err *e)
{
    char tw[64];
    cf_status st;
    const cJSON *wo = cJSON_GetObjectItemCaseSensitive(o, key);
    snprintf(tw, sizeof tw, "%s.%s", w, key);
    if (!wo || cJSON_IsNull(wo)) return CFE_OK;
    if (!cJSON_IsObject(wo)) return cf_fail(e, CFE_INPUT, "%s: field '%s': expected an object or null", path, tw);
    if ((st = need_string(path, tw, wo, "case", true, e)) || (st = need_string(path, tw, wo, "got", true, e)) ||
        (st = need_count(path, tw, wo, "case_index", true, e)) || (st = need_count(path, tw, wo, "flat_element", true, e)) ||
        (st = need_nonneg(path, tw, wo, "ulp", true, e)))
        return st;
    const cJSON *ex = cJSON_GetObjectItemCaseSensitive(wo, "expected");
    bool exok = !ex || cJSON_IsNumber(ex) || cJSON_IsNull(ex) ||
                (cJSON_IsString(ex) && (!strcmp(ex->valuestring, "inf") || !strcmp(ex->valuestring, "-inf") || !strcmp(ex->valuestring, "nan") ||
                                        !strcmp(ex->valuestring, "-0")));
    if (!exok) return cf_fail(e, CFE_INPUT, "%s: field '%s.expected': expected a number (or \"inf\", \"-inf\", \"nan\", \"-0\")", path, tw);
    return CFE_OK;
}

static cf_status check_row(const char *path, int i, const cJSON *o, cf_err *e)
{
    char w[48];
    snprintf(w, sizeof w, "results[%d]", i);
    if (!cJSON_IsObject(o)) return cf_fail(e, CFE_INPUT, "%s: field '%s': expected an object", path, w);
    cf_status st;
    const cJSON *op = cJSON_GetObjectItemCaseSensitive(o, "op");
    cf_op opv;
    if (!cJSON_IsString(op) || !cf_op_parse(op->valuestring, &opv))
        return cf_fail(e, CFE_INPUT, "%s: field '%s.op': expected an operator name", path, w);
    static const char *const counts[] = {"cases", "failed_cases", "elements", "scored", "uncertain", "failed_elements", "rel_over_threshold", NULL};
    for (int k = 0; counts[k]; k++)
        if ((st = need_count(path, w, o, counts[k], false, e))) return st;
    if (cJSON_GetObjectItemCaseSensitive(o, "failed_cases")->valuedouble > cJSON_GetObjectItemCaseSensitive(o, "cases")->valuedouble)
        return cf_fail(e, CFE_INPUT, "%s: field '%s.failed_cases': more than 'cases'", path, w);
    if ((st = need_string(path, w, o, "variant", true, e)) || (st = need_string(path, w, o, "verdict", true, e)) ||
        (st = need_nonneg(path, w, o, "max_ulp", false, e)) || (st = need_nonneg(path, w, o, "sum_ulp", false, e)) ||
        (st = need_nonneg(path, w, o, "max_scaled_ulp", false, e)))
        return st;
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(o, "histogram"), *hc = cJSON_GetObjectItemCaseSensitive(h, "counts"), *it;
    if (!cJSON_IsArray(hc) || cJSON_GetArraySize(hc) != CF_HIST_BINS)
        return cf_fail(e, CFE_INPUT, "%s: field '%s.histogram.counts': expected %d counts", path, w, CF_HIST_BINS);
    int k = 0;
    cJSON_ArrayForEach(it, hc)
    {
        if (!cf_json_int_in(it, 0, COUNT_MAX)) return cf_fail(e, CFE_INPUT, "%s: field '%s.histogram.counts[%d]': expected a count", path, w, k);
        k++;
    }
    const cJSON *mm = cJSON_GetObjectItemCaseSensitive(o, "mismatches");
    if (!cJSON_IsObject(mm)) return cf_fail(e, CFE_INPUT, "%s: field '%s.mismatches': expected an object", path, w);
    cJSON_ArrayForEach(it, mm)
    if (!cf_json_int_in(it, 0, COUNT_MAX))
        return cf_fail(e, CFE_INPUT, "%s: field '%s.mismatches.%s': expected a count", path, w, it->string ? it->string : "?");
    const cJSON *tol = cJSON_GetObjectItemCaseSensitive(o, "tolerance");
    char tw[64];
    snprintf(tw, sizeof tw, "%s.tolerance", w);
    if (!cJSON_IsObject(tol)) return cf_fail(e, CFE_INPUT, "%s: field '%s': expected an object", path, tw);
    if ((st = need_nonneg(path, tw, tol, "max_ulp", false, e)) || (st = need_nonneg(path, tw, tol, "max_scaled_ulp", false, e))) return st;
    const cJSON *sb = cJSON_GetObjectItemCaseSensitive(o, "single_bm");
    snprintf(tw, sizeof tw, "%s.single_bm", w);
    if (sb && !cJSON_IsObject(sb)) return cf_fail(e, CFE_INPUT, "%s: field '%s': expected an object", path, tw);
    if (sb && ((st = need_nonneg(path, tw, sb, "sum_rel", true, e)) || (st = need_nonneg(path, tw, sb, "mare", true, e)))) return st;
    if ((st = check_worst(path, w, o, "worst", e)) || (st = check_worst(path, w, o, "worst_finite", e))) return st;
    const cJSON *ids = cJSON_GetObjectItemCaseSensitive(o, "failed_cases_ids");
    if (ids && !cJSON_IsArray(ids)) return cf_fail(e, CFE_INPUT, "%s: field '%s.failed_cases_ids': expected an array of strings", path, w);
    cJSON_ArrayForEach(it, ids)
    if (!cJSON_IsString(it)) return cf_fail(e, CFE_INPUT, "%s: field '%s.failed_cases_ids': expected an array of strings", path, w);
    return CFE_OK;
}

/* The whole report: what merge, report and the CI read must be what the sweep wrote (types,
 * integer counts in range, known operators); unknown extra fields are allowed (newer writers). */
static cf_status check_report(const char *path, const cJSON *r, cf_err *e)
{
    if (!cJSON_IsObject(r)) return cf_fail(e, CFE_INPUT, "%s: expected a JSON object", path);
    if (!cf_json_int_in(cJSON_GetObjectItemCaseSensitive(r, "schema"), 1, 1)) return cf_fail(e, CFE_INPUT, "%s: field 'schema': expected 1", path);
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(r, "run"), *it;
    if (!cJSON_IsObject(run)) return cf_fail(e, CFE_INPUT, "%s: field 'run': expected an object", path);
    cf_status st;
    const cJSON *results = cJSON_GetObjectItemCaseSensitive(r, "results");
    if (!cJSON_IsArray(results)) return cf_fail(e, CFE_INPUT, "%s: field 'results': expected an array", path);
    int i = 0;
    cJSON_ArrayForEach(it, results)
    if ((st = check_row(path, i++, it, e))) return st;
    const cJSON *sc = cJSON_GetObjectItemCaseSensitive(r, "status_checks");
    if (sc && !cJSON_IsArray(sc)) return cf_fail(e, CFE_INPUT, "%s: field 'status_checks': expected an array", path);
    i = 0;
    cJSON_ArrayForEach(it, sc)
    {
        char w[48];
        snprintf(w, sizeof w, "status_checks[%d]", i++);
        if (!cJSON_IsObject(it)) return cf_fail(e, CFE_INPUT, "%s: field '%s': expected an object", path, w);
        if ((st = need_string(path, w, it, "op", false, e)) || (st = need_string(path, w, it, "rule", false, e)) ||
            (st = need_count(path, w, it, "cases", false, e)) || (st = need_count(path, w, it, "mismatches", false, e)) ||
            (st = need_string(path, w, it, "example", true, e)))
            return st;
        if (!cf_json_int_in(cJSON_GetObjectItemCaseSensitive(it, "expected"), INT32_MIN, INT32_MAX))
            return cf_fail(e, CFE_INPUT, "%s: field '%s.expected': expected an int32 status", path, w);
    }
    const cJSON *fl = cJSON_GetObjectItemCaseSensitive(r, "failures");
    if (fl && !cJSON_IsArray(fl)) return cf_fail(e, CFE_INPUT, "%s: field 'failures': expected an array of strings", path);
    cJSON_ArrayForEach(it, fl)
    if (!cJSON_IsString(it)) return cf_fail(e, CFE_INPUT, "%s: field 'failures': expected an array of strings", path);
    /* the run last: a bad row is named before a missing run field */
    static const char *const strs[] = {"command", "seed", "target", "profile", "shard", NULL};
    for (int k = 0; strs[k]; k++)
        if ((st = need_string(path, "run", run, strs[k], false, e))) return st;
    if ((st = need_string(path, "run", run, "started", true, e)) || (st = need_count(path, "run", run, "cases", false, e)) ||
        (st = need_nonneg(path, "run", run, "seconds", true, e)) || (st = need_bool(path, "", r, "partial", e)) ||
        (st = need_bool(path, "", r, "interrupted", e)) || (st = need_count(path, "", r, "unsupported", true, e)))
        return st;
    return CFE_OK;
}

cf_status cf_report_parse(const char *path, const char *text, size_t len, cJSON **root, cf_row **rows, int *nrows, cf_err *e)
{
    *root = NULL;
    *rows = NULL;
    *nrows = 0;
    cJSON *r = cf_json_parse_strict(path, text, len, e);
    if (!r) return CFE_INPUT;
    cf_status st = check_report(path, r, e);
    const cJSON *results = cJSON_GetObjectItemCaseSensitive(r, "results");
    int n = st ? 0 : cJSON_GetArraySize(results);
    cf_row *rs = st ? NULL : calloc((size_t)(n ? n : 1), sizeof(cf_row));
    if (!st && !rs) st = cf_fail(e, CFE_IO, "out of memory");
    for (int i = 0; i < n && !st; i++) st = cf_row_from_json(cJSON_GetArrayItem(results, i), path, i, &rs[i], e);
    if (st) {
        cf_rows_free(rs, n);
        cJSON_Delete(r);
        return st;
    }
    *root = r;
    *rows = rs;
    *nrows = n;
    return CFE_OK;
}

cf_status cf_report_read(const char *path, cJSON **root, cf_row **rows, int *nrows, cf_err *e)
{
    *root = NULL;
    *rows = NULL;
    *nrows = 0;
    char *text;
    size_t len;
    cf_status st = cf_read_file(path, &text, &len, e);
    if (st) return st;
    st = cf_report_parse(path, text, len, root, rows, nrows, e);
    free(text);
    return st;
}

/* ---- writing reports ---- */

static cf_status write_report(const char *path, cJSON *report, bool replace, cf_err *e)
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
    if (!st) st = replace ? cf_write_atomic(path, text, strlen(text), e) : cf_write_atomic_new(path, text, strlen(text), e);
    free(text);
    return st;
}

cf_status cf_write_report(const char *path, cJSON *report, cf_err *e) { return write_report(path, report, true, e); }

cf_status cf_write_report_new(const char *path, cJSON *report, cf_err *e) { return write_report(path, report, false, e); }

/* The machine a run ran on, for the report's words: CPU model, cores, OS and architecture. */
static cJSON *host_json(void)
{
    cJSON *h = cJSON_CreateObject();
    char cpu[160] = "unknown", line[512];
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
            const char *v = strchr(line, ':') + 1;
            while (*v == ' ' || *v == '\t') v++;
            snprintf(cpu, sizeof cpu, "%.*s", (int)strcspn(v, "\n"), v);
            break;
        }
    if (f) fclose(f);
    cJSON_AddStringToObject(h, "cpu", cpu);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    cJSON_AddNumberToObject(h, "cores", n > 0 ? (double)n : 0);
    struct utsname u;
    if (uname(&u) == 0) {
        char os[200];
        snprintf(os, sizeof os, "%s %s", u.sysname, u.release);
        cJSON_AddStringToObject(h, "os", os);
        cJSON_AddStringToObject(h, "arch", u.machine);
    }
    return h;
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
    cJSON_AddItemToObject(run, "host", host_json());
    return r;
}

void cf_print_summary(FILE *f, const cf_row *rows, int nrows)
{
    fprintf(f, "%-31s %-5s %-17s %8s %10s %10s %10s %10s %6s %s\n", "op", "dtype", "variant", "cases",
            "elements", "max_ulp", "mean_ulp", "max_scaled", "mism.", "verdict");
    for (int i = 0; i < nrows; i++) {
        const cf_row *r = &rows[i];
        int64_t mm = 0;
        for (int k = 0; k < CF_MM_COUNT; k++) mm += r->mismatches[k];
        fprintf(f, "%-31s %-5s %-17s %8lld %10lld %10.4g %10.4g %10.4g %6lld %s\n", r->op,
                cf_dtype_name(r->dtype), r->variant[0] ? r->variant : "-", (long long)r->cases,
                (long long)r->elements, r->max_ulp, cf_row_mean_ulp(r), r->max_scaled_ulp,
                (long long)mm, cf_row_verdict(r));
    }
}
