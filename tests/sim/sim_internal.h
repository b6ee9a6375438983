/* Internal declarations of the simulated CUDA driver (tests only).
 *
 * cuda.h is included with __CUDA_API_VERSION_INTERNAL so that every exported
 * ABI name (cuCtxCreate and cuCtxCreate_v4, cuLaunchKernel and
 * cuLaunchKernel_ptsz, ...) is declared with its exact signature, and inside
 * `visibility push(default)`: the library is built with -fvisibility=hidden,
 * so exactly the cu* functions that cuda.h declares and that we define are
 * exported; everything else stays hidden. */
#ifndef SIM_INTERNAL_H
#define SIM_INTERNAL_H

#define __CUDA_API_VERSION_INTERNAL 1
#pragma GCC visibility push(default)
#include <cuda.h>
#pragma GCC visibility pop

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "simkernel.h"

#define SIM_EXPORT __attribute__((visibility("default")))

#define SIM_DRIVER_VERSION 13000
#define SIM_TOTAL_MEM (16ull << 30)
#define SIM_MAX_DYN_SMEM_DEFAULT 49152
#define SIM_MAX_DYN_SMEM_OPTIN 232448

/* ---- handle registry (validates handles before they are dereferenced) ---- */
enum sim_type {
    T_NONE = 0, T_CTX, T_STREAM, T_EVENT, T_MODULE, T_FUNC, T_LIBRARY, T_KERNEL,
    T_GRAPH, T_NODE, T_EXEC
};
void sim_reg_add(const void *p, int type);
void sim_reg_del(const void *p);
/* p if registered with `type`, else NULL */
void *sim_reg_get(const void *p, int type);

/* ---- forward types ---- */
typedef struct sim_ctx sim_ctx;
typedef struct sim_stream sim_stream;
typedef struct sim_event sim_event;
typedef struct sim_module sim_module;
typedef struct sim_func sim_func;
typedef struct sim_kernel sim_kernel;
typedef struct sim_library sim_library;
typedef struct sim_graph sim_graph;
typedef struct sim_node sim_node;
typedef struct sim_exec sim_exec;
typedef struct sim_capture sim_capture;
typedef struct sim_gsnap sim_gsnap;

/* ---- units of work: a stream op's payload or a graph node's ---- */
enum work_kind {
    W_NOP = 0, W_KERNEL, W_MEMCPY, W_MEMSET, W_HOST, W_CALLBACK, W_EVENT, W_FREE,
    W_GRAPH, W_STOP, W_MEMALLOC, W_MEMFREE,
    W_EVWAIT /* a graph's external wait node (sim_nodes.c) */
};

typedef struct sim_kcall {
    sim_func *func;
    simcuda_dims dims;
    unsigned char *argbuf; /* owned, laid out at the function's param offsets */
    size_t argsize;
    void **kparams;        /* owned: pointers into argbuf (for GetParams) */
    bool prio_set;         /* CU_LAUNCH_ATTRIBUTE_PRIORITY given at launch */
    int prio;
    /* CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW (bytes, 0: none) and
     * CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN the kernel runs with: the launch's
     * attribute, else its stream's when submitted (a captured node keeps the
     * capturing stream's; a graph launch does not apply the launch stream's) */
    bool apw_set, domain_set;
    size_t apw_bytes;
    int sync_domain;
    /* CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION given: captured
     * after a kernel node, the edge from it is programmatic */
    bool programmatic;
    /* CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE given under capture: the node's device handle
     * (0: none); an updater kernel in the same graph may change the node (sim_graph.c sim_devnode_apply) */
    uint64_t dev_node;
} sim_kcall;

typedef struct sim_work {
    int kind;
    union {
        sim_kcall k;
        struct { void *dst; const void *src; size_t n; void *staged; } cpy;
        struct { unsigned char *dst; unsigned value; unsigned elsize; size_t pitch, width, height; } set;
        struct { CUhostFn fn; void *ud; } host;
        struct { CUstreamCallback fn; void *ud; CUstream handle; } cb;
        struct { sim_event *ev; uint64_t gen; } ev;
        struct { void *p; } fr;
        struct { sim_gsnap *snap; } graph;
    } u;
} sim_work;

