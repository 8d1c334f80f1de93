#include "report.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "npy.h"

cf_status cf_report_read(const char *path, cJSON **root, cf_row **rows, int *nrows, cf_err *e)
{
    *root = NULL;
    *rows = NULL;
    *nrows = 0;
    cJSON *r;
    cf_status st = cf_read_json(path, &r, e);
    if (st) return st;
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(r, "schema");
    const cJSON *results = cJSON_GetObjectItemCaseSensitive(r, "results");
    if (!cJSON_IsNumber(schema) || schema->valueint != 1) st = cf_fail(e, CFE_INPUT, "%s: field 'schema': expected 1", path);
    else if (!cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(r, "run"))) st = cf_fail(e, CFE_INPUT, "%s: field 'run': expected an object", path);
    else if (!cJSON_IsArray(results)) st = cf_fail(e, CFE_INPUT, "%s: field 'results': expected an array", path);
    int n = st ? 0 : cJSON_GetArraySize(results);
    cf_row *rs = st ? NULL : calloc((size_t)(n ? n : 1), sizeof(cf_row));
    if (!st && !rs) st = cf_fail(e, CFE_IO, "out of memory");
    for (int i = 0; i < n && !st; i++) st = cf_row_from_json(cJSON_GetArrayItem(results, i), path, i, &rs[i], e);
    if (st) {
        free(rs);
        cJSON_Delete(r);
        return st;
    }
    *root = r;
    *rows = rs;
    *nrows = n;
    return CFE_OK;
}

/* ---- merge ---- */

/* Set obj[key] = item, replacing or adding (a Replace of a missing key would leak item). */
static void set_field(cJSON *obj, const char *key, cJSON *item)
{
    if (cJSON_HasObjectItem(obj, key)) cJSON_ReplaceItemInObjectCaseSensitive(obj, key, item);
    else cJSON_AddItemToObject(obj, key, item);
}

