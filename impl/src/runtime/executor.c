/* The two-phase protocol of ops.md §0.4.
 *
 * Live-executor registry: every executor handed out is recorded until it is run or destroyed, so
 * a handle that is not live (already run, destroyed, or never created here) is refused with
 * 161002 instead of being freed twice or run after free (undefined in CANN too; issue 11).  The
 * registry is a set of addresses (open addressing, linear probing, backward-shift deletion) under
 * one mutex; lookup-and-remove is one critical section, so two threads racing to run or destroy
 * the same executor cannot both get it.  It is best effort only in one way: once an address has
 * been released, malloc may hand it to a new executor, and a stale handle then names that one. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

struct aclOpExecutor {
    acl_kernel_fn fn;
    uint64_t workspace_size;
    size_t args_size;
    max_align_t args[]; /* copy of the operator's argument block */
};

/* ---- registry of live executors ------------------------------------------------------------ */

static pthread_mutex_t g_reg_lock = PTHREAD_MUTEX_INITIALIZER;
static aclOpExecutor **g_reg;  /* capacity g_reg_cap (a power of two), NULL = empty slot */
static size_t g_reg_cap, g_reg_count;

static size_t reg_hash(const aclOpExecutor *p, size_t cap)
{
    uint64_t h = (uint64_t)(uintptr_t)p;
    h ^= h >> 33;
    h *= UINT64_C(0xff51afd7ed558ccd);
    h ^= h >> 33;
    return (size_t)h & (cap - 1);
}

/* Slot of p, or of the empty slot where it would go.  Caller holds the lock; g_reg_cap > 0. */
static size_t reg_slot(const aclOpExecutor *p)
{
    size_t i = reg_hash(p, g_reg_cap);
    while (g_reg[i] && g_reg[i] != p) i = (i + 1) & (g_reg_cap - 1);
    return i;
}

/* Caller holds the lock.  False when the table cannot grow (out of memory). */
static bool reg_insert(aclOpExecutor *p)
{
    if ((g_reg_count + 1) * 2 > g_reg_cap) { /* keep the load ≤ 1/2 */
        size_t cap = g_reg_cap ? g_reg_cap * 2 : 64;
        aclOpExecutor **t = calloc(cap, sizeof *t);
        if (!t) return false;
        aclOpExecutor **old = g_reg;
        size_t old_cap = g_reg_cap;
        g_reg = t;
        g_reg_cap = cap;
        for (size_t k = 0; k < old_cap; k++)
            if (old[k]) g_reg[reg_slot(old[k])] = old[k];
        free(old);
    }
    g_reg[reg_slot(p)] = p;
    g_reg_count++;
    return true;
}

/* Caller holds the lock. */
static bool reg_contains(const aclOpExecutor *p) { return g_reg_cap > 0 && g_reg[reg_slot(p)] == p; }

/* Caller holds the lock; p is present.  Backward-shift deletion keeps every probe chain intact. */
static void reg_remove(const aclOpExecutor *p)
{
    size_t mask = g_reg_cap - 1, i = reg_slot(p), j = i;
    g_reg[i] = NULL;
    for (;;) {
        j = (j + 1) & mask;
        if (!g_reg[j]) break;
        size_t home = reg_hash(g_reg[j], g_reg_cap);
        /* move g_reg[j] into the hole at i unless its home lies cyclically in (i, j] */
        bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!stays) {
            g_reg[i] = g_reg[j];
            g_reg[j] = NULL;
            i = j;
        }
    }
    g_reg_count--;
}

/* ---- protocol ------------------------------------------------------------------------------- */

aclnnStatus acl_executor_create(acl_kernel_fn fn, const void *args, size_t args_size,
                                uint64_t workspace_size, uint64_t *workspaceSize,
                                aclOpExecutor **executor)
{
    aclOpExecutor *ex = malloc(sizeof *ex + args_size);
    if (!ex) {
        *executor = NULL;
        return ACLNN_ERR_RUNTIME_ERROR;
    }
    ex->fn = fn;
#if ACLCONFORM_MUTANT == 50 /* workspace-protocol: plans a 256-byte workspace but execute never checks the size it is given */
    ex->workspace_size = 0; workspace_size = 256;
#else
#if ACLCONFORM_MUTANT == 51 /* (mutant 51, continued) */
    ex->workspace_size = workspace_size = 256;
#else
    ex->workspace_size = workspace_size;
#endif
#endif
    ex->args_size = args_size;
    if (args_size) memcpy(ex->args, args, args_size);
    pthread_mutex_lock(&g_reg_lock);
    bool ok = reg_insert(ex);
    pthread_mutex_unlock(&g_reg_lock);
    if (!ok) {
        free(ex);
        *executor = NULL;
        return ACLNN_ERR_RUNTIME_ERROR;
    }
    *workspaceSize = workspace_size;
    *executor = ex;
    return ACLNN_SUCCESS;
}

aclnnStatus acl_executor_run(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor)
{
#if ACLCONFORM_MUTANT == 49 /* status-code: execute with a NULL executor returns 161002 instead of 161001 */
    if (!executor) return ACLNN_ERR_PARAM_INVALID;
#else
    if (!executor) return ACLNN_ERR_PARAM_NULLPTR;
#endif
    pthread_mutex_lock(&g_reg_lock);
    if (!reg_contains(executor)) { /* run, destroyed, or never ours: never dereferenced */
        pthread_mutex_unlock(&g_reg_lock);
        return ACLNN_ERR_PARAM_INVALID;
    }
#if ACLCONFORM_MUTANT == 51 /* workspace-protocol: plans a 256-byte workspace; a rejected short workspace destroys the executor (no retry) */
    if (executor->workspace_size > 0 &&
        (workspace == NULL || workspaceSize < executor->workspace_size)) {
        reg_remove(executor);
        pthread_mutex_unlock(&g_reg_lock);
#else
    if (executor->workspace_size > 0 &&
        (workspace == NULL || workspaceSize < executor->workspace_size)) {
        pthread_mutex_unlock(&g_reg_lock);
#endif
        return ACLNN_ERR_PARAM_INVALID; /* executor stays valid for a retry */
    }
    reg_remove(executor); /* this thread owns it now */
    pthread_mutex_unlock(&g_reg_lock);
    aclnnStatus st = executor->fn(executor->args, workspace, workspaceSize);
    free(executor);
    return st;
}

aclnnStatus aclDestroyAclOpExecutor(aclOpExecutor *executor)
{
    if (!executor) return ACLNN_SUCCESS; /* abi.md: aclDestroy*(NULL) returns 0 */
    pthread_mutex_lock(&g_reg_lock);
    bool live = reg_contains(executor);
    if (live) reg_remove(executor);
    pthread_mutex_unlock(&g_reg_lock);
    if (!live) return ACLNN_ERR_PARAM_INVALID; /* destroyed twice, already run, or not ours */
    free(executor);
    return ACLNN_SUCCESS;
}
