#include "run.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "adapters.h"
#include "stats.h"
#include "util.h"
#include "worker.h"

#include <stdatomic.h>

static const struct { const char *name; aclFormat f; } FMT[] = {
    {"ND", ACL_FORMAT_ND},         {"NCHW", ACL_FORMAT_NCHW},         {"NHWC", ACL_FORMAT_NHWC},
    {"NCL", ACL_FORMAT_NCL},       {"NCDHW", ACL_FORMAT_NCDHW},       {"NC1HWC0", ACL_FORMAT_NC1HWC0},
    {"FRACTAL_Z", ACL_FORMAT_FRACTAL_Z}, {"FRACTAL_NZ", ACL_FORMAT_FRACTAL_NZ},
};

static aclFormat format_of(const char *s)
{
    for (size_t i = 0; i < sizeof FMT / sizeof FMT[0]; i++)
        if (strcmp(FMT[i].name, s) == 0) return FMT[i].f;
    return ACL_FORMAT_ND;
}

static const aclDataType ACL_DT[CF_DTYPE_COUNT] = {
    [CF_F16] = ACL_FLOAT16, [CF_BF16] = ACL_BF16, [CF_F32] = ACL_FLOAT, [CF_F64] = ACL_DOUBLE,
    [CF_I8] = ACL_INT8,     [CF_I16] = ACL_INT16, [CF_I32] = ACL_INT32, [CF_I64] = ACL_INT64,
    [CF_U8] = ACL_UINT8,    [CF_BOOL] = ACL_BOOL, [CF_U16] = ACL_UINT16, [CF_U32] = ACL_UINT32,
    [CF_U64] = ACL_UINT64,  [CF_C64] = ACL_COMPLEX64, [CF_C128] = ACL_COMPLEX128,
};

/* Storage offset of view element e (row-major), or -1 if the view does not fit. */
static int64_t view_offset(const cf_tensor *t, int64_t e)
{
    int64_t off = t->offset;
    for (int k = t->ndim - 1; k >= 0; k--) {
        off += (e % t->shape[k]) * t->strides[k];
        e /= t->shape[k];
    }
    return off;
}

static bool view_fits(const cf_tensor *t)
{
    int64_t n = cf_tensor_numel(t), last = t->offset;
    if (n == 0) return true;
    for (int k = 0; k < t->ndim; k++) {
        if (t->shape[k] < 0 || t->strides[k] < 0) return false;
        last += (t->shape[k] - 1) * t->strides[k];
    }
    return t->offset >= 0 && last < cf_tensor_storage_numel(t);
}

void cf_run_result_free(cf_run_result *r)
{
    for (int i = 0; i < r->nout; i++) free(r->out[i].bits);
    memset(r, 0, sizeof *r);
}

/* ---- guarded storages ------------------------------------------------------------------------ */

#define GUARD_PAGES_BYTES ((size_t)1 << 20)

typedef struct {
    uint8_t *base;   /* start of the allocation (malloc or mmap) */
    size_t total;    /* mmap length (0: malloc) */
    uint8_t *data;   /* the storage handed to the target */
    size_t bytes;    /* storage bytes */
    uint64_t key;    /* the buffer's guard pattern */
} guarded;

/* The guard pattern: byte p (counted from the start of the leading zone) of a buffer with key k.
 * A fixed sentinel let a target tell the byte after its output (issue 57: outputs zeroed unless
 * that byte was the sentinel passed 612 of 612 cases); each buffer now gets its own random key. */
static inline uint8_t pat(uint64_t k, uint64_t p) { return (uint8_t)(cf_mix64(k ^ (p >> 3)) >> ((p & 7) * 8)); }

static uint64_t new_key(void)
{
    static _Atomic uint64_t base, count;
    uint64_t b = atomic_load(&base);
    if (!b) {
        uint64_t z = 0;
        atomic_compare_exchange_strong(&base, &z, cf_random64() | 1);
        b = atomic_load(&base);
    }
    return cf_mix64(b + atomic_fetch_add(&count, 1));
}

