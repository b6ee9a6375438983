/* encore: the capture-and-replay engine.
 *
 * Per stream (context, handle), launches are recorded between flush points
 * into a chunk of at most ENCORE_MAX_CHUNK launches. Each launch is
 * fingerprinted (structure: function, grid, block, shared memory, attributes,
 * argument size; and the argument bytes) and its arguments are copied, so it
 * can be re-issued later.
 *
 * Learning: when a chunk ends, its hash is counted; the chunk seen
 * ENCORE_MIN_REPEATS times is captured from the recorded copies (never by
 * running the program's work twice) on encore's own non-blocking stream in
 * relaxed mode, instantiated and inserted into the stream's trie.
 *
 * Replay: at a chunk start, a launch whose structure begins a hot chunk is
 * held back, and so are the following launches while they walk the trie
 * (keyed on structure). When the chunk ends (flush point or chunk length),
 * the held launches are compared byte for byte with the hot chunks ending at
 * that trie node; on a full match one graph launch replaces them. On any
 * mismatch, or when something could observe the held work first, they are
 * issued eagerly in their original order: the program sees exactly what it
 * would have seen without encore.
 *
 * Locks: one mutex per stream state, uncontended for a single-threaded
 * program (flushes from other threads and the deadline thread take it too).
 * The per-launch path allocates nothing and makes no system call. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fnmatch.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "base/driver.h"
#include "core/engine.h"
#include "core/fingerprint.h"
#include "base/log.h"
#include "core/report.h"
#include "core/stats.h"
#include "policy/options.h"

__thread int enc_tls_guard __attribute__((tls_model("initial-exec")));
int enc_active;
int enc_initialized;
void (*enc_audit_enter)(void);
void (*enc_audit_leave)(void);

#define MAX_PARAMS 256
#define MAX_ATTRS 16
#define LAYOUT_CAP 16384
#define MAX_STATES 4096
#define CAND_CAP 1024
#define ROOT 0
#define ENC_SAMPLE_EVERY 61
#define STRUCT_SALT 0x5f3759df9e3779b9ULL /* keeps structural candidates apart from exact ones */

static inline uint64_t shash_step(uint64_t h, uint64_t sfp) { return (h ^ sfp) * 0x9e3779b97f4a7c15ULL + 1; }

static inline uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#define AUDITED(call)                              \
    ({                                             \
        if (enc_audit_enter) enc_audit_enter();    \
        CUresult r__ = (call);                     \
        if (enc_audit_leave) enc_audit_leave();    \
        r__;                                       \
    })

/* ---- parameter layouts, cached per function ------------------------------ */

typedef struct layout {
    void *func;
    uint32_t nparams;
    uint32_t argbytes; /* packed size: last offset + size */
    int ok;            /* 0: opaque, launches of it run eagerly */
    int is_kernel;     /* the handle is a CUkernel passed as a CUfunction */
    struct layout *retired_next;
    char name[96];
    uint32_t off[];    /* nparams offsets, then nparams sizes */
} layout;

static layout *layout_tab[LAYOUT_CAP];
static pthread_mutex_t layout_mu = PTHREAD_MUTEX_INITIALIZER;
static int layout_count;

static inline uint32_t ptr_hash(const void *p, uint32_t cap) {
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (uint32_t)x & (cap - 1);
}

static layout *build_layout(CUfunction f) {
    size_t offs[MAX_PARAMS], sizes[MAX_PARAMS];
    uint32_t n = 0;
    int ok = 1, kernel = 0;
    enc_tls_guard++;
    if (!enc_drv.funcGetParamInfo) ok = 0;
    while (ok && n < MAX_PARAMS) {
        CUresult r = kernel ? enc_drv.kernelGetParamInfo((CUkernel)(void *)f, n, &offs[n], &sizes[n])
                            : enc_drv.funcGetParamInfo(f, n, &offs[n], &sizes[n]);
        if (r == CUDA_SUCCESS) { n++; continue; }
        if (n == 0 && !kernel && r == CUDA_ERROR_INVALID_HANDLE && enc_drv.kernelGetParamInfo) {
            kernel = 1; /* a CUkernel passed as a CUfunction */
            continue;
        }
        if (r != CUDA_ERROR_INVALID_VALUE) { /* anything but "past the last parameter" */
            ok = 0;
            ENC_DEBUG("cu%sGetParamInfo(%p, %u) failed with CUDA error %d", kernel ? "Kernel" : "Func", (void *)f, n, (int)r);
        }
        break;
    }
    if (n == MAX_PARAMS) ok = 0;
    layout *L = calloc(1, sizeof *L + 2 * n * sizeof(uint32_t));
    if (!L) { enc_tls_guard--; return NULL; }
    L->func = (void *)f;
    L->nparams = n;
    L->ok = ok;
    L->is_kernel = kernel;
    for (uint32_t i = 0; i < n; i++) {
        if (offs[i] + sizes[i] > 65536) L->ok = 0;
        L->off[i] = (uint32_t)offs[i];
        L->off[n + i] = (uint32_t)sizes[i];
        if (offs[i] + sizes[i] > L->argbytes) L->argbytes = (uint32_t)(offs[i] + sizes[i]);
    }
    const char *name = NULL;
    if (kernel ? (enc_drv.kernelGetName && enc_drv.kernelGetName(&name, (CUkernel)(void *)f) == CUDA_SUCCESS)
               : (enc_drv.funcGetName && enc_drv.funcGetName(&name, f) == CUDA_SUCCESS)) {
        if (name) strncpy(L->name, name, sizeof L->name - 1);
    }
    if (!L->name[0]) strcpy(L->name, "?");
    enc_tls_guard--;
    if (!L->ok) ENC_DEBUG("no parameter layout for kernel %s (%u parameters read): its launches run eagerly", L->name, n);
    return L;
}

static const layout *layout_cached(CUfunction f) {
    uint32_t h = ptr_hash(f, LAYOUT_CAP);
    for (uint32_t i = 0; i < 64; i++) {
        layout *L = __atomic_load_n(&layout_tab[(h + i) & (LAYOUT_CAP - 1)], __ATOMIC_ACQUIRE);
        if (!L) break;
        if (L->func == (void *)f) return L;
    }
    return NULL;
}

static const layout *layout_for(CUfunction f) {
    const layout *cached = layout_cached(f);
    if (cached) return cached;
    uint32_t h = ptr_hash(f, LAYOUT_CAP);
    pthread_mutex_lock(&layout_mu);
    layout *found = NULL;
    uint32_t slot = UINT32_MAX;
    for (uint32_t i = 0; i < 64; i++) {
        uint32_t s = (h + i) & (LAYOUT_CAP - 1);
        if (!layout_tab[s]) { slot = s; break; }
        if (layout_tab[s]->func == (void *)f) { found = layout_tab[s]; break; }
    }
    if (!found && slot != UINT32_MAX && layout_count < LAYOUT_CAP * 3 / 4) {
        found = build_layout(f);
        if (found) {
            __atomic_store_n(&layout_tab[slot], found, __ATOMIC_RELEASE);
            layout_count++;
        }
    }
    pthread_mutex_unlock(&layout_mu);
    return found;
}

static layout *retired_layouts;

static void layouts_reset(void) {
    /* Layouts of unloaded code may be wrong for a new function at the same
     * handle. The structs are kept on a list, not freed: a launch racing with
     * the unload in another thread may still hold one. */
    pthread_mutex_lock(&layout_mu);
    for (int i = 0; i < LAYOUT_CAP; i++) {
        layout *L = layout_tab[i];
        if (!L) continue;
        L->retired_next = retired_layouts;
        retired_layouts = L;
        __atomic_store_n(&layout_tab[i], NULL, __ATOMIC_RELEASE);
    }
    layout_count = 0;
    pthread_mutex_unlock(&layout_mu);
}

/* ---- recorded launches ----------------------------------------------------- */

typedef struct rec {
    CUfunction f;
    const layout *L;
    unsigned grid[3], block[3], smem;
    uint32_t nattrs;
    uint32_t arg_off;  /* into the owning arena */
    uint32_t attr_off; /* into the owning arena */
    uint64_t sfp, afp; /* structure and argument fingerprints */
} rec;

/* A captured chunk: the records it was captured from, and its graph. */
typedef struct hot {
    uint64_t id;
    uint32_t len;
    uint32_t node;
    rec *recs;
    unsigned char *arena;
    CUgraphExec exec;
    /* For patching: the captured graph (kept: node handles are its) and its
     * kernel node for each launch, in order; NULL when not patchable. */
    CUgraph graph;
    struct gnode {
        CUgraphNode node;
        CUfunction func; /* as the graph has it (a CUkernel launch has a CUfunction there) */
    } *gnodes;
    uint64_t hits, last_used;
    uint64_t chunk_hash;
    struct hot *next_in_node;
} hot;

