/* libencore_timeline.so: a small tracer for tests/bench/breakdown.py (issue 31). Not a test, not
 * part of libencore, never installed. nsys is not on the GPU image; this gives the same three
 * rows on one clock:
 *
 *   LD_PRELOAD=libencore.so:libencore_timeline.so ENCORE_NVTX=1 \
 *     NVTX_INJECTION64_PATH=libencore_timeline.so ENCTL_FILE=trace.%p.bin ./program
 *   LD_PRELOAD=libskiplaunch.so:libencore_timeline.so ...      (the launch-free bound)
 *
 * - GPU activity through CUPTI's activity API: kernels (CONCURRENT_KERNEL, kernels inside graph
 *   launches included), copies and memsets: start, end, stream, kind, in-a-graph flag;
 * - every driver call that reaches the real driver (CUPTI driver-API callbacks, the whole
 *   domain): callback id, thread, CLOCK_MONOTONIC at entry and exit. A call encore holds never
 *   reaches the driver and is not here; its graph launch is;
 * - as the NVTX injection library (InitializeInjectionNvtx2), push/pop ranges, encore's
 *   ENCORE_NVTX=1 ranges ("encore: sequence N, M launches", "encore: capture...", "encore:
 *   eager...") with CLOCK_MONOTONIC times;
 * - CUPTI's clock on CLOCK_MONOTONIC: through cuptiActivityRegisterTimestampCallback where CUPTI
 *   has it, else the offset cuptiGetTimestamp() - CLOCK_MONOTONIC at start and at exit (the drift).
 *
 * Records go to preallocated buffers (mmap'ed, untouched pages cost nothing; no malloc per
 * call); past their capacity they are counted as dropped. At exit (atexit, after
 * cuptiActivityFlushAll) one binary file ENCTL_FILE is written (layout below, read by
 * tests/bench/breakdown.py: read_trace) and one line goes to stderr.
 *
 * Without CUPTI (no libcupti, or one that refuses) it says so in one line and passes everything
 * through; NVTX ranges are still recorded and the file still written (status nocupti). It never
 * ends the program.
 *
 * Environment (ENCTL_*, not ENCORE_*: encore validates its own variables):
 *   ENCTL_FILE        where to write the trace (%p: the pid); unset: only the stderr line
 *   ENCTL_CUPTI       libcupti to dlopen (a libcupti already loaded in the process comes first;
 *                     default: the build-time path, then libcupti.so.13, .12, libcupti.so)
 *   ENCTL_PARENT_PID  trace only a process whose parent has this pid (torch.compile's compiler
 *                     subprocesses stay quiet)
 *   ENCTL_MAX_RECORDS capacity of each buffer (default 2,000,000 calls and GPU intervals,
 *                     500,000 ranges)
 *
 * File layout (little-endian, packed; version 1):
 *   header  "ENCTL01\n", u32 version, u32 pid, u32 status (0 ok, 1 nocupti, 2 cupti error),
 *           u32 flags (bit 0: the start offset was measured, bit 1: the end offset, bit 2: CUPTI
 *           timed with CLOCK_MONOTONIC itself, through cuptiActivityRegisterTimestampCallback:
 *           offsets 0),
 *           u64 mono_start, u64 mono_end, i64 offset_start, i64 offset_end (cupti - mono, ns),
 *           u32 n_gpu, n_calls, n_ranges, n_threads, n_names, n_strings,
 *           u64 dropped_gpu, dropped_calls, dropped_ranges, cupti_dropped
 *   gpu     n_gpu x {u64 start, u64 end (CUPTI's clock), u32 stream, u8 kind (0 kernel,
 *           1 copy, 2 memset), u8 in_graph, u16 device}                          (24 bytes)
 *   calls   n_calls x {u64 t0 (mono), u32 duration ns, u16 cbid, u16 thread}  (16 bytes)
 *   ranges  n_ranges x {u64 t0, u64 t1 (mono), u16 string, u16 thread, u16 depth, u16 0}
 *   threads n_threads x u32 (the OS thread id of thread index i)
 *   names   n_names x {u16 cbid, u16 length, bytes}   (driver function names of the ids seen)
 *   strings n_strings x {u16 length, bytes}           (range messages, by index)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cupti_activity.h>
#include <cupti_callbacks.h>
#include <cupti_driver_cbid.h>
#include <cupti_result.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include <nvtx3/nvToolsExt.h>
#pragma GCC diagnostic pop

#ifndef ENCTL_DEFAULT_CUPTI
#define ENCTL_DEFAULT_CUPTI ""
#endif
#define EXPORT __attribute__((visibility("default")))
#define MAX_CBID 2048
#define MAX_THREADS 1024
#define MAX_DEPTH 64
#define MAX_STRINGS 4096
#define STRING_LEN 120
#define ACTIVITY_BUFFER (4u << 20)

typedef struct __attribute__((packed)) {
    uint64_t start, end;
    uint32_t stream;
    uint8_t kind, in_graph;
    uint16_t device;
} gpu_rec;
typedef struct __attribute__((packed)) {
    uint64_t t0;
    uint32_t dur;
    uint16_t cbid, thread;
} call_rec;
typedef struct __attribute__((packed)) {
    uint64_t t0, t1;
    uint16_t string, thread, depth, pad;
} range_rec;
_Static_assert(sizeof(gpu_rec) == 24 && sizeof(call_rec) == 16 && sizeof(range_rec) == 24, "record sizes");

typedef struct {
    void *base;
    size_t cap, size;
    atomic_size_t next;
    atomic_ullong dropped;
} buffer;

enum { ST_OK = 0, ST_NOCUPTI = 1, ST_ERROR = 2 };

static struct {
    int on, status;
    pid_t pid;
    uint64_t mono_start;
    int64_t off_start, off_end;
    unsigned flags;
    buffer gpu, calls, ranges;
    atomic_ullong cupti_dropped;
    atomic_int n_threads, done; /* done: 0 running, 1 flushing at exit, 2 written */
    uint32_t tids[MAX_THREADS];
    const char *_Atomic names[MAX_CBID];
    pthread_mutex_t str_lock;
    int n_strings;
    char strings[MAX_STRINGS][STRING_LEN];
    uint32_t str_hash[MAX_STRINGS];
    int16_t str_slot[2 * MAX_STRINGS]; /* open addressing: string index + 1, 0 empty */
    char why[256];
} T = {.str_lock = PTHREAD_MUTEX_INITIALIZER};