/* bytes [from, from + n) of the pattern, counted from the leading zone's start, at dst */
static void pat_fill(uint8_t *dst, uint64_t from, size_t n, uint64_t k)
{
    for (size_t i = 0; i < n; i++) dst[i] = pat(k, from + i);
}

/* the pattern byte expected at data[i] (i may be negative: the leading zone) */
static inline uint8_t pat_at(const guarded *g, ptrdiff_t i) { return pat(g->key, (uint64_t)(i + (ptrdiff_t)CF_GUARD_BYTES)); }

static size_t page_size(void)
{
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096;
}

/* data = bytes of storage between two sentinel zones of CF_GUARD_BYTES; with pages, the zones sit
 * between PROT_NONE regions.  The data stays 64-byte aligned either way. */
static bool guarded_alloc(guarded *g, size_t bytes, bool pages)
{
    memset(g, 0, sizeof *g);
    g->bytes = bytes;
    size_t inner = CF_GUARD_BYTES + ((bytes + 63) & ~(size_t)63) + CF_GUARD_BYTES;
    if (pages) {
        size_t ps = page_size();
        inner = (inner + ps - 1) / ps * ps;
        g->total = GUARD_PAGES_BYTES + inner + GUARD_PAGES_BYTES;
        void *m = mmap(NULL, g->total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED) return false;
        g->base = m;
        if (mprotect(g->base + GUARD_PAGES_BYTES, inner, PROT_READ | PROT_WRITE) != 0) {
            munmap(m, g->total);
            return false;
        }
        /* the storage ends as close to the trailing PROT_NONE region as 64-byte alignment allows */
        size_t start = inner - CF_GUARD_BYTES - ((bytes + 63) & ~(size_t)63);
        g->data = g->base + GUARD_PAGES_BYTES + start;
    } else {
        g->base = malloc(inner);
        if (!g->base) return false;
        g->data = g->base + CF_GUARD_BYTES;
    }
    g->key = new_key();
    /* zones and storage alike (outputs keep it outside their view; inputs are copied over it) */
    uint8_t *zone0 = g->data - CF_GUARD_BYTES;
    pat_fill(zone0, 0, CF_GUARD_BYTES + g->bytes + CF_GUARD_BYTES, g->key);
    return true;
}

static void guarded_free(guarded *g)
{
    if (!g->base) return;
    if (g->total) munmap(g->base, g->total);
    else free(g->base);
    memset(g, 0, sizeof *g);
}

/* The first changed byte of the zones around the data: false when both zones are intact; else
 * a description ("12 bytes after the end of its storage"). */
static bool guard_broken(const guarded *g, char *where, size_t wlen)
{
    for (size_t i = CF_GUARD_BYTES; i-- > 0;)
        if (g->data[-(ptrdiff_t)CF_GUARD_BYTES + (ptrdiff_t)i] != pat_at(g, -(ptrdiff_t)CF_GUARD_BYTES + (ptrdiff_t)i)) {
            snprintf(where, wlen, "%zu bytes before the start of its storage", CF_GUARD_BYTES - i);
            return true;
        }
    for (size_t i = 0; i < CF_GUARD_BYTES; i++)
        if (g->data[g->bytes + i] != pat_at(g, (ptrdiff_t)(g->bytes + i))) {
            snprintf(where, wlen, "%zu bytes after the end of its storage", i + 1);
            return true;
        }
    return false;
}

/* ---- the in-process run ---------------------------------------------------------------------- */

