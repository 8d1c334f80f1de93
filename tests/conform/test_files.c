/* ctest-labels: unit
 * Files the suite reads and writes: .npy round trips, every malformed-file path (truncated,
 * corrupted header, wrong dtype, shape vs size) reported with the file and field, case.json
 * validation, the spec's independent example cases read correctly, atomic writes, SHA-256. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "casefile.h"
#include "npy.h"

static char tmpdir[256];

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "%s/test_files_tmp_%ld", ACLCONFORM_BINARY_DIR, (long)getpid());
    cf_err e = {{0}};
    return cf_mkdirs(tmpdir, &e) == CFE_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    cf_rmtree(tmpdir);
    return 0;
}

static void write_raw(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    fclose(f);
}

static void npy_round_trips_every_suite_dtype(void **state)
{
    (void)state;
    for (int dt = 0; dt < CF_DTYPE_COUNT; dt++) {
        int64_t shape[3] = {2, 3, dt + 1};
        size_t es = cf_dtype_size((cf_dtype)dt), n = (size_t)(6 * (dt + 1));
        unsigned char *data = malloc(n * es);
        for (size_t i = 0; i < n * es; i++) data[i] = (unsigned char)(i * 7 + (size_t)dt);
        char path[512];
        snprintf(path, sizeof path, "%s/rt_%d.npy", tmpdir, dt);
        cf_err e = {{0}};
        assert_int_equal(npy_write(path, npy_descr_for((cf_dtype)dt), 3, shape, data, &e), CFE_OK);
        npy_array a;
        assert_int_equal(npy_read(path, &a, &e), CFE_OK);
        assert_true(npy_descr_matches(a.descr, (cf_dtype)dt));
        assert_int_equal(a.ndim, 3);
        assert_int_equal(a.shape[2], dt + 1);
        assert_memory_equal(a.data, data, n * es);
        npy_free(&a);
        free(data);
        /* the header is padded to a multiple of 64 bytes, as numpy does */
        FILE *f = fopen(path, "rb");
        unsigned char hdr[10];
        assert_int_equal(fread(hdr, 1, 10, f), 10);
        fclose(f);
        assert_int_equal((10 + hdr[8] + 256 * hdr[9]) % 64, 0);
    }
    /* rank 0 and rank 1 */
    double v = 2.5;
    char path[512];
    snprintf(path, sizeof path, "%s/r0.npy", tmpdir);
    cf_err e = {{0}};
    assert_int_equal(npy_write(path, "<f8", 0, NULL, &v, &e), CFE_OK);
    npy_array a;
    assert_int_equal(npy_read(path, &a, &e), CFE_OK);
    assert_int_equal(a.ndim, 0);
    assert_int_equal(a.numel, 1);
    assert_true(*(double *)a.data == 2.5);
    npy_free(&a);
}

static void expect_npy_error(const char *name, const void *bytes, size_t n, const char *field)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    write_raw(path, bytes, n);
    npy_array a;
    cf_err e = {{0}};
    assert_int_equal(npy_read(path, &a, &e), CFE_INPUT);
    if (!strstr(e.msg, path) || !strstr(e.msg, field)) fail_msg("message '%s' lacks file or '%s'", e.msg, field);
}

static void malformed_npy_files_are_rejected_with_file_and_field(void **state)
{
    (void)state;
    char good[136];
    const char *dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
    size_t dl = strlen(dict), hl = 128 - 10; /* header padded to 128 bytes */
    memcpy(good, "\x93NUMPY\x01\x00", 8);
    good[8] = (char)hl;
    good[9] = 0;
    memset(good + 10, ' ', hl);
    memcpy(good + 10, dict, dl);
    good[10 + hl - 1] = '\n';
    float vals[2] = {1, 2};
    memcpy(good + 128, vals, 8);
    char path[512];
    snprintf(path, sizeof path, "%s/good.npy", tmpdir);
    write_raw(path, good, 136);
    npy_array a;
    cf_err e = {{0}};
    assert_int_equal(npy_read(path, &a, &e), CFE_OK);
    npy_free(&a);

    expect_npy_error("trunc_data.npy", good, 134, "data");       /* data cut short */
    expect_npy_error("trunc_hdr.npy", good, 40, "header");      /* header cut short */
    expect_npy_error("magic.npy", "\x93NUMPX\x01\x00\x10\x00", 10, "magic");
    char bad[136];
    memcpy(bad, good, 136);
    memcpy(bad + 10 + 11, ">f4", 3); /* big endian */
    expect_npy_error("descr.npy", bad, 136, "descr");
    memcpy(bad, good, 136);
    memcpy(bad + 10 + strlen("{'descr': '<f4', 'fortran_order': "), "True ", 5);
    expect_npy_error("fortran.npy", bad, 136, "fortran_order");
    memcpy(bad, good, 136);
    bad[10 + strlen("{'descr': '<f4', 'fortran_order': False, 'shape': (")] = 'x';
    expect_npy_error("shape.npy", bad, 136, "shape");
    memcpy(bad, good, 136);
    bad[6] = 9; /* version */
    expect_npy_error("version.npy", bad, 136, "version");
    /* a missing file */
    snprintf(path, sizeof path, "%s/none.npy", tmpdir);
    assert_int_equal(npy_read(path, &a, &e), CFE_INPUT);
}

