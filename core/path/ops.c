/* encore: the path of a stream operation other than a kernel launch (an
 * event record, a wait on an event, an asynchronous copy or memset) from its
 * hook: whether it may be held (holdable), what must be issued before it
 * (order_event), and taking it into the stream's open sequence as a node
 * (take). What an op is as a node (recording, issuing, patching) is
 * core/graphs/nodes.c's; which stream holds which event, core/graphs/evtab.c's. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>

#include "base/driver.h"
#include "core/graphs/graphs.h"
#include "core/graphs/issue.h"
#include "core/graphs/layout.h"
#include "core/graphs/nodes.h"
#include "core/graphs/store.h"
#include "core/path/engine.h"
#include "core/path/path.h"
#include "core/state/gate.h"
#include "core/streams/rest.h"
#include "core/streams/streams.h"
#include "policy/options.h"

/* Could op be held at all on st (the driver entry points are there, the
 * event or memory is known)? A held op returns CUDA_SUCCESS at its call, so
 * it must be one the driver takes there: what the driver checks at the call
 * and is cheap to check is checked here (a memset's alignment to its element
 * size; the event, and device memory, of the stream's own context: the
 * driver refuses a record of another device's event); a copy's or memset's
 * extent lies inside one allocation. Anything else (another context's event
 * or memory, which the driver may or may not accept, or take into a graph)
 * is not held: issued now, it returns the driver's own result. */
static int holdable(const enc_op *op, const enc_stream_state *st) {
    int ev_ok = !enc_nodes_events_churn() && enc_opt.event_nodes; /* ENCORE_EVENT_NODES=0: records and waits end it */
    CUcontext ctx = __atomic_load_n(&st->ctx, __ATOMIC_RELAXED);
    if (!ctx) return 0; /* not known yet (asked at the stream's first call outside a capture) */
    switch (op->kind) {
    case ENC_OP_RECORD:
        return ev_ok && enc_drv.eventRecordWithFlags && op->flags == 0 && enc_evtab_event_ok(op->ev, 1, ctx);
    case ENC_OP_WAIT: return ev_ok && op->flags == 0 && enc_evtab_event_ok(op->ev, 0, ctx);
    case ENC_OP_COPY:
        return enc_drv.memcpyAsync && op->n && enc_mem_kind_in(op->dst, op->n, ctx) &&
               enc_mem_kind_in(op->src, op->n, ctx);
    case ENC_OP_SET:
        return enc_drv.memsetD32Async && op->n && (op->flags == 1 || op->flags == 2 || op->flags == 4) &&
               op->dst % op->flags == 0 && op->n <= SIZE_MAX / op->flags &&
               enc_mem_kind_in(op->dst, op->n * op->flags, ctx) == ENC_MEM_DEVICE;
    default: return 0;
    }
}

/* ---- events: who must go first ----------------------------------------------------------- */

/* Issue what `o` holds (its sequence ends: the observer is a flush point of it). */
static void flush_holder(enc_stream_state *o, CUevent ev, int wait) {
    enc_mutex_lock(&o->mu);
    if (enc_evtab_holder(ev, wait) == o) enc_sequence_end(o, ENC_FLUSH_STREAM_CALL);
    enc_mutex_unlock(&o->mu);
}

void enc_core_event_observe(CUevent ev) {
    if (!ev || !__atomic_load_n(&enc_n_ev_holders, __ATOMIC_RELAXED)) return;
    for (int wait = 0; wait < 2; wait++) {
        enc_stream_state *o = enc_evtab_holder(ev, wait);
        if (o) flush_holder(o, ev, wait);
    }
}

/* A call that may record or wait on any event (the program's graph launch:
 * its event nodes are resolved at the launch): every sequence holding a
 * record or a wait, whatever its event and stream, ends first, so that the
 * graph's waits see the records made before the launch and its records come
 * after the waits and records made before it. Nothing held: one load. */
void enc_core_event_observe_all(void) {
    if (!__atomic_load_n(&enc_n_ev_holders, __ATOMIC_RELAXED)) return;
    int n = __atomic_load_n(&enc_hot.nstates, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++) {
        enc_stream_state *o = enc_states[i];
        if (!__atomic_load_n(&o->n_held_ev, __ATOMIC_RELAXED)) continue; /* no lock taken */
        enc_mutex_lock(&o->mu);
        if (o->n_held_ev) enc_sequence_end(o, ENC_FLUSH_STREAM_CALL);
        enc_mutex_unlock(&o->mu);
    }
}

/* Before op on st: what holds the event in a way op must come after. */
static void order_event(const enc_op *op, enc_stream_state *st) {
    if (!__atomic_load_n(&enc_n_ev_holders, __ATOMIC_RELAXED)) return;
    enc_stream_state *rec = enc_evtab_holder(op->ev, 0);
    if (op->kind == ENC_OP_WAIT) { /* the record it waits for must be issued: even st's own */
        if (rec) flush_holder(rec, op->ev, 0);
        return;
    }
    /* A record: earlier waits see the earlier record. st's own held wait
     * stays: in one graph, a wait node waits for the record made before the
     * launch, not for a later record node of the same event (gpu_nodes_probe
     * rule 12, H100); NCCL records on its stream the event it just waited for. */
    enc_stream_state *w = enc_evtab_holder(op->ev, 1);
    if (w && w != st) flush_holder(w, op->ev, 1);
    if (rec && rec != st) flush_holder(rec, op->ev, 0);
}

