/* aclnn-conform sweep: generate cases from constraints/, run the target and the oracle, score,
 * write the report, store failing cases.
 *
 * Cases are evaluated in batches by a pool of --jobs threads that lives for the whole run (a
 * foreign target's worker process belongs to the thread that started it, so workers live as
 * long as the run), and merged in case-index order, so the report does not depend on --jobs.
 *
 * What is printed is what is stored: a failing case is shrunk, stored, run again and scored
 * again under its stored path, and that line is the one printed — so every printed id is a
 * directory that `replay` accepts and that fails there.  Lines are grouped per (op, dtype,
 * variant, kind): the first --max-fail-lines of each group are printed, the rest counted. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "oracle.h"
#include "shrink.h"
#include "worker.h"

enum { JOB_VALID, JOB_INVALID, JOB_EXHAUSTIVE, JOB_PROTOCOL, JOB_THREADS };

typedef struct {
    int kind;
    int stream;  /* index into streams (valid/exhaustive) */
    cf_op op;    /* invalid */
    int rule;    /* invalid; protocol: the cf_protocol */
    int status_row;
    int64_t k;
} job_t;

typedef struct {
    bool skipped; /* not run: interrupted or past the deadline */
    bool over_budget; /* not run: its storages exceed --max-bytes (counted, never a NULL tensor) */
    bool late;        /* the run found an earlier case's late write (run.h): that case's failure */
    int late_op, late_dtype;
    char late_key[160], late_line[480];
    bool not_applicable; /* a protocol check that did not apply to its case */
    cf_row row;
    cf_case_verdict v; /* of the stored case when one was stored, else of the generated one */
    char group[160];   /* op dtype variant kind */
    cf_status err;
    char errmsg[512];
    char stored[1200];
} result_t;

typedef struct {
    const cf_opts *o;
    cz_constraints **cz;
    const cf_target *target;
    char target_real[1024]; /* the library's absolute path, recorded in stored cases */
    fz_stream *streams;
    int nstreams;
    job_t *jobs;
    result_t *res;
    int njobs;
    atomic_int next;
    double deadline; /* monotonic seconds; INFINITY with a case budget */
    /* structural coverage (fuzz.h fz_bins), one per operator, under cov_mu; op threads used */
    fz_bins *bins[CF_OP_COUNT];
    pthread_mutex_t cov_mu;
    int64_t op_threads_hits[5]; /* thread-check runs with 1, 2, 3, 4 op threads (the sweep's own
                                 * cases are added at the end: they all run at default_threads) */
    /* the pool */
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    int gen, active;
    bool quit;
} sweep_ctx;

static volatile sig_atomic_t g_signal; /* SIGINT / SIGTERM received: finish the batch, report */
static volatile sig_atomic_t g_hard;   /* a second one: drop the batch in flight, report now */

/* The first signal finishes the batch; a second one (a user's second ^C, or two signals
 * milliseconds apart from a process group or a target that signals its parent) kills the
 * workers and drops the batch in flight -- its cases count as not run, never as the target's
 * crashes -- and the report is still written (issue 57: it exited 143 with none); a third one
 * leaves at once (a built-in case that does not return). */
static void on_signal(int sig)
{
    if (g_hard) _exit(128 + sig);
    if (g_signal) {
        g_hard = sig;
        cf_worker_kill_all();
        return;
    }
    g_signal = sig;
}

/* Store a failing case (shrunk unless it cannot be), run it again and score it under its stored
 * path: res->v becomes that verdict.  A stored case that passes on its rerun (a target that is
 * not deterministic) is replaced by the unshrunk one; if that passes too, the line says so. */
static void store_failure(sweep_ctx *S, const job_t *j, cf_case *c, cf_expected *x, result_t *res, const char *variant,
                          const char *ref)
{
    const cf_opts *o = S->o;
    cf_err e = {{0}};
    cf_status st = CFE_OK;
    if (c->expect_status == 0 && x->nout == 0) st = cf_oracle_expected(c, o->profile, x, &e);
    snprintf(c->target_path, sizeof c->target_path, "%s", S->target_real);
    snprintf(c->target_sha256, sizeof c->target_sha256, "%s", S->target->sha256);
    /* only an element mismatch shrinks (the kinds before wrote_outside); a status, crash, timeout
     * or guard-zone failure is stored as generated */
    bool shrinkable = res->v.first_kind < CF_MM_wrote_outside && !strcmp(res->v.kind, cf_mismatch_name(res->v.first_kind));
    double left = S->deadline - cf_now_s();
    double budget = left < 5.0 ? left : 5.0;
    if (!strcmp(res->v.kind, "timeout")) { /* stored as generated, not run again (another timeout) */
        if (!st) st = cf_case_write(o->corpus, c, x, CF_TOOL_NAME " " CF_TOOL_VERSION, res->stored, sizeof res->stored, &e);
        const char *at = st ? NULL : strstr(res->v.first_failure, ref);
        if (at) { /* the same line, naming the stored case */
            char line[sizeof res->v.first_failure];
            snprintf(line, sizeof line, "%.*s%s%s", (int)(at - res->v.first_failure), res->v.first_failure, res->stored,
                     at + strlen(ref));
            snprintf(res->v.first_failure, sizeof res->v.first_failure, "%s", line);
            return;
        }
    }
    for (int attempt = 0; attempt < 2 && !st; attempt++) {
        cf_case small, *keep = c;
        cf_expected sx = {0};
        if (attempt == 0 && shrinkable && !o->no_shrink && budget > 0.2 &&
            cf_shrink(S->target, c, x, o, S->cz, variant, &small, budget) == CFE_OK) {
            snprintf(small.target_path, sizeof small.target_path, "%s", c->target_path);
            snprintf(small.target_sha256, sizeof small.target_sha256, "%s", c->target_sha256);
            if (small.expect_status == 0) st = cf_oracle_expected(&small, o->profile, &sx, &e);
            keep = &small;
        } else {
            attempt = 1; /* nothing smaller: store the generated case */
        }
        const cf_expected *kx = keep == c ? x : &sx;
        if (!st) st = cf_case_write(o->corpus, keep, kx, CF_TOOL_NAME " " CF_TOOL_VERSION, res->stored, sizeof res->stored, &e);
        cf_case_verdict v2;
        bool fails = false;
        if (!st) { /* the printed line is the stored case's own */
            cf_run_result r;
            cf_tol tol = {0};
            st = cf_run_case(S->target, keep, o->timeout_s, &r, &e);
            if (!st && keep->expect_status == 0)
                st = cf_tolerance_for(S->cz, keep, o->profile, variant, o->strict_zero, &tol, &e);
            if (!st) {
                cf_score_case(keep, kx, &r, &tol, j->k, res->stored, NULL, &v2, NULL, NULL, 0);
                fails = !v2.pass;
            }
            cf_run_result_free(&r);
        }
        if (keep != c) {
            cf_case_free(&small);
            cf_expected_free(&sx);
        }
        if (st) break;
        if (fails) {
            res->v = v2;
            return;
        }
        if (attempt == 1) { /* stored, but it passed when run again */
            char line[sizeof res->v.first_failure];
            snprintf(line, sizeof line, "%s (stored as %s, which PASSED when run again: the target is not deterministic)",
                     res->v.first_failure, res->stored);
            snprintf(res->v.first_failure, sizeof res->v.first_failure, "%s", line);
            return;
        }
    }
    if (st) {
        res->err = st;
        res->stored[0] = '\0';
        snprintf(res->errmsg, sizeof res->errmsg, "%s", e.msg);
    }
}