/* Write a case.json into a fresh dir and expect reading to fail naming the field. */
static void expect_case_error(const char *json, const char *field)
{
    static int n;
    char dir[512], path[600];
    snprintf(dir, sizeof dir, "%s/case%d", tmpdir, n++);
    cf_err e = {{0}};
    assert_int_equal(cf_mkdirs(dir, &e), CFE_OK);
    snprintf(path, sizeof path, "%s/case.json", dir);
    write_raw(path, json, strlen(json));
    float x[2] = {0.5f, 0.25f};
    int64_t shape[1] = {2};
    snprintf(path, sizeof path, "%s/x.npy", dir);
    assert_int_equal(npy_write(path, "<f4", 1, shape, x, &e), CFE_OK);
    snprintf(path, sizeof path, "%s/dy.npy", dir);
    assert_int_equal(npy_write(path, "<f4", 1, shape, x, &e), CFE_OK);
    cf_case c;
    cf_expected xx;
    cf_err ce = {{0}};
    assert_int_equal(cf_case_read(dir, &c, &xx, &ce), CFE_INPUT);
    if (!strstr(ce.msg, dir) || !strstr(ce.msg, field)) fail_msg("message '%s' lacks dir or '%s'", ce.msg, field);
}

#define T_DY "\"dy\": {\"dtype\": \"f32\", \"shape\": [2], \"strides\": [1], \"offset\": 0, \"format\": \"ND\", \"storage_shape\": [2], \"file\": \"dy.npy\"}, "
#define T_OUT ", \"out\": {\"dtype\": \"f32\", \"shape\": [2], \"strides\": [1], \"offset\": 0, \"storage_shape\": [2], \"output\": true}"
#define T_OK "\"x\": {\"dtype\": \"f32\", \"shape\": [2], \"strides\": [1], \"offset\": 0, \"format\": \"ND\", \"storage_shape\": [2], \"file\": \"x.npy\"}"

