/* encore: held launches that fail when they are released.
 *
 * A held launch returned CUDA_SUCCESS at its call, as the driver would have
 * (validate.c checks what the driver checks at a launch). Released later, as
 * a graph or eagerly, the driver may still refuse it:
 *   - with a sticky error (a kernel faulted, the driver is shutting down:
 *     every later call fails with it), the program learns of it from its next
 *     call, as of any asynchronous fault, and encore switches off: it holds
 *     nothing more;
 *   - with any other error (a rule validation does not know), the next call
 *     that observes the launch's stream (a flush point on it, or a
 *     flush-everything call) returns that error instead of CUDA_SUCCESS, as
 *     CUDA calls return errors "from previous, asynchronous launches".
 * Either way every held launch after the failed one is still issued, in
 * order (the driver decides each), so nothing the program launched is
 * dropped.
 *
 * Switching off issues what every stream holds, which takes their locks: it
 * never happens where a lock of encore's may be held. The failure is
 * recorded here, at the bottom of the engine (core/state/), so that replay
 * and capture can record it; the entry points act on it when they hold none
 * (core/path/requests.c: enc_core_act_on_requests, enc_core_take_error). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

#include "base/driver.h"
#include "base/guard.h"
#include "base/log.h"
#include "core/state/gate.h"

static CUresult disable_err;    /* the first sticky error seen; atomic */
static const char *disable_why; /* or another reason (a string literal); atomic */
static CUresult orphan_err;     /* a destroyed stream's pending error; with orphan_mu */
static pthread_mutex_t orphan_mu = PTHREAD_MUTEX_INITIALIZER;

/* ---- sticky errors: switching off ---------------------------------------------------- */

void enc_request_disable(CUresult r) {
    CUresult none = CUDA_SUCCESS;
    __atomic_compare_exchange_n(&disable_err, &none, r, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    __atomic_store_n(&enc_hot.disable_requested, 1, __ATOMIC_RELEASE);
}

void enc_request_disable_why(const char *why) {
    const char *none = NULL;
    __atomic_compare_exchange_n(&disable_why, &none, why, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    __atomic_store_n(&enc_hot.disable_requested, 1, __ATOMIC_RELEASE);
}

void enc_core_note_result(CUresult r) {
    if (__builtin_expect(r != CUDA_SUCCESS, 0) && enc_error_is_sticky(r)) enc_request_disable(r);
}

const char *enc_disable_reason(CUresult *err) {
    *err = __atomic_load_n(&disable_err, __ATOMIC_RELAXED);
    return __atomic_load_n(&disable_why, __ATOMIC_RELAXED);
}

/* ---- released launches that fail --------------------------------------------------- */

void enc_note_release_failure(enc_stream_state *st, const enc_rec *rec, CUresult r) {
    st->seq.poisoned = 1; /* never learn a sequence that failed */
    if (enc_error_is_sticky(r)) {
        ENC_DEBUG("issuing a held launch of %s failed with sticky CUDA error %d", rec->L->name, (int)r);
        enc_request_disable(r);
        return;
    }
    ENC_WARN_ONCE("issuing a held launch of %s failed (CUDA error %d); the next call that observes its stream "
                  "returns that error",
                  rec->L->name, (int)r);
    if (__atomic_load_n(&st->pending_err, __ATOMIC_RELAXED) != CUDA_SUCCESS) return; /* the first one is kept */
    __atomic_store_n(&st->pending_err, r, __ATOMIC_RELAXED);
    __atomic_fetch_add(&enc_hot.n_pending_err, 1, __ATOMIC_RELEASE);
}

void enc_pending_err_orphan(enc_stream_state *st) {
    CUresult r = __atomic_load_n(&st->pending_err, __ATOMIC_RELAXED);
    if (r == CUDA_SUCCESS) return;
    __atomic_store_n(&st->pending_err, CUDA_SUCCESS, __ATOMIC_RELAXED);
    pthread_mutex_lock(&orphan_mu);
    if (orphan_err == CUDA_SUCCESS)
        orphan_err = r; /* still counted */
    else
        __atomic_fetch_sub(&enc_hot.n_pending_err, 1, __ATOMIC_RELAXED); /* one is enough to tell */
    pthread_mutex_unlock(&orphan_mu);
}

CUresult enc_pending_err_take(enc_stream_state *st) {
    if (__atomic_load_n(&st->pending_err, __ATOMIC_RELAXED) == CUDA_SUCCESS) return CUDA_SUCCESS;
    enc_mutex_lock(&st->mu);
    CUresult r = __atomic_load_n(&st->pending_err, __ATOMIC_RELAXED);
    if (r != CUDA_SUCCESS) {
        __atomic_store_n(&st->pending_err, CUDA_SUCCESS, __ATOMIC_RELAXED);
        __atomic_fetch_sub(&enc_hot.n_pending_err, 1, __ATOMIC_RELAXED);
    }
    enc_mutex_unlock(&st->mu);
    return r;
}

CUresult enc_pending_err_take_orphan(void) {
    pthread_mutex_lock(&orphan_mu);
    CUresult r = orphan_err;
    if (r != CUDA_SUCCESS) {
        orphan_err = CUDA_SUCCESS;
        __atomic_fetch_sub(&enc_hot.n_pending_err, 1, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&orphan_mu);
    return r;
}
