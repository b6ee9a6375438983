/* encore: the engine's internal header, shared by the files of core/ and
 * by the unit tests (tests/unit), never by interpose/ (that sees engine.h).
 *
 * First the shared constants and structures, then the functions each file
 * of the engine offers the others, grouped by the file that defines them.
 * Every function here has hidden visibility (the build uses
 * -fvisibility=hidden): libencore exports none of them, and the unit tests
 * reach them by linking the encore_internal static library.
 *
 * Vocabulary. A *sequence* is what a stream records between cut points; the
 * one being recorded is the stream's open sequence. A *graph* is a
 * sequence's captured form. A *candidate* is a sequence's hash counted
 * towards capture. The *trie* holds, per stream, the structure of every
 * captured sequence, one *trie node* per launch; graphs hang at the node
 * where their sequence ends. *Holding* = deferring launches while they walk
 * the trie; *release* = issuing what is held (one graph launch if it
 * matches, else eagerly in order). */
#ifndef ENCORE_INTERNAL_H
#define ENCORE_INTERNAL_H

#include <cuda.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "core/path/engine.h"
#include "core/graphs/nodes.h"
#include "core/observe/stats.h"

/* ---- constants ---------------------------------------------------------------- */

#define ENC_MAX_PARAMS 256       /* kernel parameters read at most (more: the kernel runs eagerly) */
#define ENC_MAX_ATTRS 16         /* launch attributes recorded at most (more: the launch runs eagerly) */
#define ENC_MAX_ARG_BYTES 65536  /* a layout reaching past this is not trusted */
#define ENC_KERNEL_NAME_MAX 96   /* kernel names are kept (truncated) to this size, NUL included */
#define ENC_LAYOUT_CAP 16384     /* kernels whose parameter layout is cached (a power of two) */
#define ENC_MAX_STATES 4096      /* stream states, all threads together */
#define ENC_CAND_CAP 1024        /* candidates per stream (a power of two) */
#define ENC_TRIE_ROOT 0          /* the trie node before any launch */
#define ENC_NO_NODE UINT32_MAX   /* no such trie node */
#define ENC_MIN_SEQ_CAP 8        /* ENCORE_HOLD_BUDGET never cuts sequences shorter than this */
#define ENC_CAP_VOTES 16         /* sequences in a row that must ask for a new cap before it is taken */
#define ENC_CAP_FIRST_VOTES 2    /* ... for a stream's first cap */
#define ENC_EXACT_AFTER_PATCH 16 /* patched replays (x ENCORE_MIN_REPEATS) before an own graph */
#define ENC_MAX_HELD_EVENTS 32   /* distinct events a stream holds records of or waits on (more: not held) */
#define ENC_SAMPLE_EVERY 61      /* one launch in this many is timed (a prime, see launch.c) */
/* 2^64 / golden ratio: the multiplier that spreads consecutive keys (Fibonacci hashing). */
#define ENC_GOLDEN_64 0x9e3779b97f4a7c15ULL
/* Keeps structural candidates (kernels and configurations alone) apart from exact ones. */
#define ENC_STRUCT_SALT 0x5f3759df9e3779b9ULL

static inline uint64_t enc_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A driver call that issues GPU work, bracketed by the test-only audit hooks. */
#define AUDITED(call)                           \
    ({                                          \
        if (enc_audit_enter) enc_audit_enter(); \
        CUresult r__ = (call);                  \
        if (enc_audit_leave) enc_audit_leave(); \
        r__;                                    \
    })

/* ---- structures ---------------------------------------------------------------- */

/* What a layout's function belongs to: an unload drops the layouts of its code. */
enum enc_layout_owner { ENC_OWNER_UNKNOWN = 0, ENC_OWNER_MODULE = 1, ENC_OWNER_LIBRARY = 2 };

