#include "util.h"

#include <cjson/cJSON.h>

#include <stdint.h>

#include "slurp.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

cf_status cf_fail(cf_err *e, cf_status code, const char *fmt, ...)
{
    if (e && e->msg[0] == '\0') {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->msg, sizeof e->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

uint64_t cf_random64(void)
{
    uint64_t r = 0;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        r = cf_mix64((uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 30 ^ (uint64_t)((uintptr_t)&ts >> 4) ^ (uint64_t)getpid() << 40);
    }
    return r;
}

void cf_unique_tag(char *buf, size_t n)
{
    snprintf(buf, n, "%ld-%08x", (long)getpid(), (unsigned)(uint32_t)cf_random64());
}

const char *cf_shell_quote(const char *s, char *buf, size_t n)
{
    bool plain = s[0] != '\0';
    for (const char *p = s; *p && plain; p++)
        plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || strchr("_./:=+,@%-", *p);
    if (plain) {
        snprintf(buf, n, "%s", s);
        return buf;
    }
    size_t k = 0;
    if (n < 3) return "''";
    buf[k++] = '\'';
    for (const char *p = s; *p && k + 6 < n; p++) {
        if (*p == '\'') {
            memcpy(buf + k, "'\\''", 4);
            k += 4;
        } else {
            buf[k++] = *p;
        }
    }
    buf[k++] = '\'';
    buf[k] = '\0';
    return buf;
}

static cf_status write_atomic(const char *path, const void *data, size_t len, bool replace, cf_err *e)
{
    char tmp[4096], tag[32];
    cf_unique_tag(tag, sizeof tag);
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%s", path, tag) >= (int)sizeof tmp)
        return cf_fail(e, CFE_IO, "%s: path too long", path);
    /* a fresh file: never through a symlink planted at the temporary name (a stale one of ours
     * is unlinked first; unlink removes a link, not its target) */
    unlink(tmp);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!f) {
        int err = errno;
        if (fd >= 0) close(fd);
        return cf_fail(e, CFE_IO, "%s: cannot create: %s", tmp, strerror(err));
    }
    size_t w = len ? fwrite(data, 1, len, f) : 0;
    int ok = w == len && fflush(f) == 0;
    ok = (fclose(f) == 0) && ok;
    if (!ok) {
        int err = errno;
        remove(tmp);
        return cf_fail(e, CFE_IO, "%s: write failed: %s", path, strerror(err));
    }
    int rc = replace ? rename(tmp, path) : renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE);
    if (rc != 0 && !replace && errno == EINVAL) { /* a file system without RENAME_NOREPLACE: link fails on an existing name */
        rc = link(tmp, path);
        if (rc == 0) unlink(tmp);
    }
    if (rc != 0) {
        int err = errno;
        remove(tmp);
        if (err == EEXIST) return cf_fail(e, CFE_IO, "%s: exists already (another run wrote it): not replaced", path);
        return cf_fail(e, CFE_IO, "%s: write failed: %s", path, strerror(err));
    }
    return CFE_OK;
}

cf_status cf_write_atomic(const char *path, const void *data, size_t len, cf_err *e)
{
    return write_atomic(path, data, len, true, e);
}

cf_status cf_write_atomic_new(const char *path, const void *data, size_t len, cf_err *e)
{
    return write_atomic(path, data, len, false, e);
}

cf_status cf_read_file(const char *path, char **data, size_t *len, cf_err *e)
{
    /* a regular file no larger than the allocation bound: never /dev/zero, a FIFO or a tty */
    struct stat sb;
    *data = NULL;
    *len = 0;
    if (stat(path, &sb) != 0) return cf_fail(e, CFE_INPUT, "%s: cannot open: %s", path, strerror(errno));
    if (!S_ISREG(sb.st_mode)) return cf_fail(e, CFE_INPUT, "%s: not a regular file", path);
    uint64_t max = cf_max_bytes();
    if ((uint64_t)sb.st_size > max)
        return cf_fail(e, CFE_INPUT, "%s: %lld bytes, more than the allocation bound (--max-bytes %llu)", path,
                       (long long)sb.st_size, (unsigned long long)max);
    int rc = cf_slurp(path, max > SIZE_MAX / 4 ? SIZE_MAX / 4 : (size_t)max, data, len);
    if (rc == ENOMEM) return cf_fail(e, CFE_IO, "%s: out of memory", path);
    if (rc == EFBIG) return cf_fail(e, CFE_INPUT, "%s: more than the allocation bound (--max-bytes %llu)", path, (unsigned long long)max);
    if (rc) return cf_fail(e, CFE_INPUT, "%s: cannot open: %s", path, strerror(rc));
    return CFE_OK;
}

/* The first object key given twice, anywhere in v (NULL: none). */
static const char *duplicate_key(const cJSON *v)
{
    if (!v) return NULL;
    for (const cJSON *a = v->child; a; a = a->next) {
        if (cJSON_IsObject(v) && a->string)
            for (const cJSON *b = a->next; b; b = b->next)
                if (b->string && !strcmp(a->string, b->string)) return a->string;
        const char *d = duplicate_key(a);
        if (d) return d;
    }
    return NULL;
}

