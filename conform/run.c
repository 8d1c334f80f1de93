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

#define SENTINEL 0xA5

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
    [CF_U8] = ACL_UINT8,    [CF_BOOL] = ACL_BOOL,
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

/* The in-process run. */
static cf_status run_here(const cf_target *t, const cf_case *c, cf_run_result *r, cf_err *e)
{
    aclTensor *tensors[CF_MAX_TENSORS] = {0};
    void *params[CF_MAX_PARAMS] = {0};
    void *bufs[CF_MAX_TENSORS] = {0};
    size_t bytes[CF_MAX_TENSORS] = {0};
    void *ws_buf = NULL;
    void *dev[CF_MAX_TENSORS] = {0}; /* device copies when the target has device hooks */
    bool on_dev = t->dev_alloc != NULL;
    cf_status st = CFE_OK;
    for (int i = 0; i < c->ntensors; i++) {
        const cf_tensor *ct = &c->tensors[i];
        if (!ct->present) continue;
        int64_t sn = cf_tensor_storage_numel(ct);
        size_t es = cf_dtype_size(ct->dtype);
        if (sn < 0 || sn > (INT64_C(1) << 34)) continue; /* left NULL: the description is invalid */
        bytes[i] = (size_t)sn * es;
        bufs[i] = malloc(bytes[i] ? bytes[i] : 1);
        if (!bufs[i]) {
            st = cf_fail(e, CFE_IO, "out of memory for tensor %s", ct->name);
            goto done;
        }
        if (ct->output) memset(bufs[i], SENTINEL, bytes[i]);
        else if (ct->data) memcpy(bufs[i], ct->data, bytes[i]);
        if (on_dev && (t->dev_alloc(&dev[i], bytes[i] ? bytes[i] : 1) != 0 ||
                       t->copy_to_dev(dev[i], bufs[i], bytes[i]) != 0)) {
            snprintf(r->error, sizeof r->error, "device allocation or copy of %s failed", ct->name);
            goto done;
        }
        tensors[i] = t->create_tensor(ct->shape, (uint64_t)ct->ndim, ACL_DT[ct->dtype], ct->strides,
                                      ct->offset, format_of(ct->format), ct->storage_shape,
                                      (uint64_t)ct->storage_ndim, on_dev ? dev[i] : bufs[i]);
    }
    for (int i = 0; i < c->nparams; i++) {
        const cf_param *p = &c->params[i];
        if (p->is_null) continue;
        if (p->kind == CF_PARAM_SCALAR) {
            uint64_t b = p->scalar_bits; /* little endian: the low bytes are the value */
            params[i] = t->create_scalar(&b, ACL_DT[p->scalar_dtype]);
        } else if (p->kind == CF_PARAM_INTARRAY && p->arr) {
            params[i] = t->create_int_array(p->arr, (uint64_t)p->arr_len);
        }
    }
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    r->status = cf_adapters[c->op]->call_ws(t->get_ws[c->op], c, tensors, params, &ws, &ex);
    r->phase = 0;
    if (r->status != 0) {
        if (ex) {
            r->executor_leak_check = true;
            if (t->destroy_executor) t->destroy_executor(ex);
        }
    } else {
        if (ws > (UINT64_C(1) << 34)) {
            snprintf(r->error, sizeof r->error, "workspace of %llu bytes requested", (unsigned long long)ws);
            if (t->destroy_executor) t->destroy_executor(ex);
            goto done;
        }
        if (ws && on_dev) {
            if (t->dev_alloc(&ws_buf, ws) != 0) ws_buf = NULL;
        } else {
            ws_buf = ws ? malloc(ws) : NULL;
        }
        r->status = t->exec[c->op](ws_buf, ws, ex, NULL);
        r->phase = 1;
        if (on_dev) {
            if (t->dev_sync(NULL) != 0) snprintf(r->error, sizeof r->error, "device sync failed");
            for (int i = 0; i < c->ntensors; i++)
                if (dev[i] && c->tensors[i].output && t->copy_to_host(bufs[i], dev[i], bytes[i]) != 0)
                    snprintf(r->error, sizeof r->error, "device copy of %s failed", c->tensors[i].name);
        }
    }
    for (int i = 0; i < c->ntensors && r->status == 0; i++) {
        const cf_tensor *ct = &c->tensors[i];
        if (!ct->present || !ct->output || r->nout >= 2) continue;
        cf_run_out *o = &r->out[r->nout++];
        snprintf(o->name, sizeof o->name, "%s", ct->name);
        o->dtype = ct->dtype;
        o->n = cf_tensor_numel(ct);
        size_t es = cf_dtype_size(ct->dtype);
        o->bits = malloc((size_t)(o->n > 0 ? o->n : 1) * es);
        if (!o->bits || !bufs[i] || !view_fits(ct)) {
            st = cf_fail(e, CFE_IO, "cannot read output %s", ct->name);
            goto done;
        }
        uint8_t *touched = calloc((size_t)(bytes[i] / es) + 1, 1);
        if (!touched) {
            st = cf_fail(e, CFE_IO, "out of memory");
            goto done;
        }
        for (int64_t k = 0; k < o->n; k++) {
            int64_t off = view_offset(ct, k);
            memcpy(o->bits + (size_t)k * es, (char *)bufs[i] + (size_t)off * es, es);
            touched[off] = 1;
        }
        for (size_t b = 0; b < bytes[i]; b++)
            if (!touched[b / es] && ((uint8_t *)bufs[i])[b] != SENTINEL) {
                o->wrote_outside = true;
                break;
            }
        free(touched);
    }
done:
    if (on_dev && ws_buf) t->dev_free(ws_buf);
    else free(ws_buf);
    for (int i = 0; i < c->nparams; i++) {
        if (!params[i]) continue;
        if (c->params[i].kind == CF_PARAM_SCALAR) t->destroy_scalar(params[i]);
        else t->destroy_int_array(params[i]);
    }
    for (int i = 0; i < c->ntensors; i++) {
        if (tensors[i]) t->destroy_tensor(tensors[i]);
        if (dev[i]) t->dev_free(dev[i]);
        free(bufs[i]);
    }
    return st;
}

