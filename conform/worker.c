#include "worker.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define MAGIC_REQ UINT64_C(0x61636c6e6e726571) /* "aclnnreq" */
#define MAGIC_RES UINT64_C(0x61636c6e6e726573) /* "aclnnres" */
#define WORKER_FD 3

/* ---- the wire: fixed structs followed by the variable parts, both sides one executable ---- */

static int64_t input_bytes(const cf_tensor *t)
{
    if (!t->present || t->output || !t->data) return 0;
    return cf_tensor_storage_numel(t) * (int64_t)cf_dtype_size(t->dtype);
}

/* Move len bytes over fd (non-blocking) before the deadline (INFINITY: none).  0 on success,
 * 1 on timeout, -1 when the peer is gone. */
static int io_all(int fd, void *buf, size_t len, double deadline, bool out)
{
    uint8_t *p = buf;
    while (len) {
        ssize_t k = out ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
        if (k > 0) {
            p += k;
            len -= (size_t)k;
            continue;
        }
        if (k == 0) return -1;
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) return -1;
        double left = deadline - cf_now_s();
        if (left <= 0) return 1;
        struct pollfd pf = {fd, out ? POLLOUT : POLLIN, 0};
        int ms = isfinite(left) ? (int)(left * 1000) + 1 : 1000;
        if (poll(&pf, 1, ms) < 0 && errno != EINTR) return -1;
    }
    return 0;
}

/* ---- the worker process ------------------------------------------------------------------- */

static bool worker_read_case(int fd, cf_case *c)
{
    uint64_t magic = 0;
    memset(c, 0, sizeof *c);
    if (io_all(fd, &magic, sizeof magic, INFINITY, false) || magic != MAGIC_REQ) return false;
    if (io_all(fd, c, sizeof *c, INFINITY, false)) return false;
    for (int i = 0; i < c->ntensors; i++) {
        cf_tensor *t = &c->tensors[i];
        bool has = t->data != NULL;
        t->data = NULL;
        if (!has || !t->present || t->output) continue;
        int64_t nb = cf_tensor_storage_numel(t) * (int64_t)cf_dtype_size(t->dtype);
        t->data = malloc(nb > 0 ? (size_t)nb : 1);
        if (!t->data || io_all(fd, t->data, (size_t)nb, INFINITY, false)) return false;
    }
    for (int i = 0; i < c->nparams; i++) {
        cf_param *p = &c->params[i];
        bool has = p->arr != NULL;
        p->arr = NULL;
        if (!has) continue;
        p->arr = malloc(p->arr_len > 0 ? (size_t)p->arr_len * sizeof(int64_t) : 1);
        if (!p->arr || io_all(fd, p->arr, (size_t)p->arr_len * sizeof(int64_t), INFINITY, false)) return false;
    }
    return true;
}

static bool worker_send_result(int fd, const cf_run_result *r)
{
    uint64_t magic = MAGIC_RES;
    if (io_all(fd, &magic, sizeof magic, INFINITY, true) || io_all(fd, (void *)r, sizeof *r, INFINITY, true))
        return false;
    for (int i = 0; i < r->nout; i++) {
        size_t nb = r->out[i].bits ? (size_t)r->out[i].n * cf_dtype_size(r->out[i].dtype) : 0;
        if (nb && io_all(fd, r->out[i].bits, nb, INFINITY, true)) return false;
    }
    return true;
}

typedef struct {
    int32_t status; /* cf_status of loading the target */
    int32_t has_threads; /* the library exports aclconformSetNumThreads */
    char msg[512];
} hello_t;

static _Thread_local bool tl_has_threads;
bool cf_worker_has_threads(void) { return tl_has_threads; }