cJSON *cf_json_parse_strict(const char *file, const char *text, size_t len, cf_err *e)
{
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithLengthOpts(text, len, &end, false);
    if (!j) {
        cf_fail(e, CFE_INPUT, "%s: not valid JSON", file);
        return NULL;
    }
    /* one value and nothing after it but white space; no key twice in an object (cJSON keeps
     * both, and a reader sees the first while another tool sees the last: issue 57) */
    for (const char *p = end; p && p < text + len; p++)
        if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r' && *p != '\0') {
            cJSON_Delete(j);
            cf_fail(e, CFE_INPUT, "%s: not valid JSON: text after the value (offset %ld)", file, (long)(p - text));
            return NULL;
        }
    const char *d = duplicate_key(j);
    if (d) {
        cf_fail(e, CFE_INPUT, "%s: field '%.60s': given twice", file, d);
        cJSON_Delete(j);
        return NULL;
    }
    return j;
}

cf_status cf_read_json(const char *path, cJSON **out, cf_err *e)
{
    char *text;
    size_t len;
    *out = NULL;
    cf_status st = cf_read_file(path, &text, &len, e);
    if (st) return st;
    *out = cf_json_parse_strict(path, text, len, e);
    free(text);
    return *out ? CFE_OK : CFE_INPUT;
}

cf_status cf_mkdirs(const char *path, cf_err *e)
{
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return cf_fail(e, CFE_IO, "%s: path too long", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return cf_fail(e, CFE_IO, "%s: cannot create directory: %s", buf, strerror(errno));
        *p = '/';
    }
    if (mkdir(buf, 0777) != 0 && errno != EEXIST)
        return cf_fail(e, CFE_IO, "%s: cannot create directory: %s", buf, strerror(errno));
    return CFE_OK;
}

void cf_rmtree(const char *path)
{
    DIR *d = opendir(path);
    if (d) {
        struct dirent *de;
        while ((de = readdir(d))) {
            if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
            char sub[4096];
            snprintf(sub, sizeof sub, "%s/%s", path, de->d_name);
            /* lstat: a symlink in the tree is removed, never followed (a link to a directory
             * elsewhere must not have that directory emptied) */
            struct stat sb;
            if (lstat(sub, &sb) == 0 && S_ISDIR(sb.st_mode)) cf_rmtree(sub);
            else remove(sub);
        }
        closedir(d);
    }
    rmdir(path);
}

bool cf_is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

double cf_now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

bool cf_is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

bool cf_path_inside(const char *root, const char *path)
{
    char r[PATH_MAX], p[PATH_MAX];
    if (!root || !path || !realpath(root, r) || !realpath(path, p)) return false;
    size_t n = strlen(r);
    if (n == 1 && r[0] == '/') return true;
    return strncmp(r, p, n) == 0 && (p[n] == '\0' || p[n] == '/');
}

bool cf_name_ok(const char *name)
{
    size_t n = 0;
    for (; name && name[n]; n++) {
        char ch = name[n];
        if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_')) return false;
    }
    return n > 0 && n < CF_NAME_MAX;
}

/* ---- SHA-256 (FIPS 180-4), used for content-hash case ids ---- */
static const uint32_t K256[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static uint32_t ror(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static void sha_block(cf_sha256 *s, const uint8_t *p)
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3], e = s->h[4], f = s->h[5],
             g = s->h[6], h = s->h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = h + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + K256[i] + w[i];
        uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        h = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
    }
    s->h[0] += a; s->h[1] += b; s->h[2] += c; s->h[3] += d;
    s->h[4] += e; s->h[5] += f; s->h[6] += g; s->h[7] += h;
}

void cf_sha256_init(cf_sha256 *s)
{
    static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(s->h, h0, sizeof h0);
    s->len = 0;
    s->fill = 0;
}

void cf_sha256_update(cf_sha256 *s, const void *data, size_t len)
{
    const uint8_t *p = data;
    s->len += len;
    while (len > 0) {
        size_t take = 64 - s->fill < len ? 64 - s->fill : len;
        memcpy(s->buf + s->fill, p, take);
        s->fill += take;
        p += take;
        len -= take;
        if (s->fill == 64) {
            sha_block(s, s->buf);
            s->fill = 0;
        }
    }
}

void cf_sha256_final(cf_sha256 *s, uint8_t out[32])
{
    uint64_t bits = s->len * 8;
    uint8_t pad = 0x80;
    cf_sha256_update(s, &pad, 1);
    uint8_t zero = 0;
    while (s->fill != 56) cf_sha256_update(s, &zero, 1);
    uint8_t lenbe[8];
    for (int i = 0; i < 8; i++) lenbe[i] = (uint8_t)(bits >> (56 - 8 * i));
    cf_sha256_update(s, lenbe, 8);
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (uint8_t)(s->h[i] >> 24);
        out[4 * i + 1] = (uint8_t)(s->h[i] >> 16);
        out[4 * i + 2] = (uint8_t)(s->h[i] >> 8);
        out[4 * i + 3] = (uint8_t)s->h[i];
    }
}

/* Default: a quarter of physical memory, at least 256 MiB (fits the machine; one case never
 * needs more). */
static uint64_t g_max_bytes;

void cf_set_max_bytes(uint64_t bytes) { g_max_bytes = bytes; }

uint64_t cf_max_bytes(void)
{
    if (g_max_bytes) return g_max_bytes;
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    uint64_t phys = pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz : (UINT64_C(4) << 30);
    uint64_t b = phys / 4;
    return b < (UINT64_C(256) << 20) ? (UINT64_C(256) << 20) : b;
}
