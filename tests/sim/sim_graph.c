/* Simulated CUDA driver: stream capture, graphs, executable graphs.
 *
 * While a stream captures, work submitted to it becomes graph nodes (kernel,
 * memset, memcpy, host, empty) instead of running; each stream in a capture
 * keeps its "frontier" (the nodes the next captured work depends on). Events
 * recorded in a capture carry the frontier, so cuStreamWaitEvent forks other
 * streams into the capture and joins them back. A graph launch enqueues one op
 * that runs a snapshot of the executable graph's nodes in a topological order
 * (a random one while jitter is on, so that a missing edge shows up). */
#include "sim_internal.h"
#include "simkernel.h"
#include "../../core/graphs/devslot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GRAPH_MAGIC 0x47525048
#define NODE_MAGIC 0x4e4f4445
#define EXEC_MAGIC 0x45584543

struct sim_exec {
    int magic;
    sim_ctx *ctx;
    bool node_prio;         /* CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY */
    int n;
    sim_work *works;        /* one per node of the source graph, same index */
    CUgraphNodeType *types;
    int *dstart, *didx;     /* deps of node i: didx[dstart[i] .. dstart[i+1]) */
    int *order;             /* a topological order */
    sim_stream *last_s;     /* last launch: a launch waits for the previous one */
    uint64_t last_seq;
};

struct sim_gsnap {
    bool node_prio;
    CUgraphExec exec; /* the executable graph it was launched from (device-side updates reach it too) */
    int n;
    sim_work *works;
    int *dstart, *didx, *order;
};

static sim_capture *g_caps; /* active captures (g_mu) */
static unsigned long long g_cap_ids, g_graph_ids;
static __thread CUstreamCaptureMode t_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;

int sim_env_code(const char *name, int dflt) {
    const char *v = getenv(name);
    if (!v || !*v || strcmp(v, "0") == 0) return 0;
    int n = atoi(v);
    return n > 1 ? n : dflt;
}

/* ------------------------------------------------------------------------ */
/* graphs and nodes                                                         */
/* ------------------------------------------------------------------------ */
static sim_graph *graph_get(CUgraph h) {
    sim_graph *g = sim_reg_get(h, T_GRAPH);
    return (g && g->magic == GRAPH_MAGIC) ? g : NULL;
}
static sim_node *node_get(CUgraphNode h) {
    sim_node *n = sim_reg_get(h, T_NODE);
    return (n && n->magic == NODE_MAGIC) ? n : NULL;
}
static sim_exec *exec_get(CUgraphExec h) {
    sim_exec *e = sim_reg_get(h, T_EXEC);
    return (e && e->magic == EXEC_MAGIC) ? e : NULL;
}

static sim_graph *graph_new(void) {
    sim_graph *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->magic = GRAPH_MAGIC;
    g->id = ++g_graph_ids;
    sim_reg_add(g, T_GRAPH);
    return g;
}

static void graph_free(sim_graph *g) {
    sim_reg_del(g);
    for (int i = 0; i < g->nnodes; i++) {
        sim_node *n = g->nodes[i];
        sim_reg_del(n);
        sim_work_release(&n->w);
        free(n->deps);
        free(n);
    }
    free(g->nodes);
    g->magic = 0;
    free(g);
}

static CUgraphNodeType work_node_type(int kind) {
    switch (kind) {
    case W_KERNEL: return CU_GRAPH_NODE_TYPE_KERNEL;
    case W_MEMCPY: return CU_GRAPH_NODE_TYPE_MEMCPY;
    case W_MEMSET: return CU_GRAPH_NODE_TYPE_MEMSET;
    case W_HOST: return CU_GRAPH_NODE_TYPE_HOST;
    case W_MEMALLOC: return CU_GRAPH_NODE_TYPE_MEM_ALLOC;
    case W_MEMFREE: return CU_GRAPH_NODE_TYPE_MEM_FREE;
    case W_EVENT: return CU_GRAPH_NODE_TYPE_EVENT_RECORD;
    case W_EVWAIT: return CU_GRAPH_NODE_TYPE_WAIT_EVENT;
    default: return CU_GRAPH_NODE_TYPE_EMPTY;
    }
}

/* adds a node owning *w; NULL on failure (w released) */
static sim_node *node_add(sim_graph *g, sim_work *w, sim_node *const *deps, int ndeps) {
    sim_node *n = calloc(1, sizeof *n);
    sim_node **nd = ndeps ? malloc((size_t)ndeps * sizeof *nd) : NULL;
    if (!n || (ndeps && !nd)) goto fail;
    if (g->nnodes == g->capnodes) {
        int ncap = g->capnodes ? g->capnodes * 2 : 16;
        sim_node **v = realloc(g->nodes, (size_t)ncap * sizeof *v);
        if (!v) goto fail;
        g->nodes = v;
        g->capnodes = ncap;
    }
    n->magic = NODE_MAGIC;
    n->graph = g;
    n->type = work_node_type(w->kind);
    n->index = g->nnodes;
    n->w = *w;
    for (int i = 0; i < ndeps; i++) nd[i] = deps[i];
    n->deps = nd;
    n->ndeps = n->capdeps = ndeps;
    g->nodes[g->nnodes++] = n;
    sim_reg_add(n, T_NODE);
    return n;
fail:
    free(n);
    free(nd);
    sim_work_release(w);
    return NULL;
}

static CUresult check_deps(sim_graph *g, const CUgraphNode *deps, size_t n) {
    if (n && !deps) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < n; i++) {
        sim_node *d = node_get(deps[i]);
        if (!d || d->graph != g) return CUDA_ERROR_INVALID_VALUE;
        for (size_t j = 0; j < i; j++)
            if (deps[j] == deps[i]) return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

CUresult cuGraphCreate(CUgraph *phGraph, unsigned int flags) {
    CUresult rc = sim_require_ctx(NULL);
    if (rc) return rc;
    if (!phGraph || flags) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    sim_graph *g = graph_new();
    pthread_mutex_unlock(&g_mu);
    if (!g) return CUDA_ERROR_OUT_OF_MEMORY;
    *phGraph = (CUgraph)g;
    return CUDA_SUCCESS;
}

CUresult cuGraphDestroy(CUgraph hGraph) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    pthread_mutex_lock(&g_mu);
    sim_graph *g = graph_get(hGraph);
    for (sim_capture *c = g_caps; g && c; c = c->next)
        if (c->graph == g) g = NULL; /* still being captured into */
    if (g) graph_free(g);
    pthread_mutex_unlock(&g_mu);
    return g ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static CUresult add_node_api(CUgraphNode *ph, CUgraph hg, const CUgraphNode *deps, size_t ndeps, sim_work *w) {
    if (!ph) { sim_work_release(w); return CUDA_ERROR_INVALID_VALUE; }
    pthread_mutex_lock(&g_mu);
    sim_graph *g = graph_get(hg);
    CUresult rc = g ? check_deps(g, deps, ndeps) : CUDA_ERROR_INVALID_VALUE;
    sim_node *n = NULL;
    if (!rc) {
        sim_node **dv = ndeps ? malloc(ndeps * sizeof *dv) : NULL;
        if (ndeps && !dv) rc = CUDA_ERROR_OUT_OF_MEMORY;
        for (size_t i = 0; !rc && i < ndeps; i++) dv[i] = (sim_node *)deps[i];
        if (!rc && !(n = node_add(g, w, dv, (int)ndeps))) rc = CUDA_ERROR_OUT_OF_MEMORY;
        free(dv);
        w = NULL;
    }
    pthread_mutex_unlock(&g_mu);
    if (w) sim_work_release(w);
    if (!rc) *ph = (CUgraphNode)n;
    return rc;
}

static CUresult kernel_work(sim_work *w, const CUDA_KERNEL_NODE_PARAMS *p) {
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    sim_func *f = p->func ? sim_func_resolve(p->func) : sim_func_resolve((CUfunction)p->kern);
    if (!f) return CUDA_ERROR_INVALID_VALUE;
    memset(w, 0, sizeof *w);
    w->kind = W_KERNEL;
    return sim_kcall_build(&w->u.k, f, p->gridDimX, p->gridDimY, p->gridDimZ, p->blockDimX, p->blockDimY,
                           p->blockDimZ, p->sharedMemBytes, p->kernelParams, p->extra);
}

static void v1_to_v2(CUDA_KERNEL_NODE_PARAMS *d, const CUDA_KERNEL_NODE_PARAMS_v1 *s) {
    memset(d, 0, sizeof *d);
    d->func = s->func;
    d->gridDimX = s->gridDimX; d->gridDimY = s->gridDimY; d->gridDimZ = s->gridDimZ;
    d->blockDimX = s->blockDimX; d->blockDimY = s->blockDimY; d->blockDimZ = s->blockDimZ;
    d->sharedMemBytes = s->sharedMemBytes;
    d->kernelParams = s->kernelParams;
    d->extra = s->extra;
}

CUresult cuGraphAddKernelNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                 size_t numDependencies, const CUDA_KERNEL_NODE_PARAMS *nodeParams) {
    CUresult rc = sim_require_ctx(NULL);
    if (rc) return rc;
    sim_work w;
    if ((rc = kernel_work(&w, nodeParams))) return rc;
    return add_node_api(phGraphNode, hGraph, dependencies, numDependencies, &w);
}