static void malformed_case_json_is_rejected_with_field(void **state)
{
    (void)state;
    expect_case_error("{\"schema\": 1, \"op\": \"logit_grad\"", "not valid JSON");
    expect_case_error("{\"schema\": 2, \"op\": \"logit_grad\", \"params\": {}, \"tensors\": {}, \"expect\": {\"status\": 0}}", "schema");
    expect_case_error("{\"schema\": 1, \"op\": \"nope\", \"params\": {}, \"tensors\": {}, \"expect\": {\"status\": 0}}", "'op'");
    expect_case_error("{\"schema\": 1, \"op\": \"logit_grad\", \"tensors\": {}, \"expect\": {\"status\": 0}}", "params");
    expect_case_error("{\"schema\": 1, \"op\": \"logit_grad\", \"params\": {}, \"tensors\": {" T_DY T_OK T_OUT "}}", "expect.status");
    expect_case_error("{\"schema\": 1, \"op\": \"logit_grad\", \"params\": {}, \"tensors\": {\"x\": {\"dtype\": \"f17\", \"shape\": [2], \"strides\": [1], \"offset\": 0, \"storage_shape\": [2], \"file\": \"x.npy\"}}, \"expect\": {\"status\": 0}}", "tensors.x.dtype");
    expect_case_error("{\"schema\": 1, \"op\": \"logit_grad\", \"params\": {}, \"tensors\": {\"x\": {\"dtype\": \"f32\", \"shape\": [2], \"strides\": [1, 1], \"offset\": 0, \"storage_shape\": [2], \"file\": \"x.npy\"}}, \"expect\": {\"status\": 0}}", "tensors.x.strides");
    /* the file holds 2 elements, the manifest says 3 */
    expect_case_error("{\"schema\": 1, \"op\": \"logit_grad\", \"params\": {}, \"tensors\": {\"x\": {\"dtype\": \"f32\", \"shape\": [3], \"strides\": [1], \"offset\": 0, \"storage_shape\": [3], \"file\": \"x.npy\"}}, \"expect\": {\"status\": 0}}", "storage_shape");
    /* dtype f16 but the file is '<f4' */
    expect_case_error("{\"schema\": 1, \"op\": \"logit_grad\", \"params\": {}, \"tensors\": {\"x\": {\"dtype\": \"f16\", \"shape\": [2], \"strides\": [1], \"offset\": 0, \"storage_shape\": [2], \"file\": \"x.npy\"}}, \"expect\": {\"status\": 0}}", "tensors.x.dtype");
    expect_case_error("{\"schema\": 1, \"op\": \"logit_grad\", \"params\": {}, \"tensors\": {\"x\": {\"dtype\": \"f32\", \"shape\": [2], \"strides\": [1], \"offset\": 0, \"storage_shape\": [2], \"file\": \"../x.npy\"}}, \"expect\": {\"status\": 0}}", "tensors.x.file");
    expect_case_error("{\"schema\": 1, \"op\": \"softplus_backward\", \"params\": {\"beta\": {\"dtype\": \"f32\", \"value\": 1, \"bits\": \"1.0\"}}, \"tensors\": {}, \"expect\": {\"status\": 0}}", "params.beta.bits");
    expect_case_error("{\"schema\": 1, \"op\": \"softplus_backward\", \"params\": {\"beta\": {\"dtype\": \"i8\", \"value\": 1, \"bits\": \"0x1ff\"}}, \"tensors\": {}, \"expect\": {\"status\": 0}}", "params.beta.bits");
    /* element counts that would overflow, negative dims and offsets */
    expect_case_error("{\"schema\": 1, \"op\": \"logit_grad\", \"params\": {}, \"tensors\": {\"out\": {\"dtype\": \"f32\", \"shape\": [4294967296, 4294967296, 4], \"strides\": [1, 1, 1], \"offset\": 0, \"storage_shape\": [1], \"output\": true}}, \"expect\": {\"status\": 161002}}", "tensors.out.shape");
    expect_case_error("{\"schema\": 1, \"op\": \"logit_grad\", \"params\": {}, \"tensors\": {\"out\": {\"dtype\": \"f32\", \"shape\": [2], \"strides\": [1], \"offset\": 0, \"storage_shape\": [4294967296, 4294967296], \"output\": true}}, \"expect\": {\"status\": 161002}}", "tensors.out.storage_shape");
    expect_case_error("{\"schema\": 1, \"op\": \"logit_grad\", \"params\": {}, \"tensors\": {\"out\": {\"dtype\": \"f32\", \"shape\": [-2], \"strides\": [1], \"offset\": 0, \"storage_shape\": [2], \"output\": true}}, \"expect\": {\"status\": 161002}}", "tensors.out.shape[0]");
    expect_case_error("{\"schema\": 1, \"op\": \"logit_grad\", \"params\": {}, \"tensors\": {\"out\": {\"dtype\": \"f32\", \"shape\": [2], \"strides\": [1], \"offset\": -3, \"storage_shape\": [2], \"output\": true}}, \"expect\": {\"status\": 161002}}", "tensors.out.offset");
    /* a valid case with missing golden files */
    expect_case_error("{\"schema\": 1, \"op\": \"logit_grad\", \"params\": {\"eps\": 0.1}, \"tensors\": {" T_DY T_OK ", \"out\": {\"dtype\": \"f32\", \"shape\": [2], \"strides\": [1], \"offset\": 0, \"storage_shape\": [2], \"output\": true}}, \"expect\": {\"status\": 0}}", "expected.out.npy");
}

/* Issue 11: names read from a case are data.  A name that is not [A-Za-z0-9_]{1,23} is refused
 * on reading and on writing (nothing is created), and a case's files must resolve inside it. */
