/* encore: a stream's open sequence, from its first launch to its end.
 *
 * A sequence opens at the first launch after the previous one ended, and
 * ends at a flush point, when it reaches its longest (enc_sequence_cap), or when
 * its anchor comes again. Its end releases what is held, counts it towards
 * capture (learn.c) and starts an empty one. */
#define _GNU_SOURCE
#include "base/log.h"
#include "core/graphs/graphs.h"
#include "core/graphs/issue.h"
#include "core/graphs/layout.h"
#include "core/graphs/nodes.h"
#include "core/graphs/store.h"
#include "core/observe/nvtx.h"
#include "core/state/gate.h"
#include "core/streams/rest.h"
#include "core/streams/streams.h"
#include "policy/options.h"

void enc_sequence_open(enc_stream_state *st) {
    if (!st->open) {
        st->seq.t0 = enc_now_ns();
        __atomic_store_n(&st->open, 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&enc_hot.n_open, 1, __ATOMIC_RELAXED);
    }
}

static void close_sequence(enc_stream_state *st) {
    enc_evtab_release(st); /* after what it held was issued: an observer that saw st waits for it on st->mu */
    enc_record_reset(&st->seq);
    __atomic_store_n(&st->open, 0, __ATOMIC_RELAXED);
    __atomic_fetch_sub(&enc_hot.n_open, 1, __ATOMIC_RELAXED);
}

/* The largest power of two not above n, at least `floor`: the pace's cap and the deadline's. */
static uint32_t pow2_at_most(uint64_t n, uint32_t floor) {
    uint32_t p = 1;
    while ((uint64_t)p * 2 <= n && p < (1u << 30)) p *= 2;
    return p < floor ? floor : p;
}

/* A cap as a length: 0 stands for ENCORE_MAX_SEQUENCE. */
static uint32_t or_longest(uint32_t cap) { return cap ? cap : (uint32_t)enc_opt.max_sequence; }

/* The longest sequence whose launches, at this pace, take no more host time
 * than ENCORE_HOLD_BUDGET: a power of two (so that a loop's cut points stay
 * put while the pace jitters), at least ENC_MIN_SEQ_CAP, at most
 * ENCORE_MAX_SEQUENCE. Holding a sequence keeps the GPU waiting for all of
 * it; a host that needs 9 us per launch (PyTorch's C++ wrapper) would keep
 * it waiting 1.1 ms for 128 launches, turning the overlap of host and GPU
 * into their sum. Shorter sequences keep them overlapping. */
uint32_t enc_sequence_cap_for_pace(uint64_t gap_ns) {
    uint32_t max = (uint32_t)enc_opt.max_sequence;
    if (enc_opt.hold_budget == 0 || gap_ns == 0) return max;
    uint64_t fit = (uint64_t)enc_opt.hold_budget * 1000 / gap_ns;
    if (fit >= max) return max;
    uint32_t cap = pow2_at_most(fit, ENC_MIN_SEQ_CAP);
    return cap < max ? cap : max;
}

uint32_t enc_sequence_cap(const enc_stream_state *st) { return or_longest(st->seq_cap); }

/* seq_cap, the one the launch path reads: the shorter of the pace's and the deadline's. */
static void set_cap(enc_stream_state *st) {
    st->seq_cap = st->deadline_cap && st->deadline_cap < or_longest(st->pace_cap) ? st->deadline_cap : st->pace_cap;
}

/* The same where the flush deadline moved its cap: no captures for the next
 * ENC_CAP_SETTLE sequences (learn.c). */
static void set_cap_by_deadline(enc_stream_state *st) {
    uint32_t was = st->seq_cap;
    set_cap(st);
    if (st->seq_cap != was) st->cap_unsettled = ENC_CAP_SETTLE;
}