/* Read back output i's view and check its storage outside the view. */
static cf_status read_output(const cf_tensor *ct, const guarded *g, cf_run_out *o, cf_err *e)
{
    snprintf(o->name, sizeof o->name, "%s", ct->name);
    o->dtype = ct->dtype;
    o->n = cf_tensor_numel(ct);
    size_t es = cf_dtype_size(ct->dtype);
    o->bits = malloc((size_t)(o->n > 0 ? o->n : 1) * es);
    if (!o->bits || !g->data || !view_fits(ct)) return cf_fail(e, CFE_IO, "cannot read output %s", ct->name);
    uint8_t *touched = calloc(g->bytes / es + 1, 1);
    if (!touched) return cf_fail(e, CFE_IO, "out of memory");
    for (int64_t k = 0; k < o->n; k++) {
        int64_t off = view_offset(ct, k);
        memcpy(o->bits + (size_t)k * es, g->data + (size_t)off * es, es);
        touched[off] = 1;
    }
    for (size_t b = 0; b < g->bytes && !o->wrote_outside; b++)
        if (!touched[b / es] && g->data[b] != pat_at(g, (ptrdiff_t)b)) {
            o->wrote_outside = true;
            snprintf(o->outside, sizeof o->outside, "storage element %zu (outside the view)", b / es);
        }
    free(touched);
    if (!o->wrote_outside) o->wrote_outside = guard_broken(g, o->outside, sizeof o->outside);
    return CFE_OK;
}

/* Inputs: every byte of the storage and its zones must be as handed over. */
static void check_input(const cf_tensor *ct, const guarded *g, cf_run_result *r)
{
    if (r->modified_input) return;
    char where[96];
    if (guard_broken(g, where, sizeof where)) {
        r->modified_input = true;
        snprintf(r->modified, sizeof r->modified, "%s: %s", ct->name, where);
        return;
    }
    size_t es = cf_dtype_size(ct->dtype);
    for (size_t b = 0; ct->data && b < g->bytes; b++)
        if (g->data[b] != ((const uint8_t *)ct->data)[b]) {
            r->modified_input = true;
            snprintf(r->modified, sizeof r->modified, "%s: storage element %zu changed", ct->name, b / es);
            return;
        }
}

/* One call of a case in this process: the guarded storages (and their device copies), the
 * params and the workspace, released by run_state_free whatever happened. */
typedef struct {
    aclTensor *tensors[CF_MAX_TENSORS];
    void *params[CF_MAX_PARAMS];
    guarded buf[CF_MAX_TENSORS];
    size_t total[CF_MAX_TENSORS]; /* device copies: the whole guarded span */
    void *dev[CF_MAX_TENSORS];    /* device copies when the target has device hooks */
    void *ws_buf;     /* on the device (device hooks) */
    guarded ws;       /* on the host: between guard zones like a storage */
    bool on_dev;
} run_state;

/* What run_here does next: the following step, straight to reading the outputs, or nothing more
 * (an error is recorded in r->error or the returned status). */
typedef enum { STEP_ON, STEP_OUTPUTS, STEP_DONE } run_step;

