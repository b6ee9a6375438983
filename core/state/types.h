/* encore: the engine's shared records: constants, a kernel's parameter
 * layout, a recorded launch, a stream's open sequence, a captured graph.
 * Declared at the bottom of the engine (core/state/) so that every floor
 * reads them; the functions on them are their floors' (core/graphs/layout.h,
 * core/streams/streams.h, core/graphs/store.h).
 *
 * Vocabulary. A *sequence* is what a stream records between cut points; the
 * one being recorded is the stream's open sequence. A *graph* is a
 * sequence's captured form. A *candidate* is a sequence's hash counted
 * towards capture. The *trie* holds, per stream, the structure of every
 * captured sequence, one *trie node* per launch; graphs hang at the node
 * where their sequence ends. *Holding* = deferring launches while they walk
 * the trie; *release* = issuing what is held (one graph launch if it
 * matches, else eagerly in order). */
#ifndef ENCORE_TYPES_H
#define ENCORE_TYPES_H

#include <cuda.h>
#include <stdint.h>
#include <time.h>

#include "core/state/calls.h"

#define ENC_MAX_PARAMS 256      /* kernel parameters read at most (more: the kernel runs eagerly) */
#define ENC_MAX_ATTRS 16        /* launch attributes recorded at most (more: the launch runs eagerly) */
#define ENC_MAX_ARG_BYTES 65536 /* a layout reaching past this is not trusted */
#define ENC_KERNEL_NAME_MAX 96  /* kernel names are kept (truncated) to this size, NUL included */
#define ENC_LAYOUT_HOT 192      /* where a layout's launch fields begin (a multiple of 64) */
#define ENC_LAYOUT_CAP 16384    /* kernels whose parameter layout is cached (a power of two) */
#define ENC_MAX_STATES 4096     /* stream states, all threads together */
#define ENC_CAND_CAP 1024       /* candidates per stream (a power of two) */
/* Sequences a stream ends, once the flush deadline moved its cap (core/streams/sequence.c), before
 * graphs are captured on it again (core/graphs/learn.c). Each change of the cap moves the places where
 * the stream's loop is cut, and graphs captured at the old places stop matching. In a slow stretch of a
 * process the deadline moves the cap again and again, and graphs of each length were captured and left
 * behind: on the H200, a ResNet-18 process whose passive steps ran 70% slower than the other engine's
 * left 11 of 40 graphs never replayed (call 60); prog_worth slowstretch left 8 of 27 (ENCORE_CUT_BACKOFF
 * off) and 5 of 27 (on), and leaves 1 of 4 and 2 of 23 with this. A sequence due for capture is captured
 * when it comes again after that. */
#define ENC_CAP_SETTLE 4u
#define ENC_TRIE_ROOT 0        /* the trie node before any launch */
#define ENC_NO_NODE UINT32_MAX /* no such trie node */
#define ENC_LEAD 64            /* launches after a flush point remembered to find a loop's start (sequence.c) */
#define ENC_MIN_SEQ_CAP 8      /* ENCORE_HOLD_BUDGET never cuts sequences shorter than this */
#define ENC_CAP_VOTES 16       /* sequences in a row that must ask for a new cap before it is taken */
#define ENC_CAP_FIRST_VOTES 2  /* ... for a stream's first cap */
#define ENC_MAX_HELD_EVENTS 32 /* distinct events a stream holds records of or waits on (more: not held) */
#define ENC_SAMPLE_EVERY 61    /* one launch in this many is timed (a prime, see launch.c) */
/* A timed launch slower than this is left out of the means that the report and the time estimate
 * multiply by counts: it paid a one-off (the thread preempted, a page touched for the first time),
 * not what a launch costs (a few microseconds). A kernel's first launch, which may load its module
 * (CUDA's lazy loading: a millisecond or more), is never timed (launch.c, issue_first_launch). */