/* Worker: fork, run in the child, pass the result back through a shared mapping. */
static cf_status run_isolated(const cf_target *t, const cf_case *c, double timeout_s,
                              cf_run_result *r, cf_err *e)
{
    size_t cap = sizeof(cf_run_result) + 64;
    for (int i = 0; i < c->ntensors; i++)
        if (c->tensors[i].output && c->tensors[i].present)
            cap += (size_t)cf_tensor_numel(&c->tensors[i]) * cf_dtype_size(c->tensors[i].dtype) + 16;
    uint8_t *shm = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shm == MAP_FAILED) return cf_fail(e, CFE_IO, "mmap failed");
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        munmap(shm, cap);
        return cf_fail(e, CFE_IO, "fork failed");
    }
    if (pid == 0) {
        cf_run_result rr;
        memset(&rr, 0, sizeof rr);
        cf_err ee = {{0}};
        cf_status s = run_here(t, c, &rr, &ee);
        if (s) snprintf(rr.error, sizeof rr.error, "%s", ee.msg);
        uint8_t *p = shm + sizeof rr;
        for (int i = 0; i < rr.nout; i++) {
            size_t nb = (size_t)rr.out[i].n * cf_dtype_size(rr.out[i].dtype);
            memcpy(p, rr.out[i].bits, nb);
            p += nb;
        }
        memcpy(shm, &rr, sizeof rr);
        shm[cap - 1] = 1; /* completed */
        _exit(0);
    }
    int wst = 0;
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        pid_t w = waitpid(pid, &wst, WNOHANG);
        if (w == pid) break;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if ((double)(now.tv_sec - t0.tv_sec) + 1e-9 * (double)(now.tv_nsec - t0.tv_nsec) > timeout_s) {
            kill(pid, SIGKILL);
            waitpid(pid, &wst, 0);
            snprintf(r->error, sizeof r->error, "target timed out after %.0f s", timeout_s);
            munmap(shm, cap);
            return CFE_OK;
        }
        usleep(200);
    }
    if (!WIFEXITED(wst) || shm[cap - 1] != 1) {
        snprintf(r->error, sizeof r->error, "target crashed (%s %d)",
                 WIFSIGNALED(wst) ? "signal" : "exit", WIFSIGNALED(wst) ? WTERMSIG(wst) : WEXITSTATUS(wst));
        munmap(shm, cap);
        return CFE_OK;
    }
    memcpy(r, shm, sizeof *r);
    uint8_t *p = shm + sizeof *r;
    for (int i = 0; i < r->nout; i++) {
        size_t nb = (size_t)r->out[i].n * cf_dtype_size(r->out[i].dtype);
        r->out[i].bits = malloc(nb ? nb : 1);
        if (!r->out[i].bits) {
            r->nout = i;
            munmap(shm, cap);
            return cf_fail(e, CFE_IO, "out of memory");
        }
        memcpy(r->out[i].bits, p, nb);
        p += nb;
    }
    munmap(shm, cap);
    return CFE_OK;
}

cf_status cf_run_case(const cf_target *t, const cf_case *c, double timeout_s, cf_run_result *r, cf_err *e)
{
    memset(r, 0, sizeof *r);
    if (t->isolate) return run_isolated(t, c, timeout_s, r, e);
    return run_here(t, c, r, e);
}
