/* encore: a stream whose launches never repeat rests.
 *
 * Recording a launch (its layout looked up, its arguments copied and hashed,
 * the trie walked, the sequence learnt) costs a few hundred nanoseconds; an
 * eager launch costs a few microseconds. Where nothing repeats, that is a
 * cost with nothing to show for it (measured on an H100: 7% on a loop of
 * small kernels whose kernel and grid never repeat; docs/bench). So each
 * stream's launches are judged in windows (its memsets, copies and event
 * operations count as launches, in windows and rests: core/path/ops.c):
 *
 *   - a window pays when a hold in it ended in a replay; it is still
 *     learning when at least one in eight of its sequences (or their
 *     structure) had come before (a loop whose body is longer than a third
 *     of a window, seen for the second time);
 *   - otherwise the stream rests: its next REST_FIRST << 2k launches (k: the
 *     times it rested before, capped at REST_MAX_SHIFT: 16 384 to 4 194 304)
 *     pass straight through, only counted: no lock, no record, no hold;
 *   - then a shorter window (REST_PROBE_WINDOW) probes again; a window that
 *     pays forgets the back-off.
 *
 * A stream whose windows lose time (core/streams/worth.c: what its replays saved, at
 * the measured cost of an eager launch, less what its replays, captures,
 * holds in vain and recording cost) rests too, after NEG_WINDOWS such windows
 * in a row, whether it replays or learns: a sequence whose kernels recur with
 * arguments that never come again keeps a stream "learning" for ever. A
 * window that captured a graph and replayed nothing yet is an investment,
 * not a loss; one that replayed but lost time does not forget the back-off.
 *
 * A graph the program launches itself (torch.compile's "reduce-overhead",
 * CUDA-graph trees, llama.cpp) counts as PROGRAM_GRAPH_WEIGHT launches of the
 * window: work on the stream that encore does not hold. Where the program's
 * work runs in its own graphs and only a copy or two run eagerly between
 * them, nothing between its graphs is worth holding; the window so ends
 * within a few hundred of its graph launches, not tens of thousands of steps,
 * and the stream steps aside (the rest itself is counted in eager launches
 * alone: a program of graphs only rests for as long as it keeps to them).
 *
 * A window whose sequences are all too small to capture (fewer than two
 * kernels, or shorter than ENCORE_MIN_SEQUENCE: JAX op by op, each op an
 * event wait, one kernel and an event record) learns nothing that could ever
 * replay: ENC_REST_SMALL_SEQUENCES such sequences, and none other, end it early, and
 * the stream rests (a few hundred launches in, not 16 384).
 *
 * The first window is longer (REST_FIRST_WINDOW): a loop whose body has up to
 * about a quarter of it in launches replays within it (seen three times,
 * captured, replayed the fourth), and a longer one is still learning there. A
 * program that never repeats so converges to the pass-through cost after its
 * first 16 384 launches (then one probe of 4 096 per up to 4 M launches); one
 * that starts repeating later is picked up at the next probe. Resting
 * follows ENCORE_HOLD_RULE (0: never rests). Everything here runs with the
 * stream's mutex held, but for enc_rest_take (core/streams/rest.h); the
 * program's graph launches come through enc_core_program_graph (path/launch.c).
 *
 * The process backs off too. Each stream that rests, and each stream that
 * goes (destroyed, its state renamed) after PROC_JUDGE_MIN launches of a
 * window that neither paid nor kept learning, is a stream that did not pay;
 * PROC_REST_AFTER of them in a row, with no window of any stream paying
 * meanwhile, and a new stream begins resting (REST_FIRST << 2k launches, k
 * growing with each further one), then probes as any rested stream does: a
 * program that makes a stream per request, each too short-lived to finish a
 * window, so stops paying for recording after a few of them, and one whose
 * new streams start repeating is picked up at their probes. A window that
 * pays anywhere forgets the process's back-off. */
#define _GNU_SOURCE
#include "base/log.h"
#include "core/graphs/graphs.h"
#include "core/graphs/issue.h"
#include "core/graphs/layout.h"
#include "core/graphs/nodes.h"
#include "core/graphs/store.h"
#include "core/state/gate.h"
#include "core/streams/rest.h"
#include "core/streams/streams.h"
#include "policy/options.h"

#define REST_FIRST_WINDOW 16384u /* launches judged before a stream first rests */
#define REST_PROBE_WINDOW 4096u  /* ... and after each rest */
#define REST_FIRST 16384         /* launches passed through in the first rest */
#define REST_MAX_SHIFT 4u        /* ... times four each rest, up to 16384 << 8 = 4 194 304 */
#define RECUR_SHARE 8u           /* still learning: at least 1 in 8 sequences had come before */
#define NEG_WINDOWS 4u           /* windows in a row that lost time: rest */
#define PROGRAM_GRAPH_WEIGHT 64u /* the launches of the window a program's own graph launch counts as */
#define PROC_REST_AFTER 4u       /* streams in a row that did not pay: new streams begin resting */
#define PROC_JUDGE_MIN 1024u     /* launches a window needs to be judged when its stream goes */

/* Streams in a row that did not pay, none paying meanwhile (any thread: atomic). */
static uint32_t proc_unpaid;

static void proc_note_unpaid(void) {
    if (__atomic_load_n(&proc_unpaid, __ATOMIC_RELAXED) < 255) __atomic_fetch_add(&proc_unpaid, 1, __ATOMIC_RELAXED);
}