int cmd_merge(const cf_opts *o)
{
    cf_err e = {{0}};
    if (o->npos < 1 || !o->output) {
        fprintf(stderr, "aclnn-conform merge: usage: merge A.json B.json... -o OUT.json\n");
        return CFE_INPUT;
    }
    cf_row *all = NULL;
    int nall = 0;
    cJSON *status = cJSON_CreateArray(), *failures = cJSON_CreateArray(), *first = NULL;
    double seconds = 0, cases = 0;
    cf_status st = CFE_OK;
    char shards[256] = "";
    for (int i = 0; i < o->npos && !st; i++) {
        cJSON *root;
        cf_row *rows;
        int n;
        if ((st = cf_report_read(o->pos[i], &root, &rows, &n, &e))) break;
        cf_row *na = realloc(all, sizeof(cf_row) * (size_t)(nall + n + 1));
        if (!na) {
            st = cf_fail(&e, CFE_IO, "out of memory");
            free(rows);
            cJSON_Delete(root);
            break;
        }
        all = na;
        for (int k = 0; k < n; k++) { /* merge into the row with the same key, else append */
            int j = 0;
            while (j < nall && !(strcmp(all[j].op, rows[k].op) == 0 && all[j].dtype == rows[k].dtype && strcmp(all[j].variant, rows[k].variant) == 0)) j++;
            if (j == nall) all[nall++] = rows[k];
            else cf_row_merge(&all[j], &rows[k]);
        }
        const cJSON *run = cJSON_GetObjectItemCaseSensitive(root, "run");
        const cJSON *sec = cJSON_GetObjectItemCaseSensitive(run, "seconds"), *cs = cJSON_GetObjectItemCaseSensitive(run, "cases");
        const cJSON *sh = cJSON_GetObjectItemCaseSensitive(run, "shard");
        if (cJSON_IsNumber(sec)) seconds += sec->valuedouble;
        if (cJSON_IsNumber(cs)) cases += cs->valuedouble;
        size_t sl = strlen(shards);
        snprintf(shards + sl, sizeof shards - sl, "%s%s", i ? "," : "", cJSON_IsString(sh) ? sh->valuestring : "?");
        const cJSON *sc = cJSON_GetObjectItemCaseSensitive(root, "status_checks"), *it;
        cJSON_ArrayForEach(it, sc)
        {
            const cJSON *op = cJSON_GetObjectItemCaseSensitive(it, "op"), *rule = cJSON_GetObjectItemCaseSensitive(it, "rule");
            if (!cJSON_IsString(op) || !cJSON_IsString(rule) ||
                !cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(it, "cases")) ||
                !cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(it, "mismatches"))) {
                st = cf_fail(&e, CFE_INPUT, "%s: field 'status_checks[]': expected op and rule strings, cases and mismatches numbers", o->pos[i]);
                break;
            }
            cJSON *m = NULL, *x;
            cJSON_ArrayForEach(x, status)
            if (!strcmp(cJSON_GetObjectItemCaseSensitive(x, "op")->valuestring, op->valuestring) &&
                !strcmp(cJSON_GetObjectItemCaseSensitive(x, "rule")->valuestring, rule->valuestring)) m = x;
            if (!m) {
                cJSON_AddItemToArray(status, cJSON_Duplicate(it, true));
                continue;
            }
            const char *keys[] = {"cases", "mismatches"};
            for (int k = 0; k < 2; k++) {
                cJSON *dst = cJSON_GetObjectItemCaseSensitive(m, keys[k]);
                const cJSON *src = cJSON_GetObjectItemCaseSensitive(it, keys[k]);
                if (cJSON_IsNumber(dst) && cJSON_IsNumber(src)) cJSON_SetNumberValue(dst, dst->valuedouble + src->valuedouble);
            }
            const cJSON *ex = cJSON_GetObjectItemCaseSensitive(m, "example"), *sex = cJSON_GetObjectItemCaseSensitive(it, "example");
            if ((!cJSON_IsString(ex) || !ex->valuestring[0]) && cJSON_IsString(sex))
                set_field(m, "example", cJSON_CreateString(sex->valuestring));
        }
        const cJSON *fl = cJSON_GetObjectItemCaseSensitive(root, "failures");
        cJSON_ArrayForEach(it, fl) cJSON_AddItemToArray(failures, cJSON_Duplicate(it, true));
        if (!first) first = cJSON_Duplicate(run, true);
        free(rows);
        cJSON_Delete(root);
    }
    int rc = st;
    if (!st) {
        cJSON *rep = cJSON_CreateObject();
        cJSON_AddNumberToObject(rep, "schema", 1);
        cJSON *tool = cJSON_AddObjectToObject(rep, "tool");
        cJSON_AddStringToObject(tool, "name", CF_TOOL_NAME);
        cJSON_AddStringToObject(tool, "version", CF_TOOL_VERSION);
        set_field(first, "command", cJSON_CreateString("merge"));
        set_field(first, "shard", cJSON_CreateString(shards));
        set_field(first, "seconds", cJSON_CreateNumber(seconds));
        set_field(first, "cases", cJSON_CreateNumber(cases));
        cJSON_AddItemToObject(rep, "run", first);
        first = NULL;
        cJSON *results = cJSON_AddArrayToObject(rep, "results");
        bool fail = false;
        for (int i = 0; i < nall; i++) {
            cJSON_AddItemToArray(results, cf_row_to_json(&all[i]));
            fail |= all[i].failed_cases > 0;
        }
        cJSON *x;
        cJSON_ArrayForEach(x, status) fail |= cJSON_GetObjectItemCaseSensitive(x, "mismatches")->valuedouble > 0;
        cJSON_AddItemToObject(rep, "status_checks", status);
        cJSON_AddItemToObject(rep, "failures", failures);
        status = failures = NULL;
        st = cf_write_report(o->output, rep, &e);
        cJSON_Delete(rep);
        if (!st) {
            cf_row *rp[512];
            for (int i = 0; i < nall && i < 512; i++) rp[i] = &all[i];
            if (!o->quiet) cf_print_summary(stdout, rp, nall < 512 ? nall : 512);
            printf("merged %d reports into %s\n", o->npos, o->output);
        }
        rc = st ? st : (fail ? CFE_FAIL : CFE_OK);
    }
    if (rc >= CFE_INPUT) fprintf(stderr, "aclnn-conform merge: %s\n", e.msg);
    cJSON_Delete(status);
    cJSON_Delete(failures);
    cJSON_Delete(first);
    free(all);
    return rc;
}

