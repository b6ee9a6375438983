/* Simulated CUDA driver: initialisation, device, contexts, streams and their
 * worker threads, memory, copies, memsets and events.
 *
 * Every stream (each context's legacy stream, each thread's per-thread
 * default stream, each user stream) owns one worker thread that executes its
 * queue in order. Each queued op carries (stream, sequence) dependencies: the
 * worker waits until those streams have completed those sequence numbers.
 * Implicit synchronisation of the legacy default stream is expressed with the
 * same mechanism: legacy-stream work depends on everything enqueued before it
 * on blocking streams of the context, and work on a blocking stream depends on
 * everything enqueued before it on the legacy stream. A global mutex (g_mu)
 * orders all enqueues, so dependencies always point backwards and cannot
 * form cycles. */
#include "sim_internal.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <dlfcn.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
atomic_int g_initialized;
atomic_ullong g_stat_kernels, g_stat_graph_launches, g_stat_graph_kernels, g_stat_graph_launches_small;
static atomic_ullong g_stat_updater_kernels; /* encore's updater kernel (sim_graph.c): not the program's */
atomic_ullong g_stat_faults, g_stat_prio_kernels;
atomic_llong g_stat_prio_sum, g_stat_execs_live;
atomic_ullong g_stat_apw_kernels, g_stat_apw_bytes, g_stat_domain_kernels;
/* Initial-exec: the stream workers (detached threads) touch no dynamically
 * allocated TLS block, whose reuse by glibc after they exit ThreadSanitizer
 * cannot see (it reported it as a race once encore destroyed side streams,
 * and so ended their workers, at every thread exit). */
__thread sim_stream *sim_t_running __attribute__((tls_model("initial-exec")));

#define CTX_MAGIC 0x43545821

/* ------------------------------------------------------------------------ */
/* handle registry                                                          */
/* ------------------------------------------------------------------------ */
typedef struct { const void *p; int type; } reg_ent;
#define REG_TOMB ((const void *)1)
static pthread_mutex_t g_reg_mu = PTHREAD_MUTEX_INITIALIZER;
static reg_ent *g_reg;
static size_t g_reg_cap, g_reg_used;

static size_t reg_hash(const void *p, size_t cap) {
    uint64_t h = (uint64_t)(uintptr_t)p;
    h ^= h >> 33; h *= 0xff51afd7ed558ccdull; h ^= h >> 33;
    return (size_t)(h & (cap - 1));
}

static void reg_grow(void) {
    size_t ncap = g_reg_cap ? g_reg_cap * 2 : 1024;
    reg_ent *n = calloc(ncap, sizeof *n);
    if (!n) abort();
    for (size_t i = 0; i < g_reg_cap; i++) {
        const void *p = g_reg[i].p;
        if (!p || p == REG_TOMB) continue;
        size_t j = reg_hash(p, ncap);
        while (n[j].p) j = (j + 1) & (ncap - 1);
        n[j] = g_reg[i];
    }
    free(g_reg);
    g_reg = n;
    g_reg_cap = ncap;
    size_t used = 0;
    for (size_t i = 0; i < ncap; i++) used += n[i].p != NULL;
    g_reg_used = used;
}

void sim_reg_add(const void *p, int type) {
    pthread_mutex_lock(&g_reg_mu);
    if ((g_reg_used + 1) * 2 > g_reg_cap) reg_grow();
    size_t j = reg_hash(p, g_reg_cap);
    while (g_reg[j].p && g_reg[j].p != REG_TOMB && g_reg[j].p != p) j = (j + 1) & (g_reg_cap - 1);
    if (!g_reg[j].p) g_reg_used++;
    g_reg[j].p = p;
    g_reg[j].type = type;
    pthread_mutex_unlock(&g_reg_mu);
}

void sim_reg_del(const void *p) {
    pthread_mutex_lock(&g_reg_mu);
    if (g_reg_cap) {
        size_t j = reg_hash(p, g_reg_cap);
        while (g_reg[j].p) {
            if (g_reg[j].p == p) { g_reg[j].p = REG_TOMB; g_reg[j].type = 0; break; }
            j = (j + 1) & (g_reg_cap - 1);
        }
    }
    pthread_mutex_unlock(&g_reg_mu);
}

void sim_reg_foreach(int type, void (*fn)(void *p, void *ud), void *ud) {
    pthread_mutex_lock(&g_reg_mu);
    size_t n = 0, k = 0;
    for (size_t i = 0; i < g_reg_cap; i++)
        n += g_reg[i].p && g_reg[i].p != REG_TOMB && g_reg[i].type == type;
    void **v = n ? malloc(n * sizeof *v) : NULL;
    for (size_t i = 0; v && i < g_reg_cap; i++)
        if (g_reg[i].p && g_reg[i].p != REG_TOMB && g_reg[i].type == type) v[k++] = (void *)g_reg[i].p;
    pthread_mutex_unlock(&g_reg_mu);
    for (size_t i = 0; i < k; i++) fn(v[i], ud);
    free(v);
}

void *sim_reg_get(const void *p, int type) {
    void *r = NULL;
    if (!p || p == REG_TOMB) return NULL;
    pthread_mutex_lock(&g_reg_mu);
    if (g_reg_cap) {
        size_t j = reg_hash(p, g_reg_cap);
        while (g_reg[j].p) {
            if (g_reg[j].p == p) { if (g_reg[j].type == type) r = (void *)p; break; }
            j = (j + 1) & (g_reg_cap - 1);
        }
    }
    pthread_mutex_unlock(&g_reg_mu);
    return r;
}

/* ------------------------------------------------------------------------ */
/* configuration, jitter, stats                                             */
/* ------------------------------------------------------------------------ */
static unsigned g_jitter_max_us = 20;   /* max sleep before an op */
static unsigned g_jitter_permille = 250; /* probability of sleeping */
static uint64_t g_jitter_seed = 0x5151;
static atomic_ullong g_ids;

uint64_t sim_rng_next(uint64_t *s) {
    uint64_t x = *s ? *s : 0x9e3779b97f4a7c15ull;
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    return *s = x;
}

void sim_jitter(sim_stream *s) {
    if (!g_jitter_max_us) return;
    uint64_t r = sim_rng_next(&s->rng);
    if ((r % 1000) >= g_jitter_permille) return;
    unsigned us = (unsigned)((r >> 20) % (g_jitter_max_us + 1));
    if (us == 0) { sched_yield(); return; }
    struct timespec ts = {0, (long)us * 1000};
    nanosleep(&ts, NULL);
}

bool sim_jitter_enabled(void) { return g_jitter_max_us != 0; }

static unsigned g_lazy_load_us;                   /* SIMCUDA_LAZY_LOAD_US */
static unsigned g_stall_every, g_stall_us;        /* SIMCUDA_LAUNCH_STALL=K:N */
static unsigned g_graph_launch_us;                 /* SIMCUDA_GRAPH_LAUNCH_US */
static unsigned g_launch_us;                       /* SIMCUDA_LAUNCH_US */
static int (*g_audit_depth)(void);                 /* libsimaudit.so's, when preloaded (sim_audit.c) */
static atomic_ullong g_stat_audit_launches, g_stat_audit_unseen;
static _Thread_local unsigned long t_launches;

static void sleep_us(unsigned us) {
    struct timespec ts = {(time_t)(us / 1000000), (long)(us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

/* A kernel or graph launch reached the simulator: inside encore's audit bracket? */
void sim_audit_launch(void) {
    if (!g_audit_depth) return;
    atomic_fetch_add(&g_stat_audit_launches, 1);
    if (g_audit_depth() <= 0) atomic_fetch_add(&g_stat_audit_unseen, 1);
}

/* SIMCUDA_GRAPH_LAUNCH_US=N: every cuGraphLaunch takes N more microseconds of
 * the host's time (a driver whose graph launches cost more than the launches
 * they replace: the self-check's tests). */
void sim_graph_launch_host_time(void) {
    if (g_graph_launch_us) sleep_us(g_graph_launch_us);
    sim_audit_launch();
}

/* N us of the host's time, spent spinning: exact where a sleep overshoots by its timer slack. */
static void spin_us(unsigned us) {
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do clock_gettime(CLOCK_MONOTONIC, &b);
    while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < (long)us * 1000L);
}

void sim_launch_host_time(sim_func *f) {
    sim_audit_launch();
    if (g_launch_us) spin_us(g_launch_us);
    if (g_lazy_load_us && !atomic_exchange(&f->loaded, 1)) sleep_us(g_lazy_load_us);
    if (g_stall_every && ++t_launches % g_stall_every == 0) sleep_us(g_stall_us);
}

static void stats_at_exit(void) {
    fprintf(stderr, "simcuda: kernels=%llu graph_launches=%llu graph_kernels=%llu\n",
            (unsigned long long)atomic_load(&g_stat_kernels),
            (unsigned long long)atomic_load(&g_stat_graph_launches),
            (unsigned long long)atomic_load(&g_stat_graph_kernels));
    fprintf(stderr, "simcuda: graph_launches_small=%llu updater_kernels=%llu\n",
            (unsigned long long)atomic_load(&g_stat_graph_launches_small),
            (unsigned long long)atomic_load(&g_stat_updater_kernels));
    fprintf(stderr, "simcuda: faults=%llu priority_kernels=%llu priority_sum=%lld graph_execs_live=%lld\n",
            (unsigned long long)atomic_load(&g_stat_faults),
            (unsigned long long)atomic_load(&g_stat_prio_kernels), (long long)atomic_load(&g_stat_prio_sum),
            (long long)atomic_load(&g_stat_execs_live));
    fprintf(stderr, "simcuda: apw_kernels=%llu apw_bytes=%llu domain_kernels=%llu\n",
            (unsigned long long)atomic_load(&g_stat_apw_kernels),
            (unsigned long long)atomic_load(&g_stat_apw_bytes),
            (unsigned long long)atomic_load(&g_stat_domain_kernels));
    if (g_audit_depth)
        fprintf(stderr, "simcuda: audit_launches=%llu audit_unseen=%llu\n",
                (unsigned long long)atomic_load(&g_stat_audit_launches),
                (unsigned long long)atomic_load(&g_stat_audit_unseen));
}

__attribute__((constructor)) static void sim_configure(void) {
    const char *j = getenv("SIMCUDA_JITTER");
    if (j && *j) {
        unsigned long long v = strtoull(j, NULL, 0);
        if (v == 0) {
            g_jitter_max_us = 0;
        } else {
            g_jitter_max_us = 50;
            g_jitter_permille = 1000;
            g_jitter_seed = v;
        }
    }
    const char *lazy = getenv("SIMCUDA_LAZY_LOAD_US");
    if (lazy && *lazy) g_lazy_load_us = (unsigned)strtoul(lazy, NULL, 10);
    const char *stall = getenv("SIMCUDA_LAUNCH_STALL");
    if (stall && *stall) {
        char *end = NULL;
        g_stall_every = (unsigned)strtoul(stall, &end, 10);
        g_stall_us = end && *end == ':' ? (unsigned)strtoul(end + 1, NULL, 10) : 0;
        if (!g_stall_us) g_stall_every = 0;
    }
    void *ad = dlsym(RTLD_DEFAULT, "simaudit_depth");
    memcpy(&g_audit_depth, &ad, sizeof ad);
    const char *gl = getenv("SIMCUDA_GRAPH_LAUNCH_US");
    if (gl && *gl) g_graph_launch_us = (unsigned)strtoul(gl, NULL, 10);
    const char *lu = getenv("SIMCUDA_LAUNCH_US");
    if (lu && *lu) g_launch_us = (unsigned)strtoul(lu, NULL, 10);
    const char *st = getenv("SIMCUDA_STATS");
    if (st && *st && strcmp(st, "0") != 0) atexit(stats_at_exit);
}

/* Counters for tests that link the simulator directly (see simkernel.h). */
SIM_EXPORT void simcuda_get_stats(unsigned long long *kernels, unsigned long long *graph_launches,
                                  unsigned long long *graph_kernels) {
    if (kernels) *kernels = atomic_load(&g_stat_kernels);
    if (graph_launches) *graph_launches = atomic_load(&g_stat_graph_launches);
    if (graph_kernels) *graph_kernels = atomic_load(&g_stat_graph_kernels);
}

/* A kernel body that "faults" (an illegal address, a failed device-side
 * assert) calls this on the stream's worker (kernels reach it with
 * dlopen("libcuda.so.1", RTLD_NOLOAD) + dlsym): the context takes the sticky
 * error `code`, runs nothing more, and every later call that touches it
 * returns that error until the primary context is reset. */
SIM_EXPORT void simcuda_device_fault(int code) {
    sim_stream *s = sim_t_running;
    if (!s) return;
    int none = 0;
    atomic_compare_exchange_strong(&s->ctx->sticky, &none, code ? code : (int)CUDA_ERROR_LAUNCH_FAILED);
    atomic_fetch_add(&g_stat_faults, 1);
}

/* Like the real driver, a forked child cannot use what its parent
 * initialised (the stream workers are not there): every call that needs
 * the driver initialised fails in it. */
static atomic_int g_forked_child;
static void after_fork_in_child(void) {
    if (atomic_load(&g_initialized)) atomic_store(&g_forked_child, 1);
}

/* Set by the driver's own teardown at exit (SIMCUDA_TEARDOWN_AT_EXIT). */
static atomic_int g_torn_down;

CUresult sim_check_init(void) {
    if (atomic_load(&g_forked_child)) return CUDA_ERROR_NOT_INITIALIZED;
    if (atomic_load(&g_torn_down)) return CUDA_ERROR_DEINITIALIZED;
    return atomic_load(&g_initialized) ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
}

static void register_fork_handler(void) { pthread_atfork(NULL, NULL, after_fork_in_child); }

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ------------------------------------------------------------------------ */
/* init and device                                                          */
/* ------------------------------------------------------------------------ */
static void ctx_sync_all(sim_ctx *c);
/* one primary context per device (SIMCUDA_DEVICES, sim_multidev.c) */
static sim_ctx *g_primary[SIM_MAX_DEVICES];

/* The driver tears itself down at exit, from an atexit handler registered by
 * the first cuInit (so it runs before the handlers registered earlier, a
 * preloaded library's among them): the primary context's work is drained,
 * then every call returns CUDA_ERROR_DEINITIALIZED. Which handler a real
 * process runs first depends on the runtime and the libraries (cudart tears
 * down from its own exit handler); this models the order in which a
 * preloaded library's exit handler comes too late. SIMCUDA_TEARDOWN_AT_EXIT=0
 * turns it off. */
static void ctx_drain_at_exit(sim_ctx *c);
/* Set while this thread queues work (holding g_mu) or waits on a stream's
 * condition variable: a signal handler that calls exit() there must not
 * wait for either again. */
static __thread int t_waiting;
static void teardown_at_exit(void) {
    if (atomic_load(&g_forked_child)) return; /* the parent's streams have no workers here */
    /* exit() from a signal handler that interrupted this thread queueing or
     * waiting here: g_mu is this thread's, or a stream's worker is stuck
     * broadcasting to this very waiter; nothing drains */
    if (!t_waiting)
        for (int d = 0; d < SIM_MAX_DEVICES; d++)
            if (g_primary[d]) ctx_drain_at_exit(g_primary[d]);
    atomic_store(&g_torn_down, 1);
}
static void register_teardown(void) {
    const char *v = getenv("SIMCUDA_TEARDOWN_AT_EXIT");
    if (!v || strcmp(v, "0") != 0) atexit(teardown_at_exit);
}

CUresult cuInit(unsigned int Flags) {
    static pthread_once_t fork_once = PTHREAD_ONCE_INIT, teardown_once = PTHREAD_ONCE_INIT;
    if (Flags != 0) return CUDA_ERROR_INVALID_VALUE;
    const char *fail = getenv("SIMCUDA_INIT_RESULT"); /* a machine without a usable GPU: e.g. 100 (NO_DEVICE) */
    if (fail && atoi(fail) != 0) return (CUresult)atoi(fail);
    if (atomic_load(&g_forked_child)) return CUDA_ERROR_NOT_INITIALIZED;
    if (atomic_load(&g_torn_down)) return CUDA_ERROR_DEINITIALIZED;
    pthread_once(&fork_once, register_fork_handler);
    pthread_once(&teardown_once, register_teardown);
    atomic_store(&g_initialized, 1);
    return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int *driverVersion) {
    if (!driverVersion) return CUDA_ERROR_INVALID_VALUE;
    *driverVersion = SIM_DRIVER_VERSION;
    return CUDA_SUCCESS;
}

static CUresult check_dev(CUdevice d) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    return d >= 0 && d < sim_device_count() ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

CUresult cuDeviceGet(CUdevice *device, int ordinal) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    if (!device) return CUDA_ERROR_INVALID_VALUE;
    if (ordinal < 0 || ordinal >= sim_device_count()) return CUDA_ERROR_INVALID_DEVICE;
    *device = ordinal;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *count) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    if (!count) return CUDA_ERROR_INVALID_VALUE;
    *count = sim_device_count();
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice dev) {
    CUresult rc = check_dev(dev);
    if (rc) return rc;
    if (!name || len <= 0) return CUDA_ERROR_INVALID_VALUE;
    snprintf(name, (size_t)len, "%s", "simcuda virtual device");
    return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev) {
    CUresult rc = check_dev(dev);
    if (rc) return rc;
    if (!bytes) return CUDA_ERROR_INVALID_VALUE;
    *bytes = sim_total_mem();
    return CUDA_SUCCESS;
}

