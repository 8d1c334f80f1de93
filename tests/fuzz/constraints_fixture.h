/* The constraint files of the source tree, loaded twice for a cmocka group: through fuzz/'s
 * loader (cz[]) and as plain JSON for validator.h (js[]).  Shared by the generator tests. */
#ifndef TEST_FUZZ_CONSTRAINTS_FIXTURE_H
#define TEST_FUZZ_CONSTRAINTS_FIXTURE_H

#include <stdio.h>

#include "fuzz.h"
#include "validator.h"

#define CDIR ACLCONFORM_SOURCE_DIR "/constraints"

static cz_constraints *cz[CF_OP_COUNT];
static cJSON *js[CF_OP_COUNT];

static int setup(void **state)
{
    (void)state;
    char err[512];
    if (cz_load_dir(CDIR, cz, err, sizeof err) != FZ_OK) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    for (int o = 0; o < CF_OP_COUNT; o++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s.json", CDIR, cf_op_name((cf_op)o));
        if (!(js[o] = v_load(path))) return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    for (int o = 0; o < CF_OP_COUNT; o++) {
        cz_free(cz[o]);
        cJSON_Delete(js[o]);
    }
    return 0;
}

#endif