typedef struct tnode {
    uint32_t parent;
    uint32_t first_child;
    uint64_t sfp;
    CUfunction f; /* what the launch leading here looked like, for divergence reports */
    unsigned grid[3], block[3], smem;
    hot *variants; /* hot chunks ending here */
} tnode;

typedef struct cand {
    uint64_t hash;
    uint32_t count;
    uint8_t state; /* 0 counting, 1 hot, 2 never (capture failed or excluded) */
} cand;

enum { K_EXPLICIT = 0, K_LEGACY = 1, K_PER_THREAD = 2 };

typedef struct sstate {
    pthread_mutex_t mu;
    int kind;
    CUstream handle; /* the program's handle (explicit streams) */
    CUcontext ctx;
    pid_t owner;     /* per-thread streams: the owning thread */
    int blocking;    /* synchronises with the legacy stream */
    int needs_init;
    int dead;        /* its stream was destroyed: the state may be reused */
    uint32_t gen;    /* bumped when the state stops meaning its stream (thread caches check it) */

    /* current chunk */
    rec *recs;
    uint32_t n;
    unsigned char *arena;
    size_t arena_used, arena_cap;
    int poisoned;      /* contains a launch that cannot be re-issued */
    /* Host time per launch, averaged over chunks: when the program's own host
     * work between launches is slow (PyTorch eager: tens of microseconds per
     * op), holding launches back only delays the GPU and a graph saves
     * little, so such a stream is not held back (ENCORE_MAX_GAP). */
    uint64_t chunk_t0, gap_ns;
    int sparse;
    /* The first launch after a flush point is the anchor: when it comes
     * again, a new chunk starts. Loops without a flush point per iteration
     * then cut into the same chunks every iteration, whatever their length. */
    int anchor_set;
    uint64_t anchor_sfp, anchor_afp;
    int fully_replayed;
    uint64_t chunk_hash;  /* structure and arguments of the launches so far */
    uint64_t chunk_shash; /* their structure alone (learning for patching) */

    int open;          /* n > 0, written atomically: read without the lock by flush_all */

    /* per-thread default streams: another thread cannot name them, so a
     * release from another thread (deadline, a device-wide flush) goes to a
     * side stream ordered after ev_start, and the owner joins ev_done */
    CUevent ev_start, ev_done;
    CUstream side;
    int join_pending;

    /* matching */
    int held;          /* written atomically: read without the lock */
    uint32_t node;
    uint64_t held_since;

    /* learning */
    cand cands[CAND_CAP];

    /* trie */
    tnode *nodes;
    uint32_t nnodes, cap_nodes;
    uint32_t *child_tab; /* open addressing: node ids, keyed by (parent, sfp) */
    uint32_t child_cap;
    int nhot;
    uint64_t use_clock;
    uint32_t sample_clock; /* launches, for timing one in ENC_SAMPLE_EVERY */
} sstate;

static sstate *states[MAX_STATES];
static int nstates;
static pthread_mutex_t states_mu = PTHREAD_MUTEX_INITIALIZER;
static int n_held;          /* states currently holding launches */
static int n_open;          /* states with an open chunk */
static int prog_capturing;  /* the program's own captures in progress */
static int n_graphs;        /* graphs alive, all streams */
static int n_join_pending;  /* per-thread states released from another thread */
static __thread pid_t my_tid __attribute__((tls_model("initial-exec")));

static inline pid_t tid(void) {
    if (__builtin_expect(!my_tid, 0)) my_tid = gettid();
    return my_tid;
}

typedef struct tls_cache {
    int kind;
    void *key;
    CUcontext ctx;
    sstate *st;
    uint32_t gen;
} tls_cache;
static __thread tls_cache tcache[4] __attribute__((tls_model("initial-exec")));
static __thread unsigned tcache_next __attribute__((tls_model("initial-exec")));

static void deadline_start(void);

/* ---- driver helpers --------------------------------------------------------- */

static CUstream issue_handle(const sstate *st) {
    if (st->kind == K_LEGACY) return CU_STREAM_LEGACY;
    if (st->kind == K_PER_THREAD) return CU_STREAM_PER_THREAD;
    return st->handle;
}

/* Make st's context current on this thread; returns 1 if it pushed. */
static int enter_ctx(const sstate *st) {
    CUcontext cur = NULL;
    if (!st->ctx || enc_drv.ctxGetCurrent(&cur) != CUDA_SUCCESS || cur == st->ctx) return 0;
    return enc_drv.ctxPushCurrent(st->ctx) == CUDA_SUCCESS;
}
static void leave_ctx(int pushed) {
    if (pushed) {
        CUcontext c;
        enc_drv.ctxPopCurrent(&c);
    }
}

/* Where to issue st's held work from this thread. Per-thread default streams
 * released by another thread go through st->side (see sstate). */