CUresult cuDeviceComputeCapability(int *major, int *minor, CUdevice dev) {
    CUresult rc = check_dev(dev);
    if (rc) return rc;
    if (!major || !minor) return CUDA_ERROR_INVALID_VALUE;
    *major = 9;
    *minor = 0;
    return CUDA_SUCCESS;
}

static CUresult get_uuid(CUuuid *uuid, CUdevice dev) {
    CUresult rc = check_dev(dev);
    if (rc) return rc;
    if (!uuid) return CUDA_ERROR_INVALID_VALUE;
    char u[17] = "simcuda-device-0";
    u[15] = (char)('0' + dev);
    memcpy(uuid->bytes, u, 16);
    return CUDA_SUCCESS;
}
CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev) { return get_uuid(uuid, dev); }
CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev) { return get_uuid(uuid, dev); }

CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev) {
    CUresult rc = check_dev(dev);
    if (rc) return rc;
    if (!pi || (int)attrib <= 0 || attrib >= CU_DEVICE_ATTRIBUTE_MAX) return CUDA_ERROR_INVALID_VALUE;
    int v = 0;
    switch (attrib) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: v = 64; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: v = 2147483647; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: v = 65535; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: v = 65535; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: v = 49152; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: v = SIM_MAX_DYN_SMEM_OPTIN; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: v = 233472; break;
    case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY: v = 65536; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: v = 32; break;
    case CU_DEVICE_ATTRIBUTE_MAX_PITCH: v = 2147483647; break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: v = 65536; break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: v = 65536; break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: v = 1755000; break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: v = 2619000; break;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: v = 5120; break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: v = 50331648; break;
    case CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT: v = 512; break;
    case CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT: v = 32; break;
    case CU_DEVICE_ATTRIBUTE_GPU_OVERLAP: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: v = 8; break;
    case CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT: v = 0; break;
    case CU_DEVICE_ATTRIBUTE_INTEGRATED: v = 0; break;
    case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_MODE: v = CU_COMPUTEMODE_DEFAULT; break;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_ECC_ENABLED: v = 0; break;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: v = 1 + (int)dev; break;
    case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID: v = 0; break;
    case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID: v = 0; break;
    case CU_DEVICE_ATTRIBUTE_TCC_DRIVER: v = 0; break;
    case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: v = 2; break;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: v = 2048; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: v = 32; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: v = 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: v = 0; break;
    case CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD: v = 0; break;
    case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: v = 0; break;
    case CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED: v = 0; break;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS: v = 0; break;
    case CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE: v = 0; break;
    case CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK: v = 1024; break;
    default: v = 0; break;
    }
    *pi = v;
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* contexts                                                                 */
/* ------------------------------------------------------------------------ */
static __thread sim_ctx **t_stack;
static __thread int t_depth, t_stackcap;
static int g_primary_refs[SIM_MAX_DEVICES];
static unsigned g_primary_flags[SIM_MAX_DEVICES];

static sim_ctx *ctx_live(CUcontext h) {
    sim_ctx *c = sim_reg_get(h, T_CTX);
    return (c && c->magic == CTX_MAGIC && !c->dead) ? c : NULL;
}

sim_ctx *sim_current_ctx(void) {
    if (t_depth <= 0) return NULL;
    return ctx_live((CUcontext)t_stack[t_depth - 1]);
}

CUresult sim_require_ctx(sim_ctx **out) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    sim_ctx *c = sim_current_ctx();
    if (!c) return CUDA_ERROR_INVALID_CONTEXT;
    if ((rc = sim_ctx_sticky(c))) return rc;
    if (out) *out = c;
    return CUDA_SUCCESS;
}

static pthread_key_t g_stack_key;
static pthread_once_t g_stack_once = PTHREAD_ONCE_INIT;
/* At thread exit. Another thread-specific destructor may still call the
 * driver after this one (glibc runs them in key order): it sees no current
 * context, not freed memory. */
static void stack_free(void *p) {
    free(p);
    t_stack = NULL;
    t_depth = t_stackcap = 0;
}
static void stack_key_init(void) { pthread_key_create(&g_stack_key, stack_free); }

static int stack_push(sim_ctx *c) {
    if (t_depth == t_stackcap) {
        int ncap = t_stackcap ? t_stackcap * 2 : 8;
        sim_ctx **n = realloc(t_stack, (size_t)ncap * sizeof *n);
        if (!n) return -1;
        t_stack = n;
        t_stackcap = ncap;
        pthread_once(&g_stack_once, stack_key_init);
        pthread_setspecific(g_stack_key, n); /* freed at thread exit */
    }
    t_stack[t_depth++] = c;
    return 0;
}

static sim_stream *stream_new(sim_ctx *ctx, int kind, unsigned flags, int prio);

static sim_ctx *ctx_new(CUdevice dev, unsigned flags, bool primary) {
    sim_ctx *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->magic = CTX_MAGIC;
    c->dev = dev;
    c->flags = flags;
    c->primary = primary;
    c->id = atomic_fetch_add(&g_ids, 1) + 1;
    c->legacy = stream_new(c, SK_LEGACY, 0, 0);
    if (!c->legacy) { free(c); return NULL; }
    sim_reg_add(c, T_CTX);
    return c;
}

static CUresult ctx_create(CUcontext *pctx, unsigned flags, CUdevice dev) {
    CUresult rc = check_dev(dev);
    if (rc) return rc;
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    sim_ctx *c = ctx_new(dev, flags, false);
    if (!c) return CUDA_ERROR_OUT_OF_MEMORY;
    if (stack_push(c)) return CUDA_ERROR_OUT_OF_MEMORY;
    *pctx = (CUcontext)c;
    return CUDA_SUCCESS;
}

CUresult cuCtxCreate(CUcontext *pctx, unsigned int flags, CUdevice dev) { return ctx_create(pctx, flags, dev); }
CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev) { return ctx_create(pctx, flags, dev); }
CUresult cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams, unsigned int flags, CUdevice dev) {
    (void)paramsArray;
    if (numParams < 0) return CUDA_ERROR_INVALID_VALUE;
    return ctx_create(pctx, flags, dev);
}
CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams, unsigned int flags, CUdevice dev) {
    (void)ctxCreateParams;
    return ctx_create(pctx, flags, dev);
}

static void allocs_drop_ctx(sim_ctx *c);

static CUresult ctx_destroy(CUcontext h) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    sim_ctx *c = ctx_live(h);
    if (!c) return CUDA_ERROR_INVALID_CONTEXT;
    if (c->primary) return CUDA_ERROR_INVALID_CONTEXT;
    ctx_sync_all(c);
    pthread_mutex_lock(&g_mu);
    c->dead = true;
    pthread_mutex_unlock(&g_mu);
    sim_reg_del(c);
    allocs_drop_ctx(c); /* its memory goes with it; host registrations end */
    /* pop it from this thread's stack if current; other references to it
     * now fail with CUDA_ERROR_INVALID_CONTEXT */
    if (t_depth > 0 && t_stack[t_depth - 1] == c) t_depth--;
    return CUDA_SUCCESS;
}
CUresult cuCtxDestroy(CUcontext ctx) { return ctx_destroy(ctx); }
CUresult cuCtxDestroy_v2(CUcontext ctx) { return ctx_destroy(ctx); }

CUresult cuCtxGetCurrent(CUcontext *pctx) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    *pctx = t_depth > 0 ? (CUcontext)t_stack[t_depth - 1] : NULL;
    return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(CUcontext ctx) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    if (!ctx) {
        if (t_depth > 0) t_depth--;
        return CUDA_SUCCESS;
    }
    sim_ctx *c = ctx_live(ctx);
    if (!c) return CUDA_ERROR_INVALID_CONTEXT;
    if (t_depth > 0) t_stack[t_depth - 1] = c;
    else if (stack_push(c)) return CUDA_ERROR_OUT_OF_MEMORY;
    return CUDA_SUCCESS;
}

static CUresult ctx_push(CUcontext ctx) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    sim_ctx *c = ctx_live(ctx);
    if (!c) return CUDA_ERROR_INVALID_CONTEXT;
    return stack_push(c) ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_SUCCESS;
}
CUresult cuCtxPushCurrent(CUcontext ctx) { return ctx_push(ctx); }
CUresult cuCtxPushCurrent_v2(CUcontext ctx) { return ctx_push(ctx); }

static CUresult ctx_pop(CUcontext *pctx) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    if (t_depth <= 0) return CUDA_ERROR_INVALID_CONTEXT;
    sim_ctx *c = t_stack[--t_depth];
    if (pctx) *pctx = (CUcontext)c;
    return CUDA_SUCCESS;
}
CUresult cuCtxPopCurrent(CUcontext *pctx) { return ctx_pop(pctx); }
CUresult cuCtxPopCurrent_v2(CUcontext *pctx) { return ctx_pop(pctx); }

