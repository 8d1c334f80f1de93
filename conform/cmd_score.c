/* aclnn-conform score DIR: score the outputs an out-of-process target wrote beside exported
 * cases (result.json, got.<out>.npy) and write a report like a sweep's. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "npy.h"
#include "report.h"

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
    if (!cf_json_int_in(s, INT32_MIN, INT32_MAX)) {
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
    for (int i = 0; i < nrows; i++) {
        cJSON_AddItemToArray(results, cf_row_to_json(&rows[i]));
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
    cf_print_summary(stdout, rows, nrows);
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