static CUstream begin_issue(sstate *st, int *pushed, int *side) {
    *pushed = enter_ctx(st);
    *side = st->kind == K_PER_THREAD && tid() != st->owner;
    if (!*side) return issue_handle(st);
    enc_drv.streamWaitEvent(st->side, st->ev_start, 0);
    return st->side;
}
static void end_issue(sstate *st, int pushed, int side) {
    if (side && enc_drv.eventRecord(st->ev_done, st->side) == CUDA_SUCCESS && !st->join_pending) {
        st->join_pending = 1;
        __atomic_fetch_add(&n_join_pending, 1, __ATOMIC_RELAXED);
    }
    leave_ctx(pushed);
}
/* The owner thread orders its per-thread stream after work released elsewhere. */
static inline void join_side(sstate *st) {
    if (__builtin_expect(st->join_pending, 0) && tid() == st->owner) {
        enc_drv.streamWaitEvent(CU_STREAM_PER_THREAD, st->ev_done, 0);
        st->join_pending = 0;
        __atomic_fetch_sub(&n_join_pending, 1, __ATOMIC_RELAXED);
    }
}
/* Before holding on a per-thread stream: mark where the hold starts. */
static int per_thread_hold_ok(sstate *st) {
    if (!st->ev_start && (enc_drv.eventCreate(&st->ev_start, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS ||
                          enc_drv.eventCreate(&st->ev_done, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS ||
                          enc_drv.streamCreate(&st->side, CU_STREAM_DEFAULT) != CUDA_SUCCESS))
        return 0;
    return enc_drv.eventRecord(st->ev_start, CU_STREAM_PER_THREAD) == CUDA_SUCCESS;
}

static CUresult issue_rec(const rec *r, const unsigned char *arena, CUstream stream) {
    void *ptrs[MAX_PARAMS];
    const layout *L = r->L;
    for (uint32_t i = 0; i < L->nparams; i++) ptrs[i] = (void *)(arena + r->arg_off + L->off[i]);
    if (r->nattrs == 0)
        return AUDITED(enc_drv.launchKernel(r->f, r->grid[0], r->grid[1], r->grid[2], r->block[0], r->block[1],
                                            r->block[2], r->smem, stream, ptrs, NULL));
    CUlaunchConfig cfg = {.gridDimX = r->grid[0], .gridDimY = r->grid[1], .gridDimZ = r->grid[2],
                          .blockDimX = r->block[0], .blockDimY = r->block[1], .blockDimZ = r->block[2],
                          .sharedMemBytes = r->smem, .hStream = stream,
                          .attrs = (CUlaunchAttribute *)(void *)(arena + r->attr_off), .numAttrs = r->nattrs};
    return AUDITED(enc_drv.launchKernelEx(&cfg, r->f, ptrs, NULL));
}

/* ---- stream states ---------------------------------------------------------- */

static int state_init(sstate *st) {
    uint32_t max_chunk = (uint32_t)enc_opt.max_chunk;
    st->recs = calloc(max_chunk, sizeof(rec));
    st->arena_cap = 16384;
    st->arena = malloc(st->arena_cap);
    st->cap_nodes = 64;
    st->nodes = calloc(st->cap_nodes, sizeof(tnode));
    st->child_cap = 128;
    st->child_tab = malloc(st->child_cap * sizeof(uint32_t));
    if (!st->recs || !st->arena || !st->nodes || !st->child_tab) return -1;
    memset(st->child_tab, 0xff, st->child_cap * sizeof(uint32_t));
    st->nnodes = 1; /* the root */
    st->nodes[ROOT].first_child = UINT32_MAX;
    pthread_mutex_init(&st->mu, NULL);
    return 0;
}

static void state_query(sstate *st) {
    st->blocking = 1;
    if (st->kind == K_EXPLICIT) {
        unsigned flags = 0;
        CUcontext c = NULL;
        enc_tls_guard++;
        if (enc_drv.streamGetFlags(st->handle, &flags) == CUDA_SUCCESS && (flags & CU_STREAM_NON_BLOCKING))
            st->blocking = 0;
        if (enc_drv.streamGetCtx(st->handle, &c) == CUDA_SUCCESS) st->ctx = c;
        enc_tls_guard--;
    }
    st->needs_init = 0;
}

static sstate *state_lookup(int kind, void *key, CUcontext ctx, int create) {
    for (int i = 0; i < 4; i++) {
        tls_cache *c = &tcache[i];
        if (c->st && c->kind == kind && c->key == key && c->ctx == ctx &&
            __atomic_load_n(&c->st->gen, __ATOMIC_ACQUIRE) == c->gen)
            return c->st;
    }
    pid_t owner = kind == K_PER_THREAD ? tid() : 0;
    sstate *st = NULL;
    pthread_mutex_lock(&states_mu);
    int n = __atomic_load_n(&nstates, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++) {
        sstate *s = states[i];
        if (!s->dead && s->kind == kind && (kind == K_EXPLICIT ? s->handle == (CUstream)key : s->ctx == ctx) &&
            (kind != K_PER_THREAD || s->owner == owner)) {
            st = s;
            break;
        }
    }
    if (!st && create) { /* reuse the state of a destroyed stream */
        for (int i = 0; i < n && !st; i++)
            if (states[i]->dead) st = states[i];
        if (st) {
            pthread_mutex_lock(&st->mu);
            st->kind = kind;
            st->handle = kind == K_EXPLICIT ? (CUstream)key : NULL;
            st->ctx = ctx;
            st->owner = owner;
            st->needs_init = 1;
            st->dead = 0;
            __atomic_store_n(&st->gen, st->gen + 1, __ATOMIC_RELEASE);
            pthread_mutex_unlock(&st->mu);
        }
    }
    if (!st && create && n < MAX_STATES) {
        st = calloc(1, sizeof *st);
        if (st && state_init(st) == 0) {
            st->kind = kind;
            st->handle = kind == K_EXPLICIT ? (CUstream)key : NULL;
            st->ctx = ctx;
            st->owner = owner;
            st->needs_init = 1;
            states[n] = st;
            __atomic_store_n(&nstates, n + 1, __ATOMIC_RELEASE);
        } else {
            if (st) ENC_WARN_ONCE("out of memory for stream state: launches on new streams run eagerly");
            free(st);
            st = NULL;
        }
    }
    pthread_mutex_unlock(&states_mu);
    if (st) {
        tls_cache *c = &tcache[tcache_next++ & 3];
        c->kind = kind;
        c->key = key;
        c->ctx = ctx;
        c->st = st;
        c->gen = __atomic_load_n(&st->gen, __ATOMIC_ACQUIRE);
    }
    return st;
}

/* The state of the stream a call names (NULL: legacy, or per-thread for
 * _ptsz/_ptds entry points). Explicit streams are keyed by handle alone. */
static sstate *state_for(CUstream s, int per_thread, int create) {
    int kind;
    if (s == NULL) kind = per_thread ? K_PER_THREAD : K_LEGACY;
    else if (s == CU_STREAM_LEGACY) kind = K_LEGACY;
    else if (s == CU_STREAM_PER_THREAD) kind = K_PER_THREAD;
    else kind = K_EXPLICIT;
    CUcontext ctx = NULL;
    if (kind != K_EXPLICIT) {
        enc_tls_guard++;
        CUresult r = enc_drv.ctxGetCurrent(&ctx);
        enc_tls_guard--;
        if (r != CUDA_SUCCESS || !ctx) return NULL;
    }
    sstate *st = state_lookup(kind, kind == K_EXPLICIT ? (void *)s : NULL, ctx, create);
    if (st && st->needs_init && create) {
        pthread_mutex_lock(&st->mu);
        if (st->needs_init) state_query(st);
        pthread_mutex_unlock(&st->mu);
    }
    return st;
}

/* ---- trie ------------------------------------------------------------------- */

static inline uint32_t child_slot(const sstate *st, uint32_t parent, uint64_t sfp) {
    uint64_t h = sfp ^ ((uint64_t)parent * 0x9e3779b97f4a7c15ULL);
    h ^= h >> 29;
    return (uint32_t)h & (st->child_cap - 1);
}

static inline uint32_t trie_child(const sstate *st, uint32_t parent, uint64_t sfp) {
    uint32_t mask = st->child_cap - 1;
    for (uint32_t i = child_slot(st, parent, sfp);; i = (i + 1) & mask) {
        uint32_t id = st->child_tab[i];
        if (id == UINT32_MAX) return UINT32_MAX;
        if (st->nodes[id].parent == parent && st->nodes[id].sfp == sfp) return id;
    }
}

static int child_tab_insert(sstate *st, uint32_t id) {
    uint32_t mask = st->child_cap - 1;
    for (uint32_t i = child_slot(st, st->nodes[id].parent, st->nodes[id].sfp);; i = (i + 1) & mask)
        if (st->child_tab[i] == UINT32_MAX) {
            st->child_tab[i] = id;
            return 0;
        }
}

static int trie_grow(sstate *st, uint32_t extra) {
    if (st->nnodes + extra > st->cap_nodes) {
        uint32_t cap = st->cap_nodes;
        while (cap < st->nnodes + extra) cap *= 2;
        tnode *nn = realloc(st->nodes, cap * sizeof(tnode));
        if (!nn) return -1;
        st->nodes = nn;
        st->cap_nodes = cap;
    }
    if ((st->nnodes + extra) * 2 > st->child_cap) {
        uint32_t cap = st->child_cap;
        while ((st->nnodes + extra) * 2 > cap) cap *= 2;
        uint32_t *t = malloc(cap * sizeof(uint32_t));
        if (!t) return -1;
        free(st->child_tab);
        st->child_tab = t;
        st->child_cap = cap;
        memset(t, 0xff, cap * sizeof(uint32_t));
        for (uint32_t id = 1; id < st->nnodes; id++) child_tab_insert(st, id);
    }
    return 0;
}

/* Walk (creating) the path for recs[0..n); returns the end node. */
static uint32_t trie_insert(sstate *st, const rec *recs, uint32_t n) {
    if (trie_grow(st, n) != 0) return UINT32_MAX;
    uint32_t node = ROOT;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t c = trie_child(st, node, recs[i].sfp);
        if (c == UINT32_MAX) {
            c = st->nnodes++;
            tnode *t = &st->nodes[c];
            memset(t, 0, sizeof *t);
            t->parent = node;
            t->sfp = recs[i].sfp;
            t->first_child = UINT32_MAX;
            t->f = recs[i].f;
            memcpy(t->grid, recs[i].grid, sizeof t->grid);
            memcpy(t->block, recs[i].block, sizeof t->block);
            t->smem = recs[i].smem;
            child_tab_insert(st, c);
            if (st->nodes[node].first_child == UINT32_MAX) st->nodes[node].first_child = c;
        }
        node = c;
    }
    return node;
}

/* ---- matching --------------------------------------------------------------- */

static inline int same_structure(const rec *a, const unsigned char *aa, const rec *b, const unsigned char *ba) {
    if (a->sfp != b->sfp || a->f != b->f || a->smem != b->smem || a->nattrs != b->nattrs ||
        memcmp(a->grid, b->grid, sizeof a->grid) || memcmp(a->block, b->block, sizeof a->block) ||
        a->L->argbytes != b->L->argbytes)
        return 0;
    return a->nattrs == 0 || memcmp(aa + a->attr_off, ba + b->attr_off, a->nattrs * sizeof(CUlaunchAttribute)) == 0;
}

static inline int same_args(const rec *a, const unsigned char *aa, const rec *b, const unsigned char *ba) {
    return a->afp == b->afp && memcmp(aa + a->arg_off, ba + b->arg_off, a->L->argbytes) == 0;
}

/* First argument that differs (for the report). */
static int first_diff_arg(const rec *a, const unsigned char *aa, const rec *b, const unsigned char *ba) {
    const layout *L = a->L;
    for (uint32_t i = 0; i < L->nparams; i++)
        if (memcmp(aa + a->arg_off + L->off[i], ba + b->arg_off + L->off[i], L->off[L->nparams + i]))
            return (int)i;
    return -1;
}

/* A hot chunk ending at st->node equal to the held launches, or NULL. Sets
 * *pos / *arg / *closest to the best explanation when none matches. */
static hot *terminal_match(sstate *st, uint32_t *pos, int *arg, hot **closest) {
    hot *best = NULL;
    uint32_t best_pos = 0;
    for (hot *v = st->nodes[st->node].variants; v; v = v->next_in_node) {
        if (v->len != st->n) continue;
        uint32_t i = 0;
        for (; i < st->n; i++)
            if (!same_structure(&st->recs[i], st->arena, &v->recs[i], v->arena) ||
                !same_args(&st->recs[i], st->arena, &v->recs[i], v->arena))
                break;
        if (i == st->n) return v;
        if (!best || i > best_pos) { best = v; best_pos = i; }
    }
    *closest = best;
    *pos = best_pos;
    *arg = best ? first_diff_arg(&st->recs[best_pos], st->arena, &best->recs[best_pos], best->arena) : -1;
    return NULL;
}

static void note_divergence(enum enc_divergence_kind kind, const layout *expected, const layout *got, int arg,
                            uint32_t pos) {
    ENC_TSTAT_ADD(divergences, 1);
    ENC_TSTAT_ADD(divergences_by_kind[kind], 1);
    enc_stats_divergence(kind, expected ? expected->name : NULL, got ? got->name : NULL, arg, pos);
    enc_div_info d = {.kind = kind, .expected = expected ? expected->name : NULL, .got = got ? got->name : NULL,
                      .arg_index = arg, .position = pos, .count = 1};
    enc_report_event_divergence(&d);
    if (enc_log_threshold >= ENC_LOG_DEBUG)
        ENC_DEBUG("divergence (%d) at launch %u: expected %s, got %s, argument %d", (int)kind, pos,
                  expected ? expected->name : "-", got ? got->name : "-", arg);
}

static void drop_hot(sstate *st, hot *v, int evicted);

static void eager_issue_held(sstate *st) {
    int pushed, side;
    CUstream s = begin_issue(st, &pushed, &side);
    for (uint32_t i = 0; i < st->n; i++) {
        CUresult r = issue_rec(&st->recs[i], st->arena, s);
        if (r != CUDA_SUCCESS) {
            end_issue(st, pushed, side);
            enc_log(ENC_LOG_ERROR, "re-issuing a held launch of %s failed (CUDA error %d)", st->recs[i].L->name,
                    (int)r);
            enc_core_disable("a held launch could not be issued");
            return;
        }
    }
    end_issue(st, pushed, side);
    ENC_TSTAT_ADD(launches_eager, st->n);
}

/* ---- patching changed arguments into a graph ------------------------------------- */

/* The kernel nodes of a graph captured from recs[0..n), in launch order, or
 * NULL. Capturing one stream gives a chain: node i depends on node i - 1
 * alone. Each node is checked against its launch (kernel, function,
 * arguments), so a node is patched only where it is certain which launch it
 * is. */
static struct gnode *chain_nodes(CUgraph g, const rec *recs, const unsigned char *arena, uint32_t n) {
    if (!enc_drv.graphGetNodes || !enc_drv.graphNodeGetDependencies || !enc_drv.graphNodeGetType ||
        !enc_drv.graphKernelNodeGetParams || !enc_drv.graphExecKernelNodeSetParams)
        return NULL;
    size_t cnt = 0;
    if (enc_drv.graphGetNodes(g, NULL, &cnt) != CUDA_SUCCESS || cnt != n) return NULL;
    CUgraphNode *all = malloc(n * sizeof *all);
    struct gnode *chain = malloc(n * sizeof *chain);
    int32_t *dep = malloc(n * sizeof *dep);
    int ok = all && chain && dep && enc_drv.graphGetNodes(g, all, &cnt) == CUDA_SUCCESS && cnt == n;
    for (uint32_t i = 0; ok && i < n; i++) { /* each node's single dependency, as an index */
        CUgraphNode d[2];
        size_t nd = 2;
        ok = enc_drv.graphNodeGetDependencies(all[i], d, &nd) == CUDA_SUCCESS && nd <= 1;
        dep[i] = -1;
        for (uint32_t j = 0; ok && nd == 1 && j < n; j++)
            if (all[j] == d[0]) dep[i] = (int32_t)j;
        if (ok && nd == 1 && dep[i] < 0) ok = 0;
    }
    int32_t prev = -1;
    for (uint32_t i = 0; ok && i < n; i++) { /* walk the chain from its root */
        int32_t next = -1;
        for (uint32_t j = 0; j < n; j++)
            if (dep[j] == prev) {
                if (next >= 0) { ok = 0; break; } /* a fork: not a chain */
                next = (int32_t)j;
            }
        if (next < 0) ok = 0;
        if (!ok) break;
        chain[i].node = all[next];
        prev = next;
        CUgraphNodeType type;
        CUDA_KERNEL_NODE_PARAMS_v1 kp;
        const rec *r = &recs[i];
        ok = enc_drv.graphNodeGetType(chain[i].node, &type) == CUDA_SUCCESS && type == CU_GRAPH_NODE_TYPE_KERNEL &&
             enc_drv.graphKernelNodeGetParams(chain[i].node, &kp) == CUDA_SUCCESS && (kp.func == r->f || r->L->is_kernel) &&
             kp.gridDimX == r->grid[0] && kp.gridDimY == r->grid[1] && kp.gridDimZ == r->grid[2] &&
             kp.blockDimX == r->block[0] && kp.blockDimY == r->block[1] && kp.blockDimZ == r->block[2] &&
             kp.sharedMemBytes == r->smem && (r->L->nparams == 0 || kp.kernelParams);
        for (uint32_t j = 0; ok && j < r->L->nparams; j++)
            ok = kp.kernelParams[j] &&
                 memcmp(kp.kernelParams[j], arena + r->arg_off + r->L->off[j], r->L->off[r->L->nparams + j]) == 0;
        if (ok && !kp.func) ok = 0; /* a patch must name the node's function */
        if (ok) chain[i].func = kp.func;
    }
    free(all);
    free(dep);
    if (!ok) { free(chain); return NULL; }
    return chain;
}

static int patch_failed; /* the driver refused a patch once: no more patching */

/* A hot chunk ending at st->node whose launches all have the held launches'
 * structure, differing in the arguments of at most half of them (and only
 * where no launch attribute is set), or NULL: the one with fewest
 * differences. */
static hot *patchable(sstate *st) {
    if (!enc_opt.patch || __atomic_load_n(&patch_failed, __ATOMIC_RELAXED)) return NULL;
    hot *best = NULL;
    uint32_t best_k = UINT32_MAX;
    for (hot *v = st->nodes[st->node].variants; v; v = v->next_in_node) {
        if (v->len != st->n || !v->gnodes) continue;
        uint32_t k = 0, i = 0;
        for (; i < st->n; i++) {
            if (!same_structure(&st->recs[i], st->arena, &v->recs[i], v->arena)) break;
            if (!same_args(&st->recs[i], st->arena, &v->recs[i], v->arena) && (st->recs[i].nattrs || ++k > st->n / 2))
                break;
        }
        if (i == st->n && k < best_k) { best = v; best_k = k; }
    }
    return best;
}

/* Write the held launches' arguments into v's graph where they differ.
 * v's recorded arguments follow every node patched, so v stays exact even
 * when a later node's patch fails. */
static CUresult patch_nodes(sstate *st, hot *v) {
    void *ptrs[MAX_PARAMS];
    for (uint32_t i = 0; i < st->n; i++) {
        const rec *h = &st->recs[i];
        if (same_args(h, st->arena, &v->recs[i], v->arena)) continue;
        for (uint32_t j = 0; j < h->L->nparams; j++) ptrs[j] = st->arena + h->arg_off + h->L->off[j];
        CUDA_KERNEL_NODE_PARAMS_v1 kp = {
            .func = v->gnodes[i].func, .gridDimX = h->grid[0], .gridDimY = h->grid[1], .gridDimZ = h->grid[2],
            .blockDimX = h->block[0], .blockDimY = h->block[1], .blockDimZ = h->block[2],
            .sharedMemBytes = h->smem, .kernelParams = h->L->nparams ? ptrs : NULL, .extra = NULL};
        CUresult r = enc_drv.graphExecKernelNodeSetParams(v->exec, v->gnodes[i].node, &kp);
        if (r != CUDA_SUCCESS) return r;
        memcpy(v->arena + v->recs[i].arg_off, st->arena + h->arg_off, h->L->argbytes);
        v->recs[i].afp = h->afp;
    }
    return CUDA_SUCCESS;
}

/* Replay v for the held launches, patching their changed arguments into it
 * first when `patch`. Returns 1 if the graph launch went out; 0 if not, and
 * the caller issues the held launches eagerly: a failed graph launch drops v,
 * a refused patch switches patching off (one warning each). */
static int replay(sstate *st, hot *v, int patch) {
    int pushed, side;
    CUstream s = begin_issue(st, &pushed, &side);
    CUresult r = patch ? patch_nodes(st, v) : CUDA_SUCCESS;
    if (r != CUDA_SUCCESS) {
        end_issue(st, pushed, side);
        __atomic_store_n(&patch_failed, 1, __ATOMIC_RELAXED);
        ENC_WARN_ONCE("patching changed arguments into a captured graph failed (CUDA error %d); from now on "
                      "sequences with changed arguments run eagerly", (int)r);
        return 0;
    }
    r = AUDITED(enc_drv.graphLaunch(v->exec, s));
    end_issue(st, pushed, side);
    if (r != CUDA_SUCCESS) {
        ENC_WARN_ONCE("launching a captured graph failed (CUDA error %d); that sequence now runs eagerly", (int)r);
        drop_hot(st, v, 0);
        return 0;
    }
    v->hits++;
    v->last_used = ++st->use_clock;
    enc_stats_seq_hit(v->id, v->hits);
    ENC_TSTAT_ADD(graph_launches, 1);
    if (patch) ENC_TSTAT_ADD(graph_launches_patched, 1);
    ENC_TSTAT_ADD(launches_replayed, st->n);
    return 1;
}

/* Issue what st holds: one graph launch if a hot chunk matches exactly,
 * else every held launch in order. Called with st->mu held. */
#define ENC_DIVERGED ((enum enc_flush_reason)-1)
static void release(sstate *st, enum enc_flush_reason why, int chunk_complete) {
    if (!st->held) return;
    __atomic_store_n(&st->held, 0, __ATOMIC_RELAXED);
    __atomic_fetch_sub(&n_held, 1, __ATOMIC_RELAXED);
    if (why != ENC_DIVERGED) {
        ENC_TSTAT_ADD(flushes[why], 1);
        enc_stats_count_flush();
    }
    uint32_t pos = 0;
    int arg = -1;
    hot *closest = NULL;
    hot *v = terminal_match(st, &pos, &arg, &closest);
    int patch = !v && (v = patchable(st)) != NULL;
    if (v) {
        if (replay(st, v, patch)) {
            if (chunk_complete) st->fully_replayed = 1;
            return;
        }
    } else if (closest && pos < st->n) {
        note_divergence(ENC_DIV_ARGS, closest->recs[pos].L, st->recs[pos].L, arg, pos);
    } else if (why != ENC_DIVERGED) {
        note_divergence(ENC_DIV_SHORT, NULL, NULL, -1, st->n);
    }
    eager_issue_held(st);
}

/* ---- learning ---------------------------------------------------------------- */

static cand *cand_find(sstate *st, uint64_t h, int create) {
    uint32_t base = (uint32_t)h & (CAND_CAP - 1);
    cand *victim = NULL;
    for (uint32_t i = 0; i < 8; i++) {
        cand *c = &st->cands[(base + i) & (CAND_CAP - 1)];
        if (c->count && c->hash == h) return c;
        if (!c->count) { if (!victim || victim->count) victim = c; }
        else if (c->state == 0 && (!victim || (victim->count && c->count < victim->count))) victim = c;
    }
    if (!create || !victim) return NULL;
    victim->hash = h;
    victim->count = 0;
    victim->state = 0;
    return victim;
}

static int name_matches(const char *patterns, const char *name) {
    char buf[ENC_OPT_STRLEN];
    strncpy(buf, patterns, sizeof buf - 1);
    buf[sizeof buf - 1] = 0;
    char *save = NULL;
    for (char *p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        while (*p == ' ') p++;
        if (*p && fnmatch(p, name, 0) == 0) return 1;
    }
    return 0;
}

static int chunk_allowed(const sstate *st) {
    if (!enc_opt.include[0] && !enc_opt.exclude[0]) return 1;
    for (uint32_t i = 0; i < st->n; i++) {
        const char *name = st->recs[i].L->name;
        if (enc_opt.include[0] && !name_matches(enc_opt.include, name)) return 0;
        if (enc_opt.exclude[0] && name_matches(enc_opt.exclude, name)) return 0;
    }
    return 1;
}

/* Free a hot chunk that is in no trie (any more), its graph and executable too. */
static void free_hot(hot *v) {
    enc_tls_guard++;
    if (v->exec) enc_drv.graphExecDestroy(v->exec); /* an in-flight launch completes first */
    if (v->graph) enc_drv.graphDestroy(v->graph);
    enc_tls_guard--;
    free(v->gnodes);
    free(v->recs);
    free(v->arena);
    free(v);
}

static void drop_hot(sstate *st, hot *v, int evicted) {
    hot **pp = &st->nodes[v->node].variants;
    while (*pp && *pp != v) pp = &(*pp)->next_in_node;
    if (*pp) *pp = v->next_in_node;
    cand *c = cand_find(st, v->chunk_hash, 0);
    if (c) { c->state = evicted ? 0 : 2; c->count = 0; }
    if (evicted) {
        enc_stats_graph_evicted();
        enc_stats_seq_evicted(v->id);
        enc_report_event_evict(v->id, v->hits);
    }
    free_hot(v);
    st->nhot--;
    __atomic_fetch_sub(&n_graphs, 1, __ATOMIC_RELAXED);
}

static void evict_one(sstate *st) {
    hot *lru = NULL;
    for (uint32_t id = 1; id < st->nnodes; id++)
        for (hot *v = st->nodes[id].variants; v; v = v->next_in_node)
            if (!lru || v->last_used < lru->last_used) lru = v;
    if (lru) drop_hot(st, lru, 1);
}

static pthread_rwlock_t capture_rw = PTHREAD_RWLOCK_INITIALIZER;
static __thread int in_wide_call __attribute__((tls_model("initial-exec")));

void enc_core_wide_call_begin(void) {
    if (!in_wide_call++) pthread_rwlock_rdlock(&capture_rw);
}
void enc_core_wide_call_end(void) {
    if (in_wide_call && !--in_wide_call) pthread_rwlock_unlock(&capture_rw);
}

static CUstream private_stream(CUcontext ctx) {
    static struct { CUcontext ctx; CUstream s; } priv[64];
    static int npriv;
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    CUstream s = NULL;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < npriv; i++)
        if (priv[i].ctx == ctx) s = priv[i].s;
    if (!s && npriv < 64 && enc_drv.streamCreate(&s, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS) {
        priv[npriv].ctx = ctx;
        priv[npriv++].s = s;
    }
    pthread_mutex_unlock(&mu);
    return s;
}

/* Capture st's current chunk into a graph. Called with st->mu held. */
static void capture(sstate *st, cand *c, int structural) {
    if (__atomic_load_n(&prog_capturing, __ATOMIC_RELAXED) > 0) return; /* try again next time */
    if (!chunk_allowed(st)) { c->state = 2; return; }
    if (__atomic_load_n(&n_graphs, __ATOMIC_RELAXED) >= enc_opt.max_graphs) {
        evict_one(st);
        if (__atomic_load_n(&n_graphs, __ATOMIC_RELAXED) >= enc_opt.max_graphs) return;
    }
    hot *v = calloc(1, sizeof *v);
    if (!v) return;
    rec *recs = v->recs = malloc(st->n * sizeof(rec));
    unsigned char *arena = v->arena = malloc(st->arena_used ? st->arena_used : 1);
    if (!recs || !arena) { free_hot(v); return; }
    memcpy(recs, st->recs, st->n * sizeof(rec));
    memcpy(arena, st->arena, st->arena_used);

    /* One capture at a time (they share the private stream), and none while a
     * context-wide call of the program runs: the driver fails cuCtxSynchronize
     * while any stream of the context captures, in every capture mode. If
     * such a call is in flight, try again the next time the chunk comes. */
    if (pthread_rwlock_trywrlock(&capture_rw) != 0) {
        free_hot(v);
        return;
    }
    uint64_t t0 = now_ns();
    enc_tls_guard++;
    int pushed = enter_ctx(st);
    const char *what = NULL;
    CUresult r = CUDA_SUCCESS;
    CUgraph g = NULL;
    CUstream priv = private_stream(st->ctx);
    if (!priv) { what = "creating encore's capture stream"; r = CUDA_ERROR_UNKNOWN; }
    if (!what && (r = enc_drv.streamBeginCapture(priv, CU_STREAM_CAPTURE_MODE_RELAXED)) != CUDA_SUCCESS)
        what = "cuStreamBeginCapture";
    if (!what) {
        for (uint32_t i = 0; i < st->n && r == CUDA_SUCCESS; i++) r = issue_rec(&recs[i], arena, priv);
        CUresult re = enc_drv.streamEndCapture(priv, &g);
        if (r != CUDA_SUCCESS) what = "a launch during capture";
        else if (re != CUDA_SUCCESS) { what = "cuStreamEndCapture"; r = re; }
    }
    uint64_t t1 = now_ns();
    if (!what && (r = enc_drv.graphInstantiate(&v->exec, g, 0)) != CUDA_SUCCESS) {
        what = "cuGraphInstantiate";
        v->exec = NULL;
    }
    if (!what && enc_opt.patch && (v->gnodes = chain_nodes(g, recs, arena, st->n)) != NULL) {
        v->graph = g; /* kept: its node handles name the nodes to patch */
        g = NULL;
    }
    if (g) enc_drv.graphDestroy(g);
    leave_ctx(pushed);
    pthread_rwlock_unlock(&capture_rw);
    enc_tls_guard--;
    uint64_t t2 = now_ns();

    if (what) {
        c->state = 2; /* never again for this sequence */
        enc_stats_capture_failed();
        enc_report_event_capture_failure(0, what, (int)r);
        ENC_WARN_ONCE("capturing a launch sequence failed in %s (CUDA error %d); such sequences run eagerly",
                      what, (int)r);
        free_hot(v);
        return;
    }
    if (structural && !v->gnodes) {
        /* captured for patching, but its nodes cannot be told apart: holding
         * launches back for a graph that can only match by chance does not pay */
        c->state = 2;
        ENC_DEBUG("a repeating launch structure cannot be patched (its graph nodes could not be matched to its launches)");
        free_hot(v);
        return;
    }
    uint32_t node = trie_insert(st, recs, st->n);
    if (node == UINT32_MAX) {
        free_hot(v);
        return;
    }
    v->len = st->n;
    v->node = node;
    v->chunk_hash = c->hash; /* the candidate it came from (exact or structural) */
    v->last_used = ++st->use_clock;
    v->next_in_node = st->nodes[node].variants;
    st->nodes[node].variants = v;
    st->nhot++;
    __atomic_fetch_add(&n_graphs, 1, __ATOMIC_RELAXED);
    c->state = 1;
    v->id = enc_stats_new_seq(v->len, recs[0].L->name, v->len > 1 ? recs[1].L->name : NULL,
                              v->len > 2 ? recs[2].L->name : NULL);
    enc_stats_graph_captured();
    enc_report_event_capture(v->id, v->len, recs[0].L->name, (double)(t1 - t0) / 1e3, (double)(t2 - t1) / 1e3);
    ENC_DEBUG("captured a sequence of %u launches starting with %s", v->len, recs[0].L->name);
}

/* The chunk ends (flush point or length): release, learn, reset. */
static void end_chunk(sstate *st, enum enc_flush_reason why) {
    release(st, why, 1);
    if (why != ENC_FLUSH_CHUNK_END) st->anchor_set = 0; /* a flush point: the next launch anchors */
    if (!st->open) return;
    uint64_t gap = (now_ns() - st->chunk_t0) / (st->n ? st->n : 1);
    st->gap_ns = st->gap_ns ? (st->gap_ns * 7 + gap) / 8 : gap;
    int sparse = st->gap_ns > (uint64_t)enc_opt.max_gap * 1000;
    if (sparse != st->sparse) {
        st->sparse = sparse;
        ENC_DEBUG("launches on a stream now come %.1f us apart on average: %s", st->gap_ns / 1e3,
                  sparse ? "not held back (ENCORE_MAX_GAP)" : "held back again");
    }
    if (!st->fully_replayed && !st->sparse && !st->poisoned && st->n >= (uint32_t)enc_opt.min_chunk) {
        cand *c = cand_find(st, st->chunk_hash, 1);
        if (c && c->state == 0 && ++c->count >= (uint32_t)enc_opt.min_repeats) capture(st, c, 0);
        /* The same structure with other arguments (a step counter, say) is
         * worth a graph too when the arguments can be patched in: count it
         * apart, and capture the chunk as it is now. */
        cand *sc = enc_opt.patch ? cand_find(st, st->chunk_shash ^ STRUCT_SALT, 1) : NULL;
        if (sc && sc->state == 0) {
            if (c && c->state == 1) sc->state = 1; /* just captured, exactly */
            else if (++sc->count >= (uint32_t)enc_opt.min_repeats) capture(st, sc, 1);
        }
    }
    st->n = 0;
    st->arena_used = 0;
    st->poisoned = 0;
    st->fully_replayed = 0;
    st->chunk_hash = 0;
    st->chunk_shash = 0;
    __atomic_store_n(&st->open, 0, __ATOMIC_RELAXED);
    __atomic_fetch_sub(&n_open, 1, __ATOMIC_RELAXED);
}

/* ---- recording a launch ------------------------------------------------------- */

static int arena_reserve(sstate *st, size_t bytes) {
    if (st->arena_used + bytes <= st->arena_cap) return 0;
    size_t cap = st->arena_cap;
    while (cap < st->arena_used + bytes) cap *= 2;
    unsigned char *a = realloc(st->arena, cap); /* rare: amortised over the stream's life */
    if (!a) return -1;
    st->arena = a;
    st->arena_cap = cap;
    return 0;
}

static int copy_attrs(const CUlaunchConfig *cfg, CUlaunchAttribute *out) {
    for (unsigned i = 0; i < cfg->numAttrs; i++) {
        const CUlaunchAttribute *a = &cfg->attrs[i];
        memset(&out[i], 0, sizeof out[i]);
        out[i].id = a->id;
        switch (a->id) {
        case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
            out[i].value.clusterDim.x = a->value.clusterDim.x;
            out[i].value.clusterDim.y = a->value.clusterDim.y;
            out[i].value.clusterDim.z = a->value.clusterDim.z;
            break;
        case CU_LAUNCH_ATTRIBUTE_PRIORITY:
        case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION:
        case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
        case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
            out[i].value.priority = a->value.priority; /* all four are one int */
            break;
        case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
        case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT:
        case CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT:
            return -1; /* events and grid-wide sync: run eagerly */
        default:
            out[i].value = a->value;
        }
    }
    return 0;
}

/* Record launch l at position st->n. Returns 0, or -1 if it cannot be
 * recorded (then the chunk is poisoned). */
static int record(sstate *st, const enc_launch *l, const layout *L) {
    rec *r = &st->recs[st->n];
    uint32_t nattrs = l->config ? l->config->numAttrs : 0;
    if (nattrs > MAX_ATTRS) return -1;
    size_t attr_bytes = nattrs * sizeof(CUlaunchAttribute);
    size_t need = ((L->argbytes + 7) & ~(size_t)7) + attr_bytes;
    if (arena_reserve(st, need) != 0) return -1;
    unsigned char *args = st->arena + st->arena_used;
    if (l->params) {
        for (uint32_t i = 0; i < L->nparams; i++) {
            if (!l->params[i]) return -1;
            memcpy(args + L->off[i], l->params[i], L->off[L->nparams + i]);
        }
        /* padding between parameters: zero it so equal launches hash equally */
        uint32_t end = 0;
        for (uint32_t i = 0; i < L->nparams; i++) {
            if (L->off[i] > end) memset(args + end, 0, L->off[i] - end);
            end = L->off[i] + L->off[L->nparams + i];
        }
    } else if (l->extra) {
        const void *buf = NULL;
        size_t size = 0;
        for (void **e = l->extra; *e != CU_LAUNCH_PARAM_END; e += 2) {
            if (*e == CU_LAUNCH_PARAM_BUFFER_POINTER) buf = e[1];
            else if (*e == CU_LAUNCH_PARAM_BUFFER_SIZE) size = *(size_t *)e[1];
            else return -1;
        }
        if (!buf || size < L->argbytes) return -1;
        memcpy(args, buf, L->argbytes);
    } else if (L->nparams) {
        return -1;
    }
    CUlaunchAttribute *attrs = (CUlaunchAttribute *)(void *)(args + ((L->argbytes + 7) & ~(size_t)7));
    if (nattrs && copy_attrs(l->config, attrs) != 0) return -1;

    r->f = l->f;
    r->L = L;
    memcpy(r->grid, l->grid, sizeof r->grid);
    memcpy(r->block, l->block, sizeof r->block);
    r->smem = l->smem;
    r->nattrs = nattrs;
    r->arg_off = (uint32_t)st->arena_used;
    r->attr_off = (uint32_t)((unsigned char *)attrs - st->arena);
    uint64_t sfp = enc_structural_fp((const void *)l->f, l->grid, l->block, l->smem, L->argbytes, nattrs);
    if (nattrs) sfp = XXH3_64bits_withSeed(attrs, attr_bytes, sfp);
    r->sfp = sfp;
    r->afp = XXH3_64bits(args, L->argbytes);
    uint64_t pair[2] = {r->sfp, r->afp};
    st->chunk_hash = XXH3_64bits_withSeed(pair, sizeof pair, st->chunk_hash);
    st->chunk_shash = shash_step(st->chunk_shash, r->sfp);
    st->arena_used += need;
    return 0;
}

static inline void open_chunk(sstate *st) {
    if (!st->open) {
        st->chunk_t0 = now_ns();
        __atomic_store_n(&st->open, 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&n_open, 1, __ATOMIC_RELAXED);
    }
}

/* The launch just recorded at recs[n] is the anchor: end the chunk before it
 * and make it the first launch of the next one. */
static void cut_before_last(sstate *st, uint64_t hash_before, uint64_t shash_before) {
    rec r = st->recs[st->n];
    size_t off = r.arg_off, len = st->arena_used - off;
    st->arena_used = off;
    st->chunk_hash = hash_before;
    st->chunk_shash = shash_before;
    end_chunk(st, ENC_FLUSH_CHUNK_END);
    memmove(st->arena, st->arena + off, len);
    r.arg_off -= (uint32_t)off;
    r.attr_off -= (uint32_t)off;
    st->recs[0] = r;
    st->arena_used = len;
    uint64_t pair[2] = {r.sfp, r.afp};
    st->chunk_hash = XXH3_64bits_withSeed(pair, sizeof pair, 0);
    st->chunk_shash = shash_step(0, r.sfp);
    open_chunk(st);
}

/* A launch of f (layout L, NULL if not known yet) does not continue any hot
 * chunk from the node st holds at. If no hot chunk ends there, that launch is
 * the divergence (noted if `note`); then what is held is released: replayed if a hot chunk
 * ending here matches, eagerly otherwise. */
static void diverge(sstate *st, CUfunction f, const layout *L, int note) {
    const tnode *cur = &st->nodes[st->node];
    if (note && !cur->variants) {
        const tnode *e = cur->first_child != UINT32_MAX ? &st->nodes[cur->first_child] : NULL;
        int kernel = !e || e->f != f;
        note_divergence(kernel ? ENC_DIV_KERNEL : ENC_DIV_CONFIG, e ? layout_for(e->f) : NULL, L, -1, st->n);
    }
    release(st, ENC_DIVERGED, 0);
}

static CUresult call_real(const enc_launch *l) {
    if (l->shape == ENC_SHAPE_EX)
        return ((PFN_cuLaunchKernelEx_v11060)l->real)(l->config, l->f, l->params, l->extra);
    return ((PFN_cuLaunchKernel_v4000)l->real)(l->f, l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1],
                                               l->block[2], l->smem, l->stream, l->params, l->extra);
}

