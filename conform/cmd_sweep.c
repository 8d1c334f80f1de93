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

static void on_signal(int sig)
{
    if (g_signal) { /* the second one: stop now */
        cf_worker_kill_all();
        _exit(128 + sig);
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
    fz_status fs;
    const fz_stream *s = j->kind == JOB_INVALID ? NULL : &S->streams[j->stream];
    cf_op op = s ? s->op : j->op;
    res->not_applicable = false;
    if (j->kind == JOB_PROTOCOL) { /* valid inputs of a stream of op, the protocol step as the rule */
        s = NULL;
        /* indices of their own per check (2^40 + check * 2^32 + k): distinct inputs, distinct ids */
        fs = fz_generate(S->cz[op], o->profile, &S->streams[j->stream], o->seed,
                         (INT64_C(1) << 40) + ((int64_t)j->rule << 32) + j->k, &c);
        if (fs == FZ_OK) {
            static const char *const names[] = {"", CF_PROTO_RULE_NULL_EXECUTOR, CF_PROTO_RULE_SHORT_WORKSPACE,
                                                CF_PROTO_RULE_NULL_WORKSPACE};
            snprintf(c.rule, sizeof c.rule, "%s", names[j->rule]);
            c.expect_status = j->rule == CF_PROTO_NULL_EXECUTOR ? 161001 : 161002;
        }
    } else if (j->kind == JOB_VALID) fs = fz_generate(S->cz[op], o->profile, s, o->seed, j->k, &c);
    else if (j->kind == JOB_EXHAUSTIVE) fs = fz_exhaustive_case(S->cz[op], o->profile, s, o->seed, j->k, &c);
    else fs = fz_generate_invalid(S->cz[op], o->profile, j->rule, o->seed, j->k, &c);
    if (fs != FZ_OK) {
        res->err = CFE_IO;
        snprintf(res->errmsg, sizeof res->errmsg, "generator failed (%s) for %s case %lld", fz_status_name(fs),
                 cf_op_name(op), (long long)j->k);
        return;
    }
    snprintf(c.profile, sizeof c.profile, "%s", o->profile);
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
        if (!o->no_store) store_failure(S, j, &c, &x, res, s ? s->variant : "", ref);
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
        if (!sa && !sb) {
            if (a.error[0] || b.error[0] || a.status || b.status) {
                if (a.status != b.status || !!a.error[0] != !!b.error[0])
                    snprintf(diff, sizeof diff, "status %d with 1 op thread, %d with %d%s%s", a.status, b.status, many,
                             b.error[0] ? ": " : "", b.error);
            } else {
                for (int k = 0; k < a.nout && !diff[0]; k++) {
                    size_t es = cf_dtype_size(a.out[k].dtype);
                    for (int64_t x = 0; x < a.out[k].n && a.out[k].n == b.out[k].n; x++)
                        if (memcmp(a.out[k].bits + x * (int64_t)es, b.out[k].bits + x * (int64_t)es, es)) {
                            uint64_t va = 0, vb = 0;
                            memcpy(&va, a.out[k].bits + x * (int64_t)es, es);
                            memcpy(&vb, b.out[k].bits + x * (int64_t)es, es);
                            snprintf(diff, sizeof diff, "output %s flat element %lld is 0x%llx with 1 op thread, 0x%llx with %d",
                                     a.out[k].name, (long long)x, (unsigned long long)va, (unsigned long long)vb, many);
                            break;
                        }
                }
            }
        }
        if (!sa) cf_run_result_free(&a);
        if (!sa && !sb) cf_run_result_free(&b);
        if (diff[0]) {
            char key[160];
            cf_case_key(&c, key, sizeof key);
            r->v.pass = false;
            snprintf(r->v.kind, sizeof r->v.kind, "nondeterministic");
            snprintf(r->v.first_failure, sizeof r->v.first_failure,
                     "FAIL %s (case %s#%lld of seed 0x%llx, not stored: replay runs one thread count): nondeterministic: %s", key,
                     cf_op_name(s->op), (long long)j->k, (unsigned long long)o->seed, diff);
            snprintf(r->group, sizeof r->group, "%s nondeterministic", key);
            r->row.failed_cases = 1;
            r->row.mismatches[CF_MM_nondeterministic] = 1;
        }
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

int cmd_sweep(const cf_opts *o_in)
{
    cf_opts opts = *o_in, *o = &opts;
    cf_err e = {{0}};
    cz_constraints *cz[CF_OP_COUNT] = {0};
    cf_target target;
    cf_status st = cf_load_constraints(o, cz, &e);
    if (st) {
        fprintf(stderr, "aclnn-conform: %s\n", e.msg);
        return st;
    }
    char tname[128];
    target_short(o->target, tname, sizeof tname);
    bool foreign = strcmp(o->target, "builtin") != 0;
    /* a foreign target's failures never land in the golden corpus unless asked */
    if (foreign && !o->corpus_given) snprintf(o->corpus, sizeof o->corpus, "failures/%s", tname);

    /* streams and status rows, sized from the constraint files (no cap) */
    int maxstreams = 0, maxsrows = 0;
    for (int op = 0; op < CF_OP_COUNT; op++)
        if (o->op_on[op]) {
            int n = fz_streams(cz[op], o->profile, NULL, 0), r = fz_rule_count(cz[op], o->profile);
            maxstreams += n > 0 ? n : 0;
            maxsrows += (r > 0 ? r : 0) + 3; /* the rules, then three protocol checks */
        }
    fz_stream *streams = calloc((size_t)maxstreams + 1, sizeof *streams);
    cf_row *rows = calloc((size_t)maxstreams + 1, sizeof(cf_row)); /* ~0.1 MB each (the error plot) */
    cf_status_row *srows = calloc((size_t)maxsrows + 1, sizeof *srows);
    int *op_streams = calloc((size_t)CF_OP_COUNT * (size_t)(maxstreams + 1), sizeof(int)); /* [op][i]: stream index */
    if (!streams || !rows || !srows || !op_streams) {
        fprintf(stderr, "aclnn-conform: out of memory\n");
        for (int i = 0; i < CF_OP_COUNT; i++) cz_free(cz[i]);
        free(streams), free(rows), free(srows), free(op_streams);
        return CFE_IO;
    }
    int nstreams = 0;
    for (int op = 0; op < CF_OP_COUNT; op++) {
        if (!o->op_on[op]) continue;
        int n = fz_streams(cz[op], o->profile, streams + nstreams, maxstreams - nstreams);
        fz_stream *tmp = streams + nstreams; /* kept in place when selected, else overwritten */
        int kept = 0;
        for (int i = 0; i < n; i++) {
            if (!o->dtype_on[tmp[i].dtype]) continue;
            if (o->exhaustive && fz_exhaustive_count(cz[op], &tmp[i], o->exhaustive_f32) == 0) continue;
            fz_stream keep = tmp[i];
            tmp[kept++] = keep;
            cf_tol tol = {0};
            cz_tolerance(cz[op], o->profile, keep.dtype, keep.variant, &tol.max_ulp, &tol.max_scaled_ulp);
            cf_row_init(&rows[nstreams], cf_op_name((cf_op)op), keep.dtype, keep.variant, &tol);
            cf_row_describe(&rows[nstreams], cz[op]);
            nstreams++;
        }
    }
    if (nstreams == 0) { /* an empty selection is a usage error, never a pass */
        char ops[256] = "", dts[128] = "";
        for (int op = 0; op < CF_OP_COUNT; op++)
            if (o->op_on[op]) snprintf(ops + strlen(ops), sizeof ops - strlen(ops), "%s%s", ops[0] ? "," : "", cf_op_name((cf_op)op));
        for (int d = 0; d < CF_DTYPE_COUNT; d++)
            if (o->dtype_on[d]) snprintf(dts + strlen(dts), sizeof dts - strlen(dts), "%s%s", dts[0] ? "," : "", cf_dtype_name((cf_dtype)d));
        fprintf(stderr, "aclnn-conform sweep: nothing to run: no (operator, dtype) stream matches --op %s --dtype %s%s in profile %s "
                        "(see 'aclnn-conform list' for each operator's dtypes)\n",
                ops, dts, o->exhaustive ? " --exhaustive" : "", o->profile);
        for (int i = 0; i < CF_OP_COUNT; i++) cz_free(cz[i]);
        free(streams), free(rows), free(srows), free(op_streams);
        return CFE_INPUT;
    }
    if ((st = cf_target_open(o->target, &target, &e))) {
        fprintf(stderr, "aclnn-conform: %s\n", e.msg);
        for (int i = 0; i < CF_OP_COUNT; i++) cz_free(cz[i]);
        free(streams), free(rows), free(srows), free(op_streams);
        return st;
    }
    target.guard_pages = o->guard_pages;
    target.one_thread = foreign && o->jobs > 1; /* workers run one OpenMP thread each */
    if (!foreign && o->jobs > 1) { /* parallel over cases instead */
        aclconformSetNumThreads(1);
        target.default_threads = 1;
    }
    int nsrows = 0;
    for (int op = 0; op < CF_OP_COUNT && !o->exhaustive; op++) {
        if (!o->op_on[op]) continue;
        int n = fz_rule_count(cz[op], o->profile);
        for (int i = 0; i < n && nsrows < maxsrows; i++) {
            cf_status_row *sr = &srows[nsrows++];
            memset(sr, 0, sizeof *sr);
            snprintf(sr->op, sizeof sr->op, "%s", cf_op_name((cf_op)op));
            snprintf(sr->rule, sizeof sr->rule, "%s", fz_rule_name(cz[op], o->profile, i));
            sr->expected = fz_rule_status(cz[op], o->profile, i);
        }
    }

    /* protocol checks (run.h): three rows per operator with a selected stream */
    int first_proto_row = nsrows, n_op_streams[CF_OP_COUNT] = {0};
#define OP_STREAM(op, k) op_streams[(size_t)(op) * (size_t)(maxstreams + 1) + (size_t)(k)]
    for (int i = 0; i < nstreams; i++) OP_STREAM(streams[i].op, n_op_streams[streams[i].op]++) = i;
    for (int op = 0; op < CF_OP_COUNT && !o->exhaustive; op++) {
        if (!n_op_streams[op]) continue;
        static const struct { const char *rule; int32_t status; } P[] = {
            {CF_PROTO_RULE_NULL_EXECUTOR, 161001}, {CF_PROTO_RULE_SHORT_WORKSPACE, 161002}, {CF_PROTO_RULE_NULL_WORKSPACE, 161002}};
        for (int i = 0; i < 3 && nsrows < maxsrows; i++) {
            cf_status_row *sr = &srows[nsrows];
            memset(sr, 0, sizeof *sr);
            snprintf(sr->op, sizeof sr->op, "%s", cf_op_name((cf_op)op));
            snprintf(sr->rule, sizeof sr->rule, "%s", P[i].rule);
            sr->expected = P[i].status;
            nsrows++;
        }
    }

    time_t wall = time(NULL);
    char started[32], stamp[32], run_id[256];
    strftime(started, sizeof started, "%Y-%m-%dT%H:%M:%SZ", gmtime(&wall));
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", gmtime(&wall));
    /* unique per run: two shards, two targets or two runs in the same second never collide */
    snprintf(run_id, sizeof run_id, "sweep-%llx-%s-%dof%d-%s-%ld", (unsigned long long)o->seed, tname, o->shard_k,
             o->shard_n, stamp, (long)getpid());
    bool quiet = o->quiet;
    FILE *lines = o->json ? stderr : stdout; /* --json keeps stdout for the JSON */
    bool github = getenv("GITHUB_ACTIONS") && !strcmp(getenv("GITHUB_ACTIONS"), "true");
    if (!quiet)
        fprintf(stderr, "aclnn-conform sweep: seed 0x%llx, target %s, profile %s, shard %d/%d, %d streams, %s, %d jobs, corpus %s\n",
                (unsigned long long)o->seed, o->target, o->profile, o->shard_k, o->shard_n, nstreams,
                o->cases ? "case budget" : "time budget", o->jobs, o->no_store ? "(not stored)" : o->corpus);
    double t0 = cf_now_s();
    double budget = o->cases ? INFINITY : (o->time_s > 0 ? o->time_s : 60);
    int64_t total_cases = 0, failures = 0, internal = 0, skipped = 0, thread_checked = 0;
    cJSON *failures_json = cJSON_CreateArray();
    bool tty = cf_stderr_is_tty() && !quiet;
    double beat = 10; /* heartbeat interval off a terminal (ACLNN_CONFORM_HEARTBEAT=S overrides) */
    const char *hb = getenv("ACLNN_CONFORM_HEARTBEAT");
    if (hb && atof(hb) > 0) beat = atof(hb);

    const int B = 8; /* case indices per stream per batch */
    double last_draw = -1, last_beat = 0;
    int64_t planned = 0; /* with a case budget: the whole run, for the progress line */
    planned += (int64_t)nsrows * ((o->invalid_cases + o->shard_n - 1 - o->shard_k) / o->shard_n);
    for (int s = 0; s < nstreams; s++) {
        int64_t limit = o->cases ? o->cases : 0;
        if (o->exhaustive) limit = fz_exhaustive_count(cz[streams[s].op], &streams[s], o->exhaustive_f32);
        if (o->cases && limit > o->cases) limit = o->cases;
        planned += (limit + o->shard_n - 1 - o->shard_k) / o->shard_n;
    }
    size_t cap = (size_t)(nstreams * B + nsrows * B + nstreams + 1); /* protocol rows, thread checks */
    job_t *jobs = calloc(cap, sizeof(job_t));
    result_t *res = calloc(cap, sizeof(result_t));
    junit_case *jc = calloc((size_t)(nstreams + nsrows + 1), sizeof(junit_case));
    group_t *groups = NULL;
    int ngroups = 0, gcap = 0;
    sweep_ctx S = {.o = o, .cz = cz, .target = &target, .streams = streams, .nstreams = nstreams, .jobs = jobs, .res = res};
    if (!jobs || !res || !jc) {
        fprintf(stderr, "aclnn-conform: out of memory\n");
        return CFE_IO;
    }
    if (foreign && !realpath(o->target, S.target_real)) snprintf(S.target_real, sizeof S.target_real, "%s", o->target);
    else if (!foreign) snprintf(S.target_real, sizeof S.target_real, "builtin");
    S.deadline = t0 + budget;
    pthread_mutex_init(&S.cov_mu, NULL);
    for (int op = 0; op < CF_OP_COUNT; op++)
        if (n_op_streams[op]) S.bins[op] = fz_bins_new(cz[op]);
    pthread_mutex_init(&S.mu, NULL);
    pthread_cond_init(&S.go, NULL);
    pthread_cond_init(&S.done, NULL);
    pthread_t th[256];
    int nthreads = 0;
    for (int i = 1; i < o->jobs && i < 256; i++)
        if (pthread_create(&th[nthreads], NULL, pool_thread, &S) == 0) nthreads++;

    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    g_signal = 0;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);

    for (int round = 0;; round++) {
        int nj = 0;
        bool more = false;
        /* the invalid-input cases first in each batch (cheap; a status table needs them), B
         * indices per rule per batch like the streams: memory does not grow with --invalid-cases */
        for (int i = 0; i < nsrows; i++) {
            cf_op op;
            cf_op_parse(srows[i].op, &op);
            bool proto = i >= first_proto_row;
            int rule = proto ? 0 : fz_rule_find(cz[op], o->profile, srows[i].rule);
            if (proto) {
                cf_case *probe = calloc(1, sizeof *probe);
                if (probe) {
                    snprintf(probe->rule, sizeof probe->rule, "%s", srows[i].rule);
                    rule = (int)cf_protocol_of(probe);
                    free(probe);
                }
            }
            for (int64_t k = (int64_t)round * B; k < (int64_t)(round + 1) * B && k < o->invalid_cases; k++) {
                if (k % o->shard_n != o->shard_k) continue;
                if (proto) /* the op's streams in turn: every dtype meets the protocol */
                    jobs[nj++] = (job_t){JOB_PROTOCOL, OP_STREAM(op, k % n_op_streams[op]), op, rule, i, k};
                else
                    jobs[nj++] = (job_t){JOB_INVALID, -1, op, rule, i, k};
            }
            if ((int64_t)(round + 1) * B < o->invalid_cases) more = true;
        }
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
        run_batch(&S, nthreads);
        nj = thread_checks(&S, nj, round);
        for (int i = 0; i < nj; i++) { /* merge in job order: deterministic for any --jobs */
            result_t *r = &res[i];
            const job_t *j = &jobs[i];
            if (r->skipped) {
                skipped++;
                continue;
            }
            if (j->kind == JOB_THREADS) { /* a check of a case counted already */
                thread_checked++;
                cf_row_merge(&rows[j->stream], &r->row);
                if (r->v.pass) continue;
                total_cases++; /* counted once more as the failure it is */
            }
            if (r->not_applicable) {
                srows[j->status_row].not_applicable++;
                continue;
            }
            total_cases++;
            if (r->err) {
                internal++;
                fprintf(stderr, "%saclnn-conform: internal error: %s\n", tty ? "\r\033[K" : "", r->errmsg);
                continue;
            }
            bool status_job = j->kind == JOB_INVALID || j->kind == JOB_PROTOCOL;
            junit_case *tc = status_job ? &jc[nstreams + j->status_row] : &jc[j->stream];
            tc->cases++;
            if (status_job) {
                cf_status_row *sr = &srows[j->status_row];
                sr->cases++;
                if (!r->v.pass) {
                    sr->mismatches++;
                    if (!sr->example[0]) snprintf(sr->example, sizeof sr->example, "%s", r->stored);
                }
            } else if (j->kind != JOB_THREADS) {
                cf_row_merge(&rows[j->stream], &r->row);
            }
            if (r->v.pass) continue;
            failures++;
            if (!status_job) cf_row_add_example(&rows[j->stream], r->v.kind, j->k, r->v.elements, r->v.max_ulp, r->stored, r->v.first_failure);
            if (!tc->failures++) snprintf(tc->first, sizeof tc->first, "%s", r->v.first_failure);
            if (r->stored[0]) cJSON_AddItemToArray(failures_json, cJSON_CreateString(r->stored));
            group_t *g = group_of(&groups, &ngroups, &gcap, r->group);
            if (!g) continue;
            g->count++;
            if (quiet || (!o->all_lines && g->shown >= o->max_fail_lines)) continue;
            g->shown++;
            if (tty) fprintf(stderr, "\r\033[K");
            fprintf(lines, "%s\n", r->v.first_failure);
            if (r->stored[0])
                fprintf(lines, "  rerun: %s replay %s%s%s\n", CF_TOOL_NAME, r->stored, foreign ? " --target " : "",
                        foreign ? S.target_real : "");
            if (github && g->shown == 1) {
                char title[200];
                snprintf(title, sizeof title, "aclnn-conform %s", r->group);
                github_error(stdout, title, r->v.first_failure);
            }
            fflush(lines);
        }
        double el = cf_now_s() - t0;
        bool last = !more || el >= budget || g_signal;
        if (tty && (last || el - last_draw >= 0.2)) { /* cases done / total, elapsed, ETA, failures so far */
            last_draw = el;
            if (isfinite(budget))
                fprintf(stderr, "\r\033[K%lld cases, %.0f s of %.0f s, ETA %.0f s, %lld failures", (long long)total_cases,
                        el, budget, budget > el ? budget - el : 0.0, (long long)failures);
            else
                fprintf(stderr, "\r\033[K%lld / %lld cases, %.0f s, ETA %.0f s, %lld failures", (long long)total_cases,
                        (long long)planned, el, total_cases ? el * (double)(planned - total_cases) / (double)total_cases : 0.0,
                        (long long)failures);
        } else if (!tty && !quiet && el - last_beat >= beat && !last) { /* off a terminal: a heartbeat for CI logs */
            last_beat = el;
            if (isfinite(budget))
                fprintf(stderr, "aclnn-conform: %lld cases, %.0f s of %.0f s, %lld failures\n", (long long)total_cases, el,
                        budget, (long long)failures);
            else
                fprintf(stderr, "aclnn-conform: %lld / %lld cases, %.0f s, %lld failures\n", (long long)total_cases,
                        (long long)planned, el, (long long)failures);
        }
        if (last) break;
    }
    if (tty) fprintf(stderr, "\n");
    int sig = g_signal;
    pthread_mutex_lock(&S.mu);
    S.quit = true;
    pthread_cond_broadcast(&S.go);
    pthread_mutex_unlock(&S.mu);
    for (int i = 0; i < nthreads; i++) pthread_join(th[i], NULL);
    double seconds = cf_now_s() - t0;

    for (int s = 0; s < nstreams && o->keep_worst; s++) {
        keep_worst(&S, s, &rows[s].worst);
        cf_worst *a = &rows[s].worst, *b = &rows[s].worst_finite;
        if (a->has && b->has && a->case_index == b->case_index && !b->case_ref[0])
            snprintf(b->case_ref, sizeof b->case_ref, "%s", a->case_ref); /* one case, stored once */
        keep_worst(&S, s, b);
    }
    cJSON *rep = cf_report_new("sweep", o, seconds, total_cases, started);
    cJSON *runj = cJSON_GetObjectItemCaseSensitive(rep, "run");
    cJSON_AddStringToObject(runj, "id", run_id);
    if (foreign) {
        cJSON_AddStringToObject(runj, "target_path", S.target_real);
        cJSON_AddStringToObject(runj, "target_sha256", target.sha256);
    }
    cJSON_AddStringToObject(runj, "corpus", o->no_store ? "" : o->corpus);
    cJSON_AddBoolToObject(runj, "interrupted", sig != 0);
    if (skipped) cJSON_AddNumberToObject(runj, "skipped", (double)skipped);
    cJSON_AddNumberToObject(runj, "thread_checks", (double)thread_checked);
    cJSON *results = cJSON_AddArrayToObject(rep, "results");
    for (int s = 0; s < nstreams; s++) {
        cJSON_AddItemToArray(results, cf_row_to_json(&rows[s]));
        snprintf(jc[s].classname, sizeof jc[s].classname, "%s", rows[s].op);
        snprintf(jc[s].name, sizeof jc[s].name, "%s %s", cf_dtype_name(rows[s].dtype), rows[s].variant[0] ? rows[s].variant : "-");
    }
    cJSON *sc = cJSON_AddArrayToObject(rep, "status_checks");
    for (int i = 0; i < nsrows; i++) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "op", srows[i].op);
        cJSON_AddStringToObject(x, "rule", srows[i].rule);
        cJSON_AddNumberToObject(x, "expected", srows[i].expected);
        cJSON_AddNumberToObject(x, "cases", (double)srows[i].cases);
        cJSON_AddNumberToObject(x, "mismatches", (double)srows[i].mismatches);
        if (i >= first_proto_row) cJSON_AddNumberToObject(x, "not_applicable", (double)srows[i].not_applicable);
        cJSON_AddStringToObject(x, "example", srows[i].example);
        cJSON_AddItemToArray(sc, x);
        snprintf(jc[nstreams + i].classname, sizeof jc[0].classname, "%s", srows[i].op);
        snprintf(jc[nstreams + i].name, sizeof jc[0].name, "status %s", srows[i].rule);
    }
    cJSON_AddItemToObject(rep, "failures", failures_json);
    /* structural coverage: per operator, the generator's bins (fuzz.h) and the op thread counts
     * cases ran with ("default" = the target's own choice) */
    cJSON *cov = cJSON_AddObjectToObject(rep, "coverage");
    cJSON *thr = cJSON_AddObjectToObject(cov, "op_threads");
    static const char *const tn[5] = {"default", "1", "2", "3", "4"};
    int dt = target.default_threads > 0 && target.default_threads <= 4 ? target.default_threads : 0;
    for (int op = 0; op < CF_OP_COUNT; op++) /* every valid case ran at the target's default */
        if (S.bins[op]) S.op_threads_hits[dt] += fz_bins_cases(S.bins[op]);
    for (int i = 0; i < 5; i++) cJSON_AddNumberToObject(thr, tn[i], (double)S.op_threads_hits[i]);
    cJSON *covops = cJSON_AddArrayToObject(cov, "ops");
    int missing_bins = 0;
    for (int op = 0; op < CF_OP_COUNT; op++)
        if (S.bins[op]) {
            cJSON *bj = fz_bins_to_cjson(S.bins[op]);
            if (bj) cJSON_AddItemToArray(covops, bj);
            missing_bins += fz_bins_missing(S.bins[op]);
        }
    char path[2048];
    if (o->output) snprintf(path, sizeof path, "%s", o->output);
    else snprintf(path, sizeof path, "%s/%s.json", o->out_dir, run_id);
    st = cf_write_report(path, rep, &e);
    cf_err je = {{0}};
    cf_status jst = o->junit ? write_junit(o->junit, jc, nstreams + nsrows, seconds, sig != 0, &je) : CFE_OK;
    if (o->json) {
        char *txt = cJSON_PrintUnformatted(rep);
        if (txt) printf("%s\n", txt);
        free(txt);
    } else {
        if (!quiet && o->coverage) { /* one line per bin group: hits per bin, the empty ones marked */
            printf("coverage (cases per structural bin; '!' = never reached):\n");
            for (int op = 0; op < CF_OP_COUNT; op++) {
                fz_bins *b = S.bins[op];
                if (!b) continue;
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
            printf("  op threads: default=%lld 1=%lld 2=%lld 3=%lld 4=%lld; %d bins never reached\n",
                   (long long)S.op_threads_hits[0], (long long)S.op_threads_hits[1], (long long)S.op_threads_hits[2],
                   (long long)S.op_threads_hits[3], (long long)S.op_threads_hits[4], missing_bins);
        }
        if (!quiet) {
            for (int i = 0; i < ngroups; i++)
                if (groups[i].count > groups[i].shown)
                    printf("FAIL %s: %lld failing cases, %lld shown (--all or --max-fail-lines N for more)\n", groups[i].key,
                           (long long)groups[i].count, (long long)groups[i].shown);
            cf_print_summary(stdout, rows, nstreams);
            int64_t smm = 0, sc_cases = 0;
            for (int i = 0; i < nsrows; i++) smm += srows[i].mismatches, sc_cases += srows[i].cases;
            printf("status checks: %d rules, %lld cases, %lld mismatches\n", nsrows, (long long)sc_cases, (long long)smm);
            printf("%lld cases in %.1f s, %lld failing in %d groups; report %s; seed 0x%llx\n", (long long)total_cases, seconds,
                   (long long)failures, ngroups, st ? "NOT WRITTEN" : path, (unsigned long long)o->seed);
            if (failures && !o->no_store) printf("failing cases stored under %s/\n", o->corpus);
        }
        if (sig) printf("sweep: INTERRUPTED by signal %d after %lld cases (%lld passed, %lld failed); report marked interrupted\n",
                        sig, (long long)total_cases, (long long)(total_cases - failures - internal), (long long)(failures + internal));
        else printf("sweep: %lld passed, %lld failed\n", (long long)(total_cases - failures - internal), (long long)(failures + internal));
    }
    if (st) fprintf(stderr, "aclnn-conform: %s\n", e.msg);
    if (jst) fprintf(stderr, "aclnn-conform: %s\n", je.msg);
    cJSON_Delete(rep);
    free(jobs);
    free(res);
    free(jc);
    free(groups);
    free(rows);
    free(streams);
    free(srows);
    free(op_streams);
    cf_target_close(&target);
    pthread_mutex_destroy(&S.mu);
    pthread_mutex_destroy(&S.cov_mu);
    for (int op = 0; op < CF_OP_COUNT; op++) fz_bins_free(S.bins[op]);
    pthread_cond_destroy(&S.go);
    pthread_cond_destroy(&S.done);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    for (int i = 0; i < CF_OP_COUNT; i++) cz_free(cz[i]);
    int rc = failures ? CFE_FAIL : CFE_OK;
    if (total_cases == 0 && !sig) {
        fprintf(stderr, "aclnn-conform sweep: no case ran (budget too small?): nothing was checked\n");
        rc = CFE_INPUT;
    }
    if (internal || st || jst) rc = CFE_IO;
    if (sig) rc = 128 + sig; /* 130 SIGINT, 143 SIGTERM: the shell's convention */
    return rc;
}