static void names_are_data_not_paths(void **state)
{
    (void)state;
    assert_true(cf_name_ok("gradOutput"));
    assert_true(cf_name_ok("x_1"));
    static const char *const bad[] = {"", "..", ".", "a/b", "../../../outside/Z", "a\\b", "a.b", "-x", "a b",
                                      "tab\t", "\x7f", "abcdefghijklmnopqrstuvwxyz", NULL};
    for (int i = 0; bad[i]; i++)
        if (cf_name_ok(bad[i])) fail_msg("name '%s' accepted", bad[i]);
    assert_false(cf_name_ok(NULL));

    /* reading: a tensor name with ../ is exit 2 naming the field, before any file is opened */
    expect_case_error("{\"schema\": 1, \"op\": \"logit_grad\", \"params\": {}, \"tensors\": {\"../../../outside/Z\": {\"dtype\": \"f32\", \"shape\": [2], \"strides\": [1], \"offset\": 0, \"storage_shape\": [2], \"file\": \"x.npy\"}}, \"expect\": {\"status\": 0}}", "'tensors'");
    expect_case_error("{\"schema\": 1, \"op\": \"logit_grad\", \"params\": {\"a/b\": 1}, \"tensors\": {}, \"expect\": {\"status\": 0}}", "'params'");

    /* writing: a case whose tensor name was forged in memory writes nothing anywhere */
    cf_case c;
    cf_expected x;
    cf_err e = {{0}};
    assert_int_equal(cf_case_read(ACLCONFORM_TEST_DATA "/examples/logit_grad/8872fe16f3f6a2fe", &c, &x, &e), CFE_OK);
    char outside[600], dir[600], corpus[600];
    snprintf(outside, sizeof outside, "%s/outside", tmpdir);
    snprintf(corpus, sizeof corpus, "%s/names_corpus", tmpdir);
    snprintf(dir, sizeof dir, "%s/a/b/c", corpus);
    snprintf(c.tensors[0].name, sizeof c.tensors[0].name, "../../../outside/Z");
    assert_int_equal(cf_case_write_dir(dir, &c, &x, "test", &e), CFE_INPUT);
    assert_non_null(strstr(e.msg, "outside/Z"));
    assert_false(cf_is_dir(outside));
    assert_false(cf_is_dir(dir));
    char path[1024];
    assert_int_equal(cf_case_write(corpus, &c, &x, "test", path, sizeof path, &e), CFE_INPUT);
    assert_false(cf_is_dir(outside));
    /* a well-named case under a corpus whose <op> directory is a symlink out of it: refused */
    snprintf(c.tensors[0].name, sizeof c.tensors[0].name, "x");
    char elsewhere[700], opdir[700];
    snprintf(elsewhere, sizeof elsewhere, "%s/elsewhere", tmpdir);
    snprintf(opdir, sizeof opdir, "%s/logit_grad", corpus);
    assert_int_equal(cf_mkdirs(elsewhere, &e), CFE_OK);
    assert_int_equal(cf_mkdirs(corpus, &e), CFE_OK);
    assert_int_equal(symlink(elsewhere, opdir), 0);
    cf_err we = {{0}};
    assert_int_equal(cf_case_write(corpus, &c, &x, "test", path, sizeof path, &we), CFE_INPUT);
    assert_non_null(strstr(we.msg, "outside the corpus"));
    char probe[900];
    snprintf(probe, sizeof probe, "rmdir '%s' 2>/dev/null", elsewhere); /* still empty: nothing was written there */
    assert_int_equal(system(probe), 0);
    unlink(opdir);
    assert_int_equal(cf_case_write(corpus, &c, &x, "test", path, sizeof path, &we), CFE_OK);
    assert_true(cf_path_inside(corpus, path));
    cf_case_free(&c);
    cf_expected_free(&x);

    /* cf_path_inside resolves symlinks: a link in the dir that points out of it is outside */
    char in[700], link[700];
    snprintf(in, sizeof in, "%s/inside", tmpdir);
    assert_int_equal(cf_mkdirs(in, &e), CFE_OK);
    assert_int_equal(cf_mkdirs(outside, &e), CFE_OK);
    snprintf(link, sizeof link, "%s/escape", in);
    assert_int_equal(symlink(outside, link), 0);
    assert_true(cf_path_inside(in, in));
    assert_false(cf_path_inside(in, link));
    assert_false(cf_path_inside(in, tmpdir));
    snprintf(link, sizeof link, "%s/../inside2", in);
    assert_false(cf_path_inside(in, link)); /* does not exist */
    snprintf(link, sizeof link, "%s2", in);  /* a sibling sharing the prefix */
    assert_int_equal(cf_mkdirs(link, &e), CFE_OK);
    assert_false(cf_path_inside(in, link));
    /* removing a tree removes a link in it, never what the link points to */
    char keep[800];
    snprintf(keep, sizeof keep, "%s/keep.txt", outside);
    write_raw(keep, "k", 1);
    cf_rmtree(in);
    assert_false(cf_is_dir(in));
    assert_true(cf_is_file(keep));
    cf_rmtree(outside);
}

/* A copy of the spec's logit_grad example with case.json replaced: read must fail naming the
 * file and the field (the example's own .npy files stay, so only the manifest is wrong). */
static void expect_example_error(const char *json, const char *field, void (*files)(const char *dir))
{
    static int n;
    char dir[600], cmd[1400], path[700];
    snprintf(dir, sizeof dir, "%s/ex%d", tmpdir, n++);
    snprintf(cmd, sizeof cmd, "cp -r '%s' '%s'", ACLCONFORM_TEST_DATA "/examples/logit_grad/8872fe16f3f6a2fe", dir);
    assert_int_equal(system(cmd), 0);
    snprintf(path, sizeof path, "%s/case.json", dir);
    if (json) write_raw(path, json, strlen(json));
    if (files) files(dir);
    cf_case c;
    cf_expected x;
    cf_err e = {{0}};
    cf_status st = cf_case_read(dir, &c, &x, &e);
    if (st != CFE_INPUT) fail_msg("'%s': status %d (%s), expected an input error", field, st, e.msg);
    if (!strstr(e.msg, dir) || !strstr(e.msg, field)) fail_msg("message '%s' lacks dir or '%s'", e.msg, field);
}

#define EX_DY "\"dy\": {\"dtype\": \"f32\", \"shape\": [4], \"strides\": [1], \"offset\": 0, \"format\": \"ND\", \"storage_shape\": [4], \"file\": \"dy.npy\"}"
#define EX_X "\"x\": {\"dtype\": \"f32\", \"shape\": [4], \"strides\": [1], \"offset\": 0, \"format\": \"ND\", \"storage_shape\": [4], \"file\": \"x.npy\"}"
#define EX_OUT "\"out\": {\"dtype\": \"f32\", \"shape\": [4], \"strides\": [1], \"offset\": 0, \"format\": \"ND\", \"storage_shape\": [4], \"output\": true}"
#define EX(params, tensors, rest) "{\"schema\": 1, \"op\": \"logit_grad\", \"profile\": \"spec\", \"params\": {" params "}, \"tensors\": {" tensors "}, \"expect\": {\"status\": 0}" rest "}"
#define EX_T EX_DY ", " EX_X ", " EX_OUT