/* A kernel's parameter layout, as the driver reports it. */
typedef struct enc_layout {
    void *func;
    uint32_t nparams;
    uint32_t argbytes; /* packed size: last offset + size */
    int ok;            /* 0: opaque, launches of it run eagerly */
    int is_kernel;     /* the handle is a CUkernel passed as a CUfunction */
    int owner_kind;    /* enum enc_layout_owner */
    void *owner;       /* the CUmodule (a CUfunction's) or CUlibrary (a CUkernel's) */
    CUcontext ctx;     /* current when it was read: a CUfunction's context */
    int retired;       /* taken out of the cache (its code goes away); set by the retiring thread */
    struct enc_layout *retired_next;
    /* The function's limits a held launch must keep (validate.c): read at
     * its first held launch and again after the program changed a function
     * attribute (lim_gen trails enc_func_attr_gen); for a CUkernel, on the
     * device lim_dev. The cache configuration last set through this handle,
     * plus one (0: not known). All atomic. */
    unsigned lim_gen;
    int lim_dev;
    int max_threads, max_dyn_smem;
    int cache_config_p1;
    int is_op;             /* a stream operation's stand-in (core/graphs/nodes.c): no function, never validated */
    int untrusted;         /* an attribute validation does not know changed since its first launch: never held */
    unsigned changed_mark; /* enc_layouts_mark_code's stamp of the last change of its code's attributes */
    char name[ENC_KERNEL_NAME_MAX];
    uint32_t off[]; /* nparams offsets, then nparams sizes */
} enc_layout;

static inline uint32_t enc_layout_size(const enc_layout *L, uint32_t i) { return L->off[L->nparams + i]; }

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
    uint64_t hash;  /* structure and arguments of recs[0..n) */
    uint64_t shash; /* their structure alone (learning for patching) */
    uint32_t nops;  /* of recs[0..n), stream operations (not kernel launches) */
    int poisoned;   /* contains a launch that cannot be re-issued */
    int fully_replayed;
    int replayed_by_patch; /* ... through a graph patched with its arguments */
    uint64_t t0;           /* when it opened */
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
    /* For patching: the captured graph (kept: node handles are its) and its
     * kernel node for each launch, in order; NULL when not patchable. */
    CUgraph graph;
    enc_graph_node *knodes;
    uint64_t args_key; /* enc_args_key of recs: kept when a patch changes them */
    uint64_t hits;
    uint64_t last_used; /* captured or last replayed (enc_now_ns: one clock for every stream) */
    uint64_t cand_hash; /* the candidate it was captured for (exact or structural) */
    struct enc_graph *next_at_node;
} enc_graph;

/* All of a sequence's argument fingerprints as one value: a graph whose key
 * differs from the held launches' cannot equal them, and is passed over
 * without reading its records (a ring of buffers leaves one graph per buffer
 * set at the same place). */
static inline uint64_t enc_args_key(const enc_rec *recs, uint32_t n) {
    uint64_t h = n;
    for (uint32_t i = 0; i < n; i++) h = (h ^ recs[i].afp) * 0x9e3779b97f4a7c15ull;
    return h;
}

typedef struct enc_trie_node {
    uint32_t parent;
    uint32_t first_child;
    uint64_t sfp;
    CUfunction f; /* what the launch leading here looked like, for divergence reports */
    unsigned grid[3], block[3], smem;
    enc_graph *graphs; /* graphs whose sequence ends here */
    uint32_t refs;     /* graphs whose sequence passes through or ends here; 0: a dead node */
    /* hold.c: the hold rule at the root's children (where holds start): the last holds, and sequences to begin
     * here eagerly before trying again (hold_skip); the capture rule where graphs end (cap_*). */
    uint32_t hold_skip;
    uint8_t hold_fails;                     /* holds in a row that did not replay */
    uint8_t hold_hist;                      /* the last holds, newest in bit 0: 1 replayed */
    uint8_t hold_n;                         /* holds in hold_hist (at most 8) */
    uint8_t hold_backoff;                   /* times given up (the back-off's exponent) */
    uint16_t caps, cap_unpaid, cap_backoff; /* graphs captured, not replayed yet; the back-off's exponent */
    uint32_t cap_skip;                      /* captures still to refuse */
} enc_trie_node;