static struct {
    CUptiResult (*subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
    CUptiResult (*enable_domain)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain);
    CUptiResult (*register_callbacks)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
    CUptiResult (*activity_enable)(CUpti_ActivityKind);
    CUptiResult (*flush_all)(uint32_t);
    CUptiResult (*next_record)(uint8_t *, size_t, CUpti_Activity **);
    CUptiResult (*dropped)(CUcontext, uint32_t, size_t *);
    CUptiResult (*timestamp)(uint64_t *);
    CUptiResult (*timestamp_callback)(CUpti_TimestampCallbackFunc);
    CUptiResult (*result_string)(CUptiResult, const char **);
} C;

static _Thread_local int my_thread = -1;
static _Thread_local int my_depth;
static _Thread_local struct {
    uint64_t t0;
    uint16_t string;
} my_stack[MAX_DEPTH];

static uint64_t CUPTIAPI mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void say(const char *msg) { (void)!write(2, msg, strlen(msg)); }

static const char *result_text(CUptiResult r) {
    const char *s = NULL;
    if (C.result_string && C.result_string(r, &s) == CUPTI_SUCCESS && s) return s;
    return "unknown CUPTI error";
}

/* ---- buffers ------------------------------------------------------------------------------ */

static int buffer_init(buffer *b, size_t cap, size_t size) {
    b->base = mmap(NULL, cap * size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (b->base == MAP_FAILED) {
        b->base = NULL;
        return -1;
    }
    b->cap = cap;
    b->size = size;
    return 0;
}

/* A slot for one record, or NULL (counted as dropped) when the buffer is full or closed. */
static void *buffer_claim(buffer *b) {
    if (!b->base || atomic_load_explicit(&T.done, memory_order_relaxed) == 2) return NULL; /* written out */
    size_t i = atomic_fetch_add_explicit(&b->next, 1, memory_order_relaxed);
    if (i >= b->cap) {
        atomic_fetch_add_explicit(&b->dropped, 1, memory_order_relaxed);
        return NULL;
    }
    return (char *)b->base + i * b->size;
}

static size_t buffer_count(buffer *b) {
    size_t n = atomic_load(&b->next);
    return n < b->cap ? n : b->cap;
}

static uint16_t thread_index(void) {
    if (my_thread < 0) {
        int i = atomic_fetch_add(&T.n_threads, 1);
        if (i < MAX_THREADS) T.tids[i] = (uint32_t)syscall(SYS_gettid);
        my_thread = i < MAX_THREADS ? i : MAX_THREADS - 1;
    }
    return (uint16_t)my_thread;
}

/* ---- driver calls ------------------------------------------------------------------------- */

static void CUPTIAPI on_callback(void *u, CUpti_CallbackDomain dom, CUpti_CallbackId cbid, const void *data) {
    (void)u;
    if (dom != CUPTI_CB_DOMAIN_DRIVER_API) return;
    const CUpti_CallbackData *cb = (const CUpti_CallbackData *)data;
    if (cb->callbackSite == CUPTI_API_ENTER) {
        if (cb->correlationData) *cb->correlationData = mono_ns();
        return;
    }
    uint64_t t1 = mono_ns(), t0 = cb->correlationData ? *cb->correlationData : t1;
    if (cbid < MAX_CBID && !atomic_load_explicit(&T.names[cbid], memory_order_relaxed) && cb->functionName)
        atomic_store_explicit(&T.names[cbid], cb->functionName, memory_order_relaxed);
    call_rec *r = buffer_claim(&T.calls);
    if (!r) return;
    uint64_t d = t1 >= t0 ? t1 - t0 : 0;
    *r = (call_rec){t0, d > UINT32_MAX ? UINT32_MAX : (uint32_t)d, (uint16_t)cbid, thread_index()};
}

/* ---- GPU activity ------------------------------------------------------------------------- */

static void CUPTIAPI on_buffer_request(uint8_t **buffer, size_t *size, size_t *max_records) {
    *buffer = aligned_alloc(8, ACTIVITY_BUFFER);
    *size = *buffer ? ACTIVITY_BUFFER : 0;
    *max_records = 0;
}

static void keep(uint64_t start, uint64_t end, uint32_t stream, int kind, int in_graph, uint32_t device) {
    gpu_rec *g = buffer_claim(&T.gpu);
    if (g) *g = (gpu_rec){start, end, stream, (uint8_t)kind, (uint8_t)(in_graph != 0), (uint16_t)device};
}

static void CUPTIAPI on_buffer_complete(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size, size_t valid) {
    (void)size;
    CUpti_Activity *rec = NULL;
    while (C.next_record && valid && C.next_record(buf, valid, &rec) == CUPTI_SUCCESS) {
        if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || rec->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
            const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)rec;
            keep(k->start, k->end, k->streamId, 0, k->graphNodeId != 0, k->deviceId);
        } else if (rec->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
            const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)rec;
            keep(m->start, m->end, m->streamId, 1, m->graphNodeId != 0, m->deviceId);
        } else if (rec->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
            const CUpti_ActivityMemset4 *m = (const CUpti_ActivityMemset4 *)rec;
            keep(m->start, m->end, m->streamId, 2, m->graphNodeId != 0, m->deviceId);
        }
    }
    size_t dropped = 0;
    if (C.dropped && C.dropped(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped)
        atomic_fetch_add(&T.cupti_dropped, dropped);
    free(buf);
}

