/* Harness utilities: error values with messages, atomic file writes, directories, SHA-256. */
#ifndef ACLCONFORM_UTIL_H
#define ACLCONFORM_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Harness status: also the process exit codes of cli.md. */
typedef enum {
    CFE_OK = 0,
    CFE_FAIL = 1,  /* conformance failures found */
    CFE_INPUT = 2, /* usage or input-file error */
    CFE_IO = 3     /* internal or I/O error */
} cf_status;

/* An error message buffer threaded through calls: the first error wins. */
typedef struct {
    char msg[512];
} cf_err;

/* Record "fmt..." in e (if e has no message yet) and return code. */
cf_status cf_fail(cf_err *e, cf_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Write `len` bytes to path atomically: a temporary file in the same directory (a random name),
 * then rename. */
cf_status cf_write_atomic(const char *path, const void *data, size_t len, cf_err *e);
/* The same for a name that must be new: the rename never replaces a file (RENAME_NOREPLACE);
 * an existing path is CFE_IO naming it.  For generated names, which two runs must never share. */
cf_status cf_write_atomic_new(const char *path, const void *data, size_t len, cf_err *e);
/* "<pid>-<8 random hex digits>": a tag two processes never share, even in two PID namespaces
 * (containers) where both have the same pid in the same second. */
void cf_unique_tag(char *buf, size_t n);
/* 64 random bits (getrandom; the clock, the pid and an address mixed when it has none). */
uint64_t cf_random64(void);
/* s as one shell word: unchanged when it holds only [A-Za-z0-9_./:=+,@%-], else in single quotes
 * (each ' as '\''), so that a pasted rerun line never runs what a path holds ($(...), `...`, ;). */
const char *cf_shell_quote(const char *s, char *buf, size_t n);
/* Read a whole file (NUL-terminated copy; *len excludes the NUL).  Caller frees. */
cf_status cf_read_file(const char *path, char **data, size_t *len, cf_err *e);
/* Parse JSON text strictly: one value, nothing but white space after it, no object key twice
 * (NULL with e naming file and, for a repeated key, the field).  Caller cJSON_Delete()s. */
struct cJSON *cf_json_parse_strict(const char *file, const char *text, size_t len, cf_err *e);
/* Read and parse a JSON file (strictly); errors name the file ("not valid JSON").  Caller cJSON_Delete()s. */
struct cJSON;
cf_status cf_read_json(const char *path, struct cJSON **out, cf_err *e);
/* mkdir -p */
cf_status cf_mkdirs(const char *path, cf_err *e);
/* Remove a directory tree (used to clean temporary case directories). */
void cf_rmtree(const char *path);
bool cf_is_dir(const char *path);
bool cf_is_file(const char *path);
/* Monotonic wall-clock seconds (budgets, timeouts: never CPU time). */
double cf_now_s(void);

/* Is path (after resolving every symlink, realpath(3)) root itself or inside root (resolved
 * too)?  false when either does not exist.  The case reader uses it so that a case's files stay
 * in its directory, the case writer to prove every file it wrote landed inside its directory;
 * a corpus walker can use it so that a symlink in a corpus is never followed out of it. */
bool cf_path_inside(const char *root, const char *path);
/* A name that becomes (part of) a file name: 1..CF_NAME_MAX-1 characters of [A-Za-z0-9_] —
 * no separator, no "..", no leading '-' or '.'. */
#define CF_NAME_MAX 24
bool cf_name_ok(const char *name);

typedef struct {
    uint32_t h[8];
    uint64_t len;
    uint8_t buf[64];
    size_t fill;
} cf_sha256;
void cf_sha256_init(cf_sha256 *s);
void cf_sha256_update(cf_sha256 *s, const void *data, size_t len);
void cf_sha256_final(cf_sha256 *s, uint8_t out[32]);

/* The allocation bound of every reader (case storages, .npy files, outputs, workspaces): a file
 * or manifest that asks for more is an input error naming the field (--max-bytes). */
void cf_set_max_bytes(uint64_t bytes);
uint64_t cf_max_bytes(void);

/* splitmix64 step: the mixer used to derive per-case seeds and the guard patterns (run.c). */
static inline uint64_t cf_mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

#endif