/* ---- publishing ---- */

static void html_escape(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '<') fputs("&lt;", f);
        else if (*s == '>') fputs("&gt;", f);
        else if (*s == '&') fputs("&amp;", f);
        else if (*s == '"') fputs("&quot;", f);
        else fputc(*s, f);
    }
}

static void svg_histogram(FILE *f, const cf_row *r)
{
    static const char *labels[CF_HIST_BINS] = {"≤0.5", "≤1", "≤2", "≤4", "≤16", "≤256", "≤65536", ">65536"};
    int64_t mx = 1;
    for (int i = 0; i < CF_HIST_BINS; i++) if (r->hist[i] > mx) mx = r->hist[i];
    const int W = 420, H = 150, bw = 46;
    fprintf(f, "<svg class=\"hist\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" role=\"img\" aria-label=\"ULP histogram %s %s\">\n", W, H + 40, r->op, cf_dtype_name(r->dtype));
    for (int i = 0; i < CF_HIST_BINS; i++) {
        /* log scale so that rare large errors stay visible */
        double h = r->hist[i] ? (log10((double)r->hist[i]) + 1) / (log10((double)mx) + 1) * H : 0;
        int x = 10 + i * (bw + 5);
        const char *color = i < 2 ? "#2e7d32" : (i < 4 ? "#f9a825" : "#c62828");
        fprintf(f, "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"%s\"><title>%s ULP: %lld</title></rect>\n", x, H - h + 10, bw, h, color, labels[i], (long long)r->hist[i]);
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"10\" text-anchor=\"middle\">%s</text>\n", x + bw / 2, H + 24, labels[i]);
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" font-size=\"9\" text-anchor=\"middle\">%lld</text>\n", x + bw / 2, H - h + 7, (long long)r->hist[i]);
    }
    fprintf(f, "</svg>\n");
}

