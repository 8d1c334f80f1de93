/* aclnn-conform merge A.json B.json... -o OUT.json [--partial]: the shards of one run combined
 * exactly (counts, maxima with their worst case, histograms, error plots); sums in shard order. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "report.h"

/* Set obj[key] = item, replacing or adding.  The lookup is case-sensitive like the replace:
 * cJSON_HasObjectItem is not, so a report with "examplE" made the replace fail and leak item
 * (found by the fuzz_report harness). */
static void set_field(cJSON *obj, const char *key, cJSON *item)
{
    if (!cJSON_GetObjectItemCaseSensitive(obj, key)) cJSON_AddItemToObject(obj, key, item);
    else if (!cJSON_ReplaceItemInObjectCaseSensitive(obj, key, item)) cJSON_Delete(item);
}

#define SHARDS_MAX (1 << 20)

/* run.shard of a report: "k/n" for a sweep, "k/n,k/n,..." for a merge of several (all with
 * the same n, 0 <= k < n <= 2^20).  Calls add(k) for each; *n_out is n. */
static cf_status parse_shards(const char *path, const char *s, int *n_out, int *ks, int *nk, int maxk, cf_err *e)
{
    int n = 0;
    *nk = 0;
    const char *p = s;
    do {
        char *end;
        if (*p < '0' || *p > '9') goto bad;
        long k = strtol(p, &end, 10);
        if (*end != '/' || end[1] < '0' || end[1] > '9') goto bad;
        long nn = strtol(end + 1, &end, 10);
        if (nn < 1 || nn > SHARDS_MAX || k < 0 || k >= nn || (n && nn != n) || (*end && (*end != ',' || !end[1]))) goto bad;
        n = (int)nn;
        if (*nk >= maxk) goto bad;
        ks[(*nk)++] = (int)k;
        p = *end ? end + 1 : end;
    } while (*p);
    *n_out = n;
    return CFE_OK;
bad:
    return cf_fail(e, CFE_INPUT, "%s: field 'run.shard': \"%.60s\" is not k/n (or k/n,k/n,... with one n, 0 <= k < n <= %d)", path, s, SHARDS_MAX);
}

/* The run fields every shard of one run shares: merging reports of different runs would add up
 * results that were never one experiment (target_sha256: the same library, wherever its path). */
static const char *const SAME_RUN[] = {"seed", "target", "target_sha256", "profile", "budget", NULL};

/* A merge: the rows and status rows added up so far, the first report's run, and which report
 * holds each shard. */
typedef struct {
    cf_row *all;
    int nall;
    cJSON *status, *failures, *first;
    const char *first_path;
    char *first_tool;         /* tool.version of the first report */
    char **ids;               /* run.id of each report read: a copy is not a second shard */
    int nids;
    double seconds, cases, unsupported, over_max_bytes;
    bool any_partial, any_interrupted, any_unsupported;
    int nshards, *owner, *ks, nk;
    char *shards, *missing; /* "k/n,..." lists, once every report is in */
    int nmissing;
} merge_run;

/* One run: same seed, target, profile (and budget when recorded) as the first report. */
static cf_status check_same_run(const merge_run *M, const cJSON *run, const char *path, cf_err *e)
{
    for (int k = 0; SAME_RUN[k] && M->first; k++) {
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(M->first, SAME_RUN[k]), *b = cJSON_GetObjectItemCaseSensitive(run, SAME_RUN[k]);
        char *ta = a ? cJSON_PrintUnformatted(a) : NULL, *tb = b ? cJSON_PrintUnformatted(b) : NULL;
        cf_status st = CFE_OK;
        if ((ta || tb) && (!ta || !tb || strcmp(ta, tb)))
            st = cf_fail(e, CFE_INPUT, "%s: field 'run.%s': %.80s, but %s has %.80s (shards of different runs are not merged)", path,
                         SAME_RUN[k], tb ? tb : "(absent)", M->first_path, ta ? ta : "(absent)");
        free(ta);
        free(tb);
        if (st) return st;
    }
    return CFE_OK;
}

