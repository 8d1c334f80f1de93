/* ctest-labels: unit */
/* The constraint loader: the five files load; every file of tests/data/constraints_bad/ (each
 * broken in one way) is rejected with a message naming the file and the field; random
 * corruptions of the good files never crash the loader or the generator. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fuzz.h"

#define CDIR ACLCONFORM_SOURCE_DIR "/constraints"
#define BAD ACLCONFORM_TEST_DATA "/constraints_bad/"

static void good_files_load(void **state)
{
    (void)state;
    cz_constraints *cz[CF_OP_COUNT];
    char err[512];
    assert_int_equal(cz_load_dir(CDIR, cz, err, sizeof err), FZ_OK);
    for (int o = 0; o < CF_OP_COUNT; o++) {
        assert_int_equal(cz_op(cz[o]), o);
        assert_string_equal(cz_profile_name(cz[o], 0), "spec");
        assert_true(cz_has_profile(cz[o], "cann-kernel"));
        assert_true(fz_rule_count(cz[o], "spec") > 0);
        cz_free(cz[o]);
    }
    assert_int_equal(cz_load_dir("/nonexistent-dir", cz, err, sizeof err), FZ_ERR_IO);
    assert_non_null(strstr(err, "/nonexistent-dir/"));
    for (int o = 0; o < CF_OP_COUNT; o++) assert_null(cz[o]);
}

static const struct {
    const char *file;
    fz_status status;
    const char *field; /* must appear in the message, after the file name */
} bad[] = {
    {"unknown_dtype.json", FZ_ERR_SCHEMA, ": tensors[2].dtypes[1]: expected a dtype id"},
    {"relation_unknown_tensor.json", FZ_ERR_SCHEMA, ": tensors[1].dtype_rel.equal: expected the name of a tensor"},
    {"rank_range_reversed.json", FZ_ERR_SCHEMA, ": tensors[0].rank: expected min <= max"},
    {"rule_unknown_kind.json", FZ_ERR_SCHEMA, ": rules[3].kind: expected a known rule kind"},
    {"rule_of_another_model.json", FZ_ERR_SCHEMA, ": rules[3].kind: expected a kind the shape model breaks: nsa_l_gt_d is a rule of the nsa_tnd model"},
    {"rule_missing_status.json", FZ_ERR_SCHEMA, ": rules[0].status: expected a member \"status\""},
    {"rule_unknown_target.json", FZ_ERR_SCHEMA, ": rules[1].targets[0]: expected the name of a tensor"},
    {"tolerance_missing_for_stream_dtype.json", FZ_ERR_SCHEMA, ": tolerances: expected an entry without variant for stream dtype f32"},
    {"tolerance_scaled_looser_than_ulp.json", FZ_ERR_SCHEMA, ": tolerances[0].max_scaled_ulp: expected max_scaled_ulp <= max_ulp"},
    {"edge_unknown_class.json", FZ_ERR_SCHEMA, ": values[0].edges[3]: expected a number"},
    {"profile_unknown_rule.json", FZ_ERR_SCHEMA, ": profiles.cann-kernel.rules.nonexistent: expected the name of a rule"},
    {"domain_range_reversed.json", FZ_ERR_SCHEMA, ": params[0].domain[0].range: expected finite lo <= hi"},
    {"unknown_op.json", FZ_ERR_SCHEMA, ": op: expected an operator id"},
    {"tensors_not_array.json", FZ_ERR_SCHEMA, ": tensors: expected an array"},
    {"invalid_value_is_valid.json", FZ_ERR_SCHEMA, ": rules[8].values[0]: expected a value not in the parameter's \"valid\" list"},
    {"promotion_missing.json", FZ_ERR_SCHEMA, ": promotion: expected a promotion table"},
    {"nsa_range_not_pair.json", FZ_ERR_SCHEMA, ": shape_model.l_range: expected [min, max]"},
    {"scalar_dtype_unknown.json", FZ_ERR_SCHEMA, ": params[0].scalar_dtypes[3]: expected a dtype id"},
    {"schema_version.json", FZ_ERR_SCHEMA, ": schema: expected 1"},
    {"profile_tolerance_dtype_without_stream.json", FZ_ERR_SCHEMA, ": profiles.cann-kernel.tolerances[0].dtype: expected a dtype listed in streams.dtypes"},
    {"variant_value_not_valid.json", FZ_ERR_SCHEMA, ": streams.variants[1].params.approximate: expected a value from the parameter's \"valid\" list"},
    {"report_plot_of_an_output.json", FZ_ERR_SCHEMA, ": report.plot.x: expected an input tensor or \"cancellation\", not \"out\""},
    {"report_unknown_key.json", FZ_ERR_SCHEMA, ": report.colour: expected only plot, marks, scaled_reason, doc in report"},
    {"not_json.json", FZ_ERR_PARSE, ": line "},
    {"empty.json", FZ_ERR_PARSE, ": expected valid JSON"},
    {"top_level_array.json", FZ_ERR_SCHEMA, ": (top level): expected a JSON object"},
};