/* A worst element scored under the case's temporary name names its stored path instead ("" when
 * the case was not stored). */
static void relink_worst(cf_worst *w, const char *ref, const char *stored)
{
    if (w->has && !strcmp(w->case_ref, ref)) snprintf(w->case_ref, sizeof w->case_ref, "%s", stored);
}

/* --keep-worst: store the case behind a row's worst element when it passed (and so was not
 * stored), so that a published report links the cases it cites.  The case is generated again
 * from the seed and its index, exactly as it ran. */
static void keep_worst(sweep_ctx *S, int stream, cf_worst *w)
{
    const cf_opts *o = S->o;
    if (!w->has || w->case_ref[0]) return;
    const fz_stream *s = &S->streams[stream];
    cf_case c;
    cf_expected x = {0};
    cf_err e = {{0}};
    fz_status fs = o->exhaustive ? fz_exhaustive_case(S->cz[s->op], o->profile, s, o->seed, w->case_index, &c)
                                 : fz_generate(S->cz[s->op], o->profile, s, o->seed, w->case_index, &c);
    if (fs != FZ_OK) return;
    snprintf(c.profile, sizeof c.profile, "%s", o->profile);
    snprintf(c.target_path, sizeof c.target_path, "%s", S->target_real);
    snprintf(c.target_sha256, sizeof c.target_sha256, "%s", S->target->sha256);
    cf_status st = cf_oracle_expected(&c, o->profile, &x, &e);
    if (!st) st = cf_case_write(o->corpus, &c, &x, CF_TOOL_NAME " " CF_TOOL_VERSION, w->case_ref, sizeof w->case_ref, &e);
    if (st) {
        w->case_ref[0] = '\0';
        fprintf(stderr, "aclnn-conform: --keep-worst: %s\n", e.msg);
    }
    cf_expected_free(&x);
    cf_case_free(&c);
}

/* The case of a job: a stream's valid (or exhaustive) case k, an invalid-input case of a rule, or
 * a protocol check: valid inputs of one of the op's streams with the protocol step as its rule. */
static fz_status generate_job_case(const sweep_ctx *S, const job_t *j, cf_case *c)
{
    const cf_opts *o = S->o;
    const fz_stream *s = j->kind == JOB_INVALID ? NULL : &S->streams[j->stream];
    cf_op op = s ? s->op : j->op;
    if (j->kind == JOB_VALID) return fz_generate(S->cz[op], o->profile, s, o->seed, j->k, c);
    if (j->kind == JOB_EXHAUSTIVE) return fz_exhaustive_case(S->cz[op], o->profile, s, o->seed, j->k, c);
    if (j->kind == JOB_INVALID) return fz_generate_invalid(S->cz[op], o->profile, j->rule, o->seed, j->k, c);
    /* protocol: indices of their own per check (2^40 + check * 2^32 + k): distinct inputs, distinct ids */
    fz_status fs = fz_generate(S->cz[op], o->profile, s, o->seed, (INT64_C(1) << 40) + ((int64_t)j->rule << 32) + j->k, c);
    if (fs == FZ_OK) {
        static const char *const names[] = {"", CF_PROTO_RULE_NULL_EXECUTOR, CF_PROTO_RULE_SHORT_WORKSPACE,
                                            CF_PROTO_RULE_NULL_WORKSPACE};
        snprintf(c->rule, sizeof c->rule, "%s", names[j->rule]);
        c->expect_status = j->rule == CF_PROTO_NULL_EXECUTOR ? 161001 : 161002;
    }
    return fs;
}

/* Evaluate one job: generate, run, oracle, score, store on failure. */
static void eval_job(sweep_ctx *S, const job_t *j, result_t *res)
{
    const cf_opts *o = S->o;
    if (g_signal || cf_now_s() > S->deadline) {
        res->skipped = true;
        return;
    }
    cf_err e = {{0}};
    cf_case c;
    const fz_stream *s = j->kind == JOB_INVALID || j->kind == JOB_PROTOCOL ? NULL : &S->streams[j->stream];
    cf_op op = j->kind == JOB_INVALID ? j->op : S->streams[j->stream].op;
    res->not_applicable = false;
    fz_status fs = generate_job_case(S, j, &c);
    if (fs != FZ_OK) {
        res->err = CFE_IO;
        snprintf(res->errmsg, sizeof res->errmsg, "generator failed (%s) for %s case %lld", fz_status_name(fs),
                 cf_op_name(op), (long long)j->k);
        return;
    }
    snprintf(c.profile, sizeof c.profile, "%s", o->profile);
    /* a case the harness cannot allocate within --max-bytes is not run: run.c would hand the
     * target a NULL tensor, and a correct 161001 would read as a failure (issue 57) */
    uint64_t bytes = 0;
    for (int t = 0; t < c.ntensors; t++) {
        const cf_tensor *ct = &c.tensors[t];
        int64_t sn = ct->present && !ct->null_data ? cf_tensor_storage_numel(ct) : 0;
        if (sn > 0) bytes += (uint64_t)sn * cf_dtype_size(ct->dtype);
    }
    if (bytes > cf_max_bytes()) {
        res->over_budget = true;
        cf_case_free(&c);
        return;
    }
    if (s && S->bins[op]) {
        pthread_mutex_lock(&S->cov_mu);
        fz_bins_add(S->bins[op], &c);
        pthread_mutex_unlock(&S->cov_mu);
    }
    /* until stored, a case is named by how to regenerate it (never a path that does not exist) */
    char ref[200];
    snprintf(ref, sizeof ref, "(case %s#%lld of seed 0x%llx, not stored)", s ? cf_op_name(op) : c.rule, (long long)j->k,
             (unsigned long long)o->seed);
    cf_run_result r;
    cf_expected x = {0};
    cf_tol tol = {0};
    cf_status st = cf_run_case(S->target, &c, o->timeout_s, &r, &e);
    if (!st && r.late) {
        res->late = true, res->late_op = r.late_op, res->late_dtype = r.late_dtype;
        snprintf(res->late_key, sizeof res->late_key, "%s", r.late_key);
        snprintf(res->late_line, sizeof res->late_line, "%s", r.late_line);
    }
    if (!st && c.expect_status == 0 && r.status == 0 && !r.error[0]) st = cf_oracle_expected(&c, o->profile, &x, &e);
    if (!st && s) st = cf_tolerance_for(S->cz, &c, o->profile, s->variant, o->strict_zero, &tol, &e);
    if (st) {
        res->err = st;
        snprintf(res->errmsg, sizeof res->errmsg, "%s", e.msg);
        goto done;
    }
    if (s) {
        cf_row_init(&res->row, cf_op_name(op), s->dtype, s->variant, &tol);
        cf_row_describe(&res->row, S->cz[op]);
    }
    if (r.not_applicable) { /* a protocol check with nothing to check (planned workspace 0) */
        res->not_applicable = true;
        goto done;
    }
    cf_score_case(&c, &x, &r, &tol, j->k, ref, s ? &res->row : NULL, &res->v, NULL, NULL, 0);
    if (!res->v.pass) {
        char key[160];
        cf_case_key(&c, key, sizeof key);
        snprintf(res->group, sizeof res->group, "%s %s", key, res->v.kind);
        if (!o->no_store && !g_hard) store_failure(S, j, &c, &x, res, s ? s->variant : "", ref); /* never a case our kill failed */
        /* the row links the stored case, or nothing */
        if (s) {
            res->row.nfailed_ids = 0;
            if (res->stored[0]) cf_row_add_failed(&res->row, res->stored);
            relink_worst(&res->row.worst, ref, res->stored);
            relink_worst(&res->row.worst_finite, ref, res->stored);
        }
    } else if (s) { /* a passing case is not stored: the row keeps case_index */
        relink_worst(&res->row.worst, ref, "");
        relink_worst(&res->row.worst_finite, ref, "");
    }
done:
    cf_expected_free(&x);
    cf_run_result_free(&r);
    cf_case_free(&c);
}