/* cuptiGetTimestamp() - CLOCK_MONOTONIC, from the tightest of a few bracketed reads. */
static int clock_offset(int64_t *off) {
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 7 && C.timestamp; i++) {
        uint64_t c = 0, m0 = mono_ns();
        if (C.timestamp(&c) != CUPTI_SUCCESS) return -1;
        uint64_t m1 = mono_ns();
        if (m1 - m0 < best) {
            best = m1 - m0;
            *off = (int64_t)(c - (m0 + (m1 - m0) / 2));
        }
    }
    return best == UINT64_MAX ? -1 : 0;
}

/* ---- NVTX: the injection library ---------------------------------------------------------- */

static uint16_t intern(const char *s) {
    if (!s) s = "(null)";
    uint32_t h = 2166136261u;
    for (const char *p = s; *p && p - s < STRING_LEN - 1; p++) h = (h ^ (uint8_t)*p) * 16777619u;
    pthread_mutex_lock(&T.str_lock);
    uint32_t j = h % (2 * MAX_STRINGS);
    uint16_t id = 0xffff;
    for (int probes = 0; probes < 2 * MAX_STRINGS; probes++, j = (j + 1) % (2 * MAX_STRINGS)) {
        int slot = T.str_slot[j];
        if (slot == 0) {
            if (T.n_strings >= MAX_STRINGS) break; /* full: 0xffff, "(a message not kept)" */
            id = (uint16_t)T.n_strings++;
            snprintf(T.strings[id], STRING_LEN, "%s", s);
            T.str_hash[id] = h;
            T.str_slot[j] = (int16_t)(id + 1);
            break;
        }
        if (T.str_hash[slot - 1] == h && !strncmp(T.strings[slot - 1], s, STRING_LEN - 1)) {
            id = (uint16_t)(slot - 1);
            break;
        }
    }
    pthread_mutex_unlock(&T.str_lock);
    return id;
}