/* ---- taking an op into the sequence --------------------------------------------------------- */

static int note_event(enc_stream_state *st, const enc_op *op) {
    if (!enc_op_is_event(op->kind)) return 1;
    return enc_evtab_hold(st, op->ev, op->kind == ENC_OP_WAIT);
}

/* The pending op was held (2), or goes to the driver now, part of the sequence (1). With st->mu held. */
static int hold_or_pass(enc_stream_state *st, const enc_op *op) {
    enc_rec *r = &st->seq.recs[st->seq.n];
    int noted = note_event(st, op); /* held or not: an observer of the event ends the sequence (a cut point) */
    if (st->held) {
        uint32_t c = enc_store_child(&st->store, st->node, r->sfp);
        if (c != ENC_NO_NODE && noted) {
            st->node = c;
            enc_record_commit(&st->seq);
            if (enc_sequence_graph_end_due(st, c)) enc_sequence_end_at_graph_end(st);
            return 2;
        }
        enc_release_on_divergence(st, r->f, r->L, c == ENC_NO_NODE);
    } else if (noted && st->seq.n == 0 && st->store.ngraphs && enc_launch_start_holding(st)) {
        return 2;
    }
    enc_record_commit(&st->seq);
    return 1;
}

static int take(enc_stream_state *st, const enc_op *op) {
    if (__atomic_load_n(&enc_hot.prog_capturing, __ATOMIC_RELAXED) > 0) return 0;
    /* A stream's ops count in its rest windows and rests as its launches do (rest.c): a stream
     * of event records, waits and copies alone (JAX op by op's second stream) ended no window,
     * so it never rested and its ops were recorded for ever, each sequence too short to capture
     * (2026-11-27: JAX op by op 2% slower active than passing through). */
    if (enc_rest_take(st)) return 0;
    if (enc_rest_note_work(st, 1)) return 0;
    if (__builtin_expect(st->attr_gen != __atomic_load_n(&enc_hot.attr_gen, __ATOMIC_RELAXED), 0))
        enc_stream_check_attrs(st);
    if (st->attrs_differ || (st->sparse && !st->held)) return 0;
    void *params[1] = {(void *)op};
    enc_launch l = {.shape = ENC_SHAPE_LK, .f = ENC_OP_FUNC(op->kind), .params = params};
    /* A copy's direction (the kinds of memory at its ends) is part of its
     * structure: a copy node's memory types cannot be patched
     * (cuGraphExecMemcpyNodeSetParams), and a server's copy of an answer back to
     * the host must not look like the start of the next request, its copy in:
     * on the H200's changing-batch server, holds that ended without a graph
     * before their sequence was complete fell from about 570 a process to 171
     * (docs/bench/2026-11-27-h200-patch-cost.md, call 24). */
    if (op->kind == ENC_OP_COPY) {
        l.block[0] = (unsigned)enc_mem_kind(op->src, op->n);
        l.block[1] = (unsigned)enc_mem_kind(op->dst, op->n);
    }
    const enc_layout *L = enc_op_layout(l.f);
    if (__builtin_expect(st->early_node != 0, 0)) enc_graph_end_work(st); /* no call since a replay at its end */
    if (!L || !enc_sequence_record(st, &l, L)) return 0;
    int r = hold_or_pass(st, op);
    if (st->seq.n >= (uint32_t)enc_opt.max_sequence) enc_sequence_end(st, ENC_FLUSH_SEQUENCE_FULL);
    return r;
}

int enc_core_op(const enc_op *op, CUstream stream, int per_thread) {
    /* Switched off (the program's switch, a self-check's passive block, a check that stepped
     * aside): the op passes through as a launch does then (switch.c), after what is still
     * held, and is neither recorded nor held. Recording and holding it, as before 2026-11-27,
     * cost the passive blocks a hold and a flush at each memset, copy and event op: the
     * benchmarks' passive baseline ran slower than eager, and a check that stepped aside still
     * held the program's ops. */
    if (__builtin_expect(__atomic_load_n(&enc_hot.paused, __ATOMIC_RELAXED), 0)) {
        enc_core_issue_held_while_off();
        return 0;
    }
    enc_stream_state *st = enc_stream_for(stream, per_thread, 1);
    if (enc_op_is_event(op->kind)) order_event(op, st);
    if (!st || !holdable(op, st)) return 0;
    enc_launch_legacy_order(st);
    enc_mutex_lock(&st->mu);
    enc_stream_join_side(st);
    int r = take(st, op);
    enc_mutex_unlock(&st->mu);
    return r;
}

void enc_core_op_failed(CUstream stream, int per_thread) {
    enc_stream_state *st = enc_stream_for(stream, per_thread, 0);
    if (!st) return;
    enc_mutex_lock(&st->mu);
    st->seq.poisoned = 1; /* never capture a sequence that failed */
    enc_mutex_unlock(&st->mu);
}
