/* aclnn-conform export: cases for an out-of-process target (abi.md), written as corpus case
 * directories (inputs and case.json, no expected values) for the target to fill with
 * result.json and got.<out>.npy. */
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "report.h"

int cmd_export(const cf_opts *o)
{
    cf_err e = {{0}};
    cz_constraints *cz[CF_OP_COUNT] = {0};
    cf_status st = cf_load_constraints(o, cz, &e);
    if (st) {
        fprintf(stderr, "aclnn-conform export: %s\n", e.msg);
        return st;
    }
    int64_t per_stream = o->cases ? o->cases : 20, written = 0;
    for (int op = 0; op < CF_OP_COUNT && !st; op++) {
        if (!o->op_on[op]) continue;
        int n = fz_streams(cz[op], o->profile, NULL, 0); /* every stream: sized from the file */
        fz_stream *s = calloc((size_t)(n > 0 ? n : 1), sizeof *s);
        if (!s) {
            st = cf_fail(&e, CFE_IO, "out of memory");
            break;
        }
        n = fz_streams(cz[op], o->profile, s, n);
        int nr = fz_rule_count(cz[op], o->profile);
        for (int i = -1; i < n && !st; i++) {
            if (i >= 0 && !o->dtype_on[s[i].dtype]) continue;
            int64_t count = i < 0 ? (int64_t)nr * o->invalid_cases : per_stream;
            for (int64_t k = 0; k < count && !st; k++) {
                if (k % o->shard_n != o->shard_k) continue;
                cf_case c;
                fz_status fs = i < 0 ? fz_generate_invalid(cz[op], o->profile, (int)(k % (nr ? nr : 1)), o->seed, k / (nr ? nr : 1), &c)
                                     : fz_generate(cz[op], o->profile, &s[i], o->seed, k, &c);
                if (fs != FZ_OK) {
                    st = cf_fail(&e, CFE_IO, "generator failed (%s)", fz_status_name(fs));
                    break;
                }
                snprintf(c.profile, sizeof c.profile, "%s", o->profile);
                int64_t elems = 0;
                for (int t = 0; t < c.ntensors; t++) elems += c.tensors[t].present ? cf_tensor_numel(&c.tensors[t]) : 0;
                if (o->max_elements && elems > o->max_elements) {
                    cf_case_free(&c);
                    continue;
                }
                /* inputs and manifest only: the program under test reads these directories, and
                 * expected values beside them would be an answer key (issue 57: copying
                 * expected.*.npy to got.*.npy passed); score computes them with the oracle */
                char path[2048];
                st = cf_case_write(o->out_dir, &c, NULL, CF_TOOL_NAME " " CF_TOOL_VERSION, path, sizeof path, &e);
                written += !st;
                cf_case_free(&c);
            }
        }
        free(s);
    }
    for (int i = 0; i < CF_OP_COUNT; i++) cz_free(cz[i]);
    if (!st) { /* the run that made these cases, for score's report */
        char path[2048], text[256];
        snprintf(path, sizeof path, "%s/export.json", o->out_dir);
        snprintf(text, sizeof text, "{\"seed\": \"0x%llx\", \"profile\": \"%s\", \"cases\": %lld}\n",
                 (unsigned long long)o->seed, o->profile, (long long)written);
        st = cf_write_atomic(path, text, strlen(text), &e);
    }
    if (st) {
        fprintf(stderr, "aclnn-conform export: %s\n", e.msg);
        return st;
    }
    printf("exported %lld cases to %s (seed 0x%llx); run the target, then: aclnn-conform score %s\n",
           (long long)written, o->out_dir, (unsigned long long)o->seed, o->out_dir);
    return CFE_OK;
}