/* The report as a whole: made by the same tool version as the first, by a sweep (or a merge of
 * sweeps), not interrupted unless --partial, with result rows, each key once, and a run.id no
 * other input has (issue 57: each of these merged silently). */
static cf_status check_report(merge_run *M, const cJSON *root, const cJSON *run, const cf_row *rows, int n, const cf_opts *o,
                              int i, cf_err *e)
{
    const char *path = o->pos[i];
    const cJSON *tool = cJSON_GetObjectItemCaseSensitive(root, "tool");
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(tool, "version");
    const char *v = cJSON_IsString(ver) ? ver->valuestring : "(absent)";
    if (M->first_tool && strcmp(v, M->first_tool))
        return cf_fail(e, CFE_INPUT, "%s: field 'tool.version': %.40s, but %s has %.40s (reports of different tool versions are not merged)",
                       path, v, M->first_path, M->first_tool);
    const cJSON *cmd = cJSON_GetObjectItemCaseSensitive(run, "command");
    if (!cJSON_IsString(cmd) || (strcmp(cmd->valuestring, "sweep") && strcmp(cmd->valuestring, "merge")))
        return cf_fail(e, CFE_INPUT, "%s: field 'run.command': %.40s (only sweep reports and their merges are shards)", path,
                       cJSON_IsString(cmd) ? cmd->valuestring : "(absent)");
    bool interrupted = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "interrupted")) ||
                       cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(run, "interrupted"));
    if (interrupted && !o->partial)
        return cf_fail(e, CFE_INPUT, "%s: field 'run.interrupted': this shard did not finish (merge with --partial to combine what it "
                                     "has; the report is then marked interrupted and partial)", path);
    if (n == 0) return cf_fail(e, CFE_INPUT, "%s: field 'results': no result rows (a shard that ran no case has nothing to merge)", path);
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++)
            if (!strcmp(rows[a].op, rows[b].op) && rows[a].dtype == rows[b].dtype && !strcmp(rows[a].variant, rows[b].variant))
                return cf_fail(e, CFE_INPUT, "%s: field 'results[%d]': the row %s %s %s again (results[%d]): its counts would add twice",
                               path, b, rows[b].op, cf_dtype_name(rows[b].dtype), rows[b].variant, a);
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(run, "id");
    if (cJSON_IsString(id) && id->valuestring[0]) {
        for (int k = 0; k < M->nids; k++)
            if (!strcmp(M->ids[k], id->valuestring))
                return cf_fail(e, CFE_INPUT, "%s: field 'run.id': %.120s again (a copy of another input, whatever its run.shard says)",
                               path, id->valuestring);
        char **ni = realloc(M->ids, sizeof(char *) * (size_t)(M->nids + 1));
        if (!ni || !(ni[M->nids] = strdup(id->valuestring))) {
            if (ni) M->ids = ni;
            return cf_fail(e, CFE_IO, "out of memory");
        }
        M->ids = ni;
        M->nids++;
    }
    if (!M->first_tool && !(M->first_tool = strdup(v))) return cf_fail(e, CFE_IO, "out of memory");
    return CFE_OK;
}

/* Every case a row cites (its worst elements, its examples) must belong to the shards the report
 * claims: case k of a stream runs in shard k % n.  A shard relabelled as another fails here. */
static cf_status check_case_indices(const merge_run *M, const cf_row *rows, int n, const char *path, cf_err *e)
{
    for (int r = 0; r < n; r++) {
        int64_t idx[2 + 2 * CF_EX_KINDS];
        int ni = 0;
        if (rows[r].worst.has) idx[ni++] = rows[r].worst.case_index;
        if (rows[r].worst_finite.has) idx[ni++] = rows[r].worst_finite.case_index;
        for (int k = 0; rows[r].examples && k < CF_EX_KINDS; k++)
            for (int w = 0; w < 2; w++)
                if (rows[r].examples[k][w].used) idx[ni++] = rows[r].examples[k][w].case_index;
        for (int q = 0; q < ni; q++) {
            if (idx[q] < 0) continue;
            int s = (int)(idx[q] % M->nshards);
            bool claimed = false;
            for (int k = 0; k < M->nk; k++) claimed |= M->ks[k] == s;
            if (!claimed)
                return cf_fail(e, CFE_INPUT, "%s: field 'results[%d]': cites case %lld, which shard %d/%d runs, not this report's "
                                             "shards (a shard relabelled?)", path, r, (long long)idx[q], s, M->nshards);
        }
    }
    return CFE_OK;
}