int cmd_report(const cf_opts *o)
{
    cf_err e = {{0}};
    if (o->npos != 1) {
        fprintf(stderr, "aclnn-conform report: usage: report RUN.json --format md|html [-o FILE]\n");
        return CFE_INPUT;
    }
    cJSON *root;
    cf_row *rows;
    int n;
    cf_status st = cf_report_read(o->pos[0], &root, &rows, &n, &e);
    if (st) {
        fprintf(stderr, "aclnn-conform report: %s\n", e.msg);
        return st;
    }
    bool html = o->format && !strcmp(o->format, "html");
    char *buf = NULL;
    size_t blen = 0;
    FILE *f = open_memstream(&buf, &blen);
    if (!f) {
        cJSON_Delete(root);
        free(rows);
        return CFE_IO;
    }
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(root, "run");
    char *runtxt = cJSON_PrintUnformatted(run);
    const cJSON *tgt = cJSON_GetObjectItemCaseSensitive(run, "target"), *prof = cJSON_GetObjectItemCaseSensitive(run, "profile");
    const char *target = cJSON_IsString(tgt) ? tgt->valuestring : "?", *profile = cJSON_IsString(prof) ? prof->valuestring : "?";
    if (html) {
        fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>aclnn-conform report: ");
        html_escape(f, target);
        fprintf(f, "</title>\n<style>body{font-family:sans-serif;margin:2em;max-width:1200px}table{border-collapse:collapse;margin:1em 0}"
                   "td,th{border:1px solid #bbb;padding:3px 8px;text-align:right;font-size:13px}th{background:#eee}"
                   "td.l{text-align:left}.pass{color:#2e7d32;font-weight:bold}.fail{color:#c62828;font-weight:bold}"
                   ".no-data{color:#777}code{font-size:12px}.hists{display:flex;flex-wrap:wrap;gap:1em}"
                   ".hists figure{margin:0}</style></head><body>\n");
        fprintf(f, "<h1>aclnn-conform tolerance report</h1>\n<p>target <b>");
        html_escape(f, target);
        fprintf(f, "</b>, profile <b>");
        html_escape(f, profile);
        fprintf(f, "</b></p>\n<p><code>");
        html_escape(f, runtxt ? runtxt : "");
        fprintf(f, "</code></p>\n");
    } else {
        fprintf(f, "# aclnn-conform tolerance report\n\ntarget `%s`, profile `%s`\n\nrun: `%s`\n\n", target, profile, runtxt ? runtxt : "");
        fprintf(f, "ULP error is |got − exact| / ulp(exact) in the output dtype; scaled ULP divides by ulp(m), the\n"
                   "conditioning magnitude (spec numerics.md). p99 is the upper edge of the histogram bin holding the\n"
                   "99th percentile. single_bm: mean/max relative error against the Ascend thresholds.\n\n");
    }
    free(runtxt);
    for (int op = 0; op < CF_OP_COUNT; op++) {
        const char *opn = cf_op_name((cf_op)op);
        bool any = false;
        for (int i = 0; i < n; i++) any |= !strcmp(rows[i].op, opn);
        if (!any) continue;
        if (html) fprintf(f, "<h2>%s</h2>\n<table><tr><th>dtype</th><th>variant</th><th>cases</th><th>elements</th><th>uncertain</th><th>max ULP</th><th>mean ULP</th><th>p99 ULP</th><th>max scaled</th><th>mismatches</th><th>MERE</th><th>MARE</th><th>single_bm</th><th>tolerance</th><th>verdict</th></tr>\n", opn);
        else fprintf(f, "## %s\n\n| dtype | variant | cases | elements | uncertain | max ULP | mean ULP | p99 ULP | max scaled | mismatches | MERE | MARE | single_bm | tolerance | verdict |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---|---|---|\n", opn);
        for (int i = 0; i < n; i++) {
            const cf_row *r = &rows[i];
            if (strcmp(r->op, opn)) continue;
            char mm[256] = "";
            size_t ml = 0;
            for (int k = 0; k < CF_MM_COUNT; k++)
                if (r->mismatches[k] && ml < sizeof mm) ml += (size_t)snprintf(mm + ml, sizeof mm - ml, "%s%s=%lld", ml ? " " : "", cf_mismatch_name((cf_mismatch)k), (long long)r->mismatches[k]);
            if (!mm[0]) snprintf(mm, sizeof mm, "0");
            double mere, mare;
            bool bm = cf_row_single_bm(r, &mere, &mare);
            const char *v = cf_row_verdict(r);
            if (html)
                fprintf(f, "<tr><td class=l>%s</td><td class=l>%s</td><td>%lld</td><td>%lld</td><td>%lld</td><td>%.4g</td><td>%.4f</td><td>%g</td><td>%.4g</td><td class=l>%s</td><td>%.3g</td><td>%.3g</td><td>%s</td><td>%g / %g</td><td class=\"%s\">%s</td></tr>\n",
                        cf_dtype_name(r->dtype), r->variant[0] ? r->variant : "-", (long long)r->cases, (long long)r->elements, (long long)r->uncertain,
                        r->max_ulp, cf_row_mean_ulp(r), cf_row_p99_ulp(r), r->max_scaled_ulp, mm, mere, mare, bm ? "pass" : "fail",
                        r->tol.max_ulp, r->tol.max_scaled_ulp, v, v);
            else
                fprintf(f, "| %s | %s | %lld | %lld | %lld | %.4g | %.4f | %g | %.4g | %s | %.3g | %.3g | %s | %g / %g | **%s** |\n",
                        cf_dtype_name(r->dtype), r->variant[0] ? r->variant : "-", (long long)r->cases, (long long)r->elements, (long long)r->uncertain,
                        r->max_ulp, cf_row_mean_ulp(r), cf_row_p99_ulp(r), r->max_scaled_ulp, mm, mere, mare, bm ? "pass" : "fail",
                        r->tol.max_ulp, r->tol.max_scaled_ulp, v);
        }
        if (html) {
            fprintf(f, "</table>\n<div class=\"hists\">\n");
            for (int i = 0; i < n; i++) {
                if (strcmp(rows[i].op, opn)) continue;
                fprintf(f, "<figure>");
                svg_histogram(f, &rows[i]);
                fprintf(f, "<figcaption>%s %s ULP error histogram</figcaption></figure>\n", cf_dtype_name(rows[i].dtype), rows[i].variant);
            }
            fprintf(f, "</div>\n<h3>Worst elements</h3>\n<table><tr><th>dtype</th><th>variant</th><th>ULP</th><th>case</th><th>element</th><th>inputs</th><th>got</th><th>expected</th></tr>\n");
        } else {
            fprintf(f, "\nWorst elements:\n\n| dtype | variant | ULP | case | element | inputs | got | expected |\n|---|---|---:|---|---|---|---|---:|\n");
        }
        for (int i = 0; i < n; i++) {
            const cf_row *r = &rows[i];
            if (strcmp(r->op, opn) || !r->has_worst) continue;
            if (html) {
                fprintf(f, "<tr><td class=l>%s</td><td class=l>%s</td><td>%.4g</td><td class=l><code>", cf_dtype_name(r->dtype), r->variant, r->max_ulp);
                html_escape(f, r->worst_case);
                fprintf(f, "</code></td><td class=l>%s</td><td class=l><code>", r->worst_index);
                html_escape(f, r->worst_inputs);
                fprintf(f, "</code></td><td class=l><code>%s</code></td><td>%.17g</td></tr>\n", r->worst_got, r->worst_expected);
            } else {
                fprintf(f, "| %s | %s | %.4g | `%s` | %s | `%s` | `%s` | %.17g |\n", cf_dtype_name(r->dtype), r->variant[0] ? r->variant : "-",
                        r->max_ulp, r->worst_case, r->worst_index, r->worst_inputs, r->worst_got, r->worst_expected);
            }
        }
        if (html) fprintf(f, "</table>\n");
        else fprintf(f, "\n");
        /* the invalid-input status table */
        const cJSON *sc = cJSON_GetObjectItemCaseSensitive(root, "status_checks"), *it;
        bool header = false;
        cJSON_ArrayForEach(it, sc)
        {
            const cJSON *sop = cJSON_GetObjectItemCaseSensitive(it, "op");
            if (!cJSON_IsString(sop) || strcmp(sop->valuestring, opn)) continue;
            const cJSON *rule = cJSON_GetObjectItemCaseSensitive(it, "rule"), *ex = cJSON_GetObjectItemCaseSensitive(it, "expected"),
                        *cs = cJSON_GetObjectItemCaseSensitive(it, "cases"), *mm = cJSON_GetObjectItemCaseSensitive(it, "mismatches");
            if (!header) {
                if (html) fprintf(f, "<h3>Invalid inputs</h3>\n<table><tr><th>rule</th><th>expected status</th><th>cases</th><th>mismatches</th></tr>\n");
                else fprintf(f, "Invalid inputs:\n\n| rule | expected status | cases | mismatches |\n|---|---:|---:|---:|\n");
                header = true;
            }
            const char *rn = cJSON_IsString(rule) ? rule->valuestring : "?";
            int exv = cJSON_IsNumber(ex) ? ex->valueint : 0, csv = cJSON_IsNumber(cs) ? cs->valueint : 0, mmv = cJSON_IsNumber(mm) ? mm->valueint : 0;
            if (html) {
                fprintf(f, "<tr><td class=l>");
                html_escape(f, rn);
                fprintf(f, "</td><td>%d</td><td>%d</td><td class=\"%s\">%d</td></tr>\n", exv, csv, mmv ? "fail" : "pass", mmv);
            } else {
                fprintf(f, "| %s | %d | %d | %d |\n", rn, exv, csv, mmv);
            }
        }
        if (header) fprintf(f, html ? "</table>\n" : "\n");
    }
    if (html) fprintf(f, "</body></html>\n");
    fclose(f);
    if (o->output) st = cf_write_atomic(o->output, buf, blen, &e);
    else fwrite(buf, 1, blen, stdout);
    if (st) fprintf(stderr, "aclnn-conform report: %s\n", e.msg);
    free(buf);
    free(rows);
    cJSON_Delete(root);
    return st;
}