CUresult cuGraphAddKernelNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                              size_t numDependencies, const CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams) {
    if (!nodeParams) return CUDA_ERROR_INVALID_VALUE;
    CUDA_KERNEL_NODE_PARAMS p;
    v1_to_v2(&p, nodeParams);
    return cuGraphAddKernelNode_v2(phGraphNode, hGraph, dependencies, numDependencies, &p);
}

CUresult cuGraphAddEmptyNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                             size_t numDependencies) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    sim_work w = {.kind = W_NOP};
    return add_node_api(phGraphNode, hGraph, dependencies, numDependencies, &w);
}

CUresult cuGraphAddMemsetNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                              size_t numDependencies, const CUDA_MEMSET_NODE_PARAMS *p, CUcontext ctx) {
    (void)ctx;
    CUresult rc = sim_check_init();
    if (rc) return rc;
    if (!p || !p->dst || (p->elementSize != 1 && p->elementSize != 2 && p->elementSize != 4) || !p->width ||
        !p->height || (p->height > 1 && p->pitch < p->width * p->elementSize))
        return CUDA_ERROR_INVALID_VALUE;
    sim_work w = {.kind = W_MEMSET};
    w.u.set.dst = (unsigned char *)(uintptr_t)p->dst;
    w.u.set.value = p->value;
    w.u.set.elsize = p->elementSize;
    w.u.set.width = p->width;
    w.u.set.height = p->height;
    w.u.set.pitch = p->height > 1 ? p->pitch : p->width * p->elementSize;
    return add_node_api(phGraphNode, hGraph, dependencies, numDependencies, &w);
}

CUresult cuGraphAddHostNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                            size_t numDependencies, const CUDA_HOST_NODE_PARAMS *p) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    if (!p || !p->fn) return CUDA_ERROR_INVALID_VALUE;
    sim_work w = {.kind = W_HOST};
    w.u.host.fn = p->fn;
    w.u.host.ud = p->userData;
    return add_node_api(phGraphNode, hGraph, dependencies, numDependencies, &w);
}

/* Event record and wait nodes built by the program (cuda.h: "each launch of
 * the graph will record event"; "... will wait for event"): the same works
 * as the nodes captured with CU_EVENT_RECORD_EXTERNAL / CU_EVENT_WAIT_EXTERNAL
 * (sim_nodes.c), so resolved at each launch: a wait node waits for the
 * event's latest record in the order of the calls that made it (eager
 * records, graph launches with a record node), as of the cuGraphLaunch; a
 * record node's record is the latest from that cuGraphLaunch on. */
static CUresult event_node_add(CUgraphNode *ph, CUgraph hg, const CUgraphNode *deps, size_t ndeps, CUevent ev,
                               int kind) {
    CUresult rc = sim_require_ctx(NULL);
    if (rc) return rc;
    sim_event *e = sim_event_get(ev);
    if (!e) return CUDA_ERROR_INVALID_VALUE;
    sim_work w = {.kind = kind};
    w.u.ev.ev = e;
    w.u.ev.gen = 0; /* a record's generation is set per launch (sim_nodes_graph_launched_locked) */
    atomic_fetch_add(&e->refs, 1);
    return add_node_api(ph, hg, deps, ndeps, &w); /* releases w on failure */
}

CUresult cuGraphAddEventRecordNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                   size_t numDependencies, CUevent event) {
    return event_node_add(phGraphNode, hGraph, dependencies, numDependencies, event, W_EVENT);
}

CUresult cuGraphAddEventWaitNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                 size_t numDependencies, CUevent event) {
    return event_node_add(phGraphNode, hGraph, dependencies, numDependencies, event, W_EVWAIT);
}

static CUresult event_node_get(CUgraphNode hNode, CUevent *out, CUgraphNodeType type) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    if (!out) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    sim_work *w = sim_node_work_locked(hNode, type);
    if (w) *out = (CUevent)w->u.ev.ev;
    pthread_mutex_unlock(&g_mu);
    return w ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGraphEventRecordNodeGetEvent(CUgraphNode hNode, CUevent *event_out) {
    return event_node_get(hNode, event_out, CU_GRAPH_NODE_TYPE_EVENT_RECORD);
}

CUresult cuGraphEventWaitNodeGetEvent(CUgraphNode hNode, CUevent *event_out) {
    return event_node_get(hNode, event_out, CU_GRAPH_NODE_TYPE_WAIT_EVENT);
}

/* The driver's list convention: fill `out` up to *cap (NULLs past n), set *cap to n. */
static void node_list(CUgraphNode *out, size_t *cap, sim_node *const *in, int n) {
    if (out)
        for (size_t i = 0; i < *cap; i++) out[i] = i < (size_t)n ? (CUgraphNode)in[i] : NULL;
    *cap = (size_t)n;
}

CUresult cuGraphGetNodes(CUgraph hGraph, CUgraphNode *nodes, size_t *numNodes) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    if (!numNodes) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    sim_graph *g = graph_get(hGraph);
    if (g) node_list(nodes, numNodes, g->nodes, g->nnodes);
    pthread_mutex_unlock(&g_mu);
    return g ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGraphGetRootNodes(CUgraph hGraph, CUgraphNode *rootNodes, size_t *numRootNodes) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    if (!numRootNodes) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    sim_graph *g = graph_get(hGraph);
    if (g) {
        size_t k = 0;
        for (int i = 0; i < g->nnodes; i++) {
            if (g->nodes[i]->ndeps) continue;
            if (rootNodes && k < *numRootNodes) rootNodes[k] = (CUgraphNode)g->nodes[i];
            k++;
        }
        if (rootNodes)
            for (size_t i = k; i < *numRootNodes; i++) rootNodes[i] = NULL;
        *numRootNodes = k;
    }
    pthread_mutex_unlock(&g_mu);
    return g ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* Is the edge from dep to n programmatic (n captured from a launch with
 * programmatic stream serialization, after a kernel)? */
static bool edge_programmatic(const sim_node *n, const sim_node *dep) {
    return n->prog_edges && dep->type == CU_GRAPH_NODE_TYPE_KERNEL;
}

/* cuGraphNodeGetDependencies with edge data (CUDA 12.3; cuda.h's name). Rule
 * (H100, driver 580, llama.cpp's kernels): without edgeData, a node with an
 * edge that is not a plain one is refused with CUDA_ERROR_LOSSY_QUERY. */