/* Every present tensor in guarded storage (and on the device), then the params. */
static run_step stage_inputs(const cf_target *t, const cf_case *c, run_state *s, cf_run_result *r, cf_status *st, cf_err *e)
{
    for (int i = 0; i < c->ntensors; i++) {
        const cf_tensor *ct = &c->tensors[i];
        if (!ct->present) continue;
        if (ct->null_data) { /* described, with no storage: the data pointer is NULL */
            s->tensors[i] = t->create_tensor(ct->shape, (uint64_t)ct->ndim, ACL_DT[ct->dtype], ct->strides, ct->offset,
                                             format_of(ct->format), ct->storage_shape, (uint64_t)ct->storage_ndim, NULL);
            continue;
        }
        int64_t sn = cf_tensor_storage_numel(ct);
        size_t es = cf_dtype_size(ct->dtype);
        if (sn < 0 || (uint64_t)sn * es > cf_max_bytes()) continue; /* left NULL: the description is invalid */
        guarded *g = &s->buf[i];
        if (!guarded_alloc(g, (size_t)sn * es, t->guard_pages)) {
            *st = cf_fail(e, CFE_IO, "out of memory for tensor %s", ct->name);
            return STEP_DONE;
        }
        if (!ct->output && ct->data) memcpy(g->data, ct->data, g->bytes);
        s->total[i] = 2 * CF_GUARD_BYTES + g->bytes;
        if (s->on_dev && (t->dev_alloc(&s->dev[i], s->total[i]) != 0 ||
                          t->copy_to_dev(s->dev[i], g->data - CF_GUARD_BYTES, s->total[i]) != 0)) {
            snprintf(r->error, sizeof r->error, "device allocation or copy of %s failed", ct->name);
            return STEP_DONE;
        }
        s->tensors[i] = t->create_tensor(ct->shape, (uint64_t)ct->ndim, ACL_DT[ct->dtype], ct->strides, ct->offset,
                                         format_of(ct->format), ct->storage_shape, (uint64_t)ct->storage_ndim,
                                         s->on_dev ? (void *)((uint8_t *)s->dev[i] + CF_GUARD_BYTES) : (void *)g->data);
    }
    for (int i = 0; i < c->nparams; i++) {
        const cf_param *p = &c->params[i];
        if (p->is_null) continue;
        if (p->kind == CF_PARAM_SCALAR) {
            uint64_t b = p->scalar_bits; /* little endian: the low bytes are the value */
            s->params[i] = t->create_scalar(&b, ACL_DT[p->scalar_dtype]);
        } else if (p->kind == CF_PARAM_INTARRAY && p->arr) {
            s->params[i] = t->create_int_array(p->arr, (uint64_t)p->arr_len);
        }
    }
    return STEP_ON;
}

/* The short- and NULL-workspace checks after a successful first phase: execute with ws - 1 bytes
 * (or NULL) must be rejected with the executor left valid for the proper retry, which follows. */
static run_step probe_workspace(const cf_target *t, const cf_case *c, cf_protocol proto, uint64_t ws, aclOpExecutor *ex,
                                run_state *s, cf_run_result *r)
{
    if (ws == 0) { /* nothing to shorten: the check does not apply to this case */
        r->not_applicable = true;
        return STEP_ON;
    }
    if (ws > cf_max_bytes()) return STEP_ON; /* the execute step reports it */
    bool shorten = proto == CF_PROTO_SHORT_WORKSPACE;
    /* the short workspace is ws - 1 bytes between guard zones: a target that uses the planned
     * size anyway writes into the zone (before, into the heap: random aborts in later cases) */
    guarded gs = {0};
    void *shorter = NULL;
    if (shorten && !s->on_dev && guarded_alloc(&gs, (size_t)ws - 1, t->guard_pages)) shorter = gs.data;
    if (s->on_dev && shorten && t->dev_alloc(&shorter, ws) != 0) shorter = NULL;
    int32_t first = shorten && !shorter ? -1 : t->exec[c->op](shorter, shorten ? ws - 1 : ws, ex, NULL);
    if (s->on_dev && shorter) t->dev_free(shorter);
    if (gs.base && guard_broken(&gs, r->ws_where, sizeof r->ws_where)) r->ws_overrun = true;
    guarded_free(&gs);
    if (first == -1) {
        snprintf(r->error, sizeof r->error, "out of memory for a workspace of %llu bytes", (unsigned long long)ws);
        if (t->destroy_executor) t->destroy_executor(ex);
        return STEP_DONE;
    }
    if (first == 0) { /* accepted: it ran, and released the executor; nothing to retry */
        r->status = 0;
        r->phase = 1;
        return STEP_OUTPUTS;
    }
    r->protocol_status = first;
    return STEP_ON;
}

/* The second phase with a workspace of the planned size (copied back from the device), or the
 * executor released after a failed first phase. */