/* Legacy-stream implicit synchronisation: work on the legacy stream waits
 * for every blocking stream and the other way round, so before anything is
 * enqueued on one side, what is held on the other side must be issued. */
static void legacy_order(sstate *st) {
    int held = __atomic_load_n(&n_held, __ATOMIC_RELAXED);
    if (held == 0 || (held == 1 && __atomic_load_n(&st->held, __ATOMIC_RELAXED))) return; /* only st itself */
    if (st->kind == K_EXPLICIT && !st->blocking) return;
    int n = __atomic_load_n(&nstates, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++) {
        sstate *o = states[i];
        if (o == st || !__atomic_load_n(&o->held, __ATOMIC_RELAXED) || o->ctx != st->ctx) continue;
        int relevant = st->kind == K_LEGACY ? (o->kind != K_EXPLICIT || o->blocking) : o->kind == K_LEGACY;
        if (!relevant) continue;
        pthread_mutex_lock(&o->mu);
        release(o, ENC_FLUSH_LEGACY_ORDER, 0);
        pthread_mutex_unlock(&o->mu);
    }
}


CUresult enc_core_launch(const enc_launch *l) {
    if (enc_tls_guard) return call_real(l);
    enc_core_ensure_init();
    if (!enc_active) return call_real(l);
    enc_stats_touch();
    ENC_TSTAT_ADD(calls[ENC_CLASS_LAUNCH], 1);
    ENC_TSTAT_ADD(launches_seen, 1);
    enc_tls_guard = 1;
    CUresult result = CUDA_SUCCESS;
    sstate *st = state_for(l->stream, l->per_thread, 1);
    if (!st) { /* no context current, or out of states: exactly as without encore */
        enc_core_flush_all(ENC_FLUSH_OPAQUE_LAUNCH);
        ENC_TSTAT_ADD(launches_eager, 1);
        result = call_real(l);
        enc_tls_guard = 0;
        return result;
    }
    legacy_order(st);
    pthread_mutex_lock(&st->mu);
    join_side(st);
    int capturing = __atomic_load_n(&prog_capturing, __ATOMIC_RELAXED) > 0;
    int issued = 0;
    if (st->sparse && !st->held && !capturing) {
        /* ENCORE_MAX_GAP: this stream is neither held nor captured. Its
         * launches are only counted and timed, to notice when they come
         * faster: no layout, no copy, no hash. */
        open_chunk(st);
        st->poisoned = 1; /* nothing recorded: never a capture candidate */
        goto eager;
    }
    const layout *L = layout_cached(l->f);
    if (!L && !capturing) {
        /* First launch of this kernel: it cannot be part of a hot chunk. Run
         * it first (the driver may load code lazily at its first launch, and
         * its parameters cannot be read before), then learn its layout. */
        if (st->held) diverge(st, l->f, NULL, 1);
        ENC_TSTAT_ADD(launches_eager, 1);
        result = AUDITED(call_real(l));
        issued = 1;
        L = result == CUDA_SUCCESS ? layout_for(l->f) : NULL;
    }
    if (capturing || !L || !L->ok || (l->config && l->config->numAttrs > MAX_ATTRS)) {
        /* the program is capturing, or a launch we cannot re-issue: in order, eagerly */
        end_chunk(st, ENC_FLUSH_OPAQUE_LAUNCH);
        pthread_mutex_unlock(&st->mu);
        if (!issued) {
            ENC_TSTAT_ADD(launches_eager, 1);
            result = AUDITED(call_real(l));
        }
        enc_tls_guard = 0;
        return result;
    }
    /* Time one launch in ENC_SAMPLE_EVERY, a prime: a power of two would
     * alias with chunk lengths and always sample the same positions (say,
     * only the launches that end a chunk and launch its graph). */
    uint64_t t0 = ++st->sample_clock % ENC_SAMPLE_EVERY == 0 ? now_ns() : 0;
    open_chunk(st);
    uint64_t hash_before = st->chunk_hash, shash_before = st->chunk_shash;
    int recorded = record(st, l, L) == 0;
    if (!recorded) {
        st->poisoned = 1;
        ENC_DEBUG("launch of %s could not be recorded", L->name);
    } else if (!st->anchor_set) {
        st->anchor_set = 1;
        st->anchor_sfp = st->recs[st->n].sfp;
        st->anchor_afp = st->recs[st->n].afp;
    } else if (st->n >= (uint32_t)enc_opt.max_chunk / 2 && st->recs[st->n].sfp == st->anchor_sfp &&
               st->recs[st->n].afp == st->anchor_afp) {
        /* not before half a chunk: an anchor that recurs inside the loop body
         * would otherwise cut it into many small graphs */
        cut_before_last(st, hash_before, shash_before);
    }

    if (st->held) {
        uint32_t c = recorded ? trie_child(st, st->node, st->recs[st->n].sfp) : UINT32_MAX;
        if (c != UINT32_MAX) {
            st->node = c;
            st->n++;
            goto held;
        }
        diverge(st, l->f, L, recorded); /* diverged from every hot chunk (or a terminal chunk continues) */
        if (!enc_active) goto eager;
    } else if (!issued && st->n == 0 && recorded && st->nhot > 0 && !st->sparse) {
        uint32_t c = trie_child(st, ROOT, st->recs[0].sfp);
        if (c != UINT32_MAX && (st->kind != K_PER_THREAD || per_thread_hold_ok(st))) {
            __atomic_store_n(&st->held, 1, __ATOMIC_RELAXED);
            st->node = c;
            st->n = 1;
            st->held_since = now_ns();
            __atomic_fetch_add(&n_held, 1, __ATOMIC_RELAXED);
            deadline_start();
            goto held;
        }
    }
eager:
    st->n++;
    if (!issued) {
        ENC_TSTAT_ADD(launches_eager, 1);
        result = AUDITED(call_real(l));
    }
    if (result != CUDA_SUCCESS) st->poisoned = 1; /* never capture a sequence that failed */
    if (st->n >= (uint32_t)enc_opt.max_chunk) end_chunk(st, ENC_FLUSH_CHUNK_END);
    st->use_clock++;
    pthread_mutex_unlock(&st->mu);
    enc_tls_guard = 0;
    return result;

held:
    if (st->n >= (uint32_t)enc_opt.max_chunk) end_chunk(st, ENC_FLUSH_CHUNK_END);
    st->use_clock++;
    pthread_mutex_unlock(&st->mu);
    if (t0) {
        ENC_TSTAT_ADD(deferred_ns, now_ns() - t0);
        ENC_TSTAT_ADD(deferred_samples, 1);
    }
    enc_tls_guard = 0;
    return CUDA_SUCCESS;
}