CUresult cuCtxGetDevice(CUdevice *device) {
    sim_ctx *c;
    CUresult rc = sim_require_ctx(&c);
    if (rc) return rc;
    if (!device) return CUDA_ERROR_INVALID_VALUE;
    *device = c->dev;
    return CUDA_SUCCESS;
}

static CUresult ctx_or_current(CUcontext h, sim_ctx **out) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    sim_ctx *c = h ? ctx_live(h) : sim_current_ctx();
    if (!c) return CUDA_ERROR_INVALID_CONTEXT;
    *out = c;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx) {
    sim_ctx *c;
    CUresult rc = ctx_or_current(ctx, &c);
    if (rc) return rc;
    if (!device) return CUDA_ERROR_INVALID_VALUE;
    *device = c->dev;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetApiVersion(CUcontext ctx, unsigned int *version) {
    sim_ctx *c;
    CUresult rc = ctx_or_current(ctx, &c);
    if (rc) return rc;
    if (!version) return CUDA_ERROR_INVALID_VALUE;
    *version = 3020;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetFlags(unsigned int *flags) {
    sim_ctx *c;
    CUresult rc = sim_require_ctx(&c);
    if (rc) return rc;
    if (!flags) return CUDA_ERROR_INVALID_VALUE;
    *flags = c->flags;
    return CUDA_SUCCESS;
}

CUresult cuCtxSetFlags(unsigned int flags) {
    sim_ctx *c;
    CUresult rc = sim_require_ctx(&c);
    if (rc) return rc;
    c->flags = flags;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetId(CUcontext ctx, unsigned long long *ctxId) {
    sim_ctx *c;
    CUresult rc = ctx_or_current(ctx, &c);
    if (rc) return rc;
    if (!ctxId) return CUDA_ERROR_INVALID_VALUE;
    *ctxId = c->id;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetStreamPriorityRange(int *leastPriority, int *greatestPriority) {
    CUresult rc = sim_require_ctx(NULL);
    if (rc) return rc;
    if (leastPriority) *leastPriority = 0;
    if (greatestPriority) *greatestPriority = -5;
    return CUDA_SUCCESS;
}

static size_t g_limits[16];
CUresult cuCtxGetLimit(size_t *pvalue, CUlimit limit) {
    CUresult rc = sim_require_ctx(NULL);
    if (rc) return rc;
    if (!pvalue || (unsigned)limit >= 16) return CUDA_ERROR_INVALID_VALUE;
    size_t v = g_limits[limit];
    if (!v) {
        switch (limit) {
        case CU_LIMIT_STACK_SIZE: v = 1024; break;
        case CU_LIMIT_PRINTF_FIFO_SIZE: v = 1 << 20; break;
        case CU_LIMIT_MALLOC_HEAP_SIZE: v = 8 << 20; break;
        case CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH: v = 2; break;
        case CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT: v = 2048; break;
        case CU_LIMIT_MAX_L2_FETCH_GRANULARITY: v = 64; break;
        default: break;
        }
    }
    *pvalue = v;
    return CUDA_SUCCESS;
}
CUresult cuCtxSetLimit(CUlimit limit, size_t value) {
    CUresult rc = sim_require_ctx(NULL);
    if (rc) return rc;
    if ((unsigned)limit >= 16) return CUDA_ERROR_INVALID_VALUE;
    g_limits[limit] = value;
    return CUDA_SUCCESS;
}

static CUfunc_cache g_cache_config = CU_FUNC_CACHE_PREFER_NONE;
CUresult cuCtxGetCacheConfig(CUfunc_cache *pconfig) {
    CUresult rc = sim_require_ctx(NULL);
    if (rc) return rc;
    if (!pconfig) return CUDA_ERROR_INVALID_VALUE;
    *pconfig = g_cache_config;
    return CUDA_SUCCESS;
}
CUresult cuCtxSetCacheConfig(CUfunc_cache config) {
    CUresult rc = sim_require_ctx(NULL);
    if (rc) return rc;
    g_cache_config = config;
    return CUDA_SUCCESS;
}

/* primary context */
static CUresult primary_get(CUdevice dev, sim_ctx **out) {
    pthread_mutex_lock(&g_mu);
    if (!g_primary[dev]) {
        pthread_mutex_unlock(&g_mu);
        sim_ctx *c = ctx_new(dev, g_primary_flags[dev], true);
        if (!c) return CUDA_ERROR_OUT_OF_MEMORY;
        pthread_mutex_lock(&g_mu);
        if (!g_primary[dev]) g_primary[dev] = c;
        else { c->dead = true; sim_reg_del(c); }
    }
    *out = g_primary[dev];
    pthread_mutex_unlock(&g_mu);
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev) {
    CUresult rc = check_dev(dev);
    if (rc) return rc;
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    sim_ctx *c;
    if ((rc = primary_get(dev, &c))) return rc;
    pthread_mutex_lock(&g_mu);
    g_primary_refs[dev]++;
    pthread_mutex_unlock(&g_mu);
    *pctx = (CUcontext)c;
    return CUDA_SUCCESS;
}

static void ctx_reset(sim_ctx *c);

/* Released to zero references, the primary context is destroyed like a
 * reset (below); its handle stays valid for a later retain. */
static CUresult primary_release(CUdevice dev) {
    CUresult rc = check_dev(dev);
    if (rc) return rc;
    pthread_mutex_lock(&g_mu);
    if (g_primary_refs[dev] <= 0) { pthread_mutex_unlock(&g_mu); return CUDA_ERROR_INVALID_CONTEXT; }
    bool last = --g_primary_refs[dev] == 0;
    sim_ctx *c = g_primary[dev];
    pthread_mutex_unlock(&g_mu);
    if (last && c) ctx_reset(c);
    return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxRelease(CUdevice dev) { return primary_release(dev); }
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev) { return primary_release(dev); }

CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active) {
    CUresult rc = check_dev(dev);
    if (rc) return rc;
    if (!flags || !active) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    *flags = g_primary_flags[dev];
    *active = g_primary_refs[dev] > 0;
    pthread_mutex_unlock(&g_mu);
    return CUDA_SUCCESS;
}

static CUresult primary_set_flags(CUdevice dev, unsigned flags) {
    CUresult rc = check_dev(dev);
    if (rc) return rc;
    pthread_mutex_lock(&g_mu);
    g_primary_flags[dev] = flags;
    if (g_primary[dev]) g_primary[dev]->flags = flags;
    pthread_mutex_unlock(&g_mu);
    return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags) { return primary_set_flags(dev, flags); }
CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags) { return primary_set_flags(dev, flags); }

static CUresult primary_reset(CUdevice dev) {
    CUresult rc = check_dev(dev);
    if (rc) return rc;
    /* The context object stays valid (the program may make it current again
     * and keep using it); everything in it is destroyed: see ctx_reset. */
    if (g_primary[dev]) ctx_reset(g_primary[dev]);
    pthread_mutex_lock(&g_mu);
    g_primary_flags[dev] = 0;
    g_primary_refs[dev] = 0;
    if (g_primary[dev]) g_primary[dev]->flags = 0;
    pthread_mutex_unlock(&g_mu);
    return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxReset(CUdevice dev) { return primary_reset(dev); }
CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev) { return primary_reset(dev); }

/* ------------------------------------------------------------------------ */
/* streams and workers                                                      */
/* ------------------------------------------------------------------------ */
/* Set while this thread waits on a stream's condition variable: a signal
 * handler that calls exit() there must not wait on it again (teardown_at_exit). */

void sim_wait_seq(sim_stream *s, uint64_t seq) {
    if (atomic_load(&s->completed) >= seq) return;
    t_waiting++;
    pthread_mutex_lock(&s->mu);
    while (atomic_load(&s->completed) < seq) pthread_cond_wait(&s->cv, &s->mu);
    pthread_mutex_unlock(&s->mu);
    t_waiting--;
}

static void *worker_main(void *arg) {
    sim_stream *s = arg;
    for (;;) {
        pthread_mutex_lock(&s->mu);
        while (!s->head) pthread_cond_wait(&s->cv, &s->mu);
        sim_op *op = s->head;
        s->head = op->next;
        if (!s->head) s->tail = NULL;
        pthread_mutex_unlock(&s->mu);

        for (int i = 0; i < op->ndeps; i++) sim_wait_seq(op->deps[i].s, op->deps[i].seq);
        bool stop = op->w.kind == W_STOP;
        sim_jitter(s);
        /* after a fault the context runs nothing more (a free still frees) */
        if (!sim_ctx_sticky(s->ctx) || op->w.kind == W_FREE) {
            int prio = op->w.kind == W_KERNEL && op->w.u.k.prio_set ? op->w.u.k.prio : s->priority;
            sim_t_running = s;
            sim_work_run(&op->w, s, false, prio);
            sim_t_running = NULL;
        }
        sim_work_release(&op->w);

        pthread_mutex_lock(&s->mu);
        atomic_store(&s->completed, op->seq);
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
        free(op->deps);
        free(op);
        if (stop) return NULL;
    }
}

static int ctx_add_stream_locked(sim_ctx *ctx, sim_stream *s) {
    if (ctx->nstreams == ctx->capstreams) {
        int ncap = ctx->capstreams ? ctx->capstreams * 2 : 8;
        sim_stream **n = realloc(ctx->streams, (size_t)ncap * sizeof *n);
        if (!n) return -1;
        ctx->streams = n;
        ctx->capstreams = ncap;
    }
    ctx->streams[ctx->nstreams++] = s;
    return 0;
}

static sim_stream *stream_new(sim_ctx *ctx, int kind, unsigned flags, int prio) {
    sim_stream *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->ctx = ctx;
    s->kind = kind;
    s->flags = flags;
    s->priority = prio;
    s->attrs[CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP].memSyncDomainMap.remote = 1; /* default 0, remote 1 */
    s->id = atomic_fetch_add(&g_ids, 1) + 1;
    s->rng = g_jitter_seed * 0x9e3779b97f4a7c15ull + s->id;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 1 << 20);
    /* the driver's threads take no signal of the program's: its handlers run on its threads */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int e = pthread_create(&s->worker, &attr, worker_main, s);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    if (e) {
        pthread_mutex_destroy(&s->mu);
        pthread_cond_destroy(&s->cv);
        free(s);
        return NULL;
    }
    /* Stream objects are never freed: ops, events and other streams may still
     * refer to them after destruction. A dead stream's worker exits. */
    static sim_stream *all_streams;
    pthread_mutex_lock(&g_mu);
    s->all_next = all_streams; /* keeps them reachable (leak checkers) */
    all_streams = s;
    int bad = ctx_add_stream_locked(ctx, s);
    pthread_mutex_unlock(&g_mu);
    if (bad) return NULL;
    return s;
}

static void stream_stop_locked(sim_stream *s) {
    sim_work w = {.kind = W_STOP};
    s->dead = true;
    sim_enqueue_locked(s, &w, NULL, 0, NULL);
}

/* per-thread default streams */
typedef struct pts_ent { sim_ctx *ctx; sim_stream *s; } pts_ent;
typedef struct pts_list { pts_ent *v; int n, cap; } pts_list;
static __thread pts_list *t_pts;
static pthread_key_t g_pts_key;
static pthread_once_t g_pts_once = PTHREAD_ONCE_INIT;

static void pts_destroy(void *arg) {
    pts_list *l = arg;
    for (int i = 0; i < l->n; i++) {
        sim_stream *s = l->v[i].s;
        pthread_mutex_lock(&g_mu);
        bool dead = s->dead; /* stopped by a context reset */
        uint64_t last = s->enqueued;
        pthread_mutex_unlock(&g_mu);
        if (dead) continue;
        sim_wait_seq(s, last);
        pthread_mutex_lock(&g_mu);
        stream_stop_locked(s);
        pthread_mutex_unlock(&g_mu);
    }
    free(l->v);
    free(l);
    t_pts = NULL; /* a later destructor's call gets a new per-thread stream (see stack_free) */
}
static void pts_key_init(void) { pthread_key_create(&g_pts_key, pts_destroy); }

static sim_stream *per_thread_stream(sim_ctx *ctx) {
    if (t_pts)
        for (int i = 0; i < t_pts->n; i++)
            if (t_pts->v[i].ctx == ctx) {
                if (!t_pts->v[i].s->dead) return t_pts->v[i].s;
                /* stopped by a context reset: a new one */
                sim_stream *s = stream_new(ctx, SK_PERTHREAD, 0, 0);
                if (s) t_pts->v[i].s = s;
                return s;
            }
    pthread_once(&g_pts_once, pts_key_init);
    if (!t_pts) {
        t_pts = calloc(1, sizeof *t_pts);
        if (!t_pts) return NULL;
        pthread_setspecific(g_pts_key, t_pts);
    }
    if (t_pts->n == t_pts->cap) {
        int ncap = t_pts->cap ? t_pts->cap * 2 : 4;
        pts_ent *n = realloc(t_pts->v, (size_t)ncap * sizeof *n);
        if (!n) return NULL;
        t_pts->v = n;
        t_pts->cap = ncap;
    }
    sim_stream *s = stream_new(ctx, SK_PERTHREAD, 0, 0);
    if (!s) return NULL;
    t_pts->v[t_pts->n++] = (pts_ent){ctx, s};
    return s;
}

CUresult sim_stream_resolve(CUstream h, int ptds, sim_stream **out) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    if (h == NULL || h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD) {
        sim_ctx *c = sim_current_ctx();
        if (!c) return CUDA_ERROR_INVALID_CONTEXT;
        bool pt = h == CU_STREAM_PER_THREAD || (h == NULL && ptds);
        if ((rc = sim_ctx_sticky(c))) return rc;
        sim_stream *s = pt ? per_thread_stream(c) : c->legacy;
        if (!s) return CUDA_ERROR_OUT_OF_MEMORY;
        *out = s;
        return CUDA_SUCCESS;
    }
    sim_stream *s = sim_reg_get(h, T_STREAM);
    if (!s || s->dead) return CUDA_ERROR_INVALID_HANDLE;
    if (s->ctx->dead) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
    if ((rc = sim_ctx_sticky(s->ctx))) return rc;
    *out = s;
    return CUDA_SUCCESS;
}

