#include "npy.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct { cf_dtype dt; const char *descr; size_t size; } DESCRS[] = {
    {CF_F16, "<f2", 2}, {CF_BF16, "<u2", 2}, {CF_F32, "<f4", 4}, {CF_F64, "<f8", 8},
    {CF_I8, "|i1", 1},  {CF_I16, "<i2", 2},  {CF_I32, "<i4", 4}, {CF_I64, "<i8", 8},
    {CF_U8, "|u1", 1},  {CF_BOOL, "|b1", 1}, {CF_U16, "<u2", 2}, {CF_U32, "<u4", 4}, {CF_U64, "<u8", 8},
    {CF_C64, "<c8", 8}, {CF_C128, "<c16", 16},
};

const char *npy_descr_for(cf_dtype dt)
{
    for (size_t i = 0; i < sizeof DESCRS / sizeof DESCRS[0]; i++)
        if (DESCRS[i].dt == dt) return DESCRS[i].descr;
    return NULL;
}

bool npy_descr_matches(const char *descr, cf_dtype dt)
{
    const char *want = npy_descr_for(dt);
    return want && strcmp(want, descr) == 0;
}

static size_t descr_size(const char *d)
{
    for (size_t i = 0; i < sizeof DESCRS / sizeof DESCRS[0]; i++)
        if (strcmp(DESCRS[i].descr, d) == 0) return DESCRS[i].size;
    return 0;
}

/* Find 'key' in the header dict and return a pointer just past its ':' (spaces skipped). */
static const char *dict_value(const char *hdr, const char *key)
{
    char pat[32];
    snprintf(pat, sizeof pat, "'%s'", key);
    const char *p = strstr(hdr, pat);
    if (!p) return NULL;
    p += strlen(pat);
    while (*p == ' ') p++;
    if (*p != ':') return NULL;
    p++;
    while (*p == ' ') p++;
    return p;
}

/* Magic and version: where the header dict starts and how long it is, bounded by the file. */
static cf_status npy_preamble(const char *path, const unsigned char *u, size_t len, size_t *hstart, size_t *hlen,
                              cf_err *e)
{
    if (len < 10 || memcmp(u, "\x93NUMPY", 6) != 0) return cf_fail(e, CFE_INPUT, "%s: not a .npy file (magic)", path);
    if (u[6] == 1) {
        *hlen = (size_t)u[8] | (size_t)u[9] << 8;
        *hstart = 10;
    } else if ((u[6] == 2 || u[6] == 3) && len >= 12) {
        *hlen = (size_t)u[8] | (size_t)u[9] << 8 | (size_t)u[10] << 16 | (size_t)u[11] << 24;
        *hstart = 12;
    } else {
        return cf_fail(e, CFE_INPUT, "%s: version: unsupported .npy version %d.%d", path, u[6], u[7]);
    }
    if (*hlen > 65536 || *hstart + *hlen > len)
        return cf_fail(e, CFE_INPUT, "%s: header: truncated (header length %zu, file %zu bytes)", path, *hlen, len);
    return CFE_OK;
}

/* 'descr': the quoted dtype string, normalised, and its item size. */
static cf_status npy_descr(const char *path, const char *hdr, npy_array *out, cf_err *e)
{
    const char *v = dict_value(hdr, "descr");
    if (!v || *v != '\'') return cf_fail(e, CFE_INPUT, "%s: header field 'descr': missing", path);
    const char *end = strchr(v + 1, '\'');
    if (!end || end - v - 1 >= (long)sizeof out->descr)
        return cf_fail(e, CFE_INPUT, "%s: header field 'descr': malformed", path);
    memcpy(out->descr, v + 1, (size_t)(end - v - 1));
    out->descr[end - v - 1] = '\0';
    /* normalise byte-order marks of 1-byte types and '=' (native = little on our hosts) */
    if ((out->descr[0] == '<' || out->descr[0] == '=') && (out->descr[2] == '1' && out->descr[3] == '\0'))
        out->descr[0] = '|';
    if (out->descr[0] == '=') out->descr[0] = '<';
    out->itemsize = descr_size(out->descr);
    if (!out->itemsize)
        return cf_fail(e, CFE_INPUT, "%s: header field 'descr': unsupported dtype '%s' (expected one of <f2 <u2 <f4 <f8 |i1 <i2 <i4 <i8 |u1 |b1 <u4 <u8 <c8 <c16)",
                       path, out->descr);
    return CFE_OK;
}