enum enc_cand_state {
    ENC_CAND_COUNTING = 0,
    ENC_CAND_CAPTURED = 1,
    ENC_CAND_NEVER = 2, /* capture failed or excluded */
};

typedef struct enc_candidate {
    uint64_t hash;
    uint32_t count; /* 0: a free slot */
    uint8_t state;  /* enum enc_cand_state */
} enc_candidate;

/* What a stream has learnt: candidates, graphs and the trie that finds them. */
typedef struct enc_store {
    enc_trie_node *nodes;
    uint32_t nnodes, cap_nodes;
    uint32_t *child_tab; /* open addressing: node ids, keyed by (parent, sfp) */
    uint32_t child_cap;  /* a power of two, at least twice the nodes */
    int ngraphs;         /* atomic: read without the lock (eviction skips stores without graphs) */
    int ngraphs_ev;      /* atomic: of those, graphs with an event node (nodes.c enc_nodes_unname) */
    uint32_t nlive;      /* trie nodes (the root aside) some graph's sequence passes through */
    enc_candidate cands[ENC_CAND_CAP];
} enc_store;

enum enc_stream_kind { ENC_STREAM_EXPLICIT = 0, ENC_STREAM_LEGACY = 1, ENC_STREAM_PER_THREAD = 2 };

/* One stream of the program, as encore follows it. Fields below `mu` are
 * guarded by it, except those marked atomic. */
typedef struct enc_stream_state {
    pthread_mutex_t mu;
    int kind;        /* enum enc_stream_kind */
    CUstream handle; /* the program's handle (explicit streams) */
    CUcontext ctx;
    pid_t owner;  /* per-thread streams: the owning thread */
    int blocking; /* synchronises with the legacy stream */
    int needs_init;
    int dead;     /* its stream was destroyed: the state may be reused */
    uint32_t gen; /* bumped when the state stops meaning its stream (thread caches check it) */

    enc_seq seq; /* the open sequence */
    int open;    /* a sequence is open (launches counted since it opened); atomic: read by flush_all */
    /* Host time per launch, averaged over sequences: when the program's own
     * host work between launches is slow (PyTorch eager: tens of microseconds
     * per op), holding launches back only delays the GPU and a graph saves
     * little, so such a stream is not held back (ENCORE_MAX_GAP). */
    uint64_t gap_ns;
    int sparse;
    /* The first launch after a flush point is the anchor: when it comes
     * again, a new sequence starts. Loops without a flush point per iteration
     * then cut into the same sequences every iteration, whatever their length. */
    int anchor_set;
    uint64_t anchor_sfp, anchor_afp;
    uint32_t since_anchor; /* launches recorded since the anchor last began a sequence */
    /* This stream's longest sequence (0: enc_opt.max_sequence): slower launches, shorter
     * sequences, so that one held keeps the GPU waiting at most ENCORE_HOLD_BUDGET. */
    uint32_t seq_cap;
    uint8_t cap_votes; /* sequences in a row whose pace asked for another cap */
    uint8_t ramp;      /* sequences ended full since the last flush point (ENCORE_HOLD_RAMP) */

    /* Per-thread default streams: another thread cannot name them, so a
     * release from another thread (deadline, a device-wide flush) goes to a
     * side stream ordered after ev_start, and the owner joins ev_done. */
    CUevent ev_start, ev_done;
    CUstream side;
    int join_pending; /* atomic: read without the lock */

    /* Its attributes differ from encore's capture stream's in one a graph launch does not take from the
     * stream (enc_stream_check_attrs): its launches run eagerly. attr_gen: enc_attr_gen when last checked. */
    int attrs_differ;
    uint32_t attr_gen;
    /* It has graphs with node priorities whose other nodes run at the capture
     * stream's priority (learn.c): its priority must stay the capture stream's. */
    int mixed_prio;

    /* holding */
    int held;            /* atomic: read without the lock */
    uint32_t node;       /* the trie node the held launches reached */
    uint32_t hold_start; /* the root's child the hold started at (hold.c) */
    uint64_t held_since;
    uint32_t sample_clock;         /* launches, for timing one in ENC_SAMPLE_EVERY */
    uint64_t acct[ENC_ACCT_COUNT]; /* its time estimate's measured inputs (stats.h); atomic */
    /* The launch being timed (launch.c): the sequence ends it causes, timed apart. */
    struct {
        int on;
        uint32_t ends;
        uint64_t ends_ns;
    } sample;

    /* Learning that does not pay (core/streams/rest.c): a window of launches, its holds that ended in a replay, its
     * sequences learnt and how many of them had come before; acct and launches when it began, windows in a row
     * whose time balance was negative. While rest_left > 0 (atomic: no lock) launches pass through unrecorded. */
    uint32_t win_launches, win_len, win_replays, win_seqs, win_recur;
    uint64_t win_acct0[ENC_ACCT_COUNT + 1];
    int32_t rest_left;
    uint8_t rest_shift, win_neg;

    /* A released launch failed (not stickily): the next call that observes
     * the stream returns this instead of CUDA_SUCCESS (failure.c). */
    CUresult pending_err;
    const struct enc_dev_limits *limits; /* its device's launch limits, once read (validate.c) */

    /* Events it holds a record of or a wait on (evtab.c), until released. */
    CUevent held_ev[ENC_MAX_HELD_EVENTS];
    uint8_t held_ev_wait[ENC_MAX_HELD_EVENTS];
    uint32_t n_held_ev; /* atomic: read without the lock by enc_core_event_observe_all */

    enc_store store;
} enc_stream_state;

