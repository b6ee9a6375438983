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
#include <string.h>

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

/* ---- node parameters, and their updates in an executable graph ------------------------------
 *
 * Rules modelled (cuda.h, cuGraphExec{Memcpy,Memset}NodeSetParams and
 * cuGraphExecEvent{Record,Wait}NodeSetEvent; the simulator is as strict as
 * the documentation allows, never looser):
 *   - a copy's update is 1-dimensional and not empty, and each end lies in
 *     the same kind of memory as before (device, or page-locked or pageable
 *     host: "the memory operands' mappings changed" is refused);
 *   - a memset's update keeps its element size, width and height (a GPU
 *     may accept a new width; the simulator refuses it) and its destination
 *     stays in device memory;
 *   - a memset's update to a destination not aligned to its element size
 *     is refused (CUDA_ERROR_INVALID_VALUE), as cuMemsetD16/D32Async refuse
 *     one at the call (a guess for the update: not probed on a GPU);
 *   - an event node's update names a live event; a record node's, an event
 *     of the device the captured event was of (a guess, not probed: the
 *     driver refuses an eager record of another device's event,
 *     sim_multidev.c; a wait may name another device's event eagerly);
 *   - the update changes what later launches of the executable graph do,
 *     not the graph node, nor launches already made.
 * SIMCUDA_FAIL_EXEC_SET_PARAMS refuses every update (as for kernel nodes). */

static CUmemorytype mem_type(const void *p, size_t n) {
    return sim_mem_kind(p, n) == SIM_MEM_DEVICE ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
}

static void copy_end_out(CUmemorytype *type, const void **host, CUdeviceptr *dev, const void *p, size_t n) {
    *type = mem_type(p, n);
    if (*type == CU_MEMORYTYPE_HOST)
        *host = p;
    else
        *dev = (CUdeviceptr)(uintptr_t)p;
}

CUresult cuGraphMemcpyNodeGetParams(CUgraphNode hNode, CUDA_MEMCPY3D *p) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    sim_work *w = sim_node_work_locked(hNode, CU_GRAPH_NODE_TYPE_MEMCPY);
    if (w) {
        memset(p, 0, sizeof *p);
        copy_end_out(&p->srcMemoryType, &p->srcHost, &p->srcDevice, w->u.cpy.src, w->u.cpy.n);
        const void *dst_host = NULL;
        copy_end_out(&p->dstMemoryType, &dst_host, &p->dstDevice, w->u.cpy.dst, w->u.cpy.n);
        p->dstHost = (void *)(uintptr_t)dst_host;
        p->WidthInBytes = w->u.cpy.n;
        p->Height = 1;
        p->Depth = 1;
    }
    pthread_mutex_unlock(&g_mu);
    return w ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* One end of a 1-dimensional copy as an address, or NULL. */
static const void *copy_end_in(CUmemorytype type, const void *host, CUdeviceptr dev, size_t x, size_t y, size_t z) {
    if (y || z) return NULL;
    if (type == CU_MEMORYTYPE_HOST) return host ? (const char *)host + x : NULL;
    if (type == CU_MEMORYTYPE_DEVICE || type == CU_MEMORYTYPE_UNIFIED)
        return dev ? (const char *)(uintptr_t)dev + x : NULL;
    return NULL; /* arrays: not simulated */
}

CUresult cuGraphExecMemcpyNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode, const CUDA_MEMCPY3D *p,
                                        CUcontext ctx) {
    (void)ctx;
    CUresult rc = sim_exec_update_allowed();
    if (rc) return rc;
    if (!p || !p->WidthInBytes || p->Height > 1 || p->Depth > 1) return CUDA_ERROR_INVALID_VALUE;
    const void *src = copy_end_in(p->srcMemoryType, p->srcHost, p->srcDevice, p->srcXInBytes, p->srcY, p->srcZ);
    const void *dst = copy_end_in(p->dstMemoryType, p->dstHost, p->dstDevice, p->dstXInBytes, p->dstY, p->dstZ);
    size_t n = p->WidthInBytes;
    if (!src || !dst) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    sim_work *w = sim_exec_node_work_locked(hGraphExec, hNode, CU_GRAPH_NODE_TYPE_MEMCPY);
    int same_mapping = w && sim_mem_kind(w->u.cpy.src, w->u.cpy.n) == sim_mem_kind(src, n) &&
                       sim_mem_kind(w->u.cpy.dst, w->u.cpy.n) == sim_mem_kind(dst, n);
    if (same_mapping) {
        sim_work_release(w);
        *w = (sim_work){.kind = W_MEMCPY};
        w->u.cpy.dst = (void *)(uintptr_t)dst;
        w->u.cpy.src = src;
        w->u.cpy.n = n;
    }
    pthread_mutex_unlock(&g_mu);
    return same_mapping ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGraphMemsetNodeGetParams(CUgraphNode hNode, CUDA_MEMSET_NODE_PARAMS *p) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    sim_work *w = sim_node_work_locked(hNode, CU_GRAPH_NODE_TYPE_MEMSET);
    if (w)
        *p = (CUDA_MEMSET_NODE_PARAMS){.dst = (CUdeviceptr)(uintptr_t)w->u.set.dst,
                                       .pitch = w->u.set.pitch,
                                       .value = w->u.set.value,
                                       .elementSize = w->u.set.elsize,
                                       .width = w->u.set.width,
                                       .height = w->u.set.height};
    pthread_mutex_unlock(&g_mu);
    return w ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGraphExecMemsetNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode, const CUDA_MEMSET_NODE_PARAMS *p,
                                        CUcontext ctx) {
    (void)ctx;
    CUresult rc = sim_exec_update_allowed();
    if (rc) return rc;
    if (!p || !p->dst || !p->width || p->height != 1) return CUDA_ERROR_INVALID_VALUE;
    if (p->elementSize && p->dst % p->elementSize) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    sim_work *w = sim_exec_node_work_locked(hGraphExec, hNode, CU_GRAPH_NODE_TYPE_MEMSET);
    void *dst = (void *)(uintptr_t)p->dst;
    /* Another width is taken (rule 16: an H200, driver 580, took a larger and a smaller one); another
     * element size, a 2-D memset or a destination outside device memory is not. */
    int ok = w && w->u.set.height == 1 && w->u.set.elsize == p->elementSize &&
             sim_mem_kind(dst, p->width * p->elementSize) == SIM_MEM_DEVICE;
    if (ok) {
        w->u.set.dst = dst;
        w->u.set.value = p->value;
        w->u.set.width = p->width;
    }
    pthread_mutex_unlock(&g_mu);
    return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static CUresult exec_set_event(CUgraphExec hGraphExec, CUgraphNode hNode, CUevent event, CUgraphNodeType type) {
    CUresult rc = sim_exec_update_allowed();
    if (rc) return rc;
    pthread_mutex_lock(&g_mu);
    sim_work *w = sim_exec_node_work_locked(hGraphExec, hNode, type);
    sim_work *cw = sim_node_work_locked(hNode, type);
    sim_event *e = sim_event_get(event), *captured = cw ? cw->u.ev.ev : NULL;
    /* The driver's rule (gpu_nodes_probe rule 8, H100, driver 580): a record
     * node whose event was destroyed cannot be patched (CUDA error 1). Its
     * event as captured is checked; the one patched in since too (not probed). */
    if (type == CU_GRAPH_NODE_TYPE_EVENT_RECORD && w &&
        ((captured && !captured->magic) || (w->u.ev.ev && !w->u.ev.ev->magic)))
        e = NULL;
    if (type == CU_GRAPH_NODE_TYPE_EVENT_RECORD && e && captured && e->ctx && captured->ctx &&
        e->ctx->dev != captured->ctx->dev)
        e = NULL;
    if (w && e) {
        atomic_fetch_add(&e->refs, 1);
        sim_event_unref(w->u.ev.ev);
        w->u.ev.ev = e;
        w->u.ev.gen = 0;
    }
    pthread_mutex_unlock(&g_mu);
    return w && e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGraphExecEventRecordNodeSetEvent(CUgraphExec hGraphExec, CUgraphNode hNode, CUevent event) {
    return exec_set_event(hGraphExec, hNode, event, CU_GRAPH_NODE_TYPE_EVENT_RECORD);
}

CUresult cuGraphExecEventWaitNodeSetEvent(CUgraphExec hGraphExec, CUgraphNode hNode, CUevent event) {
    return exec_set_event(hGraphExec, hNode, event, CU_GRAPH_NODE_TYPE_WAIT_EVENT);
}