int cf_worker_main(int argc, char **argv)
{
    if (argc != 6) return CFE_INPUT;
    cf_set_max_bytes(strtoull(argv[5], NULL, 10)); /* the tool's --max-bytes (0: the default) */
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
    /* a target's own allocations are bounded (issue 57: worker memory was unbounded): what the
     * harness hands it (--max-bytes, a case's storages and workspace, twice) and 2 GiB for the
     * library itself; beyond, its allocation fails in this worker, not on the host.  Not under a
     * wrapper (qemu-user and valgrind map the guest in this process) nor a sanitizer (shadow). */
    if (!getenv("ACLCONFORM_WORKER_WRAPPER") || !getenv("ACLCONFORM_WORKER_WRAPPER")[0]) {
        uint64_t lim = 2 * cf_max_bytes() + (UINT64_C(2) << 30);
        struct rlimit rl = {(rlim_t)lim, (rlim_t)lim};
        setrlimit(RLIMIT_DATA, &rl);
    }
#endif
    pid_t parent = (pid_t)strtol(argv[4], NULL, 10);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(CFE_IO); /* the parent died before the line above */
    int fd = WORKER_FD;
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    cf_target t;
    cf_err e = {{0}};
    hello_t h = {0, 0, ""};
    h.status = (int32_t)cf_target_load(argv[2], &t, &e);
    h.has_threads = !h.status && t.has_set_threads;
    snprintf(h.msg, sizeof h.msg, "%s", e.msg);
    if (io_all(fd, &h, sizeof h, INFINITY, true) || h.status) _exit(h.status ? h.status : CFE_IO);
    t.isolate = false;
    t.guard_pages = strcmp(argv[3], "1") == 0;
    cf_run_quarantine(true); /* storages kept a while after their case: late writes (run.h) */
    for (;;) {
        cf_case c;
        if (!worker_read_case(fd, &c)) break; /* parent gone or closed: done */
        cf_run_result r;
        cf_err ee = {{0}};
        if (cf_run_here(&t, &c, &r, &ee)) snprintf(r.error, sizeof r.error, "%s", ee.msg);
        cf_run_late_check(20, &r); /* an earlier case's storage changed since: reported with this result */
        fflush(stdout);
        fflush(stderr);
        bool ok = worker_send_result(fd, &r);
        cf_run_result_free(&r);
        cf_case_free(&c);
        if (!ok) break;
    }
    _exit(0); /* no destructors of the target, no leak report of a library we do not own */
}

/* ---- the parent side ---------------------------------------------------------------------- */

typedef struct {
    pid_t pid;
    int sock;             /* our end of the socket pair (non-blocking) */
    int out;              /* the memory file holding the worker's stdout + stderr */
    const cf_target *t;
    bool guard, one_thread; /* the settings it was started with */
} wstate;

static _Thread_local wstate tl = {0, -1, -1, NULL, false, false};

/* Every live worker's pid, for cf_worker_kill_all() from a signal handler. */
#define MAX_LIVE 1024
static atomic_int g_live[MAX_LIVE];

static void live_add(pid_t pid)
{
    for (int i = 0; i < MAX_LIVE; i++) {
        int z = 0;
        if (atomic_compare_exchange_strong(&g_live[i], &z, (int)pid)) return;
    }
}

static void live_del(pid_t pid)
{
    for (int i = 0; i < MAX_LIVE; i++) {
        int p = (int)pid;
        if (atomic_compare_exchange_strong(&g_live[i], &p, 0)) return;
    }
}

void cf_worker_kill_all(void)
{
    for (int i = 0; i < MAX_LIVE; i++) {
        int p = atomic_load(&g_live[i]);
        if (p > 0) kill(-(pid_t)p, SIGKILL), kill((pid_t)p, SIGKILL); /* its process group: what the target forked */
    }
}

static void reap(wstate *w, int *wstatus)
{
    if (w->pid > 0) {
        int st = 0;
        /* the worker leads its own process group (spawn_setup): the processes a target forks are
         * in it and go with it (issue 57: 17 of them outlived a sweep) */
        kill(-w->pid, SIGKILL);
        kill(w->pid, SIGKILL);
        while (waitpid(w->pid, &st, 0) < 0 && errno == EINTR) {}
        kill(-w->pid, SIGKILL); /* one forked while it was dying */
        if (wstatus) *wstatus = st;
        live_del(w->pid);
    }
    if (w->sock >= 0) close(w->sock);
    if (w->out >= 0) close(w->out);
    *w = (wstate){0, -1, -1, NULL, false, false};
}

void cf_worker_thread_release(void) { reap(&tl, NULL); }

/* The last line the worker printed (its stdout/stderr), for a crash or timeout message. */
static void output_tail(int fd, char *buf, size_t len)
{
    buf[0] = '\0';
    off_t size = lseek(fd, 0, SEEK_END);
    if (size <= 0) return;
    char tail[512];
    off_t from = size > (off_t)sizeof tail - 1 ? size - (off_t)sizeof tail + 1 : 0;
    ssize_t k = pread(fd, tail, sizeof tail - 1, from);
    if (k <= 0) return;
    tail[k] = '\0';
    while (k > 0 && (tail[k - 1] == '\n' || tail[k - 1] == '\r')) tail[--k] = '\0';
    char *line = strrchr(tail, '\n');
    line = line ? line + 1 : tail;
    for (char *p = line; *p; p++)
        if ((unsigned char)*p < 0x20) *p = ' ';
    snprintf(buf, len, "; the target printed: \"%.160s\"", line);
}