static void dy_to_f64(const char *dir)
{
    char path[700];
    double d[4] = {0};
    int64_t shape[1] = {4};
    cf_err e = {{0}};
    snprintf(path, sizeof path, "%s/dy.npy", dir);
    assert_int_equal(npy_write(path, "<f8", 1, shape, d, &e), CFE_OK);
}

static void dy_to_2x2(const char *dir)
{
    char path[700];
    float d[4] = {0};
    int64_t shape[2] = {2, 2};
    cf_err e = {{0}};
    snprintf(path, sizeof path, "%s/dy.npy", dir);
    assert_int_equal(npy_write(path, "<f4", 2, shape, d, &e), CFE_OK);
}

/* Issue 11: every malformed manifest is an input error naming file and field, before any
 * target runs (not a ULP failure or a status mismatch). */
static void strict_manifests_name_file_and_field(void **state)
{
    (void)state;
    /* the example itself (dtype f32, shape [4]) reads: the mutations below are the only fault */
    {
        const char *ok = EX("\"eps\": 0.2", EX_T, "");
        char dir[600], cmd[1400], path[700];
        snprintf(dir, sizeof dir, "%s/ex_ok", tmpdir);
        snprintf(cmd, sizeof cmd, "cp -r '%s' '%s'", ACLCONFORM_TEST_DATA "/examples/logit_grad/8872fe16f3f6a2fe", dir);
        assert_int_equal(system(cmd), 0);
        snprintf(path, sizeof path, "%s/case.json", dir);
        write_raw(path, ok, strlen(ok));
        cf_case c;
        cf_expected x;
        cf_err e = {{0}};
        if (cf_case_read(dir, &c, &x, &e) != CFE_OK) fail_msg("base case: %s", e.msg);
        cf_case_free(&c);
        cf_expected_free(&x);
    }
    /* wrong JSON types, non-integers, out-of-range numbers */
    expect_example_error(EX("\"eps\": \"hello\"", EX_T, ""), "params.eps", NULL);
    expect_example_error(EX("\"eps\": [1, 2, 3]", EX_T, ""), "params.eps", NULL);
    expect_example_error(EX("\"eps\": true", EX_T, ""), "params.eps", NULL);
    expect_example_error("{\"schema\": 1.9, \"op\": \"logit_grad\", \"params\": {\"eps\": 0.2}, \"tensors\": {" EX_T "}, \"expect\": {\"status\": 0}}", "'schema'", NULL);
    expect_example_error("{\"schema\": 1, \"op\": \"logit_grad\", \"params\": {\"eps\": 0.2}, \"tensors\": {" EX_T "}, \"expect\": {\"status\": 0.5}}", "expect.status", NULL);
    expect_example_error("{\"schema\": 1, \"op\": \"logit_grad\", \"params\": {\"eps\": 0.2}, \"tensors\": {" EX_T "}, \"expect\": {\"status\": 4294967296}}", "expect.status", NULL);
    expect_example_error(EX("\"eps\": 0.2", EX_T, ", \"origin\": {\"index\": 1e300}"), "origin.index", NULL);
    expect_example_error(EX("\"eps\": 0.2", EX_T, ", \"note\": 5"), "'note'", NULL);
    expect_example_error(EX("\"eps\": 0.2", EX_T, ", \"origin\": {\"seed\": \"0xzz\"}"), "origin.seed", NULL);
    /* unknown fields, at every level */
    expect_example_error(EX("\"eps\": 0.2", EX_T, ", \"bogus\": 1"), "'bogus'", NULL);
    expect_example_error(EX("\"eps\": 0.2", EX_T, ", \"origin\": {\"kind\": \"fuzz\", \"targt\": {}}"), "origin.targt", NULL);
    expect_example_error(EX("\"eps\": 0.2, \"epsilon\": 0.1", EX_T, ""), "params.epsilon", NULL);
    expect_example_error(EX("\"eps\": 0.2", EX_T ", \"z\": {\"null\": true}", ""), "tensors.z", NULL);
    expect_example_error(EX("\"eps\": 0.2", EX_DY ", " EX_OUT ", \"x\": {\"dtype\": \"f32\", \"shape\": [4], \"strides\": [1], \"stride\": [1], \"offset\": 0, \"storage_shape\": [4], \"file\": \"x.npy\"}", ""), "tensors.x.stride", NULL);
    expect_example_error("{\"schema\": 1, \"op\": \"logit_grad\", \"params\": {\"eps\": 0.2}, \"tensors\": {" EX_T "}, \"expect\": {\"status\": 0, \"why\": 1}}", "expect.why", NULL);
    /* missing tensors and view/storage inconsistencies */
    expect_example_error(EX("\"eps\": 0.2", EX_DY ", " EX_X, ""), "tensors.out", NULL);
    expect_example_error(EX("\"eps\": 0.2", EX_DY ", " EX_X ", \"out\": {\"dtype\": \"f32\", \"shape\": [4], \"strides\": [1], \"offset\": 0, \"storage_shape\": [2], \"output\": true}", ""), "tensors.out.storage_shape", NULL);
    expect_example_error(EX("\"eps\": 0.2", EX_DY ", " EX_OUT ", \"x\": {\"dtype\": \"f32\", \"shape\": [4], \"strides\": [1], \"offset\": 3, \"storage_shape\": [4], \"file\": \"x.npy\"}", ""), "tensors.x.storage_shape", NULL);
    expect_example_error(EX("\"eps\": 0.2", EX_DY ", " EX_X ", \"out\": {\"dtype\": \"f32\", \"shape\": [4], \"strides\": [1], \"offset\": 0, \"storage_shape\": [8589934592], \"output\": true}", ""), "tensors.out.storage_shape", NULL);
    expect_example_error(EX("\"eps\": 0.2", EX_DY ", " EX_OUT ", \"x\": {\"dtype\": \"f32\", \"shape\": [4], \"strides\": [4611686018427387904], \"offset\": 0, \"storage_shape\": [4], \"file\": \"x.npy\"}", ""), "tensors.x.storage_shape", NULL);
    expect_example_error(EX("\"eps\": 0.2", EX_DY ", " EX_X ", \"out\": {\"dtype\": \"f32\", \"shape\": [4], \"strides\": [1], \"offset\": 0, \"storage_shape\": [4]}", ""), "tensors.out.output", NULL);
    /* the .npy disagrees with the manifest: dtype, then shape */
    expect_example_error(EX("\"eps\": 0.2", EX_T, ""), "tensors.dy.dtype", dy_to_f64);
    expect_example_error(EX("\"eps\": 0.2", EX_T, ""), "tensors.dy.storage_shape", dy_to_2x2);
    /* origin.target is typed */
    expect_example_error(EX("\"eps\": 0.2", EX_T, ", \"origin\": {\"target\": {\"path\": \"/x.so\", \"sha256\": \"zz\"}}"), "origin.target.sha256", NULL);
    expect_example_error(EX("\"eps\": 0.2", EX_T, ", \"origin\": {\"target\": {\"path\": 5}}"), "origin.target.path", NULL);
    expect_example_error(EX("\"eps\": 0.2", EX_T, ", \"origin\": {\"target\": \"/x.so\"}"), "origin.target", NULL);
    expect_example_error(EX("\"eps\": 0.2", EX_T, ", \"origin\": {\"target\": {\"path\": \"/x.so\", \"size\": 1}}"), "origin.target.size", NULL);
}

