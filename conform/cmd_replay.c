/* aclnn-conform replay PATH...: rerun stored cases against a target, with no oracle: compare
 * with the stored golden values; one line per failing element and a rerun command. */
#include <dirent.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "shrink.h"

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static cf_status collect(const char *path, char ***dirs, int *n, int *cap, int depth, cf_err *e)
{
    char cj[4096];
    snprintf(cj, sizeof cj, "%s/case.json", path);
    if (cf_is_file(cj)) {
        if (*n == *cap) {
            *cap = *cap ? 2 * *cap : 64;
            char **nd = realloc(*dirs, sizeof(char *) * (size_t)*cap);
            if (!nd) return cf_fail(e, CFE_IO, "out of memory");
            *dirs = nd;
        }
        (*dirs)[(*n)++] = strdup(path);
        return CFE_OK;
    }
    if (depth > 3) return CFE_OK;
    DIR *d = opendir(path);
    if (!d) return depth == 0 ? cf_fail(e, CFE_INPUT, "%s: not a case, operator or corpus directory", path) : CFE_OK;
    struct dirent *de;
    cf_status st = CFE_OK;
    while (!st && (de = readdir(d))) {
        if (de->d_name[0] == '.') continue; /* ., .., and .tmp-* directories of interrupted writes */
        char sub[4096];
        snprintf(sub, sizeof sub, "%s/%s", path, de->d_name);
        struct stat lst;
        if (lstat(sub, &lst) != 0 || S_ISLNK(lst.st_mode)) continue; /* never followed out of the corpus */
        if (S_ISDIR(lst.st_mode)) st = collect(sub, dirs, n, cap, depth + 1, e);
    }
    closedir(d);
    return st;
}

cf_status cf_collect_cases(const char *path, char ***dirs, int *n, cf_err *e)
{
    int cap = 0;
    *dirs = NULL;
    *n = 0;
    cf_status st = collect(path, dirs, n, &cap, 0, e);
    if (!st && *n == 0) st = cf_fail(e, CFE_INPUT, "%s: no case directories (case.json) found", path);
    if (*n > 1) qsort(*dirs, (size_t)*n, sizeof(char *), cmp_str);
    return st;
}


/* The target a case runs on: --target when given, else the library the case records
 * (origin.target) — checked against its recorded SHA-256 — else builtin.  Opened targets are
 * kept for the command's lifetime. */
typedef struct {
    int n;
    cf_target t[16];
    char spec[16][1024];
} target_cache;

static const cf_target *target_for(target_cache *tc, const cf_opts *o, const cf_case *c, cf_err *e)
{
    const char *spec = o->target;
    if (!o->target_given && c->target_path[0]) spec = c->target_path;
    for (int i = 0; i < tc->n; i++)
        if (!strcmp(tc->spec[i], spec)) return &tc->t[i];
    if (tc->n == 16) {
        cf_fail(e, CFE_INPUT, "more than 16 different targets recorded in these cases: pass --target");
        return NULL;
    }
    if (spec == c->target_path && strcmp(spec, "builtin") && !cf_is_file(spec)) {
        cf_fail(e, CFE_INPUT, "the case records target %s, which does not exist here: pass --target LIB.so", spec);
        return NULL;
    }
    cf_target *t = &tc->t[tc->n];
    if (cf_target_open(spec, t, e)) return NULL;
    t->guard_pages = o->guard_pages;
    if (spec == c->target_path && c->target_sha256[0] && t->sha256[0] && strcmp(c->target_sha256, t->sha256))
        fprintf(stderr, "aclnn-conform: note: %s changed since the case was stored (sha256 %.12s... then, %.12s... now)\n", spec,
                c->target_sha256, t->sha256);
    snprintf(tc->spec[tc->n], sizeof tc->spec[0], "%s", spec);
    return &tc->t[tc->n++];
}

static void target_cache_close(target_cache *tc)
{
    for (int i = 0; i < tc->n; i++) cf_target_close(&tc->t[i]);
    tc->n = 0;
}

static void print_line(void *ctx, const char *line)
{
    (void)ctx;
    printf("%s\n", line);
}

