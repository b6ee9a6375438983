/* Simulated driver: stream operations other than kernel launches as graph
 * nodes (event records and waits captured with the external flags, copies
 * and memsets), and their replay.
 *
 * Rules modelled (docs/driver-rules.md; "to verify on GPU" where marked):
 *   - cuEventRecordWithFlags(CU_EVENT_RECORD_EXTERNAL) during a capture adds
 *     an event-record node: each launch of the graph records the event (as
 *     seen by cuEventQuery/Synchronize and waits issued after the launch).
 *     Outside a capture the flag is refused (CUDA_ERROR_INVALID_VALUE, as
 *     documented).
 *   - cuStreamWaitEvent(CU_EVENT_WAIT_EXTERNAL) during a capture adds a wait
 *     node on an event outside the capture: each launch of the graph waits
 *     for the event's latest record as of the launch (the simulator makes the
 *     whole graph wait: stricter than a GPU, never looser).
 *   - An asynchronous copy with a pageable host end during a capture is
 *     captured (driver 580: sim_probe.driver580.txt, "capture: HtoDAsync from
 *     pageable"); the node reads the host memory when the graph runs, where
 *     the eager copy stages it at the call (sim_core.c copy_async): the
 *     simulator keeps that difference visible. */
#include <stdlib.h>

#include "sim_internal.h"

CUresult sim_capture_event_record_external_locked(sim_stream *s, sim_event *e) {
    sim_work w = {.kind = W_EVENT};
    w.u.ev.ev = e;
    w.u.ev.gen = 0; /* set per launch (sim_nodes_graph_launched) */
    atomic_fetch_add(&e->refs, 1);
    CUresult rc = CUDA_SUCCESS;
    sim_capture_add_locked(s, &w, &rc); /* releases w on failure */
    return rc;
}

CUresult sim_capture_wait_external_locked(sim_stream *s, sim_event *e) {
    sim_work w = {.kind = W_EVWAIT};
    w.u.ev.ev = e;
    atomic_fetch_add(&e->refs, 1);
    CUresult rc = CUDA_SUCCESS;
    sim_capture_add_locked(s, &w, &rc);
    return rc;
}

int sim_nodes_graph_waits_locked(const sim_work *works, int n, sim_dep *deps, int max) {
    int nd = 0;
    for (int i = 0; i < n && nd < max; i++) {
        if (works[i].kind != W_EVWAIT) continue;
        sim_event *e = works[i].u.ev.ev;
        pthread_mutex_lock(&e->mu);
        if (e->recorded && e->s && atomic_load(&e->s->completed) < e->seq) deps[nd++] = (sim_dep){e->s, e->seq};
        pthread_mutex_unlock(&e->mu);
    }
    return nd;
}

void sim_nodes_graph_launched_locked(sim_work *works, int n, sim_stream *s, uint64_t seq) {
    for (int i = 0; i < n; i++) {
        if (works[i].kind != W_EVENT) continue;
        sim_event *e = works[i].u.ev.ev;
        pthread_mutex_lock(&e->mu);
        works[i].u.ev.gen = ++e->gen;
        e->time_valid = false;
        sim_event_mark_recorded_locked(e, s, seq);
        pthread_mutex_unlock(&e->mu);
    }
}