/* origin.target {path, sha256} is written when the case has a target and read back; absent or
 * null reads as no target. */
static void origin_target_round_trips(void **state)
{
    (void)state;
    cf_case c;
    cf_expected x;
    cf_err e = {{0}};
    assert_int_equal(cf_case_read(ACLCONFORM_TEST_DATA "/examples/logit_grad/8872fe16f3f6a2fe", &c, &x, &e), CFE_OK);
    assert_string_equal(c.target_path, "");
    snprintf(c.target_path, sizeof c.target_path, "/opt/vendor/libvendor.so");
    for (int i = 0; i < 64; i++) c.target_sha256[i] = "0123456789abcdef"[i % 16];
    c.target_sha256[64] = 0;
    char dir[600];
    snprintf(dir, sizeof dir, "%s/with_target", tmpdir);
    assert_int_equal(cf_case_write_dir(dir, &c, &x, "test", &e), CFE_OK);
    cf_case c2;
    cf_expected x2;
    if (cf_case_read(dir, &c2, &x2, &e) != CFE_OK) fail_msg("%s", e.msg);
    assert_string_equal(c2.target_path, "/opt/vendor/libvendor.so");
    assert_string_equal(c2.target_sha256, c.target_sha256);
    cf_case_free(&c2);
    cf_expected_free(&x2);
    /* without a target: "target": null, read back as empty */
    c.target_path[0] = c.target_sha256[0] = 0;
    snprintf(dir, sizeof dir, "%s/without_target", tmpdir);
    assert_int_equal(cf_case_write_dir(dir, &c, &x, "test", &e), CFE_OK);
    assert_int_equal(cf_case_read(dir, &c2, &x2, &e), CFE_OK);
    assert_string_equal(c2.target_path, "");
    assert_string_equal(c2.target_sha256, "");
    cf_case_free(&c2);
    cf_expected_free(&x2);
    cf_case_free(&c);
    cf_expected_free(&x);
}

