/* aclnn-conform shrink CASE: reduce a failing stored case to a smaller one that still fails on
 * its target (shrink.c), and store it beside the original in the corpus. */
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "shrink.h"

int cmd_shrink(const cf_opts *o)
{
    cf_err e = {{0}};
    if (o->npos != 1) {
        fprintf(stderr, "aclnn-conform shrink: name exactly one case directory\n");
        return CFE_INPUT;
    }
    cz_constraints *cz[CF_OP_COUNT] = {0};
    static cf_target_cache tc;
    tc.n = 0;
    const cf_target *tp = NULL;
    cf_case c, small;
    cf_expected x;
    cf_status st = cf_load_constraints(o, cz, &e);
    if (!st) st = cf_case_read(o->pos[0], &c, &x, &e);
    if (!st && !(tp = cf_target_cache_for(&tc, o, &c, &e))) {
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
    cf_target_cache_close(&tc);
    for (int i = 0; i < CF_OP_COUNT; i++) cz_free(cz[i]);
    return rc;
}
