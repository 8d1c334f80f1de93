/* Persistent isolated workers for foreign targets.
 *
 * A worker is this executable started again (`aclnn-conform __worker LIB GUARD_PAGES PPID`): it
 * loads the target library itself and serves many cases over a socket pair — a case in, its
 * status, outputs and guard verdicts out.  Each thread that runs cases owns one worker (spawned
 * on first use with posix_spawn, which is safe beside other threads), so `--jobs J` runs J workers
 * in parallel.  The worker's stdout and stderr go to a memory file that the tool reads on a
 * failure: a target that prints never corrupts the tool's own output.
 *
 * A crash (the socket closes) or a hang (no answer within the timeout: the worker is killed) is
 * that case's failure, naming the signal and the worker's pid; the next case gets a new worker.
 * Workers die with their parent: PR_SET_PDEATHSIG (tied to the spawning thread, which lives
 * until it releases its worker) and, as a backstop, a check of getppid(). */
#ifndef ACLCONFORM_WORKER_H
#define ACLCONFORM_WORKER_H

#include "run.h"

/* Run c on t's library in this thread's worker (spawned when missing or dead). */
cf_status cf_worker_run(const cf_target *t, const cf_case *c, double timeout_s, cf_run_result *r,
                        cf_err *e);

/* Start a worker for t and wait for it to load the library: a load error or a missing symbol
 * comes back as CFE_INPUT naming it.  The worker stays as this thread's worker. */
cf_status cf_worker_probe(const cf_target *t, cf_err *e);
/* How long a worker may take to load its library (default 60 s; the commands set --timeout). */
void cf_worker_set_load_timeout(double seconds);

/* Whether the library of this thread's worker exports aclconformSetNumThreads (after a probe). */
bool cf_worker_has_threads(void);

/* Stop this thread's worker (call before a thread that ran cases exits; idempotent). */
void cf_worker_thread_release(void);

/* Kill every live worker at once (signal paths; async-signal-safe). */
void cf_worker_kill_all(void);

/* The `__worker` entry point (main.c dispatches to it). */
int cf_worker_main(int argc, char **argv);

#endif