static int deps_push(sim_dep **v, int *n, int *cap, sim_stream *s, uint64_t seq) {
    if (seq == 0 || atomic_load(&s->completed) >= seq) return 0;
    for (int i = 0; i < *n; i++)
        if ((*v)[i].s == s) {
            if ((*v)[i].seq < seq) (*v)[i].seq = seq;
            return 0;
        }
    if (*n == *cap) {
        int ncap = *cap ? *cap * 2 : 4;
        sim_dep *nv = realloc(*v, (size_t)ncap * sizeof *nv);
        if (!nv) return -1;
        *v = nv;
        *cap = ncap;
    }
    (*v)[(*n)++] = (sim_dep){s, seq};
    return 0;
}

CUresult sim_enqueue_locked(sim_stream *s, sim_work *w, const sim_dep *extra, int nextra, uint64_t *seqout) {
    sim_op *op = calloc(1, sizeof *op);
    if (!op) return CUDA_ERROR_OUT_OF_MEMORY;
    int cap = 0;
    sim_ctx *ctx = s->ctx;
    int bad = 0;
    if (w->kind != W_STOP) {
        if (s->kind == SK_LEGACY) {
            for (int i = 0; i < ctx->nstreams; i++) {
                sim_stream *t = ctx->streams[i];
                if (t == s || (t->flags & CU_STREAM_NON_BLOCKING)) continue;
                if (t->dead && atomic_load(&t->completed) >= t->enqueued) {
                    ctx->streams[i--] = ctx->streams[--ctx->nstreams]; /* drained: forget it */
                    continue;
                }
                bad |= deps_push(&op->deps, &op->ndeps, &cap, t, t->enqueued);
            }
        } else if (!(s->flags & CU_STREAM_NON_BLOCKING)) {
            bad |= deps_push(&op->deps, &op->ndeps, &cap, ctx->legacy, ctx->legacy->enqueued);
        }
    }
    for (int i = 0; i < nextra; i++)
        if (extra[i].s != s) bad |= deps_push(&op->deps, &op->ndeps, &cap, extra[i].s, extra[i].seq);
    if (bad) {
        free(op->deps);
        free(op);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    op->w = *w;
    op->seq = ++s->enqueued;
    if (seqout) *seqout = op->seq;
    pthread_mutex_lock(&s->mu);
    if (s->tail) s->tail->next = op;
    else s->head = op;
    s->tail = op;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return CUDA_SUCCESS;
}

/* Submit work to a stream: captured when the stream captures (unless
 * nocapture, then the capture is invalidated and the call fails), refused
 * with CUDA_ERROR_STREAM_CAPTURE_IMPLICIT on the legacy stream while a
 * blocking stream captures, otherwise enqueued. With wait, returns after the
 * work completed. On failure the work is released. */
enum { SUB_WAIT = 1, SUB_NOCAPTURE = 2 };
/* A kernel submitted to s takes what its launch did not set from s's
 * attributes as they are now (priority, access-policy window, memory-sync
 * domain); captured, these stay with its node ("copied from stream priority
 * during stream capture"). g_mu held. */
static void kcall_take_stream_attrs_locked(sim_stream *s, sim_kcall *k) {
    if (!k->prio_set) {
        k->prio_set = true;
        k->prio = s->priority;
    }
    if (!k->apw_set) {
        k->apw_set = true;
        k->apw_bytes = s->attrs[CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW].accessPolicyWindow.num_bytes;
    }
    if (!k->domain_set) {
        k->domain_set = true;
        k->sync_domain = (int)s->attrs[CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN].memSyncDomain;
    }
}

static CUresult submit_work(sim_stream *s, sim_work *w, int flags) {
    uint64_t seq = 0;
    CUresult rc;
    pthread_mutex_lock(&g_mu);
    if (w->kind == W_KERNEL) kcall_take_stream_attrs_locked(s, &w->u.k);
    if (s->kind == SK_LEGACY) {
        sim_capture *c = sim_capture_blocking_in_ctx_locked(s->ctx);
        if (c) {
            sim_capture_invalidate_locked(c);
            pthread_mutex_unlock(&g_mu);
            sim_work_release(w);
            return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
        }
    }
    if (s->cap) {
        if (flags & SUB_NOCAPTURE) {
            sim_capture_invalidate_locked(s->cap);
            pthread_mutex_unlock(&g_mu);
            sim_work_release(w);
            return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
        }
        sim_capture_add_locked(s, w, &rc);
        pthread_mutex_unlock(&g_mu);
        return rc;
    }
    rc = sim_enqueue_locked(s, w, NULL, 0, &seq);
    pthread_mutex_unlock(&g_mu);
    if (rc) {
        sim_work_release(w);
        return rc;
    }
    if (flags & SUB_WAIT) {
        sim_wait_seq(s, seq);
        return sim_ctx_sticky(s->ctx);
    }
    return CUDA_SUCCESS;
}

/* The way every launch and stream operation is queued: a signal handler's
 * exit() that interrupts it must not wait for g_mu or the queue (teardown_at_exit). */
static CUresult submit(sim_stream *s, sim_work *w, int flags) {
    t_waiting++;
    CUresult rc = submit_work(s, w, flags);
    t_waiting--;
    return rc;
}

CUresult sim_enqueue(sim_stream *s, sim_work *w, uint64_t *seq) {
    (void)seq;
    return submit(s, w, 0);
}

static void ctx_sync_all(sim_ctx *c) {
    pthread_mutex_lock(&g_mu);
    int n = c->nstreams;
    sim_dep *v = calloc((size_t)n + 1, sizeof *v);
    if (v)
        for (int i = 0; i < n; i++) v[i] = (sim_dep){c->streams[i], c->streams[i]->enqueued};
    pthread_mutex_unlock(&g_mu);
    if (!v) return;
    for (int i = 0; i < n; i++) sim_wait_seq(v[i].s, v[i].seq);
    free(v);
}

/* ctx_sync_all for the teardown at exit, which may run on a thread that a
 * signal handler interrupted inside the simulator or inside malloc (exit()
 * from a handler): nothing is allocated, no lock is waited for (g_mu is
 * tried) and no condition variable either (the streams' progress is
 * polled), for at most 3 s in all. What cannot be waited for is left
 * undone: the process is ending. */
static void ctx_drain_at_exit(sim_ctx *c) {
    struct timespec ms = {0, 1000000};
    int budget = 3000; /* naps of 1 ms */
    while (pthread_mutex_trylock(&g_mu) != 0)
        if (--budget <= 0) return;
        else nanosleep(&ms, NULL);
    sim_dep v[64];
    int n = c->nstreams < 64 ? c->nstreams : 64;
    for (int i = 0; i < n; i++) v[i] = (sim_dep){c->streams[i], c->streams[i]->enqueued};
    pthread_mutex_unlock(&g_mu);
    for (int i = 0; i < n; i++)
        while (atomic_load(&v[i].s->completed) < v[i].seq && --budget > 0) nanosleep(&ms, NULL);
}

/* Synchronising a context that has a capturing stream fails (in any capture
 * mode, as observed on driver 580) and invalidates the capture. */
static CUresult ctx_synchronize(sim_ctx *c) {
    CUresult rc = sim_unsafe_call_check();
    if (rc) return rc;
    pthread_mutex_lock(&g_mu);
    bool capturing = false;
    for (int i = 0; i < c->nstreams; i++)
        if (c->streams[i]->cap) {
            sim_capture_invalidate_locked(c->streams[i]->cap);
            capturing = true;
        }
    pthread_mutex_unlock(&g_mu);
    if (capturing) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    ctx_sync_all(c);
    return sim_ctx_sticky(c);
}
CUresult cuCtxSynchronize(void) {
    sim_ctx *c;
    CUresult rc = sim_require_ctx(&c);
    if (rc) return rc;
    return ctx_synchronize(c);
}
CUresult cuCtxSynchronize_v2(CUcontext ctx) {
    sim_ctx *c;
    CUresult rc = ctx_or_current(ctx, &c);
    if (rc) return rc;
    return ctx_synchronize(c);
}

static CUresult stream_create(CUstream *ph, unsigned flags, int prio) {
    sim_ctx *c;
    CUresult rc = sim_require_ctx(&c);
    if (rc) return rc;
    if (!ph || (flags & ~(unsigned)CU_STREAM_NON_BLOCKING)) return CUDA_ERROR_INVALID_VALUE;
    if (prio > 0) prio = 0;
    if (prio < -5) prio = -5;
    sim_stream *s = stream_new(c, SK_USER, flags, prio);
    if (!s) return CUDA_ERROR_OUT_OF_MEMORY;
    sim_reg_add(s, T_STREAM);
    *ph = (CUstream)s;
    return CUDA_SUCCESS;
}
CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags) { return stream_create(phStream, Flags, 0); }
CUresult cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags, int priority) {
    return stream_create(phStream, flags, priority);
}

static CUresult stream_destroy(CUstream h) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    sim_stream *s = sim_reg_get(h, T_STREAM);
    if (!s || s->dead) return CUDA_ERROR_INVALID_HANDLE;
    sim_reg_del(s);
    pthread_mutex_lock(&g_mu);
    if (s->cap) sim_capture_stream_destroyed_locked(s);
    /* pending work still runs; the worker exits after it */
    stream_stop_locked(s);
    pthread_mutex_unlock(&g_mu);
    return CUDA_SUCCESS;
}
CUresult cuStreamDestroy(CUstream hStream) { return stream_destroy(hStream); }
CUresult cuStreamDestroy_v2(CUstream hStream) { return stream_destroy(hStream); }