static int NVTX_API range_push(const char *msg) {
    int d = my_depth++;
    if (d < MAX_DEPTH) {
        my_stack[d].t0 = mono_ns();
        my_stack[d].string = intern(msg);
    }
    return d;
}

static int NVTX_API range_pop(void) {
    if (my_depth <= 0) return -1;
    int d = --my_depth;
    if (d < MAX_DEPTH) {
        uint64_t t1 = mono_ns();
        range_rec *r = buffer_claim(&T.ranges);
        if (r) *r = (range_rec){my_stack[d].t0, t1, my_stack[d].string, thread_index(), (uint16_t)d, 0};
    }
    return d;
}

EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get) {
    if (!T.on) return 0; /* a helper process (ENCTL_PARENT_PID), or no buffers */
    const NvtxExportTableCallbacks *cb = (const NvtxExportTableCallbacks *)get(NVTX_ETID_CALLBACKS);
    NvtxFunctionTable table = 0;
    unsigned int size = 0;
    if (!cb || !cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &table, &size) || !table) return 0;
    if (size > NVTX_CBID_CORE_RangePushA) *table[NVTX_CBID_CORE_RangePushA] = (NvtxFunctionPointer)range_push;
    if (size > NVTX_CBID_CORE_RangePop) *table[NVTX_CBID_CORE_RangePop] = (NvtxFunctionPointer)range_pop;
    return 1;
}

/* ---- CUPTI start-up ----------------------------------------------------------------------- */

static int find_loaded_cupti(struct dl_phdr_info *info, size_t size, void *out) {
    (void)size;
    if (info->dlpi_name && strstr(info->dlpi_name, "libcupti.so")) {
        snprintf((char *)out, 512, "%s", info->dlpi_name);
        return 1;
    }
    return 0;
}

static void *open_cupti(void) {
    static char loaded[512];
    dl_iterate_phdr(find_loaded_cupti, loaded); /* a libcupti the program brought already wins: one CUPTI */
    void *h = loaded[0] ? dlopen(loaded, RTLD_NOW | RTLD_GLOBAL) : NULL;
    if (h) return h;
    const char *env = getenv("ENCTL_CUPTI");
    if (env && *env) { /* an explicit choice that fails: no other one */
        if ((h = dlopen(env, RTLD_NOW | RTLD_GLOBAL))) return h;
        snprintf(T.why, sizeof T.why, "ENCTL_CUPTI=%s: %s", env, dlerror());
        return NULL;
    }
    const char *cands[] = {ENCTL_DEFAULT_CUPTI, "libcupti.so.13", "libcupti.so.12", "libcupti.so"};
    for (size_t i = 0; i < sizeof cands / sizeof cands[0]; i++)
        if (cands[i][0] && (h = dlopen(cands[i], RTLD_NOW | RTLD_GLOBAL))) return h;
    snprintf(T.why, sizeof T.why, "no libcupti found (set ENCTL_CUPTI)");
    return NULL;
}

#define LOAD(field, name)                 \
    do {                                  \
        void *p_ = dlsym(h, name);        \
        memcpy(&C.field, &p_, sizeof p_); \
    } while (0)

static int fail(CUptiResult r, const char *what) {
    snprintf(T.why, sizeof T.why, "%s: %s", what, result_text(r));
    return -1;
}

