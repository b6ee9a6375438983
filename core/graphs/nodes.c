/* encore: stream operations other than kernel launches as parts of sequences.
 *
 * An event record, a wait on an event, an asynchronous copy between device
 * memory and page-locked host memory, and a memset are recorded into the
 * open sequence like a launch (a stand-in "function" per kind, its enc_op as
 * the one argument), held with it, captured as the matching graph node and
 * replayed with it. What makes one safe to hold (else the stream's sequence
 * ends before it, as for any flush-stream call):
 *
 *   record  the event is known (created through encore), not interprocess,
 *           and without timing (docs/driver-rules.md: timing events and IPC
 *           events are not held); its flags are the default. Captured with
 *           CU_EVENT_RECORD_EXTERNAL: the graph launch records the program's
 *           event where the eager record would have.
 *   wait    the event is known, not interprocess; default flags. Captured
 *           with CU_EVENT_WAIT_EXTERNAL.
 *   copy    both ends inside memory the program allocated on the device or
 *           page-locked (evtab.c): a pageable (or unknown) host end cannot
 *           be captured.
 *   memset  its destination inside device memory the program allocated.
 * (Those checks, the order below and taking an op into the sequence are the
 * path's: core/path/ops.c. Here: what an op is as a node.)
 *
 * Order around events (evtab.c keeps which open sequence has a record of an
 * event, or a wait on it, until the sequence ends; an observer ends that
 * sequence, issuing what it holds: the same cut points whether held or not):
 *   - any call naming an event first issues what holds a record of it (and a
 *     wait on it): cuEventQuery/Synchronize/ElapsedTime/Destroy, a wait on
 *     another stream, a record on another stream;
 *   - a wait is taken only once the event's latest record is issued (its
 *     holder's sequence ends first), so that the wait waits for that record;
 *   - a record of an event some stream holds a wait on first releases that
 *     wait: a later record must not be seen by an earlier wait.
 *
 * Hot path: a few table probes (no lock for lookups, one mutex to note a
 * held event), the same recording as a launch; no allocation. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/driver.h"
#include "base/log.h"
#include "core/state/fingerprint.h"
#include "core/graphs/graphs.h"
#include "core/graphs/issue.h"
#include "core/graphs/layout.h"
#include "core/graphs/nodes.h"
#include "core/graphs/store.h"
#include "core/state/gate.h"
#include "policy/options.h"

/* ---- the stand-in layouts ------------------------------------------------------------ */

static enc_layout *op_layouts[ENC_OP_KINDS];
static pthread_once_t op_once = PTHREAD_ONCE_INIT;

static void make_layouts(void) {
    static const char *const names[ENC_OP_KINDS] = {NULL, "[event record]", "[event wait]", "[memcpy]", "[memset]"};
    for (int k = 1; k < ENC_OP_KINDS; k++) {
        enc_layout *L = enc_layout_new(1);
        if (!L) continue;
        L->func = (void *)ENC_OP_FUNC(k);
        L->nparams = 1;
        L->argbytes = sizeof(enc_op);
        L->off[0] = 0;
        L->off[1] = sizeof(enc_op);
        L->ok = 1;
        L->is_op = 1;
        strncpy(L->name, names[k], sizeof L->name - 1);
        op_layouts[k] = L;
    }
}

const enc_layout *enc_op_layout(CUfunction f) {
    pthread_once(&op_once, make_layouts);
    return op_layouts[(uintptr_t)f];
}

/* ---- issuing and checking ops ------------------------------------------------------------- */

/* The op recorded as r's argument bytes. */
static inline enc_op op_at(const enc_rec *r, const unsigned char *arena) {
    enc_op op;
    memcpy(&op, arena + r->arg_off, sizeof op);
    return op;
}

static CUresult issue_set(const enc_op *op, CUstream s) {
    switch (op->flags) {
    case 1: return enc_drv.memsetD8Async(op->dst, (unsigned char)op->value, op->n, s);
    case 2: return enc_drv.memsetD16Async(op->dst, (unsigned short)op->value, op->n, s);
    default: return enc_drv.memsetD32Async(op->dst, op->value, op->n, s);
    }
}

