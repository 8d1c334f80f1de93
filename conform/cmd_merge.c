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
 * results that were never one experiment. */
static const char *const SAME_RUN[] = {"seed", "target", "profile", "budget", NULL};

int cmd_merge(const cf_opts *o)
{
    cf_err e = {{0}};
    if (o->npos < 1 || !o->output) {
        fprintf(stderr, "aclnn-conform merge: usage: merge A.json B.json... -o OUT.json [--partial]\n");
        return CFE_INPUT;
    }
    cf_row *all = NULL;
    int nall = 0;
    cJSON *status = cJSON_CreateArray(), *failures = cJSON_CreateArray(), *first = NULL;
    double seconds = 0, cases = 0, unsupported = 0;
    bool any_partial = false, any_interrupted = false, any_unsupported = false;
    cf_status st = CFE_OK;
    int nshards = 0, *owner = NULL, *ks = NULL, nk = 0;
    const char *first_path = NULL;
    for (int i = 0; i < o->npos && !st; i++) {
        cJSON *root;
        cf_row *rows;
        int n;
        if ((st = cf_report_read(o->pos[i], &root, &rows, &n, &e))) break;
        const cJSON *run = cJSON_GetObjectItemCaseSensitive(root, "run");
        /* one run: same seed, target, profile (and budget when recorded) as the first report */
        for (int k = 0; SAME_RUN[k] && first && !st; k++) {
            const cJSON *a = cJSON_GetObjectItemCaseSensitive(first, SAME_RUN[k]), *b = cJSON_GetObjectItemCaseSensitive(run, SAME_RUN[k]);
            char *ta = a ? cJSON_PrintUnformatted(a) : NULL, *tb = b ? cJSON_PrintUnformatted(b) : NULL;
            if ((ta || tb) && (!ta || !tb || strcmp(ta, tb)))
                st = cf_fail(&e, CFE_INPUT, "%s: field 'run.%s': %.80s, but %s has %.80s (shards of different runs are not merged)", o->pos[i],
                             SAME_RUN[k], tb ? tb : "(absent)", first_path, ta ? ta : "(absent)");
            free(ta);
            free(tb);
        }
        /* every shard once: a duplicate would count its cases twice */
        int sn = 0, maxk = 1;
        const char *shs = cJSON_GetObjectItemCaseSensitive(run, "shard")->valuestring;
        for (const char *q = shs; *q; q++) maxk += *q == ',';
        if (!st) {
            int *nks = realloc(ks, sizeof(int) * (size_t)maxk);
            if (!nks) st = cf_fail(&e, CFE_IO, "out of memory");
            else ks = nks;
        }
        if (!st) st = parse_shards(o->pos[i], shs, &sn, ks, &nk, maxk, &e);
        if (!st && !owner) {
            nshards = sn;
            owner = malloc(sizeof(int) * (size_t)sn);
            if (!owner) st = cf_fail(&e, CFE_IO, "out of memory");
            for (int k = 0; owner && k < sn; k++) owner[k] = -1;
        } else if (!st && sn != nshards) {
            st = cf_fail(&e, CFE_INPUT, "%s: field 'run.shard': shards of %d, but %s has shards of %d", o->pos[i], sn, first_path, nshards);
        }
        for (int k = 0; k < nk && !st; k++) {
            if (owner[ks[k]] >= 0)
                st = cf_fail(&e, CFE_INPUT, "%s: duplicate shard %d/%d (already in %s): refusing to count its results twice", o->pos[i], ks[k],
                             nshards, o->pos[owner[ks[k]]]);
            else owner[ks[k]] = i;
        }
        cf_row *na = st ? NULL : realloc(all, sizeof(cf_row) * (size_t)(nall + n + 1));
        if (!st && !na) st = cf_fail(&e, CFE_IO, "out of memory");
        if (st) {
            cf_rows_free(rows, n);
            cJSON_Delete(root);
            break;
        }
        all = na;
        for (int k = 0; k < n; k++) { /* merge into the row with the same key, else append (the row's plot moves along) */
            int j = 0;
            while (j < nall && !(strcmp(all[j].op, rows[k].op) == 0 && all[j].dtype == rows[k].dtype && strcmp(all[j].variant, rows[k].variant) == 0)) j++;
            if (j == nall) {
                all[nall++] = rows[k];
            } else {
                cf_row_merge(&all[j], &rows[k]);
                cf_row_free(&rows[k]);
            }
        }
        seconds += cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(run, "seconds")) ? cJSON_GetObjectItemCaseSensitive(run, "seconds")->valuedouble : 0;
        cases += cJSON_GetObjectItemCaseSensitive(run, "cases")->valuedouble;
        /* an input that lacked shards is complete again once they are merged in (the shard set
         * is tracked exactly); one partial for another reason stays partial */
        any_partial |= cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "partial")) &&
                       !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(root, "missing_shards"));
        any_interrupted |= cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "interrupted"));
        const cJSON *un = cJSON_GetObjectItemCaseSensitive(root, "unsupported");
        if (un) any_unsupported = true, unsupported += un->valuedouble;
        const cJSON *sc = cJSON_GetObjectItemCaseSensitive(root, "status_checks"), *it;
        cJSON_ArrayForEach(it, sc)
        {
            const cJSON *op = cJSON_GetObjectItemCaseSensitive(it, "op"), *rule = cJSON_GetObjectItemCaseSensitive(it, "rule");
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
                cJSON_SetNumberValue(dst, dst->valuedouble + src->valuedouble);
            }
            const cJSON *ex = cJSON_GetObjectItemCaseSensitive(m, "example"), *sex = cJSON_GetObjectItemCaseSensitive(it, "example");
            if ((!cJSON_IsString(ex) || !ex->valuestring[0]) && cJSON_IsString(sex))
                set_field(m, "example", cJSON_CreateString(sex->valuestring));
        }
        const cJSON *fl = cJSON_GetObjectItemCaseSensitive(root, "failures");
        cJSON_ArrayForEach(it, fl) cJSON_AddItemToArray(failures, cJSON_Duplicate(it, true));
        if (!first) {
            first = cJSON_Duplicate(run, true);
            first_path = o->pos[i];
        }
        free(rows);
        cJSON_Delete(root);
    }
    /* the shard set must be complete (0/n .. n-1/n) unless --partial */
    size_t cap = (size_t)nshards * 24 + 1;
    char *shards = calloc(cap, 1), *missing = calloc(cap, 1);
    int nmissing = 0;
    if (!st && (!shards || !missing)) st = cf_fail(&e, CFE_IO, "out of memory");
    for (int k = 0; !st && k < nshards; k++) {
        char *dst = owner[k] >= 0 ? shards : missing;
        size_t l = strlen(dst);
        if (owner[k] < 0) nmissing++;
        snprintf(dst + l, cap - l, "%s%d/%d", l ? "," : "", k, nshards);
    }
    if (!st && nmissing && !o->partial)
        st = cf_fail(&e, CFE_INPUT, "missing %d of %d shards: %.300s%s (merge them too, or pass --partial to merge an incomplete set, marked \"partial\": true)",
                     nmissing, nshards, missing, strlen(missing) > 300 ? "..." : "");
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
        bool partial = nmissing > 0 || any_partial;
        cJSON_AddBoolToObject(rep, "partial", partial);
        if (nmissing) cJSON_AddStringToObject(rep, "missing_shards", missing);
        if (any_interrupted) cJSON_AddBoolToObject(rep, "interrupted", true);
        if (any_unsupported) cJSON_AddNumberToObject(rep, "unsupported", unsupported);
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
            if (!o->quiet) cf_print_summary(stdout, all, nall);
            if (partial)
                fprintf(stderr, "aclnn-conform merge: PARTIAL: %s%.300s; the report is marked \"partial\": true\n",
                        nmissing ? "missing shards " : "an input report is partial", nmissing ? missing : "");
            printf("merged %d reports (%d of %d shards) into %s%s\n", o->npos, nshards - nmissing, nshards, o->output, partial ? " (partial)" : "");
        }
        rc = st ? st : (fail ? CFE_FAIL : CFE_OK);
    }
    if (rc >= CFE_INPUT) fprintf(stderr, "aclnn-conform merge: %s\n", e.msg);
    cJSON_Delete(status);
    cJSON_Delete(failures);
    cJSON_Delete(first);
    cf_rows_free(all, nall);
    free(owner);
    free(ks);
    free(shards);
    free(missing);
    return rc;
}