/* deep copy / release of a work item (kernel args, staged buffers) */
int sim_work_copy(sim_work *dst, const sim_work *src);
void sim_work_release(sim_work *w);
/* Runs w on s's worker. prio: the priority kernels run at (eager work: the
 * launch's priority attribute, else the stream's; in a graph, see
 * sim_gsnap_run). */
void sim_work_run(sim_work *w, sim_stream *s, bool in_graph, int prio);

/* ---- contexts ---- */
struct sim_ctx {
    int magic;
    CUdevice dev;
    unsigned flags;
    bool primary;
    bool dead;
    unsigned long long id;
    /* sticky error (0: none): set by a faulting kernel; every later call that
     * touches the context returns it, until the primary context is reset */
    _Atomic int sticky;
    unsigned epoch; /* bumped by a primary-context reset (g_mu) */
    sim_stream *legacy;
    sim_stream **streams; /* every stream of this context (g_mu) */
    int nstreams, capstreams;
};

/* ---- streams ---- */
enum { SK_USER = 0, SK_LEGACY, SK_PERTHREAD };

typedef struct sim_dep { sim_stream *s; uint64_t seq; } sim_dep;

typedef struct sim_op {
    struct sim_op *next;
    uint64_t seq;
    sim_dep *deps;
    int ndeps;
    sim_work w;
} sim_op;

/* stream attributes kept per stream (cuStreamSetAttribute ids 0..16) */
#define SIM_STREAM_ATTR_IDS 17

struct sim_stream {
    sim_ctx *ctx;
    int kind;
    unsigned flags;
    _Atomic int priority; /* also CU_LAUNCH_ATTRIBUTE_PRIORITY as a stream attribute */
    /* cuStreamSetAttribute values other than the priority (g_mu): applied to
     * later work submitted to the stream */
    CUlaunchAttributeValue attrs[SIM_STREAM_ATTR_IDS];
    unsigned long long id;
    bool dead;                      /* destroyed by the user or thread exit */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    sim_op *head, *tail;            /* queue (mu) */
    uint64_t enqueued;              /* g_mu */
    _Atomic uint64_t completed;     /* written under mu */
    pthread_t worker;
    uint64_t rng;
    /* capture state (g_mu) */
    sim_capture *cap;
    sim_node **frontier;
    int nfrontier, capfrontier;
    struct sim_stream *all_next; /* every stream ever created (never freed) */
};

extern pthread_mutex_t g_mu; /* global lock: enqueue order, capture, context lists */
extern atomic_int g_initialized;

/* Resolve a stream handle. ptds: NULL means the per-thread stream. On success
 * *out is a live stream of a live context. */
CUresult sim_stream_resolve(CUstream h, int ptds, sim_stream **out);
/* Enqueue work (takes ownership of *w on success) with implicit legacy /
 * blocking-stream dependencies plus extra deps. Caller holds g_mu. Returns the
 * op's sequence number through *seq. */
CUresult sim_enqueue_locked(sim_stream *s, sim_work *w, const sim_dep *extra, int nextra, uint64_t *seq);
CUresult sim_enqueue(sim_stream *s, sim_work *w, uint64_t *seq);
void sim_wait_seq(sim_stream *s, uint64_t seq);
void sim_jitter(sim_stream *s);
bool sim_jitter_enabled(void);
/* Host time a kernel launch takes beyond its own work. The real driver loads a kernel's module at
 * its first launch (CUDA_MODULE_LOADING=LAZY, the default since CUDA 12.2): with
 * SIMCUDA_LAZY_LOAD_US=N a function's first launch takes N us more. And a launch now and then
 * takes far longer than usual (the thread preempted, a page fault): with SIMCUDA_LAUNCH_STALL=K:N
 * every K-th kernel launch of a thread takes N us more. SIMCUDA_LAUNCH_US=N: every kernel launch
 * takes N us more, spent spinning (a GPU driver's 3-4 us a launch, against the simulator's
 * fraction of one, where a test's outcome rests on what a replay saves). */