CUresult enc_op_issue(const enc_rec *r, const unsigned char *arena, CUstream stream, int capture, CUevent as) {
    enc_op op = op_at(r, arena);
    if (as && enc_op_is_event(op.kind)) op.ev = as;
    switch (op.kind) {
    case ENC_OP_RECORD:
        return AUDITED(enc_drv.eventRecordWithFlags(op.ev, stream, capture ? CU_EVENT_RECORD_EXTERNAL : 0));
    case ENC_OP_WAIT: return AUDITED(enc_drv.streamWaitEvent(stream, op.ev, capture ? CU_EVENT_WAIT_EXTERNAL : 0));
    case ENC_OP_COPY: return AUDITED(enc_drv.memcpyAsync(op.dst, op.src, op.n, stream));
    case ENC_OP_SET: return AUDITED(issue_set(&op, stream));
    default: return CUDA_ERROR_INVALID_VALUE;
    }
}

int enc_op_node_ok(CUgraphNode node, const enc_rec *r) {
    static const CUgraphNodeType want[ENC_OP_KINDS] = {0, CU_GRAPH_NODE_TYPE_EVENT_RECORD,
                                                       CU_GRAPH_NODE_TYPE_WAIT_EVENT, CU_GRAPH_NODE_TYPE_MEMCPY,
                                                       CU_GRAPH_NODE_TYPE_MEMSET};
    CUgraphNodeType type;
    return enc_drv.graphNodeGetType(node, &type) == CUDA_SUCCESS && type == want[(uintptr_t)r->f];
}

/* ---- patching a captured op's node ----------------------------------------------------- */

static int op_patch_warned[ENC_OP_KINDS]; /* the driver refused a patch of this kind (said once) */

static int can_patch_kind(uint32_t kind) {
    switch (kind) {
    case ENC_OP_RECORD: return enc_drv.graphExecEventRecordNodeSetEvent != NULL;
    case ENC_OP_WAIT: return enc_drv.graphExecEventWaitNodeSetEvent != NULL;
    case ENC_OP_COPY: return enc_drv.graphMemcpyNodeGetParams && enc_drv.graphExecMemcpyNodeSetParams;
    case ENC_OP_SET: return enc_drv.graphMemsetNodeGetParams && enc_drv.graphExecMemsetNodeSetParams;
    default: return 0;
    }
}

/* A copy's size and a memset's width may change (docs/driver-rules.md rule
 * 16: an H200 took a larger and a smaller one of both; cuda.h asks for 1-D,
 * non-empty operations, which held ones are: core/path/ops.c); a memset's
 * element size may not. */
int enc_op_patchable(const enc_rec *h, const unsigned char *harena, const enc_rec *c, const unsigned char *carena) {
    enc_op a = op_at(h, harena), b = op_at(c, carena);
    if (a.kind != b.kind || a.flags != b.flags || !can_patch_kind(a.kind)) return 0;
    /* memsets are held only into device memory, events only when known,
     * without timing or IPC (holdable): only a copy's ends can change kind */
    return a.kind != ENC_OP_COPY || (enc_mem_kind(a.dst, a.n) == enc_mem_kind(b.dst, b.n) &&
                                     enc_mem_kind(a.src, a.n) == enc_mem_kind(b.src, b.n));
}

/* One end of a copy node set to address p, as the node names its memory. */
static int set_copy_end(CUmemorytype type, const void **host, CUdeviceptr *dev, size_t *x, size_t *y, size_t *z,
                        CUdeviceptr p) {
    if (type == CU_MEMORYTYPE_HOST)
        *host = (const void *)(uintptr_t)p;
    else if (type == CU_MEMORYTYPE_DEVICE || type == CU_MEMORYTYPE_UNIFIED)
        *dev = p;
    else
        return 0; /* an array: never captured from cuMemcpyAsync */
    *x = *y = *z = 0;
    return 1;
}