CUresult cuGraphNodeGetDependencies_v2(CUgraphNode hNode, CUgraphNode *dependencies, CUgraphEdgeData *edgeData,
                                    size_t *numDependencies) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    if (!numDependencies) return CUDA_ERROR_INVALID_VALUE;
    /* SIMCUDA_FAIL_NODE_DEPS: a graph whose nodes cannot be told apart (as
     * programmatic edges were before encore asked with edge data) */
    if ((rc = (CUresult)sim_env_code("SIMCUDA_FAIL_NODE_DEPS", CUDA_ERROR_LOSSY_QUERY))) return rc;
    pthread_mutex_lock(&g_mu);
    sim_node *n = node_get(hNode);
    size_t cap = *numDependencies;
    if (n && dependencies && !edgeData)
        for (int i = 0; i < n->ndeps && i < (int)cap; i++)
            if (edge_programmatic(n, n->deps[i])) rc = CUDA_ERROR_LOSSY_QUERY;
    if (n && !rc) {
        node_list(dependencies, numDependencies, n->deps, n->ndeps);
        for (int i = 0; edgeData && dependencies && i < n->ndeps && i < (int)cap; i++) {
            memset(&edgeData[i], 0, sizeof edgeData[i]);
            if (edge_programmatic(n, n->deps[i])) edgeData[i].type = CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC;
        }
    }
    pthread_mutex_unlock(&g_mu);
    return !n ? CUDA_ERROR_INVALID_VALUE : rc;
}

/* cuGraphNodeGetDependencies as of CUDA 10.0: no edge data. */
CUresult sim_graph_node_get_dependencies(CUgraphNode hNode, CUgraphNode *dependencies, size_t *numDependencies) {
    return cuGraphNodeGetDependencies_v2(hNode, dependencies, NULL, numDependencies);
}

CUresult cuGraphNodeGetType(CUgraphNode hNode, CUgraphNodeType *type) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    sim_node *n = node_get(hNode);
    if (!n || !type) return CUDA_ERROR_INVALID_VALUE;
    *type = n->type;
    return CUDA_SUCCESS;
}

static void fill_kparams(CUDA_KERNEL_NODE_PARAMS *p, const sim_kcall *k) {
    memset(p, 0, sizeof *p);
    p->func = (CUfunction)k->func;
    p->gridDimX = k->dims.grid[0]; p->gridDimY = k->dims.grid[1]; p->gridDimZ = k->dims.grid[2];
    p->blockDimX = k->dims.block[0]; p->blockDimY = k->dims.block[1]; p->blockDimZ = k->dims.block[2];
    p->sharedMemBytes = k->dims.shared_bytes;
    p->kernelParams = k->kparams;
    p->extra = NULL;
    p->kern = NULL;
    p->ctx = NULL;
}

CUresult cuGraphKernelNodeGetParams_v2(CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS *nodeParams) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    sim_node *n = node_get(hNode);
    if (!n || !nodeParams || n->type != CU_GRAPH_NODE_TYPE_KERNEL) return CUDA_ERROR_INVALID_VALUE;
    fill_kparams(nodeParams, &n->w.u.k);
    return CUDA_SUCCESS;
}

CUresult cuGraphKernelNodeGetParams(CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams) {
    if (!nodeParams) return CUDA_ERROR_INVALID_VALUE;
    CUDA_KERNEL_NODE_PARAMS p;
    CUresult rc = cuGraphKernelNodeGetParams_v2(hNode, &p);
    if (rc) return rc;
    nodeParams->func = p.func;
    nodeParams->gridDimX = p.gridDimX; nodeParams->gridDimY = p.gridDimY; nodeParams->gridDimZ = p.gridDimZ;
    nodeParams->blockDimX = p.blockDimX; nodeParams->blockDimY = p.blockDimY; nodeParams->blockDimZ = p.blockDimZ;
    nodeParams->sharedMemBytes = p.sharedMemBytes;
    nodeParams->kernelParams = p.kernelParams;
    nodeParams->extra = NULL;
    return CUDA_SUCCESS;
}

CUresult cuGraphKernelNodeSetParams_v2(CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS *nodeParams) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    sim_node *n = node_get(hNode);
    if (!n || n->type != CU_GRAPH_NODE_TYPE_KERNEL) return CUDA_ERROR_INVALID_VALUE;
    sim_work w;
    if ((rc = kernel_work(&w, nodeParams))) return rc;
    pthread_mutex_lock(&g_mu);
    sim_work_release(&n->w);
    n->w = w;
    pthread_mutex_unlock(&g_mu);
    return CUDA_SUCCESS;
}

CUresult cuGraphKernelNodeSetParams(CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams) {
    if (!nodeParams) return CUDA_ERROR_INVALID_VALUE;
    CUDA_KERNEL_NODE_PARAMS p;
    v1_to_v2(&p, nodeParams);
    return cuGraphKernelNodeSetParams_v2(hNode, &p);
}

/* ------------------------------------------------------------------------ */
/* capture                                                                  */
/* ------------------------------------------------------------------------ */
sim_capture *sim_capture_find_locked(unsigned long long id) {
    for (sim_capture *c = g_caps; c; c = c->next)
        if (c->id == id) return c;
    return NULL;
}

void sim_capture_invalidate_locked(sim_capture *c) {
    if (c) c->invalidated = true;
}

bool sim_capture_forbids_unsafe_locked(void) {
    if (t_mode == CU_STREAM_CAPTURE_MODE_RELAXED) return false;
    bool bad = false;
    pthread_t self = pthread_self();
    for (sim_capture *c = g_caps; c; c = c->next) {
        bool mine = pthread_equal(c->thread, self);
        if ((mine && c->mode != CU_STREAM_CAPTURE_MODE_RELAXED) ||
            (!mine && t_mode == CU_STREAM_CAPTURE_MODE_GLOBAL && c->mode == CU_STREAM_CAPTURE_MODE_GLOBAL)) {
            c->invalidated = true;
            bad = true;
        }
    }
    return bad;
}

sim_capture *sim_capture_blocking_in_ctx_locked(sim_ctx *ctx) {
    for (sim_capture *c = g_caps; c; c = c->next)
        for (int i = 0; i < c->nmembers; i++) {
            sim_stream *m = c->members[i];
            if (m->ctx == ctx && m->kind != SK_LEGACY && !(m->flags & CU_STREAM_NON_BLOCKING)) return c;
        }
    return NULL;
}

static int frontier_set(sim_stream *s, sim_node *const *v, int n) {
    if (n > s->capfrontier) {
        sim_node **nv = realloc(s->frontier, (size_t)n * sizeof *nv);
        if (!nv) return -1;
        s->frontier = nv;
        s->capfrontier = n;
    }
    for (int i = 0; i < n; i++) s->frontier[i] = v[i];
    s->nfrontier = n;
    return 0;
}

static int frontier_add(sim_stream *s, sim_node *const *v, int n) {
    for (int i = 0; i < n; i++) {
        bool have = false;
        for (int j = 0; j < s->nfrontier; j++) have |= s->frontier[j] == v[i];
        if (have) continue;
        if (s->nfrontier == s->capfrontier) {
            int ncap = s->capfrontier ? s->capfrontier * 2 : 4;
            sim_node **nv = realloc(s->frontier, (size_t)ncap * sizeof *nv);
            if (!nv) return -1;
            s->frontier = nv;
            s->capfrontier = ncap;
        }
        s->frontier[s->nfrontier++] = v[i];
    }
    return 0;
}

int sim_capture_add_locked(sim_stream *s, sim_work *w, CUresult *rc) {
    sim_capture *c = s->cap;
    if (!c) return 0;
    if (c->invalidated) {
        sim_work_release(w);
        *rc = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
        return 1;
    }
    bool prog = w->kind == W_KERNEL && w->u.k.programmatic;
    sim_node *n = node_add(c->graph, w, s->frontier, s->nfrontier);
    if (n) n->prog_edges = prog;
    if (!n || frontier_set(s, &n, 1)) {
        c->invalidated = true;
        *rc = CUDA_ERROR_OUT_OF_MEMORY;
        return 1;
    }
    *rc = CUDA_SUCCESS;
    return 1;
}