static CUresult stream_sync(CUstream h, int ptds) {
    sim_stream *s;
    CUresult rc = sim_stream_resolve(h, ptds, &s);
    if (rc) return rc;
    if ((rc = sim_unsafe_call_check())) return rc;
    pthread_mutex_lock(&g_mu);
    if (s->cap) {
        sim_capture_invalidate_locked(s->cap);
        pthread_mutex_unlock(&g_mu);
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
    if (s->kind == SK_LEGACY) {
        sim_capture *c = sim_capture_blocking_in_ctx_locked(s->ctx);
        if (c) {
            sim_capture_invalidate_locked(c);
            pthread_mutex_unlock(&g_mu);
            return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
        }
    }
    uint64_t last = s->enqueued;
    pthread_mutex_unlock(&g_mu);
    sim_wait_seq(s, last);
    return sim_ctx_sticky(s->ctx); /* a fault in the work waited for */
}
CUresult cuStreamSynchronize(CUstream hStream) { return stream_sync(hStream, 0); }
CUresult cuStreamSynchronize_ptsz(CUstream hStream) { return stream_sync(hStream, 1); }

static CUresult stream_query(CUstream h, int ptds) {
    sim_stream *s;
    CUresult rc = sim_stream_resolve(h, ptds, &s);
    if (rc) return rc;
    if ((rc = sim_unsafe_call_check())) return rc;
    pthread_mutex_lock(&g_mu);
    if (s->cap) {
        sim_capture_invalidate_locked(s->cap);
        pthread_mutex_unlock(&g_mu);
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
    if (s->kind == SK_LEGACY) { /* as cuStreamSynchronize(legacy) (not recorded on a GPU) */
        sim_capture *c = sim_capture_blocking_in_ctx_locked(s->ctx);
        if (c) {
            sim_capture_invalidate_locked(c);
            pthread_mutex_unlock(&g_mu);
            return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
        }
    }
    uint64_t last = s->enqueued;
    pthread_mutex_unlock(&g_mu);
    return atomic_load(&s->completed) >= last ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}
CUresult cuStreamQuery(CUstream hStream) { return stream_query(hStream, 0); }
CUresult cuStreamQuery_ptsz(CUstream hStream) { return stream_query(hStream, 1); }

/* Seen on the GPU (H100, driver 580, docs/driver-rules.md): cuStreamGetFlags
 * on a stream that is being captured, from a thread whose interaction mode
 * the capture restricts, fails with _UNSUPPORTED and invalidates the capture. */
static CUresult stream_get_flags(CUstream h, unsigned *flags, int ptds) {
    sim_stream *s;
    CUresult rc = sim_stream_resolve(h, ptds, &s);
    if (rc) return rc;
    if (!flags) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    if (s->cap && sim_capture_forbids_unsafe_locked()) {
        pthread_mutex_unlock(&g_mu);
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
    pthread_mutex_unlock(&g_mu);
    *flags = s->flags;
    return CUDA_SUCCESS;
}
CUresult cuStreamGetFlags(CUstream hStream, unsigned int *flags) { return stream_get_flags(hStream, flags, 0); }
CUresult cuStreamGetFlags_ptsz(CUstream hStream, unsigned int *flags) { return stream_get_flags(hStream, flags, 1); }

static CUresult stream_get_prio(CUstream h, int *p, int ptds) {
    sim_stream *s;
    CUresult rc = sim_stream_resolve(h, ptds, &s);
    if (rc) return rc;
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    *p = s->priority;
    return CUDA_SUCCESS;
}
CUresult cuStreamGetPriority(CUstream hStream, int *priority) { return stream_get_prio(hStream, priority, 0); }
CUresult cuStreamGetPriority_ptsz(CUstream hStream, int *priority) { return stream_get_prio(hStream, priority, 1); }

/* Stream attributes: the ids the headers say are valid for streams. Set, they
 * apply to work submitted to the stream later (kcall_take_stream_attrs_locked);
 * the priority is the stream's priority (clamped like cuStreamCreateWithPriority's). */
static bool stream_attr_valid(CUstreamAttrID id) {
    switch ((int)id) {
    case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
    case CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY:
    case CU_LAUNCH_ATTRIBUTE_PRIORITY:
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
    case CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING: return true;
    default: return false;
    }
}

static CUresult stream_set_attr(CUstream h, CUstreamAttrID id, const CUstreamAttrValue *v, int ptds) {
    sim_stream *s;
    CUresult rc = sim_stream_resolve(h, ptds, &s);
    if (rc) return rc;
    if (!v || !stream_attr_valid(id)) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    if (id == CU_LAUNCH_ATTRIBUTE_PRIORITY)
        s->priority = v->priority > 0 ? 0 : v->priority < -5 ? -5 : v->priority;
    else
        s->attrs[id] = *v;
    pthread_mutex_unlock(&g_mu);
    return CUDA_SUCCESS;
}
CUresult cuStreamSetAttribute(CUstream hStream, CUstreamAttrID attr, const CUstreamAttrValue *value) {
    return stream_set_attr(hStream, attr, value, 0);
}
CUresult cuStreamSetAttribute_ptsz(CUstream hStream, CUstreamAttrID attr, const CUstreamAttrValue *value) {
    return stream_set_attr(hStream, attr, value, 1);
}

static CUresult stream_get_attr(CUstream h, CUstreamAttrID id, CUstreamAttrValue *v, int ptds) {
    sim_stream *s;
    CUresult rc = sim_stream_resolve(h, ptds, &s);
    if (rc) return rc;
    if (!v || !stream_attr_valid(id)) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    if (id == CU_LAUNCH_ATTRIBUTE_PRIORITY) {
        memset(v, 0, sizeof *v);
        v->priority = s->priority;
    } else {
        *v = s->attrs[id];
    }
    pthread_mutex_unlock(&g_mu);
    return CUDA_SUCCESS;
}
CUresult cuStreamGetAttribute(CUstream hStream, CUstreamAttrID attr, CUstreamAttrValue *value_out) {
    return stream_get_attr(hStream, attr, value_out, 0);
}
CUresult cuStreamGetAttribute_ptsz(CUstream hStream, CUstreamAttrID attr, CUstreamAttrValue *value_out) {
    return stream_get_attr(hStream, attr, value_out, 1);
}

/* Every stream attribute of src, the priority included, becomes dst's. */
static CUresult stream_copy_attrs(CUstream dst, CUstream src, int ptds) {
    sim_stream *d, *s;
    CUresult rc = sim_stream_resolve(dst, ptds, &d);
    if (rc || (rc = sim_stream_resolve(src, ptds, &s))) return rc;
    if (d->ctx != s->ctx) return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&g_mu);
    memcpy(d->attrs, s->attrs, sizeof d->attrs);
    d->priority = (int)s->priority;
    pthread_mutex_unlock(&g_mu);
    return CUDA_SUCCESS;
}
CUresult cuStreamCopyAttributes(CUstream dst, CUstream src) { return stream_copy_attrs(dst, src, 0); }
CUresult cuStreamCopyAttributes_ptsz(CUstream dst, CUstream src) { return stream_copy_attrs(dst, src, 1); }

static CUresult stream_get_ctx(CUstream h, CUcontext *pctx, int ptds) {
    sim_stream *s;
    CUresult rc = sim_stream_resolve(h, ptds, &s);
    if (rc) return rc;
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    *pctx = (CUcontext)s->ctx;
    return CUDA_SUCCESS;
}
CUresult cuStreamGetCtx(CUstream hStream, CUcontext *pctx) { return stream_get_ctx(hStream, pctx, 0); }
CUresult cuStreamGetCtx_ptsz(CUstream hStream, CUcontext *pctx) { return stream_get_ctx(hStream, pctx, 1); }
CUresult cuStreamGetCtx_v2(CUstream hStream, CUcontext *pCtx, CUgreenCtx *pGreenCtx) {
    if (pGreenCtx) *pGreenCtx = NULL;
    return stream_get_ctx(hStream, pCtx, 0);
}
CUresult cuStreamGetCtx_v2_ptsz(CUstream hStream, CUcontext *pCtx, CUgreenCtx *pGreenCtx) {
    if (pGreenCtx) *pGreenCtx = NULL;
    return stream_get_ctx(hStream, pCtx, 1);
}

static CUresult stream_get_id(CUstream h, unsigned long long *id, int ptds) {
    sim_stream *s;
    CUresult rc = sim_stream_resolve(h, ptds, &s);
    if (rc) return rc;
    if (!id) return CUDA_ERROR_INVALID_VALUE;
    *id = s->id;
    return CUDA_SUCCESS;
}
CUresult cuStreamGetId(CUstream hStream, unsigned long long *streamId) { return stream_get_id(hStream, streamId, 0); }
CUresult cuStreamGetId_ptsz(CUstream hStream, unsigned long long *streamId) { return stream_get_id(hStream, streamId, 1); }

static CUresult stream_get_device(CUstream h, CUdevice *d, int ptds) {
    sim_stream *s;
    CUresult rc = sim_stream_resolve(h, ptds, &s);
    if (rc) return rc;
    if (!d) return CUDA_ERROR_INVALID_VALUE;
    *d = s->ctx->dev;
    return CUDA_SUCCESS;
}
CUresult cuStreamGetDevice(CUstream hStream, CUdevice *device) { return stream_get_device(hStream, device, 0); }
CUresult cuStreamGetDevice_ptsz(CUstream hStream, CUdevice *device) { return stream_get_device(hStream, device, 1); }

static CUresult launch_host(CUstream h, CUhostFn fn, void *ud, int ptds) {
    sim_stream *s;
    CUresult rc = sim_stream_resolve(h, ptds, &s);
    if (rc) return rc;
    if (!fn) return CUDA_ERROR_INVALID_VALUE;
    sim_work w = {.kind = W_HOST};
    w.u.host.fn = fn;
    w.u.host.ud = ud;
    return submit(s, &w, 0);
}
CUresult cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData) { return launch_host(hStream, fn, userData, 0); }
CUresult cuLaunchHostFunc_ptsz(CUstream hStream, CUhostFn fn, void *userData) { return launch_host(hStream, fn, userData, 1); }

static CUresult add_callback(CUstream h, CUstreamCallback cb, void *ud, unsigned flags, int ptds) {
    sim_stream *s;
    CUresult rc = sim_stream_resolve(h, ptds, &s);
    if (rc) return rc;
    if (!cb || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    sim_work w = {.kind = W_CALLBACK};
    w.u.cb.fn = cb;
    w.u.cb.ud = ud;
    w.u.cb.handle = h;
    return submit(s, &w, SUB_NOCAPTURE);
}
CUresult cuStreamAddCallback(CUstream hStream, CUstreamCallback callback, void *userData, unsigned int flags) {
    return add_callback(hStream, callback, userData, flags, 0);
}
CUresult cuStreamAddCallback_ptsz(CUstream hStream, CUstreamCallback callback, void *userData, unsigned int flags) {
    return add_callback(hStream, callback, userData, flags, 1);
}

/* ------------------------------------------------------------------------ */
/* memory                                                                   */
/* ------------------------------------------------------------------------ */
enum { A_DEVICE = 1, A_HOST, A_REGISTERED, A_MANAGED };
typedef struct sim_alloc { uintptr_t base; size_t size; int kind; unsigned flags; sim_ctx *ctx; unsigned long long id; } sim_alloc;
static pthread_mutex_t g_alloc_mu = PTHREAD_MUTEX_INITIALIZER;
static sim_alloc *g_allocs;
static int g_nallocs, g_capallocs;
static size_t g_dev_used;

static size_t env_bytes(const char *name, size_t dflt) {
    const char *v = getenv(name);
    return v && *v ? (size_t)strtoull(v, NULL, 0) : dflt;
}

/* These settings are read once, lazily, from whichever thread asks first: the
 * cached values are atomics (two threads racing both read the same variable). */
size_t sim_total_mem(void) {
    static size_t total;
    size_t n = __atomic_load_n(&total, __ATOMIC_RELAXED);
    if (!n) __atomic_store_n(&total, n = env_bytes("SIMCUDA_DEVICE_MEMORY", SIM_TOTAL_MEM), __ATOMIC_RELAXED);
    return n;
}

size_t sim_exec_bytes(void) {
    static size_t cached = (size_t)-1;
    size_t n = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (n == (size_t)-1) {
        n = env_bytes("SIMCUDA_GRAPH_EXEC_BYTES", getenv("SIMCUDA_DEVICE_MEMORY") ? 1u << 20 : 0);
        __atomic_store_n(&cached, n, __ATOMIC_RELAXED);
    }
    return n;
}

int sim_dev_reserve(size_t n) {
    pthread_mutex_lock(&g_alloc_mu);
    int full = n > sim_total_mem() - g_dev_used;
    if (!full) g_dev_used += n;
    pthread_mutex_unlock(&g_alloc_mu);
    return full;
}

void sim_dev_unreserve(size_t n) {
    pthread_mutex_lock(&g_alloc_mu);
    g_dev_used -= n;
    pthread_mutex_unlock(&g_alloc_mu);
}

void sim_dev_release(void *p) {
    static int cached = -1;
    int keep = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (keep < 0) __atomic_store_n(&cached, keep = env_bytes("SIMCUDA_NO_ADDRESS_REUSE", 0) != 0, __ATOMIC_RELAXED);
    if (!keep) free(p);
}

static size_t dev_used(void) {
    pthread_mutex_lock(&g_alloc_mu);
    size_t n = g_dev_used;
    pthread_mutex_unlock(&g_alloc_mu);
    return n;
}

static int alloc_add(void *p, size_t n, int kind, unsigned flags, sim_ctx *ctx) {
    pthread_mutex_lock(&g_alloc_mu);
    if (g_nallocs == g_capallocs) {
        int ncap = g_capallocs ? g_capallocs * 2 : 64;
        sim_alloc *v = realloc(g_allocs, (size_t)ncap * sizeof *v);
        if (!v) { pthread_mutex_unlock(&g_alloc_mu); return -1; }
        g_allocs = v;
        g_capallocs = ncap;
    }
    g_allocs[g_nallocs++] = (sim_alloc){(uintptr_t)p, n, kind, flags, ctx, atomic_fetch_add(&g_ids, 1) + 1};
    if (kind == A_DEVICE || kind == A_MANAGED) g_dev_used += n;
    pthread_mutex_unlock(&g_alloc_mu);
    return 0;
}

/* find the allocation containing [p, p+n); copies it out */
static bool alloc_find(const void *p, size_t n, sim_alloc *out) {
    uintptr_t a = (uintptr_t)p;
    bool found = false;
    pthread_mutex_lock(&g_alloc_mu);
    for (int i = g_nallocs - 1; i >= 0; i--) {
        sim_alloc *e = &g_allocs[i];
        if (a >= e->base && a - e->base < (e->size ? e->size : 1) && (n == 0 || a + n <= e->base + e->size)) {
            if (out) *out = *e;
            found = true;
            break;
        }
    }
    pthread_mutex_unlock(&g_alloc_mu);
    return found;
}

/* remove the allocation starting at p of one of the kinds (mask); -1 if none */
static int alloc_remove(const void *p, unsigned kindmask, sim_alloc *out) {
    int r = -1;
    pthread_mutex_lock(&g_alloc_mu);
    for (int i = 0; i < g_nallocs; i++) {
        if (g_allocs[i].base == (uintptr_t)p && (kindmask & (1u << g_allocs[i].kind))) {
            if (out) *out = g_allocs[i];
            if (g_allocs[i].kind == A_DEVICE || g_allocs[i].kind == A_MANAGED) g_dev_used -= g_allocs[i].size;
            g_allocs[i] = g_allocs[--g_nallocs];
            r = 0;
            break;
        }
    }
    pthread_mutex_unlock(&g_alloc_mu);
    return r;
}

bool sim_is_pinned(const void *p, size_t n) { return alloc_find(p, n, NULL); }

int sim_mem_kind(const void *p, size_t n) {
    sim_alloc a;
    if (!alloc_find(p, n, &a)) return SIM_MEM_UNKNOWN;
    return a.kind == A_DEVICE || a.kind == A_MANAGED ? SIM_MEM_DEVICE : SIM_MEM_HOST;
}

static void *dev_malloc(size_t n) {
    size_t sz = (n + 255) & ~(size_t)255;
    void *p = aligned_alloc(256, sz);
    /* fresh device memory holds garbage on a GPU: make reads of
     * uninitialised memory visible */
    if (p) memset(p, 0xA5, sz);
    return p;
}

CUresult sim_unsafe_call_check(void) {
    pthread_mutex_lock(&g_mu);
    bool bad = sim_capture_forbids_unsafe_locked();
    pthread_mutex_unlock(&g_mu);
    return bad ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : CUDA_SUCCESS;
}

CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize) {
    sim_ctx *c;
    CUresult rc = sim_require_ctx(&c);
    if (rc) return rc;
    if (!dptr || bytesize == 0) return CUDA_ERROR_INVALID_VALUE;
    if ((rc = sim_unsafe_call_check())) return rc;
    if (bytesize > sim_total_mem() - dev_used()) return CUDA_ERROR_OUT_OF_MEMORY;
    void *p = dev_malloc(bytesize);
    if (!p) return CUDA_ERROR_OUT_OF_MEMORY;
    if (alloc_add(p, bytesize, A_DEVICE, 0, c)) { free(p); return CUDA_ERROR_OUT_OF_MEMORY; }
    *dptr = (CUdeviceptr)(uintptr_t)p;
    return CUDA_SUCCESS;
}

CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags) {
    sim_ctx *c;
    CUresult rc = sim_require_ctx(&c);
    if (rc) return rc;
    if (!dptr || bytesize == 0) return CUDA_ERROR_INVALID_VALUE;
    if ((rc = sim_unsafe_call_check())) return rc;
    void *p = dev_malloc(bytesize);
    if (!p) return CUDA_ERROR_OUT_OF_MEMORY;
    if (alloc_add(p, bytesize, A_MANAGED, flags, c)) { free(p); return CUDA_ERROR_OUT_OF_MEMORY; }
    *dptr = (CUdeviceptr)(uintptr_t)p;
    return CUDA_SUCCESS;
}