static run_step execute(const cf_target *t, const cf_case *c, uint64_t ws, aclOpExecutor *ex, run_state *s, cf_run_result *r)
{
    if (r->status != 0) {
        if (ex) {
            r->executor_leak_check = true;
            if (t->destroy_executor) t->destroy_executor(ex);
        }
        return STEP_ON;
    }
    if (ws > cf_max_bytes()) {
        snprintf(r->error, sizeof r->error, "workspace of %llu bytes requested (over --max-bytes %llu)", (unsigned long long)ws,
                 (unsigned long long)cf_max_bytes());
        if (t->destroy_executor) t->destroy_executor(ex);
        return STEP_DONE;
    }
    void *wsp = NULL;
    if (ws && s->on_dev) {
        if (t->dev_alloc(&s->ws_buf, ws) != 0) s->ws_buf = NULL;
        wsp = s->ws_buf;
    } else if (ws) {
        if (!guarded_alloc(&s->ws, (size_t)ws, t->guard_pages)) {
            snprintf(r->error, sizeof r->error, "out of memory for a workspace of %llu bytes", (unsigned long long)ws);
            if (t->destroy_executor) t->destroy_executor(ex);
            return STEP_DONE;
        }
        wsp = s->ws.data;
    }
    r->status = t->exec[c->op](wsp, ws, ex, NULL);
    r->phase = 1;
    if (s->ws.base && !r->ws_overrun && guard_broken(&s->ws, r->ws_where, sizeof r->ws_where)) r->ws_overrun = true;
    if (s->on_dev) {
        if (t->dev_sync(NULL) != 0) snprintf(r->error, sizeof r->error, "device sync failed");
        for (int i = 0; i < c->ntensors; i++)
            if (s->dev[i] && t->copy_to_host(s->buf[i].data - CF_GUARD_BYTES, s->dev[i], s->total[i]) != 0)
                snprintf(r->error, sizeof r->error, "device copy of %s failed", c->tensors[i].name);
    }
    return STEP_ON;
}

/* Both phases, or the protocol step the case checks. */
static run_step call_op(const cf_target *t, const cf_case *c, run_state *s, cf_run_result *r)
{
    cf_protocol proto = cf_protocol_of(c);
    if (proto == CF_PROTO_NULL_EXECUTOR) { /* execute(NULL executor) must be 161001 */
        r->status = t->exec[c->op](NULL, 0, NULL, NULL);
        r->phase = 1;
        return STEP_OUTPUTS;
    }
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    r->status = cf_adapters[c->op]->call_ws(t->get_ws[c->op], c, s->tensors, s->params, &ws, &ex);
    r->phase = 0;
    run_step k = STEP_ON;
    if (r->status == 0 && (proto == CF_PROTO_SHORT_WORKSPACE || proto == CF_PROTO_NULL_WORKSPACE))
        k = probe_workspace(t, c, proto, ws, ex, s, r);
    if (k == STEP_ON) k = execute(t, c, ws, ex, s, r);
    if (k == STEP_ON && r->protocol_status) { /* the rejection is the verdict; the retry had to succeed */
        if (r->status != 0 && !r->error[0])
            snprintf(r->error, sizeof r->error, "the retry with the planned workspace after a rejected %s returned %d (the executor must stay valid)",
                     proto == CF_PROTO_SHORT_WORKSPACE ? "short workspace" : "NULL workspace", r->status);
        r->status = r->protocol_status;
    }
    return k;
}

/* Inputs unchanged and guard zones intact, whatever the status; output values when there are any. */
static cf_status collect_outputs(const cf_case *c, const run_state *s, cf_run_result *r, cf_err *e)
{
    cf_protocol proto = cf_protocol_of(c);
    for (int i = 0; i < c->ntensors; i++)
        if (c->tensors[i].present && !c->tensors[i].output && s->buf[i].base) check_input(&c->tensors[i], &s->buf[i], r);
    for (int i = 0; i < c->ntensors; i++) {
        const cf_tensor *ct = &c->tensors[i];
        if (!ct->present || !ct->output || r->nout >= 2) continue;
        cf_run_out *o = &r->out[r->nout++];
        if (r->status != 0 || proto != CF_PROTO_NONE || ct->null_data) { /* no values to read; a write outside the storage still counts */
            snprintf(o->name, sizeof o->name, "%s", ct->name);
            o->dtype = ct->dtype;
            if (s->buf[i].base) o->wrote_outside = guard_broken(&s->buf[i], o->outside, sizeof o->outside);
            continue;
        }
        cf_status st = read_output(ct, &s->buf[i], o, e);
        if (st) return st;
    }
    return CFE_OK;
}

