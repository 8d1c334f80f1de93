#include "report.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "npy.h"

/* ---- reading reports: every field merge and report use is typed and in range ---- */

#define COUNT_MAX 0x1p53 /* counts are exact integers in a double */

static bool jint(const cJSON *v, double lo, double hi)
{
    return cJSON_IsNumber(v) && isfinite(v->valuedouble) && v->valuedouble == floor(v->valuedouble) && v->valuedouble >= lo &&
           v->valuedouble <= hi;
}

/* A count: an integer in [0, 2^53]; absent allowed when optional. */
static cf_status need_count(const char *path, const char *where, const cJSON *o, const char *key, bool optional, cf_err *e)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v && optional) return CFE_OK;
    if (!jint(v, 0, COUNT_MAX)) return cf_fail(e, CFE_INPUT, "%s: field '%s.%s': expected a count (an integer in 0 .. 2^53)", path, where, key);
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
        if (!jint(it, 0, COUNT_MAX)) return cf_fail(e, CFE_INPUT, "%s: field '%s.histogram.counts[%d]': expected a count", path, w, k);
        k++;
    }
    const cJSON *mm = cJSON_GetObjectItemCaseSensitive(o, "mismatches");
    if (!cJSON_IsObject(mm)) return cf_fail(e, CFE_INPUT, "%s: field '%s.mismatches': expected an object", path, w);
    cJSON_ArrayForEach(it, mm)
    if (!jint(it, 0, COUNT_MAX))
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
    const cJSON *wo = cJSON_GetObjectItemCaseSensitive(o, "worst");
    snprintf(tw, sizeof tw, "%s.worst", w);
    if (wo && !cJSON_IsNull(wo)) {
        if (!cJSON_IsObject(wo)) return cf_fail(e, CFE_INPUT, "%s: field '%s': expected an object or null", path, tw);
        if ((st = need_string(path, tw, wo, "case", true, e)) || (st = need_string(path, tw, wo, "got", true, e)) ||
            (st = need_count(path, tw, wo, "case_index", true, e)) || (st = need_count(path, tw, wo, "flat_element", true, e)))
            return st;
        const cJSON *ex = cJSON_GetObjectItemCaseSensitive(wo, "expected");
        bool exok = !ex || cJSON_IsNumber(ex) || cJSON_IsNull(ex) ||
                    (cJSON_IsString(ex) && (!strcmp(ex->valuestring, "inf") || !strcmp(ex->valuestring, "-inf") || !strcmp(ex->valuestring, "nan") ||
                                            !strcmp(ex->valuestring, "-0")));
        if (!exok) return cf_fail(e, CFE_INPUT, "%s: field '%s.expected': expected a number (or \"inf\", \"-inf\", \"nan\", \"-0\")", path, tw);
    }
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
    if (!jint(cJSON_GetObjectItemCaseSensitive(r, "schema"), 1, 1)) return cf_fail(e, CFE_INPUT, "%s: field 'schema': expected 1", path);
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
        if (!jint(cJSON_GetObjectItemCaseSensitive(it, "expected"), INT32_MIN, INT32_MAX))
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
    cJSON *r = cJSON_ParseWithLength(text, len);
    if (!r) return cf_fail(e, CFE_INPUT, "%s: not valid JSON", path);
    cf_status st = check_report(path, r, e);
    const cJSON *results = cJSON_GetObjectItemCaseSensitive(r, "results");
    int n = st ? 0 : cJSON_GetArraySize(results);
    cf_row *rs = st ? NULL : calloc((size_t)(n ? n : 1), sizeof(cf_row));
    if (!st && !rs) st = cf_fail(e, CFE_IO, "out of memory");
    for (int i = 0; i < n && !st; i++) st = cf_row_from_json(cJSON_GetArrayItem(results, i), path, i, &rs[i], e);
    if (st) {
        free(rs);
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

/* ---- merge ---- */

/* Set obj[key] = item, replacing or adding.  The lookup is case-sensitive like the replace:
 * cJSON_HasObjectItem is not, so a report with "examplE" made the replace fail and leak item
 * (found by the fuzz_report harness). */
static void set_field(cJSON *obj, const char *key, cJSON *item)
{
    if (!cJSON_GetObjectItemCaseSensitive(obj, key)) cJSON_AddItemToObject(obj, key, item);
    else if (!cJSON_ReplaceItemInObjectCaseSensitive(obj, key, item)) cJSON_Delete(item);
}

#define SHARDS_MAX (1 << 20)

/* run.shard of a report: "k/n" for a sweep, "k/n,k/n,..." for a merge of several (all with
 * the same n, 0 <= k < n <= 2^20).  Calls add(k) for each; *n_out is n. */
static cf_status parse_shards(const char *path, const char *s, int *n_out, int *ks, int *nk, int maxk, cf_err *e)
{
    int n = 0;
    *nk = 0;
    const char *p = s;
    do {
        char *end;
        if (*p < '0' || *p > '9') goto bad;
        long k = strtol(p, &end, 10);
        if (*end != '/' || end[1] < '0' || end[1] > '9') goto bad;
        long nn = strtol(end + 1, &end, 10);
        if (nn < 1 || nn > SHARDS_MAX || k < 0 || k >= nn || (n && nn != n) || (*end && (*end != ',' || !end[1]))) goto bad;
        n = (int)nn;
        if (*nk >= maxk) goto bad;
        ks[(*nk)++] = (int)k;
        p = *end ? end + 1 : end;
    } while (*p);
    *n_out = n;
    return CFE_OK;
bad:
    return cf_fail(e, CFE_INPUT, "%s: field 'run.shard': \"%.60s\" is not k/n (or k/n,k/n,... with one n, 0 <= k < n <= %d)", path, s, SHARDS_MAX);
}

/* The run fields every shard of one run shares: merging reports of different runs would add up
 * results that were never one experiment. */
static const char *const SAME_RUN[] = {"seed", "target", "profile", "budget", NULL};

int cmd_merge(const cf_opts *o)
{
    cf_err e = {{0}};
    if (o->npos < 1 || !o->output) {
        fprintf(stderr, "aclnn-conform merge: usage: merge A.json B.json... -o OUT.json [--partial]\n");
        return CFE_INPUT;
    }
    cf_row *all = NULL;
    int nall = 0;
    cJSON *status = cJSON_CreateArray(), *failures = cJSON_CreateArray(), *first = NULL;
    double seconds = 0, cases = 0, unsupported = 0;
    bool any_partial = false, any_interrupted = false, any_unsupported = false;
    cf_status st = CFE_OK;
    int nshards = 0, *owner = NULL, *ks = NULL, nk = 0;
    const char *first_path = NULL;
    for (int i = 0; i < o->npos && !st; i++) {
        cJSON *root;
        cf_row *rows;
        int n;
        if ((st = cf_report_read(o->pos[i], &root, &rows, &n, &e))) break;
        const cJSON *run = cJSON_GetObjectItemCaseSensitive(root, "run");
        /* one run: same seed, target, profile (and budget when recorded) as the first report */
        for (int k = 0; SAME_RUN[k] && first && !st; k++) {
            const cJSON *a = cJSON_GetObjectItemCaseSensitive(first, SAME_RUN[k]), *b = cJSON_GetObjectItemCaseSensitive(run, SAME_RUN[k]);
            char *ta = a ? cJSON_PrintUnformatted(a) : NULL, *tb = b ? cJSON_PrintUnformatted(b) : NULL;
            if ((ta || tb) && (!ta || !tb || strcmp(ta, tb)))
                st = cf_fail(&e, CFE_INPUT, "%s: field 'run.%s': %.80s, but %s has %.80s (shards of different runs are not merged)", o->pos[i],
                             SAME_RUN[k], tb ? tb : "(absent)", first_path, ta ? ta : "(absent)");
            free(ta);
            free(tb);
        }
        /* every shard once: a duplicate would count its cases twice */
        int sn = 0, maxk = 1;
        const char *shs = cJSON_GetObjectItemCaseSensitive(run, "shard")->valuestring;
        for (const char *q = shs; *q; q++) maxk += *q == ',';
        if (!st) {
            int *nks = realloc(ks, sizeof(int) * (size_t)maxk);
            if (!nks) st = cf_fail(&e, CFE_IO, "out of memory");
            else ks = nks;
        }
        if (!st) st = parse_shards(o->pos[i], shs, &sn, ks, &nk, maxk, &e);
        if (!st && !owner) {
            nshards = sn;
            owner = malloc(sizeof(int) * (size_t)sn);
            if (!owner) st = cf_fail(&e, CFE_IO, "out of memory");
            for (int k = 0; owner && k < sn; k++) owner[k] = -1;
        } else if (!st && sn != nshards) {
            st = cf_fail(&e, CFE_INPUT, "%s: field 'run.shard': shards of %d, but %s has shards of %d", o->pos[i], sn, first_path, nshards);
        }
        for (int k = 0; k < nk && !st; k++) {
            if (owner[ks[k]] >= 0)
                st = cf_fail(&e, CFE_INPUT, "%s: duplicate shard %d/%d (already in %s): refusing to count its results twice", o->pos[i], ks[k],
                             nshards, o->pos[owner[ks[k]]]);
            else owner[ks[k]] = i;
        }
        cf_row *na = st ? NULL : realloc(all, sizeof(cf_row) * (size_t)(nall + n + 1));
        if (!st && !na) st = cf_fail(&e, CFE_IO, "out of memory");
        if (st) {
            free(rows);
            cJSON_Delete(root);
            break;
        }
        all = na;
        for (int k = 0; k < n; k++) { /* merge into the row with the same key, else append */
            int j = 0;
            while (j < nall && !(strcmp(all[j].op, rows[k].op) == 0 && all[j].dtype == rows[k].dtype && strcmp(all[j].variant, rows[k].variant) == 0)) j++;
            if (j == nall) all[nall++] = rows[k];
            else cf_row_merge(&all[j], &rows[k]);
        }
        seconds += cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(run, "seconds")) ? cJSON_GetObjectItemCaseSensitive(run, "seconds")->valuedouble : 0;
        cases += cJSON_GetObjectItemCaseSensitive(run, "cases")->valuedouble;
        /* an input that lacked shards is complete again once they are merged in (the shard set
         * is tracked exactly); one partial for another reason stays partial */
        any_partial |= cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "partial")) &&
                       !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(root, "missing_shards"));
        any_interrupted |= cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "interrupted"));
        const cJSON *un = cJSON_GetObjectItemCaseSensitive(root, "unsupported");
        if (un) any_unsupported = true, unsupported += un->valuedouble;
        const cJSON *sc = cJSON_GetObjectItemCaseSensitive(root, "status_checks"), *it;
        cJSON_ArrayForEach(it, sc)
        {
            const cJSON *op = cJSON_GetObjectItemCaseSensitive(it, "op"), *rule = cJSON_GetObjectItemCaseSensitive(it, "rule");
            cJSON *m = NULL, *x;
            cJSON_ArrayForEach(x, status)
            if (!strcmp(cJSON_GetObjectItemCaseSensitive(x, "op")->valuestring, op->valuestring) &&
                !strcmp(cJSON_GetObjectItemCaseSensitive(x, "rule")->valuestring, rule->valuestring)) m = x;
            if (!m) {
                cJSON_AddItemToArray(status, cJSON_Duplicate(it, true));
                continue;
            }
            const char *keys[] = {"cases", "mismatches"};
            for (int k = 0; k < 2; k++) {
                cJSON *dst = cJSON_GetObjectItemCaseSensitive(m, keys[k]);
                const cJSON *src = cJSON_GetObjectItemCaseSensitive(it, keys[k]);
                cJSON_SetNumberValue(dst, dst->valuedouble + src->valuedouble);
            }
            const cJSON *ex = cJSON_GetObjectItemCaseSensitive(m, "example"), *sex = cJSON_GetObjectItemCaseSensitive(it, "example");
            if ((!cJSON_IsString(ex) || !ex->valuestring[0]) && cJSON_IsString(sex))
                set_field(m, "example", cJSON_CreateString(sex->valuestring));
        }
        const cJSON *fl = cJSON_GetObjectItemCaseSensitive(root, "failures");
        cJSON_ArrayForEach(it, fl) cJSON_AddItemToArray(failures, cJSON_Duplicate(it, true));
        if (!first) {
            first = cJSON_Duplicate(run, true);
            first_path = o->pos[i];
        }
        free(rows);
        cJSON_Delete(root);
    }
    /* the shard set must be complete (0/n .. n-1/n) unless --partial */
    size_t cap = (size_t)nshards * 24 + 1;
    char *shards = calloc(cap, 1), *missing = calloc(cap, 1);
    int nmissing = 0;
    if (!st && (!shards || !missing)) st = cf_fail(&e, CFE_IO, "out of memory");
    for (int k = 0; !st && k < nshards; k++) {
        char *dst = owner[k] >= 0 ? shards : missing;
        size_t l = strlen(dst);
        if (owner[k] < 0) nmissing++;
        snprintf(dst + l, cap - l, "%s%d/%d", l ? "," : "", k, nshards);
    }
    if (!st && nmissing && !o->partial)
        st = cf_fail(&e, CFE_INPUT, "missing %d of %d shards: %.300s%s (merge them too, or pass --partial to merge an incomplete set, marked \"partial\": true)",
                     nmissing, nshards, missing, strlen(missing) > 300 ? "..." : "");
    int rc = st;
    if (!st) {
        cJSON *rep = cJSON_CreateObject();
        cJSON_AddNumberToObject(rep, "schema", 1);
        cJSON *tool = cJSON_AddObjectToObject(rep, "tool");
        cJSON_AddStringToObject(tool, "name", CF_TOOL_NAME);
        cJSON_AddStringToObject(tool, "version", CF_TOOL_VERSION);
        set_field(first, "command", cJSON_CreateString("merge"));
        set_field(first, "shard", cJSON_CreateString(shards));
        set_field(first, "seconds", cJSON_CreateNumber(seconds));
        set_field(first, "cases", cJSON_CreateNumber(cases));
        cJSON_AddItemToObject(rep, "run", first);
        first = NULL;
        bool partial = nmissing > 0 || any_partial;
        cJSON_AddBoolToObject(rep, "partial", partial);
        if (nmissing) cJSON_AddStringToObject(rep, "missing_shards", missing);
        if (any_interrupted) cJSON_AddBoolToObject(rep, "interrupted", true);
        if (any_unsupported) cJSON_AddNumberToObject(rep, "unsupported", unsupported);
        cJSON *results = cJSON_AddArrayToObject(rep, "results");
        bool fail = false;
        for (int i = 0; i < nall; i++) {
            cJSON_AddItemToArray(results, cf_row_to_json(&all[i]));
            fail |= all[i].failed_cases > 0;
        }
        cJSON *x;
        cJSON_ArrayForEach(x, status) fail |= cJSON_GetObjectItemCaseSensitive(x, "mismatches")->valuedouble > 0;
        cJSON_AddItemToObject(rep, "status_checks", status);
        cJSON_AddItemToObject(rep, "failures", failures);
        status = failures = NULL;
        st = cf_write_report(o->output, rep, &e);
        cJSON_Delete(rep);
        if (!st) {
            cf_row *rp[512];
            for (int i = 0; i < nall && i < 512; i++) rp[i] = &all[i];
            if (!o->quiet) cf_print_summary(stdout, rp, nall < 512 ? nall : 512);
            if (partial)
                fprintf(stderr, "aclnn-conform merge: PARTIAL: %s%.300s; the report is marked \"partial\": true\n",
                        nmissing ? "missing shards " : "an input report is partial", nmissing ? missing : "");
            printf("merged %d reports (%d of %d shards) into %s%s\n", o->npos, nshards - nmissing, nshards, o->output, partial ? " (partial)" : "");
        }
        rc = st ? st : (fail ? CFE_FAIL : CFE_OK);
    }
    if (rc >= CFE_INPUT) fprintf(stderr, "aclnn-conform merge: %s\n", e.msg);
    cJSON_Delete(status);
    cJSON_Delete(failures);
    cJSON_Delete(first);
    free(all);
    free(owner);
    free(ks);
    free(shards);
    free(missing);
    return rc;
}

