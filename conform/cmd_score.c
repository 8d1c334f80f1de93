/* aclnn-conform score DIR: score the outputs an out-of-process target wrote beside exported
 * cases (result.json, got.<out>.npy) and write a report like a sweep's. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

/* A score run: the export's cases, the rows they add up to, and the counts of the verdict. */
typedef struct {
    cz_constraints *cz[CF_OP_COUNT];
    char **dirs;
    int n;
    cf_row *rows; /* grow as keys appear (each ~2 KB, and its lazily allocated plot, ids and examples) */
    int nrows, rcap;
    int64_t unsupported, failed, status_cases, status_mm, scored, unscorable;
    int64_t computed; /* valid cases whose outputs were scored: the numeric part of the verdict */
    bool exported;    /* DIR/export.json: written by export (case directories named by their id) */
    cJSON *failures;
    cf_status st; /* the worst status of a case that could not be scored */
} score_run;

/* The row of (op, dtype, variant), added when new. */
static cf_row *row_for(score_run *S, const cf_case *c, cf_dtype dt, const char *variant, const cf_tol *tol, cf_err *e)
{
    const char *op = cf_op_name(c->op);
    for (int k = 0; k < S->nrows; k++)
        if (S->rows[k].dtype == dt && !strcmp(S->rows[k].op, op) && !strcmp(S->rows[k].variant, variant)) return &S->rows[k];
    if (S->nrows == S->rcap) {
        int cap = S->rcap ? 2 * S->rcap : 8;
        cf_row *nr = realloc(S->rows, sizeof(cf_row) * (size_t)cap);
        if (!nr) {
            cf_fail(e, CFE_IO, "out of memory");
            return NULL;
        }
        S->rows = nr, S->rcap = cap;
    }
    cf_row *row = &S->rows[S->nrows++];
    memset(row, 0, sizeof *row);
    cf_row_init(row, op, dt, variant, tol);
    cf_row_describe(row, S->cz[c->op]);
    return row;
}

static void add_failure(score_run *S, const char *dir)
{
    S->failed++;
    cJSON_AddItemToArray(S->failures, cJSON_CreateString(dir));
}

/* A case that cannot be scored is never counted as passed: the first ten are named. */
static void unscorable(score_run *S, cf_status cs, const cf_err *ce)
{
    if (S->unscorable++ < 10) fprintf(stderr, "aclnn-conform score: %s\n", ce->msg);
    S->st = S->st > cs ? S->st : cs;
}

/* Case i of the export against the result the target wrote beside it. */
static void score_one(score_run *S, const cf_opts *o, int i)
{
    const char *dir = S->dirs[i];
    cf_err ce = {{0}};
    cf_case c;
    cf_expected x;
    cf_run_result r;
    memset(&r, 0, sizeof r);
    bool unsup;
    /* the exact values from the oracle, never from files in the directory the program under
     * test wrote into; in an export of this tool (export.json), the inputs as exported: export
     * names each directory by the case id, a hash of the manifest and the input bytes */
    memset(&x, 0, sizeof x);
    cf_status cs = cf_case_read(dir, &c, NULL, &ce);
    if (!cs && S->exported) {
        char id[17];
        cf_case_id(&c, id);
        const char *base = strrchr(dir, '/');
        base = base ? base + 1 : dir;
        if (strcmp(base, id))
            cs = cf_fail(&ce, CFE_INPUT, "%s: its inputs or case.json are not those exported (case id %s): not scored", dir, id);
    }
    if (!cs && c.expect_status == 0) cs = cf_oracle_expected(&c, c.profile, &x, &ce);
    if (!cs) cs = read_result(dir, &c, &r, &unsup, &ce);
    if (cs) {
        unscorable(S, cs, &ce);
    } else if (unsup) {
        S->unsupported++;
    } else if (c.expect_status != 0) {
        S->status_cases++;
        S->scored++;
        if (r.status != c.expect_status) {
            S->status_mm++;
            add_failure(S, dir);
            if (!o->quiet) printf("FAIL %s %s: status %d, expected %d\n", cf_op_name(c.op), dir, r.status, c.expect_status);
        }
    } else {
        cf_dtype dt;
        char variant[FZ_VARIANT_LEN];
        cf_case_stream_key(S->cz, &c, c.profile, &dt, variant);
        cf_tol tol;
        cf_row *row = NULL;
        cs = cf_tolerance_for(S->cz, &c, c.profile, variant, o->strict_zero, &tol, &ce);
        if (!cs && !(row = row_for(S, &c, dt, variant, &tol, &ce))) cs = CFE_IO;
        if (cs) {
            unscorable(S, cs, &ce);
        } else {
            cf_case_verdict v;
            cf_score_case(&c, &x, &r, &tol, i, dir, row, &v, NULL, NULL, 0);
            S->scored++;
            S->computed++;
            if (!v.pass) {
                cf_row_add_example(row, v.kind, i, v.elements, v.max_ulp, dir, v.first_failure);
                add_failure(S, dir);
                if (!o->quiet) printf("%s\n", v.first_failure);
            }
        }
    }
    cf_run_result_free(&r);
    cf_expected_free(&x);
    cf_case_free(&c);
}

/* The report: the rows, one status row for all invalid-input rules, the export's seed and
 * profile when DIR/export.json names them. */