static void spec_examples_are_read_exactly(void **state)
{
    (void)state;
    cf_case c;
    cf_expected x;
    cf_err e = {{0}};
    assert_int_equal(cf_case_read(ACLCONFORM_TEST_DATA "/examples/softplus_backward/5fe457886ceada4b", &c, &x, &e), CFE_OK);
    assert_int_equal(c.op, CF_OP_softplus_backward);
    const cf_param *beta = cf_case_param_c(&c, "beta"), *th = cf_case_param_c(&c, "threshold");
    assert_non_null(beta);
    assert_int_equal(beta->kind, CF_PARAM_SCALAR);
    assert_int_equal(beta->scalar_dtype, CF_I64);
    assert_true(beta->scalar_bits == 1);
    assert_int_equal(th->scalar_dtype, CF_F16);
    assert_true(th->scalar_bits == 0x4d00);
    assert_int_equal(cf_case_tensor_c(&c, "self")->dtype, CF_I32);
    assert_int_equal(cf_case_tensor_c(&c, "gradOutput")->dtype, CF_BF16);
    assert_int_equal(x.nout, 1);
    assert_int_equal(x.out[0].n, 12);
    /* ids are content hashes: writing it again gives a stable 16-hex-digit id */
    char id1[17], id2[17];
    cf_case_id(&c, id1);
    cf_case_id(&c, id2);
    assert_string_equal(id1, id2);
    assert_int_equal(strlen(id1), 16);
    /* write + read back: the same inputs, params and golden values */
    char path[1024];
    assert_int_equal(cf_case_write(tmpdir, &c, &x, "test", path, sizeof path, &e), CFE_OK);
    cf_case c2;
    cf_expected x2;
    assert_int_equal(cf_case_read(path, &c2, &x2, &e), CFE_OK);
    char id3[17];
    cf_case_id(&c2, id3);
    assert_string_equal(id1, id3);
    assert_memory_equal(x.out[0].r, x2.out[0].r, 12 * sizeof(double));
    assert_true(cf_case_param_c(&c2, "threshold")->scalar_bits == 0x4d00);
    cf_case_free(&c2);
    cf_expected_free(&x2);
    cf_case_free(&c);
    cf_expected_free(&x);

    assert_int_equal(cf_case_read(ACLCONFORM_TEST_DATA "/examples/scaled_masked_softmax_backward/f527a19e06f1f2c4", &c, &x, &e), CFE_OK);
    assert_int_equal(c.expect_status, 161001);
    assert_false(cf_case_tensor_c(&c, "mask")->present);
    assert_int_equal(x.nout, 0);
    cf_case_free(&c);
    assert_int_equal(cf_case_read(ACLCONFORM_TEST_DATA "/examples/nsa_compress_grad/51a7488a3c231b9f", &c, &x, &e), CFE_OK);
    const cf_param *a = cf_case_param_c(&c, "actSeqLen");
    assert_int_equal(a->arr_len, 4);
    assert_int_equal(a->arr[3], 120);
    assert_int_equal(x.nout, 2);
    assert_string_equal(cf_case_param_c(&c, "layout")->str, "TND");
    cf_case_free(&c);
    cf_expected_free(&x);
    assert_int_equal(cf_case_read(ACLCONFORM_TEST_DATA "/examples/logit_grad/8872fe16f3f6a2fe", &c, &x, &e), CFE_OK);
    assert_non_null(x.out[0].alt);
    assert_true(cf_case_param_c(&c, "eps")->f64 == 0.2);
    cf_case_free(&c);
    cf_expected_free(&x);
}

static void sha256_matches_known_vectors(void **state)
{
    (void)state;
    cf_sha256 s;
    uint8_t h[32];
    cf_sha256_init(&s);
    cf_sha256_update(&s, "abc", 3);
    cf_sha256_final(&s, h);
    static const uint8_t abc[8] = {0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea};
    assert_memory_equal(h, abc, 8);
    cf_sha256_init(&s);
    const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    cf_sha256_update(&s, m, strlen(m));
    cf_sha256_final(&s, h);
    static const uint8_t two[8] = {0x24, 0x8d, 0x6a, 0x61, 0xd2, 0x06, 0x38, 0xb8};
    assert_memory_equal(h, two, 8);
}

static void atomic_write_leaves_no_temporary(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/atomic.txt", tmpdir);
    cf_err e = {{0}};
    assert_int_equal(cf_write_atomic(path, "hello", 5, &e), CFE_OK);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "test -z \"$(ls '%s' | grep -F atomic.txt.tmp)\"", tmpdir); /* no temporary left */
    assert_int_equal(system(cmd), 0);
    char *d;
    size_t n;
    assert_int_equal(cf_read_file(path, &d, &n, &e), CFE_OK);
    assert_int_equal(n, 5);
    free(d);
    /* into a directory that does not exist: an error, not a crash */
    snprintf(path, sizeof path, "%s/no/such/dir/x", tmpdir);
    assert_int_equal(cf_write_atomic(path, "x", 1, &e), CFE_IO);
}