/* ---- rest.c: streams whose learning does not pay rest ----------------------------- */

/* A launch on st while it rests: 1 if it passes through unrecorded (no lock taken). */
static inline int enc_rest_take(enc_stream_state *st) {
    if (__atomic_load_n(&st->rest_left, __ATOMIC_RELAXED) <= 0 || __atomic_load_n(&st->join_pending, __ATOMIC_RELAXED))
        return 0;
    return __atomic_sub_fetch(&st->rest_left, 1, __ATOMIC_RELAXED) >= 0;
}
/* With st->mu held, before a launch is recorded: counts it into the window, and
 * at the window's end decides. 1 if st rests from now on (this launch included). */
int enc_rest_note_launch(enc_stream_state *st);
/* With st->mu held: a state that names a new stream starts without a rest or a window. */
void enc_rest_forget(enc_stream_state *st);
/* A sequence was learnt; `recurring`: it (or its structure) had come before. */
static inline void enc_rest_note_sequence(enc_stream_state *st, int recurring) {
    st->win_seqs++;
    st->win_recur += recurring != 0;
}

/* ---- layout.c: parameter layouts, cached per function --------------------------- */

/* Layouts, and the cache itself, are read only with a stream state's mutex
 * held (or the cache's own lock): that is what lets a retired layout be freed
 * once every state's mutex has been taken after its retirement (reclaim.c). */
const enc_layout *enc_layout_cached(CUfunction f); /* NULL if not looked up yet */
const enc_layout *enc_layout_for(CUfunction f);    /* looks it up (driver calls) if needed */
/* Take the layouts `pick` chooses out of the cache: they are marked retired
 * and returned as a list (linked by retired_next), NULL if none. Launches may
 * still hold them: free them (enc_layouts_free) only after every stream
 * state's mutex was taken once since, and the next retirement only after
 * that (the cache is double-buffered: the one before is reused). */
typedef int (*enc_layout_pick)(const enc_layout *L, const void *arg);
enc_layout *enc_layouts_retire(enc_layout_pick pick, const void *arg);
enc_layout *enc_layouts_reset(void); /* retires them all */
void enc_layouts_free(enc_layout *retired);
/* A changed attribute of f (a CUkernel if kernel; NULL: any) concerns the layouts of the same code. */
unsigned enc_layouts_mark_code(CUfunction f, int kernel); /* layouts of f's code get a new stamp, returned */
void enc_layouts_distrust(unsigned stamp);                /* those layouts' launches are never held again */