static void proc_note_paid(void) {
    if (__atomic_load_n(&proc_unpaid, __ATOMIC_RELAXED)) __atomic_store_n(&proc_unpaid, 0, __ATOMIC_RELAXED);
}

static void new_window(enc_stream_state *st, uint32_t len) {
    for (int i = 0; i < ENC_ACCT_COUNT; i++) st->win_acct0[i] = st->acct[i];
    st->win_acct0[ENC_ACCT_COUNT] = st->sample_clock;
    st->win_len = len;
    st->win_launches = 0;
    st->win_replays = 0;
    st->win_seqs = 0;
    st->win_recur = 0;
    st->win_small = 0;
}

/* Is st's window, so far, one that pays, or one that is still learning? */
static int window_pays(const enc_stream_state *st) { return st->win_replays != 0 && st->win_neg < NEG_WINDOWS; }
static int window_learning(const enc_stream_state *st) {
    return st->win_seqs != 0 && st->win_recur * RECUR_SHARE >= st->win_seqs && st->win_neg < NEG_WINDOWS;
}

/* The launches a stream's k-th rest in a row passes through: four times longer each time. */
static int32_t rest_len(uint32_t k) { return REST_FIRST << (2 * (k < REST_MAX_SHIFT ? k : REST_MAX_SHIFT)); }

/* st rests (rest_len(k) launches unrecorded), then a probe window judges it again. */
static void rest_for(enc_stream_state *st, uint32_t k) {
    new_window(st, REST_PROBE_WINDOW);
    ENC_TSTAT_ADD(streams_rested, 1);
    __atomic_store_n(&st->rest_left, rest_len(k), __ATOMIC_RELAXED);
}

static void begin_rest(enc_stream_state *st) {
    uint32_t k = st->rest_shift;
    int32_t n = rest_len(k);
    if (st->rest_shift < 255) st->rest_shift++;
    ENC_DEBUG("a stream's last %u launches replayed nothing and %u of its %u sequences had come before: "
              "its next %d launches pass through unrecorded",
              st->win_launches, st->win_recur, st->win_seqs, (int)n);
    enc_sequence_end(st, ENC_FLUSH_OPAQUE_LAUNCH); /* nothing is held: it learns what it has, then no more */
    if (st->win_neg >= NEG_WINDOWS) ENC_TSTAT_ADD(streams_rested_losing, 1);
    st->win_neg = 0;
    rest_for(st, k);
    proc_note_unpaid();
}

void enc_rest_forget(enc_stream_state *st) {
    uint32_t unpaid = __atomic_load_n(&proc_unpaid, __ATOMIC_RELAXED);
    st->win_neg = 0;
    if (enc_opt.hold_rule && unpaid >= PROC_REST_AFTER) { /* the process backs off: the new stream begins resting */
        uint32_t k = unpaid - PROC_REST_AFTER < REST_MAX_SHIFT ? unpaid - PROC_REST_AFTER : REST_MAX_SHIFT;
        st->rest_shift = (uint8_t)(k + 1);
        rest_for(st, k);
        ENC_TSTAT_ADD(streams_rested_process, 1);
        return;
    }
    new_window(st, REST_FIRST_WINDOW);
    st->rest_shift = 0;
    __atomic_store_n(&st->rest_left, 0, __ATOMIC_RELAXED);
}

void enc_rest_stream_gone(enc_stream_state *st) {
    if (!enc_opt.hold_rule || __atomic_load_n(&st->rest_left, __ATOMIC_RELAXED) > 0) return; /* a rest counted */
    if (st->win_launches >= PROC_JUDGE_MIN && !window_pays(st) && !window_learning(st)) proc_note_unpaid();
}

/* The window so far learnt only sequences too small to capture (one kernel
 * between event operations, JAX op by op): ENC_REST_SMALL_SEQUENCES of them end it early. */
static int only_small(const enc_stream_state *st) {
    return st->win_small >= ENC_REST_SMALL_SEQUENCES && st->win_seqs == 0 && st->win_replays == 0;
}

int enc_rest_note_work_slow(enc_stream_state *st, uint32_t n) {
    if (!enc_opt.hold_rule) return 0;
    if (__atomic_load_n(&st->rest_left, __ATOMIC_RELAXED) < 0) /* a rest ran out under several threads */
        __atomic_store_n(&st->rest_left, 0, __ATOMIC_RELAXED);
    st->win_launches += n;
    if (st->win_launches < st->win_len && !only_small(st)) return 0;
    int lost = !st->held && enc_window_lost_time(st);
    if (lost && st->win_neg < 255) st->win_neg++;
    if (!lost && !st->held) st->win_neg = 0;
    int pays = window_pays(st), learning = window_learning(st);
    if (pays || learning || st->held) {
        /* a window does not end inside a hold: it is judged again at the
         * next launch that finds none */
        if (pays && !lost) { /* the next rest, if any, is short again, and the process's back-off is over */
            st->rest_shift = 0;
            proc_note_paid();
        }
        if (pays || learning) new_window(st, REST_FIRST_WINDOW);
        return 0;
    }
    begin_rest(st);
    return 1;
}

void enc_rest_program_graph(enc_stream_state *st) {
    if (__atomic_load_n(&st->rest_left, __ATOMIC_RELAXED) > 0) return; /* resting: eager launches count */
    if (enc_rest_note_work(st, PROGRAM_GRAPH_WEIGHT)) ENC_TSTAT_ADD(streams_rested_own_graphs, 1);
}