static void drain(sweep_ctx *S)
{
    for (;;) {
        int i = atomic_fetch_add(&S->next, 1);
        if (i >= S->njobs) break;
        eval_job(S, &S->jobs[i], &S->res[i]);
    }
}

static void *pool_thread(void *arg)
{
    sweep_ctx *S = arg;
    int seen = 0;
    for (;;) {
        pthread_mutex_lock(&S->mu);
        while (S->gen == seen && !S->quit) pthread_cond_wait(&S->go, &S->mu);
        if (S->quit) {
            pthread_mutex_unlock(&S->mu);
            break;
        }
        seen = S->gen;
        pthread_mutex_unlock(&S->mu);
        drain(S);
        pthread_mutex_lock(&S->mu);
        if (--S->active == 0) pthread_cond_signal(&S->done);
        pthread_mutex_unlock(&S->mu);
    }
    cf_worker_thread_release(); /* this thread's worker process, if any */
    orc_thread_release();       /* the oracle's MPFR caches would leak with the thread */
    return NULL;
}

/* One batch: the pool threads and this one take jobs until none is left. */
static void run_batch(sweep_ctx *S, int nthreads)
{
    atomic_store(&S->next, 0);
    pthread_mutex_lock(&S->mu);
    S->active = nthreads;
    S->gen++;
    pthread_cond_broadcast(&S->go);
    pthread_mutex_unlock(&S->mu);
    drain(S);
    pthread_mutex_lock(&S->mu);
    while (S->active > 0) pthread_cond_wait(&S->done, &S->mu);
    pthread_mutex_unlock(&S->mu);
}

/* The first difference between a case's run with 1 op thread (a) and with `many` (b): the status,
 * or the first output element whose bits differ ("" when identical). */
static void thread_difference(const cf_run_result *a, const cf_run_result *b, int many, char *diff, size_t cap)
{
    if (a->error[0] || b->error[0] || a->status || b->status) {
        if (a->status != b->status || !!a->error[0] != !!b->error[0])
            snprintf(diff, cap, "status %d with 1 op thread, %d with %d%s%s", a->status, b->status, many, b->error[0] ? ": " : "",
                     b->error);
        return;
    }
    for (int k = 0; k < a->nout; k++) {
        size_t es = cf_dtype_size(a->out[k].dtype);
        for (int64_t x = 0; x < a->out[k].n && a->out[k].n == b->out[k].n; x++) {
            const uint8_t *pa = a->out[k].bits + x * (int64_t)es, *pb = b->out[k].bits + x * (int64_t)es;
            if (!memcmp(pa, pb, es)) continue;
            uint64_t va = 0, vb = 0;
            memcpy(&va, pa, es);
            memcpy(&vb, pb, es);
            snprintf(diff, cap, "output %s flat element %lld is 0x%llx with 1 op thread, 0x%llx with %d", a->out[k].name,
                     (long long)x, (unsigned long long)va, (unsigned long long)vb, many);
            return;
        }
    }
}

/* Determinism across op threads (ops.md: results do not depend on the thread count): the first
 * valid case of each stream in the batch runs again with 1 op thread and with 2, 3 or 4 (in
 * turn), through the target's aclconformSetNumThreads, and the outputs must be bit-identical.
 * Runs on this thread while the pool is idle (the setting is process-wide in the built-in
 * target).  Appends one JOB_THREADS job + result per checked case; returns the new job count. */
static int thread_checks(sweep_ctx *S, int nj, int round)
{
    const cf_opts *o = S->o;
    if (!S->target->has_set_threads || o->exhaustive) return nj;
    int *tried = calloc((size_t)S->nstreams + 1, sizeof(int)); /* per stream: cases tried, -1 done */
    if (!tried) return nj;
    int n0 = nj;
    for (int i = 0; i < n0; i++) {
        const job_t *j = &S->jobs[i];
        /* the first of a stream's cases in the batch with at least 2 output elements (up to 4 tried) */
        if (j->kind != JOB_VALID || tried[j->stream] < 0 || tried[j->stream] >= 4 || S->res[i].skipped || S->res[i].err || g_signal)
            continue;
        tried[j->stream]++;
        const fz_stream *s = &S->streams[j->stream];
        cf_case c;
        if (fz_generate(S->cz[s->op], o->profile, s, o->seed, j->k, &c) != FZ_OK) continue;
        int64_t n = 0;
        for (int t = 0; t < c.ntensors; t++)
            if (c.tensors[t].present && c.tensors[t].output) n += cf_tensor_numel(&c.tensors[t]);
        if (n < 2) {
            cf_case_free(&c);
            continue;
        }
        tried[j->stream] = -1;
        int many = 2 + round % 3;
        cf_run_result a, b;
        cf_err e = {{0}};
        c.op_threads = 1;
        cf_status sa = cf_run_case(S->target, &c, o->timeout_s, &a, &e);
        c.op_threads = many;
        cf_status sb = sa ? sa : cf_run_case(S->target, &c, o->timeout_s, &b, &e);
        S->op_threads_hits[1]++;
        S->op_threads_hits[many]++;
        job_t *tj = &S->jobs[nj];
        result_t *r = &S->res[nj];
        memset(r, 0, sizeof *r);
        *tj = (job_t){JOB_THREADS, j->stream, s->op, 0, -1, j->k};
        nj++;
        cf_row_init(&r->row, cf_op_name(s->op), s->dtype, s->variant, NULL);
        r->v.pass = true;
        char diff[300] = "";
        if (!sa && !sb) thread_difference(&a, &b, many, diff, sizeof diff);
        /* a crash or a hang during the check is that, not a difference between thread counts
         * (issue 57: it was labelled nondeterministic) */
        const char *err = !sa && a.error[0] ? a.error : !sa && !sb && b.error[0] ? b.error : NULL;
        const char *kind = !err                              ? "nondeterministic"
                           : strstr(err, "timed out")        ? "timeout"
                           : strstr(err, "target crashed")   ? "crash"
                                                             : "error";
        if (err) snprintf(diff, sizeof diff, "%.200s (with %d op thread%s)", err, err == a.error ? 1 : many,
                          err == a.error ? "" : "s");
        if (diff[0]) {
            char key[160];
            cf_case_key(&c, key, sizeof key);
            r->v.pass = false;
            snprintf(r->v.kind, sizeof r->v.kind, "%s", kind);
            snprintf(r->v.first_failure, sizeof r->v.first_failure,
                     "FAIL %s (case %s#%lld of seed 0x%llx, not stored: replay runs one thread count): %s: %s", key,
                     cf_op_name(s->op), (long long)j->k, (unsigned long long)o->seed, kind, diff);
            snprintf(r->group, sizeof r->group, "%s %s", key, kind);
            r->row.failed_cases = 1;
            if (!err) r->row.mismatches[CF_MM_nondeterministic] = 1;
        }
        if (!sa) cf_run_result_free(&a);
        if (!sa && !sb) cf_run_result_free(&b);
        cf_case_free(&c);
    }
    free(tried);
    return nj;
}

/* ---- output: grouped FAIL lines, CI annotations, JUnit ---- */

typedef struct {
    char key[160];
    int64_t count, shown;
} group_t;