static int start_cupti(void) {
    void *h = open_cupti();
    if (!h) return -1;
    LOAD(subscribe, "cuptiSubscribe");
    LOAD(enable_domain, "cuptiEnableDomain");
    LOAD(register_callbacks, "cuptiActivityRegisterCallbacks");
    LOAD(activity_enable, "cuptiActivityEnable");
    LOAD(flush_all, "cuptiActivityFlushAll");
    LOAD(next_record, "cuptiActivityGetNextRecord");
    LOAD(dropped, "cuptiActivityGetNumDroppedRecords");
    LOAD(timestamp, "cuptiGetTimestamp");
    LOAD(timestamp_callback, "cuptiActivityRegisterTimestampCallback");
    LOAD(result_string, "cuptiGetResultString");
    if (!C.subscribe || !C.enable_domain || !C.register_callbacks || !C.activity_enable || !C.next_record ||
        !C.timestamp) {
        snprintf(T.why, sizeof T.why, "libcupti lacks the activity or callback API");
        C.flush_all = NULL;
        return -1;
    }
    /* CUPTI's own clock onto CLOCK_MONOTONIC: where CUPTI takes a timestamp callback (12.x and
     * later), it converts GPU times with ours and the offset is 0 by construction; else the offset
     * is measured now and at exit, and the reader interpolates. */
    if (C.timestamp_callback && C.timestamp_callback(mono_ns) == CUPTI_SUCCESS)
        T.flags |= 1 | 2 | 4;
    else if (clock_offset(&T.off_start) == 0)
        T.flags |= 1;
    CUptiResult r = C.register_callbacks(on_buffer_request, on_buffer_complete);
    if (r != CUPTI_SUCCESS) return fail(r, "cuptiActivityRegisterCallbacks");
    const CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                        CUPTI_ACTIVITY_KIND_MEMSET};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if ((r = C.activity_enable(kinds[i])) != CUPTI_SUCCESS) return fail(r, "cuptiActivityEnable");
    CUpti_SubscriberHandle sub;
    if ((r = C.subscribe(&sub, on_callback, NULL)) != CUPTI_SUCCESS) return fail(r, "cuptiSubscribe");
    if ((r = C.enable_domain(1, sub, CUPTI_CB_DOMAIN_DRIVER_API)) != CUPTI_SUCCESS)
        return fail(r, "cuptiEnableDomain(driver API)");
    return 0;
}

/* ---- exit: the file ----------------------------------------------------------------------- */

static void put(FILE *f, const void *p, size_t n) { (void)!fwrite(p, 1, n, f); }
static void put32(FILE *f, uint32_t v) { put(f, &v, 4); }
static void put64(FILE *f, uint64_t v) { put(f, &v, 8); }
static void put16(FILE *f, uint16_t v) { put(f, &v, 2); }

static void write_names_and_strings(FILE *f, uint32_t n_names, int n_strings) {
    for (uint32_t c = 0; c < MAX_CBID; c++) {
        const char *s = atomic_load(&T.names[c]);
        if (!s) continue;
        size_t n = strnlen(s, 200);
        put16(f, (uint16_t)c);
        put16(f, (uint16_t)n);
        put(f, s, n);
    }
    (void)n_names;
    for (int i = 0; i < n_strings; i++) {
        size_t n = strnlen(T.strings[i], STRING_LEN);
        put16(f, (uint16_t)n);
        put(f, T.strings[i], n);
    }
}