static cJSON *score_report(score_run *S, const cf_opts *o, const char *started)
{
    cf_opts ro = *o;
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
    /* the outputs are an external program's, not the built-in implementation's */
    snprintf(ro.target, sizeof ro.target, "external program (score %.900s)", o->pos[0]);
    cJSON *rep = cf_report_new("score", &ro, 0, S->n, started);
    cJSON *results = cJSON_AddArrayToObject(rep, "results");
    for (int i = 0; i < S->nrows; i++) cJSON_AddItemToArray(results, cf_row_to_json(&S->rows[i]));
    cJSON *sc = cJSON_AddArrayToObject(rep, "status_checks");
    cJSON *sx = cJSON_CreateObject();
    cJSON_AddStringToObject(sx, "op", "*");
    cJSON_AddStringToObject(sx, "rule", "all invalid-input rules");
    cJSON_AddNumberToObject(sx, "expected", 0);
    cJSON_AddNumberToObject(sx, "cases", (double)S->status_cases);
    cJSON_AddNumberToObject(sx, "mismatches", (double)S->status_mm);
    cJSON_AddStringToObject(sx, "example", "");
    cJSON_AddItemToArray(sc, sx);
    cJSON_AddNumberToObject(rep, "unsupported", (double)S->unsupported);
    if (S->unscorable) cJSON_AddNumberToObject(rep, "unscorable", (double)S->unscorable); /* neither passed nor failed: exit 2 */
    cJSON_AddItemToObject(rep, "failures", S->failures);
    S->failures = NULL; /* owned by the report */
    return rep;
}

static void score_free(score_run *S)
{
    for (int i = 0; i < S->n; i++) free(S->dirs[i]);
    free(S->dirs);
    cf_rows_free(S->rows, S->nrows);
    cJSON_Delete(S->failures);
    for (int i = 0; i < CF_OP_COUNT; i++) cz_free(S->cz[i]);
}

int cmd_score(const cf_opts *o)
{
    if (o->npos != 1) {
        fprintf(stderr, "aclnn-conform score: usage: score DIR (a directory written by export)\n");
        return CFE_INPUT;
    }
    score_run S = {0};
    cf_err e = {{0}};
    int rc;
    cf_status st = cf_load_constraints(o, S.cz, &e);
    if (!st) st = cf_collect_cases(o->pos[0], &S.dirs, &S.n, &e);
    char ej[2048];
    snprintf(ej, sizeof ej, "%s/export.json", o->pos[0]);
    S.exported = cf_is_file(ej);
    if (!st && !(S.failures = cJSON_CreateArray())) st = cf_fail(&e, CFE_IO, "out of memory");
    if (st) {
        fprintf(stderr, "aclnn-conform score: %s\n", e.msg);
        rc = st;
        goto out;
    }
    time_t wall = time(NULL);
    char started[32], stamp[32];
    strftime(started, sizeof started, "%Y-%m-%dT%H:%M:%SZ", gmtime(&wall));
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", gmtime(&wall));
    for (int i = 0; i < S.n; i++) score_one(&S, o, i);
    if (S.unscorable > 10)
        fprintf(stderr, "aclnn-conform score: ... and %lld more cases that cannot be scored\n", (long long)S.unscorable - 10);
    if (S.computed == 0) {
        /* no valid case computed (no result.json written, every valid case unsupported or
         * unreadable; invalid-input statuses alone): that is not a pass (issue 57: a program that
         * answered only the invalid cases scored "13 passed, 0 failed"), and no report that could
         * be read as one is written */
        fprintf(stderr, "aclnn-conform score: no output was computed in %s: %d cases, %lld invalid-input cases scored, "
                        "%lld without a readable result, %lld unsupported%s\n",
                o->pos[0], S.n, (long long)S.status_cases, (long long)S.unscorable, (long long)S.unsupported,
                S.unscorable ? " (did the target write result.json beside each case.json?)" : "");
        rc = CFE_INPUT;
        goto out;
    }
    cJSON *rep = score_report(&S, o, started);
    char path[2048];
    char tag[32];
    cf_unique_tag(tag, sizeof tag);
    if (o->output) snprintf(path, sizeof path, "%s", o->output);
    else snprintf(path, sizeof path, "%s/score-%s-%s.json", o->out_dir, stamp, tag); /* two runs never share a name */
    cf_status ws = o->output ? cf_write_report(path, rep, &e) : cf_write_report_new(path, rep, &e);
    cJSON_Delete(rep);
    cf_print_summary(stdout, S.rows, S.nrows);
    printf("score: %d cases, %lld unsupported, status checks %lld/%lld mismatching; report %s\n", S.n,
           (long long)S.unsupported, (long long)S.status_mm, (long long)S.status_cases, ws ? "NOT WRITTEN" : path);
    long long passed = (long long)(S.scored - S.failed);
    if (S.unscorable)
        printf("score: %lld passed, %lld failed, %lld could not be scored (see above)\n", passed, (long long)S.failed,
               (long long)S.unscorable);
    else
        printf("score: %lld passed, %lld failed\n", passed, (long long)S.failed);
    if (ws) fprintf(stderr, "aclnn-conform score: %s\n", e.msg);
    rc = ws ? ws : S.st ? S.st : S.failed ? CFE_FAIL : CFE_OK;
out:
    score_free(&S);
    return rc;
}