/* ---- stream.c: the stream-state table and issuing on a stream ------------------- */

extern enc_stream_state *enc_states[ENC_MAX_STATES];
extern int enc_nstates;        /* atomic */
extern int enc_n_held;         /* states holding launches; atomic */
extern int enc_n_open;         /* states with an open sequence; atomic */
extern int enc_n_join_pending; /* per-thread states released from another thread; atomic */

/* The state of the stream a call names (NULL: legacy, or per-thread for
 * _ptsz/_ptds entry points), created if `create`; NULL if there is none. */
enc_stream_state *enc_stream_for(CUstream s, int per_thread, int create);
/* The stream was destroyed: end its sequence, forget what it learnt, free the state for reuse. */
void enc_stream_retire(enc_stream_state *st);
/* States in enc_states, read under the table's lock (one added later is added after what this thread did). */
int enc_stream_count(void);
pid_t enc_tid(void);
void enc_stream_forget_thread(void); /* a forked child: this thread's cached id and states are its parent's */
/* Make st's context current on this thread; returns 1 if it pushed. */
int enc_stream_enter_ctx(const enc_stream_state *st);
void enc_stream_leave_ctx(int pushed);
/* Where to issue st's held work from this thread (see enc_stream_state). */
CUstream enc_stream_begin_issue(enc_stream_state *st, int *pushed, int *side);
void enc_stream_end_issue(enc_stream_state *st, int pushed, int side);
/* The owner thread orders its per-thread stream after work released elsewhere. */
void enc_stream_join_side(enc_stream_state *st);
/* ... its per-thread streams (any context), before a call that may order work after them. */
void enc_stream_join_own_sides(void);
/* Before holding on a per-thread stream: mark where the hold starts (0: cannot hold). */
int enc_stream_hold_ok(enc_stream_state *st);
/* Stream attributes changed somewhere (cuStreamSetAttribute, cuStreamCopyAttributes) when this moved; atomic. */
extern uint32_t enc_attr_gen;
/* Compare st's stream's attributes with encore's capture stream's (sets attrs_differ and attr_gen). */
void enc_stream_check_attrs(enc_stream_state *st);
/* Has st's stream the priority of encore's capture stream? (driver calls) */
int enc_stream_priority_like_capture(enc_stream_state *st);
/* Issue one recorded launch (its bytes in `arena`) on `stream`. */
CUresult enc_stream_issue_rec(const enc_rec *r, const unsigned char *arena, CUstream stream);
/* The program begins a capture (enc_prog_capturing is raised already): take
 * states_mu and every state's mutex once, ending each open sequence (what is
 * held is issued): the barrier of prog_capture.c. */
void enc_stream_pass_all(enum enc_flush_reason why);
/* ctx was destroyed (NULL: one not named: only streams that learnt nothing):
 * its streams, side streams, events, graphs are gone: forget the handles. */
void enc_stream_context_gone(CUcontext ctx);
void enc_context_note(CUcontext ctx); /* a stream's, first known: a primary context is remembered (context.c) */

/* ---- store.c: a stream's sequence store (trie, graphs, eviction) ---------------- */

extern int enc_n_graphs; /* graphs alive, all streams; atomic (ENCORE_MAX_GRAPHS bounds it: reclaim.c) */