/* 'shape': a tuple of at most NPY_MAX_DIMS dimensions whose product fits int64. */
static cf_status npy_shape(const char *path, const char *hdr, npy_array *out, cf_err *e)
{
    const char *v = dict_value(hdr, "shape");
    if (!v || *v != '(') return cf_fail(e, CFE_INPUT, "%s: header field 'shape': missing or not a tuple", path);
    v++;
    out->numel = 1;
    for (;;) {
        while (*v == ' ' || *v == ',') v++;
        if (*v == ')') return CFE_OK;
        if (!isdigit((unsigned char)*v) || out->ndim >= NPY_MAX_DIMS)
            return cf_fail(e, CFE_INPUT, "%s: header field 'shape': malformed", path);
        char *q;
        long long d = strtoll(v, &q, 10);
        if (d < 0 || __builtin_mul_overflow(out->numel, (int64_t)d, &out->numel))
            return cf_fail(e, CFE_INPUT, "%s: header field 'shape': dimension out of range", path);
        out->shape[out->ndim++] = d;
        v = q;
    }
}

/* The dict's keys, at its top level: exactly 'descr', 'fortran_order' and 'shape', each once (a
 * reader that looked its fields up passed unknown and repeated keys, issue 57). */
static cf_status npy_keys(const char *path, const char *hdr, cf_err *e)
{
    static const char *const want[] = {"descr", "fortran_order", "shape"};
    int seen[3] = {0, 0, 0}, depth = 0;
    bool key_next = false;
    for (const char *p = hdr; *p; p++) {
        if (*p == '{' || *p == '(') depth++, key_next = *p == '{' && depth == 1;
        else if (*p == '}' || *p == ')') depth--;
        else if (*p == ',' && depth == 1) key_next = true;
        else if (*p == '\'' || *p == '"') {
            const char *q = strchr(p + 1, *p);
            if (!q) return cf_fail(e, CFE_INPUT, "%s: header: an unterminated string", path);
            if (key_next && depth == 1) {
                int k = -1;
                for (int i = 0; i < 3; i++)
                    if ((size_t)(q - p - 1) == strlen(want[i]) && !strncmp(p + 1, want[i], (size_t)(q - p - 1))) k = i;
                if (k < 0) return cf_fail(e, CFE_INPUT, "%s: header field '%.*s': unknown", path, (int)(q - p - 1 > 40 ? 40 : q - p - 1), p + 1);
                if (seen[k]++) return cf_fail(e, CFE_INPUT, "%s: header field '%s': given twice", path, want[k]);
                key_next = false;
            }
            p = q;
        }
    }
    return CFE_OK;
}

/* The header dict, copied out and NUL-terminated so the field scans stop inside it. */
static cf_status npy_header_dict(const char *path, const char *raw, size_t hlen, npy_array *out, cf_err *e)
{
    char hdr[65537];
    memcpy(hdr, raw, hlen);
    hdr[hlen] = '\0';
    cf_status st = npy_keys(path, hdr, e);
    if (!st) st = npy_descr(path, hdr, out, e);
    if (st) return st;
    const char *v = dict_value(hdr, "fortran_order");
    if (!v || strncmp(v, "False", 5) != 0)
        return cf_fail(e, CFE_INPUT, "%s: header field 'fortran_order': expected False", path);
    return npy_shape(path, hdr, out, e);
}

/* The data: the shape's byte size (overflow-checked, within --max-bytes) must be exactly the
 * bytes after the header.  The parse's only allocation, made last. */
static cf_status npy_payload(const char *path, const char *data, size_t have, npy_array *out, cf_err *e)
{
    size_t need;
    if (__builtin_mul_overflow((size_t)out->numel, out->itemsize, &need) || (uint64_t)need > cf_max_bytes())
        return cf_fail(e, CFE_INPUT, "%s: header field 'shape': %lld elements of %zu bytes, more than the allocation bound (--max-bytes %llu)",
                       path, (long long)out->numel, out->itemsize, (unsigned long long)cf_max_bytes());
    if (have != need)
        return cf_fail(e, CFE_INPUT, "%s: data: %zu bytes after the header, shape needs %lld x %zu", path, have,
                       (long long)out->numel, out->itemsize);
    out->data = malloc(need ? need : 1);
    if (!out->data) return cf_fail(e, CFE_IO, "%s: out of memory", path);
    memcpy(out->data, data, need);
    return CFE_OK;
}