int cmd_replay(const cf_opts *o)
{
    cf_err e = {{0}};
    if (o->npos == 0) {
        fprintf(stderr, "aclnn-conform replay: name at least one case, operator or corpus directory\n");
        return CFE_INPUT;
    }
    cz_constraints *cz[CF_OP_COUNT] = {0};
    static target_cache tc; /* large: not on the stack */
    tc.n = 0;
    cf_status st = cf_load_constraints(o, cz, &e);
    if (st) {
        fprintf(stderr, "aclnn-conform: %s\n", e.msg);
        for (int i = 0; i < CF_OP_COUNT; i++) cz_free(cz[i]);
        return st;
    }
    int passed = 0, failed = 0, rc = CFE_OK;
    for (int p = 0; p < o->npos; p++) {
        char **dirs;
        int n;
        cf_err pe = {{0}};
        if ((st = cf_collect_cases(o->pos[p], &dirs, &n, &pe))) {
            fprintf(stderr, "aclnn-conform: %s\n", pe.msg);
            rc = rc > (int)st ? rc : (int)st;
            continue;
        }
        for (int i = 0; i < n; i++) {
            cf_err ce = {{0}};
            cf_case c;
            cf_expected x;
            cf_run_result r;
            cf_tol tol;
            if ((st = cf_case_read(dirs[i], &c, &x, &ce))) {
                fprintf(stderr, "aclnn-conform: %s\n", ce.msg);
                rc = rc > (int)st ? rc : (int)st;
                free(dirs[i]);
                continue;
            }
            const char *prof = c.profile[0] ? c.profile : o->profile;
            cf_dtype dt;
            char variant[FZ_VARIANT_LEN];
            cf_case_stream_key(cz, &c, prof, &dt, variant);
            const cf_target *target = target_for(&tc, o, &c, &ce);
            st = target ? cf_fill_masked(&c, &x, &ce) : CFE_INPUT;
            if (!st) st = cf_run_case(target, &c, o->timeout_s, &r, &ce);
            if (!st && (c.expect_status != 0 || !(st = cf_tolerance_for(cz, &c, prof, variant, o->strict_zero, &tol, &ce)))) {
                if (c.expect_status != 0) tol = (cf_tol){0, 0, false};
                cf_case_verdict v;
                cf_score_case(&c, &x, &r, &tol, 0, dirs[i], NULL, &v, o->quiet ? NULL : print_line, NULL, 20);
                if (v.pass) passed++;
                else {
                    failed++;
                    if (!o->quiet)
                        printf("  rerun: aclnn-conform replay %s%s%s\n", dirs[i],
                               strcmp(target->name, "builtin") ? " --target " : "", strcmp(target->name, "builtin") ? target->name : "");
                }
                cf_run_result_free(&r);
            }
            if (st) {
                fprintf(stderr, "aclnn-conform: %s\n", ce.msg);
                rc = rc > (int)st ? rc : (int)st;
            }
            cf_expected_free(&x);
            cf_case_free(&c);
            free(dirs[i]);
        }
        free(dirs);
    }
    printf("replay: %d passed, %d failed\n", passed, failed);
    target_cache_close(&tc);
    for (int i = 0; i < CF_OP_COUNT; i++) cz_free(cz[i]);
    if (failed && rc < CFE_FAIL) rc = CFE_FAIL;
    return rc;
}