int enc_store_init(enc_store *s); /* 0, or -1 out of memory (free with enc_store_free) */
void enc_store_free(enc_store *s);
/* The child of `parent` reached by a launch of structure `sfp`, or ENC_NO_NODE. */
static inline uint32_t enc_store_child_slot(const enc_store *s, uint32_t parent, uint64_t sfp) {
    uint64_t h = sfp ^ ((uint64_t)parent * ENC_GOLDEN_64);
    h ^= h >> 29;
    return (uint32_t)h & (s->child_cap - 1);
}
static inline uint32_t enc_store_child(const enc_store *s, uint32_t parent, uint64_t sfp) {
    uint32_t mask = s->child_cap - 1;
    for (uint32_t i = enc_store_child_slot(s, parent, sfp);; i = (i + 1) & mask) {
        uint32_t id = s->child_tab[i];
        if (id == ENC_NO_NODE) return ENC_NO_NODE;
        if (s->nodes[id].parent == parent && s->nodes[id].sfp == sfp) return id;
    }
}
/* Walk (creating) the path for recs[0..n); returns the end node, or ENC_NO_NODE out of memory. */
uint32_t enc_store_insert(enc_store *s, const enc_rec *recs, uint32_t n);
/* Hang g at its trie node (g->node) and count it. */
void enc_store_add_graph(enc_store *s, enc_graph *g);
/* Unhang and free g. Its candidate counts again from zero if `evicted`, else never again. */
void enc_store_drop_graph(enc_store *s, enc_graph *g, int evicted);
/* Drop the graphs with a launch of f (or of the other kind of handle, which may name the same
 * code; `kernel`: f is a CUkernel; NULL: every graph); their candidates count again from zero. */
void enc_store_drop_graphs_of(enc_store *s, unsigned stamp); /* graphs launching a layout marked with stamp */
/* No graph names ev any more (nodes.c enc_graph_unname_event); those that cannot stop go, for good. */
void enc_store_unname_event(enc_store *s, CUevent ev);
enc_graph *enc_store_lru(const enc_store *s); /* the least recently used graph of the store, or NULL */
void enc_store_evict_lru(enc_store *s);
int enc_store_evict_all(enc_store *s); /* every graph evicted (its candidate counts again); how many */
/* Drop every graph that names a retired layout (its code is unloaded); their candidates count again. Returns how many were dropped. */
int enc_store_drop_retired(enc_store *s);
/* Rebuild the trie from the live graphs when more than half of its nodes are dead (with `force`:
 * when any is), so that evicted graphs' paths do not pile up. Never while the stream holds (held
 * launches name a trie node). Returns 1 if it rebuilt. */
int enc_store_compact(enc_store *s, int force);
/* Drop every graph, the trie and the candidates. */
void enc_store_forget(enc_store *s);
/* The same, for graphs whose context is gone: their handles are forgotten, not destroyed. */
void enc_store_abandon(enc_store *s);
/* Free a graph that is in no trie (any more), its executable and graph too. */
void enc_graph_free(enc_graph *g);

/* ---- record.c: recording and fingerprinting a launch into a sequence ------------ */

int enc_record_init(enc_seq *seq, uint32_t max_launches); /* 0, or -1 out of memory */
/* Record launch l (layout L) as the pending launch recs[n]. Returns 0, or a negative
 * code if it cannot be recorded (nothing of it is kept), which enc_record_why names. */
int enc_record_launch(enc_seq *seq, const enc_launch *l, const enc_layout *L);
const char *enc_record_why(int code);
/* The pending launch becomes part of the sequence (and of its hashes). */
void enc_record_commit(enc_seq *seq);
/* An empty sequence (the arena's memory is kept). */
void enc_record_reset(enc_seq *seq);
/* The pending launch, taken out of the sequence to begin the next one: its
 * record, and where its bytes lie in the arena (past arena_used, untouched
 * while the sequence ends: releasing and learning only read the arena). */
typedef struct enc_detached_rec {
    enc_rec rec;
    size_t off, len;
} enc_detached_rec;
enc_detached_rec enc_record_detach_pending(enc_seq *seq);
/* Make a detached launch the pending launch of the (empty) sequence. */
void enc_record_attach_pending(enc_seq *seq, const enc_detached_rec *p);

/* ---- sequence.c: a stream's open sequence: open, record, cut, end ---------------- */

void enc_sequence_open(enc_stream_state *st);
/* Open the sequence if needed and record l as its pending launch; when l is
 * the anchor coming again, the sequence ends before it. Returns 1 if recorded,
 * 0 if not (the sequence is poisoned). */
