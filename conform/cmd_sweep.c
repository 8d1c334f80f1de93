/* aclnn-conform sweep: generate cases from constraints/, run the target and the oracle, score,
 * write the report, store failing cases.  Cases are evaluated in batches by --jobs threads and
 * merged in case-index order, so the report does not depend on --jobs. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "commands.h"
#include "oracle.h"
#include "shrink.h"

enum { JOB_VALID, JOB_INVALID, JOB_EXHAUSTIVE };

typedef struct {
    int kind;
    int stream;  /* index into streams (valid/exhaustive) */
    cf_op op;    /* invalid */
    int rule;    /* invalid */
    int status_row;
    int64_t k;
} job_t;

typedef struct {
    cf_row row;
    cf_case_verdict v;
    cf_status err;
    char errmsg[512];
    char stored[256];
} result_t;

typedef struct {
    const cf_opts *o;
    cz_constraints **cz;
    const cf_target *target;
    fz_stream *streams;
    int nstreams;
    job_t *jobs;
    result_t *res;
    int njobs;
    atomic_int next;
} sweep_ctx;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Evaluate one job: generate, run, oracle, score, store on failure. */
static void eval_job(sweep_ctx *S, const job_t *j, result_t *res)
{
    const cf_opts *o = S->o;
    cf_err e = {{0}};
    cf_case c;
    fz_status fs;
    const fz_stream *s = j->kind == JOB_INVALID ? NULL : &S->streams[j->stream];
    cf_op op = s ? s->op : j->op;
    if (j->kind == JOB_VALID) fs = fz_generate(S->cz[op], o->profile, s, o->seed, j->k, &c);
    else if (j->kind == JOB_EXHAUSTIVE) fs = fz_exhaustive_case(S->cz[op], o->profile, s, o->seed, j->k, &c);
    else fs = fz_generate_invalid(S->cz[op], o->profile, j->rule, o->seed, j->k, &c);
    if (fs != FZ_OK) {
        res->err = CFE_IO;
        snprintf(res->errmsg, sizeof res->errmsg, "generator failed (%s) for %s case %lld", fz_status_name(fs),
                 cf_op_name(op), (long long)j->k);
        return;
    }
    snprintf(c.profile, sizeof c.profile, "%s", o->profile);
    char id[17], ref[200];
    cf_case_id(&c, id);
    snprintf(ref, sizeof ref, "%s/%s/%s", o->corpus, cf_op_name(op), id);
    cf_run_result r;
    cf_expected x = {0};
    cf_tol tol = {0};
    cf_status st = cf_run_case(S->target, &c, o->timeout_s, &r, &e);
    if (!st && c.expect_status == 0 && r.status == 0 && !r.error[0]) st = cf_oracle_expected(&c, o->profile, &x, &e);
    if (!st && s) st = cf_tolerance_for(S->cz, &c, o->profile, s->variant, o->strict_zero, &tol, &e);
    if (st) {
        res->err = st;
        snprintf(res->errmsg, sizeof res->errmsg, "%s", e.msg);
        goto done;
    }
    if (s) cf_row_init(&res->row, cf_op_name(op), s->dtype, s->variant, &tol);
    cf_score_case(&c, &x, &r, &tol, j->k, ref, s ? &res->row : NULL, &res->v, NULL, NULL, 0);
    if (!res->v.pass && !o->no_store) {
        if (c.expect_status == 0 && x.nout == 0) st = cf_oracle_expected(&c, o->profile, &x, &e);
        cf_case small;
        bool shrunk = false;
        if (!st && !o->no_shrink && cf_shrink(S->target, &c, &x, o, S->cz, s ? s->variant : "", &small, 5.0) == CFE_OK) {
            cf_expected_free(&x);
            cf_case_free(&c);
            c = small;
            shrunk = true;
            if (c.expect_status == 0) st = cf_oracle_expected(&c, o->profile, &x, &e);
        }
        (void)shrunk;
        if (!st) st = cf_case_write(o->corpus, &c, &x, CF_TOOL_NAME " " CF_TOOL_VERSION, res->stored, sizeof res->stored, &e);
        if (st) {
            res->err = st;
            snprintf(res->errmsg, sizeof res->errmsg, "%s", e.msg);
        }
    }
done:
    cf_expected_free(&x);
    cf_run_result_free(&r);
    cf_case_free(&c);
}