/* Every shard once: a duplicate would count its cases twice.  Report i claims its run.shard. */
static cf_status claim_shards(merge_run *M, const cJSON *run, const cf_opts *o, int i, cf_err *e)
{
    int sn = 0, maxk = 1;
    const char *shs = cJSON_GetObjectItemCaseSensitive(run, "shard")->valuestring;
    for (const char *q = shs; *q; q++) maxk += *q == ',';
    int *nks = realloc(M->ks, sizeof(int) * (size_t)maxk);
    if (!nks) return cf_fail(e, CFE_IO, "out of memory");
    M->ks = nks;
    cf_status st = parse_shards(o->pos[i], shs, &sn, M->ks, &M->nk, maxk, e);
    if (st) return st;
    if (!M->owner) {
        M->nshards = sn;
        M->owner = malloc(sizeof(int) * (size_t)sn);
        if (!M->owner) return cf_fail(e, CFE_IO, "out of memory");
        for (int k = 0; k < sn; k++) M->owner[k] = -1;
    } else if (sn != M->nshards) {
        return cf_fail(e, CFE_INPUT, "%s: field 'run.shard': shards of %d, but %s has shards of %d", o->pos[i], sn, M->first_path, M->nshards);
    }
    for (int k = 0; k < M->nk; k++) {
        int s = M->ks[k];
        if (M->owner[s] >= 0)
            return cf_fail(e, CFE_INPUT, "%s: duplicate shard %d/%d (already in %s): refusing to count its results twice", o->pos[i], s,
                           M->nshards, o->pos[M->owner[s]]);
        M->owner[s] = i;
    }
    return CFE_OK;
}

/* Each row into the row with the same key, else appended (its plot moves along). */
static void add_rows(merge_run *M, cf_row *rows, int n)
{
    for (int k = 0; k < n; k++) {
        int j = 0;
        while (j < M->nall && !(strcmp(M->all[j].op, rows[k].op) == 0 && M->all[j].dtype == rows[k].dtype &&
                                strcmp(M->all[j].variant, rows[k].variant) == 0))
            j++;
        if (j == M->nall) {
            M->all[M->nall++] = rows[k];
        } else {
            cf_row_merge(&M->all[j], &rows[k]);
            cf_row_free(&rows[k]);
        }
    }
}

/* Counts of a status row are summed; its example is the first one any report has. */
static void add_status_checks(merge_run *M, const cJSON *root)
{
    const cJSON *sc = cJSON_GetObjectItemCaseSensitive(root, "status_checks"), *it;
    cJSON_ArrayForEach(it, sc)
    {
        const cJSON *op = cJSON_GetObjectItemCaseSensitive(it, "op"), *rule = cJSON_GetObjectItemCaseSensitive(it, "rule");
        cJSON *m = NULL, *x;
        cJSON_ArrayForEach(x, M->status)
        if (!strcmp(cJSON_GetObjectItemCaseSensitive(x, "op")->valuestring, op->valuestring) &&
            !strcmp(cJSON_GetObjectItemCaseSensitive(x, "rule")->valuestring, rule->valuestring)) m = x;
        if (!m) {
            cJSON_AddItemToArray(M->status, cJSON_Duplicate(it, true));
            continue;
        }
        const char *keys[] = {"cases", "mismatches"};
        for (int k = 0; k < 2; k++) {
            cJSON *dst = cJSON_GetObjectItemCaseSensitive(m, keys[k]);
            const cJSON *src = cJSON_GetObjectItemCaseSensitive(it, keys[k]);
            cJSON_SetNumberValue(dst, dst->valuedouble + src->valuedouble);
        }
        const cJSON *ex = cJSON_GetObjectItemCaseSensitive(m, "example"), *sex = cJSON_GetObjectItemCaseSensitive(it, "example");
        if ((!cJSON_IsString(ex) || !ex->valuestring[0]) && cJSON_IsString(sex)) set_field(m, "example", cJSON_CreateString(sex->valuestring));
    }
}

