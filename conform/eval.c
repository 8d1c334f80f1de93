#include "eval.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "adapters.h"
#include "oracle.h"

cf_status cf_load_constraints(const cf_opts *o, cz_constraints *cz[CF_OP_COUNT], cf_err *e)
{
    char err[512] = "";
    const char *dir = o->constraints[0] ? o->constraints : "constraints";
    char installed[4200];
    if (!o->constraints[0] && !cf_is_dir(dir)) {
        /* an installed tool: <prefix>/bin/aclnn-conform reads <prefix>/share/aclnn-conform/constraints;
         * a build-tree tool: the source tree's */
        char exe[4096];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        dir = ACLCONFORM_SOURCE_DIR "/constraints";
        if (n > 0) {
            exe[n] = '\0';
            char *sl = strrchr(exe, '/');
            if (sl) {
                *sl = '\0';
                snprintf(installed, sizeof installed, "%s/../share/aclnn-conform/constraints", exe);
                if (cf_is_dir(installed)) dir = installed;
            }
        }
    }
    fz_status s = cz_load_dir(dir, cz, err, sizeof err);
    if (s != FZ_OK) return cf_fail(e, s == FZ_ERR_NOMEM ? CFE_IO : CFE_INPUT, "%s", err);
    return CFE_OK;
}

cf_status cf_tolerance_for(cz_constraints *const *cz, const cf_case *c, const char *profile,
                           const char *variant, bool strict_zero, cf_tol *tol, cf_err *e)
{
    cf_dtype dt;
    if (!cf_case_out_dtype(c, &dt)) dt = CF_F32;
    tol->strict_zero = strict_zero;
    if (cz_tolerance(cz[c->op], profile, dt, variant, &tol->max_ulp, &tol->max_scaled_ulp) != FZ_OK)
        return cf_fail(e, CFE_INPUT, "%s: no tolerance for %s %s (profile %s)", cz_path(cz[c->op]),
                       cf_op_name(c->op), cf_dtype_name(dt), profile);
    return CFE_OK;
}

void cf_row_describe(cf_row *row, const cz_constraints *cz)
{
    cf_plot_spec *ps = &row->plot_spec;
    *ps = *cz_report_of(cz); /* the same type: the loader bounds every field */
    if (!ps->label[0]) snprintf(ps->label, sizeof ps->label, "%s", ps->x); /* the axis is the input's name */
    row->has_plot = ps->x[0] != 0;
}

cf_status cf_fill_masked(const cf_case *c, cf_expected *x, cf_err *e)
{
    if (!cf_adapters[c->op]->masked) return CFE_OK;
    for (int i = 0; i < x->nout; i++) {
        free(x->out[i].masked);
        x->out[i].masked = malloc((size_t)(x->out[i].n > 0 ? x->out[i].n : 1));
        if (!x->out[i].masked) return cf_fail(e, CFE_IO, "out of memory");
        cf_adapters[c->op]->masked(c, x->out[i].name, x->out[i].masked);
    }
    return CFE_OK;
}

cf_status cf_oracle_expected(const cf_case *c, const char *profile, cf_expected *x, cf_err *e)
{
    bool f64 = false;
    for (int i = 0; i < c->ntensors; i++) f64 |= c->tensors[i].output && c->tensors[i].dtype == CF_F64;
    cf_status st = cf_expected_alloc(x, c, f64, e);
    if (st) return st;
    orc_profile p = strcmp(profile, "cann-kernel") == 0 ? ORC_PROFILE_CANN_KERNEL : ORC_PROFILE_SPEC;
    int rc = cf_adapters[c->op]->oracle(c, p, x);
    if (rc != ORC_OK) {
        cf_expected_free(x);
        return cf_fail(e, CFE_IO, "oracle failed (%d) on a %s case", rc, cf_op_name(c->op));
    }
    return cf_fill_masked(c, x, e);
}

void cf_case_stream_key(cz_constraints *const *cz, const cf_case *c, const char *profile, cf_dtype *dt,
                        char variant[FZ_VARIANT_LEN])
{
    fz_stream streams[FZ_MAX_STREAMS_PER_OP];
    const char *names[FZ_MAX_STREAMS_PER_OP];
    int n = fz_streams(cz[c->op], profile, streams, FZ_MAX_STREAMS_PER_OP), k = 0; /* the loader's bound */
    for (int i = 0; i < n && i < FZ_MAX_STREAMS_PER_OP; i++) {
        bool dup = false;
        for (int j = 0; j < k; j++) dup |= strcmp(names[j], streams[i].variant) == 0;
        if (!dup && streams[i].variant[0]) names[k++] = streams[i].variant;
    }
    const char *v;
    cf_case_row_key(c, names, k, dt, &v);
    snprintf(variant, FZ_VARIANT_LEN, "%s", v);
}