CUresult cuMemFree_v2(CUdeviceptr dptr) {
    sim_ctx *c;
    CUresult rc = sim_require_ctx(&c);
    if (rc) return rc;
    if (dptr == 0) return CUDA_SUCCESS;
    if ((rc = sim_unsafe_call_check())) return rc;
    sim_alloc a;
    if (!alloc_find((void *)(uintptr_t)dptr, 0, &a) || a.base != dptr || (a.kind != A_DEVICE && a.kind != A_MANAGED))
        return CUDA_ERROR_INVALID_VALUE;
    /* like the real driver, freeing waits for work that may still use it */
    ctx_sync_all(a.ctx);
    if (alloc_remove((void *)(uintptr_t)dptr, (1u << A_DEVICE) | (1u << A_MANAGED), NULL))
        return CUDA_ERROR_INVALID_VALUE;
    sim_dev_release((void *)(uintptr_t)dptr);
    return CUDA_SUCCESS;
}

CUresult cuMemGetInfo_v2(size_t *free_, size_t *total) {
    CUresult rc = sim_require_ctx(NULL);
    if (rc) return rc;
    if (!free_ || !total) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_alloc_mu);
    *free_ = sim_total_mem() - g_dev_used;
    pthread_mutex_unlock(&g_alloc_mu);
    *total = sim_total_mem();
    return CUDA_SUCCESS;
}

static CUresult host_alloc(void **pp, size_t n, unsigned flags) {
    sim_ctx *c;
    CUresult rc = sim_require_ctx(&c);
    if (rc) return rc;
    if (!pp || n == 0) return CUDA_ERROR_INVALID_VALUE;
    if ((rc = sim_unsafe_call_check())) return rc;
    void *p = aligned_alloc(4096, (n + 4095) & ~(size_t)4095);
    if (!p) return CUDA_ERROR_OUT_OF_MEMORY;
    if (alloc_add(p, n, A_HOST, flags, c)) { free(p); return CUDA_ERROR_OUT_OF_MEMORY; }
    *pp = p;
    return CUDA_SUCCESS;
}
CUresult cuMemAllocHost_v2(void **pp, size_t bytesize) { return host_alloc(pp, bytesize, 0); }
CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags) { return host_alloc(pp, bytesize, Flags); }

CUresult cuMemFreeHost(void *p) {
    sim_ctx *c;
    CUresult rc = sim_require_ctx(&c);
    if (rc) return rc;
    if ((rc = sim_unsafe_call_check())) return rc; /* like cuMemFree (not recorded on a GPU) */
    sim_alloc a;
    if (!alloc_find(p, 0, &a) || a.base != (uintptr_t)p || a.kind != A_HOST) return CUDA_ERROR_INVALID_VALUE;
    ctx_sync_all(a.ctx);
    if (alloc_remove(p, 1u << A_HOST, NULL)) return CUDA_ERROR_INVALID_VALUE;
    free(p);
    return CUDA_SUCCESS;
}

CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *pdptr, void *p, unsigned int Flags) {
    CUresult rc = sim_require_ctx(NULL);
    if (rc) return rc;
    if (!pdptr || Flags != 0) return CUDA_ERROR_INVALID_VALUE;
    sim_alloc a;
    if (!alloc_find(p, 0, &a) || (a.kind != A_HOST && a.kind != A_REGISTERED)) return CUDA_ERROR_INVALID_VALUE;
    *pdptr = (CUdeviceptr)(uintptr_t)p;
    return CUDA_SUCCESS;
}

CUresult cuMemHostGetFlags(unsigned int *pFlags, void *p) {
    CUresult rc = sim_require_ctx(NULL);
    if (rc) return rc;
    sim_alloc a;
    if (!pFlags || !alloc_find(p, 0, &a) || a.kind != A_HOST) return CUDA_ERROR_INVALID_VALUE;
    *pFlags = a.flags;
    return CUDA_SUCCESS;
}

CUresult cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int Flags) {
    sim_ctx *c;
    CUresult rc = sim_require_ctx(&c);
    if (rc) return rc;
    if (!p || bytesize == 0) return CUDA_ERROR_INVALID_VALUE;
    if (alloc_find(p, 1, NULL)) return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
    if (alloc_add(p, bytesize, A_REGISTERED, Flags, c)) return CUDA_ERROR_OUT_OF_MEMORY;
    return CUDA_SUCCESS;
}
CUresult cuMemHostRegister(void *p, size_t bytesize, unsigned int Flags) { return cuMemHostRegister_v2(p, bytesize, Flags); }

CUresult cuMemHostUnregister(void *p) {
    sim_ctx *c;
    CUresult rc = sim_require_ctx(&c);
    if (rc) return rc;
    sim_alloc a;
    if (!alloc_find(p, 0, &a) || a.kind != A_REGISTERED) return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
    ctx_sync_all(a.ctx);
    alloc_remove(p, 1u << A_REGISTERED, NULL);
    return CUDA_SUCCESS;
}

CUresult cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr) {
    CUresult rc = sim_require_ctx(NULL);
    if (rc) return rc;
    sim_alloc a;
    if (!alloc_find((void *)(uintptr_t)dptr, 0, &a) || (a.kind != A_DEVICE && a.kind != A_MANAGED))
        return CUDA_ERROR_NOT_FOUND;
    if (pbase) *pbase = a.base;
    if (psize) *psize = a.size;
    return CUDA_SUCCESS;
}

CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    if (!data) return CUDA_ERROR_INVALID_VALUE;
    sim_alloc a;
    if (!alloc_find((void *)(uintptr_t)ptr, 0, &a)) return CUDA_ERROR_INVALID_VALUE;
    switch (attribute) {
    case CU_POINTER_ATTRIBUTE_CONTEXT: *(CUcontext *)data = (CUcontext)a.ctx; break;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
        *(CUmemorytype *)data = (a.kind == A_DEVICE || a.kind == A_MANAGED) ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
        break;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: *(CUdeviceptr *)data = ptr; break;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
        if (a.kind == A_DEVICE) return CUDA_ERROR_INVALID_VALUE;
        *(void **)data = (void *)(uintptr_t)ptr;
        break;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED: *(unsigned *)data = a.kind == A_MANAGED; break;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: *(int *)data = a.ctx ? (int)a.ctx->dev : 0; break;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: *(CUdeviceptr *)data = a.base; break;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE: *(size_t *)data = a.size; break;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID: *(unsigned long long *)data = a.id; break;
    case CU_POINTER_ATTRIBUTE_MAPPED: *(int *)data = 1; break;
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS: *(int *)data = 1; break;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

/* stream-ordered allocation: allocated at call time, freed on the worker */
static CUresult mem_alloc_async(CUdeviceptr *dptr, size_t n, CUstream h, int ptds) {
    sim_stream *s;
    CUresult rc = sim_stream_resolve(h, ptds, &s);
    if (rc) return rc;
    if (!dptr || n == 0) return CUDA_ERROR_INVALID_VALUE;
    if (n > sim_total_mem() - dev_used()) return CUDA_ERROR_OUT_OF_MEMORY; /* the pool cannot grow */
    void *p = dev_malloc(n);
    if (!p) return CUDA_ERROR_OUT_OF_MEMORY;
    if (alloc_add(p, n, A_DEVICE, 0, s->ctx)) { free(p); return CUDA_ERROR_OUT_OF_MEMORY; }
    pthread_mutex_lock(&g_mu);
    if (s->cap) {
        /* captured: a graph allocation. The address is fixed now and stays
         * valid (the memory is never given back in the simulation); the
         * node itself does nothing when the graph runs. */
        sim_work w = {.kind = W_MEMALLOC};
        CUresult rc2;
        sim_capture_add_locked(s, &w, &rc2);
        pthread_mutex_unlock(&g_mu);
        if (rc2) return rc2;
    } else {
        pthread_mutex_unlock(&g_mu);
    }
    *dptr = (CUdeviceptr)(uintptr_t)p;
    return CUDA_SUCCESS;
}
CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream) { return mem_alloc_async(dptr, bytesize, hStream, 0); }
CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream) { return mem_alloc_async(dptr, bytesize, hStream, 1); }

static CUresult mem_free_async(CUdeviceptr dptr, CUstream h, int ptds) {
    sim_stream *s;
    CUresult rc = sim_stream_resolve(h, ptds, &s);
    if (rc) return rc;
    sim_alloc a;
    if (!alloc_find((void *)(uintptr_t)dptr, 0, &a) || a.base != dptr || a.kind != A_DEVICE) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    if (s->cap) { /* captured: a graph free node; the memory stays (see above) */
        sim_work w = {.kind = W_MEMFREE};
        CUresult rc2;
        sim_capture_add_locked(s, &w, &rc2);
        pthread_mutex_unlock(&g_mu);
        return rc2;
    }
    pthread_mutex_unlock(&g_mu);
    /* unregister now (the address may not be used after this call in stream
     * order), release the memory when the stream reaches the free */
    if (alloc_remove((void *)(uintptr_t)dptr, 1u << A_DEVICE, NULL)) return CUDA_ERROR_INVALID_VALUE;
    sim_work w = {.kind = W_FREE};
    w.u.fr.p = (void *)(uintptr_t)dptr;
    return submit(s, &w, SUB_NOCAPTURE);
}
CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream) { return mem_free_async(dptr, hStream, 0); }
CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream) { return mem_free_async(dptr, hStream, 1); }

/* ------------------------------------------------------------------------ */
/* copies and memsets                                                       */
/* ------------------------------------------------------------------------ */
/* Blocking copy: ordered like legacy-stream (or per-thread-stream) work and
 * returns when done. */
static CUresult copy_sync(void *dst, const void *src, size_t n, int ptds) {
    sim_stream *s;
    CUresult rc = sim_require_ctx(NULL);
    if (rc) return rc;
    if (n == 0) return CUDA_SUCCESS;
    if (!dst || !src) return CUDA_ERROR_INVALID_VALUE;
    /* not a "potentially unsafe" call during capture (observed): it only
     * fails when it would synchronise with a capturing stream */
    if ((rc = sim_stream_resolve(NULL, ptds, &s))) return rc;
    sim_work w = {.kind = W_MEMCPY};
    w.u.cpy.dst = dst;
    w.u.cpy.src = src;
    w.u.cpy.n = n;
    return submit(s, &w, SUB_WAIT | SUB_NOCAPTURE);
}