/* The run totals and flags, the status rows and the failure list of one report. */
static void add_report(merge_run *M, const cJSON *root, const cJSON *run)
{
    const cJSON *sec = cJSON_GetObjectItemCaseSensitive(run, "seconds");
    M->seconds += cJSON_IsNumber(sec) ? sec->valuedouble : 0;
    M->cases += cJSON_GetObjectItemCaseSensitive(run, "cases")->valuedouble;
    const cJSON *ob = cJSON_GetObjectItemCaseSensitive(run, "over_max_bytes");
    if (cJSON_IsNumber(ob) && ob->valuedouble > 0 && ob->valuedouble <= 0x1p53) M->over_max_bytes += ob->valuedouble;
    /* an input that lacked shards is complete again once they are merged in (the shard set is
     * tracked exactly); one partial for another reason stays partial */
    M->any_partial |= cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "partial")) &&
                      !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(root, "missing_shards"));
    M->any_interrupted |= cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "interrupted")) ||
                          cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(run, "interrupted"));
    const cJSON *un = cJSON_GetObjectItemCaseSensitive(root, "unsupported"), *it;
    if (un) M->any_unsupported = true, M->unsupported += un->valuedouble;
    add_status_checks(M, root);
    const cJSON *fl = cJSON_GetObjectItemCaseSensitive(root, "failures");
    cJSON_ArrayForEach(it, fl) cJSON_AddItemToArray(M->failures, cJSON_Duplicate(it, true));
}

/* Report i: read, checked against the run and the shards so far, added. */
static cf_status merge_one(merge_run *M, const cf_opts *o, int i, cf_err *e)
{
    cJSON *root;
    cf_row *rows;
    int n;
    cf_status st = cf_report_read(o->pos[i], &root, &rows, &n, e);
    if (st) return st;
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(root, "run");
    st = check_same_run(M, run, o->pos[i], e);
    if (!st) st = claim_shards(M, run, o, i, e);
    if (!st) st = check_report(M, root, run, rows, n, o, i, e);
    if (!st) st = check_case_indices(M, rows, n, o->pos[i], e);
    cf_row *na = st ? NULL : realloc(M->all, sizeof(cf_row) * (size_t)(M->nall + n + 1));
    if (!st && !na) st = cf_fail(e, CFE_IO, "out of memory");
    if (st) {
        cf_rows_free(rows, n);
        cJSON_Delete(root);
        return st;
    }
    M->all = na;
    add_rows(M, rows, n);
    add_report(M, root, run);
    if (!M->first) {
        M->first = cJSON_Duplicate(run, true);
        M->first_path = o->pos[i];
    }
    free(rows);
    cJSON_Delete(root);
    return CFE_OK;
}

/* The shard lists; the set must be complete (0/n .. n-1/n) unless --partial. */
static cf_status shard_lists(merge_run *M, const cf_opts *o, cf_err *e)
{
    size_t cap = (size_t)M->nshards * 24 + 1;
    M->shards = calloc(cap, 1);
    M->missing = calloc(cap, 1);
    if (!M->shards || !M->missing) return cf_fail(e, CFE_IO, "out of memory");
    for (int k = 0; k < M->nshards; k++) {
        char *dst = M->owner[k] >= 0 ? M->shards : M->missing;
        size_t l = strlen(dst);
        if (M->owner[k] < 0) M->nmissing++;
        snprintf(dst + l, cap - l, "%s%d/%d", l ? "," : "", k, M->nshards);
    }
    if (M->nmissing && !o->partial)
        return cf_fail(e, CFE_INPUT, "missing %d of %d shards: %.300s%s (merge them too, or pass --partial to merge an incomplete set, marked \"partial\": true)",
                       M->nmissing, M->nshards, M->missing, strlen(M->missing) > 300 ? "..." : "");
    return CFE_OK;
}

