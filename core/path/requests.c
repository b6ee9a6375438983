/* encore: acting on what core/state/failure.c recorded, from the entry
 * points, where no lock of encore's is held: switching off after a sticky
 * error, and handing a released launch's error to the next call that
 * observes its stream. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

#include "base/guard.h"
#include "core/path/engine.h"
#include "core/state/gate.h"
#include "core/streams/streams.h"

void enc_core_act_on_requests(void) {
    if (__builtin_expect(!__atomic_load_n(&enc_hot.disable_requested, __ATOMIC_ACQUIRE), 1)) return;
    if (!__atomic_load_n(&enc_hot.active, __ATOMIC_ACQUIRE)) return;
    CUresult err;
    const char *reason = enc_disable_reason(&err);
    char why[160];
    snprintf(why, sizeof why, "a CUDA call returned CUDA error %d, after which the driver runs no more work", (int)err);
    ENC_GUARDED enc_core_disable(reason ? reason : why); /* (after a hooked call the guard is down) */
}

CUresult enc_core_take_error(CUstream stream, int per_thread, int any) {
    if (__builtin_expect(!__atomic_load_n(&enc_hot.n_pending_err, __ATOMIC_ACQUIRE), 1)) return CUDA_SUCCESS;
    if (!any) {
        enc_stream_state *st = enc_stream_for(stream, per_thread, 0);
        return st ? enc_pending_err_take(st) : CUDA_SUCCESS;
    }
    CUresult r = enc_pending_err_take_orphan();
    int n = __atomic_load_n(&enc_hot.nstates, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n && r == CUDA_SUCCESS; i++) r = enc_pending_err_take(enc_states[i]);
    return r;
}