/* The worker's file actions (stdin /dev/null, stdout and stderr into out, the socket on
 * WORKER_FD) and attributes: its own process group (a terminal's ^C goes to the tool, which
 * finishes its batch), default signal dispositions, nothing blocked. */
static void spawn_setup(posix_spawn_file_actions_t *fa, posix_spawnattr_t *at, int out, int sock)
{
    posix_spawn_file_actions_init(fa);
    posix_spawnattr_init(at);
    posix_spawn_file_actions_addopen(fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(fa, out, 1);
    posix_spawn_file_actions_adddup2(fa, out, 2);
    posix_spawn_file_actions_adddup2(fa, sock, WORKER_FD);
    sigset_t none, def;
    sigemptyset(&none);
    sigemptyset(&def);
    sigaddset(&def, SIGPIPE);
    sigaddset(&def, SIGINT);
    sigaddset(&def, SIGTERM);
    posix_spawnattr_setsigmask(at, &none);
    posix_spawnattr_setsigdefault(at, &def);
    posix_spawnattr_setpgroup(at, 0);
    posix_spawnattr_setflags(at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
}

/* With --jobs > 1 the cases are the parallelism: a worker's OpenMP team of all cores would
 * oversubscribe the machine J times, so it gets OMP_NUM_THREADS=1 (unless the user set it).
 * Returns a malloc'd environment to free, or NULL (use environ). */
static char **worker_env(const cf_target *t)
{
    if (!t->one_thread || getenv("OMP_NUM_THREADS")) return NULL;
    size_t ne = 0;
    while (environ[ne]) ne++;
    char **own = malloc((ne + 2) * sizeof *own);
    if (!own) return NULL;
    memcpy(own, environ, ne * sizeof *own);
    own[ne] = "OMP_NUM_THREADS=1";
    own[ne + 1] = NULL;
    return own;
}

/* The worker's hello (the library loaded, or why not); a worker that says nothing is reaped and
 * its last output quoted. */
static double g_load_timeout = 60;

void cf_worker_set_load_timeout(double seconds) { g_load_timeout = seconds > 0 ? seconds : 60; }

static cf_status await_hello(const cf_target *t, wstate *w, cf_err *e)
{
    hello_t h;
    int io = io_all(w->sock, &h, sizeof h, cf_now_s() + g_load_timeout, false);
    if (io == 0 && h.status == 0) {
        tl_has_threads = h.has_threads != 0;
        return CFE_OK;
    }
    char tail[256];
    output_tail(w->out, tail, sizeof tail);
    int ws = 0;
    reap(w, &ws);
    if (io == 0) {
        h.msg[sizeof h.msg - 1] = '\0';
        return cf_fail(e, (cf_status)h.status, "%s", h.msg);
    }
    if (io == 1) /* reap killed it: a constructor that never returns, not a crash */
        return cf_fail(e, CFE_INPUT, "--target %s: the library did not finish loading within %g s (a constructor that hangs?); "
                                     "the worker was killed%s", t->name, g_load_timeout, tail);
    return cf_fail(e, CFE_INPUT, "--target %s: the worker died while loading the library (%s %d)%s", t->name,
                   WIFSIGNALED(ws) ? "signal" : "exit", WIFSIGNALED(ws) ? WTERMSIG(ws) : WEXITSTATUS(ws), tail);
}

/* ACLCONFORM_WORKER_WRAPPER: a command, words separated by blanks, that each worker runs under
 * (the worker is then WRAPPER... EXE __worker ...): qemu-user for a tool built for another
 * architecture (scripts/aarch64.sh: qemu-aarch64-static -L /usr/aarch64-linux-gnu; without
 * binfmt_misc a foreign executable cannot start itself), or valgrind to watch a target library.
 * Fills words[0..] (pointing into buf) and returns their number, 0 when the variable is unset or
 * blank, -1 when it has more than max words. */
static int worker_wrapper(char *buf, size_t len, char **words, int max)
{
    const char *v = getenv("ACLCONFORM_WORKER_WRAPPER");
    if (!v) return 0;
    snprintf(buf, len, "%s", v);
    int n = 0;
    for (char *save = NULL, *w = strtok_r(buf, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
        if (n == max) return -1;
        words[n++] = w;
    }
    return n;
}

/* Whether cmd names an executable file, as posix_spawnp would find it (a name with a '/' as
 * is, else along PATH).  Checked before spawning: how a failed exec is reported back depends on
 * the libc and on qemu-user (there the child just exits 127), while a wrapper that is not there
 * is the user's mistake, named the same way everywhere. */
static bool executable(const char *cmd)
{
    if (strchr(cmd, '/')) return access(cmd, X_OK) == 0;
    const char *path = getenv("PATH");
    if (!path) path = "/bin:/usr/bin";
    for (const char *p = path;; p++) {
        const char *end = strchr(p, ':');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        char full[4096];
        if (snprintf(full, sizeof full, "%.*s/%s", (int)n, n ? p : ".", cmd) < (int)sizeof full && access(full, X_OK) == 0)
            return true;
        if (!end) return false;
        p = end;
    }
}

static cf_status spawn(const cf_target *t, wstate *w, cf_err *e)
{
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return cf_fail(e, CFE_IO, "cannot find this executable (/proc/self/exe) to start a worker");
    exe[n] = '\0';
    enum { MAXW = 16 };
    char wrap[1024], *argv[MAXW + 7];
    int nw = worker_wrapper(wrap, sizeof wrap, argv, MAXW);
    if (nw < 0) return cf_fail(e, CFE_INPUT, "ACLCONFORM_WORKER_WRAPPER: more than %d words", MAXW);
    if (nw && !executable(argv[0]))
        return cf_fail(e, CFE_IO, "cannot start a worker (%s): no such executable (ACLCONFORM_WORKER_WRAPPER)", argv[0]);
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return cf_fail(e, CFE_IO, "socketpair failed");
    int out = memfd_create("aclnn-conform-worker-output", MFD_CLOEXEC);
    if (out < 0) {
        close(sv[0]);
        close(sv[1]);
        return cf_fail(e, CFE_IO, "memfd_create failed");
    }
    fcntl(out, F_SETFL, O_APPEND);
    char ppid[32], guard[2] = {t->guard_pages ? '1' : '0', '\0'};
    snprintf(ppid, sizeof ppid, "%ld", (long)getpid());
    char maxb[32];
    snprintf(maxb, sizeof maxb, "%llu", (unsigned long long)cf_max_bytes());
    char *tail[] = {nw ? exe : "aclnn-conform", "__worker", (char *)t->name, guard, ppid, maxb, NULL};
    memcpy(argv + nw, tail, sizeof tail);
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    spawn_setup(&fa, &at, out, sv[1]);
    char **own = worker_env(t);
    pid_t pid;
    int rc = nw ? posix_spawnp(&pid, argv[0], &fa, &at, argv, own ? own : environ)
                : posix_spawn(&pid, exe, &fa, &at, argv, own ? own : environ);
    free(own);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    close(sv[1]);
    if (rc != 0) {
        close(sv[0]);
        close(out);
        return cf_fail(e, CFE_IO, "cannot start a worker (%s): %s", nw ? argv[0] : exe, strerror(rc));
    }
    live_add(pid);
    fcntl(sv[0], F_SETFL, fcntl(sv[0], F_GETFL) | O_NONBLOCK);
    *w = (wstate){pid, sv[0], out, t, t->guard_pages, t->one_thread};
    return await_hello(t, w, e);
}

static bool current(const cf_target *t)
{
    return tl.pid > 0 && tl.t == t && tl.guard == t->guard_pages && tl.one_thread == t->one_thread;
}

cf_status cf_worker_probe(const cf_target *t, cf_err *e)
{
    if (current(t)) return CFE_OK;
    reap(&tl, NULL);
    return spawn(t, &tl, e);
}

static bool send_case(int fd, const cf_case *c, double deadline, int *io)
{
    uint64_t magic = MAGIC_REQ;
    if ((*io = io_all(fd, &magic, sizeof magic, deadline, true))) return false;
    if ((*io = io_all(fd, (void *)c, sizeof *c, deadline, true))) return false;
    for (int i = 0; i < c->ntensors; i++) {
        int64_t nb = input_bytes(&c->tensors[i]);
        if (nb && (*io = io_all(fd, c->tensors[i].data, (size_t)nb, deadline, true))) return false;
    }
    for (int i = 0; i < c->nparams; i++)
        if (c->params[i].arr && c->params[i].arr_len > 0 &&
            (*io = io_all(fd, c->params[i].arr, (size_t)c->params[i].arr_len * sizeof(int64_t), deadline, true)))
            return false;
    return true;
}

/* The answer: the fixed result, then each output's bits; sizes checked against the case. */
static bool recv_result(int fd, const cf_case *c, double deadline, cf_run_result *r, int *io)
{
    uint64_t magic = 0;
    if ((*io = io_all(fd, &magic, sizeof magic, deadline, false))) return false;
    if ((*io = io_all(fd, r, sizeof *r, deadline, false))) return false;
    int nexp = 0;
    for (int i = 0; i < c->ntensors; i++) nexp += c->tensors[i].present && c->tensors[i].output;
    if (magic != MAGIC_RES || r->nout < 0 || r->nout > 2 || r->nout > nexp) {
        memset(r, 0, sizeof *r);
        *io = -2;
        return false;
    }
    int k = 0;
    for (int i = 0; i < c->ntensors && k < r->nout; i++) {
        const cf_tensor *t = &c->tensors[i];
        if (!t->present || !t->output) continue;
        cf_run_out *o = &r->out[k++];
        o->bits = NULL;
        o->name[sizeof o->name - 1] = '\0';
        o->outside[sizeof o->outside - 1] = '\0';
        if (o->n == 0 && o->dtype == t->dtype) continue; /* no values (non-zero status) */
        if (o->n != cf_tensor_numel(t) || o->dtype != t->dtype) {
            for (int j = 0; j < k - 1; j++) free(r->out[j].bits);
            r->nout = 0;
            *io = -2;
            return false;
        }
        size_t nb = (size_t)o->n * cf_dtype_size(o->dtype);
        o->bits = malloc(nb ? nb : 1);
        if (!o->bits || (*io = io_all(fd, o->bits, nb, deadline, false))) {
            r->nout = k;
            return false;
        }
    }
    r->error[sizeof r->error - 1] = '\0';
    r->modified[sizeof r->modified - 1] = '\0';
    r->ws_where[sizeof r->ws_where - 1] = '\0';
    r->late_key[sizeof r->late_key - 1] = '\0';
    r->late_line[sizeof r->late_line - 1] = '\0';
    return true;
}

cf_status cf_worker_run(const cf_target *t, const cf_case *c, double timeout_s, cf_run_result *r, cf_err *e)
{
    memset(r, 0, sizeof *r);
    if (!current(t)) {
        /* a restart (after a crash or a timeout): a library that now hangs or fails in its
         * constructor fails this case, within the load timeout, instead of stopping the tool */
        cf_err le = {{0}};
        if (cf_worker_probe(t, &le)) {
            snprintf(r->error, sizeof r->error, "the worker did not start again: %s", le.msg);
            return CFE_OK;
        }
    }
    if (lseek(tl.out, 0, SEEK_END) > (1 << 20)) ftruncate(tl.out, 0); /* a chatty target */
    double deadline = cf_now_s() + timeout_s;
    int io = 0;
    bool ok = send_case(tl.sock, c, deadline, &io) && recv_result(tl.sock, c, deadline, r, &io);
    if (ok) return CFE_OK;
    cf_run_result_free(r);
    char tail[256];
    output_tail(tl.out, tail, sizeof tail);
    pid_t pid = tl.pid;
    int ws = 0;
    reap(&tl, &ws);
    if (io == 1)
        snprintf(r->error, sizeof r->error, "target timed out after %g s (worker pid %ld killed)%s", timeout_s,
                 (long)pid, tail);
    else if (io == -2)
        snprintf(r->error, sizeof r->error, "worker pid %ld sent a malformed answer (target corrupted its memory?)%s",
                 (long)pid, tail);
    else if (WIFSIGNALED(ws) && WTERMSIG(ws) != SIGKILL)
        snprintf(r->error, sizeof r->error, "target crashed: signal %d (%s) in worker pid %ld%s%s", WTERMSIG(ws),
                 strsignal(WTERMSIG(ws)), (long)pid,
                 t->guard_pages && WTERMSIG(ws) == SIGSEGV ? " (with --guard-pages: often a write outside a storage)" : "",
                 tail);
    else /* the target called exit(), or a sanitizer in the target stopped the worker */
        snprintf(r->error, sizeof r->error, "target crashed: worker pid %ld ended with %s %d during the case%s", (long)pid,
                 WIFSIGNALED(ws) ? "signal" : "exit status", WIFSIGNALED(ws) ? WTERMSIG(ws) : WEXITSTATUS(ws), tail);
    return CFE_OK;
}
