/* aclnn-conform replay PATH...: rerun stored cases against a target, with no oracle: compare
 * with the stored golden values; one line per failing element and a rerun command. */
#include <dirent.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "shrink.h"

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
    static cf_target_cache tc; /* large: not on the stack */
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
            const cf_target *target = cf_target_cache_for(&tc, o, &c, &ce);
            st = target ? cf_fill_masked(&c, &x, &ce) : CFE_INPUT;
            if (!st) st = cf_run_case(target, &c, o->timeout_s, &r, &ce);
            if (!st && (c.expect_status != 0 || !(st = cf_tolerance_for(cz, &c, prof, variant, o->strict_zero, &tol, &ce)))) {
                if (c.expect_status != 0) tol = (cf_tol){0, 0, false};
                cf_case_verdict v;
                cf_score_case(&c, &x, &r, &tol, 0, dirs[i], NULL, &v, o->quiet ? NULL : print_line, NULL, 20);
                if (v.pass) passed++;
                else {
                    failed++;
                    char q1[9000], q2[600];
                    if (!o->quiet)
                        printf("  rerun: aclnn-conform replay %s%s%s\n", cf_shell_quote(dirs[i], q1, sizeof q1),
                               strcmp(target->name, "builtin") ? " --target " : "",
                               strcmp(target->name, "builtin") ? cf_shell_quote(target->name, q2, sizeof q2) : "");
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
    cf_target_cache_close(&tc);
    for (int i = 0; i < CF_OP_COUNT; i++) cz_free(cz[i]);
    if (failed && rc < CFE_FAIL) rc = CFE_FAIL;
    return rc;
}