/* ---- export / score: out-of-process targets (abi.md) ---- */

int cmd_export(const cf_opts *o)
{
    cf_err e = {{0}};
    cz_constraints *cz[CF_OP_COUNT] = {0};
    cf_status st = cf_load_constraints(o, cz, &e);
    if (st) {
        fprintf(stderr, "aclnn-conform export: %s\n", e.msg);
        return st;
    }
    int64_t per_stream = o->cases ? o->cases : 20, written = 0;
    for (int op = 0; op < CF_OP_COUNT && !st; op++) {
        if (!o->op_on[op]) continue;
        fz_stream s[64];
        int n = fz_streams(cz[op], o->profile, s, 64);
        int nr = fz_rule_count(cz[op], o->profile);
        for (int i = -1; i < n && i < 64 && !st; i++) {
            if (i >= 0 && !o->dtype_on[s[i].dtype]) continue;
            int64_t count = i < 0 ? (int64_t)nr * o->invalid_cases : per_stream;
            for (int64_t k = 0; k < count && !st; k++) {
                if (k % o->shard_n != o->shard_k) continue;
                cf_case c;
                fz_status fs = i < 0 ? fz_generate_invalid(cz[op], o->profile, (int)(k % (nr ? nr : 1)), o->seed, k / (nr ? nr : 1), &c)
                                     : fz_generate(cz[op], o->profile, &s[i], o->seed, k, &c);
                if (fs != FZ_OK) {
                    st = cf_fail(&e, CFE_IO, "generator failed (%s)", fz_status_name(fs));
                    break;
                }
                snprintf(c.profile, sizeof c.profile, "%s", o->profile);
                int64_t elems = 0;
                for (int t = 0; t < c.ntensors; t++) elems += c.tensors[t].present ? cf_tensor_numel(&c.tensors[t]) : 0;
                if (o->max_elements && elems > o->max_elements) {
                    cf_case_free(&c);
                    continue;
                }
                cf_expected x = {0};
                if (c.expect_status == 0) st = cf_oracle_expected(&c, o->profile, &x, &e);
                char path[2048];
                if (!st) st = cf_case_write(o->out_dir, &c, &x, CF_TOOL_NAME " " CF_TOOL_VERSION, path, sizeof path, &e);
                written += !st;
                cf_expected_free(&x);
                cf_case_free(&c);
            }
        }
    }
    for (int i = 0; i < CF_OP_COUNT; i++) cz_free(cz[i]);
    if (!st) { /* the run that made these cases, for score's report */
        char path[2048], text[256];
        snprintf(path, sizeof path, "%s/export.json", o->out_dir);
        snprintf(text, sizeof text, "{\"seed\": \"0x%llx\", \"profile\": \"%s\", \"cases\": %lld}\n",
                 (unsigned long long)o->seed, o->profile, (long long)written);
        st = cf_write_atomic(path, text, strlen(text), &e);
    }
    if (st) {
        fprintf(stderr, "aclnn-conform export: %s\n", e.msg);
        return st;
    }
    printf("exported %lld cases to %s (seed 0x%llx); run the target, then: aclnn-conform score %s\n",
           (long long)written, o->out_dir, (unsigned long long)o->seed, o->out_dir);
    return CFE_OK;
}