/* ---- late writes: the quarantine ------------------------------------------------------------ */

typedef struct {
    guarded g;
    uint8_t *copy;    /* the span's bytes (zones and storage) when the case ended */
    size_t span;
    double t0;        /* cf_now_s() then */
    double next_ms;   /* the age at which it is compared next: min_ms, then CF_LATE_MS, then x4 */
    int32_t op, dtype;
    char key[160], what[256];
} quarantined;

typedef struct {
    bool late;
    int32_t op, dtype;
    char key[160], line[480];
} late_found;

#define Q_MAX 256
#define Q_BYTES ((size_t)64 << 20)
static quarantined g_q[Q_MAX];
static int g_nq;
static size_t g_qbytes;
static bool g_quarantine;
static late_found g_pending; /* found while making room (q_keep), reported by the next check */

void cf_run_quarantine(bool on) { g_quarantine = on; }

static void q_release(int i)
{
    guarded_free(&g_q[i].g);
    free(g_q[i].copy);
    g_qbytes -= g_q[i].span;
    g_q[i] = g_q[--g_nq];
}

/* Whether entry i changed; f says where. */
static bool q_changed(int i, late_found *f)
{
    quarantined *q = &g_q[i];
    const uint8_t *now = q->g.data - CF_GUARD_BYTES;
    if (!memcmp(now, q->copy, q->span)) return false;
    size_t b = 0;
    while (b < q->span && now[b] == q->copy[b]) b++;
    long off = (long)b - (long)CF_GUARD_BYTES;
    f->late = true;
    f->op = q->op;
    f->dtype = q->dtype;
    snprintf(f->key, sizeof f->key, "%s", q->key);
    snprintf(f->line, sizeof f->line,
             "FAIL %s %s: late_write: %s changed %.0f ms or less after its execute returned (byte %ld of its storage; a thread "
             "the target left running?)", q->key, q->what, off < 0 || (size_t)off >= q->g.bytes ? "the guard zone of a storage" : "a storage",
             (cf_now_s() - q->t0) * 1e3, off);
    return true;
}

/* Release the oldest entry to make room, compared first: a change found then is kept for the
 * next cf_run_late_check (one at a time; a second one before that is not reported). */
static void q_evict_oldest(void)
{
    int old = 0;
    for (int i = 1; i < g_nq; i++)
        if (g_q[i].t0 < g_q[old].t0) old = i;
    late_found f = {0};
    if (q_changed(old, &f) && !g_pending.late) g_pending = f;
    q_release(old);
}

bool cf_run_late_check(double min_ms, cf_run_result *r)
{
    late_found f = g_pending;
    memset(&g_pending, 0, sizeof g_pending);
    double now = cf_now_s();
    for (int i = 0; i < g_nq;) {
        quarantined *q = &g_q[i];
        if (q->next_ms <= 0) q->next_ms = min_ms;
        double age = (now - q->t0) * 1e3;
        if (age < q->next_ms) {
            i++;
            continue;
        }
        q->next_ms = q->next_ms < CF_LATE_MS ? CF_LATE_MS : 4 * q->next_ms;
        if (!f.late && q_changed(i, &f)) {
            q_release(i); /* reported once */
            continue;
        }
        i++;
    }
    if (!f.late) return false;
    r->late = true;
    r->late_op = f.op;
    r->late_dtype = f.dtype;
    snprintf(r->late_key, sizeof r->late_key, "%s", f.key);
    snprintf(r->late_line, sizeof r->late_line, "%s", f.line);
    return true;
}

