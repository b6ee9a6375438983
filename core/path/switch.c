/* encore: the program's own switch (benchmarks).
 *
 * A benchmark that alternates blocks with encore active and passing through
 * in one process cancels the process-to-process noise that decides nothing
 * at 2%. cuGetProcAddress hands it a pseudo entry point for "encoreSetActive"
 * (interpose/procaddr.c; the real driver has no such name, and encore exports
 * no new symbol), CUresult fn(int active):
 *   - off: everything held on every stream is issued (the path of a
 *     flush-everything call), then launches pass straight through and are
 *     only counted (launches_passive), as with ENCORE=0; the hooks keep
 *     following the program's lifecycle calls (captures, unloads, context
 *     resets), so what was learnt stays valid;
 *   - on: learning and replay go on from what was learnt;
 *   - 2, on for a trial block: on, with ENCORE_TRIAL's settings in place of
 *     the effective ones until the next call (a benchmark compares a setting
 *     with the defaults in one process: block letter T, tests/bench). A change
 *     of settings first issues everything held, as off does.
 * The launch path reads one flag (enc_hot.paused). A launch that finds it set
 * issues whatever another thread's launch held while it was being set
 * (sequences still open) before its own, so nothing held is overtaken. */
#define _GNU_SOURCE
#include "base/guard.h"
#include "base/log.h"
#include "core/graphs/graphs.h"
#include "core/graphs/issue.h"
#include "core/graphs/layout.h"
#include "core/graphs/nodes.h"
#include "core/graphs/store.h"
#include "core/path/engine.h"
#include "core/path/path.h"
#include "core/path/selfcheck.h"
#include "core/state/gate.h"
#include "core/streams/rest.h"
#include "core/streams/streams.h"
#include "core/observe/report.h"
#include "policy/options.h"

static int enc_trial_on; /* ENCORE_TRIAL's settings are in place */

CUresult enc_core_set_active(int active) {
    if (enc_thr.guard) return CUDA_SUCCESS;
    enc_core_ensure_init();
    __atomic_store_n(&enc_program_switched, 1, __ATOMIC_RELAXED);                 /* the switch is the program's now */
    if (!__atomic_load_n(&enc_hot.active, __ATOMIC_ACQUIRE)) return CUDA_SUCCESS; /* ENCORE=0, or switched off */
    if (__atomic_load_n(&enc_trial_on, __ATOMIC_ACQUIRE) != (active == 2) && enc_options_trial(-1) > 0) {
        ENC_GUARDED { /* held sequences were cut by the settings now in place: issued before they change */
            enc_stats_touch();
            enc_core_flush_all(ENC_FLUSH_ALL_CALL);
            enc_options_trial(active == 2);
        }
        __atomic_store_n(&enc_trial_on, active == 2, __ATOMIC_RELEASE);
        ENC_DEBUG("ENCORE_TRIAL's settings %s", active == 2 ? "in place" : "taken back");
        enc_core_act_on_requests();
    }
    enc_selfcheck_switched(); /* a check the program's switch now rules out ends */
    if (active) {
        if (__atomic_fetch_and(&enc_hot.paused, ~ENC_PAUSED_BY_PROGRAM, __ATOMIC_ACQ_REL) & ENC_PAUSED_BY_PROGRAM) {
            ENC_DEBUG("switched on by the program");
            enc_report_event_switch(1);
        }
        return CUDA_SUCCESS;
    }
    if (__atomic_fetch_or(&enc_hot.paused, ENC_PAUSED_BY_PROGRAM, __ATOMIC_ACQ_REL) & ENC_PAUSED_BY_PROGRAM)
        return CUDA_SUCCESS;
    ENC_DEBUG("switched off by the program: what is held is issued, launches pass through");
    ENC_GUARDED {
        enc_stats_touch();
        ENC_TSTAT_ADD(switched_off, 1);
        enc_core_flush_all(ENC_FLUSH_ALL_CALL);
    }
    enc_report_event_switch(0);
    enc_core_act_on_requests();
    return CUDA_SUCCESS; /* an error a released launch got stays for the next call that observes its stream */
}

void enc_core_pause_for_check(int pause) {
    if (!pause) {
        __atomic_fetch_and(&enc_hot.paused, ~ENC_PAUSED_BY_CHECK, __ATOMIC_ACQ_REL);
        return;
    }
    if (__atomic_fetch_or(&enc_hot.paused, ENC_PAUSED_BY_CHECK, __ATOMIC_ACQ_REL)) return; /* already passing through */
    enc_stats_touch();
    enc_core_flush_all(ENC_FLUSH_ALL_CALL); /* what is held goes first, as the program's switch does */
}

void enc_core_issue_held_while_off(void) {
    if (__atomic_load_n(&enc_hot.n_open, __ATOMIC_RELAXED) ||
        __atomic_load_n(&enc_hot.n_join_pending, __ATOMIC_RELAXED))
        ENC_GUARDED enc_core_flush_all(ENC_FLUSH_ALL_CALL);
}

CUresult enc_core_launch_paused(const enc_launch *l) {
    enc_core_issue_held_while_off();
    enc_stats_touch();
    ENC_TSTAT_ADD(calls[ENC_CLASS_LAUNCH], 1);
    ENC_TSTAT_ADD(launches_seen, 1);
    ENC_COUNT_EAGER(ENC_EAGER_PASSIVE, 1);
    ENC_TSTAT_ADD(launches_passive, 1);
    return enc_core_call_sampled(l); /* through encore still (audited there): the CUPTI audit counts it seen */
}