int enc_sequence_record(enc_stream_state *st, const enc_launch *l, const enc_layout *L);
/* The sequence ends (a flush point, or ENC_FLUSH_SEQUENCE_FULL): release, learn, reset. */
void enc_sequence_end(enc_stream_state *st, enum enc_flush_reason why);
/* The same, caused by the launch being recorded (full, or its anchor came again): timed. */
void enc_sequence_end_at_launch(enc_stream_state *st, enum enc_flush_reason why);
/* The stream's context is gone: drop the open sequence, held launches too, issuing nothing. */
void enc_sequence_discard(enc_stream_state *st);
/* The longest sequence for launches this far apart (ENCORE_HOLD_BUDGET), the
 * stream's for its pace, and where its open one ends (ENCORE_HOLD_RAMP). */
uint32_t enc_sequence_cap_for_pace(uint64_t gap_ns);
uint32_t enc_sequence_cap(const enc_stream_state *st);
uint32_t enc_sequence_limit(const enc_stream_state *st);

/* ---- learn.c: candidates, capture, a graph's kernel nodes ------------------------ */

/* The candidate for `hash` in `table` (ENC_CAND_CAP slots), or NULL. With
 * `create`, a free slot or the least-counted counting candidate near its home
 * is taken over when it is not there. */
enc_candidate *enc_cand_find(enc_candidate *table, uint64_t hash, int create);
/* Count the ended sequence towards capture, and capture it when it is due. */
void enc_learn_sequence(enc_stream_state *st);
/* ctx was destroyed (NULL: any context): forget encore's capture stream there. */
void enc_learn_context_gone(CUcontext ctx);
/* encore's capture stream of ctx (created if needed, with ctx current), or NULL. */
CUstream enc_learn_capture_stream(CUcontext ctx);

/* ---- replay.c: matching, release, replay, patching ------------------------------- */

/* Release what st holds at a flush point; the sequence goes on. */
void enc_release_at_flush_point(enc_stream_state *st, enum enc_flush_reason why);
/* Release what st holds as its sequence ends. */
void enc_release_at_sequence_end(enc_stream_state *st, enum enc_flush_reason why);
/* A launch of f (layout L, NULL if not known yet) continues no graph from
 * the node st holds at: note the divergence (if `note` and no graph ends
 * there), then release. */
void enc_release_on_divergence(enc_stream_state *st, CUfunction f, const enc_layout *L, int note);

/* ---- hold.c: hold only where holding pays ------------------------------------------ */
/* A hold that ends without a replay costs (the GPU may idle while launches wait); a start (a root child of
 * the trie) whose holds keep ending so is given up for a while: launches that would begin a hold there run
 * eagerly. (The capture rule, core/graphs/worth.h, gives up captures that never replay.) */
int enc_hold_skip_slow(enc_stream_state *st, uint32_t start);
/* May a hold start at root child `start` now? (counts a sequence seen there while given up) */
static inline int enc_hold_admits(enc_stream_state *st, uint32_t start) {
    return __builtin_expect(st->store.nodes[start].hold_skip == 0, 1) || enc_hold_skip_slow(st, start);
}
/* The hold that started at st->hold_start ended, with a replay or not (with st->mu held). */
void enc_hold_outcome(enc_stream_state *st, int replayed);
/* A graph was captured at `node`: holding at its sequence's start is tried afresh. */
void enc_hold_new_graph(enc_store *s, uint32_t node);

/* ---- validate.c: what a held launch must keep; function attribute changes -------- */

/* A device's launch limits, read once per device. */
typedef struct enc_dev_limits {
    int ok; /* atomic: the fields below are read */
    CUdevice dev;
    unsigned max_grid[3], max_block[3], max_threads;
} enc_dev_limits;

extern unsigned enc_func_attr_gen; /* bumped when the program changes a function attribute; atomic */

/* Why the driver might refuse launch r on st's stream now (its function's and device's limits,
 * or they cannot be read), or NULL: a refused launch is issued eagerly, after what is held. */
const char *enc_launch_refusal(enc_stream_state *st, const enc_rec *r);
static inline int enc_launch_valid(enc_stream_state *st, const enc_rec *r) { return !enc_launch_refusal(st, r); }

/* ---- failure.c: held launches that fail when released ---------------------------- */