static void *worker(void *arg)
{
    sweep_ctx *S = arg;
    for (;;) {
        int i = atomic_fetch_add(&S->next, 1);
        if (i >= S->njobs) break;
        eval_job(S, &S->jobs[i], &S->res[i]);
    }
    orc_thread_release(); /* the oracle's MPFR caches would leak with the thread */
    return NULL;
}

static void run_batch(sweep_ctx *S)
{
    atomic_store(&S->next, 0);
    /* A foreign target runs each case in a forked worker; fork() from a multi-threaded process
     * is unsafe (a lock held by another thread at fork time never unlocks in the child — seen
     * as hung workers under the sanitizer runtime), so those cases run one at a time.  Scale a
     * foreign target out with --shard processes instead. */
    int jobs = S->target->isolate ? 1 : S->o->jobs;
    int nt = jobs < S->njobs ? jobs : S->njobs;
    if (nt <= 1) {
        worker(S);
        return;
    }
    pthread_t th[256];
    int started = 0;
    for (int i = 0; i < nt; i++)
        if (pthread_create(&th[i], NULL, worker, S) == 0) started++;
    if (started == 0) worker(S);
    for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
}

int cmd_sweep(const cf_opts *o)
{
    cf_err e = {{0}};
    cz_constraints *cz[CF_OP_COUNT] = {0};
    cf_target target;
    cf_status st = cf_load_constraints(o, cz, &e);
    if (st) {
        fprintf(stderr, "aclnn-conform: %s\n", e.msg);
        return st;
    }
    if ((st = cf_target_open(o->target, &target, &e))) {
        fprintf(stderr, "aclnn-conform: %s\n", e.msg);
        for (int i = 0; i < CF_OP_COUNT; i++) cz_free(cz[i]);
        return st;
    }
    if (strcmp(o->target, "builtin") == 0 && o->jobs > 1) aclconformSetNumThreads(1); /* parallel over cases instead */

    /* streams and status rows */
    fz_stream streams[256];
    cf_row rows[256];
    int nstreams = 0;
    for (int op = 0; op < CF_OP_COUNT; op++) {
        if (!o->op_on[op]) continue;
        fz_stream tmp[64];
        int n = fz_streams(cz[op], o->profile, tmp, 64);
        for (int i = 0; i < n && i < 64 && nstreams < 256; i++) {
            if (!o->dtype_on[tmp[i].dtype]) continue;
            if (o->exhaustive && fz_exhaustive_count(cz[op], &tmp[i], o->exhaustive_f32) == 0) continue;
            streams[nstreams] = tmp[i];
            cf_tol tol = {0};
            cz_tolerance(cz[op], o->profile, tmp[i].dtype, tmp[i].variant, &tol.max_ulp, &tol.max_scaled_ulp);
            cf_row_init(&rows[nstreams], cf_op_name((cf_op)op), tmp[i].dtype, tmp[i].variant, &tol);
            nstreams++;
        }
    }
    cf_status_row srows[512];
    int nsrows = 0;
    for (int op = 0; op < CF_OP_COUNT && !o->exhaustive; op++) {
        if (!o->op_on[op]) continue;
        int n = fz_rule_count(cz[op], o->profile);
        for (int i = 0; i < n && nsrows < 512; i++) {
            cf_status_row *sr = &srows[nsrows++];
            memset(sr, 0, sizeof *sr);
            snprintf(sr->op, sizeof sr->op, "%s", cf_op_name((cf_op)op));
            snprintf(sr->rule, sizeof sr->rule, "%s", fz_rule_name(cz[op], o->profile, i));
            sr->expected = fz_rule_status(cz[op], o->profile, i);
        }
    }

    fprintf(stderr, "aclnn-conform sweep: seed 0x%llx, target %s, profile %s, shard %d/%d, %d streams, %s\n",
            (unsigned long long)o->seed, o->target, o->profile, o->shard_k, o->shard_n, nstreams,
            o->cases ? "case budget" : "time budget");
    time_t wall = time(NULL);
    char started[32];
    strftime(started, sizeof started, "%Y-%m-%dT%H:%M:%SZ", gmtime(&wall));
    double t0 = now_s();
    double budget = o->cases ? INFINITY : (o->time_s > 0 ? o->time_s : 60);
    int64_t total_cases = 0, failures = 0, internal = 0;
    cJSON *failures_json = cJSON_CreateArray();
    bool tty = cf_stderr_is_tty() && !o->quiet;

    const int B = 8; /* case indices per stream per batch */
    double last_draw = -1;
    int64_t planned = 0; /* with a case budget: the whole run, for the progress line */
    for (int i = 0; i < nsrows; i++)
        for (int64_t k = 0; k < o->invalid_cases; k++) planned += k % o->shard_n == o->shard_k;
    for (int s = 0; s < nstreams; s++) {
        int64_t limit = o->cases ? o->cases : 0;
        if (o->exhaustive) limit = fz_exhaustive_count(cz[streams[s].op], &streams[s], o->exhaustive_f32);
        if (o->cases && limit > o->cases) limit = o->cases;
        planned += (limit + o->shard_n - 1 - o->shard_k) / o->shard_n;
    }
    job_t *jobs = calloc((size_t)(nstreams * B + nsrows * (o->invalid_cases + 1) + 1), sizeof(job_t));
    result_t *res = calloc((size_t)(nstreams * B + nsrows * (o->invalid_cases + 1) + 1), sizeof(result_t));
    sweep_ctx S = {o, cz, &target, streams, nstreams, jobs, res, 0, 0};
    if (!jobs || !res) {
        fprintf(stderr, "aclnn-conform: out of memory\n");
        return CFE_IO;
    }
    for (int round = 0;; round++) {
        int nj = 0;
        if (round == 0) { /* the invalid-input cases first: cheap, and a status table needs them */
            for (int i = 0; i < nsrows; i++) {
                cf_op op;
                cf_op_parse(srows[i].op, &op);
                int rule = fz_rule_find(cz[op], o->profile, srows[i].rule);
                for (int64_t k = 0; k < o->invalid_cases; k++)
                    if (k % o->shard_n == o->shard_k) jobs[nj++] = (job_t){JOB_INVALID, -1, op, rule, i, k};
            }
        }
        bool more = false;
        for (int s = 0; s < nstreams; s++) {
            int64_t limit = o->cases ? o->cases : INT64_MAX;
            if (o->exhaustive) {
                int64_t n = fz_exhaustive_count(cz[streams[s].op], &streams[s], o->exhaustive_f32);
                if (n < limit) limit = n;
            }
            for (int64_t k = (int64_t)round * B; k < (int64_t)(round + 1) * B && k < limit; k++)
                if (k % o->shard_n == o->shard_k)
                    jobs[nj++] = (job_t){o->exhaustive ? JOB_EXHAUSTIVE : JOB_VALID, s, 0, 0, -1, k};
            if ((int64_t)(round + 1) * B < limit) more = true;
        }
        memset(res, 0, sizeof(result_t) * (size_t)nj);
        S.njobs = nj;
        run_batch(&S);
        for (int i = 0; i < nj; i++) { /* merge in job order: deterministic for any --jobs */
            result_t *r = &res[i];
            const job_t *j = &jobs[i];
            total_cases++;
            if (r->err) {
                internal++;
                fprintf(stderr, "aclnn-conform: internal error: %s\n", r->errmsg);
                continue;
            }
            if (j->kind == JOB_INVALID) {
                cf_status_row *sr = &srows[j->status_row];
                sr->cases++;
                if (!r->v.pass) {
                    sr->mismatches++;
                    if (!sr->example[0]) snprintf(sr->example, sizeof sr->example, "%s", r->stored[0] ? r->stored : r->v.first_failure);
                }
            } else {
                cf_row_merge(&rows[j->stream], &r->row);
            }
            if (!r->v.pass) {
                failures++;
                if (r->stored[0]) cJSON_AddItemToArray(failures_json, cJSON_CreateString(r->stored));
                if (!o->quiet) fprintf(stderr, "%s%s\n", tty ? "\r\033[K" : "", r->v.first_failure);
            }
        }
        double el = now_s() - t0;
        bool last = !more || el >= budget;
        if (tty && (last || el - last_draw >= 0.2)) { /* cases done / total, elapsed, ETA, failures so far */
            last_draw = el;
            if (isfinite(budget))
                fprintf(stderr, "\r\033[K%lld cases, %.0f s of %.0f s, ETA %.0f s, %lld failures", (long long)total_cases,
                        el, budget, budget > el ? budget - el : 0.0, (long long)failures);
            else
                fprintf(stderr, "\r\033[K%lld / %lld cases, %.0f s, ETA %.0f s, %lld failures", (long long)total_cases,
                        (long long)planned, el, total_cases ? el * (double)(planned - total_cases) / (double)total_cases : 0.0,
                        (long long)failures);
        }
        if (!more || el >= budget) break;
    }
    if (tty) fprintf(stderr, "\n");
    double seconds = now_s() - t0;

    cJSON *rep = cf_report_new("sweep", o, seconds, total_cases, started);
    cJSON *results = cJSON_AddArrayToObject(rep, "results");
    cf_row *rowp[256];
    bool conform_fail = failures > 0;
    for (int s = 0; s < nstreams; s++) {
        cJSON_AddItemToArray(results, cf_row_to_json(&rows[s]));
        rowp[s] = &rows[s];
    }
    cJSON *sc = cJSON_AddArrayToObject(rep, "status_checks");
    for (int i = 0; i < nsrows; i++) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "op", srows[i].op);
        cJSON_AddStringToObject(x, "rule", srows[i].rule);
        cJSON_AddNumberToObject(x, "expected", srows[i].expected);
        cJSON_AddNumberToObject(x, "cases", (double)srows[i].cases);
        cJSON_AddNumberToObject(x, "mismatches", (double)srows[i].mismatches);
        cJSON_AddStringToObject(x, "example", srows[i].example);
        cJSON_AddItemToArray(sc, x);
    }
    cJSON_AddItemToObject(rep, "failures", failures_json);
    char path[2048];
    if (o->output) snprintf(path, sizeof path, "%s", o->output);
    else snprintf(path, sizeof path, "%s/sweep-%llx-%ld.json", o->out_dir, (unsigned long long)o->seed, (long)wall);
    st = cf_write_report(path, rep, &e);
    if (o->json) {
        char *txt = cJSON_PrintUnformatted(rep);
        if (txt) printf("%s\n", txt);
        free(txt);
    } else {
        cf_print_summary(stdout, rowp, nstreams);
        int64_t smm = 0, sc_cases = 0;
        for (int i = 0; i < nsrows; i++) smm += srows[i].mismatches, sc_cases += srows[i].cases;
        printf("status checks: %d rules, %lld cases, %lld mismatches\n", nsrows, (long long)sc_cases, (long long)smm);
        printf("%lld cases in %.1f s, %lld failing; report %s; seed 0x%llx\n", (long long)total_cases, seconds,
               (long long)failures, st ? "NOT WRITTEN" : path, (unsigned long long)o->seed);
        printf("sweep: %lld passed, %lld failed\n", (long long)(total_cases - failures - internal), (long long)(failures + internal));
    }
    if (st) fprintf(stderr, "aclnn-conform: %s\n", e.msg);
    cJSON_Delete(rep);
    free(jobs);
    free(res);
    cf_target_close(&target);
    for (int i = 0; i < CF_OP_COUNT; i++) cz_free(cz[i]);
    int rc = conform_fail ? CFE_FAIL : CFE_OK;
    if (internal || st) rc = CFE_IO;
    return rc;
}