static group_t *group_of(group_t **g, int *n, int *cap, const char *key)
{
    for (int i = 0; i < *n; i++)
        if (!strcmp((*g)[i].key, key)) return &(*g)[i];
    if (*n == *cap) {
        int nc = *cap ? 2 * *cap : 32;
        group_t *ng = realloc(*g, sizeof(group_t) * (size_t)nc);
        if (!ng) return NULL;
        *g = ng;
        *cap = nc;
    }
    group_t *x = &(*g)[(*n)++];
    memset(x, 0, sizeof *x);
    snprintf(x->key, sizeof x->key, "%s", key);
    return x;
}

/* GitHub Actions workflow command: ::error title=T::MESSAGE with %, CR, LF escaped */
static void github_error(FILE *f, const char *title, const char *msg)
{
    fprintf(f, "::error title=%s::", title);
    for (const char *p = msg; *p; p++) {
        if (*p == '%') fputs("%25", f);
        else if (*p == '\r') fputs("%0D", f);
        else if (*p == '\n') fputs("%0A", f);
        else fputc(*p, f);
    }
    fputc('\n', f);
}

static void xml_text(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default:
            if (*p < 0x20 && *p != '\t' && *p != '\n') fprintf(f, "&#x%x;", *p);
            else fputc(*p, f);
        }
    }
}

typedef struct {
    char classname[64], name[128];
    int64_t cases, failures;
    char first[768];
} junit_case;

static cf_status write_junit(const char *path, const junit_case *tc, int n, double seconds, bool interrupted, cf_err *e)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return cf_fail(e, CFE_IO, "%s: out of memory", path);
    int nfail = 0;
    for (int i = 0; i < n; i++) nfail += tc[i].failures > 0;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(f, "<testsuites name=\"aclnn-conform\" tests=\"%d\" failures=\"%d\" time=\"%.3f\">\n", n, nfail, seconds);
    fprintf(f, "  <testsuite name=\"aclnn-conform sweep\" tests=\"%d\" failures=\"%d\" errors=\"%d\" time=\"%.3f\">\n", n,
            nfail, interrupted ? 1 : 0, seconds);
    for (int i = 0; i < n; i++) {
        fprintf(f, "    <testcase classname=\"");
        xml_text(f, tc[i].classname);
        fprintf(f, "\" name=\"");
        xml_text(f, tc[i].name);
        fprintf(f, "\">");
        if (tc[i].failures) {
            char msg[900];
            snprintf(msg, sizeof msg, "%lld of %lld cases failed: %s", (long long)tc[i].failures, (long long)tc[i].cases, tc[i].first);
            fprintf(f, "\n      <failure message=\"");
            xml_text(f, msg);
            fprintf(f, "\" type=\"conformance\">");
            xml_text(f, msg);
            fprintf(f, "</failure>\n    ");
        } else if (tc[i].cases == 0) {
            fprintf(f, "\n      <skipped message=\"no cases ran\"/>\n    ");
        }
        fprintf(f, "</testcase>\n");
    }
    if (interrupted)
        fprintf(f, "    <testcase classname=\"aclnn-conform\" name=\"run\"><error message=\"interrupted by a signal: the run is incomplete\"/></testcase>\n");
    fprintf(f, "  </testsuite>\n</testsuites>\n");
    fclose(f);
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    cf_status st = CFE_OK;
    if (slash && slash != dir) {
        *slash = '\0';
        st = cf_mkdirs(dir, e);
    }
    if (!st) st = cf_write_atomic(path, buf, len, e);
    free(buf);
    return st;
}

/* The target's short name: the library's file name without "lib" and ".so...". */
static void target_short(const char *spec, char *buf, size_t n)
{
    const char *b = strrchr(spec, '/');
    b = b ? b + 1 : spec;
    if (!strncmp(b, "lib", 3) && b[3]) b += 3;
    snprintf(buf, n, "%s", b);
    char *dot = strstr(buf, ".so");
    if (dot && dot != buf) *dot = '\0';
    for (char *p = buf; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || *p == '.'))
            *p = '_';
}

/* ---- the run: one state, phases in the order cmd_sweep calls them, one cleanup ---- */

typedef struct {
    cf_opts opts;                  /* the options, with the foreign target's corpus default */
    cz_constraints *cz[CF_OP_COUNT];
    cf_target target;
    bool target_open, foreign, pool_up, signals_set;
    char tname[128];
    /* what runs: streams (valid cases, one report row each) and status rows (invalid-input
     * rules, then three protocol checks per operator), sized from the constraint files */
    fz_stream *streams;
    cf_row *rows; /* ~2 KB each, and the lazily allocated plot, ids and examples */
    int nstreams, maxstreams;
    cf_status_row *srows;
    int nsrows, maxsrows, first_proto_row;
    int *op_streams; /* [op][i]: stream index of the op's i-th stream */
    int n_op_streams[CF_OP_COUNT];
    /* the pool, the batch and what the batches add up to */
    sweep_ctx S;
    pthread_t th[256];
    int nthreads;
    struct sigaction old_int, old_term;
    junit_case *jc;
    group_t *groups;
    int ngroups, gcap;
    int64_t total_cases, failures, internal, skipped, thread_checked, planned, over_budget;
    cJSON *failures_json;
    /* time and names */
    char started[32], run_id[256];
    double t0, budget, seconds;
    FILE *lines; /* FAIL lines: stdout, or stderr under --json */
    bool quiet, tty, github;
    int sig;
} sweep_run;

enum { BATCH = 8 }; /* case indices per stream (and per rule) per batch */

static int *op_stream(sweep_run *R, int op, int k) { return &R->op_streams[(size_t)op * (size_t)(R->maxstreams + 1) + (size_t)k]; }

/* Constraint files, the target's short name, and where its failures go. */
static cf_status sweep_setup(sweep_run *R, const cf_opts *o_in, cf_err *e)
{
    R->opts = *o_in;
    cf_opts *o = &R->opts;
    cf_status st = cf_load_constraints(o, R->cz, e);
    if (st) return st;
    target_short(o->target, R->tname, sizeof R->tname);
    R->foreign = strcmp(o->target, "builtin") != 0;
    /* a foreign target's failures never land in the golden corpus unless asked */
    if (R->foreign && !o->corpus_given) snprintf(o->corpus, sizeof o->corpus, "failures/%s", R->tname);
    return CFE_OK;
}

/* The selected (operator, dtype, variant) streams, each with its report row.  An empty selection
 * is a usage error, never a pass. */