/* Read result.json and got.<out>.npy of one exported case. */
static cf_status read_result(const char *dir, const cf_case *c, cf_run_result *r, bool *unsupported, cf_err *e)
{
    memset(r, 0, sizeof *r);
    *unsupported = false;
    char path[4096];
    snprintf(path, sizeof path, "%s/result.json", dir);
    cJSON *j;
    cf_status st = cf_read_json(path, &j, e);
    if (st) return st;
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(j, "status"), *err = cJSON_GetObjectItemCaseSensitive(j, "error");
    if (cJSON_IsNull(s)) {
        *unsupported = true;
        cJSON_Delete(j);
        return CFE_OK;
    }
    if (!jint(s, INT32_MIN, INT32_MAX)) {
        cJSON_Delete(j);
        return cf_fail(e, CFE_INPUT, "%s: field 'status': expected an int32 integer or null", path);
    }
    if (err && !cJSON_IsString(err) && !cJSON_IsNull(err)) {
        cJSON_Delete(j);
        return cf_fail(e, CFE_INPUT, "%s: field 'error': expected a string or null", path);
    }
    r->status = (int32_t)s->valuedouble;
    r->phase = 1;
    if (cJSON_IsString(err) && err->valuestring[0] && r->status == 0) snprintf(r->error, sizeof r->error, "%s", err->valuestring);
    cJSON_Delete(j);
    if (r->status != 0) return CFE_OK;
    for (int i = 0; i < c->ntensors && r->nout < 2; i++) {
        const cf_tensor *t = &c->tensors[i];
        if (!t->output || !t->present) continue;
        snprintf(path, sizeof path, "%s/got.%s.npy", dir, t->name);
        npy_array a;
        if ((st = npy_read(path, &a, e))) return st;
        bool shape_ok = a.ndim == t->ndim;
        for (int k = 0; shape_ok && k < a.ndim; k++) shape_ok = a.shape[k] == t->shape[k];
        if (!npy_descr_matches(a.descr, t->dtype) || !shape_ok) {
            npy_free(&a);
            return cf_fail(e, CFE_INPUT, "%s: expected '%s' in the output view's shape", path, npy_descr_for(t->dtype));
        }
        cf_run_out *ro = &r->out[r->nout++];
        snprintf(ro->name, sizeof ro->name, "%s", t->name);
        ro->dtype = t->dtype;
        ro->n = a.numel;
        ro->bits = a.data;
    }
    return CFE_OK;
}