int cmd_shrink(const cf_opts *o)
{
    cf_err e = {{0}};
    if (o->npos != 1) {
        fprintf(stderr, "aclnn-conform shrink: name exactly one case directory\n");
        return CFE_INPUT;
    }
    cz_constraints *cz[CF_OP_COUNT] = {0};
    static target_cache tc;
    tc.n = 0;
    const cf_target *tp = NULL;
    cf_case c, small;
    cf_expected x;
    cf_status st = cf_load_constraints(o, cz, &e);
    if (!st) st = cf_case_read(o->pos[0], &c, &x, &e);
    if (!st && !(tp = target_for(&tc, o, &c, &e))) {
        st = CFE_INPUT;
        cf_expected_free(&x);
        cf_case_free(&c);
    }
    if (st) {
        fprintf(stderr, "aclnn-conform: %s\n", e.msg);
        for (int i = 0; i < CF_OP_COUNT; i++) cz_free(cz[i]);
        return st;
    }
    cf_dtype dt;
    char variant[FZ_VARIANT_LEN];
    cf_case_stream_key(cz, &c, c.profile, &dt, variant);
    int rc;
    /* the shrunk case goes beside the original (its corpus root) unless --corpus */
    char corpus[1024];
    snprintf(corpus, sizeof corpus, "%s", o->corpus);
    if (!o->corpus_given) {
        snprintf(corpus, sizeof corpus, "%s", o->pos[0]);
        size_t l = strlen(corpus);
        while (l > 1 && corpus[l - 1] == '/') corpus[--l] = '\0';
        for (int up = 0; up < 2; up++) {
            char *sl = strrchr(corpus, '/');
            if (sl) *sl = '\0';
            else snprintf(corpus, sizeof corpus, ".");
        }
        if (!corpus[0]) snprintf(corpus, sizeof corpus, "/");
    }
    if (cf_shrink(tp, &c, &x, o, cz, variant, &small, 60.0) == CFE_OK) {
        snprintf(small.target_path, sizeof small.target_path, "%s", c.target_path);
        snprintf(small.target_sha256, sizeof small.target_sha256, "%s", c.target_sha256);
        cf_expected sx = {0};
        char path[1024];
        st = small.expect_status == 0 ? cf_oracle_expected(&small, c.profile, &sx, &e) : CFE_OK;
        if (!st) st = cf_case_write(corpus, &small, &sx, CF_TOOL_NAME " " CF_TOOL_VERSION, path, sizeof path, &e);
        if (st) fprintf(stderr, "aclnn-conform: %s\n", e.msg);
        else {
            int64_t before = 0, after = 0;
            for (int i = 0; i < c.ntensors; i++) before += c.tensors[i].present ? cf_tensor_numel(&c.tensors[i]) : 0;
            for (int i = 0; i < small.ntensors; i++) after += small.tensors[i].present ? cf_tensor_numel(&small.tensors[i]) : 0;
            printf("shrunk %s (%lld elements) -> %s (%lld elements)\n", o->pos[0], (long long)before, path, (long long)after);
        }
        rc = st ? st : CFE_OK;
        cf_expected_free(&sx);
        cf_case_free(&small);
    } else {
        printf("%s: no smaller case fails the same way (or it does not fail on %s)\n", o->pos[0], tp->name);
        rc = CFE_FAIL;
    }
    cf_expected_free(&x);
    cf_case_free(&c);
    target_cache_close(&tc);
    for (int i = 0; i < CF_OP_COUNT; i++) cz_free(cz[i]);
    return rc;
}

int cmd_list(const cf_opts *o)
{
    cf_err e = {{0}};
    cz_constraints *cz[CF_OP_COUNT] = {0};
    cf_status st = cf_load_constraints(o, cz, &e);
    if (st) {
        fprintf(stderr, "aclnn-conform: %s\n", e.msg);
        return st;
    }
    for (int op = 0; op < CF_OP_COUNT; op++) {
        printf("%s (aclnn%s, %s)\n", cf_op_name((cf_op)op), cf_op_camel((cf_op)op), cz_op_class(cz[op]));
        printf("  profiles:");
        for (int i = 0; i < cz_profile_count(cz[op]); i++) printf(" %s", cz_profile_name(cz[op], i));
        printf("\n  streams (%s):", o->profile);
        fz_stream s[64];
        int n = fz_streams(cz[op], o->profile, s, 64);
        for (int i = 0; i < n && i < 64; i++) {
            double mu = 0, ms = 0;
            cz_tolerance(cz[op], o->profile, s[i].dtype, s[i].variant, &mu, &ms);
            printf(" %s%s%s[tol %g/%g]", cf_dtype_name(s[i].dtype), s[i].variant[0] ? ":" : "", s[i].variant, mu, ms);
        }
        printf("\n  invalid-input rules (%s):\n", o->profile);
        for (int i = 0; i < fz_rule_count(cz[op], o->profile); i++)
            printf("    %-40s -> %d\n", fz_rule_name(cz[op], o->profile, i), fz_rule_status(cz[op], o->profile, i));
        char dir[2048];
        snprintf(dir, sizeof dir, "%s/%s", o->corpus, cf_op_name((cf_op)op));
        char **dirs;
        int nd = 0;
        cf_err ce = {{0}};
        if (cf_is_dir(dir) && cf_collect_cases(dir, &dirs, &nd, &ce) == CFE_OK) {
            for (int i = 0; i < nd; i++) free(dirs[i]);
            free(dirs);
        }
        printf("  corpus: %d cases in %s\n", nd, dir);
        cz_free(cz[op]);
    }
    return CFE_OK;
}