static cf_status plan_streams(sweep_run *R, cf_err *e)
{
    const cf_opts *o = &R->opts;
    for (int op = 0; op < CF_OP_COUNT; op++)
        if (o->op_on[op]) {
            int n = fz_streams(R->cz[op], o->profile, NULL, 0), r = fz_rule_count(R->cz[op], o->profile);
            R->maxstreams += n > 0 ? n : 0;
            R->maxsrows += (r > 0 ? r : 0) + 3; /* the rules, then three protocol checks */
        }
    R->streams = calloc((size_t)R->maxstreams + 1, sizeof *R->streams);
    R->rows = calloc((size_t)R->maxstreams + 1, sizeof *R->rows);
    R->srows = calloc((size_t)R->maxsrows + 1, sizeof *R->srows);
    R->op_streams = calloc((size_t)CF_OP_COUNT * (size_t)(R->maxstreams + 1), sizeof(int));
    if (!R->streams || !R->rows || !R->srows || !R->op_streams) return cf_fail(e, CFE_IO, "out of memory");
    for (int op = 0; op < CF_OP_COUNT; op++) {
        if (!o->op_on[op]) continue;
        int n = fz_streams(R->cz[op], o->profile, R->streams + R->nstreams, R->maxstreams - R->nstreams);
        fz_stream *tmp = R->streams + R->nstreams; /* kept in place when selected, else overwritten */
        int kept = 0;
        for (int i = 0; i < n; i++) {
            if (!o->dtype_on[tmp[i].dtype]) continue;
            if (o->exhaustive && fz_exhaustive_count(R->cz[op], &tmp[i], o->exhaustive_f32) == 0) continue;
            fz_stream keep = tmp[i];
            tmp[kept++] = keep;
            cf_tol tol = {0};
            cz_tolerance(R->cz[op], o->profile, keep.dtype, keep.variant, &tol.max_ulp, &tol.max_scaled_ulp);
            cf_row_init(&R->rows[R->nstreams], cf_op_name((cf_op)op), keep.dtype, keep.variant, &tol);
            cf_row_describe(&R->rows[R->nstreams], R->cz[op]);
            R->nstreams++;
        }
    }
    if (R->nstreams > 0) return CFE_OK;
    char ops[256] = "", dts[128] = "";
    for (int op = 0; op < CF_OP_COUNT; op++)
        if (o->op_on[op]) snprintf(ops + strlen(ops), sizeof ops - strlen(ops), "%s%s", ops[0] ? "," : "", cf_op_name((cf_op)op));
    for (int d = 0; d < CF_DTYPE_COUNT; d++)
        if (o->dtype_on[d]) snprintf(dts + strlen(dts), sizeof dts - strlen(dts), "%s%s", dts[0] ? "," : "", cf_dtype_name((cf_dtype)d));
    return cf_fail(e, CFE_INPUT,
                   "sweep: nothing to run: no (operator, dtype) stream matches --op %s --dtype %s%s in profile %s "
                   "(see 'aclnn-conform list' for each operator's dtypes)",
                   ops, dts, o->exhaustive ? " --exhaustive" : "", o->profile);
}

static cf_status open_target(sweep_run *R, cf_err *e)
{
    const cf_opts *o = &R->opts;
    cf_status st = cf_target_open(o->target, &R->target, e);
    if (st) return st;
    R->target_open = true;
    R->target.guard_pages = o->guard_pages && R->target.isolate; /* the built-in one runs in this process */
    R->target.one_thread = R->foreign && o->jobs > 1; /* workers run one OpenMP thread each */
    if (!R->foreign && o->jobs > 1) { /* parallel over cases instead */
        aclconformSetNumThreads(1);
        R->target.default_threads = 1;
    }
    return CFE_OK;
}

static void add_status_row(sweep_run *R, int op, const char *rule, int32_t expected)
{
    if (R->nsrows >= R->maxsrows) return; /* not reached: maxsrows counts every rule and check */
    cf_status_row *sr = &R->srows[R->nsrows++];
    memset(sr, 0, sizeof *sr);
    snprintf(sr->op, sizeof sr->op, "%s", cf_op_name((cf_op)op));
    snprintf(sr->rule, sizeof sr->rule, "%s", rule);
    sr->expected = expected;
}

/* The invalid-input rules of each selected operator, then the protocol checks (run.h): three
 * rows per operator with a selected stream.  None under --exhaustive. */
static void plan_status_rows(sweep_run *R)
{
    const cf_opts *o = &R->opts;
    for (int op = 0; op < CF_OP_COUNT && !o->exhaustive; op++) {
        if (!o->op_on[op]) continue;
        int n = fz_rule_count(R->cz[op], o->profile);
        for (int i = 0; i < n; i++)
            add_status_row(R, op, fz_rule_name(R->cz[op], o->profile, i), fz_rule_status(R->cz[op], o->profile, i));
    }
    R->first_proto_row = R->nsrows;
    for (int i = 0; i < R->nstreams; i++) *op_stream(R, R->streams[i].op, R->n_op_streams[R->streams[i].op]++) = i;
    static const struct { const char *rule; int32_t status; } P[] = {
        {CF_PROTO_RULE_NULL_EXECUTOR, 161001}, {CF_PROTO_RULE_SHORT_WORKSPACE, 161002}, {CF_PROTO_RULE_NULL_WORKSPACE, 161002}};
    for (int op = 0; op < CF_OP_COUNT && !o->exhaustive; op++)
        if (R->n_op_streams[op])
            for (int i = 0; i < 3; i++) add_status_row(R, op, P[i].rule, P[i].status);
}

/* Cases of stream s the run makes (its case budget, or the exhaustive stream's length); 0 for a
 * time budget without --exhaustive. */
static int64_t stream_limit(const sweep_run *R, int s, int64_t unbounded)
{
    const cf_opts *o = &R->opts;
    if (o->exhaustive) {
        int64_t n = fz_exhaustive_count(R->cz[R->streams[s].op], &R->streams[s], o->exhaustive_f32);
        return o->cases && o->cases < n ? o->cases : n;
    }
    return o->cases ? o->cases : unbounded;
}

/* Names and clocks of the run, the banner, the job arrays, the pool and the signal handlers. */
static cf_status begin_run(sweep_run *R, cf_err *e)
{
    const cf_opts *o = &R->opts;
    time_t wall = time(NULL);
    char stamp[32];
    strftime(R->started, sizeof R->started, "%Y-%m-%dT%H:%M:%SZ", gmtime(&wall));
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", gmtime(&wall));
    /* unique per run: two shards, two targets or two runs in the same second never collide */
    char tag[32];
    cf_unique_tag(tag, sizeof tag); /* pid and random bits: two containers with one pid never collide */
    snprintf(R->run_id, sizeof R->run_id, "sweep-%llx-%s-%dof%d-%s-%s", (unsigned long long)o->seed, R->tname, o->shard_k,
             o->shard_n, stamp, tag);
    R->quiet = o->quiet;
    R->lines = o->json ? stderr : stdout; /* --json keeps stdout for the JSON */
    R->github = getenv("GITHUB_ACTIONS") && !strcmp(getenv("GITHUB_ACTIONS"), "true");
    if (!R->quiet)
        fprintf(stderr, "aclnn-conform sweep: seed 0x%llx, target %s, profile %s, shard %d/%d, %d streams, %s, %d jobs, corpus %s\n",
                (unsigned long long)o->seed, o->target, o->profile, o->shard_k, o->shard_n, R->nstreams,
                o->cases ? "case budget" : "time budget", o->jobs, o->no_store ? "(not stored)" : o->corpus);
    R->t0 = cf_now_s();
    R->budget = o->cases ? INFINITY : (o->time_s > 0 ? o->time_s : 60);
    R->tty = cf_stderr_is_tty() && !R->quiet;
    /* with a case budget: the whole run, for the progress line */
    R->planned = (int64_t)R->nsrows * ((o->invalid_cases + o->shard_n - 1 - o->shard_k) / o->shard_n);
    for (int s = 0; s < R->nstreams; s++) R->planned += (stream_limit(R, s, 0) + o->shard_n - 1 - o->shard_k) / o->shard_n;
    size_t cap = (size_t)(R->nstreams * BATCH + R->nsrows * BATCH + R->nstreams + 1); /* protocol rows, thread checks */
    R->failures_json = cJSON_CreateArray();
    R->jc = calloc((size_t)(R->nstreams + R->nsrows + 1), sizeof(junit_case));
    sweep_ctx *S = &R->S;
    S->o = o; /* the rest of S is zero (R is calloc'd) */
    S->cz = R->cz;
    S->target = &R->target;
    S->streams = R->streams;
    S->nstreams = R->nstreams;
    S->jobs = calloc(cap, sizeof(job_t));
    S->res = calloc(cap, sizeof(result_t));
    if (!S->jobs || !S->res || !R->jc || !R->failures_json) return cf_fail(e, CFE_IO, "out of memory");
    if (R->foreign && !realpath(o->target, S->target_real)) snprintf(S->target_real, sizeof S->target_real, "%s", o->target);
    else if (!R->foreign) snprintf(S->target_real, sizeof S->target_real, "builtin");
    S->deadline = R->t0 + R->budget;
    for (int op = 0; op < CF_OP_COUNT; op++)
        if (R->n_op_streams[op]) S->bins[op] = fz_bins_new(R->cz[op]);
    pthread_mutex_init(&S->cov_mu, NULL);
    pthread_mutex_init(&S->mu, NULL);
    pthread_cond_init(&S->go, NULL);
    pthread_cond_init(&S->done, NULL);
    R->pool_up = true;
    for (int i = 1; i < o->jobs && i < 256; i++)
        if (pthread_create(&R->th[R->nthreads], NULL, pool_thread, S) == 0) R->nthreads++;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    g_signal = 0;
    g_hard = 0;
    sigaction(SIGINT, &sa, &R->old_int);
    sigaction(SIGTERM, &sa, &R->old_term);
    R->signals_set = true;
    return CFE_OK;
}