void sim_launch_host_time(sim_func *f);
void sim_graph_launch_host_time(void); /* SIMCUDA_GRAPH_LAUNCH_US; counts the graph launch for the audit */
void sim_audit_launch(void);           /* a launch, for libsimaudit.so (sim_audit.c) */
uint64_t sim_rng_next(uint64_t *state);
sim_ctx *sim_current_ctx(void);
CUresult sim_require_ctx(sim_ctx **out);
CUresult sim_check_init(void);
/* A failure asked for by the environment: 0 when `name` is unset, empty or
 * "0"; its value when that is a CUDA error code (> 1); else dflt. */
int sim_env_code(const char *name, int dflt);

/* ---- events ---- */
struct sim_event {
    int magic;
    sim_ctx *ctx;
    unsigned flags;
    atomic_int refs;
    pthread_mutex_t mu;
    bool recorded;
    uint64_t gen;
    sim_stream *s;              /* eager record: (s, seq) */
    uint64_t seq;
    double time_ms;
    bool time_valid;
    /* record inside a capture (g_mu): id of that capture, 0 if none */
    unsigned long long cap_id;
    sim_node **cnodes;
    int ncnodes;
};
void sim_event_unref(sim_event *e);
/* The live event behind a handle, or NULL. */
sim_event *sim_event_get(CUevent h);

/* ---- capture (sim_graph.c) ---- */
struct sim_capture {
    sim_graph *graph;
    unsigned long long id;
    CUstreamCaptureMode mode;
    pthread_t thread;
    sim_stream *origin;
    bool invalidated;
    sim_stream **members;
    int nmembers, capmembers;
    struct sim_capture *next; /* active list */
};
/* Caller holds g_mu. If s is capturing: record w as a node (takes ownership),
 * return 1 and *rc. Otherwise 0. */
int sim_capture_add_locked(sim_stream *s, sim_work *w, CUresult *rc);
void sim_capture_invalidate_locked(sim_capture *c);
/* Caller holds g_mu: does the capture state forbid a "potentially unsafe" API
 * call from this thread? Invalidates the offending captures when it does. */
bool sim_capture_forbids_unsafe_locked(void);
CUresult sim_unsafe_call_check(void);
/* legacy-stream work while a blocking stream of ctx captures (g_mu held) */
sim_capture *sim_capture_blocking_in_ctx_locked(sim_ctx *ctx);
/* an event recorded in s's capture (CUDA_ERROR_STREAM_CAPTURE_INVALIDATED
 * once the capture is invalidated) */
CUresult sim_capture_event_record_locked(sim_stream *s, sim_event *e);
CUresult sim_capture_wait_event_locked(sim_stream *s, sim_event *e);
/* sim_nodes.c (g_mu held): external event nodes; a graph launch's waits (deps, at most max) and records */
CUresult sim_capture_event_record_external_locked(sim_stream *s, sim_event *e);
CUresult sim_capture_wait_external_locked(sim_stream *s, sim_event *e);
int sim_nodes_graph_waits_locked(const sim_work *works, int n, sim_dep *deps, int max);
/* e (its mutex held) was recorded on s at position seq, outside any capture. */
void sim_event_mark_recorded_locked(sim_event *e, sim_stream *s, uint64_t seq);
void sim_nodes_graph_launched_locked(sim_work *works, int n, sim_stream *s, uint64_t seq);
/* g_mu held: the work of graph node hNode if it is of `type`, else NULL; and
 * that node's work in the executable graph hGraphExec (what its launches run). */
