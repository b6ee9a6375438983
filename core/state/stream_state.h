/* encore: what a stream has learnt (the trie of its captured sequences,
 * their graphs, its candidates: enc_store) and one stream of the program as
 * encore follows it (enc_stream_state). Shared by every floor of the engine;
 * the store's functions are core/graphs/store.h's, the table's
 * core/streams/streams.h's. */
#ifndef ENCORE_STREAM_STATE_H
#define ENCORE_STREAM_STATE_H

#include <cuda.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/mutex.h"
#include "core/observe/stats.h"
#include "core/state/types.h"

typedef struct enc_trie_node {
    /* ---- a held walk reads the parent's first 16 bytes (one cache line: malloc aligns to 16 and the
     * size is a multiple of 16), nothing of the child's (store.h enc_store_step) ---- */
    uint32_t parent;
    uint32_t last_child;     /* the child a held walk last took from here, tried first (store.h); 0: none */
    uint64_t last_child_sfp; /* its structure */
    uint64_t sfp;
    uint32_t first_child;
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
    uint8_t replayed;                       /* a sequence begun here replayed (hold.c, enc_capture_due) */
    uint16_t caps, cap_unpaid, cap_backoff; /* graphs captured, not replayed yet; the back-off's exponent */
    uint16_t since_match;                   /* sequences begun here since one matched a graph of here */
    uint32_t cap_skip;                      /* captures still to refuse */
    uint8_t end_early; /* graph_end.c: its graphs' sequences ended at a call of the program, none goes on */
    int8_t end_score;  /* graph_end.c: calls that came at this end, less 4 a time work came instead */
} enc_trie_node;
_Static_assert(sizeof(enc_trie_node) % 16 == 0, "a trie node's first 16 bytes stay in one cache line");

enum enc_cand_state {
    ENC_CAND_COUNTING = 0,
    ENC_CAND_CAPTURED = 1,
    ENC_CAND_NEVER = 2, /* capture failed or excluded */
};