/* The jobs of batch `round`: the invalid-input and protocol cases first (cheap; a status table
 * needs them), then BATCH case indices of every stream, so memory does not grow with the budget.
 * *more: some stream or rule has cases after this batch. */
static int plan_batch(sweep_run *R, int round, bool *more)
{
    const cf_opts *o = &R->opts;
    job_t *jobs = R->S.jobs;
    int nj = 0;
    *more = false;
    int64_t k0 = (int64_t)round * BATCH, k1 = (int64_t)(round + 1) * BATCH;
    for (int i = 0; i < R->nsrows; i++) {
        cf_op op;
        cf_op_parse(R->srows[i].op, &op);
        bool proto = i >= R->first_proto_row;
        int rule = proto ? 0 : fz_rule_find(R->cz[op], o->profile, R->srows[i].rule);
        if (proto) {
            cf_case *probe = calloc(1, sizeof *probe);
            if (probe) {
                snprintf(probe->rule, sizeof probe->rule, "%s", R->srows[i].rule);
                rule = (int)cf_protocol_of(probe);
                free(probe);
            }
        }
        for (int64_t k = k0; k < k1 && k < o->invalid_cases; k++) {
            if (k % o->shard_n != o->shard_k) continue;
            if (proto) /* the op's streams in turn: every dtype meets the protocol */
                jobs[nj++] = (job_t){JOB_PROTOCOL, *op_stream(R, op, (int)(k % R->n_op_streams[op])), op, rule, i, k};
            else
                jobs[nj++] = (job_t){JOB_INVALID, -1, op, rule, i, k};
        }
        if (k1 < o->invalid_cases) *more = true;
    }
    for (int s = 0; s < R->nstreams; s++) {
        int64_t limit = stream_limit(R, s, INT64_MAX);
        for (int64_t k = k0; k < k1 && k < limit; k++)
            if (k % o->shard_n == o->shard_k) jobs[nj++] = (job_t){o->exhaustive ? JOB_EXHAUSTIVE : JOB_VALID, s, 0, 0, -1, k};
        if (k1 < limit) *more = true;
    }
    return nj;
}

/* One failing result: its row example, its JUnit case, the corpus list, and its FAIL line
 * (the first --max-fail-lines of its group). */
static void report_failure(sweep_run *R, const job_t *j, const result_t *r, junit_case *tc, bool status_job)
{
    const cf_opts *o = &R->opts;
    R->failures++;
    if (!status_job) cf_row_add_example(&R->rows[j->stream], r->v.kind, j->k, r->v.elements, r->v.max_ulp, r->stored, r->v.first_failure);
    if (!tc->failures++) snprintf(tc->first, sizeof tc->first, "%s", r->v.first_failure);
    if (r->stored[0]) cJSON_AddItemToArray(R->failures_json, cJSON_CreateString(r->stored));
    group_t *g = group_of(&R->groups, &R->ngroups, &R->gcap, r->group);
    if (!g) return;
    g->count++;
    if (R->quiet || (!o->all_lines && g->shown >= o->max_fail_lines)) return;
    g->shown++;
    if (R->tty) fprintf(stderr, "\r\033[K");
    fprintf(R->lines, "%s\n", r->v.first_failure);
    if (r->stored[0]) {
        char q1[2600], q2[2200];
        fprintf(R->lines, "  rerun: %s replay %s%s%s\n", CF_TOOL_NAME, cf_shell_quote(r->stored, q1, sizeof q1),
                R->foreign ? " --target " : "", R->foreign ? cf_shell_quote(R->S.target_real, q2, sizeof q2) : "");
    }
    if (R->github && g->shown == 1) {
        char title[200];
        snprintf(title, sizeof title, "aclnn-conform %s", r->group);
        github_error(stdout, title, r->v.first_failure);
    }
    fflush(R->lines);
}

/* Merge the batch's results in job order (deterministic for any --jobs). */
/* An earlier case's late write (run.h), reported by the case whose run found it: a failure of
 * the earlier case's row (op, dtype, and the variant its key names), never of the finder's. */
static void late_write(sweep_run *R, const result_t *r)
{
    cf_row *row = NULL;
    for (int s = 0; s < R->nstreams; s++) {
        cf_row *w = &R->rows[s];
        if (strcmp(w->op, cf_op_name((cf_op)r->late_op)) || (int)w->dtype != r->late_dtype) continue;
        if (!row || (w->variant[0] && strstr(r->late_key, w->variant))) row = w;
    }
    R->failures++;
    if (row) row->failed_cases++, row->mismatches[CF_MM_wrote_outside]++;
    if (R->tty) fprintf(stderr, "\r\033[K");
    fprintf(R->lines, "%s\n", r->late_line);
}

static void merge_batch(sweep_run *R, int nj)
{
    for (int i = 0; i < nj; i++) {
        const result_t *r = &R->S.res[i];
        const job_t *j = &R->S.jobs[i];
        if (r->skipped || g_hard) {
            R->skipped++;
            continue;
        }
        if (r->over_budget) {
            R->over_budget++;
            continue;
        }
        if (r->late) late_write(R, r);
        if (j->kind == JOB_THREADS) { /* a check of a case counted already */
            R->thread_checked++;
            cf_row_merge(&R->rows[j->stream], &r->row);
            if (r->v.pass) continue;
            R->total_cases++; /* counted once more as the failure it is */
        }
        if (r->not_applicable) {
            R->srows[j->status_row].not_applicable++;
            continue;
        }
        R->total_cases++;
        if (r->err) {
            R->internal++;
            fprintf(stderr, "%saclnn-conform: internal error: %s\n", R->tty ? "\r\033[K" : "", r->errmsg);
            continue;
        }
        bool status_job = j->kind == JOB_INVALID || j->kind == JOB_PROTOCOL;
        junit_case *tc = status_job ? &R->jc[R->nstreams + j->status_row] : &R->jc[j->stream];
        tc->cases++;
        if (status_job) {
            cf_status_row *sr = &R->srows[j->status_row];
            sr->cases++;
            if (!r->v.pass) {
                sr->mismatches++;
                if (!sr->example[0]) snprintf(sr->example, sizeof sr->example, "%s", r->stored);
            }
        } else if (j->kind != JOB_THREADS) {
            cf_row_merge(&R->rows[j->stream], &r->row);
        }
        if (!r->v.pass) report_failure(R, j, r, tc, status_job);
    }
    for (int i = 0; i < nj; i++) cf_row_free(&R->S.res[i].row); /* merged: the grids are copied */
}