void enc_core_opaque_launch(CUstream stream, int per_thread) {
    ENC_TSTAT_ADD(launches_seen, 1);
    ENC_TSTAT_ADD(launches_eager, 1);
    if (per_thread < 0) enc_core_flush_all(ENC_FLUSH_OPAQUE_LAUNCH);
    else enc_core_flush_stream(stream, per_thread, ENC_FLUSH_OPAQUE_LAUNCH);
}

/* ---- flush points ------------------------------------------------------------- */

void enc_core_flush_stream(CUstream stream, int per_thread, enum enc_flush_reason why) {
    if (!enc_active || (__atomic_load_n(&n_open, __ATOMIC_RELAXED) == 0 &&
                        __atomic_load_n(&n_join_pending, __ATOMIC_RELAXED) == 0))
        return;
    sstate *st = state_for(stream, per_thread, 1);
    if (!st) {
        enc_core_flush_all(why);
        return;
    }
    legacy_order(st);
    pthread_mutex_lock(&st->mu);
    join_side(st);
    end_chunk(st, why);
    pthread_mutex_unlock(&st->mu);
}

void enc_core_flush_all(enum enc_flush_reason why) {
    if (__atomic_load_n(&n_open, __ATOMIC_RELAXED) == 0) return;
    int n = __atomic_load_n(&nstates, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++) {
        sstate *st = states[i];
        if (!__atomic_load_n(&st->open, __ATOMIC_RELAXED)) continue;
        pthread_mutex_lock(&st->mu);
        end_chunk(st, why);
        pthread_mutex_unlock(&st->mu);
    }
}