static void write_file(const char *path, uint64_t mono_end, uint32_t counts[6]) {
    char name[1024];
    size_t o = 0;
    for (const char *p = path; *p && o + 24 < sizeof name; p++) { /* %p: the pid */
        if (p[0] == '%' && p[1] == 'p') {
            o += (size_t)snprintf(name + o, sizeof name - o, "%ld", (long)T.pid);
            p++;
        } else
            name[o++] = *p;
    }
    name[o] = 0;
    FILE *f = fopen(name, "wb");
    if (!f) {
        char msg[1200];
        snprintf(msg, sizeof msg, "encore-timeline: cannot write %s\n", name);
        say(msg);
        return;
    }
    put(f, "ENCTL01\n", 8);
    put32(f, 1);
    put32(f, (uint32_t)T.pid);
    put32(f, (uint32_t)T.status);
    put32(f, T.flags);
    put64(f, T.mono_start);
    put64(f, mono_end);
    put64(f, (uint64_t)T.off_start);
    put64(f, (uint64_t)T.off_end);
    for (int i = 0; i < 6; i++) put32(f, counts[i]);
    put64(f, atomic_load(&T.gpu.dropped));
    put64(f, atomic_load(&T.calls.dropped));
    put64(f, atomic_load(&T.ranges.dropped));
    put64(f, atomic_load(&T.cupti_dropped));
    put(f, T.gpu.base, counts[0] * sizeof(gpu_rec));
    put(f, T.calls.base, counts[1] * sizeof(call_rec));
    put(f, T.ranges.base, counts[2] * sizeof(range_rec));
    put(f, T.tids, counts[3] * sizeof(uint32_t));
    write_names_and_strings(f, counts[4], (int)counts[5]);
    fclose(f);
}

static void at_exit(void) {
    int running = 0;
    if (!T.on || getpid() != T.pid || !atomic_compare_exchange_strong(&T.done, &running, 1)) return; /* fork, twice */
    if (C.flush_all) C.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    if (T.status == ST_OK && !(T.flags & 4) && clock_offset(&T.off_end) == 0) T.flags |= 2;
    atomic_store(&T.done, 2); /* no more records from here on */
    uint64_t mono_end = mono_ns();
    pthread_mutex_lock(&T.str_lock);
    int n_strings = T.n_strings;
    pthread_mutex_unlock(&T.str_lock);
    uint32_t n_names = 0;
    for (int c = 0; c < MAX_CBID; c++) n_names += atomic_load(&T.names[c]) != NULL;
    int nt = atomic_load(&T.n_threads);
    uint32_t counts[6] = {(uint32_t)buffer_count(&T.gpu),
                          (uint32_t)buffer_count(&T.calls),
                          (uint32_t)buffer_count(&T.ranges),
                          (uint32_t)(nt < MAX_THREADS ? nt : MAX_THREADS),
                          n_names,
                          (uint32_t)n_strings};
    const char *path = getenv("ENCTL_FILE");
    if (path && *path) write_file(path, mono_end, counts);
    static const char *const st[] = {"ok", "nocupti", "error"};
    char msg[600];
    snprintf(msg, sizeof msg,
             "encore-timeline: pid %ld status=%s gpu=%u calls=%u ranges=%u dropped=%llu/%llu/%llu cupti_dropped=%llu "
             "drift_ns=%lld%s%s\n",
             (long)T.pid, st[T.status], counts[0], counts[1], counts[2],
             (unsigned long long)atomic_load(&T.gpu.dropped), (unsigned long long)atomic_load(&T.calls.dropped),
             (unsigned long long)atomic_load(&T.ranges.dropped), (unsigned long long)atomic_load(&T.cupti_dropped),
             (T.flags & 3) == 3 ? (long long)(T.off_end - T.off_start) : 0LL, T.why[0] ? " why=" : "", T.why);
    say(msg);
}

__attribute__((constructor)) static void timeline_init(void) {
    const char *ppid = getenv("ENCTL_PARENT_PID");
    if (ppid && *ppid && (long)getppid() != strtol(ppid, NULL, 10)) return; /* a helper: stay dormant */
    T.pid = getpid();
    T.mono_start = mono_ns();
    const char *m = getenv("ENCTL_MAX_RECORDS");
    size_t cap = m && atol(m) > 0 ? (size_t)atol(m) : 2000000;
    if (buffer_init(&T.gpu, cap, sizeof(gpu_rec)) || buffer_init(&T.calls, cap, sizeof(call_rec)) ||
        buffer_init(&T.ranges, m && atol(m) > 0 ? cap : 500000, sizeof(range_rec))) {
        say("encore-timeline: cannot map its buffers; tracing nothing\n");
        return;
    }
    T.on = 1;
    if (start_cupti() != 0) {
        T.status = C.subscribe ? ST_ERROR : ST_NOCUPTI;
        char msg[400];
        snprintf(msg, sizeof msg, "encore-timeline: CUPTI %s (%s): no GPU activity, no driver calls\n",
                 T.status == ST_ERROR ? "refused" : "not available", T.why);
        say(msg);
    }
    atexit(at_exit);
}