sim_work *sim_node_work_locked(CUgraphNode hNode, CUgraphNodeType type);
sim_work *sim_exec_node_work_locked(CUgraphExec hGraphExec, CUgraphNode hNode, CUgraphNodeType type);
/* The start of every update of an executable graph's node: the driver
 * initialised, and no refusal asked for (SIMCUDA_FAIL_EXEC_SET_PARAMS). */
CUresult sim_exec_update_allowed(void);
bool sim_is_pinned(const void *p, size_t n);
/* What [p, p+n) lies in: memory the program allocated on the device
 * (cuMemAlloc, managed), page-locked host memory, or neither (pageable). */
enum { SIM_MEM_UNKNOWN = 0, SIM_MEM_DEVICE, SIM_MEM_HOST };
int sim_mem_kind(const void *p, size_t n);
/* the active capture with this id, or NULL (g_mu held) */
sim_capture *sim_capture_find_locked(unsigned long long id);

/* ---- modules and functions (sim_module.c) ---- */
struct sim_func {
    int magic;
    const simcuda_kernel_desc *desc;
    char *name;
    sim_module *mod;
    sim_kernel *kernel; /* library kernel this function belongs to, if any */
    int nparams;
    size_t offsets[SIMCUDA_MAX_PARAMS];
    size_t sizes[SIMCUDA_MAX_PARAMS];
    size_t argsize;
    /* attributes: read and written atomically (the driver is thread-safe: a
     * thread may set one while another launches the function) */
    int max_dyn_smem;
    int carveout;
    int attrs_other[32];
    atomic_int loaded; /* launched once: its module is loaded (SIMCUDA_LAZY_LOAD_US) */
    struct sim_func *next;
};
/* CUfunction or CUkernel handle -> function, or NULL */
sim_func *sim_func_resolve(CUfunction f);
/* the function's module is still loaded */
bool sim_func_live(const sim_func *f);
/* a primary-context reset unloads the context's modules (not libraries) */
void sim_module_drop_ctx(sim_ctx *c);
CUresult sim_kcall_build(sim_kcall *k, sim_func *f, unsigned gx, unsigned gy, unsigned gz,
                         unsigned bx, unsigned by, unsigned bz, unsigned smem,
                         void **kernelParams, void **extra);
void sim_kcall_run(sim_kcall *k);

/* ---- graphs (sim_graph.c) ---- */
struct sim_node {
    int magic;
    sim_graph *graph;
    CUgraphNodeType type;
    int index;
    sim_work w;
    sim_node **deps;
    int ndeps, capdeps;
    bool prog_edges; /* its edges from kernel nodes are programmatic (sim_kcall.programmatic) */
};
struct sim_graph {
    int magic;
    unsigned long long id;
    sim_node **nodes;
    int nnodes, capnodes;
};
void sim_gsnap_run(sim_gsnap *g, sim_stream *s);
/* Device-side graph updates (CUDA 12.4+), from a kernel of the graph being run on this worker: the node
 * `node` (a device handle) of that graph, in this launch and the executable graph's later ones, takes `size`
 * bytes at `offset` of its parameters (value) or, value NULL, the grid. 0, or a cudaError_t. */
int sim_devnode_apply(uint64_t node, uint32_t offset, uint32_t size, const void *value, const unsigned grid[3]);
/* A new device handle for a device-updatable node being captured. */
uint64_t sim_devnode_new(void);
/* Is k encore's updater kernel (run by the simulator itself: sim_graph.c)? */
bool sim_kcall_is_updater(const sim_kcall *k);
void sim_gsnap_free(sim_gsnap *g);
/* a primary-context reset: ends the captures of the context's streams and
 * destroys its executable graphs (g_mu held for the first) */
void sim_capture_drop_ctx_locked(sim_ctx *c);
void sim_exec_drop_ctx(sim_ctx *c);

/* ---- device memory ---- */
/* The device's memory (SIMCUDA_DEVICE_MEMORY bytes, else SIM_TOTAL_MEM).
 * An executable graph takes SIMCUDA_GRAPH_EXEC_BYTES of it (default: 1 MiB
 * where SIMCUDA_DEVICE_MEMORY is set, else nothing): sim_dev_reserve fails
 * (nonzero) where the bytes are not free, as cuMemAlloc does. */