void enc_core_capture_begin(CUstream stream, int per_thread, CUresult r) {
    (void)stream; (void)per_thread;
    if (r == CUDA_SUCCESS) __atomic_fetch_add(&prog_capturing, 1, __ATOMIC_RELAXED);
}

void enc_core_capture_end(CUstream stream, int per_thread, CUresult r) {
    (void)stream; (void)per_thread; (void)r;
    int c = __atomic_load_n(&prog_capturing, __ATOMIC_RELAXED);
    while (c > 0 && !__atomic_compare_exchange_n(&prog_capturing, &c, c - 1, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
}

static void forget_learning(sstate *st) {
    for (uint32_t id = 1; id < st->nnodes; id++)
        while (st->nodes[id].variants) drop_hot(st, st->nodes[id].variants, 0);
    st->nnodes = 1;
    st->nodes[ROOT].first_child = UINT32_MAX;
    memset(st->child_tab, 0xff, st->child_cap * sizeof(uint32_t));
    memset(st->cands, 0, sizeof st->cands);
}

void enc_core_stream_destroy(CUstream stream, int per_thread) {
    if (stream == NULL || stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD) {
        enc_core_flush_stream(stream, per_thread, ENC_FLUSH_STREAM_CALL);
        return;
    }
    sstate *st = state_for(stream, per_thread, 0);
    if (!st) return;
    pthread_mutex_lock(&states_mu);
    pthread_mutex_lock(&st->mu);
    end_chunk(st, ENC_FLUSH_STREAM_CALL);
    forget_learning(st);
    st->anchor_set = 0;
    st->dead = 1; /* free for the next new stream; thread caches see the new generation */
    st->handle = NULL;
    __atomic_store_n(&st->gen, st->gen + 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&st->mu);
    pthread_mutex_unlock(&states_mu);
}

void enc_core_module_unload(void) {
    enc_core_flush_all(ENC_FLUSH_ALL_CALL);
    int n = __atomic_load_n(&nstates, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++) {
        pthread_mutex_lock(&states[i]->mu);
        end_chunk(states[i], ENC_FLUSH_ALL_CALL);
        forget_learning(states[i]);
        states[i]->needs_init = 1;
        pthread_mutex_unlock(&states[i]->mu);
    }
    layouts_reset();
}

void enc_core_disable(const char *why) {
    static int once;
    if (__atomic_exchange_n(&once, 1, __ATOMIC_ACQ_REL)) return;
    enc_log(ENC_LOG_WARN, "%s; encore switches itself off and passes every call through from now on", why);
    enc_stats_set_disabled();
    enc_core_flush_all(ENC_FLUSH_ALL_CALL);
    __atomic_store_n(&enc_active, 0, __ATOMIC_RELEASE);
}

/* ---- the deadline --------------------------------------------------------------- */

static void *deadline_main(void *arg) {
    (void)arg;
    enc_tls_guard = 1; /* everything this thread does is encore's own */
    int64_t dl = enc_opt.flush_deadline * 1000;
    struct timespec nap = {0, dl / 2 > 20000 ? dl / 2 : 20000};
    if (nap.tv_nsec >= 1000000000) { nap.tv_sec = nap.tv_nsec / 1000000000; nap.tv_nsec %= 1000000000; }
    for (;;) {
        nanosleep(&nap, NULL);
        if (!__atomic_load_n(&n_held, __ATOMIC_RELAXED)) continue;
        uint64_t now = now_ns();
        int n = __atomic_load_n(&nstates, __ATOMIC_ACQUIRE);
        for (int i = 0; i < n; i++) {
            sstate *st = states[i];
            if (!__atomic_load_n(&st->held, __ATOMIC_RELAXED)) continue;
            if (pthread_mutex_trylock(&st->mu) != 0) continue;
            if (st->held && now - st->held_since >= (uint64_t)dl) release(st, ENC_FLUSH_DEADLINE, 0);
            pthread_mutex_unlock(&st->mu);
        }
    }
    return NULL;
}

static pthread_once_t deadline_once = PTHREAD_ONCE_INIT;
static void deadline_spawn(void) {
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &a, deadline_main, NULL) != 0)
        enc_core_disable("could not start the flush-deadline thread");
    pthread_attr_destroy(&a);
}
static void deadline_start(void) { pthread_once(&deadline_once, deadline_spawn); }