static CUresult patch_copy(CUgraphExec exec, CUgraphNode node, const enc_op *op, CUcontext ctx) {
    CUDA_MEMCPY3D p;
    CUresult r = enc_drv.graphMemcpyNodeGetParams(node, &p);
    if (r != CUDA_SUCCESS) return r;
    const void *dst_host = p.dstHost;
    if (!set_copy_end(p.srcMemoryType, &p.srcHost, &p.srcDevice, &p.srcXInBytes, &p.srcY, &p.srcZ, op->src) ||
        !set_copy_end(p.dstMemoryType, &dst_host, &p.dstDevice, &p.dstXInBytes, &p.dstY, &p.dstZ, op->dst))
        return CUDA_ERROR_NOT_SUPPORTED;
    p.dstHost = (void *)(uintptr_t)dst_host;
    p.WidthInBytes = op->n;
    return enc_drv.graphExecMemcpyNodeSetParams(exec, node, &p, ctx);
}

static CUresult patch_set(CUgraphExec exec, CUgraphNode node, const enc_op *op, CUcontext ctx) {
    CUDA_MEMSET_NODE_PARAMS p;
    CUresult r = enc_drv.graphMemsetNodeGetParams(node, &p);
    if (r != CUDA_SUCCESS) return r;
    p.dst = op->dst;
    p.value = op->value;
    p.width = op->n;
    return enc_drv.graphExecMemsetNodeSetParams(exec, node, &p, ctx);
}

/* Event node `node` of exec (a record or a wait, `kind`) names ev from its next launch on. */
static CUresult set_event(CUgraphExec exec, CUgraphNode node, uint32_t kind, CUevent ev) {
    return kind == ENC_OP_RECORD ? enc_drv.graphExecEventRecordNodeSetEvent(exec, node, ev)
                                 : enc_drv.graphExecEventWaitNodeSetEvent(exec, node, ev);
}

CUresult enc_op_patch(CUgraphExec exec, CUgraphNode node, const enc_rec *rec, const unsigned char *arena,
                      CUcontext ctx) {
    static const char *const what[ENC_OP_KINDS] = {NULL, "event records", "event waits", "copies", "memsets"};
    enc_op op = op_at(rec, arena);
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    switch (op.kind) {
    case ENC_OP_RECORD:
    case ENC_OP_WAIT: r = set_event(exec, node, op.kind, op.ev); break;
    case ENC_OP_COPY: r = patch_copy(exec, node, &op, ctx); break;
    case ENC_OP_SET: r = patch_set(exec, node, &op, ctx); break;
    default: return r;
    }
    if (r != CUDA_SUCCESS) /* that graph's sequence runs eagerly this time (replay.c); said once per kind */
        enc_warn_once(&op_patch_warned[op.kind],
                      "patching changed %s into a captured graph failed (CUDA error %d); that sequence ran eagerly, "
                      "and a graph refused %d times is no longer patched",
                      what[op.kind], (int)r, ENC_PATCH_REFUSALS);
    return r;
}

/* Events made and destroyed as fast as the graphs naming them replay (a new
 * event every iteration): each destroy turns nodes back to the placeholder
 * and each replay patches them again, driver calls that cost more than the
 * eager records and waits they replace (H100: 47 us an iteration against
 * eager's 34.5). Once such a turn comes at least once every CHURN_EVERY
 * replays of graphs with stream operations (after CHURN_MIN turns), records
 * and waits are no longer held: they end the sequence, as before they could
 * be nodes, and the kernels between them still replay. */
#define CHURN_MIN 32
#define CHURN_EVERY 8
static uint64_t n_turned_back, n_op_replays;
static int events_churn;

void enc_nodes_note_replay(void) { __atomic_fetch_add(&n_op_replays, 1, __ATOMIC_RELAXED); }

uint64_t enc_nodes_turned_back(uint64_t *not_held) {
    *not_held = (uint64_t)__atomic_load_n(&events_churn, __ATOMIC_RELAXED);
    return __atomic_load_n(&n_turned_back, __ATOMIC_RELAXED);
}

int enc_nodes_events_churn(void) { return __atomic_load_n(&events_churn, __ATOMIC_RELAXED); }

