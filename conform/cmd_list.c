/* aclnn-conform list: each operator's profiles, streams with their tolerances, invalid-input
 * rules with their statuses, and the stored cases of the corpus. */
#include <stdlib.h>
#include <string.h>

#include "commands.h"

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
        int n = fz_streams(cz[op], o->profile, NULL, 0);
        fz_stream *s = calloc((size_t)(n > 0 ? n : 1), sizeof *s);
        n = s ? fz_streams(cz[op], o->profile, s, n) : 0;
        for (int i = 0; i < n; i++) {
            double mu = 0, ms = 0;
            cz_tolerance(cz[op], o->profile, s[i].dtype, s[i].variant, &mu, &ms);
            printf(" %s%s%s[tol %g/%g]", cf_dtype_name(s[i].dtype), s[i].variant[0] ? ":" : "", s[i].variant, mu, ms);
        }
        free(s);
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