/* The merged report (it takes first, status and failures); *fail: some row or status row fails. */
static cJSON *merged_report(merge_run *M, bool *fail)
{
    cJSON *rep = cJSON_CreateObject();
    cJSON_AddNumberToObject(rep, "schema", 1);
    cJSON *tool = cJSON_AddObjectToObject(rep, "tool");
    cJSON_AddStringToObject(tool, "name", CF_TOOL_NAME);
    cJSON_AddStringToObject(tool, "version", CF_TOOL_VERSION);
    set_field(M->first, "command", cJSON_CreateString("merge"));
    set_field(M->first, "shard", cJSON_CreateString(M->shards));
    set_field(M->first, "seconds", cJSON_CreateNumber(M->seconds));
    set_field(M->first, "cases", cJSON_CreateNumber(M->cases));
    set_field(M->first, "interrupted", cJSON_CreateBool(M->any_interrupted));
    if (M->over_max_bytes > 0) set_field(M->first, "over_max_bytes", cJSON_CreateNumber(M->over_max_bytes));
    cJSON_AddItemToObject(rep, "run", M->first);
    M->first = NULL;
    cJSON_AddBoolToObject(rep, "partial", M->nmissing > 0 || M->any_partial || M->any_interrupted);
    if (M->nmissing) cJSON_AddStringToObject(rep, "missing_shards", M->missing);
    if (M->any_interrupted) cJSON_AddBoolToObject(rep, "interrupted", true);
    if (M->any_unsupported) cJSON_AddNumberToObject(rep, "unsupported", M->unsupported);
    cJSON *results = cJSON_AddArrayToObject(rep, "results");
    *fail = false;
    for (int i = 0; i < M->nall; i++) {
        cJSON_AddItemToArray(results, cf_row_to_json(&M->all[i]));
        *fail |= M->all[i].failed_cases > 0;
    }
    cJSON *x;
    cJSON_ArrayForEach(x, M->status) *fail |= cJSON_GetObjectItemCaseSensitive(x, "mismatches")->valuedouble > 0;
    cJSON_AddItemToObject(rep, "status_checks", M->status);
    cJSON_AddItemToObject(rep, "failures", M->failures);
    M->status = M->failures = NULL;
    return rep;
}

static void merge_free(merge_run *M)
{
    cJSON_Delete(M->status);
    cJSON_Delete(M->failures);
    cJSON_Delete(M->first);
    cf_rows_free(M->all, M->nall);
    free(M->owner);
    free(M->ks);
    free(M->shards);
    free(M->missing);
    free(M->first_tool);
    for (int k = 0; k < M->nids; k++) free(M->ids[k]);
    free(M->ids);
}

int cmd_merge(const cf_opts *o)
{
    cf_err e = {{0}};
    if (o->npos < 1 || !o->output) {
        fprintf(stderr, "aclnn-conform merge: usage: merge A.json B.json... -o OUT.json [--partial]\n");
        return CFE_INPUT;
    }
    merge_run M = {.status = cJSON_CreateArray(), .failures = cJSON_CreateArray()};
    cf_status st = CFE_OK;
    for (int i = 0; i < o->npos && !st; i++) st = merge_one(&M, o, i, &e);
    if (!st) st = shard_lists(&M, o, &e);
    int rc = st;
    if (!st) {
        bool fail, partial = M.nmissing > 0 || M.any_partial || M.any_interrupted;
        cJSON *rep = merged_report(&M, &fail);
        st = cf_write_report(o->output, rep, &e);
        cJSON_Delete(rep);
        if (!st) {
            if (!o->quiet) cf_print_summary(stdout, M.all, M.nall);
            if (partial)
                fprintf(stderr, "aclnn-conform merge: PARTIAL: %s%.300s; the report is marked \"partial\": true\n",
                        M.nmissing ? "missing shards " : M.any_interrupted ? "an input run was interrupted" : "an input report is partial",
                        M.nmissing ? M.missing : "");
            printf("merged %d reports (%d of %d shards) into %s%s\n", o->npos, M.nshards - M.nmissing, M.nshards, o->output,
                   partial ? " (partial)" : "");
        }
        rc = st ? st : (fail ? CFE_FAIL : CFE_OK);
    }
    if (rc >= CFE_INPUT) fprintf(stderr, "aclnn-conform merge: %s\n", e.msg);
    merge_free(&M);
    return rc;
}