size_t sim_total_mem(void);
size_t sim_exec_bytes(void);
int sim_dev_reserve(size_t n);
void sim_dev_unreserve(size_t n);
/* Device memory given back (cuMemFree, a stream-ordered free, a context's
 * end): freed, or with SIMCUDA_NO_ADDRESS_REUSE=1 kept so that its address
 * is never handed out again (the stale-range tests). */
void sim_dev_release(void *p);
/* a destroyed stream leaves its capture: the origin's capture ends, a forked
 * member's is invalidated (g_mu held) */
void sim_capture_stream_destroyed_locked(sim_stream *s);

/* ---- stats ---- */
extern atomic_ullong g_stat_kernels, g_stat_graph_launches, g_stat_graph_kernels;
/* graph launches of graphs with fewer than two kernel nodes (a child graph counts as two) */
extern atomic_ullong g_stat_graph_launches_small;
/* faults: kernels that faulted; prio_kernels / prio_sum: kernels run at a
 * priority other than 0, and the sum of their priorities; execs_live:
 * executable graphs instantiated and not destroyed */
extern atomic_ullong g_stat_faults, g_stat_prio_kernels;
extern atomic_llong g_stat_prio_sum, g_stat_execs_live;
/* apw_kernels / apw_bytes: kernels run with an access-policy window, and the
 * sum of its sizes; domain_kernels: kernels run in a memory-sync domain other
 * than the default */
extern atomic_ullong g_stat_apw_kernels, g_stat_apw_bytes, g_stat_domain_kernels;

/* ---- sticky errors ---- */
/* the context's sticky error, or CUDA_SUCCESS */
static inline CUresult sim_ctx_sticky(const sim_ctx *c) {
    return c ? (CUresult)atomic_load(&c->sticky) : CUDA_SUCCESS;
}
/* the stream whose work this worker thread runs (NULL elsewhere) */
extern __thread sim_stream *sim_t_running __attribute__((tls_model("initial-exec")));

/* ---- the handle registry, walked: calls fn for every handle of `type`
 * (collected first: fn may add or delete handles) ---- */
void sim_reg_foreach(int type, void (*fn)(void *p, void *ud), void *ud);

/* ---- memory helpers (sim_core.c) ---- */
bool sim_is_pinned(const void *p, size_t n);

/* ---- several devices (sim_multidev.c): SIMCUDA_DEVICES of them ---- */
#define SIM_MAX_DEVICES 8
int sim_device_count(void);
/* the multi-device entry points, for cuGetProcAddress's table */
void sim_multidev_procs(void (*add)(const char *name, int version, int per_thread, void *fn));
/* One entry of cuGetProcAddress's table, through add(name, version, per_thread, fn): fn as the
 * driver's `name` of ABI version ver (SIM_PROC_T: its per-thread variant sfx, ptsz or ptds). The
 * cudaTypedefs.h PFN type checks fn's type. */
#define SIM_PROC_E(add, name, ver, fn)    \
    do {                                  \
        PFN_##name##_v##ver p_ = fn;      \
        add(#name, ver, 0, (void *)p_);   \
    } while (0)
#define SIM_PROC_T(add, name, ver, sfx, fn)       \
    do {                                          \
        PFN_##name##_v##ver##_##sfx p_ = fn;      \
        add(#name, ver, 1, (void *)p_);           \
    } while (0)
/* may a kernel of module context `fctx` (NULL: context-independent) run on
 * stream s while `cur` is current? CUDA_SUCCESS or the driver's error */
CUresult sim_launch_ctx_check(const sim_ctx *cur, const sim_stream *s, const sim_ctx *fctx);

CUresult sim_graph_node_get_dependencies(CUgraphNode hNode, CUgraphNode *dependencies, size_t *numDependencies);

#endif