int cmd_score(const cf_opts *o)
{
    cf_err e = {{0}};
    if (o->npos != 1) {
        fprintf(stderr, "aclnn-conform score: usage: score DIR (a directory written by export)\n");
        return CFE_INPUT;
    }
    cz_constraints *cz[CF_OP_COUNT] = {0};
    cf_status st = cf_load_constraints(o, cz, &e);
    char **dirs = NULL;
    int n = 0;
    if (!st) st = cf_collect_cases(o->pos[0], &dirs, &n, &e);
    if (st) {
        fprintf(stderr, "aclnn-conform score: %s\n", e.msg);
        for (int i = 0; i < CF_OP_COUNT; i++) cz_free(cz[i]);
        return st;
    }
    int nrows = 0, rcap = 8; /* rows grow as keys appear (each is ~0.1 MB with its error plot) */
    cf_row *rows = calloc((size_t)rcap, sizeof(cf_row));
    int64_t unsupported = 0, failed = 0, status_cases = 0, status_mm = 0, scored = 0, unscorable = 0;
    cJSON *failures = cJSON_CreateArray();
    time_t wall = time(NULL);
    char started[32];
    strftime(started, sizeof started, "%Y-%m-%dT%H:%M:%SZ", gmtime(&wall));
    for (int i = 0; i < n && rows; i++) {
        cf_err ce = {{0}};
        cf_case c;
        cf_expected x;
        cf_run_result r;
        memset(&r, 0, sizeof r);
        bool unsup;
        cf_status cs = cf_case_read(dirs[i], &c, &x, &ce);
        if (!cs) cs = cf_fill_masked(&c, &x, &ce);
        if (!cs) cs = read_result(dirs[i], &c, &r, &unsup, &ce);
        if (cs) {
            /* a case that cannot be scored is never counted as passed */
            if (unscorable++ < 10) fprintf(stderr, "aclnn-conform score: %s\n", ce.msg);
            st = st > cs ? st : cs;
            cf_run_result_free(&r);
            cf_expected_free(&x);
            cf_case_free(&c);
            continue;
        }
        if (unsup) {
            unsupported++;
        } else if (c.expect_status != 0) {
            status_cases++;
            scored++;
            if (r.status != c.expect_status) {
                status_mm++;
                failed++;
                cJSON_AddItemToArray(failures, cJSON_CreateString(dirs[i]));
                if (!o->quiet) printf("FAIL %s %s: status %d, expected %d\n", cf_op_name(c.op), dirs[i], r.status, c.expect_status);
            }
        } else {
            cf_dtype dt;
            char variant[FZ_VARIANT_LEN];
            cf_case_stream_key(cz, &c, c.profile, &dt, variant);
            int k = 0;
            while (k < nrows && !(rows[k].dtype == dt && !strcmp(rows[k].op, cf_op_name(c.op)) && !strcmp(rows[k].variant, variant))) k++;
            cf_tol tol;
            cs = cf_tolerance_for(cz, &c, c.profile, variant, o->strict_zero, &tol, &ce);
            if (!cs) {
                if (k == nrows && nrows == rcap) {
                    cf_row *nr = realloc(rows, sizeof(cf_row) * (size_t)rcap * 2);
                    if (nr) rows = nr, rcap *= 2;
                }
                if (k == nrows && nrows == rcap) {
                    cs = cf_fail(&ce, CFE_IO, "out of memory");
                } else if (k == nrows) {
                    cf_row_init(&rows[nrows++], cf_op_name(c.op), dt, variant, &tol);
                    cf_row_describe(&rows[k], cz[c.op]);
                }
            }
            if (!cs) {
                cf_case_verdict v;
                cf_score_case(&c, &x, &r, &tol, i, dirs[i], &rows[k], &v, o->quiet ? NULL : (cf_fail_cb)NULL, NULL, 0);
                scored++;
                if (!v.pass) {
                    cf_row_add_example(&rows[k], v.kind, i, v.elements, v.max_ulp, dirs[i], v.first_failure);
                    failed++;
                    cJSON_AddItemToArray(failures, cJSON_CreateString(dirs[i]));
                    if (!o->quiet) printf("%s\n", v.first_failure);
                }
            } else {
                if (unscorable++ < 10) fprintf(stderr, "aclnn-conform score: %s\n", ce.msg);
                st = st > cs ? st : cs;
            }
        }
        cf_run_result_free(&r);
        cf_expected_free(&x);
        cf_case_free(&c);
    }
    if (unscorable > 10) fprintf(stderr, "aclnn-conform score: ... and %lld more cases that cannot be scored\n", (long long)unscorable - 10);
    if (scored == 0) {
        /* nothing scorable (no result.json written, every case unsupported or unreadable): that is
         * not a pass, and no report that could be read as one is written */
        fprintf(stderr, "aclnn-conform score: nothing to score in %s: %d cases, %lld without a readable result, %lld unsupported%s\n",
                o->pos[0], n, (long long)unscorable, (long long)unsupported,
                unscorable ? " (did the target write result.json beside each case.json?)" : "");
        cJSON_Delete(failures);
        for (int i = 0; i < n; i++) free(dirs[i]);
        free(dirs);
        free(rows);
        for (int i = 0; i < CF_OP_COUNT; i++) cz_free(cz[i]);
        return CFE_INPUT;
    }
    cf_opts ro = *o; /* the report names the export's seed and profile when DIR/export.json says */
    char ej[2048];
    cf_err ee = {{0}};
    cJSON *x;
    snprintf(ej, sizeof ej, "%s/export.json", o->pos[0]);
    if (cf_is_file(ej) && cf_read_json(ej, &x, &ee) == CFE_OK) {
        const cJSON *sd = cJSON_GetObjectItemCaseSensitive(x, "seed"), *pf = cJSON_GetObjectItemCaseSensitive(x, "profile");
        if (cJSON_IsString(sd)) ro.seed = strtoull(sd->valuestring, NULL, 0);
        if (cJSON_IsString(pf)) snprintf(ro.profile, sizeof ro.profile, "%s", pf->valuestring);
        cJSON_Delete(x);
    }
    cJSON *rep = cf_report_new("score", &ro, 0, n, started);
    cJSON *results = cJSON_AddArrayToObject(rep, "results");
    cf_row *rp[512];
    for (int i = 0; i < nrows; i++) {
        cJSON_AddItemToArray(results, cf_row_to_json(&rows[i]));
        if (i < 512) rp[i] = &rows[i];
    }
    cJSON *sc = cJSON_AddArrayToObject(rep, "status_checks");
    cJSON *sx = cJSON_CreateObject();
    cJSON_AddStringToObject(sx, "op", "*");
    cJSON_AddStringToObject(sx, "rule", "all invalid-input rules");
    cJSON_AddNumberToObject(sx, "expected", 0);
    cJSON_AddNumberToObject(sx, "cases", (double)status_cases);
    cJSON_AddNumberToObject(sx, "mismatches", (double)status_mm);
    cJSON_AddStringToObject(sx, "example", "");
    cJSON_AddItemToArray(sc, sx);
    cJSON_AddNumberToObject(rep, "unsupported", (double)unsupported);
    if (unscorable) cJSON_AddNumberToObject(rep, "unscorable", (double)unscorable); /* neither passed nor failed: exit 2 */
    cJSON_AddItemToObject(rep, "failures", failures);
    char path[2048];
    if (o->output) snprintf(path, sizeof path, "%s", o->output);
    else snprintf(path, sizeof path, "%s/score-%ld.json", o->out_dir, (long)wall);
    cf_status ws = cf_write_report(path, rep, &e);
    cJSON_Delete(rep);
    cf_print_summary(stdout, rp, nrows < 512 ? nrows : 512);
    printf("score: %d cases, %lld unsupported, status checks %lld/%lld mismatching; report %s\n", n, (long long)unsupported,
           (long long)status_mm, (long long)status_cases, ws ? "NOT WRITTEN" : path);
    if (unscorable)
        printf("score: %lld passed, %lld failed, %lld could not be scored (see above)\n", (long long)(scored - failed), (long long)failed,
               (long long)unscorable);
    else
        printf("score: %lld passed, %lld failed\n", (long long)(scored - failed), (long long)failed);
    if (ws) fprintf(stderr, "aclnn-conform score: %s\n", e.msg);
    for (int i = 0; i < n; i++) free(dirs[i]);
    free(dirs);
    free(rows);
    for (int i = 0; i < CF_OP_COUNT; i++) cz_free(cz[i]);
    if (ws) return ws;
    if (st) return st;
    return failed ? CFE_FAIL : CFE_OK;
}