/* ---- start-up and exit ------------------------------------------------------------ */

static void at_exit(void) {
    enc_tls_guard = 1;
    if (enc_active) enc_core_flush_all(ENC_FLUSH_EXIT);
    enc_report_at_exit();
}

/* A forked child inherits the parent's held launches and stream states but
 * not the threads (driver workers, the deadline thread) or, in CUDA, a usable
 * context: issuing or waiting for the parent's work there can only hang or
 * fail. Once the parent has used streams through encore, the child passes
 * every call straight through. */
static void after_fork_in_child(void) {
    if (!__atomic_load_n(&nstates, __ATOMIC_ACQUIRE)) return; /* nothing of the parent's: stay active */
    __atomic_store_n(&enc_active, 0, __ATOMIC_RELEASE);
    ENC_DEBUG("forked child: passing every call straight through (the CUDA state is the parent's)");
}

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static void init_once_fn(void) {
    enc_tls_guard++;
    enc_options_init();
    enc_log_threshold = enc_opt.log_level;
    enc_report_init();
    if (enc_opt.print_config) enc_options_print();
    int active = enc_opt.enabled;
    if (active && enc_driver_resolve() != 0) active = 0;
    void *e = enc_real_dlsym(RTLD_DEFAULT, "encore_audit_enter");
    void *x = enc_real_dlsym(RTLD_DEFAULT, "encore_audit_leave");
    if (e && x) {
        memcpy(&enc_audit_enter, &e, sizeof e);
        memcpy(&enc_audit_leave, &x, sizeof x);
    }
    atexit(at_exit);
    pthread_atfork(NULL, NULL, after_fork_in_child);
    __atomic_store_n(&enc_active, active, __ATOMIC_RELEASE);
    __atomic_store_n(&enc_initialized, 1, __ATOMIC_RELEASE);
    enc_tls_guard--;
}

void enc_core_init(void) { pthread_once(&init_once, init_once_fn); }