typedef struct enc_candidate {
    uint64_t hash;
    uint32_t count;  /* sightings; 0: a free slot */
    uint8_t state;   /* enum enc_cand_state */
    uint8_t spanned; /* seen in two flush intervals of its stream (learn.c) */
    uint16_t iv;     /* the interval of its first sighting (the low bits of flush_points) */
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
    /* ---- what a launch reads, in the first two cache lines (the held launch's cost is mostly
     * cache misses where the program's own work between launches evicts encore's data:
     * docs/maintainers.md); then the open sequence's records, and what the stream learnt ---- */
    enc_mutex mu; /* base/mutex.h */
    int kind;     /* enum enc_stream_kind */
    CUcontext ctx;
    uint32_t gen;      /* bumped when the state stops meaning its stream (thread caches check it) */
    int held;          /* launches are held; atomic: read without the lock */
    int join_pending;  /* a release from another thread is to be joined (below); atomic: read without the lock */
    int32_t rest_left; /* launches still to pass through while it rests (core/streams/rest.c); atomic: no lock */
    /* Its attributes differ from encore's capture stream's in one a graph launch does not take from the
     * stream (enc_stream_check_attrs): its launches run eagerly. attr_gen: enc_hot.attr_gen when last checked. */
    uint32_t attr_gen;
    int attrs_differ;
    int sparse;          /* its launches come too far apart to hold (ENCORE_MAX_GAP, gap_ns below) */
    int open;            /* a sequence is open (launches counted since it opened); atomic: read by flush_all */
    uint32_t node;       /* the trie node the held launches reached */
    uint32_t early_node; /* graph_end.c: the node of the last hold replayed at its graph's end, until a call of
                          * the program (0: none) */
    /* This stream's longest sequence (0: enc_opt.max_sequence): the shorter of pace_cap
     * (slower launches, shorter sequences, so that one held keeps the GPU waiting at most
     * ENCORE_HOLD_BUDGET; 0: the longest) and deadline_cap below. */
    uint32_t seq_cap;
    uint64_t pause_bits;                 /* graph_end.c: bit (at % 64) of each pause due (ENCORE_PAUSE_END); 0: none */
    uint32_t sample_clock;               /* launches, for timing one in ENC_SAMPLE_EVERY */
    int anchor_set;                      /* the anchor (below) is set */
    uint32_t since_anchor;               /* launches recorded since the anchor last began a sequence */
    uint32_t win_launches, win_len;      /* the rest rule's window (below): launches in it, and its length */
    int needs_init;                      /* set up (state_query) before its first use; atomic */
    uint8_t n_lead;                      /* launches in lead (below) */
    uint8_t anchor_settled;              /* the anchor came again, or was moved into the loop (sequence.c) */
    enc_seq seq;                         /* the open sequence */
    const struct enc_dev_limits *limits; /* its device's launch limits, once read (validate.c) */
    enc_store store;                     /* what it learnt: the trie, graphs, candidates */

    CUstream handle; /* the program's handle (explicit streams) */
    pid_t owner;     /* per-thread streams: the owning thread */
    int blocking;    /* synchronises with the legacy stream */
    int dead;        /* its stream was destroyed: the state may be reused */
    /* Host time per launch, averaged over sequences: where the program's own host work between launches is slow,
     * holding only delays the GPU and a graph saves little: such a stream is not held back (ENCORE_MAX_GAP). */
    uint64_t gap_ns;
    /* The first launch after a flush point is the anchor (anchor_set, above): when it comes again, a new sequence
     * starts, so that a loop without a flush point is cut the same way every iteration, whatever its length. */
    uint64_t anchor_sfp, anchor_afp;
    /* The first ENC_LEAD launches after the flush point (sequence.c: where the anchor never comes
     * again, the first of them where they repeat with a period becomes it). */
    struct {
        uint64_t sfp, afp;
    } lead[ENC_LEAD];
    uint32_t pace_cap;     /* seq_cap's (above) for the pace */
    uint8_t cap_votes;     /* sequences in a row whose pace asked for another cap */
    uint8_t cap_unsettled; /* sequences to end before graphs are captured again: the flush deadline moved
                            * seq_cap (sequence.c, learn.c) */
    /* Holds the flush deadline cut before their sequence ended, no replay since (replay.c counts them; sequence.c
     * acts), the launches the last one held, the cap they set (0: none). */
    uint8_t deadline_cuts;
    uint32_t deadline_cut_len, deadline_cap;
    /* sequence.c: times the cap came down again soon after it doubled back (each doubles deadline_quick, the
     * launches of quick full sequences it then takes to double back), sequences since it last doubled */
    uint8_t deadline_flips;
    uint32_t deadline_quick, deadline_since;
    uint8_t ramp; /* sequences ended full since the flush point (ENCORE_HOLD_RAMP; atomic: set to 0 unlocked) */
    /* ENCORE_TAIL_CUT: launches recorded since the last flush point, how many came between the two flush
     * points before it, and in how many intervals in a row (atomic, as ramp) */
    uint32_t since_flush, flush_len;
    uint8_t flush_len_same;
    uint32_t flush_points;             /* flush points with launches since the one before (atomic, as ramp: learn.c) */
    uint64_t flush_sig, flush_sig_run; /* the kernels between the last two flush points, since the last (hashes) */

    /* Per-thread default streams: another thread cannot name them, so a release from another thread (deadline, a
     * device-wide flush) goes to a side stream ordered after ev_start, and the owner joins ev_done (join_pending). */
    CUevent ev_start, ev_done;
    CUstream side;

    /* It has graphs with node priorities whose other nodes run at the capture stream's priority (learn.c). */
    int mixed_prio;

    /* holding (held, node, early_node: above) */
    uint32_t hold_start; /* the root's child the hold started at (hold.c) */
    uint64_t held_since;
    uint64_t early_at; /* graph_end.c: when the sequence last ended at a pause (early_node: its slot) */
    /* graph_end.c: places the host paused at in a sequence (launches since the flush point, the last one) */
    struct enc_pause {
        uint32_t at;
        int8_t score;
        uint8_t cuts;
        uint64_t sfp;
    } pauses[4];
    uint64_t acct[ENC_ACCT_COUNT]; /* its time estimate's measured inputs (stats.h); atomic */
    /* The launch being timed (launch.c): the sequence ends it causes, timed apart. */
    struct {
        int on;
        uint32_t ends;
        uint64_t ends_ns;
    } sample;

    /* Learning that does not pay (core/streams/rest.c): a window of launches, its holds that ended in a replay, its
     * sequences learnt, how many had come before, how many were too small to capture; acct when it began, windows
     * in a row whose time balance was negative. While rest_left > 0 (atomic: no lock) launches pass through. */
    uint32_t win_replays, win_seqs, win_recur, win_small; /* win_launches, win_len, rest_left: above */
    uint64_t win_acct0[ENC_ACCT_COUNT + 1];
    uint8_t rest_shift, win_neg;

    /* A released launch failed (not stickily): the next call that observes
     * the stream returns this instead of CUDA_SUCCESS (failure.c). */
    CUresult pending_err;

    /* Events it holds a record of or a wait on (evtab.c), until released. */
    CUevent held_ev[ENC_MAX_HELD_EVENTS];
    uint8_t held_ev_wait[ENC_MAX_HELD_EVENTS];
    uint32_t n_held_ev; /* atomic: read without the lock by enc_core_event_observe_all */

    enc_layout_memo layouts[1 << ENC_LAYOUT_MEMO_BITS]; /* its launches' functions' layouts, remembered */
} enc_stream_state;

/* A sequence was learnt (learn.c); `recurring`: it (or its structure) had come before. Counted into the
 * window core/streams/rest.c decides on. */
static inline void enc_rest_note_sequence(enc_stream_state *st, int recurring) {
    st->win_seqs++;
    st->win_recur += recurring != 0;
}

#endif