cf_status npy_parse(const char *path, const void *data, size_t len, npy_array *out, cf_err *e)
{
    memset(out, 0, sizeof *out);
    const char *buf = data;
    size_t hstart = 0, hlen = 0;
    cf_status st = npy_preamble(path, data, len, &hstart, &hlen, e);
    if (!st) st = npy_header_dict(path, buf + hstart, hlen, out, e);
    if (!st) st = npy_payload(path, buf + hstart + hlen, len - hstart - hlen, out, e);
    if (st) npy_free(out); /* the one exit: on error *out holds nothing */
    return st;
}

cf_status npy_read(const char *path, npy_array *out, cf_err *e)
{
    /* Bounded by the file itself: a regular file whose size (fstat) is read exactly once and
     * must equal header + data — a symlink to /dev/zero or a FIFO is refused before any read. */
    memset(out, 0, sizeof *out);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return cf_fail(e, CFE_INPUT, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    cf_status st = CFE_OK;
    char *buf = NULL;
    if (fstat(fd, &sb) != 0) st = cf_fail(e, CFE_IO, "%s: cannot stat: %s", path, strerror(errno));
    else if (!S_ISREG(sb.st_mode)) st = cf_fail(e, CFE_INPUT, "%s: not a regular file", path);
    else if ((uint64_t)sb.st_size > cf_max_bytes() + 65536 + 12)
        st = cf_fail(e, CFE_INPUT, "%s: %lld bytes, more than the allocation bound (--max-bytes %llu)", path,
                     (long long)sb.st_size, (unsigned long long)cf_max_bytes());
    size_t len = st ? 0 : (size_t)sb.st_size, got = 0;
    if (!st && !(buf = malloc(len ? len : 1))) st = cf_fail(e, CFE_IO, "%s: out of memory", path);
    while (!st && got < len) {
        ssize_t r = read(fd, buf + got, len - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) st = cf_fail(e, CFE_INPUT, "%s: data: read %zu of %zu bytes (%s)", path, got, len, r < 0 ? strerror(errno) : "file shrank");
        else got += (size_t)r;
    }
    close(fd);
    if (!st) st = npy_parse(path, buf, len, out, e);
    free(buf);
    return st;
}

cf_status npy_write(const char *path, const char *descr, int ndim, const int64_t *shape,
                    const void *data, cf_err *e)
{
    size_t item = descr_size(descr);
    if (!item) return cf_fail(e, CFE_IO, "%s: internal: unknown descr %s", path, descr);
    char dict[1024];
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    int64_t numel = 1;
    for (int k = 0; k < ndim; k++) {
        n += snprintf(dict + n, sizeof dict - (size_t)n, "%lld,%s", (long long)shape[k],
                      (ndim > 1 && k + 1 < ndim) ? " " : "");
        numel *= shape[k];
    }
    if (ndim > 1) n--; /* "(2, 3)" rather than "(2, 3,)" */
    n += snprintf(dict + n, sizeof dict - (size_t)n, "), }");
    size_t total_hdr = 10 + (size_t)n + 1;
    size_t pad = (64 - total_hdr % 64) % 64;
    size_t hlen = (size_t)n + pad + 1;
    size_t bytes = (size_t)numel * item;
    char *buf = malloc(10 + hlen + bytes);
    if (!buf) return cf_fail(e, CFE_IO, "%s: out of memory", path);
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (char)(hlen & 0xff);
    buf[9] = (char)(hlen >> 8);
    memcpy(buf + 10, dict, (size_t)n);
    memset(buf + 10 + n, ' ', pad);
    buf[10 + hlen - 1] = '\n';
    if (bytes) memcpy(buf + 10 + hlen, data, bytes);
    cf_status st = cf_write_atomic(path, buf, 10 + hlen + bytes, e);
    free(buf);
    return st;
}

void npy_free(npy_array *a)
{
    free(a->data);
    a->data = NULL;
}