#define ENC_SAMPLE_MAX_NS 50000
/* 2^64 / golden ratio: the multiplier that spreads consecutive keys (Fibonacci hashing). */
#define ENC_GOLDEN_64 0x9e3779b97f4a7c15ULL
/* Keeps structural candidates (kernels and configurations alone) apart from exact ones. */
#define ENC_STRUCT_SALT 0x5f3759df9e3779b9ULL
#define ENC_CONFIG_SALT 0x2545f4914f6cdd1dULL /* a configuration's candidate (learn.c) */

static inline uint64_t enc_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- structures ---------------------------------------------------------------- */

/* What a layout's function belongs to: an unload drops the layouts of its code. */
enum enc_layout_owner { ENC_OWNER_UNKNOWN = 0, ENC_OWNER_MODULE = 1, ENC_OWNER_LIBRARY = 2 };

/* A kernel's parameter layout, as the driver reports it. */
typedef struct enc_layout {
    union { /* ---- what only the slow ways read, in the first ENC_LAYOUT_HOT bytes ---- */
        struct {
            int owner_kind; /* enum enc_layout_owner */
            void *owner;    /* the CUmodule (a CUfunction's) or CUlibrary (a CUkernel's) */
            CUcontext ctx;  /* current when it was read: a CUfunction's context */
            int retired;    /* taken out of the cache (its code goes away); set by the retiring thread */
            struct enc_layout *retired_next;
            int cache_config_p1; /* the cache configuration last set through this handle, plus one (0: not known); atomic */
            unsigned changed_mark; /* enc_layouts_mark_code's stamp of the last change of its code's attributes */
            char name[ENC_KERNEL_NAME_MAX];
        };
        char cold_[ENC_LAYOUT_HOT];
    };
    /* ---- what a held launch reads, ENC_LAYOUT_HOT bytes in: with the first offsets, one cache
     * line where the layout is allocated aligned to one (layout.c, nodes.c; docs/maintainers.md) ---- */
    void *func;
    uint32_t nparams;
    uint32_t argbytes; /* packed size: last offset + size */
    uint8_t ok;        /* 0: opaque, launches of it run eagerly */
    uint8_t ascending; /* each parameter's offset past the previous one's end: copied in one pass (record.c) */
    uint8_t is_op;     /* a stream operation's stand-in (core/graphs/nodes.c): no function, never validated */
    uint8_t untrusted; /* an attribute validation does not know changed since its first launch: never held; atomic */
    uint8_t is_kernel; /* the handle is a CUkernel passed as a CUfunction */
    /* The function's limits a held launch must keep (validate.c): read at
     * its first held launch and again after the program changed a function
     * attribute (lim_gen trails enc_hot.func_attr_gen); for a CUkernel, on the
     * device lim_dev. All atomic. */
    unsigned lim_gen;
    int lim_dev;
    int max_threads, max_dyn_smem;
    uint32_t off[]; /* nparams offsets, then nparams sizes: three parameters' in the same cache line */
} enc_layout;

_Static_assert(__builtin_offsetof(enc_layout, func) == ENC_LAYOUT_HOT && ENC_LAYOUT_HOT % 64 == 0,
               "a layout's launch fields begin a cache line");
_Static_assert(__builtin_offsetof(enc_layout, off) - ENC_LAYOUT_HOT + 6 * sizeof(uint32_t) <= 64,
               "three parameters' offsets and sizes share the launch fields' cache line");

static inline uint32_t enc_layout_size(const enc_layout *L, uint32_t i) { return L->off[L->nparams + i]; }

/* A function's layout as a stream remembers it (core/graphs/layout.h enc_layout_remembered). */
#define ENC_LAYOUT_MEMO_BITS \
    6 /* functions remembered per stream: 64, one per hash of the function (4 thrashed on a loop of two kernels, and a PyTorch model has dozens: each miss looks in the process table, two more cache misses) */
typedef struct enc_layout_memo {
    CUfunction f;
    const enc_layout *L;
} enc_layout_memo;

/* A recorded launch; its argument bytes and attributes live in an arena. */
typedef struct enc_rec {
    CUfunction f;
    const enc_layout *L;
    unsigned grid[3], block[3], smem;
    uint32_t nattrs;
    uint32_t arg_off;  /* into the owning arena */
    uint32_t attr_off; /* into the owning arena */
    uint64_t sfp, afp; /* structure and argument fingerprints */
} enc_rec;