/* ENCORE_HOLD_RAMP (a trial, off by default). After a flush point (a
 * synchronize, most often) the GPU has nothing left to run, and a held
 * sequence keeps it waiting until the sequence ends; later sequences are held
 * while the GPU runs the earlier ones. So on a stream whose pace cuts its
 * sequences (seq_cap below ENCORE_MAX_SEQUENCE: a host that takes
 * microseconds per launch), the first sequence after a flush point is a
 * quarter of the cap (at least ENC_RAMP_FIRST launches and
 * ENCORE_MIN_SEQUENCE), the next twice that, up to the cap: with a cap of 8,
 * sequences of 2, 4, 8, 8, ... The cut points follow from where flush points
 * come, so a loop is cut at the same places in every iteration. Streams the
 * budget does not cut (fast hosts) are left as they are: there a sequence is
 * held for little host time, and more graphs would cost more graph launches
 * than the GPU waits. */
#define ENC_RAMP_FIRST 2u
#define ENC_RAMP_MAX 8u /* doublings counted: the first is a quarter of the cap, so 2 reach it */

/* ENCORE_HOLD_RAMP=2: the ramp is on while the host waits for the GPU when
 * it synchronizes: of the last ENC_RAMP_WINDOW wait episodes (the waiting
 * calls between two launches of a thread: core/path/launch.c), at least
 * ENC_RAMP_VOTES waited longer than ENC_RAMP_WAIT_ON_NS. The GPU is behind
 * at the end of a step then, so starting it sooner after the synchronize
 * shortens the step, and that pays for the ramp's extra graph launches
 * (about two a flush point, 2.5 to 4 us each on an H100 or H200). Off again
 * once as many waited less than ENC_RAMP_WAIT_OFF_NS, not before: with the
 * ramp on, the waits it shortened are what keeps it on. A host that does not
 * wait (its own work, not the GPU, sets the pace) never ramps and keeps its
 * fewer, longer graphs; a one-off long wait (start-up) decides nothing.
 * Waits while the program's switch has encore off are not counted
 * (benchmarks). The counts are racy between threads: a vote either way. */
#define ENC_RAMP_WAIT_ON_NS 8000u
#define ENC_RAMP_WAIT_OFF_NS 2000u
#define ENC_RAMP_WINDOW 16u
#define ENC_RAMP_VOTES 12u
static unsigned ramp_n, ramp_long, ramp_short;
static int gpu_behind;

void enc_sequence_note_wait(uint64_t ns) {
    unsigned n = __atomic_load_n(&ramp_n, __ATOMIC_RELAXED) + 1;
    unsigned lg = __atomic_load_n(&ramp_long, __ATOMIC_RELAXED) + (ns > ENC_RAMP_WAIT_ON_NS);
    unsigned sh = __atomic_load_n(&ramp_short, __ATOMIC_RELAXED) + (ns < ENC_RAMP_WAIT_OFF_NS);
    if (n < ENC_RAMP_WINDOW) {
        __atomic_store_n(&ramp_n, n, __ATOMIC_RELAXED);
        __atomic_store_n(&ramp_long, lg, __ATOMIC_RELAXED);
        __atomic_store_n(&ramp_short, sh, __ATOMIC_RELAXED);
        return;
    }
    __atomic_store_n(&ramp_n, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&ramp_long, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&ramp_short, 0, __ATOMIC_RELAXED);
    int behind = __atomic_load_n(&gpu_behind, __ATOMIC_RELAXED);
    if (!behind && lg >= ENC_RAMP_VOTES) {
        __atomic_store_n(&gpu_behind, 1, __ATOMIC_RELAXED);
        ENC_DEBUG("the host waited for the GPU at %u of its last %u synchronizations: the GPU is behind; after a "
                  "flush point, sequences start short (ENCORE_HOLD_RAMP=2)",
                  lg, n);
    } else if (behind && sh >= ENC_RAMP_VOTES) {
        __atomic_store_n(&gpu_behind, 0, __ATOMIC_RELAXED);
        ENC_DEBUG("the host hardly waited at %u of its last %u synchronizations: sequences no longer start short", sh,
                  n);
    }
}