static void note_turned_back(void) {
    uint64_t t = __atomic_add_fetch(&n_turned_back, 1, __ATOMIC_RELAXED);
    if (t < CHURN_MIN || t * CHURN_EVERY < __atomic_load_n(&n_op_replays, __ATOMIC_RELAXED)) return;
    if (!__atomic_exchange_n(&events_churn, 1, __ATOMIC_RELAXED))
        ENC_DEBUG("the program destroys the events of replayed graphs about as often as they replay (%llu times): "
                  "event records and waits end sequences from now on",
                  (unsigned long long)t);
}

/* ev is about to be destroyed, or was created (a destroyed event's handle
 * may come back): no graph names it any more. An event node naming it goes
 * back to the event it was captured with (encore's own placeholder, which
 * lives as long as its context: capture_graph in learn.c), as the held
 * arguments say; a graph captured with ev itself goes, since the driver
 * refuses to patch a record node whose event was destroyed (gpu_nodes_probe
 * rule 8), and a graph still naming a destroyed event could match a new
 * event that got its handle (docs/driver-rules.md). */
void enc_nodes_unname(CUevent ev) {
    if (!ev || !__atomic_load_n(&enc_n_graphs, __ATOMIC_RELAXED)) return;
    int n = __atomic_load_n(&enc_hot.nstates, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++) {
        enc_stream_state *st = enc_states[i];
        if (!__atomic_load_n(&st->store.ngraphs_ev, __ATOMIC_RELAXED)) continue; /* most stores: no lock taken */
        enc_mutex_lock(&st->mu);
        enc_store_unname_event(&st->store, ev);
        enc_mutex_unlock(&st->mu);
    }
}

void enc_core_event_destroying(CUevent ev) { enc_nodes_unname(ev); }

void enc_core_event_destroyed(CUevent ev) { enc_evtab_forget_event(ev); }

int enc_graph_unname_event(enc_graph *g, CUevent ev) {
    int changed = 0;
    for (uint32_t i = 0; i < g->len && g->nops; i++) {
        enc_rec *r = &g->recs[i];
        CUevent cur = enc_op_event(r, g->arena), cap = g->knodes ? g->knodes[i].ev : cur;
        if (cap == ev) return 0; /* captured with ev: never patchable again */
        if (cur != ev) continue;
        /* no driver call while the program captures (one could invalidate its capture): g goes
         * (its destroy waits for the capture's end: prog_capture.c) */
        if (__atomic_load_n(&enc_hot.prog_capturing, __ATOMIC_RELAXED) > 0) return 0;
        enc_op op = op_at(r, g->arena);
        if (set_event(g->exec, g->knodes[i].node, op.kind, cap) != CUDA_SUCCESS) return 0;
        op.ev = cap;
        memcpy(g->arena + r->arg_off, &op, sizeof op);
        r->afp = enc_fp_args(g->arena + r->arg_off, r->L->argbytes, r->grid);
        changed = 1;
    }
    if (changed) {
        g->args_key = enc_args_key(g->recs, g->len);
        note_turned_back();
    }
    return 1;
}

int enc_op_events_patchable(void) {
    return enc_opt.patch && can_patch_kind(ENC_OP_RECORD) && can_patch_kind(ENC_OP_WAIT);
}

const char *enc_graph_name_events(enc_graph *g, CUevent placeholder) {
    if (!g->knodes) return "telling the graph's nodes apart";
    for (uint32_t i = 0; i < g->len; i++) {
        if (!enc_op_event(&g->recs[i], g->arena)) continue;
        enc_op op = op_at(&g->recs[i], g->arena);
        g->knodes[i].ev = placeholder;
        if (set_event(g->exec, g->knodes[i].node, op.kind, op.ev) != CUDA_SUCCESS)
            return "naming the program's event in an event node";
    }
    return NULL;
}

CUevent enc_op_event(const enc_rec *r, const unsigned char *arena) {
    if (!r->L->is_op) return NULL;
    enc_op op = op_at(r, arena);
    return enc_op_is_event(op.kind) ? op.ev : NULL;
}

int enc_graph_has_event_op(const enc_graph *g) {
    for (uint32_t i = 0; i < g->len && g->nops; i++)
        if (enc_op_event(&g->recs[i], g->arena)) return 1;
    return 0;
}