#define P(x) ((void *)(uintptr_t)(x))
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n) { return copy_sync(P(d), s, n, 0); }
CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr d, const void *s, size_t n) { return copy_sync(P(d), s, n, 1); }
CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n) { return copy_sync(d, P(s), n, 0); }
CUresult cuMemcpyDtoH_v2_ptds(void *d, CUdeviceptr s, size_t n) { return copy_sync(d, P(s), n, 1); }
CUresult cuMemcpyDtoD_v2(CUdeviceptr d, CUdeviceptr s, size_t n) { return copy_sync(P(d), P(s), n, 0); }
CUresult cuMemcpyDtoD_v2_ptds(CUdeviceptr d, CUdeviceptr s, size_t n) { return copy_sync(P(d), P(s), n, 1); }
CUresult cuMemcpy(CUdeviceptr d, CUdeviceptr s, size_t n) { return copy_sync(P(d), P(s), n, 0); }
CUresult cuMemcpy_ptds(CUdeviceptr d, CUdeviceptr s, size_t n) { return copy_sync(P(d), P(s), n, 1); }

/* Asynchronous copy. Like the real driver: a pageable (unregistered) host
 * source is staged at call time, so the caller may reuse it on return; a
 * pageable host destination makes the call return only after the copy. */
/* An end that starts inside device memory but runs past its allocation: the
 * driver refuses such a copy at the call (CUDA_ERROR_INVALID_VALUE; believed
 * from cuda.h's "invalid value" for ranges outside an allocation, not yet
 * probed on a GPU). */
static bool past_device_alloc(const void *p, size_t n) {
    sim_alloc a;
    return alloc_find(p, 0, &a) && (a.kind == A_DEVICE || a.kind == A_MANAGED) &&
           (uintptr_t)p + n > a.base + a.size;
}

static CUresult copy_async(void *dst, const void *src, size_t n, CUstream h, int ptds) {
    sim_stream *s;
    CUresult rc = sim_stream_resolve(h, ptds, &s);
    if (rc) return rc;
    if (n == 0) return CUDA_SUCCESS;
    if (!dst || !src) return CUDA_ERROR_INVALID_VALUE;
    if (past_device_alloc(dst, n) || past_device_alloc(src, n)) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    bool capturing = s->cap != NULL;
    pthread_mutex_unlock(&g_mu);
    sim_work w = {.kind = W_MEMCPY};
    w.u.cpy.dst = dst;
    w.u.cpy.src = src;
    w.u.cpy.n = n;
    int flags = 0;
    if (!capturing) {
        if (!sim_is_pinned(src, n)) {
            void *st = malloc(n);
            if (!st) return CUDA_ERROR_OUT_OF_MEMORY;
            memcpy(st, src, n);
            w.u.cpy.staged = st;
        }
        if (!sim_is_pinned(dst, n)) flags |= SUB_WAIT;
    }
    return submit(s, &w, flags);
}
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *s, size_t n, CUstream h) { return copy_async(P(d), s, n, h, 0); }
CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr d, const void *s, size_t n, CUstream h) { return copy_async(P(d), s, n, h, 1); }
CUresult cuMemcpyDtoHAsync_v2(void *d, CUdeviceptr s, size_t n, CUstream h) { return copy_async(d, P(s), n, h, 0); }
CUresult cuMemcpyDtoHAsync_v2_ptsz(void *d, CUdeviceptr s, size_t n, CUstream h) { return copy_async(d, P(s), n, h, 1); }
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream h) { return copy_async(P(d), P(s), n, h, 0); }
CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream h) { return copy_async(P(d), P(s), n, h, 1); }
CUresult cuMemcpyAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream h) { return copy_async(P(d), P(s), n, h, 0); }
CUresult cuMemcpyAsync_ptsz(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream h) { return copy_async(P(d), P(s), n, h, 1); }

/* memsets are asynchronous with respect to the host, also the "synchronous"
 * ones (they are ordered on the legacy or per-thread stream) */
static CUresult memset_any(CUdeviceptr d, unsigned value, unsigned elsize, size_t n, CUstream h, int ptds, bool sync_api) {
    sim_stream *s;
    CUresult rc = sim_stream_resolve(h, ptds, &s);
    if (rc) return rc;
    if (n == 0) return CUDA_SUCCESS;
    if (!d || (d % elsize)) return CUDA_ERROR_INVALID_VALUE;
    sim_work w = {.kind = W_MEMSET};
    w.u.set.dst = P(d);
    w.u.set.value = value;
    w.u.set.elsize = elsize;
    w.u.set.width = n;
    w.u.set.height = 1;
    w.u.set.pitch = n * elsize;
    return submit(s, &w, sync_api ? SUB_NOCAPTURE : 0);
}
CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n) { return memset_any(d, v, 1, n, NULL, 0, true); }
CUresult cuMemsetD8_v2_ptds(CUdeviceptr d, unsigned char v, size_t n) { return memset_any(d, v, 1, n, NULL, 1, true); }
CUresult cuMemsetD16_v2(CUdeviceptr d, unsigned short v, size_t n) { return memset_any(d, v, 2, n, NULL, 0, true); }
CUresult cuMemsetD16_v2_ptds(CUdeviceptr d, unsigned short v, size_t n) { return memset_any(d, v, 2, n, NULL, 1, true); }
CUresult cuMemsetD32_v2(CUdeviceptr d, unsigned int v, size_t n) { return memset_any(d, v, 4, n, NULL, 0, true); }
CUresult cuMemsetD32_v2_ptds(CUdeviceptr d, unsigned int v, size_t n) { return memset_any(d, v, 4, n, NULL, 1, true); }
CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream h) { return memset_any(d, v, 1, n, h, 0, false); }
CUresult cuMemsetD8Async_ptsz(CUdeviceptr d, unsigned char v, size_t n, CUstream h) { return memset_any(d, v, 1, n, h, 1, false); }
CUresult cuMemsetD16Async(CUdeviceptr d, unsigned short v, size_t n, CUstream h) { return memset_any(d, v, 2, n, h, 0, false); }
CUresult cuMemsetD16Async_ptsz(CUdeviceptr d, unsigned short v, size_t n, CUstream h) { return memset_any(d, v, 2, n, h, 1, false); }
CUresult cuMemsetD32Async(CUdeviceptr d, unsigned int v, size_t n, CUstream h) { return memset_any(d, v, 4, n, h, 0, false); }
CUresult cuMemsetD32Async_ptsz(CUdeviceptr d, unsigned int v, size_t n, CUstream h) { return memset_any(d, v, 4, n, h, 1, false); }

/* 2D memsets: Height rows of Width elements, dstPitch bytes apart. Like
 * the 1D ones, a destination not aligned to the element size is refused at
 * the call (cuda.h: "dstDevice ... must be two/four byte aligned"), and so
 * is a pitch shorter than a row when there are several rows (believed, not
 * probed on a GPU). */
static CUresult memset2d_any(CUdeviceptr d, size_t pitch, unsigned value, unsigned elsize, size_t width, size_t height,
                             CUstream h, int ptds, bool sync_api) {
    sim_stream *s;
    CUresult rc = sim_stream_resolve(h, ptds, &s);
    if (rc) return rc;
    if (width == 0 || height == 0) return CUDA_SUCCESS;
    if (!d || (d % elsize) || (height > 1 && pitch < width * elsize)) return CUDA_ERROR_INVALID_VALUE;
    sim_work w = {.kind = W_MEMSET};
    w.u.set.dst = P(d);
    w.u.set.value = value;
    w.u.set.elsize = elsize;
    w.u.set.width = width;
    w.u.set.height = height;
    w.u.set.pitch = height > 1 ? pitch : width * elsize;
    return submit(s, &w, sync_api ? SUB_NOCAPTURE : 0);
}
#define MEMSET2D(bits, type, el)                                                                                   \
    CUresult cuMemsetD2D##bits##_v2(CUdeviceptr d, size_t p, type v, size_t w, size_t h) {                         \
        return memset2d_any(d, p, v, el, w, h, NULL, 0, true);                                                     \
    }                                                                                                              \
    CUresult cuMemsetD2D##bits##_v2_ptds(CUdeviceptr d, size_t p, type v, size_t w, size_t h) {                    \
        return memset2d_any(d, p, v, el, w, h, NULL, 1, true);                                                     \
    }                                                                                                              \
    CUresult cuMemsetD2D##bits##Async(CUdeviceptr d, size_t p, type v, size_t w, size_t h, CUstream s) {           \
        return memset2d_any(d, p, v, el, w, h, s, 0, false);                                                       \
    }                                                                                                              \
    CUresult cuMemsetD2D##bits##Async_ptsz(CUdeviceptr d, size_t p, type v, size_t w, size_t h, CUstream s) {      \
        return memset2d_any(d, p, v, el, w, h, s, 1, false);                                                       \
    }
MEMSET2D(8, unsigned char, 1)
MEMSET2D(16, unsigned short, 2)
MEMSET2D(32, unsigned int, 4)
#undef MEMSET2D

/* ------------------------------------------------------------------------ */
/* work items                                                               */
/* ------------------------------------------------------------------------ */
void sim_work_run(sim_work *w, sim_stream *s, bool in_graph, int prio) {
    switch (w->kind) {
    case W_KERNEL:
        sim_kcall_run(&w->u.k);
        if (sim_kcall_is_updater(&w->u.k)) { /* encore's own, not the program's: counted apart */
            atomic_fetch_add(&g_stat_updater_kernels, 1);
            break;
        }
        atomic_fetch_add(&g_stat_kernels, 1);
        if (in_graph) atomic_fetch_add(&g_stat_graph_kernels, 1);
        if (prio) {
            atomic_fetch_add(&g_stat_prio_kernels, 1);
            atomic_fetch_add(&g_stat_prio_sum, prio);
        }
        if (w->u.k.apw_bytes) {
            atomic_fetch_add(&g_stat_apw_kernels, 1);
            atomic_fetch_add(&g_stat_apw_bytes, w->u.k.apw_bytes);
        }
        if (w->u.k.sync_domain) atomic_fetch_add(&g_stat_domain_kernels, 1);
        break;
    case W_MEMCPY:
        memmove(w->u.cpy.dst, w->u.cpy.staged ? w->u.cpy.staged : w->u.cpy.src, w->u.cpy.n);
        break;
    case W_MEMSET: {
        for (size_t y = 0; y < w->u.set.height; y++) {
            unsigned char *row = w->u.set.dst + y * w->u.set.pitch;
            size_t n = w->u.set.width;
            if (w->u.set.elsize == 1) memset(row, (int)(w->u.set.value & 0xff), n);
            else if (w->u.set.elsize == 2)
                for (size_t i = 0; i < n; i++) ((uint16_t *)row)[i] = (uint16_t)w->u.set.value;
            else
                for (size_t i = 0; i < n; i++) ((uint32_t *)row)[i] = w->u.set.value;
        }
        break;
    }
    case W_HOST: w->u.host.fn(w->u.host.ud); break;
    case W_CALLBACK: w->u.cb.fn(w->u.cb.handle, CUDA_SUCCESS, w->u.cb.ud); break;
    case W_EVENT: {
        sim_event *e = w->u.ev.ev;
        pthread_mutex_lock(&e->mu);
        if (e->gen == w->u.ev.gen) {
            e->time_ms = now_ms();
            e->time_valid = true;
        }
        pthread_mutex_unlock(&e->mu);
        break;
    }
    case W_FREE: sim_dev_release(w->u.fr.p); break;
    case W_GRAPH: sim_gsnap_run(w->u.graph.snap, s); break;
    default: break;
    }
}

void sim_work_release(sim_work *w) {
    switch (w->kind) {
    case W_KERNEL:
        free(w->u.k.argbuf);
        free(w->u.k.kparams);
        w->u.k.argbuf = NULL;
        w->u.k.kparams = NULL;
        break;
    case W_MEMCPY: free(w->u.cpy.staged); w->u.cpy.staged = NULL; break;
    case W_EVENT:
    case W_EVWAIT: sim_event_unref(w->u.ev.ev); w->u.ev.ev = NULL; break;
    case W_GRAPH: sim_gsnap_free(w->u.graph.snap); w->u.graph.snap = NULL; break;
    default: break;
    }
}