/* The progress line on a terminal (cases done / total, elapsed, ETA, failures so far), a
 * heartbeat line off one (for CI logs).  Returns true when the run is over. */
static bool progress(sweep_run *R, bool more, double *last_draw, double *last_beat, double beat)
{
    double el = cf_now_s() - R->t0;
    bool last = !more || el >= R->budget || g_signal;
    long long n = (long long)R->total_cases, f = (long long)R->failures;
    if (R->tty && (last || el - *last_draw >= 0.2)) {
        *last_draw = el;
        if (isfinite(R->budget))
            fprintf(stderr, "\r\033[K%lld cases, %.0f s of %.0f s, ETA %.0f s, %lld failures", n, el, R->budget,
                    R->budget > el ? R->budget - el : 0.0, f);
        else
            fprintf(stderr, "\r\033[K%lld / %lld cases, %.0f s, ETA %.0f s, %lld failures", n, (long long)R->planned, el,
                    n ? el * (double)(R->planned - n) / (double)n : 0.0, f);
    } else if (!R->tty && !R->quiet && el - *last_beat >= beat && !last) {
        *last_beat = el;
        if (isfinite(R->budget))
            fprintf(stderr, "aclnn-conform: %lld cases, %.0f s of %.0f s, %lld failures\n", n, el, R->budget, f);
        else
            fprintf(stderr, "aclnn-conform: %lld / %lld cases, %.0f s, %lld failures\n", n, (long long)R->planned, el, f);
    }
    return last;
}

static void run_batches(sweep_run *R)
{
    double beat = 10; /* heartbeat interval off a terminal (ACLNN_CONFORM_HEARTBEAT=S overrides) */
    const char *hb = getenv("ACLNN_CONFORM_HEARTBEAT");
    if (hb && atof(hb) > 0) beat = atof(hb);
    double last_draw = -1, last_beat = 0;
    for (int round = 0;; round++) {
        bool more;
        int nj = plan_batch(R, round, &more);
        memset(R->S.res, 0, sizeof(result_t) * (size_t)nj);
        R->S.njobs = nj;
        run_batch(&R->S, R->nthreads);
        nj = thread_checks(&R->S, nj, round);
        merge_batch(R, nj);
        if (progress(R, more, &last_draw, &last_beat, beat)) break;
    }
    if (R->tty) fprintf(stderr, "\n");
    R->sig = g_signal;
    R->seconds = cf_now_s() - R->t0;
}

/* Stop the pool (idempotent). */
static void stop_pool(sweep_run *R)
{
    sweep_ctx *S = &R->S;
    if (!R->pool_up) return;
    pthread_mutex_lock(&S->mu);
    S->quit = true;
    pthread_cond_broadcast(&S->go);
    pthread_mutex_unlock(&S->mu);
    for (int i = 0; i < R->nthreads; i++) pthread_join(R->th[i], NULL);
    R->nthreads = 0;
}

/* --keep-worst: the worst element's cases of every row, stored (one case stored once). */
static void keep_worst_cases(sweep_run *R)
{
    for (int s = 0; s < R->nstreams && R->opts.keep_worst; s++) {
        keep_worst(&R->S, s, &R->rows[s].worst);
        cf_worst *a = &R->rows[s].worst, *b = &R->rows[s].worst_finite;
        if (a->has && b->has && a->case_index == b->case_index && !b->case_ref[0])
            snprintf(b->case_ref, sizeof b->case_ref, "%s", a->case_ref);
        keep_worst(&R->S, s, b);
    }
}

/* The structural coverage: per operator, the generator's bins (fuzz.h) and the op thread counts
 * cases ran with ("default" = the target's own choice). */
static void add_coverage(sweep_run *R, cJSON *rep)
{
    sweep_ctx *S = &R->S;
    cJSON *cov = cJSON_AddObjectToObject(rep, "coverage");
    cJSON *thr = cJSON_AddObjectToObject(cov, "op_threads");
    static const char *const tn[5] = {"default", "1", "2", "3", "4"};
    int dt = R->target.default_threads > 0 && R->target.default_threads <= 4 ? R->target.default_threads : 0;
    for (int op = 0; op < CF_OP_COUNT; op++) /* every valid case ran at the target's default */
        if (S->bins[op]) S->op_threads_hits[dt] += fz_bins_cases(S->bins[op]);
    for (int i = 0; i < 5; i++) cJSON_AddNumberToObject(thr, tn[i], (double)S->op_threads_hits[i]);
    cJSON *covops = cJSON_AddArrayToObject(cov, "ops");
    for (int op = 0; op < CF_OP_COUNT; op++)
        if (S->bins[op]) {
            cJSON *bj = fz_bins_to_cjson(S->bins[op]);
            if (bj) cJSON_AddItemToArray(covops, bj);
        }
}

/* The report JSON (and the JUnit names of its rows). */
static cJSON *build_report(sweep_run *R)
{
    const cf_opts *o = &R->opts;
    cJSON *rep = cf_report_new("sweep", o, R->seconds, R->total_cases, R->started);
    cJSON *runj = cJSON_GetObjectItemCaseSensitive(rep, "run");
    cJSON_AddStringToObject(runj, "id", R->run_id);
    if (R->foreign) {
        cJSON_AddStringToObject(runj, "target_path", R->S.target_real);
        cJSON_AddStringToObject(runj, "target_sha256", R->target.sha256);
    }
    cJSON_AddStringToObject(runj, "corpus", o->no_store ? "" : o->corpus);
    cJSON_AddBoolToObject(runj, "interrupted", R->sig != 0);
    if (R->skipped) cJSON_AddNumberToObject(runj, "skipped", (double)R->skipped);
    if (R->over_budget) cJSON_AddNumberToObject(runj, "over_max_bytes", (double)R->over_budget);
    cJSON_AddNumberToObject(runj, "thread_checks", (double)R->thread_checked);
    cJSON *results = cJSON_AddArrayToObject(rep, "results");
    for (int s = 0; s < R->nstreams; s++) {
        const cf_row *row = &R->rows[s];
        cJSON_AddItemToArray(results, cf_row_to_json(row));
        snprintf(R->jc[s].classname, sizeof R->jc[s].classname, "%s", row->op);
        snprintf(R->jc[s].name, sizeof R->jc[s].name, "%s %s", cf_dtype_name(row->dtype), row->variant[0] ? row->variant : "-");
    }
    cJSON *sc = cJSON_AddArrayToObject(rep, "status_checks");
    for (int i = 0; i < R->nsrows; i++) {
        const cf_status_row *sr = &R->srows[i];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "op", sr->op);
        cJSON_AddStringToObject(x, "rule", sr->rule);
        cJSON_AddNumberToObject(x, "expected", sr->expected);
        cJSON_AddNumberToObject(x, "cases", (double)sr->cases);
        cJSON_AddNumberToObject(x, "mismatches", (double)sr->mismatches);
        if (i >= R->first_proto_row) cJSON_AddNumberToObject(x, "not_applicable", (double)sr->not_applicable);
        cJSON_AddStringToObject(x, "example", sr->example);
        cJSON_AddItemToArray(sc, x);
        junit_case *tc = &R->jc[R->nstreams + i];
        snprintf(tc->classname, sizeof tc->classname, "%s", sr->op);
        snprintf(tc->name, sizeof tc->name, "status %s", sr->rule);
    }
    cJSON_AddItemToObject(rep, "failures", R->failures_json);
    R->failures_json = NULL; /* owned by the report now */
    add_coverage(R, rep);
    return rep;
}