/* ---- export / score: out-of-process targets (abi.md) ---- */

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
        fz_stream s[64];
        int n = fz_streams(cz[op], o->profile, s, 64);
        int nr = fz_rule_count(cz[op], o->profile);
        for (int i = -1; i < n && i < 64 && !st; i++) {
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
                cf_expected x = {0};
                if (c.expect_status == 0) st = cf_oracle_expected(&c, o->profile, &x, &e);
                char path[2048];
                if (!st) st = cf_case_write(o->out_dir, &c, &x, CF_TOOL_NAME " " CF_TOOL_VERSION, path, sizeof path, &e);
                written += !st;
                cf_expected_free(&x);
                cf_case_free(&c);
            }
        }
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
    if (!cJSON_IsNumber(s)) {
        cJSON_Delete(j);
        return cf_fail(e, CFE_INPUT, "%s: field 'status': expected an integer or null", path);
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

int cmd_score(const cf_opts *o)
{
    cf_err e = {{0}};
    if (o->npos != 1) {
        fprintf(stderr, "aclnn-conform score: usage: score DIR (a directory written by export)\n");
        return CFE_INPUT;
    }
    cz_constraints *cz[CF_OP_COUNT] = {0};
    cf_status st = cf_load_constraints(o, cz, &e);
    char **dirs = NULL;
    int n = 0;
    if (!st) st = cf_collect_cases(o->pos[0], &dirs, &n, &e);
    if (st) {
        fprintf(stderr, "aclnn-conform score: %s\n", e.msg);
        for (int i = 0; i < CF_OP_COUNT; i++) cz_free(cz[i]);
        return st;
    }
    cf_row *rows = calloc((size_t)n + 1, sizeof(cf_row));
    int nrows = 0;
    int64_t unsupported = 0, failed = 0, status_cases = 0, status_mm = 0;
    cJSON *failures = cJSON_CreateArray();
    time_t wall = time(NULL);
    char started[32];
    strftime(started, sizeof started, "%Y-%m-%dT%H:%M:%SZ", gmtime(&wall));
    for (int i = 0; i < n && rows; i++) {
        cf_err ce = {{0}};
        cf_case c;
        cf_expected x;
        cf_run_result r;
        memset(&r, 0, sizeof r);
        bool unsup;
        cf_status cs = cf_case_read(dirs[i], &c, &x, &ce);
        if (!cs) cs = cf_fill_masked(&c, &x, &ce);
        if (!cs) cs = read_result(dirs[i], &c, &r, &unsup, &ce);
        if (cs) {
            fprintf(stderr, "aclnn-conform score: %s\n", ce.msg);
            st = st > cs ? st : cs;
            cf_run_result_free(&r);
            cf_expected_free(&x);
            cf_case_free(&c);
            continue;
        }
        if (unsup) {
            unsupported++;
        } else if (c.expect_status != 0) {
            status_cases++;
            if (r.status != c.expect_status) {
                status_mm++;
                failed++;
                cJSON_AddItemToArray(failures, cJSON_CreateString(dirs[i]));
                if (!o->quiet) printf("FAIL %s %s: status %d, expected %d\n", cf_op_name(c.op), dirs[i], r.status, c.expect_status);
            }
        } else {
            cf_dtype dt;
            char variant[FZ_VARIANT_LEN];
            cf_case_stream_key(cz, &c, c.profile, &dt, variant);
            int k = 0;
            while (k < nrows && !(rows[k].dtype == dt && !strcmp(rows[k].op, cf_op_name(c.op)) && !strcmp(rows[k].variant, variant))) k++;
            cf_tol tol;
            cs = cf_tolerance_for(cz, &c, c.profile, variant, o->strict_zero, &tol, &ce);
            if (!cs) {
                if (k == nrows) cf_row_init(&rows[nrows++], cf_op_name(c.op), dt, variant, &tol);
                cf_case_verdict v;
                cf_score_case(&c, &x, &r, &tol, i, dirs[i], &rows[k], &v, o->quiet ? NULL : (cf_fail_cb)NULL, NULL, 0);
                if (!v.pass) {
                    failed++;
                    cJSON_AddItemToArray(failures, cJSON_CreateString(dirs[i]));
                    if (!o->quiet) printf("%s\n", v.first_failure);
                }
            } else {
                fprintf(stderr, "aclnn-conform score: %s\n", ce.msg);
                st = st > cs ? st : cs;
            }
        }
        cf_run_result_free(&r);
        cf_expected_free(&x);
        cf_case_free(&c);
    }
    cf_opts ro = *o; /* the report names the export's seed and profile when DIR/export.json says */
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
    cJSON *rep = cf_report_new("score", &ro, 0, n, started);
    cJSON *results = cJSON_AddArrayToObject(rep, "results");
    cf_row *rp[512];
    for (int i = 0; i < nrows; i++) {
        cJSON_AddItemToArray(results, cf_row_to_json(&rows[i]));
        if (i < 512) rp[i] = &rows[i];
    }
    cJSON *sc = cJSON_AddArrayToObject(rep, "status_checks");
    cJSON *sx = cJSON_CreateObject();
    cJSON_AddStringToObject(sx, "op", "*");
    cJSON_AddStringToObject(sx, "rule", "all invalid-input rules");
    cJSON_AddNumberToObject(sx, "expected", 0);
    cJSON_AddNumberToObject(sx, "cases", (double)status_cases);
    cJSON_AddNumberToObject(sx, "mismatches", (double)status_mm);
    cJSON_AddStringToObject(sx, "example", "");
    cJSON_AddItemToArray(sc, sx);
    cJSON_AddNumberToObject(rep, "unsupported", (double)unsupported);
    cJSON_AddItemToObject(rep, "failures", failures);
    char path[2048];
    if (o->output) snprintf(path, sizeof path, "%s", o->output);
    else snprintf(path, sizeof path, "%s/score-%ld.json", o->out_dir, (long)wall);
    cf_status ws = cf_write_report(path, rep, &e);
    cJSON_Delete(rep);
    cf_print_summary(stdout, rp, nrows < 512 ? nrows : 512);
    printf("score: %d cases, %lld unsupported, status checks %lld/%lld mismatching; report %s\n", n, (long long)unsupported,
           (long long)status_mm, (long long)status_cases, ws ? "NOT WRITTEN" : path);
    printf("score: %lld passed, %lld failed\n", (long long)(n - unsupported - failed), (long long)failed);
    if (ws) fprintf(stderr, "aclnn-conform score: %s\n", e.msg);
    for (int i = 0; i < n; i++) free(dirs[i]);
    free(dirs);
    free(rows);
    for (int i = 0; i < CF_OP_COUNT; i++) cz_free(cz[i]);
    if (ws) return ws;
    if (st) return st;
    return failed ? CFE_FAIL : CFE_OK;
}