static void broken_files_are_rejected_naming_file_and_field(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char path[512], err[512];
        cz_constraints *cz = (cz_constraints *)&path; /* must be reset to NULL */
        snprintf(path, sizeof path, "%s%s", BAD, bad[i].file);
        fz_status st = cz_load(path, &cz, err, sizeof err);
        printf("  %-45s -> %s\n", bad[i].file, err);
        if (st != bad[i].status) fail_msg("%s: status %s, expected %s", bad[i].file, fz_status_name(st), fz_status_name(bad[i].status));
        assert_null(cz);
        assert_true(strncmp(err, path, strlen(path)) == 0);
        if (!strstr(err, bad[i].field)) fail_msg("%s: message \"%s\" lacks \"%s\"", bad[i].file, err, bad[i].field);
    }
    /* a small buffer truncates, never overflows; a NULL buffer is allowed */
    char tiny[8];
    cz_constraints *cz;
    assert_int_equal(cz_load(BAD "unknown_dtype.json", &cz, tiny, sizeof tiny), FZ_ERR_SCHEMA);
    assert_int_equal(strlen(tiny), 7);
    assert_int_equal(cz_load(BAD "unknown_dtype.json", &cz, NULL, 0), FZ_ERR_SCHEMA);
    assert_int_equal(cz_load(BAD "no-such-file.json", &cz, NULL, 0), FZ_ERR_IO);
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *b = malloc(1 << 17);
    *len = b ? fread(b, 1, (1 << 17) - 1, f) : 0;
    fclose(f);
    return b;
}

static uint64_t lcg(uint64_t *s) { return (*s = *s * 6364136223846793005ull + 1442695040888963407ull) >> 33; }

/* Corrupt a good file at random (flip a byte, delete a span, duplicate a span, swap a
 * digit); load it; when it still loads, generate from it.  Nothing may crash (run under the
 * sanitizer build too). */
static void corrupted_files_never_crash(void **state)
{
    (void)state;
    static const char *const alphabet = "{}[]\",:0123456789-.eE truefalsnul\\xf16bf32";
    char tmp[512];
    snprintf(tmp, sizeof tmp, "%s/fuzz_loader_mutant.json", ACLCONFORM_BINARY_DIR);
    uint64_t seed = 12345;
    int loaded = 0, rejected = 0;
    for (int o = 0; o < CF_OP_COUNT; o++) {
        char path[512];
        size_t len = 0;
        snprintf(path, sizeof path, "%s/%s.json", CDIR, cf_op_name((cf_op)o));
        char *orig = slurp(path, &len);
        assert_non_null(orig);
        char *buf = malloc(len * 2 + 64);
        assert_non_null(buf);
        for (int it = 0; it < 120; it++) {
            memcpy(buf, orig, len);
            size_t n = len;
            int edits = 1 + (int)(lcg(&seed) % 3);
            for (int e = 0; e < edits && n > 2; e++) {
                size_t at = lcg(&seed) % n, span = 1 + lcg(&seed) % 12;
                if (at + span > n) span = n - at;
                switch (lcg(&seed) % 4) {
                case 0: buf[at] = alphabet[lcg(&seed) % strlen(alphabet)]; break;
                case 1: memmove(buf + at, buf + at + span, n - at - span); n -= span; break;
                case 2: memmove(buf + at + span, buf + at, n - at); n += span; break;
                default:
                    if (buf[at] >= '0' && buf[at] <= '9') buf[at] = (char)('0' + lcg(&seed) % 10);
                    else n = at; /* truncate */
                }
            }
            FILE *f = fopen(tmp, "wb");
            assert_non_null(f);
            fwrite(buf, 1, n, f);
            fclose(f);
            cz_constraints *cz;
            char err[512];
            if (cz_load(tmp, &cz, err, sizeof err) != FZ_OK) {
                rejected++;
                assert_true(strlen(err) > 0);
                continue;
            }
            loaded++;
            fz_stream s[16];
            int ns = fz_streams(cz, "spec", s, 16);
            for (int i = 0; i < ns && i < 16; i++)
                for (int k = 0; k < 3; k++) {
                    cf_case c;
                    if (fz_generate(cz, "spec", &s[i], 1, k, &c) == FZ_OK) cf_case_free(&c);
                }
            for (int r = 0; r < fz_rule_count(cz, "spec"); r++) {
                cf_case c;
                if (fz_generate_invalid(cz, "spec", r, 1, 0, &c) == FZ_OK) cf_case_free(&c);
            }
            cz_free(cz);
        }
        free(buf);
        free(orig);
    }
    printf("  mutants: %d rejected, %d still valid (generated from)\n", rejected, loaded);
    remove(tmp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(good_files_load),
        cmocka_unit_test(broken_files_are_rejected_naming_file_and_field),
        cmocka_unit_test(corrupted_files_never_crash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