extern int enc_n_pending_err;     /* states with a pending error, and the orphaned one; atomic */
extern int enc_disable_requested; /* atomic */

/* A sticky error (base/driver.h) was seen: switch off, but not here (a state
 * lock may be held): enc_core_act_on_requests does, after unlocking. */
void enc_request_disable(CUresult r);
void enc_request_disable_why(const char *why); /* idem, for another reason (a string literal) */
/* Issuing released launch rec failed with r (with st->mu held): sticky, a
 * request to switch off; else st's pending error. The sequence is not learnt. */
void enc_note_release_failure(enc_stream_state *st, const enc_rec *rec, CUresult r);
/* st's stream goes away (with st->mu held): its pending error is kept for
 * the next flush-everything call. */
void enc_pending_err_orphan(enc_stream_state *st);

/* ---- launch.c: the launch path, flush points, lifecycle events ------------------ */

/* (what it offers is the engine's interface: core/path/engine.h), and to nodes.c: */
/* Issue what other streams hold that legacy-stream order puts before work on st. */
void enc_launch_legacy_order(enc_stream_state *st);
/* The pending record begins a graph's sequence: hold it (with st->mu held); 0 if not. */
int enc_launch_start_holding(enc_stream_state *st);

/* ---- prog_capture.c: the program's own captures ---------------------------------- */

/* The program's captures that are live or beginning; atomic. While it is not
 * 0 encore makes no driver call of its own, from any thread. The rule that
 * makes this race-free (prog_capture.c): every driver call of encore's own
 * is made with a stream state's mutex held, or between enc_own_calls_begin
 * and enc_own_calls_end, and is decided on after reading this count under
 * that same hold. */
extern int enc_prog_capturing;
/* For encore's own driver calls outside a stream state's mutex: 1 (a lock
 * held: end with enc_own_calls_end) if they may be made now, 0 if not. */
int enc_own_calls_begin(void);
void enc_own_calls_end(void);
/* While a capture is live, a graph's (of ctx) driver objects are destroyed
 * later: 1 if it took them (the caller forgets the handles), 0 if the caller
 * destroys them now. */
int enc_prog_capture_defer_destroy(CUgraphExec exec, CUgraph graph, CUcontext ctx);
/* ctx went away (NULL: one not named): the captures in it ended with it. */
void enc_prog_capture_context_gone(CUcontext ctx);

/* ---- reclaim.c: bounds: the process-wide graph limit, unloaded code --------------- */

/* Room for one more graph under ENCORE_MAX_GRAPHS: evicts the process's least
 * recently used graphs as needed. With self->mu held (self does not hold
 * launches). Returns 0 if there is no room (the streams that have graphs are
 * busy). */
int enc_reclaim_graph_room(enc_stream_state *self);

/* ---- deadline.c: the flush-deadline thread --------------------------------------- */

void enc_deadline_start(void); /* once; switches encore off if the thread cannot start */

/* ---- events.c: rare events, counted and written to the report and event log ------ */

/* A graph of len launches (recs) was captured; returns its sequence id. */
uint64_t enc_event_graph_captured(uint32_t len, const enc_rec *recs, uint64_t capture_ns, uint64_t instantiate_ns);
void enc_event_capture_failed(const char *what, CUresult r);
void enc_event_divergence(enum enc_divergence_kind kind, const enc_layout *expected, const enc_layout *got, int arg,
                          uint32_t pos);
void enc_event_graph_evicted(const enc_graph *g);
/* g was launched in place of n held launches (patched: arguments patched in first). */
void enc_event_graph_hit(const enc_graph *g, uint32_t n, int patched);
void enc_event_disabled(const char *why);
/* Holding at a start whose first launch is of `L` was given up (skip: sequences it runs eagerly before the next
 * try), or resumed (`why`: "back-off" or "new graph"). */
void enc_event_hold_given_up(const enc_layout *L, uint32_t replayed, uint32_t holds, uint32_t skip);
void enc_event_hold_resumed(const enc_layout *L, const char *why);

#endif