/* Keep storage i of case c (instead of freeing it) for the late-write check. */
static void q_keep(const cf_case *c, guarded *g, const char *name)
{
    size_t span = CF_GUARD_BYTES + g->bytes + CF_GUARD_BYTES;
    while (g_nq && (g_nq == Q_MAX || g_qbytes + span > Q_BYTES)) q_evict_oldest(); /* bounded */
    uint8_t *copy = span <= Q_BYTES ? malloc(span) : NULL;
    if (!copy) {
        guarded_free(g);
        return;
    }
    memcpy(copy, g->data - CF_GUARD_BYTES, span);
    quarantined *q = &g_q[g_nq++];
    *q = (quarantined){*g, copy, span, cf_now_s(), 0, (int32_t)c->op, -1, "", ""};
    cf_dtype dt;
    if (cf_case_out_dtype(c, &dt)) q->dtype = (int32_t)dt;
    cf_case_key(c, q->key, sizeof q->key);
    snprintf(q->what, sizeof q->what, "(case %s#%lld of seed 0x%llx, run before the case that found it): %s", cf_op_name(c->op),
             (long long)c->index, (unsigned long long)c->seed, name);
    g_qbytes += span;
    memset(g, 0, sizeof *g);
}

static void run_state_free(const cf_target *t, const cf_case *c, run_state *s)
{
    if (s->on_dev && s->ws_buf) t->dev_free(s->ws_buf);
    guarded_free(&s->ws);
    for (int i = 0; i < c->nparams; i++) {
        if (!s->params[i]) continue;
        if (c->params[i].kind == CF_PARAM_SCALAR) t->destroy_scalar(s->params[i]);
        else t->destroy_int_array(s->params[i]);
    }
    for (int i = 0; i < c->ntensors; i++) {
        if (s->tensors[i]) t->destroy_tensor(s->tensors[i]);
        if (s->dev[i]) t->dev_free(s->dev[i]);
        if (g_quarantine && s->buf[i].base && !s->on_dev) q_keep(c, &s->buf[i], c->tensors[i].name);
        else guarded_free(&s->buf[i]);
    }
}

static cf_status run_here(const cf_target *t, const cf_case *c, cf_run_result *r, cf_err *e)
{
    run_state s;
    memset(&s, 0, sizeof s);
    s.on_dev = t->dev_alloc != NULL;
    cf_status st = CFE_OK;
    run_step k = stage_inputs(t, c, &s, r, &st, e);
    if (k == STEP_ON) k = call_op(t, c, &s, r);
    if (k != STEP_DONE) st = collect_outputs(c, &s, r, e);
    run_state_free(t, c, &s);
    return st;
}

cf_protocol cf_protocol_of(const cf_case *c)
{
    if (!strcmp(c->rule, CF_PROTO_RULE_NULL_EXECUTOR)) return CF_PROTO_NULL_EXECUTOR;
    if (!strcmp(c->rule, CF_PROTO_RULE_SHORT_WORKSPACE)) return CF_PROTO_SHORT_WORKSPACE;
    if (!strcmp(c->rule, CF_PROTO_RULE_NULL_WORKSPACE)) return CF_PROTO_NULL_WORKSPACE;
    return CF_PROTO_NONE;
}

cf_status cf_run_here(const cf_target *t, const cf_case *c, cf_run_result *r, cf_err *e)
{
    memset(r, 0, sizeof *r);
    if (c->op_threads > 0 && t->set_threads) t->set_threads(c->op_threads);
    cf_status st = run_here(t, c, r, e);
    if (c->op_threads > 0 && t->set_threads) t->set_threads(t->default_threads);
    return st;
}

cf_status cf_run_case(const cf_target *t, const cf_case *c, double timeout_s, cf_run_result *r, cf_err *e)
{
    memset(r, 0, sizeof *r);
    if (t->isolate) return cf_worker_run(t, c, timeout_s, r, e);
    cf_status st = cf_run_here(t, c, r, e);
    return st;
}