/* A flush point on st (its ramp starts again; ENCORE_TAIL_CUT learns how many
 * launches, and which kernels, come between two): from enc_sequence_end, or,
 * on a stream with nothing open, without st's lock (enc_core_flush_*).
 * since_flush counts the launches of the sequences ended since the last one;
 * `open` is the open sequence's. */
static void flush_point(enc_stream_state *st, uint32_t open) {
    __atomic_store_n(&st->ramp, 0, __ATOMIC_RELAXED);
    uint32_t n = __atomic_exchange_n(&st->since_flush, 0, __ATOMIC_RELAXED) + open;
    uint64_t sig = __atomic_exchange_n(&st->flush_sig_run, 0, __ATOMIC_RELAXED);
    if (n == 0) return; /* two flush points with nothing between: one */
    __atomic_store_n(&st->flush_points, __atomic_load_n(&st->flush_points, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
    if (n == __atomic_load_n(&st->flush_len, __ATOMIC_RELAXED) &&
        sig == __atomic_load_n(&st->flush_sig, __ATOMIC_RELAXED)) {
        uint8_t same = __atomic_load_n(&st->flush_len_same, __ATOMIC_RELAXED);
        if (same < UINT8_MAX) __atomic_store_n(&st->flush_len_same, same + 1, __ATOMIC_RELAXED);
    } else {
        __atomic_store_n(&st->flush_len, n, __ATOMIC_RELAXED);
        __atomic_store_n(&st->flush_sig, sig, __ATOMIC_RELAXED);
        __atomic_store_n(&st->flush_len_same, 0, __ATOMIC_RELAXED);
    }
}

void enc_sequence_flush_point(enc_stream_state *st) { flush_point(st, 0); }

/* ENCORE_TAIL_CUT=K: st's launch just recorded is the one K before the flush
 * point, on a stream whose flush points came after the same launches (as many,
 * the same kernels in the same order) 3 times in a row, while the host waits for the GPU at its
 * synchronizations (as for ENCORE_HOLD_RAMP=2), and st holds it: the loop
 * replays (a stream whose launches never repeat is not cut into tails that
 * repeat by chance: it rests as before). Its sequence ends here: the
 * GPU runs it while the host issues the last K, and at the flush point only
 * those K are left to wait for, not a whole sequence. The cut is at the same
 * place in every iteration, so the pieces repeat and replay; a stream whose
 * steps take one of several paths of one length (a server's batch sizes) is
 * not cut, since the cut would move between paths and its pieces would not
 * come again. Counts the launch (call once a recorded launch). */
#define ENC_TAIL_SAME 2u /* intervals that matched the one before */

int enc_sequence_tail_due(enc_stream_state *st) {
    uint64_t sig = __atomic_load_n(&st->flush_sig_run, __ATOMIC_RELAXED);
    if (st->seq.n) sig = (sig ^ st->seq.recs[st->seq.n - 1].sfp) * 0x100000001b3ull;
    __atomic_store_n(&st->flush_sig_run, sig, __ATOMIC_RELAXED);
    uint32_t n = __atomic_load_n(&st->since_flush, __ATOMIC_RELAXED) + st->seq.n;
    uint32_t len = __atomic_load_n(&st->flush_len, __ATOMIC_RELAXED), k = (uint32_t)enc_opt.tail_cut;
    return n + k == len && st->held && len > k + (uint32_t)enc_opt.min_sequence &&
           __atomic_load_n(&st->flush_len_same, __ATOMIC_RELAXED) >= ENC_TAIL_SAME &&
           __atomic_load_n(&gpu_behind, __ATOMIC_RELAXED);
}

int enc_sequence_ramps(void) {
    return enc_opt.hold_ramp == 1 || (enc_opt.hold_ramp == 2 && __atomic_load_n(&gpu_behind, __ATOMIC_RELAXED));
}

uint32_t enc_sequence_limit(const enc_stream_state *st) {
    uint32_t cap = enc_sequence_cap(st);
    if (!enc_sequence_ramps() || !st->seq_cap || st->seq_cap >= (uint32_t)enc_opt.max_sequence) return cap;
    uint32_t first = cap / 4;
    if (first < ENC_RAMP_FIRST) first = ENC_RAMP_FIRST;
    if (first < (uint32_t)enc_opt.min_sequence) first = (uint32_t)enc_opt.min_sequence;
    uint8_t ramp = __atomic_load_n(&st->ramp, __ATOMIC_RELAXED);
    uint32_t lim = first << (ramp < ENC_RAMP_MAX ? ramp : ENC_RAMP_MAX);
    return lim < cap ? lim : cap;
}

/* ENCORE_FLUSH_DEADLINE against a stream's sequences. The deadline issues a
 * hold that lasts longer (deadline.c), and a sequence cut there never
 * replays: with sequences of 8 launches (ENC_MIN_SEQ_CAP), a stream slower
 * than 25 us or so a launch is cut at every hold. PyTorch is that slow in a
 * slow process: on the H200 a Hugging Face generate process that ran 1.5
 * times slower than the next replayed 42% of its launches instead of 97%.
 * So once ENC_DEADLINE_CUTS holds in a row were cut (no replay between),
 * the stream's sequences are held to three quarters of what the last cut
 * one held (a power of two, at least ENCORE_MIN_SEQUENCE), and doubled
 * again once a full sequence took a quarter of the deadline's share if it
 * replayed (twice as many launches then take about twice as long), or, if it
 * did not, when twice as many launches at its pace would fit in the share:
 * its launches were issued one by one, each slower than a held one, so twice
 * as many held would take less. Without the second, a stall of a
 * few steps (a warm-up's, a garbage collection's) kept the shorter cap until
 * graphs of its length were captured and replayed, and those never replayed
 * again once it doubled back (on the H200, 6 of the UNet step's 41 graphs,
 * 10 of ResNet-18's 147, 2026-11-27). In a slow stretch, holds cut now and
 * then, the cap would go down and back up again and again, and graphs of both
 * lengths were captured at each turn (the UNet step's slow process, 18 of 74
 * never replayed, call 44). Under ENCORE_CUT_BACKOFF=1 (a trial, off: not
 * measured on a GPU; HF generate's holds are cut about once a token, and a cap
 * held down longer there means more graph launches a token), each time it
 * comes down within ENC_DEADLINE_RECENT
 * sequences of doubling back, it doubles back only after twice as many
 * launches of quick full sequences in a row as the time before (from
 * ENC_DEADLINE_QUICK: 32, 64, ... 1024), and then at each quick full
 * sequence, until ENC_DEADLINE_CALM sequences pass without a cap. On the
 * simulator (prog_worth slowstretch) 11 of 33 graphs captured never replayed
 * before, 4 of 25 now, and 0.907 of launches replayed instead of 0.777.
 * Holds that are cut only now and then move nothing. */
#define ENC_DEADLINE_CUTS 2u
#define ENC_DEADLINE_QUICK 32u
#define ENC_DEADLINE_RECENT 256u
#define ENC_DEADLINE_CALM 4096u
#define ENC_DEADLINE_FLIPS_MAX 6u
static void note_deadline(enc_stream_state *st) {
    uint64_t room = (uint64_t)enc_opt.flush_deadline * 1000 * 3 / 4; /* the sequence's share of the deadline */
    uint64_t n = st->seq.n, took = UINT64_MAX;
    if (st->deadline_since && st->deadline_since < UINT32_MAX) st->deadline_since++; /* 0: never doubled back */
    if (!st->deadline_cap && st->deadline_since > ENC_DEADLINE_CALM) st->deadline_flips = 0;
    if (st->deadline_cap && n >= st->deadline_cap && n >= 2) {
        uint64_t t = enc_now_ns() - st->seq.t0;                            /* n launches, n - 1 gaps between them */
        took = st->seq.fully_replayed ? t * 4 : t * (2 * n - 1) / (n - 1); /* 2n launches at this pace */
        if (took > room) st->deadline_quick = 0;
    }
    if (st->seq.fully_replayed) st->deadline_cuts = 0;
    if (took <= room) {
        if (st->deadline_quick < UINT32_MAX - n) st->deadline_quick += (uint32_t)n;
        if (enc_opt.cut_backoff && st->deadline_flips &&
            st->deadline_quick < ENC_DEADLINE_QUICK << (st->deadline_flips - 1))
            return;
        st->deadline_since = 1;
        st->deadline_cap *= 2;
        if (st->deadline_cap >= or_longest(st->pace_cap)) st->deadline_cap = 0; /* the deadline no longer cuts */
        set_cap_by_deadline(st);
        ENC_DEBUG("a stream's sequences are quick again: at most %u launches (ENCORE_FLUSH_DEADLINE)",
                  enc_sequence_cap(st));
    } else if (!st->seq.fully_replayed && st->deadline_cuts >= ENC_DEADLINE_CUTS) {
        uint32_t cap = pow2_at_most((uint64_t)st->deadline_cut_len * 3 / 4, (uint32_t)enc_opt.min_sequence);
        if (!st->deadline_cap || cap < st->deadline_cap) {
            if (enc_opt.cut_backoff && st->deadline_since && st->deadline_since < ENC_DEADLINE_RECENT &&
                st->deadline_flips < ENC_DEADLINE_FLIPS_MAX)
                st->deadline_flips++;
            st->deadline_cap = cap;
            st->deadline_quick = 0;
            set_cap_by_deadline(st);
            ENC_DEBUG(
                "the flush deadline cut %u holds in a row on a stream (%.1f us a launch): sequences of at most %u "
                "launches (ENCORE_FLUSH_DEADLINE)",
                st->deadline_cuts, st->gap_ns / 1e3, cap);
        }
        st->deadline_cuts = 0;
    }
}

/* A new cap is taken only when ENC_CAP_VOTES sequences in a row asked for
 * it: every change moves the cut points, and graphs captured at the old ones
 * stop matching. The first cap of a stream is taken sooner (ENC_CAP_FIRST_VOTES):
 * until then no graph was captured at a pace-chosen cut, and every sequence
 * held at the default length while the pace is known keeps the GPU waiting. */
static void note_cap(enc_stream_state *st) {
    uint32_t want = enc_sequence_cap_for_pace(st->gap_ns);
    if (want == or_longest(st->pace_cap)) {
        st->cap_votes = 0;
    } else if (++st->cap_votes >= (st->pace_cap ? ENC_CAP_VOTES : ENC_CAP_FIRST_VOTES)) {
        ENC_DEBUG("launches on a stream come %.1f us apart: sequences of at most %u launches (ENCORE_HOLD_BUDGET)",
                  st->gap_ns / 1e3, want);
        st->pace_cap = want;
        st->cap_votes = 0;
        set_cap(st);
    }
}

/* Average host time per launch: a stream whose launches come further apart
 * than ENCORE_MAX_GAP is sparse, and is not held back. The average is over
 * launches, not sequences: a sequence weighs as many launches as it has (up
 * to half the weight), so the short one a loop ends with before its host
 * work (a step's last launches, then the sampling and the synchronize) does
 * not leave the stream's next sequences alone. One sequence's gap counts
 * as at most PACE_CLAMP times ENCORE_MAX_GAP: a one-off pause of the host
 * inside a sequence (a JIT compile, a first allocation, data loading; CuPy
 * compiles each kernel at its first launch) would otherwise leave the stream
 * alone until the average has decayed from it, some 50 sequences after a
 * 50 ms pause, while a stream whose launches keep coming apart still turns
 * sparse (its average rises toward the clamp, above the limit). */
#define PACE_WEIGHT 64u
#define PACE_CLAMP 2u
static void note_pace(enc_stream_state *st) {
    if (st->cap_unsettled) st->cap_unsettled--;
    uint64_t n = st->seq.n ? st->seq.n : 1;
    uint64_t gap = (enc_now_ns() - st->seq.t0) / n;
    uint64_t most = (uint64_t)enc_opt.max_gap * 1000 * PACE_CLAMP;
    if (gap > most) gap = most;
    uint64_t w = n < PACE_WEIGHT / 2 ? n : PACE_WEIGHT / 2;
    st->gap_ns = st->gap_ns ? (st->gap_ns * (PACE_WEIGHT - w) + gap * w) / PACE_WEIGHT : gap;
    int sparse = st->gap_ns > (uint64_t)enc_opt.max_gap * 1000;
    if (sparse != st->sparse) {
        st->sparse = sparse;
        if (sparse) ENC_TSTAT_ADD(streams_left_alone, 1);
        ENC_DEBUG("launches on a stream now come %.1f us apart on average: %s", st->gap_ns / 1e3,
                  sparse ? "not held back (ENCORE_MAX_GAP)" : "held back again");
    }
    note_cap(st);
    note_deadline(st);
}

/* ENCORE_LOG_LEVEL=trace: what a stream's launches and sequence ends were,
 * in order, to find where a program's sequences are cut and why (a launch's
 * fingerprints, shortened: the same numbers are the same launch). */

void enc_sequence_trace_launch(const enc_stream_state *st, const enc_layout *L, int rc) {
    const enc_rec *r = &st->seq.recs[st->seq.n];
    if (rc != 0) {
        enc_log(ENC_LOG_TRACE, "stream %p: %s not recorded", (void *)st, L->name);
        return;
    }
    enc_log(ENC_LOG_TRACE, "stream %p: launch %u, %u since the anchor%s: %s s=%08x a=%08x grid %ux%ux%u", (void *)st,
            st->seq.n, st->anchor_set ? st->since_anchor + 1 : 0, st->anchor_set ? "" : " (anchors)", L->name,
            (unsigned)r->sfp, (unsigned)r->afp, r->grid[0], r->grid[1], r->grid[2]);
}

static void trace_end(const enc_stream_state *st, enum enc_flush_reason why) {
    const char *name = enc_flush_reason_name(why);
    enc_log(ENC_LOG_TRACE, "stream %p: a sequence of %u ends (%s): %s", (void *)st, st->seq.n, name ? name : "?",
            st->seq.replayed_by_patch ? "replayed, patched"
            : st->seq.fully_replayed  ? "replayed"
            : st->seq.poisoned        ? "issued (not recordable)"
                                      : "issued");
}

/* The first ENC_LEAD launches after a flush point (reanchor, below), copied
 * from each sequence as it ends, while the anchor has not come again: in
 * bulk, not at each launch, where a stream's first launches after each flush
 * point wrote a cache line of the table every four launches (callgrind, 2 MiB
 * written between launches: 0.9 write misses a held launch). */
static void note_lead(enc_stream_state *st) {
    if (!st->anchor_set || st->anchor_settled || st->n_lead >= ENC_LEAD) return;
    for (uint32_t i = 0; i < st->seq.n && st->n_lead < ENC_LEAD; i++, st->n_lead++) {
        st->lead[st->n_lead].sfp = st->seq.recs[i].sfp;
        st->lead[st->n_lead].afp = st->seq.recs[i].afp;
    }
}

void enc_sequence_end(enc_stream_state *st, enum enc_flush_reason why) {
    st->seq.end_why = (int)why;
    if (why == ENC_FLUSH_SEQUENCE_FULL && st->open) note_lead(st);
    if (why != ENC_FLUSH_SEQUENCE_FULL) {          /* a flush point */
        st->anchor_set = 0;                        /* the next launch anchors */
        flush_point(st, st->open ? st->seq.n : 0); /* the next sequences start short again (ENCORE_HOLD_RAMP) */
        if (why == ENC_FLUSH_STREAM_CALL || why == ENC_FLUSH_ALL_CALL) st->seq.ended_by_call = 1;
        enc_graph_end_call(st); /* a replay at a graph's end before it was right, or a hold to such an end waited */
    } else if (st->open) {
        uint8_t ramp = __atomic_load_n(&st->ramp, __ATOMIC_RELAXED);
        if (ramp < ENC_RAMP_MAX) __atomic_store_n(&st->ramp, ramp + 1, __ATOMIC_RELAXED);
        __atomic_store_n(&st->since_flush, __atomic_load_n(&st->since_flush, __ATOMIC_RELAXED) + st->seq.n,
                         __ATOMIC_RELAXED);
    }
    enc_release_at_sequence_end(st, why);
    if (!st->open) return;
    if (__builtin_expect(enc_hot.trace, 0)) trace_end(st, why);
    note_pace(st);
    /* what learning reads of a sequence replayed exactly (none) or through a patched graph (hash) */
    if (!st->seq.poisoned && (!st->seq.fully_replayed || st->seq.replayed_by_patch)) enc_record_hash(&st->seq);
    int pause = why == ENC_FLUSH_DEADLINE || why == ENC_FLUSH_PAUSE;
    if (pause) st->seq.at_pause = 1;
    enc_learn_sequence(st);
    close_sequence(st);
    st->seq.at_pause = pause; /* the next one begins after it */
}

/* A launch's own time (launch.c, deferred_ns) is what recording and holding
 * it cost; ending the previous sequence at it (releasing or replaying what
 * was held, learning, capturing) is timed apart (release_ns). */
void enc_sequence_end_at_launch(enc_stream_state *st, enum enc_flush_reason why) {
    uint64_t t0 = st->sample.on ? enc_now_ns() : 0;
    enc_sequence_end(st, why);
    if (t0) {
        st->sample.ends_ns += enc_now_ns() - t0;
        st->sample.ends++;
    }
}

void enc_sequence_end_at_graph_end(enc_stream_state *st) {
    uint32_t node = st->node;
    st->seq.ended_by_call = 1; /* a graph captured from it (after patched replays) keeps the flag */
    enc_sequence_end_at_launch(st, ENC_FLUSH_SEQUENCE_FULL);
    enc_graph_end_mark(st, node);
}

void enc_sequence_end_at_pause(enc_stream_state *st, uint32_t slot) {
    int held = st->held;
    enc_sequence_end_at_launch(st, ENC_FLUSH_PAUSE); /* a flush point, as the deadline was: the next launch anchors */
    enc_graph_end_mark_pause(st, slot, held);        /* judged when the next work or call comes, held or not */
}

void enc_sequence_discard(enc_stream_state *st) {
    enc_graph_end_call(st);
    if (st->held) { /* launched while another thread destroyed the context: there is nothing to run them in */
        __atomic_store_n(&st->held, 0, __ATOMIC_RELAXED);
        __atomic_fetch_sub(&enc_hot.n_held, 1, __ATOMIC_RELAXED);
        ENC_DEBUG("%u held launches dropped: their context was destroyed", st->seq.n);
    }
    enc_evtab_release(st);
    st->anchor_set = 0;
    if (st->open) close_sequence(st);
}

/* The sequence ends before the pending launch (for `why`), which begins the
 * next one: the anchor came again (ENC_FLUSH_SEQUENCE_FULL), or the flush
 * deadline released the sequence's launches, the host having paused
 * (ENC_FLUSH_DEADLINE: ENCORE_PAUSE_END, graph_end.c). */
static void cut_before_pending(enc_stream_state *st, enum enc_flush_reason why) {
    enc_detached_rec anchor = enc_record_detach_pending(&st->seq);
    enc_sequence_end_at_launch(st, why);
    enc_record_attach_pending(&st->seq, &anchor);
    enc_sequence_open(st);
}
static void cut_before_anchor(enc_stream_state *st) { cut_before_pending(st, ENC_FLUSH_SEQUENCE_FULL); }

static int is_anchor(const enc_stream_state *st, const enc_rec *r) {
    return r->sfp == st->anchor_sfp && r->afp == st->anchor_afp;
}

/* The anchor, the first launch after the flush point, did not come again
 * within ENC_LEAD launches of the point where it would cut: it is not part
 * of a loop (a one-off prefix: cuSPARSE's analysis before CuPy's first CG
 * solve), and the loop after it is cut by count alone, at places that
 * depend on the prefix's length. A loop of 17 launches cut every 8 rotates
 * through 17 sequences, each seen three times in the first solve and never
 * after, since later solves begin with the loop and are cut at its first
 * launch (tests/prog/HOLES.md). The anchor moves, once a flush interval, to
 * the first of the launches after the flush point where they repeat with a
 * period (each of the next LEAD_RUN launches came again that many launches
 * later: launches that came again by chance, in a stream that never repeats,
 * do not): the loop's first launch, found by content, as the later steps
 * find it by position. The next time it comes, the sequence ends before it. */
#define LEAD_RUN 8u
static int lead_same(const enc_stream_state *st, uint32_t a, uint32_t b) {
    return st->lead[a].sfp == st->lead[b].sfp && st->lead[a].afp == st->lead[b].afp;
}
static int lead_periodic(const enc_stream_state *st, uint32_t i, uint32_t d) {
    for (uint32_t t = 0; t < LEAD_RUN; t++)
        if (!lead_same(st, i + t, i + d + t)) return 0;
    return 1;
}
static void reanchor(enc_stream_state *st, const enc_rec *r) {
    st->anchor_settled = 1;
    for (uint32_t i = 0; i + 1 + LEAD_RUN <= st->n_lead; i++)
        for (uint32_t j = i + 1; j + LEAD_RUN <= st->n_lead; j++)
            if (lead_periodic(st, i, j - i)) {
                st->anchor_sfp = st->lead[i].sfp;
                st->anchor_afp = st->lead[i].afp;
                ENC_DEBUG("a stream's anchor did not come again; the loop after it begins at the launch %u after "
                          "the flush point (it came again %u launches later): sequences end before it",
                          i, j - i);
                if (is_anchor(st, r)) {
                    cut_before_anchor(st);
                    st->since_anchor = 0;
                }
                return;
            }
}

int enc_sequence_recorded(enc_stream_state *st, const enc_layout *L, int rc) {
    if (__builtin_expect(st->seq.pause_cut, 0)) { /* set with anchor_set cleared: the anchor's path leads here */
        st->seq.pause_cut = 0;
        if (rc == 0 && st->seq.n) cut_before_pending(st, ENC_FLUSH_DEADLINE);
    }
    if (rc != 0) {
        st->seq.poisoned = 1;
        ENC_DEBUG("launch of %s could not be recorded: %s", L->name, enc_record_why(rc));
        return 0;
    }
    const enc_rec *r = &st->seq.recs[st->seq.n];
    if (!st->anchor_set) {
        st->anchor_set = 1;
        st->anchor_sfp = r->sfp;
        st->anchor_afp = r->afp;
        st->since_anchor = 0;
        st->n_lead = 0; /* its sequence's end copies it there (note_lead) */
        st->anchor_settled = 0;
    } else if (is_anchor(st, r)) {
        /* not before half the longest sequence since the anchor began one
         * (enc_sequence_record counted this launch and found it that far):
         * an anchor that recurs inside the loop body would otherwise cut it
         * into many small graphs. Counted since the anchor, not in this
         * sequence: a loop body longer than a sequence's cap is cut at the
         * same places in every iteration. */
        cut_before_anchor(st);
        st->since_anchor = 0;
        st->anchor_settled = 1;
    } else if (!st->anchor_settled && st->n_lead == ENC_LEAD &&
               st->since_anchor >= (uint32_t)enc_opt.max_sequence / 2 + ENC_LEAD) {
        reanchor(st, r);
    }
    return 1;
}