/* Issue 57: two runs in two PID namespaces (containers) with the same pid in the same second
 * wrote one report and both printed success.  Generated names carry random bits, and a generated
 * name is never replaced: the second writer is told. */
static void generated_names_never_collide_nor_replace(void **state)
{
    (void)state;
    char a[32], b[32];
    cf_unique_tag(a, sizeof a);
    cf_unique_tag(b, sizeof b);
    assert_string_not_equal(a, b); /* the same pid, the same second */
    char path[512];
    snprintf(path, sizeof path, "%s/report-%s.json", tmpdir, a);
    cf_err e = {{0}}, e2 = {{0}};
    assert_int_equal(cf_write_atomic_new(path, "first", 5, &e), CFE_OK);
    assert_int_equal(cf_write_atomic_new(path, "second", 6, &e2), CFE_IO);
    assert_non_null(strstr(e2.msg, "exists already"));
    char *d;
    size_t n;
    assert_int_equal(cf_read_file(path, &d, &n, &e), CFE_OK);
    assert_memory_equal(d, "first", 5);
    free(d);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "test -z \"$(ls '%s' | grep -F .tmp.)\"", tmpdir);
    assert_int_equal(system(cmd), 0);
}

/* Issue 57: rerun lines were not shell-quoted, so a corpus path holding $(...) ran when pasted.
 * Each word goes through the shell back to itself, and nothing runs. */
static void rerun_words_survive_the_shell(void **state)
{
    (void)state;
    static const char *const words[] = {"corpus/logit_grad/0123abcd", "a b", "x$(touch %s/ran)y", "`touch %s/ran`",
                                        "it's; touch %s/ran", "", "--target", "\\n\"q\""};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        char w[300], q[700], cmd[1200], path[512];
        snprintf(w, sizeof w, words[i], tmpdir);
        snprintf(path, sizeof path, "%s/word.txt", tmpdir);
        snprintf(cmd, sizeof cmd, "printf '%%s' %s > %s", cf_shell_quote(w, q, sizeof q), path);
        assert_int_equal(system(cmd), 0);
        char *d;
        size_t n;
        cf_err e = {{0}};
        assert_int_equal(cf_read_file(path, &d, &n, &e), CFE_OK);
        if (n != strlen(w) || memcmp(d, w, n)) fail_msg("'%s' came back as '%.*s' (quoted %s)", w, (int)n, d, q);
        free(d);
    }
    assert_string_equal(cf_shell_quote("corpus/x_1.2", (char[64]){0}, 64), "corpus/x_1.2"); /* plain words stay plain */
    char ran[512];
    snprintf(ran, sizeof ran, "%s/ran", tmpdir);
    assert_false(cf_is_file(ran));
}

/* Issue 57: kill -9 while a case was being stored left a .tmp-<id>-<pid> directory nothing
 * cleaned.  One an hour old is removed by the next write into its operator directory; a fresh one
 * (a writer still at work) stays. */
static void stale_case_temporaries_are_cleaned(void **state)
{
    (void)state;
    cf_case c;
    cf_expected x;
    cf_err e = {{0}};
    assert_int_equal(cf_case_read(ACLCONFORM_TEST_DATA "/examples/logit_grad/8872fe16f3f6a2fe", &c, &x, &e), CFE_OK);
    char corpus[600], stale[700], fresh[700], cmd[1600], path[4096];
    snprintf(corpus, sizeof corpus, "%s/tmp_corpus", tmpdir);
    snprintf(stale, sizeof stale, "%s/logit_grad/.tmp-0123456789abcdef-4242", corpus);
    snprintf(fresh, sizeof fresh, "%s/logit_grad/.tmp-fedcba9876543210-4243", corpus);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' '%s' && touch '%s/x.npy' && touch -d '2 hours ago' '%s'", stale, fresh, stale, stale);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(cf_case_write(corpus, &c, &x, "test", path, sizeof path, &e), CFE_OK);
    assert_false(cf_is_dir(stale));
    assert_true(cf_is_dir(fresh));
    cf_case_free(&c);
    cf_expected_free(&x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(npy_round_trips_every_suite_dtype),
        cmocka_unit_test(malformed_npy_files_are_rejected_with_file_and_field),
        cmocka_unit_test(malformed_case_json_is_rejected_with_field),
        cmocka_unit_test(spec_examples_are_read_exactly),
        cmocka_unit_test(names_are_data_not_paths),
        cmocka_unit_test(strict_manifests_name_file_and_field),
        cmocka_unit_test(origin_target_round_trips),
        cmocka_unit_test(sha256_matches_known_vectors),
        cmocka_unit_test(atomic_write_leaves_no_temporary),
        cmocka_unit_test(generated_names_never_collide_nor_replace),
        cmocka_unit_test(rerun_words_survive_the_shell),
        cmocka_unit_test(stale_case_temporaries_are_cleaned),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