CUresult sim_capture_event_record_locked(sim_stream *s, sim_event *e) {
    /* like work submitted to an invalidated capture (not recorded on a GPU) */
    if (s->cap->invalidated) return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    sim_node **v = s->nfrontier ? malloc((size_t)s->nfrontier * sizeof *v) : NULL;
    if (s->nfrontier && !v) {
        s->cap->invalidated = true;
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    for (int i = 0; i < s->nfrontier; i++) v[i] = s->frontier[i];
    pthread_mutex_lock(&e->mu);
    free(e->cnodes);
    e->cnodes = v;
    e->ncnodes = s->nfrontier;
    e->cap_id = s->cap->id;
    e->gen++; /* an earlier eager record no longer counts */
    e->recorded = false;
    e->s = NULL;
    pthread_mutex_unlock(&e->mu);
    return CUDA_SUCCESS;
}

static int members_add(sim_capture *c, sim_stream *s) {
    for (int i = 0; i < c->nmembers; i++)
        if (c->members[i] == s) return 0;
    if (c->nmembers == c->capmembers) {
        int ncap = c->capmembers ? c->capmembers * 2 : 4;
        sim_stream **v = realloc(c->members, (size_t)ncap * sizeof *v);
        if (!v) return -1;
        c->members = v;
        c->capmembers = ncap;
    }
    c->members[c->nmembers++] = s;
    return 0;
}

CUresult sim_capture_wait_event_locked(sim_stream *s, sim_event *e) {
    sim_capture *ec = e->cap_id ? sim_capture_find_locked(e->cap_id) : NULL;
    if (ec) {
        if (s->kind == SK_LEGACY) {
            ec->invalidated = true;
            return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
        }
        if (s->cap && s->cap != ec) {
            ec->invalidated = true;
            s->cap->invalidated = true;
            return CUDA_ERROR_STREAM_CAPTURE_MERGE;
        }
        if (ec->invalidated) return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
        if (!s->cap) { /* fork: s joins the capture */
            if (members_add(ec, s) || frontier_set(s, e->cnodes, e->ncnodes)) {
                ec->invalidated = true;
                return CUDA_ERROR_OUT_OF_MEMORY;
            }
            s->cap = ec;
            return CUDA_SUCCESS;
        }
        if (frontier_add(s, e->cnodes, e->ncnodes)) {
            ec->invalidated = true;
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        return CUDA_SUCCESS;
    }
    /* last recorded by a capture that is over: refused (observed) */
    if (e->cap_id) {
        if (s->cap) s->cap->invalidated = true;
        return CUDA_ERROR_INVALID_VALUE;
    }
    /* the event is not part of an ongoing capture */
    if (s->cap) {
        pthread_mutex_lock(&e->mu);
        bool eager = e->recorded && e->cap_id == 0;
        pthread_mutex_unlock(&e->mu);
        if (eager) {
            /* a dependency on work outside the capture */
            s->cap->invalidated = true;
            return CUDA_ERROR_STREAM_CAPTURE_ISOLATION;
        }
    }
    return CUDA_SUCCESS; /* never recorded */
}

static CUresult begin_capture(CUstream h, CUstreamCaptureMode mode, int ptds) {
    sim_stream *s;
    CUresult rc = sim_stream_resolve(h, ptds, &s);
    if (rc) return rc;
    if ((unsigned)mode > CU_STREAM_CAPTURE_MODE_RELAXED) return CUDA_ERROR_INVALID_VALUE;
    if (s->kind == SK_LEGACY) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    pthread_mutex_lock(&g_mu);
    if (s->cap) {
        pthread_mutex_unlock(&g_mu);
        return CUDA_ERROR_ILLEGAL_STATE;
    }
    sim_capture *c = calloc(1, sizeof *c);
    sim_graph *g = c ? graph_new() : NULL;
    if (!g || members_add(c, s)) {
        if (g) graph_free(g);
        if (c) free(c->members);
        free(c);
        pthread_mutex_unlock(&g_mu);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    c->graph = g;
    c->id = ++g_cap_ids;
    c->mode = mode;
    c->thread = pthread_self();
    c->origin = s;
    c->next = g_caps;
    g_caps = c;
    s->cap = c;
    s->nfrontier = 0;
    pthread_mutex_unlock(&g_mu);
    return CUDA_SUCCESS;
}
CUresult cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode) { return begin_capture(hStream, mode, 0); }
CUresult cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode) { return begin_capture(hStream, mode, 1); }
CUresult cuStreamBeginCapture(CUstream hStream) { return begin_capture(hStream, CU_STREAM_CAPTURE_MODE_GLOBAL, 0); }
CUresult cuStreamBeginCapture_ptsz(CUstream hStream) { return begin_capture(hStream, CU_STREAM_CAPTURE_MODE_GLOBAL, 1); }

/* Ends capture c: its streams leave capture mode. Returns its graph when
 * keep, else frees it and returns NULL. g_mu held. */
static sim_graph *capture_terminate_locked(sim_capture *c, bool keep) {
    for (int i = 0; i < c->nmembers; i++) {
        c->members[i]->cap = NULL;
        c->members[i]->nfrontier = 0;
    }
    for (sim_capture **pp = &g_caps; *pp; pp = &(*pp)->next)
        if (*pp == c) { *pp = c->next; break; }
    sim_graph *g = c->graph;
    if (!keep) {
        graph_free(g);
        g = NULL;
    }
    free(c->members);
    free(c);
    return g;
}

/* A stream destroyed while it captures (not recorded on a GPU): the origin's
 * capture ends (abandoned, its graph discarded: nothing can end it any more);
 * a stream forked into a capture leaves it and invalidates it (it can never
 * be joined back). */
void sim_capture_stream_destroyed_locked(sim_stream *s) {
    sim_capture *c = s->cap;
    if (!c) return;
    if (c->origin == s) {
        capture_terminate_locked(c, false);
        return;
    }
    c->invalidated = true;
    for (int i = 0; i < c->nmembers; i++)
        if (c->members[i] == s) {
            c->members[i] = c->members[--c->nmembers];
            break;
        }
    s->cap = NULL;
    s->nfrontier = 0;
}

void sim_capture_drop_ctx_locked(sim_ctx *ctx) {
    for (sim_capture *c = g_caps, *next; c; c = next) {
        next = c->next;
        bool mine = false;
        for (int i = 0; i < c->nmembers; i++) mine |= c->members[i]->ctx == ctx;
        if (mine) capture_terminate_locked(c, false);
    }
}

/* is node a reachable backwards from any node of v (or in v)? */
static bool reaches(sim_node *const *v, int n, sim_node *a, int nn) {
    if (!nn) return false;
    char *seen = calloc((size_t)nn, 1);
    sim_node **stack = malloc((size_t)nn * sizeof *stack);
    bool found = false;
    int sp = 0;
    if (!seen || !stack) { free(seen); free(stack); return true; }
    for (int i = 0; i < n; i++)
        if (!seen[v[i]->index]) { seen[v[i]->index] = 1; stack[sp++] = v[i]; }
    while (sp && !found) {
        sim_node *x = stack[--sp];
        if (x == a) { found = true; break; }
        for (int i = 0; i < x->ndeps; i++)
            if (!seen[x->deps[i]->index]) { seen[x->deps[i]->index] = 1; stack[sp++] = x->deps[i]; }
    }
    free(seen);
    free(stack);
    return found;
}

static CUresult end_capture(CUstream h, CUgraph *phGraph, int ptds) {
    sim_stream *s;
    CUresult rc = sim_stream_resolve(h, ptds, &s);
    if (rc) return rc;
    if (!phGraph) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    sim_capture *c = s->cap;
    if (!c) {
        pthread_mutex_unlock(&g_mu);
        return CUDA_ERROR_ILLEGAL_STATE;
    }
    if (c->origin != s) {
        c->invalidated = true;
        pthread_mutex_unlock(&g_mu);
        return CUDA_ERROR_STREAM_CAPTURE_UNMATCHED;
    }
    rc = CUDA_SUCCESS;
    if (c->mode != CU_STREAM_CAPTURE_MODE_RELAXED && !pthread_equal(c->thread, pthread_self()))
        rc = CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD; /* and the capture is over (observed) */
    else if (c->invalidated)
        rc = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    for (int i = 0; !rc && i < c->nmembers; i++) {
        sim_stream *m = c->members[i];
        if (m == s) continue;
        for (int j = 0; j < m->nfrontier; j++)
            if (!reaches(s->frontier, s->nfrontier, m->frontier[j], c->graph->nnodes))
                rc = CUDA_ERROR_STREAM_CAPTURE_UNJOINED;
    }
    if (!rc) rc = (CUresult)sim_env_code("SIMCUDA_FAIL_CAPTURE", CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    static int ended; /* captures ended so far (g_mu) */
    const char *after = getenv("SIMCUDA_FAIL_CAPTURE_AFTER");
    if (!rc && after && *after && ++ended > atoi(after)) rc = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    /* the capture ends either way */
    sim_graph *g = capture_terminate_locked(c, rc == CUDA_SUCCESS);
    *phGraph = (CUgraph)g;
    pthread_mutex_unlock(&g_mu);
    return rc;
}
CUresult cuStreamEndCapture(CUstream hStream, CUgraph *phGraph) { return end_capture(hStream, phGraph, 0); }
CUresult cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph) { return end_capture(hStream, phGraph, 1); }

static CUresult capture_info(CUstream h, int ptds, CUstreamCaptureStatus *st, cuuint64_t *id, CUgraph *graph,
                             const CUgraphNode **deps, const CUgraphEdgeData **edges, size_t *ndeps) {
    sim_stream *s;
    CUresult rc = sim_stream_resolve(h, ptds, &s);
    if (rc) return rc;
    if (!st) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    if (s->kind == SK_LEGACY && sim_capture_blocking_in_ctx_locked(s->ctx)) {
        pthread_mutex_unlock(&g_mu); /* the capture goes on (observed) */
        return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
    }
    sim_capture *c = s->cap;
    if (!c) {
        *st = CU_STREAM_CAPTURE_STATUS_NONE;
    } else {
        *st = c->invalidated ? CU_STREAM_CAPTURE_STATUS_INVALIDATED : CU_STREAM_CAPTURE_STATUS_ACTIVE;
        if (id) *id = c->id;
        if (graph) *graph = (CUgraph)c->graph;
        if (deps) *deps = (const CUgraphNode *)s->frontier;
        if (edges) *edges = NULL;
        if (ndeps) *ndeps = (size_t)s->nfrontier;
    }
    pthread_mutex_unlock(&g_mu);
    return CUDA_SUCCESS;
}

CUresult cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *captureStatus) {
    return capture_info(hStream, 0, captureStatus, NULL, NULL, NULL, NULL, NULL);
}
CUresult cuStreamIsCapturing_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus) {
    return capture_info(hStream, 1, captureStatus, NULL, NULL, NULL, NULL, NULL);
}
CUresult cuStreamGetCaptureInfo(CUstream hStream, CUstreamCaptureStatus *captureStatus_out, cuuint64_t *id_out) {
    return capture_info(hStream, 0, captureStatus_out, id_out, NULL, NULL, NULL, NULL);
}
CUresult cuStreamGetCaptureInfo_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus_out, cuuint64_t *id_out) {
    return capture_info(hStream, 1, captureStatus_out, id_out, NULL, NULL, NULL, NULL);
}
CUresult cuStreamGetCaptureInfo_v2(CUstream hStream, CUstreamCaptureStatus *captureStatus_out, cuuint64_t *id_out,
                                   CUgraph *graph_out, const CUgraphNode **dependencies_out, size_t *numDependencies_out) {
    return capture_info(hStream, 0, captureStatus_out, id_out, graph_out, dependencies_out, NULL, numDependencies_out);
}
CUresult cuStreamGetCaptureInfo_v2_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus_out, cuuint64_t *id_out,
                                        CUgraph *graph_out, const CUgraphNode **dependencies_out,
                                        size_t *numDependencies_out) {
    return capture_info(hStream, 1, captureStatus_out, id_out, graph_out, dependencies_out, NULL, numDependencies_out);
}
CUresult cuStreamGetCaptureInfo_v3(CUstream hStream, CUstreamCaptureStatus *captureStatus_out, cuuint64_t *id_out,
                                   CUgraph *graph_out, const CUgraphNode **dependencies_out,
                                   const CUgraphEdgeData **edgeData_out, size_t *numDependencies_out) {
    return capture_info(hStream, 0, captureStatus_out, id_out, graph_out, dependencies_out, edgeData_out,
                        numDependencies_out);
}
CUresult cuStreamGetCaptureInfo_v3_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus_out, cuuint64_t *id_out,
                                        CUgraph *graph_out, const CUgraphNode **dependencies_out,
                                        const CUgraphEdgeData **edgeData_out, size_t *numDependencies_out) {
    return capture_info(hStream, 1, captureStatus_out, id_out, graph_out, dependencies_out, edgeData_out,
                        numDependencies_out);
}

CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    if (!mode || (unsigned)*mode > CU_STREAM_CAPTURE_MODE_RELAXED) return CUDA_ERROR_INVALID_VALUE;
    CUstreamCaptureMode old = t_mode;
    t_mode = *mode;
    *mode = old;
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* executable graphs                                                        */
/* ------------------------------------------------------------------------ */
static void exec_free_works(sim_exec *e) {
    for (int i = 0; i < e->n; i++) sim_work_release(&e->works[i]);
    free(e->works);
    e->works = NULL;
}

static void exec_free(sim_exec *e) {
    exec_free_works(e);
    free(e->types);
    free(e->dstart);
    free(e->didx);
    free(e->order);
    free(e);
}

/* copies the graph's works into w[] (index = node index); -1 on failure */
static int copy_works(sim_work *w, sim_graph *g) {
    for (int i = 0; i < g->nnodes; i++)
        if (sim_work_copy(&w[i], &g->nodes[i]->w)) {
            for (int j = 0; j < i; j++) sim_work_release(&w[j]);
            return -1;
        }
    return 0;
}

static CUresult instantiate(CUgraphExec *pe, CUgraph hg, unsigned long long flags) {
    CUresult rc = sim_require_ctx(NULL);
    if (rc) return rc;
    if (!pe) return CUDA_ERROR_INVALID_VALUE;
    int fail = sim_env_code("SIMCUDA_FAIL_INSTANTIATE", CUDA_ERROR_INVALID_VALUE);
    if (fail) return (CUresult)fail;
    pthread_mutex_lock(&g_mu);
    sim_graph *g = graph_get(hg);
    if (!g) {
        pthread_mutex_unlock(&g_mu);
        return CUDA_ERROR_INVALID_VALUE;
    }
    /* a kernel node of an unloaded module (not recorded on a GPU) */
    for (int i = 0; i < g->nnodes; i++)
        if (g->nodes[i]->w.kind == W_KERNEL && !sim_func_live(g->nodes[i]->w.u.k.func)) {
            pthread_mutex_unlock(&g_mu);
            return CUDA_ERROR_INVALID_VALUE;
        }
    int n = g->nnodes, ne = 0;
    for (int i = 0; i < n; i++) ne += g->nodes[i]->ndeps;
    sim_exec *e = calloc(1, sizeof *e);
    if (e) {
        e->n = n;
        e->works = calloc((size_t)n + 1, sizeof *e->works);
        e->types = calloc((size_t)n + 1, sizeof *e->types);
        e->dstart = calloc((size_t)n + 1, sizeof *e->dstart);
        e->didx = calloc((size_t)ne + 1, sizeof *e->didx);
        e->order = calloc((size_t)n + 1, sizeof *e->order);
    }
    int *indeg = calloc((size_t)n + 1, sizeof *indeg);
    if (!e || !e->works || !e->types || !e->dstart || !e->didx || !e->order || !indeg || copy_works(e->works, g)) {
        if (e) { e->n = 0; exec_free(e); }
        free(indeg);
        pthread_mutex_unlock(&g_mu);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    int k = 0;
    for (int i = 0; i < n; i++) {
        e->types[i] = g->nodes[i]->type;
        e->dstart[i] = k;
        for (int j = 0; j < g->nodes[i]->ndeps; j++) e->didx[k++] = g->nodes[i]->deps[j]->index;
        indeg[i] = g->nodes[i]->ndeps;
    }
    e->dstart[n] = k;
    /* topological order (Kahn, lowest index first) */
    int done = 0;
    char *used = calloc((size_t)n + 1, 1);
    while (used && done < n) {
        int pick = -1;
        for (int i = 0; i < n && pick < 0; i++)
            if (!used[i] && indeg[i] == 0) pick = i;
        if (pick < 0) break; /* cycle */
        used[pick] = 1;
        e->order[done++] = pick;
        for (int i = 0; i < n; i++)
            for (int j = e->dstart[i]; j < e->dstart[i + 1]; j++)
                if (e->didx[j] == pick) indeg[i]--;
    }
    free(used);
    free(indeg);
    if (done < n) {
        exec_free(e);
        pthread_mutex_unlock(&g_mu);
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (sim_dev_reserve(sim_exec_bytes())) { /* an executable graph takes device memory */
        exec_free(e);
        pthread_mutex_unlock(&g_mu);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    e->magic = EXEC_MAGIC;
    e->ctx = sim_current_ctx();
    e->node_prio = (flags & CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY) != 0;
    sim_reg_add(e, T_EXEC);
    atomic_fetch_add(&g_stat_execs_live, 1);
    pthread_mutex_unlock(&g_mu);
    *pe = (CUgraphExec)e;
    return CUDA_SUCCESS;
}

CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph, unsigned long long flags) {
    return instantiate(phGraphExec, hGraph, flags);
}

static CUresult instantiate_log(CUgraphExec *pe, CUgraph g, CUgraphNode *err, char *log, size_t logsize) {
    if (err) *err = NULL;
    if (log && logsize) log[0] = 0;
    return instantiate(pe, g, 0);
}
CUresult cuGraphInstantiate(CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode, char *logBuffer,
                            size_t bufferSize) {
    return instantiate_log(phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize);
}
CUresult cuGraphInstantiate_v2(CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode, char *logBuffer,
                               size_t bufferSize) {
    return instantiate_log(phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize);
}

static CUresult graph_upload(CUgraphExec he, CUstream hs, int ptds);

static CUresult instantiate_params(CUgraphExec *pe, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p, int ptds) {
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    p->hErrNode_out = NULL;
    CUresult rc = instantiate(pe, g, p->flags);
    p->result_out = rc ? CUDA_GRAPH_INSTANTIATE_ERROR : CUDA_GRAPH_INSTANTIATE_SUCCESS;
    if (!rc && (p->flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD)) rc = graph_upload(*pe, p->hUploadStream, ptds);
    return rc;
}
CUresult cuGraphInstantiateWithParams(CUgraphExec *phGraphExec, CUgraph hGraph,
                                      CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams) {
    return instantiate_params(phGraphExec, hGraph, instantiateParams, 0);
}
CUresult cuGraphInstantiateWithParams_ptsz(CUgraphExec *phGraphExec, CUgraph hGraph,
                                           CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams) {
    return instantiate_params(phGraphExec, hGraph, instantiateParams, 1);
}

CUresult cuGraphExecDestroy(CUgraphExec hGraphExec) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    pthread_mutex_lock(&g_mu);
    sim_exec *e = exec_get(hGraphExec);
    if (e) {
        sim_reg_del(e);
        e->magic = 0;
        exec_free(e); /* launches in flight run their own snapshot */
        atomic_fetch_sub(&g_stat_execs_live, 1);
        sim_dev_unreserve(sim_exec_bytes());
    }
    pthread_mutex_unlock(&g_mu);
    return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static void exec_drop_cb(void *p, void *ud) {
    pthread_mutex_lock(&g_mu);
    sim_exec *e = exec_get((CUgraphExec)p);
    if (e && e->ctx == ud) {
        sim_reg_del(e);
        e->magic = 0;
        exec_free(e);
        atomic_fetch_sub(&g_stat_execs_live, 1);
        sim_dev_unreserve(sim_exec_bytes());
    }
    pthread_mutex_unlock(&g_mu);
}

void sim_exec_drop_ctx(sim_ctx *c) { sim_reg_foreach(T_EXEC, exec_drop_cb, c); }

static CUresult graph_upload(CUgraphExec he, CUstream hs, int ptds) {
    sim_stream *s;
    CUresult rc = sim_stream_resolve(hs, ptds, &s);
    if (rc) return rc;
    return exec_get(he) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
CUresult cuGraphUpload(CUgraphExec hGraphExec, CUstream hStream) { return graph_upload(hGraphExec, hStream, 0); }
CUresult cuGraphUpload_ptsz(CUgraphExec hGraphExec, CUstream hStream) { return graph_upload(hGraphExec, hStream, 1); }

void sim_gsnap_free(sim_gsnap *g) {
    if (!g) return;
    for (int i = 0; i < g->n; i++) sim_work_release(&g->works[i]);
    free(g->works);
    free(g->dstart);
    free(g->didx);
    free(g->order);
    free(g);
}

static sim_gsnap *snapshot(sim_exec *e) {
    sim_gsnap *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    int ne = e->dstart[e->n];
    g->node_prio = e->node_prio;
    g->works = calloc((size_t)e->n + 1, sizeof *g->works);
    g->dstart = malloc(((size_t)e->n + 1) * sizeof *g->dstart);
    g->didx = malloc(((size_t)ne + 1) * sizeof *g->didx);
    g->order = malloc(((size_t)e->n + 1) * sizeof *g->order);
    if (!g->works || !g->dstart || !g->didx || !g->order) goto fail;
    for (int i = 0; i < e->n; i++) {
        if (sim_work_copy(&g->works[i], &e->works[i])) goto fail;
        g->n = i + 1;
    }
    memcpy(g->dstart, e->dstart, ((size_t)e->n + 1) * sizeof *g->dstart);
    memcpy(g->didx, e->didx, (size_t)ne * sizeof *g->didx);
    memcpy(g->order, e->order, (size_t)e->n * sizeof *g->order);
    return g;
fail:
    sim_gsnap_free(g);
    return NULL;
}

/* A node runs at its own priority (a launch attribute captured with it,
 * else the capturing stream's priority at capture) only when the graph was
 * instantiated with CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY, else at
 * the priority of the stream the graph is launched into. Its access-policy
 * window and memory-sync domain are its own (captured with it), never the
 * launch stream's. After a fault the rest does not run. */
static __thread sim_gsnap *t_running; /* the graph this worker runs a node of */

/* A device-updatable node runs with what its executable graph holds when it runs, not when the graph was
 * launched: an update from the device (an updater kernel of an earlier launch, which the GPU ran after this
 * launch was queued) holds for every later launch in the GPU's order. A host-side update reaches only the
 * launches made after it (encore patches such nodes only from the device). Not probed on a GPU: with
 * SIMCUDA_DEVNODE_AT_LAUNCH=1 a launch keeps what the graph held when it was launched (the other reading). */
static void devnode_refresh(sim_gsnap *g, int i) {
    static int at_launch = -1;
    if (at_launch < 0) at_launch = sim_env_code("SIMCUDA_DEVNODE_AT_LAUNCH", 1) != 0;
    if (at_launch) return;
    sim_kcall *k = &g->works[i].u.k;
    pthread_mutex_lock(&g_mu);
    sim_exec *e = exec_get(g->exec);
    if (e && i < e->n && e->works[i].kind == W_KERNEL && e->works[i].u.k.dev_node == k->dev_node &&
        e->works[i].u.k.argsize == k->argsize) {
        memcpy(k->argbuf, e->works[i].u.k.argbuf, k->argsize);
        memcpy(k->dims.grid, e->works[i].u.k.dims.grid, sizeof k->dims.grid);
    }
    pthread_mutex_unlock(&g_mu);
}

static void node_run(sim_gsnap *g, int i, sim_stream *s) {
    sim_work *w = &g->works[i];
    if (sim_ctx_sticky(s->ctx)) return;
    if (w->kind == W_KERNEL && w->u.k.dev_node) devnode_refresh(g, i);
    int prio = w->kind == W_KERNEL && g->node_prio && w->u.k.prio_set ? w->u.k.prio : s->priority;
    t_running = g;
    sim_work_run(w, s, true, prio);
    t_running = NULL;
}

/* encore's updater kernel (core/graphs/updater.cu, ENCORE_DEVICE_PATCH), as the simulator runs it: a cubin
 * naming encore_updater loads as this library's own kernel (sim_module.c). The same work as the CUDA one:
 * its launch's slot of the ring, each update applied to this graph's node, the slot marked done, the count
 * of its launches bumped. */
static void encore_updater_body(const simcuda_dims *d, void **args) {
    (void)d;
    unsigned char *ring = *(unsigned char **)args[0];
    uint32_t mask = *(uint32_t *)args[1], bytes = *(uint32_t *)args[2];
    uint32_t *counter = *(uint32_t **)args[3];
    enc_dev_slot *s = (enc_dev_slot *)(ring + (size_t)(*counter & mask) * bytes);
    for (uint32_t i = 0; i < s->n && i < ENC_DEV_UPDATER_THREADS; i++) {
        const enc_dev_update *u = &s->u[i];
        /* Two updates of one node in a launch (two of the updater's threads at once on a GPU): the second is
         * dropped, the strict reading, as nothing says concurrent updates of one node are safe (2026-11-29 call
         * 95: two GPU tests changed results while a node's bytes and its grid went by two threads). */
        int twice = 0;
        for (uint32_t j = 0; j < i; j++) twice |= s->u[j].node == u->node;
        if (twice) {
            if (!s->rc) s->rc = 1;
            continue;
        }
        int rc = 0;
        if (u->kind & ENC_DEV_PARAM)
            rc = sim_devnode_apply(u->node, u->offset, u->size, (unsigned char *)s + u->value_off, NULL);
        if (!rc && (u->kind & ENC_DEV_GRID)) rc = sim_devnode_apply(u->node, 0, 0, NULL, u->grid);
        if (rc && !s->rc) s->rc = rc;
    }
    *counter += 1; /* the count first, as the CUDA updater does */
    atomic_thread_fence(memory_order_seq_cst);
    s->done = 1;
}
SIMCUDA_KERNEL(encore_updater, encore_updater_body, sizeof(void *), sizeof(uint32_t), sizeof(uint32_t), sizeof(void *));

bool sim_kcall_is_updater(const sim_kcall *k) { return k->func && k->func->desc == &simcuda_kernel_encore_updater; }

static _Atomic uint64_t g_devnodes;
uint64_t sim_devnode_new(void) { return 0x5e0000000ull + atomic_fetch_add(&g_devnodes, 1) + 1; }

static int devnode_change(sim_kcall *k, uint32_t offset, uint32_t size, const void *value, const unsigned grid[3]) {
    if (!value) {
        if (!grid[0] || !grid[1] || !grid[2]) return 1; /* cudaErrorInvalidValue */
        memcpy(k->dims.grid, grid, sizeof k->dims.grid);
        return 0;
    }
    if ((size_t)offset + size > k->argsize) return 1;
    memcpy(k->argbuf + offset, value, size);
    return 0;
}

int sim_devnode_apply(uint64_t node, uint32_t offset, uint32_t size, const void *value, const unsigned grid[3]) {
    sim_gsnap *g = t_running;
    if (!g || !node) return 1;
    /* A graph with nodes other than kernels (copies, memsets, event records and waits): refused, as the H200
     * (driver 580.159.04, 2026-11-29 call 94) refused every device update in such graphs (cudaErrorInvalidValue,
     * the nodes left as they were: wrong results), and none in graphs of kernels alone. Whether the other nodes
     * or their host-side patches cause it is not known: refused either way. */
    for (int j = 0; j < g->n; j++)
        if (g->works[j].kind != W_KERNEL) return 1;
    int i = 0;
    while (i < g->n && !(g->works[i].kind == W_KERNEL && g->works[i].u.k.dev_node == node)) i++;
    if (i == g->n) return 1;
    int rc = devnode_change(&g->works[i].u.k, offset, size, value, grid);
    if (rc) return rc;
    pthread_mutex_lock(&g_mu); /* the executable graph's later launches keep it */
    sim_exec *e = exec_get(g->exec);
    if (e && i < e->n && e->works[i].kind == W_KERNEL && e->works[i].u.k.dev_node == node)
        devnode_change(&e->works[i].u.k, offset, size, value, grid);
    pthread_mutex_unlock(&g_mu);
    return 0;
}

void sim_gsnap_run(sim_gsnap *g, sim_stream *s) {
    atomic_fetch_add(&g_stat_graph_launches, 1);
    int n = g->n, kernels = 0;
    for (int i = 0; i < n && kernels < 2; i++) kernels += g->works[i].kind == W_KERNEL ? 1 : g->works[i].kind == W_GRAPH ? 2 : 0;
    if (kernels < 2) atomic_fetch_add(&g_stat_graph_launches_small, 1);
    if (!sim_jitter_enabled() || n < 2) {
        for (int i = 0; i < n; i++) {
            sim_jitter(s);
            node_run(g, g->order[i], s);
        }
        return;
    }
    /* a random topological order */
    int *indeg = calloc((size_t)n, sizeof *indeg);
    int *ready = malloc((size_t)n * sizeof *ready);
    if (!indeg || !ready) {
        free(indeg);
        free(ready);
        for (int i = 0; i < n; i++) node_run(g, g->order[i], s);
        return;
    }
    int nready = 0;
    for (int i = 0; i < n; i++) {
        indeg[i] = g->dstart[i + 1] - g->dstart[i];
        if (!indeg[i]) ready[nready++] = i;
    }
    while (nready) {
        int k = (int)(sim_rng_next(&s->rng) % (uint64_t)nready);
        int x = ready[k];
        ready[k] = ready[--nready];
        sim_jitter(s);
        node_run(g, x, s);
        for (int i = 0; i < n; i++)
            for (int j = g->dstart[i]; j < g->dstart[i + 1]; j++)
                if (g->didx[j] == x && --indeg[i] == 0) ready[nready++] = i;
    }
    free(indeg);
    free(ready);
}

static CUresult graph_launch(CUgraphExec he, CUstream hs, int ptds) {
    sim_graph_launch_host_time();
    sim_stream *s;
    CUresult rc = sim_stream_resolve(hs, ptds, &s);
    if (rc) return rc;
    pthread_mutex_lock(&g_mu);
    sim_exec *e = exec_get(he);
    if (!e) {
        pthread_mutex_unlock(&g_mu);
        return CUDA_ERROR_INVALID_VALUE;
    }
    /* Recorded on a GPU (H100, driver 580, sim_probe.rules.driver580.txt): a
     * graph whose kernel node asks more dynamic shared memory than its
     * function's CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES allows now
     * (lowered after capture) still launches, CUDA_SUCCESS; so does a graph
     * holding a function of an unloaded module. The simulator follows the
     * first. It still fails the second with CUDA_ERROR_INVALID_HANDLE, since
     * it frees an unloaded module's code: encore must never launch such a
     * graph (it drops the graphs of code that is unloaded), which this keeps
     * visible. */
    for (int i = 0; i < e->n; i++) {
        const sim_work *w = &e->works[i];
        if (w->kind != W_KERNEL) continue;
        rc = !sim_func_live(w->u.k.func) ? CUDA_ERROR_INVALID_HANDLE : CUDA_SUCCESS;
        if (rc) {
            pthread_mutex_unlock(&g_mu);
            return rc;
        }
    }
    if (s->cap) { /* child graphs through capture: not simulated */
        s->cap->invalidated = true;
        pthread_mutex_unlock(&g_mu);
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
    if (s->kind == SK_LEGACY) {
        sim_capture *c = sim_capture_blocking_in_ctx_locked(s->ctx);
        if (c) {
            c->invalidated = true;
            pthread_mutex_unlock(&g_mu);
            return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
        }
    }
    sim_work w = {.kind = W_GRAPH};
    w.u.graph.snap = snapshot(e);
    if (w.u.graph.snap) w.u.graph.snap->exec = he;
    if (!w.u.graph.snap) {
        pthread_mutex_unlock(&g_mu);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    /* an executable graph never runs concurrently with itself */
    sim_dep deps[17];
    int nd = 0;
    if (e->last_s) deps[nd++] = (sim_dep){e->last_s, e->last_seq};
    sim_gsnap *snap = w.u.graph.snap; /* external wait and record nodes: sim_nodes.c */
    nd += sim_nodes_graph_waits_locked(snap->works, snap->n, deps + nd, 16);
    /* the records name the launch's op (its seq is the stream's next, under g_mu) before the worker may run it */
    sim_nodes_graph_launched_locked(snap->works, snap->n, s, s->enqueued + 1);
    uint64_t seq = 0;
    rc = sim_enqueue_locked(s, &w, deps, nd, &seq);
    if (rc) sim_gsnap_free(snap);
    else {
        e->last_s = s;
        e->last_seq = seq;
    }
    pthread_mutex_unlock(&g_mu);
    return rc;
}
CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream) { return graph_launch(hGraphExec, hStream, 0); }
CUresult cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream) { return graph_launch(hGraphExec, hStream, 1); }

sim_work *sim_node_work_locked(CUgraphNode hNode, CUgraphNodeType type) {
    sim_node *n = node_get(hNode);
    return n && n->type == type ? &n->w : NULL;
}

sim_work *sim_exec_node_work_locked(CUgraphExec hGraphExec, CUgraphNode hNode, CUgraphNodeType type) {
    sim_exec *e = exec_get(hGraphExec);
    sim_node *n = node_get(hNode);
    if (!e || !n || n->index >= e->n || e->types[n->index] != type) return NULL;
    return &e->works[n->index];
}

/* SIMCUDA_FAIL_EXEC_SET_PARAMS refuses every update of an executable graph's
 * node (CUDA_ERROR_INVALID_VALUE, or the code given); SIMCUDA_FAIL_EXEC_SET_PARAMS_ONCE=K
 * refuses the K-th update of the process alone (counted over every kind). */
CUresult sim_exec_update_allowed(void) {
    static long n_updates;
    CUresult rc = sim_check_init();
    if (rc) return rc;
    const char *once = getenv("SIMCUDA_FAIL_EXEC_SET_PARAMS_ONCE");
    if (once && *once && __atomic_add_fetch(&n_updates, 1, __ATOMIC_RELAXED) == atol(once))
        return CUDA_ERROR_INVALID_VALUE;
    return (CUresult)sim_env_code("SIMCUDA_FAIL_EXEC_SET_PARAMS", CUDA_ERROR_INVALID_VALUE);
}

CUresult cuGraphExecKernelNodeSetParams_v2(CUgraphExec hGraphExec, CUgraphNode hNode,
                                           const CUDA_KERNEL_NODE_PARAMS *nodeParams) {
    CUresult rc = sim_exec_update_allowed();
    if (rc) return rc;
    sim_work w;
    if ((rc = kernel_work(&w, nodeParams))) return rc;
    pthread_mutex_lock(&g_mu);
    sim_work *old = sim_exec_node_work_locked(hGraphExec, hNode, CU_GRAPH_NODE_TYPE_KERNEL);
    if (old) {
        /* A cluster shape and a programmatic edge survive an argument patch
         * (gpu_nodes_probe rule 14, H200, driver 580.159.04, 2026-11-26). The
         * other launch attributes (priority, access policy, sync domain) were
         * not probed: the patched node loses them here, the strict guess, so
         * that a test would see encore patch a launch that has one. */
        const sim_kcall *o = &old->u.k;
        memcpy(w.u.k.dims.cluster, o->dims.cluster, sizeof w.u.k.dims.cluster);
        w.u.k.programmatic = o->programmatic;
        sim_work_release(old);
        *old = w;
    }
    pthread_mutex_unlock(&g_mu);
    if (!old) sim_work_release(&w);
    return old ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGraphExecKernelNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                        const CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams) {
    if (!nodeParams) return CUDA_ERROR_INVALID_VALUE;
    CUDA_KERNEL_NODE_PARAMS p;
    v1_to_v2(&p, nodeParams);
    return cuGraphExecKernelNodeSetParams_v2(hGraphExec, hNode, &p);
}

static CUresult exec_update(CUgraphExec he, CUgraph hg, CUgraphExecUpdateResult *res, CUgraphNode *errnode,
                            CUgraphNode *errfrom) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    *res = CU_GRAPH_EXEC_UPDATE_ERROR;
    *errnode = NULL;
    *errfrom = NULL;
    pthread_mutex_lock(&g_mu);
    sim_exec *e = exec_get(he);
    sim_graph *g = graph_get(hg);
    if (!e || !g) {
        pthread_mutex_unlock(&g_mu);
        return CUDA_ERROR_INVALID_VALUE;
    }
    CUgraphExecUpdateResult r = CU_GRAPH_EXEC_UPDATE_SUCCESS;
    if (g->nnodes != e->n) r = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
    for (int i = 0; r == CU_GRAPH_EXEC_UPDATE_SUCCESS && i < g->nnodes; i++) {
        sim_node *n = g->nodes[i];
        *errnode = (CUgraphNode)n;
        if (n->type != e->types[i]) { r = CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED; break; }
        if (n->ndeps != e->dstart[i + 1] - e->dstart[i]) { r = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED; break; }
        for (int j = 0; j < n->ndeps; j++) {
            bool found = false;
            for (int k = e->dstart[i]; k < e->dstart[i + 1]; k++) found |= e->didx[k] == n->deps[j]->index;
            if (!found) {
                *errfrom = (CUgraphNode)n->deps[j];
                r = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
                break;
            }
        }
    }
    if (r == CU_GRAPH_EXEC_UPDATE_SUCCESS) {
        sim_work *nw = calloc((size_t)g->nnodes + 1, sizeof *nw);
        if (!nw || copy_works(nw, g)) {
            free(nw);
            pthread_mutex_unlock(&g_mu);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        exec_free_works(e);
        e->works = nw;
        *errnode = NULL;
    }
    pthread_mutex_unlock(&g_mu);
    *res = r;
    return r == CU_GRAPH_EXEC_UPDATE_SUCCESS ? CUDA_SUCCESS : CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
}

CUresult cuGraphExecUpdate_v2(CUgraphExec hGraphExec, CUgraph hGraph, CUgraphExecUpdateResultInfo *resultInfo) {
    if (!resultInfo) return CUDA_ERROR_INVALID_VALUE;
    return exec_update(hGraphExec, hGraph, &resultInfo->result, &resultInfo->errorNode, &resultInfo->errorFromNode);
}

CUresult cuGraphExecUpdate(CUgraphExec hGraphExec, CUgraph hGraph, CUgraphNode *hErrorNode_out,
                           CUgraphExecUpdateResult *updateResult_out) {
    CUgraphNode en = NULL, ef = NULL;
    CUgraphExecUpdateResult r;
    if (!updateResult_out) return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = exec_update(hGraphExec, hGraph, &r, &en, &ef);
    *updateResult_out = r;
    if (hErrorNode_out) *hErrorNode_out = en;
    return rc;
}