int sim_work_copy(sim_work *dst, const sim_work *src) {
    *dst = *src;
    switch (src->kind) {
    case W_KERNEL: {
        const sim_kcall *k = &src->u.k;
        dst->u.k.argbuf = malloc(k->argsize ? k->argsize : 1);
        dst->u.k.kparams = calloc((size_t)(k->func->nparams ? k->func->nparams : 1), sizeof(void *));
        if (!dst->u.k.argbuf || !dst->u.k.kparams) {
            free(dst->u.k.argbuf);
            free(dst->u.k.kparams);
            dst->kind = W_NOP;
            return -1;
        }
        if (k->argsize) memcpy(dst->u.k.argbuf, k->argbuf, k->argsize);
        for (int i = 0; i < k->func->nparams; i++) dst->u.k.kparams[i] = dst->u.k.argbuf + k->func->offsets[i];
        break;
    }
    case W_MEMCPY:
        if (src->u.cpy.staged) {
            dst->u.cpy.staged = malloc(src->u.cpy.n);
            if (!dst->u.cpy.staged) { dst->kind = W_NOP; return -1; }
            memcpy(dst->u.cpy.staged, src->u.cpy.staged, src->u.cpy.n);
        }
        break;
    case W_EVENT:
    case W_EVWAIT: atomic_fetch_add(&src->u.ev.ev->refs, 1); break;
    case W_GRAPH: dst->kind = W_NOP; return -1;
    default: break;
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* events                                                                   */
/* ------------------------------------------------------------------------ */
#define EVENT_MAGIC 0x45564e54

void sim_event_unref(sim_event *e) {
    if (!e) return;
    if (atomic_fetch_sub(&e->refs, 1) == 1) {
        pthread_mutex_destroy(&e->mu);
        free(e->cnodes);
        free(e);
    }
}

static sim_event *event_get(CUevent h) {
    sim_event *e = sim_reg_get(h, T_EVENT);
    return (e && e->magic == EVENT_MAGIC) ? e : NULL;
}
sim_event *sim_event_get(CUevent h) { return event_get(h); }

CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags) {
    sim_ctx *ctx;
    CUresult rc = sim_require_ctx(&ctx);
    if (rc) return rc;
    unsigned ok = CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS;
    if (!phEvent || (Flags & ~ok)) return CUDA_ERROR_INVALID_VALUE;
    if ((Flags & CU_EVENT_INTERPROCESS) && !(Flags & CU_EVENT_DISABLE_TIMING)) return CUDA_ERROR_INVALID_VALUE;
    sim_event *e = calloc(1, sizeof *e);
    if (!e) return CUDA_ERROR_OUT_OF_MEMORY;
    e->magic = EVENT_MAGIC;
    e->ctx = ctx;
    e->flags = Flags;
    atomic_store(&e->refs, 1);
    pthread_mutex_init(&e->mu, NULL);
    sim_reg_add(e, T_EVENT);
    *phEvent = (CUevent)e;
    return CUDA_SUCCESS;
}

static CUresult event_destroy(CUevent h) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    sim_event *e = event_get(h);
    if (!e) return CUDA_ERROR_INVALID_HANDLE;
    sim_reg_del(e);
    pthread_mutex_lock(&g_mu);
    e->magic = 0;
    pthread_mutex_unlock(&g_mu);
    sim_event_unref(e);
    return CUDA_SUCCESS;
}
CUresult cuEventDestroy(CUevent hEvent) { return event_destroy(hEvent); }
CUresult cuEventDestroy_v2(CUevent hEvent) { return event_destroy(hEvent); }

static CUresult event_record(CUevent h, CUstream hs, unsigned flags, int ptds) {
    sim_stream *s;
    CUresult rc = sim_stream_resolve(hs, ptds, &s);
    if (rc) return rc;
    sim_event *e = event_get(h);
    if (!e) return CUDA_ERROR_INVALID_HANDLE;
    if (flags & ~(unsigned)CU_EVENT_RECORD_EXTERNAL) return CUDA_ERROR_INVALID_VALUE;
    if (e->ctx && e->ctx->dev != s->ctx->dev) return CUDA_ERROR_INVALID_HANDLE; /* sim_multidev.c */
    pthread_mutex_lock(&g_mu);
    if (s->kind == SK_LEGACY) {
        sim_capture *c = sim_capture_blocking_in_ctx_locked(s->ctx);
        if (c) {
            sim_capture_invalidate_locked(c);
            pthread_mutex_unlock(&g_mu);
            return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
        }
    }
    if (s->cap) {
        rc = (flags & CU_EVENT_RECORD_EXTERNAL) ? sim_capture_event_record_external_locked(s, e)
                                                : sim_capture_event_record_locked(s, e);
        pthread_mutex_unlock(&g_mu);
        return rc;
    }
    if (flags & CU_EVENT_RECORD_EXTERNAL) { /* documented: invalid outside a capture */
        pthread_mutex_unlock(&g_mu);
        return CUDA_ERROR_INVALID_VALUE;
    }
    pthread_mutex_lock(&e->mu);
    uint64_t gen = ++e->gen;
    e->time_valid = false;
    pthread_mutex_unlock(&e->mu);
    sim_work w = {.kind = W_EVENT};
    w.u.ev.ev = e;
    w.u.ev.gen = gen;
    atomic_fetch_add(&e->refs, 1);
    uint64_t seq = 0;
    rc = sim_enqueue_locked(s, &w, NULL, 0, &seq);
    if (rc) {
        atomic_fetch_sub(&e->refs, 1);
    } else {
        pthread_mutex_lock(&e->mu);
        sim_event_mark_recorded_locked(e, s, seq);
        pthread_mutex_unlock(&e->mu);
    }
    pthread_mutex_unlock(&g_mu);
    return rc;
}

void sim_event_mark_recorded_locked(sim_event *e, sim_stream *s, uint64_t seq) {
    e->s = s;
    e->seq = seq;
    e->recorded = true;
    e->cap_id = 0;
    e->ncnodes = 0;
}
CUresult cuEventRecord(CUevent hEvent, CUstream hStream) { return event_record(hEvent, hStream, 0, 0); }
CUresult cuEventRecord_ptsz(CUevent hEvent, CUstream hStream) { return event_record(hEvent, hStream, 0, 1); }
CUresult cuEventRecordWithFlags(CUevent hEvent, CUstream hStream, unsigned int flags) { return event_record(hEvent, hStream, flags, 0); }
CUresult cuEventRecordWithFlags_ptsz(CUevent hEvent, CUstream hStream, unsigned int flags) { return event_record(hEvent, hStream, flags, 1); }

/* Snapshot of an event's eager record (*s NULL: never recorded). An event
 * last recorded inside a capture answers, as observed on driver 580:
 * CUDA_ERROR_CAPTURED_EVENT while that capture goes on (and the capture is
 * invalidated), CUDA_ERROR_INVALID_VALUE once the capture is invalidated or
 * over, until the event is recorded again outside a capture. */
static CUresult event_snapshot(sim_event *e, sim_stream **s, uint64_t *seq) {
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&g_mu);
    if (e->cap_id) {
        sim_capture *c = sim_capture_find_locked(e->cap_id);
        if (c && !c->invalidated) {
            sim_capture_invalidate_locked(c);
            rc = CUDA_ERROR_CAPTURED_EVENT;
        } else {
            rc = CUDA_ERROR_INVALID_VALUE;
        }
    }
    pthread_mutex_lock(&e->mu);
    *s = e->recorded ? e->s : NULL;
    *seq = e->seq;
    pthread_mutex_unlock(&e->mu);
    pthread_mutex_unlock(&g_mu);
    return rc;
}

/* cuEventQuery/Synchronize and cuStreamQuery/Synchronize are "potentially
 * unsafe" during a capture that prohibits them (observed) */
CUresult cuEventQuery(CUevent hEvent) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    sim_event *e = event_get(hEvent);
    if (!e) return CUDA_ERROR_INVALID_HANDLE;
    if ((rc = sim_ctx_sticky(e->ctx))) return rc;
    if ((rc = sim_unsafe_call_check())) return rc;
    sim_stream *s;
    uint64_t seq;
    if ((rc = event_snapshot(e, &s, &seq))) return rc;
    if (!s) return CUDA_SUCCESS;
    return atomic_load(&s->completed) >= seq ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

CUresult cuEventSynchronize(CUevent hEvent) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    sim_event *e = event_get(hEvent);
    if (!e) return CUDA_ERROR_INVALID_HANDLE;
    if ((rc = sim_ctx_sticky(e->ctx))) return rc;
    if ((rc = sim_unsafe_call_check())) return rc;
    sim_stream *s;
    uint64_t seq;
    if ((rc = event_snapshot(e, &s, &seq))) return rc;
    if (s) sim_wait_seq(s, seq);
    return sim_ctx_sticky(e->ctx); /* a fault in the work waited for */
}

static CUresult elapsed(float *ms, CUevent a, CUevent b) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    if (!ms) return CUDA_ERROR_INVALID_VALUE;
    sim_event *ea = event_get(a), *eb = event_get(b);
    if (!ea || !eb) return CUDA_ERROR_INVALID_HANDLE;
    if ((ea->flags | eb->flags) & CU_EVENT_DISABLE_TIMING) return CUDA_ERROR_INVALID_HANDLE;
    sim_event *ev[2] = {ea, eb};
    double t[2];
    for (int i = 0; i < 2; i++) {
        sim_stream *s;
        uint64_t seq;
        if ((rc = event_snapshot(ev[i], &s, &seq))) return rc;
        if (!s) return CUDA_ERROR_INVALID_HANDLE;
        if (atomic_load(&s->completed) < seq) return CUDA_ERROR_NOT_READY;
        pthread_mutex_lock(&ev[i]->mu);
        bool valid = ev[i]->time_valid;
        t[i] = ev[i]->time_ms;
        pthread_mutex_unlock(&ev[i]->mu);
        if (!valid) return CUDA_ERROR_NOT_READY;
    }
    *ms = (float)(t[1] - t[0]);
    return CUDA_SUCCESS;
}
CUresult cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd) { return elapsed(pMilliseconds, hStart, hEnd); }
CUresult cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart, CUevent hEnd) { return elapsed(pMilliseconds, hStart, hEnd); }

static CUresult stream_wait_event(CUstream hs, CUevent h, unsigned flags, int ptds) {
    sim_stream *s;
    CUresult rc = sim_stream_resolve(hs, ptds, &s);
    if (rc) return rc;
    sim_event *e = event_get(h);
    if (!e) return CUDA_ERROR_INVALID_HANDLE;
    if (flags & ~(unsigned)CU_EVENT_WAIT_EXTERNAL) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    if (s->cap && (flags & CU_EVENT_WAIT_EXTERNAL)) {
        rc = sim_capture_wait_external_locked(s, e);
        pthread_mutex_unlock(&g_mu);
        return rc;
    }
    if (e->cap_id || s->cap) {
        rc = sim_capture_wait_event_locked(s, e);
        pthread_mutex_unlock(&g_mu);
        return rc;
    }
    pthread_mutex_lock(&e->mu);
    sim_dep d = {e->recorded ? e->s : NULL, e->seq};
    pthread_mutex_unlock(&e->mu);
    if (d.s && d.s != s && atomic_load(&d.s->completed) < d.seq) {
        if (s->kind == SK_LEGACY) {
            sim_capture *c = sim_capture_blocking_in_ctx_locked(s->ctx);
            if (c) {
                sim_capture_invalidate_locked(c);
                pthread_mutex_unlock(&g_mu);
                return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
            }
        }
        sim_work w = {.kind = W_NOP};
        rc = sim_enqueue_locked(s, &w, &d, 1, NULL);
    }
    pthread_mutex_unlock(&g_mu);
    return rc;
}
CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags) { return stream_wait_event(hStream, hEvent, Flags, 0); }
CUresult cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent, unsigned int Flags) { return stream_wait_event(hStream, hEvent, Flags, 1); }

/* ------------------------------------------------------------------------ */
/* primary-context reset                                                    */
/* ------------------------------------------------------------------------ */
static void event_drop_cb(void *p, void *ud) {
    sim_event *e = event_get((CUevent)p);
    if (!e || e->ctx != ud) return;
    sim_reg_del(e);
    pthread_mutex_lock(&g_mu);
    e->magic = 0;
    pthread_mutex_unlock(&g_mu);
    sim_event_unref(e);
}

/* The context's allocations go away (device, managed and page-locked host
 * memory is freed; registered host memory is only unregistered). */
static void allocs_drop_ctx(sim_ctx *c) {
    pthread_mutex_lock(&g_alloc_mu);
    for (int i = 0; i < g_nallocs; i++) {
        sim_alloc *a = &g_allocs[i];
        if (a->ctx != c) continue;
        if (a->kind == A_DEVICE || a->kind == A_MANAGED) g_dev_used -= a->size;
        if (a->kind == A_HOST) free((void *)a->base);
        else if (a->kind != A_REGISTERED) sim_dev_release((void *)a->base);
        g_allocs[i--] = g_allocs[--g_nallocs];
    }
    pthread_mutex_unlock(&g_alloc_mu);
}

/* cuDevicePrimaryCtxReset, or the primary context released to zero
 * references: the context's work is drained, then everything in it is
 * destroyed: its streams (the legacy stream excepted) and the captures they
 * take part in, its events, its executable graphs, its modules (libraries,
 * which are context-independent, stay), its memory; the sticky error is
 * cleared. Handles of those objects are invalid afterwards. A thread's
 * per-thread default stream is a new one at its next use. */
static void ctx_reset(sim_ctx *c) {
    ctx_sync_all(c);
    pthread_mutex_lock(&g_mu);
    sim_capture_drop_ctx_locked(c);
    for (int i = 0; i < c->nstreams; i++) {
        sim_stream *s = c->streams[i];
        if (s->kind == SK_LEGACY || s->dead) continue;
        if (s->kind == SK_USER) sim_reg_del(s);
        stream_stop_locked(s);
    }
    c->epoch++;
    atomic_store(&c->sticky, 0);
    pthread_mutex_unlock(&g_mu);
    sim_reg_foreach(T_EVENT, event_drop_cb, c);
    sim_exec_drop_ctx(c);
    sim_module_drop_ctx(c);
    allocs_drop_ctx(c);
}