/* r's kernelParams: ptrs filled with a pointer per parameter into arena (NULL without parameters). */
static inline void **enc_rec_params(const enc_rec *r, const unsigned char *arena, void **ptrs) {
    for (uint32_t i = 0; i < r->L->nparams; i++) ptrs[i] = (void *)(arena + r->arg_off + r->L->off[i]);
    return r->L->nparams ? ptrs : NULL;
}

/* A stream's open sequence: its records (recs[n] is the pending one, recorded
 * but not yet part of the sequence) and the arena holding their bytes. */
typedef struct enc_seq {
    enc_rec *recs; /* enc_opt.max_sequence of them */
    uint32_t n;
    unsigned char *arena;
    size_t arena_used, arena_cap;
    uint64_t hash;  /* structure and arguments of recs[0..n), at its end (record.c enc_record_hash) */
    uint64_t shash; /* their structure alone (learning for patching) */
    uint64_t chash; /* their structure and grids: a configuration (learning a graph per configuration) */
    uint32_t nops;  /* of recs[0..n), stream operations (not kernel launches) */
    int poisoned;   /* contains a launch that cannot be re-issued */
    int fully_replayed;
    int replayed_by_patch;   /* ... through a graph patched with its arguments: the nodes patched (0: not) */
    int patched_grid;        /* ... of them, kernel nodes given another grid */
    uint64_t t0;             /* when it opened */
    int ended_by_call;       /* it ended at a call of the program, or at the end of a graph whose sequence had */
    int end_why;             /* the enc_flush_reason it ended at (sequence.c; hold.c's cut_short reads it) */
    int pause_cut, at_pause; /* graph_end.c: the flush deadline released it (it ends before the next launch); it
                              * ends at a pause (ENCORE_PAUSE_END), or began after one (hold.c) */
} enc_seq;

/* A captured sequence: the records it was captured from, and its graph. */
typedef struct enc_graph_node {
    CUgraphNode node;
    CUfunction func; /* as the graph has it (a CUkernel launch has a CUfunction there) */
    CUevent ev;      /* an event node's event as captured (encore's placeholder, or the program's) */
} enc_graph_node;

typedef struct enc_graph {
    uint64_t id;                  /* the report's sequence id */
    uint32_t len, patch_refusals; /* patch_refusals: patches the driver refused (nodes.h ENC_PATCH_REFUSALS) */
    uint32_t nops;                /* of len, stream operations (not kernel launches) */
    uint32_t node;                /* the trie node where its sequence ends */
    enc_rec *recs;
    unsigned char *arena;
    CUgraphExec exec;
    CUcontext ctx; /* its stream's, at the capture: the graph goes with that context */
    /* For patching: the captured graph (kept: node handles are its), its kernel node for each launch, in
     * order (NULL when not patchable), and its ring when patched from the device (ENCORE_DEVICE_PATCH) */
    CUgraph graph;
    enc_graph_node *knodes;
    struct enc_devgraph *dev;
    uint64_t args_key; /* enc_args_key of recs: kept when a patch changes them */
    uint64_t hits;
    uint64_t last_used; /* captured or last replayed (enc_now_ns: one clock for every stream) */
    uint64_t cand_hash; /* the candidate it was captured for (exact, configuration or structural) */
    int ends_at_call;   /* its sequence ended at a call of the program (graph_end.c) */
    int grid_free;      /* captured for a structure: other grids may be patched into its kernel nodes (a graph
                         * captured for a sequence or a configuration keeps its grids; learn.c) */
    struct enc_graph *next_at_node;
} enc_graph;

/* All of a sequence's argument fingerprints as one value: a graph whose key differs from the held launches'
 * cannot equal them, and is passed over without reading its records (a ring of buffers leaves one graph per
 * buffer set at the same place). */
static inline uint64_t enc_args_key(const enc_rec *recs, uint32_t n) {
    uint64_t h = n;
    for (uint32_t i = 0; i < n; i++) h = (h ^ recs[i].afp) * 0x9e3779b97f4a7c15ull;
    return h;
}

#endif