/* --coverage: one line per bin group, hits per bin, the empty ones marked. */
static void print_coverage(const sweep_run *R)
{
    const sweep_ctx *S = &R->S;
    int missing = 0;
    printf("coverage (cases per structural bin; '!' = never reached):\n");
    for (int op = 0; op < CF_OP_COUNT; op++) {
        fz_bins *b = S->bins[op];
        if (!b) continue;
        missing += fz_bins_missing(b);
        const char *group = NULL;
        for (int i = 0; i < fz_bins_count(b); i++) {
            if (!group || strcmp(group, fz_bins_group(b, i))) {
                group = fz_bins_group(b, i);
                printf("%s  %-31s %-12s", i ? "\n" : "", cf_op_name((cf_op)op), group);
            }
            const char *name = fz_bins_name(b, i), *colon = strchr(name, ':');
            int64_t h = fz_bins_hits(b, i);
            printf(" %s%s=%lld", h ? "" : "!", colon ? colon + 1 : name, (long long)h);
        }
        printf("\n");
    }
    const int64_t *t = S->op_threads_hits;
    printf("  op threads: default=%lld 1=%lld 2=%lld 3=%lld 4=%lld; %d bins never reached\n", (long long)t[0],
           (long long)t[1], (long long)t[2], (long long)t[3], (long long)t[4], missing);
}

/* The text ending: coverage, counted-but-not-shown groups, the summary table, the verdict. */
static void print_summary(const sweep_run *R, const char *path, bool written)
{
    const cf_opts *o = &R->opts;
    long long n = (long long)R->total_cases, bad = (long long)(R->failures + R->internal);
    if (!R->quiet && o->coverage) print_coverage(R);
    if (!R->quiet) {
        for (int i = 0; i < R->ngroups; i++)
            if (R->groups[i].count > R->groups[i].shown)
                printf("FAIL %s: %lld failing cases, %lld shown (--all or --max-fail-lines N for more)\n", R->groups[i].key,
                       (long long)R->groups[i].count, (long long)R->groups[i].shown);
        cf_print_summary(stdout, R->rows, R->nstreams);
        int64_t smm = 0, sc_cases = 0;
        for (int i = 0; i < R->nsrows; i++) smm += R->srows[i].mismatches, sc_cases += R->srows[i].cases;
        printf("status checks: %d rules, %lld cases, %lld mismatches\n", R->nsrows, (long long)sc_cases, (long long)smm);
        printf("%lld cases in %.1f s, %lld failing in %d groups; report %s; seed 0x%llx\n", n, R->seconds,
               (long long)R->failures, R->ngroups, written ? path : "NOT WRITTEN", (unsigned long long)o->seed);
        if (R->failures && !o->no_store) printf("failing cases stored under %s/\n", o->corpus);
    }
    if (R->over_budget)
        printf("warning: %lld cases larger than --max-bytes %llu were not run (run.over_max_bytes)\n", (long long)R->over_budget,
               (unsigned long long)cf_max_bytes());
    int64_t unc = 0; /* numerics.md §2: a warning, never silence (--quiet too) */
    int unc_rows = 0;
    for (int i = 0; i < R->nstreams; i++) unc += R->rows[i].uncertain, unc_rows += R->rows[i].uncertain > 0;
    if (unc)
        printf("warning: %lld output elements in %d rows got no verdict (oracle-uncertain; the report counts them per "
               "row)\n", (long long)unc, unc_rows);
    if (R->sig)
        printf("sweep: INTERRUPTED by signal %d after %lld cases (%lld passed, %lld failed); report marked interrupted\n", R->sig,
               n, n - bad, bad);
    else printf("sweep: %lld passed, %lld failed\n", n - bad, bad);
}

/* Write the report (and --junit), print the ending.  Returns the exit code's share: CFE_IO when
 * a file was not written. */
static cf_status finish_run(sweep_run *R)
{
    const cf_opts *o = &R->opts;
    keep_worst_cases(R);
    cJSON *rep = build_report(R);
    char path[2048];
    if (o->output) snprintf(path, sizeof path, "%s", o->output);
    else snprintf(path, sizeof path, "%s/%s.json", o->out_dir, R->run_id);
    cf_err e = {{0}}, je = {{0}};
    cf_status st = o->output ? cf_write_report(path, rep, &e) : cf_write_report_new(path, rep, &e);
    cf_status jst = o->junit ? write_junit(o->junit, R->jc, R->nstreams + R->nsrows, R->seconds, R->sig != 0, &je) : CFE_OK;
    if (o->json) {
        char *txt = cJSON_PrintUnformatted(rep);
        if (txt) printf("%s\n", txt);
        free(txt);
    } else {
        print_summary(R, path, !st);
    }
    if (st) fprintf(stderr, "aclnn-conform: %s\n", e.msg);
    if (jst) fprintf(stderr, "aclnn-conform: %s\n", je.msg);
    cJSON_Delete(rep);
    return st || jst ? CFE_IO : CFE_OK;
}

/* The one cleanup, for every exit path (each part is released only if it was set up). */
static void sweep_free(sweep_run *R)
{
    sweep_ctx *S = &R->S;
    stop_pool(R);
    if (R->pool_up) {
        pthread_mutex_destroy(&S->mu);
        pthread_mutex_destroy(&S->cov_mu);
        pthread_cond_destroy(&S->go);
        pthread_cond_destroy(&S->done);
    }
    if (R->signals_set) {
        sigaction(SIGINT, &R->old_int, NULL);
        sigaction(SIGTERM, &R->old_term, NULL);
    }
    for (int op = 0; op < CF_OP_COUNT; op++) fz_bins_free(S->bins[op]);
    free(S->jobs);
    free(S->res);
    cJSON_Delete(R->failures_json);
    free(R->jc);
    free(R->groups);
    cf_rows_free(R->rows, R->nstreams);
    free(R->streams);
    free(R->srows);
    free(R->op_streams);
    if (R->target_open) cf_target_close(&R->target);
    for (int i = 0; i < CF_OP_COUNT; i++) cz_free(R->cz[i]);
}

int cmd_sweep(const cf_opts *o_in)
{
    sweep_run *R = calloc(1, sizeof *R);
    if (!R) {
        fprintf(stderr, "aclnn-conform: out of memory\n");
        return CFE_IO;
    }
    cf_err e = {{0}};
    cf_status st;
    if ((st = sweep_setup(R, o_in, &e)) || (st = plan_streams(R, &e)) || (st = open_target(R, &e))) goto out;
    plan_status_rows(R);
    if ((st = begin_run(R, &e))) goto out;
    run_batches(R);
    stop_pool(R);
    cf_status wst = finish_run(R);
    int rc = R->failures ? CFE_FAIL : CFE_OK;
    if (R->total_cases == 0 && !R->sig) {
        fprintf(stderr, "aclnn-conform sweep: no case ran (budget too small?): nothing was checked\n");
        rc = CFE_INPUT;
    }
    if (R->internal || wst) rc = CFE_IO;
    if (R->sig) rc = 128 + R->sig; /* 130 SIGINT, 143 SIGTERM: the shell's convention */
    sweep_free(R);
    free(R);
    return rc;
out:
    fprintf(stderr, "aclnn-conform%s%s\n", strncmp(e.msg, "sweep: ", 7) ? ": " : " ", e.msg);
    sweep_free(R);
    free(R);
    return st;
}
